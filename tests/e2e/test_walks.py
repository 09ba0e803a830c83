# SPDX-License-Identifier: MIT
# Backtraces that change from one allocation to the next (tests/progs/walks.c, built here at -O2
# without frame pointers): 30,000 allocations under 1..8 levels of recursion whose frames take three
# CFI shapes (CFA = RSP + k with RBP kept or saved, CFA = RBP + 16), alternating level by level, so
# that each walk meets the unwinder's memo of the previous one at a different depth, through a
# different kind of frame. Every backtrace, grouped per distinct stack, must read exactly as the
# program built it, with the program's own count and bytes (it prints them); valgrind agrees on the
# totals.
import json
import os
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
src = env.progs[0]
MAX_DEPTH = 7
SHAPES = ("down_sp", "down_saved", "down_fp")
LEAVES = ("leaf_a", "leaf_b")


def stack_of(size):
    """walks.c's stack for an allocation of `size` bytes, innermost first, non-inlined frames."""
    index = (size - 16) // 8
    leaf, index = index % 2, index // 2
    depth, index = index % (MAX_DEPTH + 1), index // (MAX_DEPTH + 1)
    even, odd = index // 3, index % 3
    levels = [SHAPES[odd if level & 1 else even] for level in range(depth + 1)]
    return (LEAVES[leaf], *levels, "drive", "main")


prog = env.cc(src, os.path.join(env.scratch, "walks"), "-O2", "-fomit-frame-pointer",
              "-fno-optimize-sibling-calls")
if prog:
    r, rep = env.run_traced("traced", [prog])
    env.eq("exit status", r.returncode, 0)
    want = {}  # stack -> (allocations, bytes), from the program's own counts
    for line in r.stdout.decode().split("\n"):
        if line:
            size, count = (int(x) for x in line.split())
            allocations, nbytes = want.get(stack_of(size), (0, 0))
            want[stack_of(size)] = (allocations + count, nbytes + count * size)
    env.eq("the program made 30,000 allocations", sum(a for a, _ in want.values()), 30000)
    vg = env.valgrind_main([prog], env.fresh_dir("valgrind"))
    if vg:  # the program's, and the one buffer of printf's stdout
        env.eq("valgrind agrees with the program", (vg["allocs"], vg["frees"], vg["in_use_blocks"]),
               (30001, 0, 30001))
    if rep:
        env.compare_valgrind(rep["summary"], vg)
    trace = os.path.join(env.scratch, "traced", "trace.zst")
    bt = env.run_analyze(trace, "--group", "backtrace", "--json")
    if env.check("--group backtrace --json exits 0", bt.returncode == 0, bt.stderr[-300:]):
        got, truncated = {}, []
        for e in json.loads(bt.stdout)["leaks"]:
            frames = tuple(f.get("function") for f in e["frames"] if not f.get("inlined"))
            if frames[0] not in LEAVES:  # printf's buffer
                continue
            if e.get("truncated"):
                truncated.append(";".join(frames))
            allocations, nbytes = got.get(frames, (0, 0))
            got[frames] = (allocations + e["allocations"], nbytes + e["bytes"])
        env.eq("no backtrace truncated", truncated, [])
        # Only the stacks that differ are printed: (ctrack's, the program's).
        wrong = {";".join(s): (got.get(s), want.get(s)) for s in set(got) | set(want)
                 if got.get(s) != want.get(s)}
        env.eq("%d stacks: each one's allocations and bytes are the program's" % len(want), wrong, {})
env.finish()
