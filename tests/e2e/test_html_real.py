# SPDX-License-Identifier: MIT
# The HTML report of real programs in Debian's Chromium (issue 24, "Done when"): gcc's cc1 compiling a
# preprocessed analyzer source (some 3,000 lines, -O2), and sqlite3 running an SQL script in memory
# (skipped when sqlite3 is not installed). Each program also runs under valgrind; the page
# (tests/browser/real_test.mjs) must load without an error, request or console message on any view, show
# valgrind's total heap usage in its header, chart more than 50 points of heap, and after a drag across
# the middle third of the allocations on the heap chart (by count) show in every view (top sites, call
# trees, flame graph, histogram) what this script computes itself from the page's data document for the
# slices of that window.
# Screenshots of every view, for the whole run and for the window, go to SHOTS/<program>/.
# Usage: test_html_real.py CTRACK ANALYZE VALGRIND SCRATCH SRC_ROOT REAL_TEST_MJS SHOTS
# Without Chromium, node or tests/browser/node_modules the browser part is skipped (exit 77 when all
# else passed), unless CI is set: then it fails.
import collections
import json
import os
import re
import shutil
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
src_root, real_test, shots = env.progs[:3]
SITE_ROWS = 500  # rows of the page's top sites table (app.js)
MIN_POINTS = 50  # x points of the heap chart with heap in use
# cc1's allocations depend on where its garbage collector's pages are mapped: ggc keeps a page table
# with one 32 KiB leaf (calloc(4096, 8)) per 16 MiB of address space its pages touch, and valgrind maps
# them elsewhere than the kernel does (one leaf more or fewer per run: gdb shows the calls natively);
# a few hash tables keyed by address grow differently too. So cc1 matches valgrind's total heap usage
# to within this many blocks and bytes, never exactly; sqlite3 (no address-keyed sizes) matches exactly.
CC1_SLACK_BLOCKS = 16
CC1_SLACK_BYTES = 4 * 32768 + 16 * 128
SQL = """\
CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, grp INTEGER, val REAL);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000)
INSERT INTO t SELECT x, printf('name-%06d-%s', x, hex(x * 7919)), x % 97, x * 0.5 FROM c;
CREATE INDEX t_grp ON t(grp, name);
SELECT grp, count(*), sum(val), max(name) FROM t GROUP BY grp ORDER BY 3 DESC LIMIT 5;
SELECT count(*) FROM t a JOIN t b ON a.grp = b.grp AND a.id < b.id WHERE a.id < 300;
UPDATE t SET name = upper(name) WHERE id % 3 = 0;
DELETE FROM t WHERE id % 5 = 0;
SELECT group_concat(name, ',') FROM (SELECT name FROM t ORDER BY name DESC LIMIT 50);
"""
ALLOC_FNS = {"malloc", "calloc", "realloc", "memalign", "posix_memalign", "aligned_alloc", "valloc",
             "pvalloc"}
browser_skipped = None


# ---- the programs, traced and under valgrind ----

