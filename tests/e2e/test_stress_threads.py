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


def extra(total, fig):
    """What glibc adds to the program's own events: (allocations, bytes, frees + blocks in use)."""
    return (total["allocations"] - fig["allocations"], total["bytes"] - fig["bytes"],
            total["frees"] - fig["frees"] + total["in_use"] - fig["leaked_allocations"])


pid, figs, rc, out = env.valgrind_run([prog, "cross", "0.5"], env.fresh_dir("valgrind"), timeout=240)
vg_extra = None
mine = stress.printed(out.decode(errors="replace"))
vg = figs.get(pid)
if env.check("valgrind: the program ran and reported", rc == 0 and vg and "allocs" in vg and mine,
             "exit %r, %r" % (rc, figs)):
    vg_extra = extra({"allocations": vg["allocs"], "bytes": vg["bytes"], "frees": vg["frees"],
                      "in_use": vg["in_use_blocks"]}, mine[0])
    # one TLS vector per thread, each freed or still in use at exit
    env.eq("valgrind: the program's figures and 64 TLS vectors", (vg_extra[0], vg_extra[2]),
           (THREADS, THREADS))

for run in range(2):
    name = "run%d" % run
    got = stress.check_run(env, name, [prog, "cross", "2"])
    if not got:
        continue
    rep, fig = got
    env.eq(name + ": the 64 leak_one blocks", ct.sites(rep["leaks"], "leak_one"),
           (sum(100 + i for i in range(THREADS)), THREADS))
    s = rep["summary"]
    total = {"allocations": s["allocations"], "bytes": s["bytes_allocated"], "frees": s["frees"],
             "in_use": s["leaked_allocations"]}
    if vg_extra:
        env.eq(name + ": on top of the program, what valgrind saw on top of it", extra(total, fig),
               vg_extra)
env.finish()
