# SPDX-License-Identifier: MIT
# --massif (tests/progs/flame.c): valgrind's own ms_print reads the file (graph, peak snapshot, tree),
# and the file parsed here: snapshots in time order, the peak and exit ones detailed with the figures
# flame.c's comment states, every tree node's bytes the sum of its children's. Then the detailed
# snapshots at regular intervals (--detailed-freq) on tests/progs/window.c's phases: each one's heap
# and tree are what the program held at its time (nothing before phase 2, B's blocks after it).
import os
import re
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
# flame.c's tree has xmalloc as its one allocation function, a frame of its own in every figure this
# test checks: it is kept (test_sites.py checks how wrappers fold).
env.analyze_opts = ["--no-auto-fold"]
prog, src, wprog, wsrc = env.progs
SRC = os.path.basename(src)

LINES = ct.line_markers(src)

# From flame.c's comment: the cache is 16 x 65536 bytes, all live at the peak with the leaks so far.
PEAK, CACHE, LEAKED, PARSE, INTERN = 1049216, 16 * 65536, 640, 10 * 48, 5 * 32

NODE = re.compile(r"^( *)n(\d+): (\d+) (.*)$")


def parse_massif(text):
    """(header dict, snapshots): each snapshot a dict of its fields, with "tree" (root node or None);
    a node is {"bytes", "label", "n", "children", "depth"}."""
    header, snaps, cur, stack = {}, [], None, []
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        m = NODE.match(line)
        if m and cur is not None and cur.get("heap_tree") in ("peak", "detailed"):
            node = {"depth": len(m.group(1)), "n": int(m.group(2)), "bytes": int(m.group(3)),
                    "label": m.group(4), "children": []}
            while stack and stack[-1]["depth"] >= node["depth"]:
                stack.pop()
            if stack:
                stack[-1]["children"].append(node)
            elif cur["tree"] is None:
                cur["tree"] = node
            else:
                cur["orphans"] = cur.get("orphans", 0) + 1
            stack.append(node)
            continue
        key, sep, value = line.partition("=")
        if sep and key == "snapshot":
            cur, stack = {"snapshot": int(value), "tree": None}, []
            snaps.append(cur)
        elif cur is None:
            k, _, v = line.partition(":")
            header[k] = v.strip()
        elif sep:
            cur[key] = value
    return header, snaps


def nodes(tree):
    yield tree
    for c in tree["children"]:
        yield from nodes(c)


def check_tree(name, snap):
    """Root == mem_heap_B; each node: n<k> children, one space deeper, bytes == sum(children),
    children largest first."""
    tree = snap["tree"]
    if not env.check(name + ": has a tree", tree is not None and not snap.get("orphans")):
        return False
    env.eq(name + ": root bytes == mem_heap_B", tree["bytes"], int(snap["mem_heap_B"]))
    env.check(name + ": root is massif's allocation functions node",
              tree["label"].startswith("(heap allocation functions) malloc/new/new[]"), tree["label"])
    bad = []
    for n in nodes(tree):
        kids = n["children"]
        if len(kids) != n["n"] or any(k["depth"] != n["depth"] + 1 for k in kids):
            bad.append(("shape", n["label"], n["n"], len(kids)))
        if kids and sum(k["bytes"] for k in kids) != n["bytes"]:
            bad.append(("sum", n["label"], n["bytes"], [k["bytes"] for k in kids]))
        framed = [k["bytes"] for k in kids if k["label"].startswith("0x")]
        if framed != sorted(framed, reverse=True):
            bad.append(("order", n["label"], framed))
    return env.eq(name + ": every node is n<children> and the sum of its children", bad, [])


def at(node, function, mark):
    """node's label is `0xADDR: function (.../flame.c:LINE)`."""
    want = r"0x[0-9A-F]+: %s \(\S*%s:%d\)$" % (re.escape(function), re.escape(SRC), LINES[mark])
    return re.match(want, node["label"]) is not None


def chain(node, steps):
    """Follows steps [(function, mark, bytes)] down from node, one child per step; what failed."""
    for function, mark, nbytes in steps:
        hit = [c for c in node["children"] if at(c, function, mark)]
        if len(hit) != 1:
            return "no single child %s at line %s under %r" % (function, mark, node["label"])
        if hit[0]["bytes"] != nbytes:
            return "%s: %d bytes, want %d" % (function, hit[0]["bytes"], nbytes)
        node = hit[0]
    return None


