# SPDX-License-Identifier: MIT
# The HTML report (--html): the page the analyzer writes (its figures, leaks and data document, checked
# against tests/progs/flame.c's and phases.c's own figures), then the page in Debian's Chromium driven by
# puppeteer-core (tests/browser/report_test.mjs): it loads without an error or a request, shows the
# program's figures, a drag across each phase of phases.c on the chart narrows the top sites table and
# the histogram to that phase's allocations, every view opens (a screenshot of each is kept in
# SHOTS/<view>.png), and the report of wide.c (a million events, 16384 stacks) opens in time.
# Usage: test_html.py CTRACK ANALYZE VALGRIND SCRATCH FLAME FLAME_SRC WIDE PHASES REPORT_TEST_MJS SHOTS
# Without Chromium, node or tests/browser/node_modules the browser part is skipped (exit 77 when all
# else passed), unless CI is set: then it fails.
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
# flame.c's tree has xmalloc as its one allocation function, a frame of its own in every figure this
# test checks: it is kept (test_sites.py checks how wrappers fold).
env.analyze_opts = ["--no-auto-fold"]
flame, flame_src, wide, phases, report_test, shots = env.progs[:6]
LINES = ct.line_markers(flame_src)

# flame.c's comment (base build).
FLAME = {"allocations": 1031, "frees": 1016, "bytes-allocated": 1149216, "temporary": 1000,
         "leaked-bytes": 640, "leaked-allocations": 15, "peak-heap": 1049216}
# phases.c's comment: N1 blocks of S1 bytes (alloc_a, freed), N2 of S2 (alloc_b, definitely lost).
N1, S1, N2, S2 = 100, 1000, 50, 200000
PHASES = {"allocations": N1 + N2, "frees": N1, "bytes-allocated": N1 * S1 + N2 * S2, "temporary": 0,
          "leaked-bytes": N2 * S2, "leaked-allocations": N2, "peak-heap": N2 * S2,
          "definitely-lost": N2 * S2}
# wide.c's comment.
WIDE = {"allocations": 16384 * 32, "frees": 16384 * 31, "leaked_bytes": 16384 * 8}
VIEWS = ["timeline", "leaks", "sites", "trees", "flame", "histogram"]
WINDOW = re.compile(r"^window: \d+\.\d{3,6} s \u2013 \d+\.\d{3,6} s$")
LOAD_LIMIT_MS = 30000  # wide.c's page in Chromium
RED = "rgb(166, 27, 27)"  # app.css: a non-zero lost figure


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.children, self.text = tag, dict(attrs), parent, [], ""

    def classes(self):
        return (self.attrs.get("class") or "").split()

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()

    def all_text(self):
        return self.text + "".join(c.all_text() for c in self.children)


