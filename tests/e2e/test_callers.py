# SPDX-License-Identifier: MIT
# 256 call paths into one allocating helper (tests/progs/callers.c): --group backtrace gives every
# path its own entry with the program's figures (caller k: k + 1 blocks of 24 bytes), and each path
# reads leak at LEAK, 32 x leak at RECURSE, the caller, main at CALL. The paths differ only in the
# caller's return address, so a stack table that confused nodes with one address and different
# parents would move blocks from one caller to another.
import json
import os
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog, src = env.progs[0], env.progs[1]
LINES = ct.line_markers(src)

CALLERS, BLOCK, DEPTH = 256, 24, 32  # the program's comment
WANT = {"caller_%02x" % k: (BLOCK * (k + 1), k + 1) for k in range(CALLERS)}
TOTAL = (sum(b for b, _ in WANT.values()), sum(n for _, n in WANT.values()))  # 789504, 32896


def at(frame, function, mark):
    return (ct.same_function(frame.get("function") or "", function)
            and os.path.basename(frame.get("file") or "") == os.path.basename(src)
            and frame.get("line") == LINES[mark])


def path_caller(entry):
    """The caller of a path that reads as the program says, else None."""
    f = entry.get("frames") or []
    if len(f) < DEPTH + 3 or not at(f[0], "leak", "LEAK"):
        return None
    if not all(at(x, "leak", "RECURSE") for x in f[1:DEPTH + 1]) or not at(f[DEPTH + 2], "main", "CALL"):
        return None
    name = f[DEPTH + 1].get("function") or ""
    return name.split("(")[0]


trace = env.trace("traced", [prog])
if os.path.exists(trace):
    rep = env.report(trace)
    if rep:
        s = rep["summary"]
        env.eq("leaked (bytes, allocations)", (s["leaked_bytes"], s["leaked_allocations"]), TOTAL)
        # Every block is lost but the last, which the global `sink` still points at: the site's
        # blocks are two entries, one per leak class (memcheck's: definitely lost, still reachable).
        at_leak = [e for e in rep["leaks"] if at(e["frames"][0], "leak", "LEAK")]
        env.eq("--group site: one site, leak at LEAK, its entries summed",
               (sum(e["bytes"] for e in at_leak), sum(e["allocations"] for e in at_leak)), TOTAL)
        env.eq("--group site: the blocks by class",
               sorted((e.get("kind"), e["allocations"]) for e in at_leak),
               [("definite", TOTAL[1] - 1), ("reachable", 1)])
    r = env.run_analyze(trace, "--group", "backtrace", "--json")
    if env.check("--group backtrace --json exits 0", r.returncode == 0, r.stderr[-300:]):
        leaks = json.loads(r.stdout)["leaks"]
        got, odd = {}, []
        for e in leaks:
            c = path_caller(e)
            if c is None:
                odd.append(" ".join("%s:%s" % (f.get("function"), f.get("line")) for f in e["frames"]))
            else:  # an entry per leak class: summed per caller
                got.setdefault(c, {}).setdefault(e.get("kind"), []).append((e["bytes"], e["allocations"]))
        repeated = sorted(c for c, kinds in got.items() if any(len(v) > 1 for v in kinds.values()))
        got = {c: [tuple(map(sum, zip(*[x for v in kinds.values() for x in v])))] for c, kinds in got.items()}
        env.eq("--group backtrace: entries that do not read leak, %d x leak, caller, main: how many, "
               "the first" % DEPTH, (len(odd), odd[:1]), (0, []))
        env.eq("--group backtrace: callers without exactly one entry (missing, extra, repeated)",
               (sorted(set(WANT) - set(got)), sorted(set(got) - set(WANT)),
                repeated), ([], [], []))
        wrong = sorted((c, v, [WANT[c]]) for c, v in got.items() if c in WANT and v != [WANT[c]])
        env.eq("--group backtrace: callers whose (bytes, blocks) are not the program's: how many, "
               "the first 3 (got, want)", (len(wrong), wrong[:3]), (0, []))
env.finish()
