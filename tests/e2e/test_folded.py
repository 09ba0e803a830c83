# SPDX-License-Identifier: MIT
# --folded merges stacks that read the same (tests/progs/merge.c): two lines of one function, one
# function called from two lines, one inlined function reached through two inlined calls, two calls
# on one line. Each folded stack is printed once, with the sum of its stacks' figures, for each cost.
# With --by-line each frame names its line, "main (merge.c:57)", and only the two calls on one line
# still share a stack; --hide-frames leaves frames out, the figures kept.
import json
import re
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog, src = env.progs
LINES = ct.line_markers(src)
with open(src) as f:  # the lines that carry no marker: main's "\tname();" calls and one_line's malloc(10)
    TEXT = list(enumerate(f, 1))
CALLS = {m.group(1): n for n, text in TEXT for m in [re.fullmatch(r"\t(\w+)\(\);\n", text)] if m}
MALLOC10 = [n for n, text in TEXT if "sink = malloc(10);" in text]

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
# --by-line: the same allocations, one stack per line of each frame (the program's comment; one_line's
# two calls stand on two lines of the source, malloc(10) above LINE ONE_LINE's malloc(20)).
M = lambda line: "main (merge.c:%d)" % line  # noqa: E731
BY_LINE = {
    "%s;twice (merge.c:%d)" % (M(CALLS["twice"]), LINES["TWICE_A"]): (100, 1),
    "%s;twice (merge.c:%d)" % (M(CALLS["twice"]), LINES["TWICE_B"]): (120, 2),
    "%s;leaf (merge.c:%d)" % (M(LINES["MAIN_LEAF_A"]), LINES["LEAF"]): (48, 1),
    "%s;leaf (merge.c:%d)" % (M(LINES["MAIN_LEAF_B"]), LINES["LEAF"]): (48, 1),
    "%s;outer (merge.c:%d);pick (merge.c:%d)_[i]" % (M(CALLS["outer"]), LINES["OUTER_A"], LINES["PICK"]): (32, 1),
    "%s;outer (merge.c:%d);pick (merge.c:%d)_[i]" % (M(CALLS["outer"]), LINES["OUTER_B"], LINES["PICK"]): (32, 1),
    "%s;one_line (merge.c:%d)" % (M(CALLS["one_line"]), MALLOC10[0]): (10, 1),
    "%s;one_line (merge.c:%d)" % (M(CALLS["one_line"]), LINES["ONE_LINE"]): (20, 1),
}
for cost, i in COSTS.items():
    r = env.run_analyze(trace, "--cost", cost, "--by-line", "--folded", "-")
    if not env.check("by line %s: exits 0" % cost, r.returncode == 0, r.stderr[-300:]):
        continue
    got = {s: int(n) for s, n in (l.rsplit(" ", 1) for l in r.stdout.decode().splitlines())}
    env.eq("by line %s: a stack per line, each with its figure" % cost, got, {s: w[i] for s, w in BY_LINE.items()})

# --hide-frames: main and the inlined pick left out; outer's two lines of pick read the same again.
r = env.run_analyze(trace, "--cost", "leaked", "--hide-frames", "^main$", "--hide-frames", "^pi", "--folded", "-")
if env.check("hide: exits 0", r.returncode == 0, r.stderr[-300:]):
    got = {s: int(n) for s, n in (l.rsplit(" ", 1) for l in r.stdout.decode().splitlines())}
    env.eq("hide: the stacks without main and pick, the figures kept", got,
           {"twice": 220, "leaf": 96, "outer": 64, "one_line": 30})

# A cost the program has none of (it frees nothing, so no temporary allocation): no line.
r = env.run_analyze(trace, "--cost", "temporary", "--folded", "-")
env.eq("folded temporary: exit 0, no line", (r.returncode, r.stdout, r.stderr), (0, b"", b""))
env.finish()
