# SPDX-License-Identifier: MIT
# Capture depth (tests/progs/deep.c): a leak 100 calls deep keeps exactly --depth frames (8, and
# 64 by default), innermost first; a shallow leak keeps its whole stack.
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog = env.progs[0]


def check(label, opts, depth):
    r, rep = env.run_traced(label, [prog], opts=opts)
    env.eq(label + ": exit status", r.returncode, 0)
    if not rep:
        return
    s = rep["summary"]
    env.eq(label + ": totals", (s["allocations"], s["frees"], s["bytes_allocated"]), (2, 0, 4016))
    env.eq(label + ": leaked", (s["leaked_bytes"], s["leaked_allocations"]), (4016, 2))
    deep = [e for e in rep["leaks"] if ct.frame0(e) == "deep_leak"]
    if env.eq(label + ": one deep leak", len(deep), 1):
        frames = deep[0]["frames"]
        env.eq(label + ": deep leak frames", len(frames), depth)
        names = [f.get("function") for f in frames]
        env.eq(label + ": innermost first", names, ["deep_leak"] + ["descend"] * (depth - 1))
        env.eq(label + ": deep leak marked truncated", deep[0].get("truncated"), True)
    shallow = [e for e in rep["leaks"] if ct.frame0(e) == "shallow_leak"]
    if env.eq(label + ": one shallow leak", len(shallow), 1):
        names = [f.get("function") for f in shallow[0]["frames"]]
        env.eq(label + ": shallow leak called from main", names[1:2], ["main"])
        env.eq(label + ": shallow leak not truncated", shallow[0].get("truncated"), False)


check("depth8", ("--depth", "8"), 8)
check("default", (), 64)
env.finish()
