# SPDX-License-Identifier: MIT
# Folding and grouping (tests/progs/fold_cxx.cpp): after folding, frame 0 of each leak is the user's
# function at its marked line, also where container frames sit above it (a constructor called by
# std::vector::emplace_back, a comparator called by std::sort): folding stops at the first user
# frame and shows the frames above it; --all-frames shows operator new; --group site merges
# copy_name's two callers, --group backtrace does not; --fold FILE folds a user function. Figures
# from the source.
import json
import os
import re
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog, src = env.progs[0], env.progs[1]

LINES = ct.line_markers(src)

GROW = "ns::Pool<int>::grow"
SITES = {  # (function, marked line): (bytes, allocations), as the program's comment says
    (GROW, "GROW"): (25 * 4, 1),
    ("fill_vector", "NEWVEC"): (24, 1),
    ("fill_vector", "PUSH"): (128 * 4, 1),
    ("copy_name", "HOLD"): (2 * 32, 2),
    ("copy_name", "COPY"): (41 + 61, 2),
    ("make_widgets", "NEWWV"): (24, 1),
    ("make_widgets", "RESERVE"): (4 * 8, 1),
    ("Widget::Widget", "CTOR"): (40 + 44 + 48, 3),
    ("by_value", "CMPNEW"): (32, 1),
    ("by_value", "CMPSTR"): (41, 1),
}
# User frames with container frames above them: (site, a frame shown above it whose name starts
# with `prefix` and holds `word`, then the user's frame that called the container).
ABOVE = {
    ("Widget::Widget", "CTOR"): ("std::vector<Widget", "emplace_back", "make_widgets", "EMPLACE"),
    ("by_value", "CMPNEW"): ("std::sort<", "sort", "sort_values", "SORT"),
    ("by_value", "CMPSTR"): ("std::sort<", "sort", "sort_values", "SORT"),
}


def bare(frame):
    """The function's name without a return type (`void std::sort<...>(...)` -> `std::sort<...>(...)`)."""
    name = frame.get("function") or ""
    depth = 0
    for i, c in enumerate(name):
        if c in "<(":
            depth += 1
        elif c in ">)":
            depth -= 1
        if c == " " and depth == 0:
            return name[i + 1:]
    return name


def analyze(trace, *opts):
    r = env.run_analyze(trace, "--json", *opts)
    if not env.check("analyze %s exits 0" % " ".join(opts), r.returncode == 0, r.stderr[-300:]):
        return []
    return json.loads(r.stdout)["leaks"]


def at(frame, function, mark):
    return (ct.same_function(frame.get("function") or "", function)
            and os.path.basename(frame.get("file") or "") == os.path.basename(src)
            and frame.get("line") == LINES[mark])


def entries(leaks, function, mark):
    return [e for e in leaks if e["frames"] and at(e["frames"][0], function, mark)]


