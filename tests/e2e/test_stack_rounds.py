# SPDX-License-Identifier: MIT
# Stacks met again after the thread's small stack cache lost them (tests/progs/stack_rounds.c, built
# here at -O0 without sibling calls): two threads each make 3 rounds over 4,096 distinct stacks, in a
# different order each round, so each thread grows its big stack cache in its first round (tracker.c:
# after 1,024 misses) and finds its stacks there, or interns them again, in the later ones. Every
# backtrace, grouped per distinct stack, must read exactly as the program built it, under its own
# thread's root function, with the program's own count and bytes (it prints them); valgrind agrees on
# the totals.
import json
import os
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
src = env.progs[0]
LEVELS = 12
ROOTS = ("main", "worker")


def spelled(frames):
    """(root, d) of a backtrace of stack_rounds.c (innermost first, function names), or None."""
    if frames[:1] != ("leaf",) or "rounds" not in frames:
        return None
    at = frames.index("rounds")
    steps = [f for f in frames[:at] if f in ("step_a", "step_b")][::-1]  # level 0 first
    if len(steps) != LEVELS or at + 1 >= len(frames) or frames[at + 1] not in ROOTS:
        return None
    return frames[at + 1], sum(1 << i for i, f in enumerate(steps) if f == "step_b")


prog = env.cc(src, os.path.join(env.scratch, "stack_rounds"), "-fno-optimize-sibling-calls", "-pthread")
if prog:
    r, rep = env.run_traced("traced", [prog])
    env.eq("exit status", r.returncode, 0)
    want = {}  # (root, d) -> (allocations, bytes), the program's own counts
    for line in r.stdout.decode().split("\n"):
        if line:
            root, d, allocations, nbytes = line.split()
            want[(root, int(d))] = (int(allocations), int(nbytes))
    env.eq("the program's stacks", len(want), 2 * (1 << LEVELS))
    env.eq("the program made 24,576 allocations", sum(a for a, _ in want.values()), 24576)
    vg = env.valgrind_main([prog], env.fresh_dir("valgrind"))
    if rep:
        env.compare_valgrind(rep["summary"], vg)
    trace = os.path.join(env.scratch, "traced", "trace.zst")
    bt = env.run_analyze(trace, "--group", "backtrace", "--json")
    if env.check("--group backtrace --json exits 0", bt.returncode == 0, bt.stderr[-300:]):
        got, odd = {}, []
        for e in json.loads(bt.stdout)["leaks"]:
            frames = tuple(f.get("function") for f in e["frames"] if not f.get("inlined"))
            if frames[:1] != ("leaf",):  # glibc's and stdio's own blocks
                continue
            key = spelled(frames)
            if key is None or e.get("truncated"):
                odd.append(";".join(str(f) for f in frames))
                continue
            allocations, nbytes = got.get(key, (0, 0))
            got[key] = (allocations + e["allocations"], nbytes + e["bytes"])
        env.eq("every backtrace of leaf spells a stack of the program", odd[:5], [])
        # Only the stacks that differ are printed: (ctrack's, the program's).
        wrong = {"%s %d" % s: (got.get(s), want.get(s)) for s in set(got) | set(want)
                 if got.get(s) != want.get(s)}
        env.eq("%d stacks: each one's allocations and bytes are the program's" % len(want),
               dict(list(wrong.items())[:10]), {})
env.finish()
