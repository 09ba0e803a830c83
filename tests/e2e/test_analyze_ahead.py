# SPDX-License-Identifier: MIT
# Frames resolved while the trace is read (analyzer/presym.c) are the frames every output prints:
# tests/progs/many_stacks.c makes 3000 allocations whose backtraces spell their index in binary
# through ~30,000 distinct stack nodes (many batches handed to the resolving thread). Every frame of
# every allocation, in JSON (one entry per backtrace) and in folded stacks, must be the program's own
# function at the line its LINE marker names, in the order of its calls; and the stacks --diff prints
# (which resolves each frame when it is asked for, on the main thread) are among them.
import json
import os
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog, src = env.progs[0], env.progs[1]
COUNT, LEVELS = 3000, 20
LINES = ct.line_markers(src)
FILE = os.path.basename(src)
OPTS = ("--all-frames", "--no-auto-fold")  # every frame the program made is shown


def expected(d):
    """(function, line) of allocation d's frames, innermost first, down to main."""
    want = [("leaf", LINES["alloc"]), ("go", LINES["leaf"])]
    for i in reversed(range(LEVELS)):
        x = "b" if d >> i & 1 else "a"
        want += [("step_" + x, LINES[x]), ("go", LINES["go_" + x])]
    return want + [("main", LINES["main"])]


def decode(functions):
    """The index d the step_a/step_b frames spell (innermost first), or None."""
    steps = [f for f in functions if f.startswith("step_")]
    if len(steps) != LEVELS:
        return None
    return sum(1 << (LEVELS - 1 - k) for k, f in enumerate(steps) if f == "step_b")


def analyze_json(trace, *opts):
    r = env.run_analyze(trace, "--json", *opts)
    if not env.check("analyze --json %s exits 0" % " ".join(opts), r.returncode == 0, r.stderr[-500:]):
        return None
    return json.loads(r.stdout)


def stacks(report, key):
    """The frame lists of report[key]'s entries, each as a tuple of (function, file, line, inlined)."""
    return {tuple((f["function"], f["file"], f["line"], f["inlined"]) for f in e["frames"])
            for e in (report or {}).get(key, [])}


trace = env.trace("many", [prog])

# JSON: one entry per backtrace, each allocation's whole stack.
rep = analyze_json(trace, "--group", "backtrace", *OPTS)
seen, wrong = set(), []
for e in (rep or {}).get("leaks", []):
    frames = e["frames"]
    d = decode([f["function"] for f in frames])
    got = [(f["function"], f["line"]) for f in frames]
    files = {os.path.basename(f["file"] or "") for f in frames}
    if d is None or got != expected(d) or files != {FILE} or any(f["inlined"] for f in frames) or \
            (e["bytes"], e["allocations"]) != (16 + d % 7, 1):
        wrong.append((d, e["bytes"], got[:6]))
    else:
        seen.add(d)
env.eq("json: every allocation's stack is the program's calls at their lines", wrong[:3], [])
env.eq("json: one backtrace per allocation, all of them", sorted(seen), list(range(COUNT)))

# Folded stacks (root first): the same paths, each with its allocation's bytes.
folded = os.path.join(env.scratch, "many.folded")
r = env.run_analyze(trace, "--folded", folded, *OPTS)
env.check("analyze --folded exits 0", r.returncode == 0, r.stderr[-500:])
paths, bad = {}, []
with open(folded) as f:
    for line in f:
        stack, _, value = line.rstrip("\n").rpartition(" ")
        functions = list(reversed(stack.split(";")))
        d = decode(functions)
        if d is None or functions != [fn for fn, _ in expected(d)] or int(value) != 16 + d % 7:
            bad.append(line[:120])
        else:
            paths[d] = paths.get(d, 0) + 1
env.eq("folded: every line is one allocation's path", bad[:3], [])
env.eq("folded: each allocation once", sorted(paths) == list(range(COUNT)) and set(paths.values()),
       {1})

# --diff resolves each frame when it is asked for, on the main thread: the stacks it prints are
# stacks printed above, frame for frame.
r = env.run_analyze(trace, "--diff", trace, "--json", "--group", "backtrace", *OPTS)
if env.check("analyze --diff exits 0", r.returncode == 0, r.stderr[-500:]):
    eager = stacks(json.loads(r.stdout), "sites")
    env.check("diff: stacks printed", eager, "none")
    env.eq("diff: its stacks are the ones resolved ahead", sorted(eager - stacks(rep, "leaks"))[:1], [])
env.finish()
