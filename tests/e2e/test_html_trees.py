# SPDX-License-Identifier: MIT
# The HTML report's call trees, caller/callee view and flame graph (analyzer/html/trees.js, flame.js) in
# Debian's Chromium driven by puppeteer-core: first on synthetic sites of known figures
# (tests/browser/trees_test.mjs, flame_test.mjs), then in the reports of two real programs traced under
# the real shim (tests/browser/trees_real.mjs), against the figures their sources state:
#   callers.c: 256 callers into leak(), which recurses 32 times: the recursion counts once per stack;
#   flame.c: a known tree of xmalloc's callers, a temporary site. Screenshots go to SHOTS/.
# Usage: test_html_trees.py CTRACK ANALYZE VALGRIND SCRATCH CALLERS CALLERS_SRC FLAME FLAME_SRC BROWSER_DIR SHOTS
#        test_html_trees.py ... --perf   (only tests/browser/trees_perf.mjs: 100k sites, 1M frames, timed)
# Without Chromium, node or puppeteer-core the test is skipped (exit 77), unless CI is set: then it fails.
import json
import os
import shutil
import subprocess
import sys

import ctrack_test as ct

perf = "--perf" in sys.argv
env = ct.Env([a for a in sys.argv if a != "--perf"])
env.analyze_opts = ["--no-auto-fold"]  # xmalloc and leak stay frames of their own, as the sources count
callers, callers_src, flame, flame_src, browser_dir, shots = env.progs[:6]
CALLERS_LINES = ct.line_markers(callers_src)
FLAME_LINES = ct.line_markers(flame_src)
skipped = None


def node_script(name, *args, timeout=600):
    """Runs tests/browser/NAME ARGS with node; its stdout, or None (a failure checked, or a skip noted)."""
    global skipped
    if ct.browser_off():
        return None
    node = shutil.which("node")
    if not node:
        skipped = "node is not installed"
        return None
    r = subprocess.run([node, os.path.join(browser_dir, name), *args], capture_output=True, timeout=timeout,
                       env=dict(os.environ, CT_ARTIFACTS=shots))
    out, err = r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")
    if r.returncode == 77:
        skipped = (out + err).strip()
        return None
    print(out, end="")
    if not env.check("%s %s exits 0" % (name, " ".join(os.path.basename(a) for a in args)), r.returncode == 0,
                     err[-2000:]):
        return None
    return out


def html_of(name, prog):
    trace = env.trace(name, [prog])
    page = os.path.join(env.scratch, name + ".html")
    r = env.run_analyze(trace, "--html=" + page)
    env.check(name + ": --html exits 0", r.returncode == 0 and os.path.exists(page), r.stderr[-500:])
    return page


def seen(name, page, function):
    os.makedirs(os.path.join(shots, name), exist_ok=True)
    out = node_script("trees_real.mjs", page, os.path.join(shots, name), function)
    if out is None:
        return None
    d = json.loads(out.strip().splitlines()[-1])
    env.eq(name + ": no page errors", (d["pageerrors"], d["errors"]), ([], None))
    return d


def rows(rs, **kw):
    return [r for r in rs if all(r[k] == v for k, v in kw.items())]


def check_callers():
    """callers.c: caller k (0..255) leaks k + 1 blocks of 24 bytes through leak(), 33 frames deep."""
    d = seen("callers", html_of("callers", callers), "leak")
    if not d:
        return
    n, size = 256 * 257 // 2, 24 * 256 * 257 // 2
    env.eq("callers: total row", (d["total"]["allocations"], d["total"]["allocated"]), (n, size))
    env.eq("callers: top-down root main", [(r["fn"], r["cost"]["allocations"]) for r in rows(d["topdown"], depth=0)],
           [("main", n)])
    kids = rows(d["topdown"], depth=1)
    env.eq("callers: main's first 200 callers drawn, the rest behind a row", (len(kids), d["more"]),
           (200, ["\u2026 56 more (show 200)"]))
    env.eq("callers: caller_ff first (the app sorts by bytes allocated)",
           (kids[0]["fn"], kids[0]["cost"]["allocations"], kids[0]["cost"]["allocated"]), ("caller_ff", 256, 256 * 24))
    env.eq("callers: each caller's figures", sorted(r["cost"]["allocations"] for r in kids), list(range(57, 257)))
    # Bottom-up: leak allocates everything; its 33 nested frames are the largest path, each with the total.
    bu = d["bottomup"]
    env.eq("callers: bottom-up root", [(r["fn"], r["cost"]["allocations"]) for r in rows(bu, depth=0)], [("leak", n)])
    env.eq("callers: bottom-up leak x 33 then the callers",
           [r["fn"] for r in bu if r["expanded"]], ["leak"] * 33 + ["caller_ff"])
    env.eq("callers: bottom-up per line: leak at LEAK",
           [(r["fn"], r["loc"]) for r in rows(d["bottomupByLine"], depth=0)],
           [("leak", "callers.c:%d" % CALLERS_LINES["LEAK"])])
    # Caller/callee of leak: counted once per stack although each stack holds it 33 times.
    cc = d["cc"]
    env.eq("callers: cc leak inclusive and self", (cc["fn"], cc["incl"], cc["self"]), ("leak", [n, size], [n, size]))
    want = [["leak", n, size]] + [["caller_%02x" % k, k + 1, 24 * (k + 1)] for k in range(255, -1, -1)]
    env.eq("callers: cc leak's callers (itself, and each caller_XY)", cc["callers"], want)
    env.eq("callers: cc leak's callees", sorted(map(tuple, cc["callees"])),
           [("(allocates here: self)", n, size), ("leak", n, size)])
    f = d["flame"]
    root = [x["value"] for x in f["frames"] if x["depth"] == 0]
    env.eq("callers: flame root", root, [n])
    env.eq("callers: flame search leak", (f["search"]["matched"], f["search"]["total"], f["search"]["frames"]),
           (n, n, 256 * 33))
    hidden = f["hidden"]
    env.eq("callers: flame without leak: no leak frame, the total kept",
           ([x for x in hidden if x["fn"] == "leak"], [x["value"] for x in hidden if x["depth"] == 0]), ([], [n]))
    env.eq("callers: icicle puts the root at the top", f["icicle"], "translate(0,0)")


