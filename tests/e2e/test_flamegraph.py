# SPDX-License-Identifier: MIT
# The SVG flame graph and folded stacks (tests/progs/flame.c): the SVG parsed as XML, every frame as wide as
# its self cost plus its children's, the root's cost the program's stated figure for each --cost; frames
# merged by function (one main), per call line with --by-line (a main per line of main); --reverse puts the
# allocation functions under the root; --icicle draws roots at the top; --hide-frames drops frames, totals
# kept; the graph's script in headless Chromium (search: the matched frames and their share; turning the
# graph over); the diff graph of two builds colours the new site red.
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import ctrack_test as ct

env = ct.Env(sys.argv)
# flame.c's tree has xmalloc as its one allocation function, a frame of its own in every figure this
# test checks: it is kept (test_sites.py checks how wrappers fold).
env.analyze_opts = ["--no-auto-fold"]
prog, prog_new, src = env.progs

LINES = ct.line_markers(src)

# Totals of the base build, from flame.c's header comment.
TOTALS = {"leaked": 640, "peak": 1049216, "allocations": 1031, "temporary": 1000, "allocated": 1149216}
# Per function, summed over its frames: (cost, function, figure), from the same comment.
SITES = [
    ("leaked", "parse_entry", 10 * 48), ("leaked", "intern_name", 5 * 32),
    ("peak", "build_cache", 16 * 65536),
    ("allocations", "scratch", 1000), ("allocations", "build_cache", 16),
    ("temporary", "scratch", 1000), ("allocated", "scratch", 1000 * 100),
]
SVG = "{http://www.w3.org/2000/svg}"


class Frame:
    def __init__(self, g):
        self.id, self.parent = g.get("data-id"), g.get("data-parent")
        self.cost, self.self = int(g.get("data-cost")), int(g.get("data-self"))
        self.delta = int(g.get("data-delta", "0"))
        self.classes = g.get("class").split()
        self.title = g.find(SVG + "title").text
        self.name = self.title.split("\n")[0]
        rect = g.find(SVG + "rect")
        self.x, self.y, self.w = (float(rect.get(a)) for a in ("x", "y", "width"))
        self.fill = tuple(int(v) for v in re.findall(r"\d+", rect.get("fill")))
        self.label = g.find(SVG + "text").text or ""
        self.children = []


def svg_path(what):
    return os.path.join(env.scratch, re.sub(r"[^\w.-]", "_", what) + ".svg")


def flamegraph(what, trace, *opts):
    """ctrack-analyze OPTS --flamegraph F: (svg root element, frames by id), or (None, {})."""
    path = svg_path(what)
    r = env.run_analyze(trace, *opts, "--flamegraph", path)
    if not env.check(what + ": exits 0", r.returncode == 0, r.stderr[-300:]):
        return None, {}
    try:
        svg = ET.parse(path).getroot()
    except ET.ParseError as e:
        env.check(what + ": well-formed XML", False, str(e))
        return None, {}
    return svg, frames_of(what, svg)


def frames_of(what, svg):
    """The frames of an SVG document by id, each knowing its children."""
    frames = {}
    for g in svg.iter(SVG + "g"):
        if "f" in g.get("class", "").split():
            f = Frame(g)
            frames[f.id] = f
    for f in frames.values():
        if f.parent is not None:
            frames[f.parent].children.append(f)
    env.check(what + ": drawn frames", "0" in frames, "no root frame")
    return frames


def named(frames, name):
    return [f for f in frames.values() if ct.same_function(f.name, name)]


def check_shape(what, frames, reversed_=False):
    """Widths add up, are proportional to cost, children sit inside their parent one level further out."""
    root = frames["0"]
    scale = root.w / root.cost if root.cost else 0
    bad_sum = [f.name for f in frames.values() if f.cost != f.self + sum(c.cost for c in f.children)]
    env.eq(what + ": every frame's cost = self + children's", bad_sum, [])
    bad_w = [f.name for f in frames.values() if abs(f.w - f.cost * scale) > 0.006]
    env.eq(what + ": rect widths proportional to cost", bad_w, [])
    bad_place = [c.name for f in frames.values() for c in f.children
                 if c.x < f.x - 0.006 or c.x + c.w > f.x + f.w + 0.02
                 or not (c.y > f.y if reversed_ else c.y < f.y)]
    env.eq(what + ": children within the parent, %s it" % ("below" if reversed_ else "above"), bad_place, [])
    beyond = [f.name for f in frames.values() if (f.y < root.y if reversed_ else f.y > root.y)]
    env.eq(what + ": nothing %s the root" % ("above" if reversed_ else "below"), beyond, [])
    bad_label = [f.label for f in frames.values() if f.label not in ("", f.name)
                 and not (f.label.endswith("..") and f.name.startswith(f.label[:-2]))]
    env.eq(what + ": labels are the name or its cut", bad_label, [])


