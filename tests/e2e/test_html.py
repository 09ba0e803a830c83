# SPDX-License-Identifier: MIT
# The HTML report (--html) of tests/progs/flame.c: its figures (from the program's comment), the chart,
# five flame graphs, the leaks, nothing loaded from outside; then headless Chromium loads it without a
# console message and draws the chart and a flame graph, with JavaScript on and off.
import html.parser
import os
import re
import resource
import struct
import subprocess
import sys
import tempfile
import time
import zlib

import ctrack_test as ct

env = ct.Env(sys.argv)
# flame.c's tree has xmalloc as its one allocation function, a frame of its own in every figure this
# test checks: it is kept (test_sites.py checks how wrappers fold).
env.analyze_opts = ["--no-auto-fold"]
prog, src = env.progs[0], env.progs[1]

LINES = ct.line_markers(src)

# flame.c's comment (base build): the figures the summary must show.
SUMMARY = {"allocations": 1031, "frees": 1016, "bytes-allocated": 1149216, "temporary": 1000,
           "leaked-bytes": 640, "leaked-allocations": 15, "peak-heap": 1049216}
COSTS = ["leaked", "peak", "allocations", "temporary", "allocated"]
# The cache's 16 blocks come after 16 sleeps of 20 ms (flame.c): the run takes at least 0.32 s.
MIN_RUNTIME_US = 16 * 20000
# Resident memory of a process with libc and the shim mapped and a 1 MiB cache written: over 1 MiB.
MIN_RSS = 1 << 20
# The only URLs a self-contained page may name: XML namespaces, which are never fetched.
NAMESPACES = {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}
CHROMIUM = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--window-size=1400,2000"]
# Colours the page draws with (report_html.c's style) and the flame graphs' palette (greens to blues).
HEAP_FILL, RSS_LINE = (245, 185, 127), (43, 108, 176)


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
    """The page as a tree of Nodes (void elements and self-closed SVG elements have no children)."""
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
        if n.parent:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.text += data

    def by_id(self, i):
        return next((n for n in self.root.walk() if n.attrs.get("id") == i), None)

    def find(self, pred, under=None):
        return [n for n in (under or self.root).walk() if pred(n)]


def path_points(d):
    """(x, y) pairs of an SVG path made of M/L commands."""
    nums = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", d)]
    return list(zip(nums[0::2], nums[1::2]))


# ---- the page itself ----

def check_summary(tree, text_report, measured):
    for i, want in SUMMARY.items():
        n = tree.by_id(i)
        if env.check("summary has #" + i, n is not None):
            env.eq("summary %s" % i, int(n.attrs.get("data-value", -1)), want)
    # Runtime and peak RSS vary from run to run: bounds measured outside ctrack (`measured`: the
    # traced run's wall time and the largest RSS getrusage saw in it), and the page's text says
    # its own figure.
    n = tree.by_id("runtime")
    if env.check("summary has #runtime", n is not None):
        us = int(n.attrs.get("data-value", -1))
        env.check("runtime: at least the program's sleeps, at most the traced run's wall time",
                  MIN_RUNTIME_US <= us <= measured["wall_us"], "%d us, wall %d us" % (us, measured["wall_us"]))
        env.eq("runtime: shown in seconds", n.all_text().strip(), "%.3f s" % (us / 1e6))
    n = tree.by_id("peak-rss")
    if env.check("summary has #peak-rss", n is not None):
        rss = int(n.attrs.get("data-value", -1))
        env.check("peak RSS: over 1 MiB, at most the run's largest RSS (getrusage)",
                  MIN_RSS <= rss <= measured["maxrss"], "%d bytes, getrusage %d" % (rss, measured["maxrss"]))
        env.check("peak RSS: shown in bytes", n.all_text().startswith("%d bytes" % rss), n.all_text())
    # Each other figure is worded as in the text report, to the byte.
    for i, label in (("bytes-allocated", "bytes allocated"), ("peak-heap", "peak heap"),
                     ("frees", "frees"), ("temporary", "temporary allocations")):
        n = tree.by_id(i)
        line = "%s: %s\n" % (label, n.all_text() if n else "?")
        env.check("summary %s worded as the text report" % i, line in text_report, line)
    n = tree.by_id("leaked-bytes")
    env.check("leaked worded as the text report",
              n and "leaked: %s in 15 allocations\n" % n.all_text() in text_report, text_report[:800])