class Valgrind:
    """memcheck running a program in the background (cwd: its own directory, so the command line is
    the traced run's), with --trace-malloc when the sizes are wanted."""

    def __init__(self, name, argv, stdin=None, sizes=False):
        self.dir = env.fresh_dir("vg-" + name)
        self.log = os.path.join(self.dir, "vg.log")
        flags = ct.VG_FLAGS + (["--trace-malloc=yes"] if sizes else [])
        self.proc = subprocess.Popen([env.valgrind, *flags, "--log-file=" + self.log, *argv], cwd=self.dir,
                                     stdin=open(stdin) if stdin else subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def figures(self):
        """valgrind's total heap usage, and the sizes allocated ({size: count}) with --trace-malloc."""
        _, err = self.proc.communicate(timeout=600)
        if not env.check("valgrind ran " + os.path.basename(self.dir), os.path.exists(self.log), err[-500:]):
            return None, None
        with open(self.log, errors="replace") as f:
            text = f.read()
        sizes = collections.Counter()
        # realloc(0x0,N) is logged with the malloc(N) it becomes: "realloc(0x0,100)malloc(100) = 0x…".
        for m in re.finditer(r"^--\d+-- (\w+)\(([^)]*)\)(?:malloc\(\d+\))? = ", text, re.M):
            fn, args = m.group(1), [int(a, 0) for a in m.group(2).split(",") if a]
            if fn.startswith("_Znw") or fn.startswith("_Zna") or fn in ALLOC_FNS:
                sizes[args[0] * args[1] if fn == "calloc" else args[1] if fn == "realloc" else args[-1]] += 1
        return ct.parse_valgrind(text), sizes


def setarch():
    """`setarch -R`: the address layout of every run alike (without it cc1's counts vary run to run)."""
    path = shutil.which("setarch")
    return [path, os.uname().machine, "-R"] if path else []


def traced(name, argv, stdin=None):
    """ctrack's trace of argv, run in a directory beside valgrind's (the same command line)."""
    d = env.fresh_dir("ct-" + name)
    trace = os.path.join(d, "trace.zst")
    r = subprocess.run([*setarch(), env.ctrack, "-q", "-o", trace, *argv], cwd=d, capture_output=True,
                       timeout=300, stdin=open(stdin) if stdin else subprocess.DEVNULL, preexec_fn=ct.no_core)
    if not env.check(name + ": traced", r.returncode == 0 and os.path.exists(trace), r.stderr[-500:]):
        return None
    return trace


def page_of(name, trace):
    page = os.path.join(env.scratch, name + ".html")
    r = env.run_analyze(trace, "--html=" + page, timeout=300)
    if not env.check(name + ": --html exits 0", r.returncode == 0 and os.path.exists(page), r.stderr[-500:]):
        return None, None
    with open(page, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r'<script[^>]*\bid="ct-data"[^>]*>(.*?)</script>', text, re.S)
    if not env.check(name + ": the page holds its data document", m):
        return None, None
    print("%s: page of %d bytes" % (name, len(text.encode())))
    return page, json.loads(m.group(1))


# ---- what the page must show, computed here from its data document ----

def window_costs(d, a, b):
    """Per site: (allocations, bytes) made in site slices [a, b), bytes live at the end of site slice
    b - 1 (the contract: each site's slices are [slice, n, bytes, freed n, freed bytes, temporary]
    sextuples, at the sites' width, site_width_us)."""
    out = []
    for v in d["timeline"]["sites"]:
        n = by = live = 0
        for j in range(0, len(v), 6):
            if v[j] >= b:
                break
            live += v[j + 2] - v[j + 4]
            if v[j] >= a:
                n, by = n + v[j + 1], by + v[j + 2]
        out.append((n, by, live))
    return out


def expected_rows(costs):
    """The top sites table: sites with allocations in the window or bytes live at its end, by
    allocations (the page's default order; ties by site index), the first SITE_ROWS."""
    rows = [(i, n, by, live) for i, (n, by, live) in enumerate(costs) if n or live]
    rows.sort(key=lambda r: (-r[1], r[0]))
    return [list(r) for r in rows[:SITE_ROWS]]


def shared_histogram(d, costs):
    """[[lo, allocations]] of a window by the page's rule: each site's allocations in the window shared
    over its size buckets (its `hb`: bucket, n, bytes, temporary, live) as its whole run's are."""
    rows = {0 if h["lo"] == 0 else h["lo"].bit_length(): [h["lo"], 0.0] for h in d["histogram"]}
    for s, (n, _, _) in zip(d["sites"], costs):
        hb = s.get("hb") or []
        for j in range(0, len(hb), 5):
            if hb[j] in rows and s["n"]:
                rows[hb[j]][1] += n * hb[j + 1] / s["n"]
    return [[lo, int(v + 0.5)] for lo, v in rows.values()]


def bucket_of(histogram, size):
    return next((b["lo"] for b in histogram if b["lo"] <= size <= b["hi"]), None)


def span(us):
    """A slice's width as the page words it (app.js's span)."""
    def g(v):
        return ("%.3f" % v).rstrip("0").rstrip(".")
    return g(us / 1e6) + " s" if us >= 1e6 else g(us / 1000) + " ms" if us >= 1000 else "%d \u00b5s" % us


def check_wrappers(name, page):
    """The folded wrappers' list names them as the text report does (C++ parameter lists dropped), the full
    name on hover."""
    with open(page, encoding="utf-8") as f:
        m = re.search(r'<p id="wrappers"[^>]*>(.*?)</p>', f.read(), re.S)
    codes = re.findall(r'<code title="([^"]*)">([^<]*)</code>', m.group(1)) if m else []
    full = [(t, n) for t, n in codes if "(" in t.split(" (/")[0]]
    env.check(name + ": the wrappers list has C++ names with parameter lists to shorten", len(full) >= 1, repr(codes))
    env.check(name + ": the wrappers list names them short (no parameter list), the full name on hover",
              codes and all(n and "(" not in n and n.split("<")[0] in t for t, n in codes), repr(codes))


def check_heap_chart(name, d, b):
    tl = d["timeline"]
    heap = tl["heap"]
    points = sum(1 for h in heap if h > 0)
    env.check("%s: the data's heap is above 0 at more than %d slices" % (name, MIN_POINTS), points > MIN_POINTS,
              "%d of %d" % (points, len(heap)))
    # The sites' bands hold a site slice's highest heap over its heap slices: above 0 wherever it is.
    ratio = tl["site_width_us"] // tl["width_us"]
    most = [max(heap[k * ratio:(k + 1) * ratio]) for k in range(tl["site_n"])]
    banded = sum(1 for s in range(tl["n"]) if most[s // ratio] > 0)
    print("%s: %d heap slices of %d us, %d site slices of %d us" % (name, tl["n"], tl["width_us"], tl["site_n"],
                                                                   tl["site_width_us"]))
    charts = b.get("charts") or [{}]
    env.eq(name + ": the heap chart has a point per heap slice", charts[0].get("points"), tl["n"])
    env.eq(name + ": the heap chart's points above 0 are the data's", charts[0].get("nonzero_x"), banded)
    env.check(name + ": four charts drawn", len(charts) == 4, repr(charts))


def allocation_thirds(d):
    """The site slices (fractional) where the allocations reach a third and two thirds of their count:
    the window real_test.mjs drags (from the heap slice where a third is reached to the end of the one
    where two thirds are)."""
    tl = d["timeline"]
    a, total, cum, lo, hi = tl["allocs"], sum(tl["allocs"]), 0, 0, len(tl["allocs"])
    for i, k in enumerate(a):
        if cum < total / 3 <= cum + k:
            lo = i
        if cum < 2 * total / 3 <= cum + k:
            hi = i + 1
        cum += k
    per = tl["width_us"] / (tl.get("site_width_us") or tl["width_us"])  # site slices per heap slice
    return lo * per, hi * per


def check_views(name, d, got, costs, whole):
    """One observation (the whole run or the window) against the figures computed from the data."""
    what = name + (": whole run" if whole else ": window")
    n, by = sum(c[0] for c in costs), sum(c[1] for c in costs)
    env.eq(what + ": window figures (allocations, bytes)",
           [got.get("window_figures", {}).get(k) for k in ("window-allocations", "window-bytes")], [n, by])
    env.eq(what + ": top sites table rows (site, allocations, bytes, live at the end)", got.get("sites"),
           expected_rows(costs))
    if len(got.get("sites") or []) == len([c for c in costs if c[0] or c[2]]):
        env.eq(what + ": the table's allocations sum to the window's", sum(r[1] for r in got["sites"]), n)
    t = got.get("trees") or {}
    env.eq(what + ": call trees' totals (top-down, bottom-up)",
           [(t.get(m) or {}).get(k) for m in ("top", "bottom") for k in ("allocations", "allocated")], [n, by, n, by])
    cc = t.get("cc") or {}
    env.check(what + ": caller/callee view of the first function", cc.get("fn") and 0 < cc.get("allocations", 0) <= n
              and t.get("callers", 0) >= 1, repr(t))
    f = got.get("flame") or {}
    env.eq(what + ": flame graph roots (bytes allocated, allocations)",
           [(f.get(k) or {}).get("root") for k in ("allocated", "allocations")], [by, n])
    env.check(what + ": the flame graph draws (an SVG, frames)",
              (f.get("allocated") or {}).get("svgs", 0) >= 1 and (f.get("allocated") or {}).get("frames", 0) > 20,
              repr(f))
    hist = got.get("histogram") or []
    total = sum(v for _, v in hist)
    if whole:
        env.eq(what + ": histogram buckets are the data's", hist, [[h["lo"], h["n"]] for h in d["histogram"]])
        env.eq(what + ": histogram counts sum to the allocations", total, n)
    else:
        # A site of several size buckets has its window's allocations shared over them as over the whole
        # run, rounded per bucket (the page marks those ≈): the sum is exact to a count per bucket.
        env.check(what + ": histogram counts sum to the window's allocations (to a count per bucket)",
                  abs(total - n) <= len([v for _, v in hist if v]), "%d, want %d" % (total, n))
        want = shared_histogram(d, costs)
        env.check(what + ": histogram buckets are the window's allocations shared by each site's sizes",
                  len(hist) == len(want) and all(lo == w[0] and abs(v - w[1]) <= 1 for (lo, v), w in zip(hist, want)),
                  "got %r, want %r" % (hist, want))
    views = got.get("views") or {}
    for v, seen in views.items():
        shot = seen.get("screenshot") or ""
        env.check("%s: %s view drawn, screenshot saved" % (what, v), seen.get("text", 0) > 0 and os.path.exists(shot)
                  and os.path.getsize(shot) > 1000, repr(seen))
    texts = {v: s.get("window") for v, s in views.items() if s.get("window") is not None}
    env.check(what + ": every windowed view names one window", len(set(texts.values())) == 1 and
              {"timeline", "sites", "trees", "flame", "histogram"} <= set(texts), repr(texts))
    return texts


def run_browser(name, page):
    """real_test.mjs's observations of the page, or None (a failed check, or a skip noted)."""
    global browser_skipped
    if ct.browser_off():
        return None
    node = shutil.which("node")
    if not node:
        browser_skipped = "node is not installed"
        return None
    outdir = os.path.join(shots, name)
    shutil.rmtree(outdir, ignore_errors=True)
    r = subprocess.run([node, real_test, page, outdir], capture_output=True, timeout=600)
    if r.returncode == 77:
        browser_skipped = (r.stdout + r.stderr).decode(errors="replace").strip()
        return None
    if not env.check(name + ": real_test.mjs exits 0", r.returncode == 0, r.stderr.decode(errors="replace")[-2000:]):
        return None
    return json.loads(r.stdout)


def check_browser(name, d, b, vg, exact):
    print("%s: ready in %d ms, drag answered in %d ms" % (name, b["ready_ms"], b["drag_ms"]))
    env.eq(name + ": data-ready, no uncaught error", (b["ready"], b["errors"]), ("1", None))
    env.eq(name + ": no console error or warning, no page error on any view", b["console"] + b["pageerrors"], [])
    env.eq(name + ": no request (self-contained)", b["requests"], [])
    fig, t = b["figures"], d["totals"]
    env.eq(name + ": header figures are the data's",
           (fig.get("allocations"), fig.get("frees"), fig.get("bytes-allocated")),
           (t["allocations"], t["frees"], t["bytes_allocated"]))
    got = (fig.get("allocations"), fig.get("frees"), fig.get("bytes-allocated"))
    want = (vg["allocs"], vg["frees"], vg["bytes"])
    print("%s: header %r, valgrind %r" % (name, got, want))
    if exact:
        env.eq(name + ": header allocations, frees, bytes allocated == valgrind's total heap usage", got, want)
    else:
        env.check(name + ": header allocations, frees, bytes allocated == valgrind's total heap usage, to cc1's "
                  "address-dependent blocks (%d blocks, %d bytes)" % (CC1_SLACK_BLOCKS, CC1_SLACK_BYTES),
                  abs(got[0] - want[0]) <= CC1_SLACK_BLOCKS and abs(got[1] - want[1]) <= CC1_SLACK_BLOCKS
                  and abs(got[2] - want[2]) <= CC1_SLACK_BYTES, "got %r, want %r" % (got, want))
    env.eq(name + ": every view has a tab", {"timeline", "sites", "trees", "flame", "histogram"} <= set(b["tabs"]), True)
    check_heap_chart(name, d, b)
    ns = d["timeline"]["site_n"]  # a window is a range of site slices
    whole = check_views(name, d, b["whole"], window_costs(d, 0, ns), True)
    env.eq(name + ": whole run: the window is the whole run", b["whole"]["state"], [0, ns])
    env.check(name + ": whole run: the views say so", all(v.startswith("window: the whole run") for v in whole.values()),
              repr(whole))
    a, z = b["window"]["state"]
    near = 2 + 2 * b["window"]["slices_per_px"]  # the drag ends on whole pixels
    lo, hi = allocation_thirds(d)
    env.check(name + ": the drag selected the middle third of the allocations (slices %d to %d of %d, want %.1f "
              "to %.1f)" % (a, z, ns, lo, hi), abs(a - lo) <= near and abs(z - hi) <= near, repr(b["window"]))
    texts = check_views(name, d, b["window"], window_costs(d, a, z), False)
    w = d["timeline"]["site_width_us"] / 1e6
    want_text = "window: %.*f s \u2013 %.*f s" % ((3 if d["meta"]["runtime_us"] >= 1e5 else 6), a * w,
                                                  (3 if d["meta"]["runtime_us"] >= 1e5 else 6),
                                                  min(z * w, d["meta"]["runtime_us"] / 1e6))
    if d["timeline"]["site_width_us"] > d["timeline"]["width_us"]:
        want_text += " (per-site figures at %s steps)" % span(d["timeline"]["site_width_us"])
    env.eq(name + ": window: the views name the slices' times", set(texts.values()), {want_text})
    env.check(name + ": the window shows less than the whole run",
              b["window"]["window_figures"]["window-allocations"] < t["allocations"], repr(b["window"]["window_figures"]))


def check_document(name, d, vg_sizes):
    t = d["totals"]
    env.eq(name + ": data: sites and timeline sum to the totals",
           (sum(s["n"] for s in d["sites"]), sum(d["timeline"]["allocs"]), sum(h["n"] for h in d["histogram"])),
           (t["allocations"],) * 3)
    if vg_sizes:
        want = collections.Counter()
        for size, k in vg_sizes.items():
            want[bucket_of(d["histogram"], size)] += k
        env.eq(name + ": data: histogram buckets == valgrind's sizes (--trace-malloc)",
               {h["lo"]: h["n"] for h in d["histogram"] if h["n"]}, dict(want))


def cc1():
    gcc = shutil.which("gcc") or "gcc"
    cc1_path = subprocess.run([gcc, "-print-prog-name=cc1"], capture_output=True, text=True).stdout.strip()
    if not env.check("cc1 found (gcc -print-prog-name=cc1)", os.path.isabs(cc1_path) and os.access(cc1_path, os.X_OK),
                     cc1_path):
        return
    src = os.path.join(src_root, "analyzer", "model.c")
    pre = os.path.join(env.scratch, "model.i")
    r = subprocess.run([gcc, "-E", "-D_GNU_SOURCE", *["-I" + os.path.join(src_root, p) for p in
                                                      ("include", "common", "analyzer")], src, "-o", pre],
                       capture_output=True, text=True)
    if not env.check("model.c preprocessed", r.returncode == 0, r.stderr[-500:]):
        return
    with open(pre) as f:
        lines = sum(1 for _ in f)
    env.check("cc1's input has a few thousand lines", lines > 2000, str(lines))
    # The same command line under valgrind and under ctrack: each in a directory of its own, of names of
    # one length (cc1 copies its arguments).
    argv = [cc1_path, "-quiet", "-O2", "../model.i", "-o", "out.s"]
    vg = Valgrind("cc1", argv)
    trace = traced("cc1", argv)
    page, d = page_of("cc1", trace) if trace else (None, None)
    if d:
        check_wrappers("cc1", page)
    b = run_browser("cc1", page) if d else None
    # The rest once valgrind is done, after sqlite3's part (cc1 under memcheck is the longest step).
    return lambda: cc1_figures(vg, d, b)


def cc1_figures(vg, d, b):
    figures, _ = vg.figures()
    if not d or not figures or not env.check("cc1: valgrind's total heap usage", "allocs" in figures, repr(figures)):
        return
    check_document("cc1", d, None)
    if b:
        check_browser("cc1", d, b, figures, exact=False)


def sqlite():
    sqlite3 = shutil.which("sqlite3")
    if not sqlite3:
        print("SKIP sqlite3: not installed (scripts/deps bench installs it)")
        return
    sql = os.path.join(env.scratch, "script.sql")
    with open(sql, "w") as f:
        f.write(SQL)
    argv = [sqlite3, "-batch", "-init", "/dev/null", ":memory:"]
    vg = Valgrind("sqlite3", argv, stdin=sql, sizes=True)
    trace = traced("sqlite3", argv, stdin=sql)
    page, d = page_of("sqlite3", trace) if trace else (None, None)
    figures, sizes = vg.figures()
    if not d or not figures or not env.check("sqlite3: valgrind's total heap usage", "allocs" in figures):
        return
    env.eq("sqlite3: --trace-malloc's calls are valgrind's total", sum(sizes.values()), figures["allocs"])
    check_document("sqlite3", d, sizes)
    b = run_browser("sqlite3", page)
    if b:
        check_browser("sqlite3", d, b, figures, exact=True)


finish_cc1 = cc1()
sqlite()
if finish_cc1:
    finish_cc1()
if browser_skipped and not os.environ.get("CI") and env.results and all(env.results):
    print("%d checks passed; the browser part skipped: %s" % (len(env.results), browser_skipped))
    sys.exit(77)
if browser_skipped and os.environ.get("CI"):
    env.check("browser: runs (CI is set: a missing browser is a failure)", False, browser_skipped)
env.finish()