trace = env.trace("traced", [prog])
out = os.path.join(os.path.dirname(trace), "massif.out")
a = env.run_analyze(trace, "--massif", out)
env.check("--massif exits 0", a.returncode == 0, a.stderr[-500:])
text = open(out).read() if os.path.exists(out) else ""
header, snaps = parse_massif(text)

# ---- the file itself ----
env.check("header: desc, cmd, time_unit ms",
          "desc" in header and header.get("time_unit") == "ms" and prog in header.get("cmd", ""),
          repr(header))
env.check("snapshots written", len(snaps) >= 3, "%d snapshots" % len(snaps))
env.check("at most ~50 snapshots (massif's default)", len(snaps) <= 51, "%d snapshots" % len(snaps))
env.eq("snapshots numbered 0..n-1", [s["snapshot"] for s in snaps], list(range(len(snaps))))
fields = ["time", "mem_heap_B", "mem_heap_extra_B", "mem_stacks_B", "heap_tree"]
env.check("every snapshot has massif's fields", all(all(f in s for f in fields) for s in snaps))
times = [int(s.get("time", -1)) for s in snaps]
env.eq("times in order", times, sorted(times))
heaps = [int(s.get("mem_heap_B", -1)) for s in snaps]
peaks = [s for s in snaps if s.get("heap_tree") == "peak"]
if env.eq("one peak snapshot", len(peaks), 1):
    peak = peaks[0]
    env.eq("peak snapshot: mem_heap_B == flame.c's peak", int(peak["mem_heap_B"]), PEAK)
    env.eq("no snapshot above the peak", max(heaps), PEAK)
    if check_tree("peak tree", peak):
        xm = [c for c in peak["tree"]["children"] if at(c, "xmalloc", "XMALLOC")]
        if env.eq("peak: xmalloc is the one allocation function", len(xm), 1):
            env.eq("peak: xmalloc holds the whole peak", xm[0]["bytes"], PEAK)
            env.eq("peak: xmalloc <- build_cache <- main",
                   chain(xm[0], [("build_cache", "CACHE", CACHE), ("main", "MAIN_CACHE", CACHE)]), None)
            small = [c for c in xm[0]["children"] if " place" in c["label"]]
            env.check("peak: the leaks so far merged below massif's threshold",
                      len(small) == 1 and small[0]["bytes"] == PEAK - CACHE
                      and small[0]["label"].endswith("places, all below massif's threshold (1.00%)"),
                      repr([c["label"] for c in xm[0]["children"]]))
regular = [x for x in snaps[:-1] if x["heap_tree"] == "detailed"]
for x in regular:
    check_tree("detailed snapshot %d" % x["snapshot"], x)
last = snaps[-1] if snaps else {}
env.eq("final snapshot is detailed", last.get("heap_tree"), "detailed")
env.eq("final snapshot: the leaked heap", int(last.get("mem_heap_B", -1)), LEAKED)
if snaps and check_tree("final tree", last):
    xm = [c for c in last["tree"]["children"] if at(c, "xmalloc", "XMALLOC")]
    if env.eq("final: xmalloc holds every leak", [c["bytes"] for c in xm], [LEAKED]):
        env.eq("final: parse_entry's leaks",
               chain(xm[0], [("parse_entry", "PARSE", PARSE), ("load_config", "LOAD_PARSE", PARSE),
                             ("main", "MAIN_LOAD", PARSE)]), None)
        env.eq("final: intern_name's leaks, inlined into load_config",
               chain(xm[0], [("intern_name [inlined]", "INTERN", INTERN),
                             ("load_config", "LOAD_INTERN", INTERN), ("main", "MAIN_LOAD", INTERN)]), None)

# ---- what ms_print makes of it ----
ms = subprocess.run(["ms_print", out], capture_output=True, text=True, timeout=60)
env.check("ms_print exits 0", ms.returncode == 0, ms.stderr[-500:])
shown = ms.stdout
env.check("ms_print: the command", "Command:            " + prog in shown)
# The graph's y axis is the peak: 1049216 B is 1.0006 MB, which ms_print labels 1.001 MB.
graph = re.search(r"^\s+MB\n1\.001\^(.*?)\n\s+0 \+-+>ms", shown, re.S | re.M)
if env.check("ms_print: graph scaled to the peak (1.001 MB)", graph, shown[:1500]):
    env.check("ms_print: graph marks the peak (#)", "#" in graph.group(1))
