# SPDX-License-Identifier: MIT
# Sites a user can act on (issue 12), with tests/progs/wrappers.c, whose comment states every figure:
#  - stacks end at main, or at a thread's start routine (--full-stacks keeps libc's frames below);
#  - a site reached by several backtraces lists them with their own figures, which add up to the site's;
#  - allocator wrappers (xmalloc; xmalloc2 -> xmalloc_impl) are found and folded, and named in the
#    report; functions that allocate for themselves (make_node, make_buf, single_use) are not.
import json
import os
import re
import shutil
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog, src = env.progs[0], env.progs[1]
L = ct.line_markers(src)
BASE = os.path.basename(src)

# The program's comment: (function, marker) of the first shown frame -> (leaked bytes, allocations).
SITES = {
    ("parse_a", "CALL_A"): (100, 1), ("parse_b", "CALL_B"): (400, 2),
    ("parse_c", "CALL_C"): (900, 3), ("parse_d", "CALL_D"): (1600, 4),
    ("load_a", "LOAD_A"): (50, 5), ("load_b", "LOAD_B"): (120, 6), ("load_c", "LOAD_C"): (210, 7),
    ("make_node", "NODE"): (288, 6),
    ("make_buf", "BUF_HEAD"): (72, 3), ("make_buf", "BUF_DATA"): (56, 3),
    ("single_use", "SINGLE"): (6, 3),
    ("thread_leak", "THREAD_LEAK"): (77, 1),
}
WRAPPERS = ["xmalloc", "xmalloc2", "xmalloc_impl"]
RUNTIME = {"__libc_start_call_main", "__libc_start_main", "__libc_start_main_impl", "_start",
           "start_thread", "__clone3", "clone3", "__clone", "clone"}


def fn(frame):
    return (frame.get("function") or "").split("(")[0]


def at(frame, function, mark):
    return (fn(frame) == function and os.path.basename(frame.get("file") or "") == BASE
            and frame.get("line") == L[mark])


def site_of(entry):
    f = (entry.get("frames") or [{}])[0]
    for (function, mark) in SITES:
        if at(f, function, mark):
            return (function, mark)
    return None


def analyze_json(trace, *opts):
    r = env.run_analyze(trace, "--json", *opts)
    if not env.check("analyze --json %s exits 0" % " ".join(opts), r.returncode == 0, r.stderr.decode(errors="replace")[-300:]):
        return None
    return json.loads(r.stdout)


def full(entry, caller):
    """The whole backtrace of one caller entry: the site's common frames, then the caller's."""
    return (entry.get("frames") or []) + (caller.get("frames") or [])


vg = env.valgrind_main([prog], env.fresh_dir("valgrind"))
trace = env.trace("traced", [prog])
rep = env.report(trace)
if vg and rep:
    env.eq("allocations == valgrind's", rep["summary"]["allocations"], vg["allocs"])

# ---- stacks end at main or at the thread's start routine ----
if rep:
    ends = sorted({fn(full(e, e["callers"][0])[-1]) if e.get("callers") else fn(e["frames"][-1])
                   for e in rep["leaks"]})
    env.eq("stacks: every leak's backtrace ends at main or thread_main", ends, ["main", "thread_main"])
    below = sorted({fn(f) for e in rep["leaks"] for c in e.get("callers") or [{}]
                    for f in full(e, c) if fn(f) in RUNTIME})
    env.eq("stacks: no frame below main or the thread routine", below, [])
    t = [e for e in rep["leaks"] if site_of(e) == ("thread_leak", "THREAD_LEAK")]
    env.eq("stacks: the thread's leak reads thread_leak, thread_main",
           [[fn(f) for f in full(e, (e.get("callers") or [{}])[0])] for e in t],
           [["thread_leak", "thread_main"]])
