# SPDX-License-Identifier: MIT
# Signal handlers that allocate, free other threads' blocks and realloc while 4 threads allocate
# (tests/progs/sigdefer.c, which counts every event): the events of handlers that interrupted
# ctrack's work on their thread are recorded, with their backtraces, so ctrack's figures of the
# program's own events equal the program's counts, twice, with no NOTE of events not recorded and
# no free unmatched; valgrind, on a 0.5 s run, equals the program's counts plus glibc's 4 TLS
# vectors, as ctrack's totals do. Each allocation site's allocations and bytes (the report's
# `allocations` list, by function, file and line) equal the program's own count of that site: the
# workers' loop allocates from one place while the handlers interrupt it, and a loop's block booked
# to a handler's stack (a stale "last stack" after a deferred event) changes none of the totals.
import os
import re
import sys

import ctrack_test as ct
import stress

THREADS, PER_THREAD = 4, 250
env = ct.Env(sys.argv)
env.analyze_opts = ["--top", "100000"]  # complete rankings: the TLS vectors' site is among them
prog = env.progs[0]


def program_sites(text):
    """{(function, file, line): (allocations, bytes)} of the program's "site ..." lines (sites that
    allocated nothing are left out, as the report leaves them out)."""
    sites = {}
    for m in re.finditer(r"^site function=(\w+) line=(\d+) allocations=(\d+) bytes=(\d+)$", text, re.M):
        if int(m.group(3)):
            sites[(m.group(1), "sigdefer.c", int(m.group(2)))] = (int(m.group(3)), int(m.group(4)))
    return sites


def report_sites(rep):
    """The same from the report's allocations list (complete: --top 100000), glibc's TLS vectors
    left out; entries of one site (there should be one) added up."""
    sites = {}
    for e in rep["allocations"]:
        if stress.is_dtv(e):
            continue
        f = (e.get("frames") or [{}])[0]
        key = ((f.get("function") or "?").split("(")[0], os.path.basename(f.get("file") or "?"), f.get("line"))
        n, b = sites.get(key, (0, 0))
        sites[key] = (n + e["allocations"], b + e["bytes"])
    return sites


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
    mine = program_sites(fig["stderr"])
    if env.eq(name + ": the program's 4 sites add up to its allocations and bytes",
              (len(mine), sum(n for n, _ in mine.values()), sum(b for _, b in mine.values())),
              (4, fig["allocations"], fig["bytes"])):
        print("%s: the program's sites: %r" % (name, mine))
        env.eq(name + ": each site's allocations and bytes", report_sites(rep), mine)
    env.eq(name + ": no note of events not recorded",
           [n["text"] for n in rep["notes"] if "not recorded" in n["text"]], [])
    if vg_extra:
        env.eq(name + ": on top of the program, what valgrind saw on top of it", stress.report_extra(rep, fig),
               vg_extra)
env.finish()