r, rep = env.run_traced("traced", [prog])
env.eq("exit status", r.returncode, 0)
trace = os.path.join(env.scratch, "traced", "trace.zst")
if rep:
    s = rep["summary"]
    env.eq("leaked", (s["leaked_bytes"], s["leaked_allocations"]),
           (sum(b for b, _ in SITES.values()), sum(n for _, n in SITES.values())))
    leaks = rep["leaks"]
    env.eq("one entry per site (default --group site)", len(leaks), len(SITES))
    for (function, mark), want in SITES.items():
        got = entries(leaks, function, mark)
        env.eq("%s at line %s is frame 0" % (function, mark), len(got), 1)
        if got:
            env.eq("%s at %s: bytes, allocations" % (function, mark),
                   (got[0]["bytes"], got[0]["allocations"]), want)
    # memcheck's order: the most severe kind first (definitely lost, ..., still reachable), each by bytes
    severity = ["definite", "indirect", "possible", "reachable", "unscanned"]
    order = [(severity.index(e["kind"]) if e.get("kind") in severity else -1, -e["bytes"]) for e in leaks]
    env.eq("leaks sorted by kind, then bytes", order, sorted(order))
    grow = entries(leaks, GROW, "GROW")
    if grow:
        env.check("grow: operator new folded", grow[0]["folded"] >= 1, repr(grow[0]["folded"]))
        env.check("grow: called by fill_pool", at(grow[0]["frames"][1], "fill_pool", "FILL"))
    for (function, mark), (prefix, word, caller, call) in ABOVE.items():
        got = entries(leaks, function, mark)
        if not got:
            continue
        shown = got[0]["frames"]
        names = [bare(f) for f in shown]
        above = [i for i, n in enumerate(names) if n.startswith(prefix) and word in n]
        users = [i for i, f in enumerate(shown) if at(f, caller, call)]
        env.check("%s at %s: folding stopped there, %s...%s shown above it, then %s at %s" % (
            function, mark, prefix, word, caller, call), above and users and 0 < above[0] < users[0],
            repr(names[:12]))
        env.check("%s at %s: operator new folded" % (function, mark), got[0]["folded"] >= 1,
                  repr(got[0]["folded"]))
    hold = entries(leaks, "copy_name", "HOLD")
    if hold:
        env.eq("malloc'd holder: nothing folded (libc is a real site)", hold[0]["folded"], 0)

    # --all-frames: the same entries, each allocated through operator new showing it first
    full = analyze(trace, "--all-frames")
    env.eq("--all-frames: same grouping", len(full), len(SITES))
    news = [e for e in full if ct.frame0(e).startswith("operator new")]
    env.eq("--all-frames: operator new is frame 0 of the new'd leaks",
           sorted(e["bytes"] for e in news), sorted(b for (f, m), (b, _) in SITES.items() if m != "HOLD"))
    env.check("--all-frames: nothing folded", all(e["folded"] == 0 for e in full))
    vec = [e for e in full if e["bytes"] == SITES[("fill_vector", "PUSH")][0]]
    if env.eq("--all-frames: one vector buffer entry", len(vec), 1):
        names = [f["function"] for f in vec[0]["frames"]]
        env.check("--all-frames: push_back under fill_vector",
                  any(n.startswith("std::vector<int") and "push_back" in n for n in names), repr(names))

    # --group backtrace: copy_name's two callers stay apart
    bt = analyze(trace, "--group", "backtrace")
    copies = entries(bt, "copy_name", "COPY")
    env.eq("--group backtrace: copies per caller",
           sorted((e["bytes"], e["frames"][1]["function"]) for e in copies),
           [(41, "caller_a()"), (61, "caller_b()")])
    env.eq("--group backtrace: entries", len(bt), len(SITES) + 2)

    # --fold FILE: a user pattern folds grow too, so fill_pool is the site
    patterns = os.path.join(env.scratch, "fold.txt")
    with open(patterns, "w") as f:
        f.write("# the pool is plumbing too\n\n  %s  \n" % GROW)
    user = analyze(trace, "--fold", patterns)
    pool = entries(user, "fill_pool", "FILL")
    if env.eq("--fold: fill_pool is frame 0", len(pool), 1):
        env.eq("--fold: its figures", (pool[0]["bytes"], pool[0]["allocations"]), SITES[(GROW, "GROW")])
    env.eq("--fold: grow is no frame 0", entries(user, GROW, "GROW"), [])

    # the text report names the same site
    t = env.run_analyze(trace)
    # by its short name (template arguments as <…>, no parameters), in full with --full-names
    short = GROW.replace("<int>", "<\u2026>")
    want = r"#0 0x[0-9a-f]+ %s at \S*%s:%d " % (re.escape(short), re.escape(os.path.basename(src)), LINES["GROW"])
    env.check("text: grow named (short) at its line", re.search(want, t.stdout.decode()), want)
    full = env.run_analyze(trace, "--full-names")
    want = r"#0 0x[0-9a-f]+ %s\(unsigned long\) at \S*%s:%d " % (
        re.escape(GROW), re.escape(os.path.basename(src)), LINES["GROW"])
    env.check("text --full-names: grow named in full at its line", re.search(want, full.stdout.decode()), want)
    bad = env.run_analyze(trace, "--fold", os.path.join(env.scratch, "missing"))
    env.eq("--fold of a missing file fails", bad.returncode, 1)
env.finish()