def check_chart(tree):
    chart = tree.by_id("chart")
    if not env.check("chart is an inline svg", chart is not None and chart.tag == "svg"):
        return
    heap = tree.find(lambda n: n.tag == "path" and "heap" in n.classes(), chart)
    rss = tree.find(lambda n: n.tag == "path" and "rss" in n.classes(), chart)
    env.check("chart: heap area drawn", heap and len(path_points(heap[0].attrs["d"])) >= 16)
    env.check("chart: RSS line drawn", rss and len(path_points(rss[0].attrs["d"])) >= 2)
    peak = tree.by_id("chart-peak")
    if not env.check("chart: peak marked", peak is not None):
        return
    env.eq("chart: peak bytes", int(peak.attrs["data-bytes"]), SUMMARY["peak-heap"])
    # The cache's 16th block comes after 15 sleeps of 20 ms.
    env.check("chart: peak after 0.3 s", int(peak.attrs["data-time-us"]) >= 300000, peak.attrs)
    dot = tree.find(lambda n: n.tag == "circle", peak)
    label = tree.find(lambda n: n.tag == "text", peak)
    env.check("chart: peak label names bytes",
              label and "1049216 bytes" in label[0].all_text(), label and label[0].all_text())
    if dot and heap:
        top = min(y for _, y in path_points(heap[0].attrs["d"]))
        env.check("chart: the peak dot is at the heap's highest point",
                  abs(float(dot[0].attrs["cy"]) - top) < 0.2, "%s vs %s" % (dot[0].attrs["cy"], top))
    texts = [n.all_text() for n in tree.find(lambda n: n.tag == "text", chart)]
    env.check("chart: axes labelled", "time (s)" in texts and "MiB" in texts, repr(texts[-6:]))


def check_flames(tree):
    panels = tree.find(lambda n: "flame" in n.classes())
    env.eq("one flame graph per cost", [p.attrs.get("data-cost") for p in panels], COSTS)
    for cost in COSTS:
        svg = tree.by_id("fg-" + cost)
        if not env.check("flame graph %s embedded" % cost,
                         svg is not None and svg.tag == "svg" and "ct-flame" in svg.classes()):
            continue
        frames = tree.find(lambda n: n.tag == "g" and "f" in n.classes(), svg)
        # at least "all", main and one function below it (stacks end at main)
        env.check("flame graph %s has frames" % cost, len(frames) >= 3, str(len(frames)))
    leaked = tree.by_id("fg-leaked")
    if leaked:
        names = {t.all_text().split("\n")[0] for t in tree.find(lambda n: n.tag == "title", leaked)}
        env.check("leaked flame graph: both leak paths",
                  {"xmalloc", "parse_entry", "intern_name", "load_config", "main"} <= names, repr(names))
        env.check("leaked flame graph: nothing of the freed cache", "build_cache" not in names)
    scripts = tree.find(lambda n: n.tag == "script")
    env.eq("flame script included once",
           sum("svg.ct-flame" in s.all_text() for s in scripts), 1)


def frames_of(entry):
    return [n for n in entry.walk() if n.tag == "li" and "data-function" in n.attrs]


def at(li, function, mark):
    return (li.attrs["data-function"] == function and li.attrs["data-line"] == str(LINES[mark])
            and os.path.basename(li.attrs["data-file"]) == os.path.basename(src))