base, new = env.trace("base", [prog]), env.trace("new", [prog_new])

for cost, total in TOTALS.items():
    svg, frames = flamegraph(cost, base, "--cost", cost)
    if not frames:
        continue
    env.eq(cost + ": root cost is the stated total", frames["0"].cost, total)
    env.eq(cost + ": the root spans the width", frames["0"].w, float(svg.get("width")) - 2 * 10)
    check_shape(cost, frames)
    for c, function, want in SITES:
        if c == cost:
            env.eq("%s: %s's frames" % (cost, function), sum(f.cost for f in named(frames, function)), want)
    script = svg.find(SVG + "script")
    env.check(cost + ": the script is embedded", script is not None and "svg.ct-flame" in (script.text or ""))
    env.check(cost + ": the title names the cost", cost in svg.get("data-cost-name"))

# Leaked bytes in detail: tooltips in words, the inlined frame marked, at its own line.
_, frames = flamegraph("leaked detail", base, "--cost", "leaked")
parse = named(frames, "parse_entry")
if env.eq("parse_entry: one frame", len(parse), 1):
    env.check("parse_entry: tooltip in words", "480 bytes leaked in 10 allocations" in parse[0].title,
              parse[0].title)
    env.check("parse_entry: at its line", "flame.c:%d" % LINES["PARSE"] in parse[0].title, parse[0].title)
intern = named(frames, "intern_name")
if env.eq("intern_name: one frame", len(intern), 1):
    f = intern[0]
    env.check("intern_name: marked inlined", "inlined" in f.classes and "(inlined)" in f.title, f.title)
    env.check("intern_name: at its own line", "flame.c:%d" % LINES["INTERN"] in f.title, f.title)
    env.eq("intern_name: called by load_config", frames[f.parent].name, "load_config")
    env.eq("intern_name: calls xmalloc", [c.name for c in f.children], ["xmalloc"])
    env.check("a non-inlined frame is not marked", "inlined" not in parse[0].classes if parse else False)

# --reverse: allocation functions right under the root, drawn as a flame (roots at the bottom, as
# flamegraph.pl's --reverse); --icicle draws it top-down.
for cost, want in (("leaked", ["xmalloc"]), ("allocated", ["scratch", "xmalloc"])):
    for icicle in ((), ("--icicle",)):
        what = "reverse %s%s" % (cost, " icicle" if icicle else "")
        svg, frames = flamegraph(what, base, "--reverse", "--cost", cost, *icicle)
        if frames:
            env.eq(what + ": root cost", frames["0"].cost, TOTALS[cost])
            env.eq(what + ": allocation sites under the root", sorted(c.name for c in frames["0"].children), want)
            env.eq(what + ": marked reversed", svg.get("data-reversed"), "1")
            env.eq(what + ": marked icicle or not", svg.get("data-icicle"), "1" if icicle else "0")
            check_shape(what, frames, reversed_=bool(icicle))

# Merged by function by default: main calls load_config, build_cache and scratch from three lines, one
# main frame for all; --by-line: a main per line with that line's figures (flame.c's header: load_config
# makes 10 + 5 allocations, build_cache 16, scratch 1000).
PER_LINE = {"MAIN_LOAD": 15, "MAIN_CACHE": 16, "MAIN_SCRATCH": 1000}
svg, frames = flamegraph("by function", base, "--cost", "allocations")
if frames:
    mains = named(frames, "main")
    if env.eq("by function: one main frame", len(mains), 1):
        env.eq("by function: main under the root", mains[0].parent, "0")
        env.eq("by function: main holds every allocation", mains[0].cost, TOTALS["allocations"])
        env.check("by function: main's tooltip says its lines are merged", "flame.c (several lines)" in mains[0].title,
                  mains[0].title)
        env.eq("by function: main's callees, once each", sorted(c.name for c in mains[0].children),
               ["build_cache", "load_config", "scratch"])
    loads = named(frames, "load_config")
    if env.eq("by function: one load_config frame (two call lines merged)", len(loads), 1):
        env.eq("by function: load_config's allocations", loads[0].cost, 15)
    check_shape("by function", frames)
