# SPDX-License-Identifier: MIT
# The HTML report's Diff view (--diff BASE NEW --html): two builds of tests/progs/flame.c (the new one,
# -DNEW_BUILD, leaks two more parse_entry blocks and adds remember's four), traced under the real shim.
# The page's data document holds both runs' totals and, per site matched as --baseline matches, both
# runs' figures; then the page in Debian's Chromium driven by puppeteer-core (tests/browser/diff_test.mjs):
# the Diff tab shows the totals and changes, parse_entry's growth (+2 x 48 bytes leaked), the new site
# remember (4 x 256 bytes), 0 for every unchanged site, the backtrace of a row, sorting, and the flame
# graph of the change; no JavaScript error, no request; a screenshot in SHOTS/diff.png. The same with BASE
# a saved --json report (its unlisted figures unknown: "?", never a change; no flame graph) in
# SHOTS/diff-json.png. Every figure comes from flame.c's header comment.
# Usage: test_html_diff.py CTRACK ANALYZE VALGRIND SCRATCH FLAME FLAME_NEW FLAME_SRC DIFF_TEST_MJS SHOTS
# Without Chromium, node or tests/browser/node_modules the browser part is skipped (exit 77 when all
# else passed), unless CI is set: then it fails.
import json
import os
import re
import shutil
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
base_prog, new_prog, src, diff_test, shots = env.progs[:5]

# flame.c's header: both builds' totals.
BASE = {"allocations": 1031, "frees": 1016, "bytes_allocated": 1149216, "temporary": 1000, "peak": 1049216,
        "leaked_bytes": 640, "leaked_blocks": 15}
NEW = {"allocations": 1037, "frees": 1016, "bytes_allocated": 1150336, "temporary": 1000, "peak": 1050336,
       "leaked_bytes": 1760, "leaked_blocks": 21}
PARSE_BASE, PARSE_NEW, PARSE_SIZE = 10, 12, 48  # parse_entry: PARSE_COUNT x 48 bytes, leaked
REMEMBER_N, REMEMBER_SIZE = 4, 256               # the new build's remember: 4 x 256 bytes, leaked
CACHE_N, CACHE_SIZE = 16, 65536                  # build_cache: live at the peak, freed
SCRATCH_N, SCRATCH_SIZE = 1000, 100              # scratch: temporary allocations
INTERN_N, INTERN_SIZE = 5, 32                    # intern_name: leaked
# Per site (xmalloc is folded as a wrapper: its callers are the sites): status, then per figure of the
# view (base, new): leaked bytes, leaked blocks, bytes allocated, allocations, at the peak, temporary.
SITES = {
    "parse_entry": ("changed", {"leaked": (PARSE_BASE * PARSE_SIZE, PARSE_NEW * PARSE_SIZE),
                                "leakedn": (PARSE_BASE, PARSE_NEW),
                                "bytes": (PARSE_BASE * PARSE_SIZE, PARSE_NEW * PARSE_SIZE),
                                "n": (PARSE_BASE, PARSE_NEW),
                                "peak": (PARSE_BASE * PARSE_SIZE, PARSE_NEW * PARSE_SIZE), "temp": (0, 0)}),
    "remember": ("new", {"leaked": (0, REMEMBER_N * REMEMBER_SIZE), "leakedn": (0, REMEMBER_N),
                         "bytes": (0, REMEMBER_N * REMEMBER_SIZE), "n": (0, REMEMBER_N),
                         "peak": (0, REMEMBER_N * REMEMBER_SIZE), "temp": (0, 0)}),
    "intern_name": ("same", {"leaked": (INTERN_N * INTERN_SIZE,) * 2, "leakedn": (INTERN_N,) * 2,
                             "bytes": (INTERN_N * INTERN_SIZE,) * 2, "n": (INTERN_N,) * 2,
                             "peak": (INTERN_N * INTERN_SIZE,) * 2, "temp": (0, 0)}),
    "build_cache": ("same", {"leaked": (0, 0), "leakedn": (0, 0), "bytes": (CACHE_N * CACHE_SIZE,) * 2,
                             "n": (CACHE_N,) * 2, "peak": (CACHE_N * CACHE_SIZE,) * 2, "temp": (0, 0)}),
    "scratch": ("same", {"leaked": (0, 0), "leakedn": (0, 0), "bytes": (SCRATCH_N * SCRATCH_SIZE,) * 2,
                         "n": (SCRATCH_N,) * 2, "peak": (0, 0), "temp": (SCRATCH_N,) * 2}),
}
# The backtraces (innermost first; libc's start-up frames are hidden).
FRAMES = {"parse_entry": ["parse_entry", "load_config", "main"], "remember": ["remember", "main"]}
# A saved JSON report (--top 1) lists every leak (with its kind) but only its top site at the peak
# (build_cache's cache) and by allocations (scratch's): BASE's other figures of those lists are unknown
# in the view ("?", no change). Its temporary list is whole (scratch alone has temporary allocations).
TOP_LISTED = {"build_cache": {"peak"}, "scratch": {"n", "bytes"}}
LISTS = {"peak", "n", "bytes"}