def check_leaks(tree, what, want):
    """want: {(frame 0 function, mark, frame 1 function, mark): (bytes, allocations, frame 0 inlined)}"""
    leaks = tree.find(lambda n: n.tag == "details" and "leak" in n.classes())
    env.eq(what + ": leak entries", len(leaks), len(want))
    env.eq(what + ": count", tree.by_id("leak-list").attrs.get("data-count"), str(len(want)))
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
        env.check(what + ": %s backtrace reaches main" % f0,
                  any(li.attrs["data-function"] == "main" for li in frames_of(e)))


def check_self_contained(text):
    urls = set(re.findall(r"[a-z]+://[^\s\"'<>)]*", text, re.I))
    env.check("no URL but XML namespaces", urls <= NAMESPACES, repr(urls - NAMESPACES))
    env.check("nothing linked or imported", not re.search(r"<link|@import|<iframe|<img|<object", text, re.I))
    refs = re.findall(r"\b(?:src|href)\s*=\s*[\"']?([^\"' >]*)", text, re.I)
    env.check("every href is a fragment", all(r.startswith("#") for r in refs), repr(refs))
    env.check("every url() is a fragment",
              all(u.startswith("#") for u in re.findall(r"url\(\s*['\"]?([^)'\"]*)", text)))


def write_html(trace, name, *opts):
    path = os.path.join(env.scratch, name)
    r = env.run_analyze(trace, "--html=" + path, *opts)
    if not env.check("--html %s exits 0" % " ".join(opts), r.returncode == 0 and os.path.exists(path),
                     r.stderr.decode(errors="replace")[-500:]):
        return None, None
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return path, text


# ---- in a browser ----

def chromium(page, *opts):
    """Runs headless Chromium on page with a fresh profile; (stdout, stderr) as text."""
    with tempfile.TemporaryDirectory(dir=env.scratch) as profile:
        cmd = [*CHROMIUM, "--user-data-dir=" + profile, *opts, "file://" + page]
        r = subprocess.run(cmd, capture_output=True, timeout=90)
    return r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def png_pixels(path):
    """(width, height, rows of RGB tuples) of an 8-bit RGB or RGBA PNG, not interlaced."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, head = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            head = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = head
    assert depth == 8 and ctype in (2, 6) and not interlace, "unexpected PNG %r" % (head,)
    bpp = 3 if ctype == 2 else 4
    raw, stride, prev, rows = zlib.decompress(idat), w * bpp, bytearray(w * bpp), []
    for y in range(h):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        unfilter(kind, line, prev, bpp)
        rows.append([tuple(line[i:i + 3]) for i in range(0, stride, bpp)])
        prev = line
    return w, h, rows


def unfilter(kind, line, prev, bpp):
    """Undoes a PNG row filter in place (0 none, 1 sub, 2 up, 3 average, 4 Paeth)."""
    if kind == 0:
        return
    if kind == 2:
        for i in range(len(line)):
            line[i] = (line[i] + prev[i]) & 0xff
        return
    for i in range(len(line)):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        if kind == 1:
            line[i] = (line[i] + a) & 0xff
        elif kind == 3:
            line[i] = (line[i] + ((a + b) >> 1)) & 0xff
        elif kind == 4:
            c = prev[i - bpp] if i >= bpp else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xff
        else:
            raise ValueError("PNG filter %d" % kind)


def near(px, colour, tol=24):
    return all(abs(a - b) <= tol for a, b in zip(px, colour))


def flame_coloured(px):
    r, g, b = px
    return g >= 185 and r <= 120  # the palette's greens and blues, inlined ones too; no text colour


def count(rows, box, pred):
    x, y, w, h = box
    return sum(pred(px) for row in rows[y:y + h] for px in row[x:x + w])


def boxes(dom):
    """data-box="x y w h" of the chart and the first flame graph, written by the page's script."""
    tree = Tree(dom)
    out = {}
    for i in ("chart", "flame-leaked"):
        n = tree.by_id(i)
        if n is not None and n.attrs.get("data-box"):
            out[i] = [int(v) for v in n.attrs["data-box"].split()]
    return tree, out