svg, frames = flamegraph("by line", base, "--cost", "allocations", "--by-line")
if frames:
    mains = named(frames, "main")
    env.eq("by line: a main frame per call line, each under the root", sorted(f.parent for f in mains), ["0"] * 3)
    got = {}
    for f in mains:
        m = re.search(r"flame\.c:(\d+)", f.title)
        got[int(m.group(1)) if m else f.title] = f.cost
    env.eq("by line: each main's allocations, at its line", got, {LINES[k]: n for k, n in PER_LINE.items()})
    env.eq("by line: load_config once per call line", sorted(f.cost for f in named(frames, "load_config")), [5, 10])
    check_shape("by line", frames)

# --icicle: the root at the top, children below their parent.
svg, frames = flamegraph("icicle", base, "--cost", "leaked", "--icicle")
if frames:
    env.eq("icicle: marked", svg.get("data-icicle"), "1")
    env.eq("icicle: the root on the first row, under the title band", frames["0"].y, 40.0)
    check_shape("icicle", frames, reversed_=True)
    env.eq("icicle: the button turns it back into a flame", [t.text for t in svg.iter(SVG + "text")
                                                              if t.get("class") == "orient"], ["Flame"])

# --hide-frames: matching frames leave the tree, their callees attach to their caller, totals stay.
svg, frames = flamegraph("hide xmalloc", base, "--cost", "leaked", "--hide-frames", "^xmalloc$")
if frames:
    env.eq("hide xmalloc: root cost unchanged", frames["0"].cost, TOTALS["leaked"])
    env.eq("hide xmalloc: no xmalloc frame", named(frames, "xmalloc"), [])
    env.eq("hide xmalloc: parse_entry's and intern_name's own leaks",
           sorted((f.name, f.self) for f in frames.values() if f.self), [("intern_name", 160), ("parse_entry", 480)])
    check_shape("hide xmalloc", frames)
svg, frames = flamegraph("hide callers", base, "--cost", "leaked", "--hide-frames", "^main$",
                         "--hide-frames", "load_")
if frames:
    env.eq("hide callers: the leaking functions under the root",
           sorted((c.name, c.cost) for c in frames["0"].children), [("intern_name", 160), ("parse_entry", 480)])
    check_shape("hide callers", frames)
for cost, want in (("leaked", [("xmalloc", 640)]), ("allocations", [("scratch", 1000), ("xmalloc", 31)])):
    svg, frames = flamegraph("hide all " + cost, base, "--cost", cost, "--hide-frames", ".")
    if frames:
        env.eq("hide all %s: each stack keeps its innermost frame" % cost,
               sorted((c.name, c.cost, len(c.children)) for c in frames["0"].children), [w + (0,) for w in want])
r = env.run_analyze(base, "--hide-frames", "(", "--flamegraph", svg_path("bad pattern"))
env.check("--hide-frames with a bad pattern: a usage error naming it",
          r.returncode == 2 and b"(" in r.stderr, (r.returncode, r.stderr[-300:]))
r = env.run_analyze(base, "--cost", "leaked", "--hide-frames", "^xmalloc$", "--folded", "-")
if env.check("hide xmalloc folded: exits 0", r.returncode == 0, r.stderr[-300:]):
    env.eq("hide xmalloc folded: the stacks without xmalloc", sorted(
        (re.sub(r"_\[i\]", "", s.split("main;", 1)[-1]), int(n))
        for s, n in (l.rsplit(" ", 1) for l in r.stdout.decode().splitlines())),
        [("load_config;intern_name", 160), ("load_config;parse_entry", 480)])


# The script in headless Chromium: flamegraph.pl's URL parameter s searches on load, icicle turns.
def in_chromium(what, path, query):
    """The SVG document as Chromium's script left it: (svg, frames), or (None, {})."""
    with tempfile.TemporaryDirectory(dir=env.scratch) as profile:
        cmd = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--disable-background-networking", "--enable-logging=stderr", "--v=0",
               "--user-data-dir=" + profile, "--dump-dom", "file://" + path + "?" + query]
        r = subprocess.run(cmd, capture_output=True, timeout=90)
    errors = [l for l in r.stderr.decode(errors="replace").splitlines() if "CONSOLE" in l or "Uncaught" in l]
    env.eq(what + ": no script error", errors, [])
    try:
        svg = ET.fromstring(r.stdout)
    except ET.ParseError as e:
        env.check(what + ": Chromium's DOM", False, str(e) + repr(r.stdout[:200]))
        return None, {}
    env.eq(what + ": the script ran", svg.get("data-live"), "1")
    return svg, frames_of(what, svg)


def matched(svg):
    return "".join(t.text or "" for t in svg.iter(SVG + "text") if t.get("class") == "matched").strip()


def hits(svg):
    return sorted(g.get("data-id") for g in svg.iter(SVG + "g") if g.get("data-match") == "1")