def unknown(fn, k, json_base):
    return json_base and k in LISTS and k not in TOP_LISTED.get(fn, set())

skipped = None


def write_page(base, new, name, counts="SITES: 1 new, 0 gone, 1 changed, 3 unchanged"):
    """--diff BASE NEW --html=SCRATCH/NAME: the page's path and its data document, or (None, None)."""
    page = os.path.join(env.scratch, name)
    r = env.run_analyze(new, "--html=" + page, "--diff", base)
    if not env.check("%s: --diff --html exits 0" % name, r.returncode == 0 and os.path.exists(page),
                     r.stderr.decode(errors="replace")[-500:]):
        return None, None
    env.check("%s: the text diff still on stdout" % name, counts.encode() in r.stdout,
              r.stdout[-500:])
    with open(page, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r'<script type="application/json" id="ct-data">(.*?)</script>', text, re.S)
    if not env.check("%s: a data document" % name, m):
        return page, None
    return page, json.loads(m.group(1).replace("<\\/", "</"))


def check_document(d, name, json_base):
    diff = d.get("diff")
    if not env.check("%s: the document has a diff" % name, isinstance(diff, dict), repr(diff)[:200]):
        return
    env.eq("%s: BASE is a trace" % name, diff["base_is_trace"], not json_base)
    env.eq("%s: BASE's totals" % name, {k: diff["totals"]["base"][k] for k in BASE}, BASE)
    env.eq("%s: NEW's totals" % name, {k: diff["totals"]["new"][k] for k in NEW}, NEW)
    by_fn = {s["fn"]: s for s in diff["sites"]}
    env.eq("%s: the sites" % name, sorted(by_fn), sorted(SITES))
    for fn, (status, figs) in SITES.items():
        s = by_fn.get(fn)
        if not s:
            continue
        env.eq("%s: %s's status" % (name, fn), s["status"], status)
        for k, (b, n) in figs.items():
            want_b = None if status == "new" or unknown(fn, k, json_base) else b
            got_b = s["base"][k] if s["base"] else None
            env.eq("%s: %s's %s in BASE" % (name, fn, k), got_b, want_b)
            env.eq("%s: %s's %s in NEW" % (name, fn, k), s["new"][k], n)
        if fn in FRAMES:
            env.eq("%s: %s's frames" % (name, fn), [d["frames"][i]["fn"] for i in s["frames"]], FRAMES[fn])
    if not json_base:
        env.eq("%s: BASE's sites for the flame graph" % name,
               sorted(d["frames"][diff["base_stacks"][s["stack"]][0]]["fn"] for s in diff["base_sites"]),
               sorted(fn for fn, (st, _) in SITES.items() if st != "new"))
    else:
        env.check("%s: no BASE stacks from a JSON report" % name, "base_sites" not in diff)
    kinds = diff["totals"]["base"]["kinds"]
    env.eq("%s: BASE's definite leaks (every leak is lost)" % name, kinds and kinds[0], [BASE["leaked_blocks"], BASE["leaked_bytes"]])
    pe = by_fn.get("parse_entry")
    env.eq("%s: parse_entry's definite leaks in BASE" % name, pe and pe["base"]["kinds"][0], [PARSE_BASE, PARSE_BASE * PARSE_SIZE])