fs = analyze_json(trace, "--full-stacks")
if fs:
    names = {s: [fn(f) for c in e.get("callers") or [{}] for f in full(e, c)]
             for e in fs["leaks"] for s in [site_of(e)] if s}
    env.check("--full-stacks: main's stacks go on to __libc_start_main and _start",
              {"__libc_start_main", "_start"} <= set(names.get(("parse_a", "CALL_A"), [])),
              repr(names.get(("parse_a", "CALL_A"))))
    env.check("--full-stacks: the thread's stack goes on to start_thread",
              "start_thread" in names.get(("thread_leak", "THREAD_LEAK"), []),
              repr(names.get(("thread_leak", "THREAD_LEAK"))))
# A stripped copy (no main symbol): its stacks end at main's address, where the runtime frames were
# cut off, its thread's at the routine's; none holds a runtime frame, named or not.
stripped = os.path.join(env.fresh_dir("stripped"), "wrappers-stripped")
shutil.copy(prog, stripped)
if env.check("strip -s", subprocess.run(["strip", "-s", stripped]).returncode == 0):
    srep = env.report(env.trace("stripped-trace", [stripped]))
    if srep:
        tails = [full(e, c) for e in srep["leaks"] for c in e.get("callers") or [{}]]
        env.eq("stripped: no runtime frame", sorted({fn(f) for t in tails for f in t if fn(f) in RUNTIME}), [])
        env.eq("stripped: every stack ends in the program",
               sorted({t[-1].get("module") == stripped for t in tails}), [True])
        env.eq("stripped: the thread's 77 bytes read thread_leak, thread_main (unnamed)",
               [len(full(e, c)) for e in srep["leaks"] if e["bytes"] == 77 for c in e.get("callers") or [{}]],
               [2])
        env.eq("stripped: parse_d's 1600 bytes read xmalloc, parse_d, main (unnamed: no wrapper found)",
               [len(full(e, c)) for e in srep["leaks"] for c in e.get("callers") or [{}]
                if c.get("bytes") == 1600], [3])
        env.eq("stripped: no wrappers (no symbols)", srep.get("wrappers"), [])
r = env.run_analyze(trace, "--folded", "-", "--cost", "leaked")  # the reachable ones too
if env.check("--folded exits 0", r.returncode == 0, r.stderr.decode(errors="replace")[-300:]):
    roots = sorted({l.split(";")[0] for l in r.stdout.decode().splitlines()})
    env.eq("--folded: stacks root at main or thread_main", roots, ["main", "thread_main"])

# ---- each site's figure comes with the backtraces that make it up ----
if rep:
    node = [e for e in rep["leaks"] if site_of(e) == ("make_node", "NODE")]
    if env.eq("callers: one make_node entry", len(node), 1):
        e = node[0]
        env.eq("callers: make_node's common frames are the site alone",
               [(fn(f), f.get("line")) for f in e["frames"]], [("make_node", L["NODE"])])
        got = [(c["bytes"], c["allocations"], fn((c.get("frames") or [{}])[0]), (c.get("frames") or [{}])[0].get("line"))
               for c in e.get("callers") or []]
        env.eq("callers: make_node's three backtraces with their own figures, largest first", got,
               [(144, 3, "new_c", L["NEW_C"]), (96, 2, "new_b", L["NEW_B"]), (48, 1, "new_a", L["NEW_A"])])
        env.eq("callers: nothing left over", e.get("other_callers"), None)
nf = analyze_json(trace, "--no-auto-fold")
if nf:
    x = [e for e in nf["leaks"] if at(e["frames"][0], "xmalloc", "XMALLOC")]
    if env.eq("--no-auto-fold: one xmalloc entry, 3000 bytes in 10", [(e["bytes"], e["allocations"]) for e in x],
              [(3000, 10)]):
        e = x[0]
        got = [(c["bytes"], c["allocations"], fn(c["frames"][0]), c["frames"][0].get("line"))
               for c in e.get("callers") or []]
        env.eq("--no-auto-fold: xmalloc's top 3 backtraces", got,
               [(1600, 4, "parse_d", L["CALL_D"]), (900, 3, "parse_c", L["CALL_C"]),
                (400, 2, "parse_b", L["CALL_B"])])
        env.eq("--no-auto-fold: the rest, one backtrace of 100 bytes in 1", e.get("other_callers"),
               {"backtraces": 1, "bytes": 100, "allocations": 1})
    env.eq("--no-auto-fold: no wrappers", nf.get("wrappers"), [])