def check_screenshot(png, where, box, js):
    try:
        w, h, rows = png_pixels(png)
    except (OSError, AssertionError, ValueError, zlib.error) as e:
        return env.check("%s: screenshot decodes" % where, False, str(e))
    env.eq("%s: screenshot size" % where, (w, h), (1400, 2000))
    chart, flame = box["chart"], box["flame-leaked"]
    env.check("%s: chart and flame graph in view" % where, chart[1] + chart[3] <= h and flame[1] + flame[3] <= h,
              repr(box))
    heap = count(rows, chart, lambda px: near(px, HEAP_FILL))
    rss = count(rows, chart, lambda px: near(px, RSS_LINE, 40))
    # The heap grows to 1 MiB of a 5 MiB axis over most of the run: thousands of pixels.
    env.check("%s: chart heap area drawn" % where, heap > 5000, "%d heap pixels" % heap)
    env.check("%s: chart RSS line drawn" % where, rss > 300, "%d RSS pixels" % rss)
    frames = count(rows, flame, flame_coloured)
    # At least the root, main's chain and both leak paths: 8 rows of frames over most of 1200 px.
    env.check("%s: leaked flame graph drawn" % where, frames > 8 * 12 * 800, "%d frame pixels" % frames)
    if js:
        env.check("%s: the other flame graphs are hidden (tabs)" % where,
                  count(rows, (flame[0], flame[1] + flame[3] + 60, flame[2], 300), flame_coloured) == 0)


def check_browser(page):
    dom, log = chromium(page, "--enable-logging=stderr", "--v=0", "--dump-dom")
    console = [line for line in log.splitlines() if "CONSOLE" in line]
    env.eq("chromium: no console message", console, [])
    tree, box = boxes(dom)
    html_node = tree.find(lambda n: n.tag == "html")
    attrs = html_node[0].attrs if html_node else {}
    env.eq("chromium: the page's script ran to its end", attrs.get("data-ready"), "1")
    env.eq("chromium: no uncaught error", attrs.get("data-errors"), None)
    live = [n for n in tree.find(lambda n: n.tag == "svg" and "ct-flame" in n.classes())
            if n.attrs.get("data-live")]
    env.eq("chromium: every flame graph made interactive", len(live), len(COSTS))
    if not env.check("chromium: layout of chart and flame graph known", len(box) == 2, repr(box)):
        return
    env.check("chromium: chart drawn 1200 px wide or so", 1000 <= box["chart"][2] <= 1240, repr(box))
    shot = os.path.join(env.scratch, "js.png")
    chromium(page, "--screenshot=" + shot)
    check_screenshot(shot, "JS on", box, True)

    # JavaScript off: the static parts stand alone (the chart is where it was, every graph shown).
    # This Chromium's headless mode writes neither DOM nor screenshot with --blink-settings=
    # scriptEnabled=false, so a copy of the page forbids its scripts with a Content-Security-Policy.
    off = os.path.join(env.scratch, "nojs.html")
    with open(page, encoding="utf-8") as f, open(off, "w", encoding="utf-8") as g:
        g.write(f.read().replace("<head>", "<head><meta http-equiv=\"Content-Security-Policy\" "
                                 "content=\"script-src 'none'\">", 1))
    dom, _ = chromium(off, "--dump-dom")
    env.check("JS off: the script did not run", 'data-ready="1"' not in dom and "<svg" in dom)
    shot = os.path.join(env.scratch, "nojs.png")
    chromium(off, "--screenshot=" + shot)
    check_screenshot(shot, "JS off", box, False)


# wide.c's comment: its figures, and the most frames report_html.c draws per flame graph (frames of
# one width at the cut may all go in: a little over).
WIDE = {"allocations": 16384 * 32, "frees": 16384 * 31, "leaked_bytes": 16384 * 8}
MAX_FRAMES, MAX_PAGE = 3000, 8 << 20


