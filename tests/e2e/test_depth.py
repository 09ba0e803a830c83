# SPDX-License-Identifier: MIT
# Capture depth (tests/progs/deep.c): a leak 100 calls deep keeps exactly --depth frames (8, and
# 64 by default), innermost first; a shallow leak keeps its whole stack. The largest depth, 256
# (CT_DEPTH_MAX), needs a deeper stack: DEEPER below, deep.c with 300 calls, built by this script.
# The launcher always hands the shim its own depth: a CTRACK_DEPTH inherited from the user's
# environment, valid or not, changes nothing.
import os
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog = env.progs[0]

# deep.c's leaks under 300 calls of descend(): the same figures (2 allocations, 0 frees, 4016
# bytes, all leaked), built like tests/e2e/meson.build's programs (-O0, no sibling calls).
DEEPER = r"""
#include <stdlib.h>
#define NOINLINE __attribute__((noinline))
NOINLINE static void *deep_leak(void) { return malloc(4000); }
NOINLINE static void *shallow_leak(void) { return malloc(16); }
NOINLINE static void *descend(int n) { void *p = n ? descend(n - 1) : deep_leak(); return p; }
int main(void) { return descend(300) && shallow_leak() ? 0 : 1; }
"""


def build_deeper():
    src = os.path.join(env.scratch, "deeper.c")
    with open(src, "w") as f:
        f.write(DEEPER)
    return env.cc(src, os.path.join(env.scratch, "deeper"), "-fno-optimize-sibling-calls",
                  "-fno-builtin")


def check(label, opts, depth, program=prog, **kw):
    r, rep = env.run_traced(label, [program], opts=opts, **kw)
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


def inherited(value):
    return {"env": dict(os.environ, CTRACK_DEPTH=value)}


check("depth8", ("--depth", "8"), 8)
check("default", (), 64)
deeper = build_deeper()
if deeper:
    check("depth256", ("--depth", "256"), 256, deeper)
# An inherited value the shim would clamp (1024 to 256, abc to 1), or a valid one: all ignored.
for value in ("1024", "abc", "0", "8"):
    check("inherited CTRACK_DEPTH=" + value, (), 64, **inherited(value))
check("--depth 8 over inherited CTRACK_DEPTH=1024", ("--depth", "8"), 8, **inherited("1024"))
env.finish()