r = env.run_analyze(trace, "--top", "100")
text = r.stdout.decode() if r.returncode == 0 else ""
env.check("text report exits 0", r.returncode == 0, r.stderr.decode(errors="replace")[-300:])
# The make_node block of MOST LEAKED BYTES: its head, the site frame, then each backtrace's figure
# line directly above that backtrace's frames.
# ("leaked", or the leak class when the trace has classes: these blocks are definitely lost)
LEAKED = r"(?:leaked|definitely lost)"
block = re.search(r"\n288 bytes %s in 6 allocations\n((?:  .*\n)+)" % LEAKED, text)
if env.check("text: make_node's block", block, text[:2000]):
    lines = block.group(1).splitlines()
    env.check("text: the site frame, then no caller's frame before its own figure",
              "make_node" in lines[0] and "#1" not in lines[1], "\n".join(lines[:4]))
    pairs = []
    for i, l in enumerate(lines[:-1]):
        m = re.match(r"\s+(\d+) bytes(?: \([^)]*\))? %s in (\d+) allocations?\b" % LEAKED, l)
        c = re.search(r"#1 0x[0-9a-f]+ (\w+) at \S+:(\d+)", lines[i + 1])
        if m and c:
            pairs.append((int(m.group(1)), int(m.group(2)), c.group(1), int(c.group(2))))
    env.eq("text: each backtrace under its own figure", pairs,
           [(144, 3, "new_c", L["NEW_C"]), (96, 2, "new_b", L["NEW_B"]), (48, 1, "new_a", L["NEW_A"])])
env.check("text: no frame below main", not re.search(r"__libc_start_main|start_thread|\b_start\b", text),
          "")

# ---- allocator wrappers are found and folded, the others are not ----
if rep:
    got = {}
    for e in rep["leaks"]:
        s = site_of(e)
        if s:
            b, n = got.get(s, (0, 0))
            got[s] = (b + e["bytes"], n + e["allocations"])
    env.eq("wrappers: each site with the program's figures", got, SITES)
    env.eq("wrappers: the functions folded", sorted(fn(w) for w in rep.get("wrappers") or []), WRAPPERS)
    env.check("wrappers: each folded wrapper names its module",
              all(w.get("module") == prog for w in rep.get("wrappers") or [{}]), repr(rep.get("wrappers")))
    name = [e for e in rep["leaks"] if fn(e["frames"][0]) in ("strdup", "__strdup")]
    env.eq("wrappers: strdup's caller is make_node at NAME",
           [(e["bytes"], e["allocations"], at(full(e, (e.get("callers") or [{}])[0])[1], "make_node", "NAME"))
            for e in name], [(24, 6, True)])
m = re.search(r"^allocator wrappers folded.*$", text, re.M)
env.check("text: names the wrappers folded", m and all(w in m.group(0) for w in WRAPPERS),
          m.group(0) if m else "no line")
h = os.path.join(os.path.dirname(trace), "report.html")
r = env.run_analyze(trace, "--html", h)
if env.check("--html exits 0", r.returncode == 0, r.stderr.decode(errors="replace")[-300:]):
    page = open(h).read()
    env.check("html: names the wrappers folded", "allocator wrappers folded" in page and
              all(">%s<" % w in page for w in WRAPPERS), "")
    env.check("html: make_node's backtraces with their figures",
              all("%d bytes in %d allocation" % (b, n) in page for b, n in [(144, 3), (96, 2), (48, 1)]),
              "")
env.finish()
