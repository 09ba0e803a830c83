# SPDX-License-Identifier: MIT
# The SVG flame graph and folded stacks (tests/progs/flame.c): the SVG parsed as XML, every frame as wide as
# its self cost plus its children's, the root's cost the program's stated figure for each --cost; --reverse
# puts the allocation functions under the root; the diff graph of two builds colours the new site red.
import os
import re
import sys
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


def flamegraph(what, trace, *opts):
    """ctrack-analyze OPTS --flamegraph F: (svg root element, frames by id), or (None, {})."""
    path = os.path.join(env.scratch, what.replace(" ", "_") + ".svg")
    r = env.run_analyze(trace, *opts, "--flamegraph", path)
    if not env.check(what + ": exits 0", r.returncode == 0, r.stderr[-300:]):
        return None, {}
    try:
        svg = ET.parse(path).getroot()
    except ET.ParseError as e:
        env.check(what + ": well-formed XML", False, str(e))
        return None, {}
    frames = {}
    for g in svg.iter(SVG + "g"):
        if "f" in g.get("class", "").split():
            f = Frame(g)
            frames[f.id] = f
    for f in frames.values():
        if f.parent is not None:
            frames[f.parent].children.append(f)
    env.check(what + ": drawn frames", "0" in frames, "no root frame")
    return svg, frames


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

# --reverse: an icicle, allocation functions right under the root.
for cost, want in (("leaked", ["xmalloc"]), ("allocated", ["scratch", "xmalloc"])):
    svg, frames = flamegraph("reverse " + cost, base, "--reverse", "--cost", cost)
    if frames:
        env.eq("reverse %s: root cost" % cost, frames["0"].cost, TOTALS[cost])
        env.eq("reverse %s: allocation sites under the root" % cost,
               sorted(c.name for c in frames["0"].children), want)
        env.eq("reverse %s: marked reversed" % cost, svg.get("data-reversed"), "1")
        check_shape("reverse " + cost, frames, reversed_=True)

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