def check_flame():
    """flame.c: xmalloc's callers parse_entry (10 x 48), intern_name inlined in load_config (5 x 32),
    build_cache (16 x 65536); scratch's 1000 temporary blocks of 100 bytes; 1031 allocations."""
    d = seen("flame", html_of("flame", flame), "xmalloc")
    if not d:
        return
    env.eq("flame: total row", (d["total"]["allocations"], d["total"]["allocated"], d["total"]["temporary"]),
           (1031, 1149216, 1000))
    td = [(r["fn"], r["depth"], r["cost"]["allocations"], r["cost"]["allocated"], r["self"]["allocations"])
          for r in d["topdownAll"]]
    env.eq("flame: top-down tree", sorted(td), sorted([
        ("main", 0, 1031, 1149216, 0), ("load_config", 1, 15, 640, 0), ("parse_entry", 2, 10, 480, 0),
        ("xmalloc", 3, 10, 480, 10), ("intern_name", 2, 5, 160, 0), ("xmalloc", 3, 5, 160, 5),
        ("build_cache", 1, 16, 1048576, 0), ("xmalloc", 2, 16, 1048576, 16), ("scratch", 1, 1000, 100000, 1000)]))
    env.eq("flame: scratch's temporary", [r["cost"]["temporary"] for r in rows(d["topdownAll"], fn="scratch")], [1000])
    env.eq("flame: bottom-up roots", sorted((r["fn"], r["cost"]["allocations"]) for r in rows(d["bottomup"], depth=0)),
           [("scratch", 1000), ("xmalloc", 31)])
    env.eq("flame: bottom-up per line", sorted((r["fn"], r["loc"]) for r in rows(d["bottomupByLine"], depth=0)),
           [("scratch", "flame.c:%d" % FLAME_LINES["SCRATCH"]), ("xmalloc", "flame.c:%d" % FLAME_LINES["XMALLOC"])])
    cc = d["cc"]
    env.eq("flame: cc xmalloc", (cc["fn"], cc["incl"], cc["self"]), ("xmalloc", [31, 1049216], [31, 1049216]))
    env.eq("flame: cc xmalloc's callers", sorted(map(tuple, cc["callers"])),
           [("build_cache", 16, 1048576), ("intern_name", 5, 160), ("parse_entry", 10, 480)])
    f = d["flame"]
    env.eq("flame: flame graph frames", sorted((x["fn"], x["depth"], x["value"]) for x in f["frames"]), sorted([
        ("all", 0, 1031), ("main", 1, 1031), ("load_config", 2, 15), ("build_cache", 2, 16), ("scratch", 2, 1000),
        ("parse_entry", 3, 10), ("intern_name", 3, 5), ("xmalloc", 3, 16), ("xmalloc", 4, 10), ("xmalloc", 4, 5)]))
    env.eq("flame: search xmalloc", (f["search"]["matched"], f["search"]["total"], f["search"]["highlighted"]),
           (31, 1031, 3))
    env.eq("flame: xmalloc hidden", sorted((x["fn"], x["value"]) for x in f["hidden"]), sorted([
        ("all", 1031), ("main", 1031), ("load_config", 15), ("build_cache", 16), ("scratch", 1000),
        ("parse_entry", 10), ("intern_name", 5)]))


os.makedirs(shots, exist_ok=True)
if perf:
    node_script("trees_perf.mjs", timeout=900)
else:
    for script in ("trees_test.mjs", "flame_test.mjs"):
        node_script(script)
    check_callers()
    check_flame()
if skipped:
    if os.environ.get("CI"):
        env.check("browser available (CI is set: a missing browser is a failure)", False, skipped)
    elif not env.results or all(env.results):
        print("SKIP browser part:", skipped)
        sys.exit(77)
env.finish()
