# SPDX-License-Identifier: MIT
# fork while 6 threads allocate (tests/progs/fork_threads.c, 20 forks, --follow-children): no child
# deadlocks (the program kills a child stuck for 20 s and fails), and every trace is complete with
# the figures its process printed: the parent's own events, and each child's 10 allocations.
import os
import sys

import ctrack_test as ct
import stress

FORKS = 20
CHILD = {"allocations": 10, "frees": 9, "bytes": 1450, "leaked_bytes": 190, "leaked_allocations": 1}

env = ct.Env(sys.argv)
env.analyze_opts = ["--top", "100000"]  # complete rankings: the TLS vectors' site is among them
prog = env.progs[0]
name = os.path.basename(prog)

d = env.fresh_dir("follow")
r, files = env.run_ctrack([prog, str(FORKS)], d, opts=("--follow-children", "-o", os.path.join(d, "p.zst")),
                          timeout=120)
out = r.stdout.decode(errors="replace")
env.eq("exit status (no child deadlocked)", r.returncode, 0)
env.eq("no deadlocked child", [l for l in out.splitlines() if "deadlocked" in l], [])
children = stress.printed(out, "child ")
parent = stress.printed(out, "parent ")
env.eq("every child printed its figures", len(children), FORKS)
env.eq("each child's figures are the program's comment's",
       [stress.program(c) for c in children], [CHILD] * len(children))

if env.eq("the parent printed its figures", len(parent), 1):
    print(parent[0]["line"])
    rep = env.report(os.path.join(d, "p.zst"))
    if rep:
        env.eq("parent: complete", rep["complete"], True)
        env.eq("parent: the program's own figures", stress.own(rep), stress.program(parent[0]))
        env.eq("parent: unmatched_frees", rep["summary"]["unmatched_frees"], 0)

have = sorted(os.listdir(d))
env.eq("a trace per child beside the parent's", have,
       sorted(["p.zst"] + ["ctrack.%s.%d.zst" % (name, c["pid"]) for c in children]))
complete = exact = 0
for c in children:
    path = os.path.join(d, "ctrack.%s.%d.zst" % (name, c["pid"]))
    rep = env.report(path) if os.path.exists(path) else None
    if not rep:
        continue
    complete += rep["complete"] is True
    s = rep["summary"]
    got = {"allocations": s["allocations"], "frees": s["frees"], "bytes": s["bytes_allocated"],
           "leaked_bytes": s["leaked_bytes"], "leaked_allocations": s["leaked_allocations"]}
    exact += env.eq("child %d: figures" % c["pid"], got, stress.program(c))
env.eq("every child's trace complete", complete, FORKS)
env.eq("every child's trace exact", exact, FORKS)
env.finish()
