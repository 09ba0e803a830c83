# SPDX-License-Identifier: MIT
# 64 threads freeing each other's blocks for 2 s (tests/progs/stress_threads.c cross): ctrack's
# figures of the program's own events equal the program's atomic counts, twice; valgrind, on a
# 0.5 s run, equals the program's counts plus glibc's 64 TLS vectors, as ctrack's totals do.
import sys

import ctrack_test as ct
import stress

THREADS = 64
env = ct.Env(sys.argv)
env.analyze_opts = ["--top", "100000"]  # complete rankings: the TLS vectors' site is among them
prog = env.progs[0]

vg_extra = stress.valgrind_extra(env, [prog, "cross", "0.5"], THREADS)

for run in range(2):
    name = "run%d" % run
    got = stress.check_run(env, name, [prog, "cross", "2"])
    if not got:
        continue
    rep, fig = got
    env.eq(name + ": the 64 leak_one blocks", ct.sites(rep["leaks"], "leak_one"),
           (sum(100 + i for i in range(THREADS)), THREADS))
    if vg_extra:
        env.eq(name + ": on top of the program, what valgrind saw on top of it", stress.report_extra(rep, fig),
               vg_extra)
env.finish()