if peaks:
    row = r"^\s*%d\s+[\d,]+\s+1,049,216\s+1,049,216\s+0\s+0$" % peaks[0]["snapshot"]
    env.check("ms_print: peak snapshot row, 1,049,216 B", re.search(row, shown, re.M), row)
    listed = ", ".join("%d%s" % (x["snapshot"], " (peak)" if x["heap_tree"] == "peak" else "")
                       for x in snaps if x["heap_tree"] != "empty")
    env.check("ms_print: detailed snapshots listed", "Detailed snapshots: [%s]" % listed in shown, listed)
for what, want in [
        ("xmalloc holds the peak", r"->100\.00%% \(1,049,216B\) 0x[0-9A-F]+: xmalloc \(\S*%s:%d\)"
         % (re.escape(SRC), LINES["XMALLOC"])),
        ("build_cache's 1,048,576 B", r"->99\.94%% \(1,048,576B\) 0x[0-9A-F]+: build_cache \(\S*%s:%d\)"
         % (re.escape(SRC), LINES["CACHE"])),
        ("final snapshot's 640 B", r"^100\.00% \(640B\) \(heap allocation functions\)"),
        ("parse_entry's 480 B at exit", r"->75\.00% \(480B\) 0x[0-9A-F]+: parse_entry"),
]:
    env.check("ms_print: " + what, re.search(want, shown, re.M), want)

# ---- detailed snapshots at regular intervals: window.c's phases ----
with open(wsrc) as f:
    C = {k: int(v) for k, v in re.findall(r"#define (\w+) (\d+)", f.read())}
B = C["B_COUNT"] * C["B_SIZE"]
WLINES = ct.line_markers(wsrc)
wtrace = env.trace("window", [wprog])
rep = env.report(wtrace)
marks = {m["name"]: m["time_ns"] / 1e6 for m in rep["marks"]} if rep else {}
margin = C["PAUSE_MS"] / 4  # ms: a snapshot this far from a mark is well inside a pause
for freq in ("10", "1", "3"):
    wout = os.path.join(os.path.dirname(wtrace), "massif.%s.out" % freq)
    a = env.run_analyze(wtrace, "--massif", wout, "--detailed-freq", freq)
    if not env.check("--detailed-freq %s: exit 0" % freq, a.returncode == 0, a.stderr[-500:]):
        continue
    _, ws = parse_massif(open(wout).read())
    ms = subprocess.run(["ms_print", wout], capture_output=True, text=True, timeout=60)
    env.check("--detailed-freq %s: ms_print exits 0" % freq, ms.returncode == 0, ms.stderr[-500:])
    n = int(freq)
    # Every n-th snapshot of the regular ones is detailed (the peak's stretch gives the peak's).
    got = [x["snapshot"] for x in ws[:-1] if x["heap_tree"] == "detailed"]
    want = [i for i in range(len(ws) - 1) if (i + 1) % n == 0 and ws[i]["heap_tree"] != "peak"]
    env.eq("--detailed-freq %s: every %sth snapshot detailed" % (freq, freq), got, want)
    env.check("--detailed-freq %s: about 50 snapshots" % freq, 40 <= len(ws) <= 51, len(ws))
    bad = []
    for x in ws[:-1]:
        if x["heap_tree"] != "detailed":
            continue
        t, heap = int(x["time"]), int(x["mem_heap_B"])
        if not check_tree("--detailed-freq %s: snapshot %d" % (freq, x["snapshot"]), x):
            continue
        # What window.c holds at t: nothing until phase 2 (phase 1 frees all it allocates), B after.
        if t < marks["phase2"] - margin and heap != 0:
            bad.append((x["snapshot"], t, heap, 0))
        if t > marks["phase2"] + margin:
            pb = [c for c in x["tree"]["children"]
                  if re.match(r"0x[0-9A-F]+: phase_b \(\S*window\.c:%d\)$" % WLINES["B"], c["label"])]
            if heap != B or [c["bytes"] for c in pb] != [B]:
                bad.append((x["snapshot"], t, heap, B, [c["label"] for c in x["tree"]["children"]]))
    env.eq("--detailed-freq %s: each detailed snapshot holds what window.c held then" % freq, bad, [])
    if n == 1:
        after = [x for x in ws[:-1] if x["heap_tree"] == "detailed" and int(x["time"]) > marks["phase2"] + margin]
        env.check("--detailed-freq 1: detailed snapshots after phase 2", len(after) >= 5, len(after))
a = env.run_analyze(wtrace, "--massif", os.path.join(os.path.dirname(wtrace), "x.out"), "--detailed-freq", "0")
env.eq("--detailed-freq 0: usage error", a.returncode, 2)
env.finish()
