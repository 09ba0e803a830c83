# SPDX-License-Identifier: MIT
# Signal handlers that allocate, free other threads' blocks and realloc while 4 threads allocate
# (tests/progs/sigdefer.c, which counts every event): the events of handlers that interrupted
# ctrack's work on their thread are recorded, with their backtraces, so ctrack's figures of the
# program's own events equal the program's counts, twice, with no NOTE of events not recorded and
# no free unmatched; valgrind, on a 0.5 s run, equals the program's counts plus glibc's 4 TLS
# vectors, as ctrack's totals do.
import sys

import ctrack_test as ct
import stress

THREADS, PER_THREAD = 4, 250
env = ct.Env(sys.argv)
env.analyze_opts = ["--top", "100000"]  # complete rankings: the TLS vectors' site is among them
prog = env.progs[0]

vg_extra = stress.valgrind_extra(env, [prog, str(THREADS), str(PER_THREAD), "0.5"], THREADS)

for run in range(2):
    name = "run%d" % run
    got = stress.check_run(env, name, [prog, str(THREADS), str(PER_THREAD)])
    if not got:
        continue
    rep, fig = got
    env.eq(name + ": the handlers' blocks", fig["handler_allocations"], 2 * THREADS * PER_THREAD)
    env.eq(name + ": the handler_leak blocks", ct.sites(rep["leaks"], "handler_leak"),
           (40 * THREADS * PER_THREAD, THREADS * PER_THREAD))
    env.eq(name + ": the chains (handler_grow)", ct.sites(rep["leaks"], "handler_grow"),
           (16 * PER_THREAD * THREADS, THREADS))
    env.eq(name + ": no note of events not recorded",
           [n["text"] for n in rep["notes"] if "not recorded" in n["text"]], [])
    if vg_extra:
        env.eq(name + ": on top of the program, what valgrind saw on top of it", stress.report_extra(rep, fig),
               vg_extra)
env.finish()