# Shares from flame.c's figures: parse_entry leaks 480 of 640 bytes; xmalloc makes 10 + 5 + 16 of 1031
# allocations; main holds all 640 leaked bytes (xmalloc inside it is not counted twice).
SEARCHES = [("leaked", "parse_entry", "Matched: 75.0% (480 bytes)"),
            ("allocations", "xmalloc", "Matched: 3.0% (31 allocations)"),
            ("leaked", "^(main|xmalloc)$", "Matched: 100.0% (640 bytes)")]
for cost, term, want in SEARCHES:
    what = "search %s %s" % (cost, term)
    svg, frames = flamegraph(what, base, "--cost", cost)
    if not frames:
        continue
    expect = sorted(f.id for f in frames.values() if re.search(term, f.name))
    svg, live = in_chromium(what, svg_path(what), "s=" + term.replace("|", "%7C"))
    if svg is None:
        continue
    env.eq(what + ": the matched share", matched(svg), want)
    env.eq(what + ": the matching frames highlighted", hits(svg), expect)
    env.check(what + ": in magenta", all(live[i].fill == (230, 0, 230) for i in expect), "")
    env.eq(what + ": the button now resets", [t.text for t in svg.iter(SVG + "text") if t.get("class") == "search"],
           ["Reset search"])
for made, query, icicle in (("--icicle", "icicle=0", "0"), (None, "icicle=1", "1")):
    what = "turned %s" % query
    svg, frames = flamegraph(what, base, "--cost", "leaked", *([made] if made else []))
    if not frames:
        continue
    svg, live = in_chromium(what, svg_path(what), query)
    if not live:
        continue
    env.eq(what + ": marked", svg.get("data-icicle"), icicle)
    env.eq(what + ": the frames kept their place across", {i: (f.x, f.w) for i, f in live.items()},
           {i: (f.x, f.w) for i, f in frames.items()})
    check_shape(what, live, reversed_=icicle == "1")
    env.eq(what + ": the root at the top, or at the bottom", live["0"].y,
           40.0 if icicle == "1" else max(f.y for f in live.values()))

# --folded: the same totals, root first.
for cost, total in TOTALS.items():
    r = env.run_analyze(base, "--cost", cost, "--folded", "-")
    if not env.check("folded %s: exits 0" % cost, r.returncode == 0, r.stderr[-300:]):
        continue
    lines = [l.rsplit(" ", 1) for l in r.stdout.decode().splitlines()]
    env.eq("folded %s: lines sum to the total" % cost, sum(int(n) for _, n in lines), total)
    if cost == "leaked":
        stacks = {s.split("main;", 1)[-1]: int(n) for s, n in lines}  # stacks start at main
        env.eq("folded leaked: main;load_config;parse_entry;xmalloc", stacks.get("load_config;parse_entry;xmalloc"),
               480)
        env.eq("folded leaked: the inlined intern_name has its own frame",
               [n for s, n in stacks.items() if re.fullmatch(r"load_config;intern_name\S*;xmalloc", s)], [160])

# --diff: two builds that differ by one leak site (remember, 4 x 256 bytes) and 2 more parse_entry leaks.
svg, frames = flamegraph("diff", new, "--diff", base)  # ctrack-analyze --diff BASE --flamegraph F NEW
if frames:
    root = frames["0"]
    env.eq("diff: root grew by the new build's extra leaks", root.delta, 1760 - 640)
    env.eq("diff: root width covers both (nothing shrank: the new total)", root.cost, 1760)
    check_shape("diff", frames)
    remember = named(frames, "remember")
    if env.eq("diff: one remember frame", len(remember), 1):
        f = remember[0]
        env.eq("diff: remember grew by 4 x 256", f.delta, 1024)
        env.check("diff: remember is red", f.fill[0] == 255 and f.fill[1] == f.fill[2] < 128, repr(f.fill))
        env.check("diff: remember is new", "(new)" in f.title, f.title)
    parse = named(frames, "parse_entry")
    if env.eq("diff: one parse_entry frame", len(parse), 1):
        env.eq("diff: parse_entry grew by 2 x 48", parse[0].delta, 96)
        env.check("diff: parse_entry lighter red", parse[0].fill[0] == 255 and
                  remember and remember[0].fill[1] < parse[0].fill[1] < 255, repr(parse[0].fill))
    intern = named(frames, "intern_name")
    if env.eq("diff: one intern_name frame", len(intern), 1):
        env.eq("diff: intern_name unchanged", intern[0].delta, 0)
        env.check("diff: unchanged is grey", len(set(intern[0].fill)) == 1, repr(intern[0].fill))
env.finish()
