# SPDX-License-Identifier: MIT
# --folded merges stacks that read the same (tests/progs/merge.c): two lines of one function, one
# function called from two lines, one inlined function reached through two inlined calls, two calls
# on one line. Each folded stack is printed once, with the sum of its stacks' figures, for each cost.
import json
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog = env.progs[0]

# The program's comment: folded stack below main -> (leaked bytes, allocations).
WANT = {"twice": (220, 3), "leaf": (96, 2), "outer;pick_[i]": (64, 2), "one_line": (30, 2)}
COSTS = {"leaked": 0, "allocations": 1}  # cost -> index in WANT's pairs

vg = env.valgrind_main([prog], env.fresh_dir("valgrind"))
if vg:
    env.eq("valgrind agrees with the program", (vg["allocs"], vg["in_use_bytes"], vg["in_use_blocks"]),
           (9, 410, 9))

trace = env.trace("traced", [prog])
# The premise: the 9 allocations come from 8 call instructions (twice's loop repeats one), so 8
# distinct stacks, which --group backtrace keeps apart.
bt = env.run_analyze(trace, "--group", "backtrace", "--json")
if env.check("--group backtrace --json exits 0", bt.returncode == 0, bt.stderr[-300:]):
    env.eq("8 distinct stacks", len(json.loads(bt.stdout)["leaks"]), 8)
for cost, i in COSTS.items():
    r = env.run_analyze(trace, "--cost", cost, "--folded", "-")
    if not env.check("folded %s: exits 0" % cost, r.returncode == 0, r.stderr[-300:]):
        continue
    lines = [l.rsplit(" ", 1) for l in r.stdout.decode().splitlines()]
    stacks = [s for s, _ in lines]
    env.eq("folded %s: each stack printed once" % cost, sorted(set(stacks)), sorted(stacks))
    below = {s.split("main;", 1)[-1]: int(n) for s, n in lines}  # stacks start at main
    env.eq("folded %s: each stack's figure is the sum of its stacks' (the program's)" % cost,
           {s: below.get(s) for s in WANT}, {s: w[i] for s, w in WANT.items()})
    env.eq("folded %s: the lines sum to the total" % cost, sum(int(n) for _, n in lines),
           sum(w[i] for w in WANT.values()))
# A cost the program has none of (it frees nothing, so no temporary allocation): no line.
r = env.run_analyze(trace, "--cost", "temporary", "--folded", "-")
env.eq("folded temporary: exit 0, no line", (r.returncode, r.stdout, r.stderr), (0, b"", b""))
env.finish()