class Tree(html.parser.HTMLParser):
    """The page as a tree of Nodes (void elements have no children; a script's text is its data)."""
    VOID = {"meta", "link", "br", "img", "input", "hr", "source", "wbr", "area", "base", "col", "embed"}

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.root = self.cur = Node("#document", {}, None)
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.children.append(n)
        if tag not in self.VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        self.cur.children.append(Node(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        n = self.cur
        while n.parent and n.tag != tag:
            n = n.parent
        if n.tag == tag and n.parent:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.text += data

    def by_id(self, i):
        return next((n for n in self.root.walk() if n.attrs.get("id") == i), None)

    def find(self, pred, under=None):
        return [n for n in (under or self.root).walk() if pred(n)]


def write_html(trace, name, *opts):
    path = os.path.join(env.scratch, name)
    r = env.run_analyze(trace, "--html=" + path, *opts)
    if not env.check("--html %s %s exits 0" % (name, " ".join(opts)), r.returncode == 0 and os.path.exists(path),
                     r.stderr.decode(errors="replace")[-500:]):
        return None, None
    with open(path, encoding="utf-8") as f:
        return path, f.read()


def data_of(tree, what):
    """The page's JSON document, parsed (None after a failed check)."""
    node = tree.by_id("ct-data")
    if not env.check(what + ": a ct-data script", node is not None and node.attrs.get("type") == "application/json"):
        return None
    try:
        return json.loads(node.all_text())
    except ValueError as e:
        env.check(what + ": ct-data is JSON", False, str(e))
        return None


# ---- the page as written ----

def check_self_contained(tree, what):
    """Nothing to fetch: no element that loads a URL; every library is inline (the browser part also
    checks that the page makes no request)."""
    loaders = tree.find(lambda n: n.tag in ("link", "img", "iframe", "object", "embed") or
                        (n.attrs.get("src") or "") != "")
    env.eq(what + ": no element loads anything", [n.tag for n in loaders], [])
    scripts = [n.attrs.get("data-file") for n in tree.find(lambda n: n.tag == "script") if n.attrs.get("data-file")]
    env.check(what + ": uPlot, d3, d3-flame-graph and app.js inline",
              {"uPlot.iife.min.js", "d3.min.js", "d3-flamegraph.umd.min.js", "app.js"} <= set(scripts), repr(scripts))


def check_figures(tree, what, want):
    for i, v in want.items():
        n = tree.by_id(i)
        if env.check("%s: header has #%s" % (what, i), n is not None):
            env.eq("%s: header %s" % (what, i), int(n.attrs.get("data-value", -1)), v)


def frames_of(entry):
    return [n for n in entry.walk() if n.tag == "li" and "data-function" in n.attrs]


def at(li, function, mark):
    return (li.attrs["data-function"] == function and li.attrs["data-line"] == str(LINES[mark])
            and os.path.basename(li.attrs["data-file"]) == os.path.basename(flame_src))


def check_leaks(tree, what, want):
    """want: {(frame 0 function, mark, frame 1 function, mark): (bytes, allocations, frame 0 inlined)}"""
    leaks = tree.find(lambda n: n.tag == "details" and "leak" in n.classes())
    env.eq(what + ": leak entries", len(leaks), len(want))
    for (f0, m0, f1, m1), (nbytes, nallocs, inlined) in want.items():
        hits = [e for e in leaks if len(frames_of(e)) >= 2 and at(frames_of(e)[0], f0, m0)
                and at(frames_of(e)[1], f1, m1)]
        if not env.check("%s: %s at %s called by %s at %s" % (what, f0, m0, f1, m1), len(hits) == 1,
                         repr([[li.attrs for li in frames_of(e)[:2]] for e in leaks])):
            continue
        e = hits[0]
        env.eq(what + ": %s figures" % f0, (int(e.attrs["data-bytes"]), int(e.attrs["data-allocations"])),
               (nbytes, nallocs))
        env.eq(what + ": %s inlined marked" % f0, frames_of(e)[0].attrs["data-inlined"], str(inlined))


def check_document(d, what, want):
    """The data document against the program's figures and the contract's invariants."""
    t = d["totals"]
    env.eq(what + ": data totals", (t["allocations"], t["frees"], t["bytes_allocated"], t["temporary"],
                                    t["peak"], t["leaked_bytes"], t["leaked_blocks"]),
           (want["allocations"], want["frees"], want["bytes-allocated"], want["temporary"], want["peak-heap"],
            want["leaked-bytes"], want["leaked-allocations"]))
    sites, stacks, frames = d["sites"], d["stacks"], d["frames"]
    env.eq(what + ": one stack per site", len(stacks), len(sites))
    env.eq(what + ": site figures add up to the totals",
           (sum(s["n"] for s in sites), sum(s["bytes"] for s in sites), sum(s["temp"] for s in sites),
            sum(s["live"] for s in sites), sum(s["liven"] for s in sites)),
           (t["allocations"], t["bytes_allocated"], t["temporary"], t["leaked_bytes"], t["leaked_blocks"]))
    keys = [(f["full"], f["file"], f["line"], f["module"], f["inl"]) for f in frames]
    env.eq(what + ": frames deduplicated", len(set(keys)), len(keys))
    env.check(what + ": stacks index frames", all(0 <= i < len(frames) for st in stacks for i in st))
    tl = d["timeline"]
    env.check(what + ": timeline arrays of n slices",
              all(len(tl[k]) == tl["n"] for k in ("heap", "rss", "allocs", "temps", "alloc_bytes")) and tl["n"] > 0,
              repr({k: len(tl[k]) for k in ("heap", "rss", "allocs")}))
    env.eq(what + ": timeline sums", (sum(tl["allocs"]), sum(tl["temps"]), sum(tl["alloc_bytes"])),
           (t["allocations"], t["temporary"], t["bytes_allocated"]))
    env.eq(what + ": highest heap of the timeline is the peak", max(tl["heap"]), t["peak"])
    # The contract's arithmetic over the whole run gives each site's own figures.
    whole = []
    for v in tl["sites"]:
        e = [v[i:i + 6] for i in range(0, len(v), 6)]
        whole.append((sum(x[1] for x in e), sum(x[2] for x in e), sum(x[5] for x in e),
                      sum(x[2] - x[4] for x in e), sum(x[1] - x[3] for x in e)))
    env.eq(what + ": per-site slices sum to the sites' figures", whole,
           [(s["n"], s["bytes"], s["temp"], s["live"], s["liven"]) for s in sites])
    h = d["histogram"]
    env.eq(what + ": histogram sums", (sum(b["n"] for b in h), sum(b["bytes"] for b in h), sum(b["temp"] for b in h)),
           (t["allocations"], t["bytes_allocated"], t["temporary"]))


def fn_of(d, site):
    return d["frames"][d["stacks"][d["sites"][site]["stack"]][0]]["fn"]


def check_flame():
    trace = env.trace("flame", [flame])
    page, text = write_html(trace, "flame.html")
    if not text:
        return
    tree = Tree(text)
    check_self_contained(tree, "flame")
    check_figures(tree, "flame", FLAME)
    # Grouped by site (the default), both leaks go through xmalloc: one entry, shown by its biggest
    # member, parse_entry (10 x 48 of the 15 blocks).
    check_leaks(tree, "flame by site", {("xmalloc", "XMALLOC", "parse_entry", "PARSE"): (640, 15, 0)})
    d = data_of(tree, "flame")
    if d:
        check_document(d, "flame", FLAME)
        src = d["sources"].get(next((f["file"] for f in d["frames"] if f["fn"] == "xmalloc"), ""), None)
        line = LINES["XMALLOC"]
        env.check("flame: the source line of xmalloc's malloc call embedded",
                  src and src["first"] <= line < src["first"] + len(src["lines"]) and
                  "malloc(n)" in src["lines"][line - src["first"]], repr(src)[:300])
        with open(flame_src) as f:
            lines = f.read().split("\n")
        env.check("flame: the lines around it as in the file (3 each side)",
                  src and all(src["lines"][k - src["first"]] == lines[k - 1] for k in range(line - 3, line + 4)))
    _, text = write_html(trace, "backtrace.html", "--group", "backtrace")
    if text:
        check_leaks(Tree(text), "flame by backtrace", {
            ("xmalloc", "XMALLOC", "parse_entry", "PARSE"): (10 * 48, 10, 0),
            ("xmalloc", "XMALLOC", "intern_name", "INTERN"): (5 * 32, 5, 0),
        })
    _, text = write_html(trace, "nocontext.html", "--context", "0")
    d = data_of(Tree(text), "--context 0") if text else None
    if d is not None:
        env.eq("--context 0: no source", d["sources"], {})


# ---- in the browser ----

browser_skipped = None


def browser(page, outdir, *opts):
    """report_test.mjs's observations of page, or None (a failed check, or a skip noted)."""
    global browser_skipped
    if ct.browser_off():
        return None
    node = shutil.which("node")
    if not node:
        browser_skipped = "node is not installed"
    else:
        r = subprocess.run([node, report_test, page, outdir, *opts], capture_output=True, timeout=900)
        err = r.stderr.decode(errors="replace")
        if r.returncode == 77:
            browser_skipped = err.strip()
        elif env.check("browser: report_test.mjs %s exits 0" % " ".join(opts), r.returncode == 0, err[-2000:]):
            return json.loads(r.stdout)
        else:
            return None
    if os.environ.get("CI"):
        env.check("browser: runs (CI is set: a missing browser is a failure)", False, browser_skipped)
    else:
        print("SKIP browser part:", browser_skipped)
    return None


def rows(phase):
    return sorted((r["name"], r["n"], r["bytes"]) for r in phase["rows"])


def check_browser_phases(page):
    os.makedirs(shots, exist_ok=True)
    b = browser(page, shots, "--phases")
    if not b:
        return
    env.eq("browser: data-ready", b["ready"], "1")
    env.eq("browser: no uncaught error (data-errors)", b["errors"], None)
    env.eq("browser: no console error or warning", b["console"] + b["pageerrors"], [])
    env.eq("browser: no request (self-contained)", b["requests"], [])
    env.eq("browser: the header's figures", {k: b["figures"].get(k) for k in PHASES}, PHASES)
    env.check("browser: four charts (heap, allocations, temporary, RSS)", len(b["charts"]) == 4, repr(b["charts"]))
    if len(b["charts"]) == 4:
        env.eq("browser: the heap chart rises to the peak (not flat)", b["charts"][0]["max"], PHASES["peak-heap"])
        env.check("browser: the allocations chart shows allocations", b["charts"][1]["max"] >= 1, repr(b["charts"][1]))
        env.check("browser: the RSS chart has samples", b["charts"][3]["max"] > 0, repr(b["charts"][3]))
    p = b.get("phases", {})
    one, two, reset = p.get("phase1"), p.get("phase2"), p.get("reset")
    if not env.check("browser: three windows tried", one and two and reset, repr(p)[:500]):
        return
    env.check("browser: phase 1's window shown as text", WINDOW.match(one["window"]), one["window"])
    env.eq("browser: phase 1: the sites table holds A's allocations, no B", rows(one), [("alloc_a", N1, N1 * S1)])
    env.eq("browser: phase 1: the histogram holds A's size alone", one["buckets"], {"512": N1})
    env.check("browser: phase 2's window shown as text", WINDOW.match(two["window"]), two["window"])
    env.eq("browser: phase 2: the sites table holds B's allocations, no A", rows(two), [("alloc_b", N2, N2 * S2)])
    env.eq("browser: phase 2: B live at the window's end", [r["live"] for r in two["rows"]], [N2 * S2])
    env.eq("browser: phase 2: the histogram holds B's size alone", two["buckets"], {"131072": N2})
    env.check("browser: double-click resets the window", reset["window"].startswith("window: the whole run"),
              reset["window"])
    heads = one.get("heads") or []
    env.check("browser: a window's table: live at its end, its growth, live at exit (whole run), no column twice",
              {"live at the window's end", "growth in the window", "live at exit (whole run)"} <= set(heads)
              and len(set(heads)) == len(heads), repr(heads))
    env.check("browser: a window's leaks view says the leak classes are the exit scan's",
              "exit scan" in (two.get("leaks_note") or "") and (two.get("leaks_note") or "").startswith(two["window"]),
              repr(two.get("leaks_note")))
    env.eq("browser: definitely lost (non-zero) in red", (b.get("colours") or {}).get("definitely-lost"), RED)
    env.eq("browser: whole run: both sites", rows(reset), [("alloc_a", N1, N1 * S1), ("alloc_b", N2, N2 * S2)])
    views = b.get("views", {})
    env.check("browser: every view has a tab", set(VIEWS) <= set(views), repr(sorted(views)))
    for v in VIEWS:
        got = views.get(v) or {}
        shot = got.get("screenshot") or ""
        env.check("browser: %s view drawn" % v, got.get("text", 0) > 0, repr(got))
        env.check("browser: %s screenshot saved" % v, os.path.exists(shot) and os.path.getsize(shot) > 1000, shot)
    env.check("browser: timeline view draws its charts", (views.get("timeline") or {}).get("canvases", 0) >= 4)
    env.check("browser: flame graph view draws an SVG", (views.get("flame") or {}).get("svgs", 0) >= 1)


def check_phases():
    trace = env.trace("phases", [phases])
    page, text = write_html(trace, "phases.html")
    if not text:
        return
    tree = Tree(text)
    check_self_contained(tree, "phases")
    check_figures(tree, "phases", PHASES)
    leaks = tree.find(lambda n: n.tag == "details" and "leak" in n.classes())
    env.eq("phases: one leak, definitely lost, of B's blocks",
           [(e.attrs.get("data-kind"), int(e.attrs["data-bytes"]), int(e.attrs["data-allocations"]),
             frames_of(e)[0].attrs["data-function"]) for e in leaks],
           [("definite", N2 * S2, N2, "alloc_b")])
    d = data_of(tree, "phases")
    if not d:
        return
    check_document(d, "phases", PHASES)
    env.eq("phases: marks", [m["name"] for m in d["marks"]], ["phase2", "end"])
    by_fn = {fn_of(d, i): s for i, s in enumerate(d["sites"])}
    env.eq("phases: sites", sorted((f, s["n"], s["bytes"], s["live"]) for f, s in by_fn.items()),
           [("alloc_a", N1, N1 * S1, 0), ("alloc_b", N2, N2 * S2, N2 * S2)])
    env.eq("phases: B's leak kinds", (by_fn.get("alloc_b") or {}).get("kinds", [None])[0], [N2, N2 * S2])
    marks = {m["name"]: m["t"] for m in d["marks"]}
    w = d["timeline"]["width_us"]
    slices = {fn_of(d, i): d["timeline"]["sites"][i][0::6] for i in range(len(d["sites"]))}
    a, b = slices.get("alloc_a") or [0], slices.get("alloc_b") or [0]
    env.check("phases: A's slices end by the mark phase2, B's start after it",
              max(a) * w <= marks["phase2"] < (min(b) + 1) * w, "A %r, B %r, width %d, marks %r" % (a[-3:], b[:3], w, marks))
    check_browser_phases(page)


def check_wide():
    """A trace of over a million events and 16384 distinct stacks: the page opens in time."""
    r, rep = env.run_traced("wide", [wide])
    if not rep:
        return
    s = rep["summary"]
    env.eq("wide: figures of wide.c", {k: s[k] for k in WIDE}, WIDE)
    page, text = write_html(os.path.join(env.scratch, "wide", "trace.zst"), "wide.html")
    if not text:
        return
    print("wide: page of %d bytes" % len(text.encode()))
    b = browser(page, os.path.join(env.scratch, "wide-shots"), "--load-only")
    if not b:
        return
    print("wide: ready in %d ms" % b["ready_ms"])
    env.eq("wide: data-ready, no error", (b["ready"], b["errors"], b["pageerrors"]), ("1", None, []))
    env.check("wide: ready within %d ms" % LOAD_LIMIT_MS, b["ready_ms"] < LOAD_LIMIT_MS, "%d ms" % b["ready_ms"])


check_flame()
check_phases()
check_wide()
if browser_skipped and not os.environ.get("CI") and env.results and all(env.results):
    print("%d checks passed; the browser part skipped: %s" % (len(env.results), browser_skipped))
    sys.exit(77)
env.finish()