def browser(page, shot):
    """diff_test.mjs's observations of page, or None (a failed check, or a skip noted)."""
    global skipped
    if ct.browser_off():
        return None
    node = shutil.which("node")
    if not node:
        skipped = "node is not installed"
    else:
        r = subprocess.run([node, diff_test, page, shot], capture_output=True, timeout=600)
        err = r.stderr.decode(errors="replace")
        if r.returncode == 77:
            skipped = err.strip()
        elif env.check("browser: diff_test.mjs %s exits 0" % os.path.basename(page), r.returncode == 0, err[-2000:]):
            return json.loads(r.stdout)
        else:
            return None
    if os.environ.get("CI"):
        env.check("browser: runs (CI is set: a missing browser is a failure)", False, skipped)
    else:
        print("SKIP browser part:", skipped)
    return None


def rgb(fill):
    m = re.match(r"rgb\((\d+),\s*(\d+),\s*(\d+)\)", fill or "")
    return tuple(int(x) for x in m.groups()) if m else None


def check_browser(page, name, shot, json_base):
    b = browser(page, shot)
    if not b:
        return
    env.eq("%s browser: data-ready" % name, b["ready"], "1")
    env.eq("%s browser: no uncaught error (data-errors)" % name, b["errors"], None)
    env.eq("%s browser: no console error or warning" % name, b["console"] + b["pageerrors"], [])
    env.eq("%s browser: no request (self-contained)" % name, b["requests"], [])
    if not env.check("%s browser: a Diff tab" % name, "diff" in b["tabs"], repr(b["tabs"])):
        return
    env.check("%s browser: screenshot" % name, os.path.getsize(shot) > 10000, shot)
    env.eq("%s browser: totals (base, new, change)" % name,
           {k: (v["base"], v["new"], v["delta"]) for k, v in b["totals"].items() if k in BASE},
           {k: (BASE[k], NEW[k], NEW[k] - BASE[k]) for k in BASE})
    env.eq("%s browser: site counts" % name, b["counts"], {"new": 1, "gone": 0, "changed": 1, "same": 3})
    rows = {r["fn"]: r for r in b["rows"]}
    env.eq("%s browser: one row per site" % name, sorted(r["fn"] for r in b["rows"]), sorted(SITES))
    for fn, (status, figs) in SITES.items():
        r = rows.get(fn)
        if not r:
            continue
        env.eq("%s browser: %s in its table" % (name, fn), r["table"], "diff-new" if status == "new" else "diff-both")
        for k, (base, new) in figs.items():
            unk = unknown(fn, k, json_base) and status != "new"
            want = (None, new, None, "?") if unk else (base, new, new - base, None)
            c = r["cells"][k]
            got = (c["base"], c["new"], c["delta"], "?" if c["text"] == "?" else None)
            env.eq("%s browser: %s's %s (base, new, change)" % (name, fn, k), got, want)
            want_cls = "unknown" if unk else "grow" if new > base else "shrink" if new < base else "zero"
            env.eq("%s browser: %s's %s coloured" % (name, fn, k), c["cls"], want_cls)
    # The growth the programs differ by, in the programs' own constants.
    pe, rm = rows.get("parse_entry"), rows.get("remember")
    if pe and rm:
        env.eq("%s browser: parse_entry grew by 2 x 48 bytes leaked" % name, pe["cells"]["leaked"]["delta"],
               (PARSE_NEW - PARSE_BASE) * PARSE_SIZE)
        env.eq("%s browser: remember is new with 4 x 256 bytes leaked" % name, rm["cells"]["leaked"]["delta"],
               REMEMBER_N * REMEMBER_SIZE)
    env.eq("%s browser: the first row's backtrace (largest growth first)" % name, b["backtrace"], FRAMES["parse_entry"])
    both = [fn for fn, (st, _) in SITES.items() if st != "new"]
    if not json_base:  # (an unknown change sorts as none)
        env.eq("%s browser: sorted by the growth of bytes allocated" % name, b["sorted_bytes"][:1], ["parse_entry"])
        env.eq("%s browser: sorted ascending" % name, b["sorted_bytes_asc"][-1:], ["parse_entry"])
    env.eq("%s browser: sorted by allocations: the same sites" % name, sorted(b["sorted_n"]), sorted(both))
    env.eq("%s browser: the view is kept across tabs" % name, b["rows_again"], len(SITES))
    if json_base:
        env.check("%s browser: no flame graph of the change (no BASE stacks)" % name, b["flame_none"])
        return
    frames = {f["fn"]: f for f in b["flame_costs"].get("leaked", [])}
    want = {"parse_entry": (PARSE_BASE * PARSE_SIZE, PARSE_NEW * PARSE_SIZE),
            "remember": (0, REMEMBER_N * REMEMBER_SIZE), "intern_name": (INTERN_N * INTERN_SIZE,) * 2,
            "all": (BASE["leaked_bytes"], NEW["leaked_bytes"])}
    env.eq("%s browser: flame graph of the leaked change (base, new, change)" % name,
           {fn: (frames[fn]["base"], frames[fn]["new"], frames[fn]["delta"]) for fn in want if fn in frames},
           {fn: (b_, n_, n_ - b_) for fn, (b_, n_) in want.items()})
    red, grey = rgb(frames.get("remember", {}).get("fill")), rgb(frames.get("intern_name", {}).get("fill"))
    env.check("%s browser: remember (new) drawn red" % name, red and red[0] == 255 and red[1] < 100 and red[2] < 100,
              repr(red))
    env.check("%s browser: intern_name (unchanged) drawn grey" % name, grey and grey[0] == grey[1] == grey[2], repr(grey))
    alloc = {f["fn"]: f for f in b["flame_costs"].get("allocations", [])}
    env.eq("%s browser: flame graph of allocations: scratch unchanged" % name,
           (alloc.get("scratch") or {}).get("delta"), 0)
    env.eq("%s browser: flame graph of allocations: the root's change" % name,
           (alloc.get("all") or {}).get("delta"), NEW["allocations"] - BASE["allocations"])