def check_large(wide):
    """A trace of over a million events and 16384 distinct stacks: the page stays small enough to
    open (bounded frames per graph, a downsampled chart) and loads in Chromium without an error."""
    r, rep = env.run_traced("wide", [wide])
    if not rep:
        return
    s = rep["summary"]
    env.eq("wide: figures of wide.c", {k: s[k] for k in WIDE}, WIDE)
    env.check("wide: over a million events", s["allocations"] + s["frees"] > 1000000)
    page, text = write_html(os.path.join(env.scratch, "wide", "trace.zst"), "wide.html")
    if not text:
        return
    env.check("wide: page under 8 MiB", len(text.encode()) < MAX_PAGE, "%d bytes" % len(text.encode()))
    tree = Tree(text)
    for svg in tree.find(lambda n: n.tag == "svg" and "ct-flame" in n.classes()):
        frames = [n for n in svg.walk() if n.tag == "g" and "f" in n.classes()]
        cost = svg.attrs.get("data-cost-name")
        env.check("wide %s: at most ~%d frames drawn" % (cost, MAX_FRAMES),
                  0 < len(frames) <= MAX_FRAMES * 1.1, "%d frames" % len(frames))
        env.check("wide %s: the graph says narrow frames were left out" % cost,
                  "narrow frames not drawn" in svg.all_text())
    points = [len(path_points(n.attrs.get("d", ""))) for n in tree.root.walk() if n.tag == "path"]
    env.check("wide: chart downsampled", points and max(points) <= 2 * 2048 + 8, repr(points[:8]))
    start = time.monotonic()
    dom, log = chromium(page, "--enable-logging=stderr", "--v=0", "--dump-dom")
    env.check("wide: chromium opens it within 30 s", time.monotonic() - start < 30)
    env.eq("wide: no console message", [line for line in log.splitlines() if "CONSOLE" in line], [])
    tag = re.search(r"<html[^>]*>", dom)
    env.check("wide: the page's script ran to its end, no error",
              tag and 'data-ready="1"' in tag.group(0) and "data-errors" not in tag.group(0),
              tag.group(0) if tag else dom[:200])


# The traced run is the first process this script starts, so getrusage's largest child RSS is its
# own (ctrack, the program under the shim), not the analyzer's.
trace = os.path.join(env.fresh_dir("traced"), "trace.zst")
start = time.monotonic()
r, _ = env.run_ctrack([prog], os.path.dirname(trace), opts=("-o", trace))
measured = {"wall_us": int((time.monotonic() - start) * 1e6),
            "maxrss": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024}
rep = env.report(trace) if os.path.exists(trace) else None
if rep:
    env.eq("exit status", r.returncode, 0)
    text_report = env.run_analyze(trace).stdout.decode(errors="replace")
    page, text = write_html(trace, "report.html")
    if text:
        tree = Tree(text)
        check_self_contained(text)
        check_summary(tree, text_report, measured)
        check_chart(tree)
        check_flames(tree)
        # Grouped by site (the default), both leaks go through xmalloc: one entry, shown by its
        # biggest member, parse_entry (10 x 48 of the 15 blocks).
        check_leaks(tree, "by site", {("xmalloc", "XMALLOC", "parse_entry", "PARSE"): (640, 15, 0)})
        check_browser(page)
    _, text = write_html(trace, "backtrace.html", "--group", "backtrace")
    if text:
        check_leaks(Tree(text), "by backtrace", {
            ("xmalloc", "XMALLOC", "parse_entry", "PARSE"): (10 * 48, 10, 0),
            ("xmalloc", "XMALLOC", "intern_name", "INTERN"): (5 * 32, 5, 0),
        })
        inl = [n for n in Tree(text).root.walk()
               if n.tag == "li" and n.attrs.get("data-function") == "intern_name"]
        env.check("by backtrace: intern_name marked inlined",
                  inl and inl[0].attrs["data-inlined"] == "1" and "[inlined]" in inl[0].all_text())
check_large(env.progs[2])
env.finish()
