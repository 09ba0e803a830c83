# SPDX-License-Identifier: MIT
# Stacks that share their outer frames and differ in the middle (tests/progs/midpaths.c): each
# allocation's stack is walked from the memo of the one before and its id found from the hashes of
# the frames it shares with it. --group backtrace must give each of the 32 paths its own entry with
# the program's figures (path c: c + 1 blocks of 24 bytes), whole stacks (default depth) and with
# --depth 11, where the paths 4 or more calls of rec deep are cut (each still tells its path apart:
# its frames reach mid_a or mid_b) and walks alternate between cut and whole. Then the stack of
# main's own malloc, the outer part of the one before (through wrap): a cache of the previous walk's
# id must not take it for that one.
import json
import os
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog, src = env.progs[0], env.progs[1]
LINES = ct.line_markers(src)

PATHS, BLOCK = 32, 24  # the program's comment
WANT = {c: (BLOCK * (c + 1), c + 1) for c in range(PATHS)}
WANT.update({"wrap": (640, 16), "main": (896, 16)})
TOTAL = (sum(b for b, _ in WANT.values()), sum(n for _, n in WANT.values()))  # 14208, 560


def at(frame, function, mark):
    return ct.frame_at(frame, function, src, LINES[mark])


def path_of(entry):
    """The path c an entry's frames read (the program's comment), else None."""
    f = entry.get("frames") or []
    if f and at(f[0], "wrap", "WRAP") and len(f) > 1 and at(f[1], "main", "POINTER"):
        return "wrap"
    if f and at(f[0], "main", "POINTER"):
        return "main"
    leaf = [x for x in (0, 1) if f and at(f[0], ("leaf_x", "leaf_y")[x], ("LEAF_X", "LEAF_Y")[x])]
    if not leaf or len(f) < 3 or not at(f[1], "rec", "REC_LEAF"):
        return None
    depth = 0
    while 2 + depth < len(f) and at(f[2 + depth], "rec", "RECURSE"):
        depth += 1
    rest = f[2 + depth:]
    mid = [m for m in (0, 1) if rest and at(rest[0], ("mid_a", "mid_b")[m], ("MID_A", "MID_B")[m])]
    if not mid or depth > 7:
        return None
    # route and main follow (then libc's frames: --full-stacks), or what of them the cut left
    outer = [("route", ("ROUTE_A", "ROUTE_B")[mid[0]]), ("main", "CALL")]
    if not all(at(x, *want) for x, want in zip(rest[1:], outer)):
        return None
    if len(rest) < 3 and not entry.get("truncated"):
        return None
    return mid[0] * 16 + depth * 2 + leaf[0]


def check(label, opts):
    trace = env.trace(label, [prog], opts=opts)
    if not os.path.exists(trace):
        return
    r = env.run_analyze(trace, "--group", "backtrace", "--full-stacks", "--no-auto-fold", "--json")
    if not env.check(label + ": --group backtrace --json exits 0", r.returncode == 0, r.stderr[-300:]):
        return
    rep = json.loads(r.stdout)
    s = rep["summary"]
    env.eq(label + ": leaked (bytes, allocations)", (s["leaked_bytes"], s["leaked_allocations"]), TOTAL)
    got, odd, cut = {}, [], 0
    for e in rep["leaks"]:
        c = path_of(e)
        cut += bool(e.get("truncated"))
        if c is None:
            odd.append(" ".join("%s:%s" % (f.get("function"), f.get("line")) for f in e["frames"]))
        else:  # one entry per path and leak class: summed per path
            got.setdefault(c, []).append((e["bytes"], e["allocations"]))
    env.eq(label + ": entries that read no path: how many, the first", (len(odd), odd[:1]), (0, []))
    got = {c: tuple(map(sum, zip(*v))) for c, v in got.items()}
    env.eq(label + ": paths missing", sorted(map(str, set(WANT) - set(got))), [])
    wrong = sorted(((str(c), v, WANT[c]) for c, v in got.items() if v != WANT[c]))
    env.eq(label + ": paths whose (bytes, blocks) are not the program's: how many, the first 3 "
           "(path, got, want)", (len(wrong), wrong[:3]), (0, []))
    return cut


env.check("default depth: no entry cut", check("whole", ()) == 0)
cut = check("depth-11", ("--depth", "11"))
env.check("--depth 11: some entries cut, some whole (%s cut)" % cut, cut is not None and 0 < cut < PATHS)
env.finish()