base = env.trace("base", [base_prog])
new = env.trace("new", [new_prog])
os.makedirs(shots, exist_ok=True)
page, d = write_page(base, new, "diff.html")
if d:
    check_document(d, "trace BASE", False)
    check_browser(page, "trace BASE", os.path.join(shots, "diff.png"), False)

# Reversed (NEW's trace as BASE): remember is gone, its backtrace BASE's, its change -4 x 256 bytes.
page, d = write_page(new, base, "diff-reversed.html", "SITES: 0 new, 1 gone, 1 changed, 3 unchanged")
if d:
    gone = [s for s in d["diff"]["sites"] if s["fn"] == "remember"]
    if env.eq("reversed: one remember site", len(gone), 1):
        g = gone[0]
        env.eq("reversed: remember gone", (g["status"], g["site"], g["new"]), ("gone", -1, None))
        env.eq("reversed: remember's figures in BASE", (g["base"]["leaked"], g["base"]["leakedn"], g["base"]["n"]),
               (REMEMBER_N * REMEMBER_SIZE, REMEMBER_N, REMEMBER_N))
        env.eq("reversed: remember's frames (BASE's)", [d["frames"][i]["fn"] for i in g["frames"]], FRAMES["remember"])
    b = browser(page, os.path.join(shots, "diff-reversed.png"))
    if b:
        env.eq("reversed browser: no error", (b["errors"], b["console"] + b["pageerrors"]), (None, []))
        rows = [r for r in b["rows"] if r["fn"] == "remember"]
        env.eq("reversed browser: remember in the gone table, -4 x 256 bytes leaked",
               [(r["table"], r["cells"]["leaked"]["delta"], r["cells"]["leaked"]["cls"]) for r in rows],
               [("diff-gone", -REMEMBER_N * REMEMBER_SIZE, "shrink")])
        frames = {f["fn"]: f for f in b["flame_costs"].get("leaked", [])}
        blue = rgb((frames.get("remember") or {}).get("fill"))
        env.check("reversed browser: remember (gone) drawn blue", blue and blue[2] == 255 and blue[0] < 100, repr(blue))

saved = os.path.join(env.scratch, "base.json")
r = env.run_analyze(base, "--json", "--top", "1")
if env.check("BASE saved as --json", r.returncode == 0, r.stderr[-300:]):
    with open(saved, "wb") as f:
        f.write(r.stdout)
    page, d = write_page(saved, new, "diff-json.html")
    if d:
        check_document(d, "JSON BASE", True)
        check_browser(page, "JSON BASE", os.path.join(shots, "diff-json.png"), True)

if skipped and not os.environ.get("CI") and env.results and all(env.results):
    print("%d checks passed; the browser part skipped: %s" % (len(env.results), skipped))
    sys.exit(77)
env.finish()
