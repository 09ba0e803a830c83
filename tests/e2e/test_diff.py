# SPDX-License-Identifier: MIT
# --diff on two builds of tests/progs/flame.c (the new one adds remember's leak and two more
# parse_entry leaks): sites matched as --baseline matches them (the first shown frame's function and
# source file, never a line, a directory or an address) across distinct binaries, their status and
# changes, the order, text and JSON, a trace against itself, the reversed diff, and the differential
# flame graph. Then two checkouts of the same source in different directories, each built from its
# own build directory with a relative path (as meson builds): every site matched, nothing changed,
# frames named by absolute paths resolved against the compilation directory; a changed checkout
# (-DNEW_BUILD) and a saved JSON report as BASE give the same changes.
# Every figure comes from flame.c's header comment and its LINE markers.
import filecmp
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import ctrack_test as ct

env = ct.Env(sys.argv)
# flame.c's xmalloc, its one allocation function, is folded as a wrapper (test_sites.py checks how):
# the sites are its callers.
base_prog, new_prog, src = env.progs

LINES = ct.line_markers(src)

# flame.c's header: base and new totals.
BASE = {"allocations": 1031, "frees": 1016, "bytes_allocated": 1149216, "leaked_bytes": 640,
        "leaked_allocations": 15, "peak_heap_bytes": 1049216}
NEW = {"allocations": 1037, "frees": 1016, "bytes_allocated": 1150336, "leaked_bytes": 1760,
       "leaked_allocations": 21, "peak_heap_bytes": 1050336}
CACHE = 16 * 65536

# Each site: its frames (function, LINE mark, inlined) innermost first, then
# figure: (base, new) for leaked_bytes, leaked_allocations, peak_bytes, allocations.
SITES = {
    "remember": ([("remember", "REMEMBER", False),
                  ("main", "MAIN_REMEMBER", False)],
                 {"leaked_bytes": (0, 1024), "leaked_allocations": (0, 4), "peak_bytes": (0, 1024),
                  "allocations": (0, 4)}, "new"),
    "parse_entry": ([("parse_entry", "PARSE", False),
                     ("load_config", "LOAD_PARSE", False), ("main", "MAIN_LOAD", False)],
                    {"leaked_bytes": (480, 576), "leaked_allocations": (10, 12), "peak_bytes": (480, 576),
                     "allocations": (10, 12)}, "changed"),
    "intern_name": ([("intern_name", "INTERN", True),
                     ("load_config", "LOAD_INTERN", False), ("main", "MAIN_LOAD", False)],
                    {"leaked_bytes": (160, 160), "leaked_allocations": (5, 5), "peak_bytes": (160, 160),
                     "allocations": (5, 5)}, "same"),
    "build_cache": ([("build_cache", "CACHE", False),
                     ("main", "MAIN_CACHE", False)],
                    {"leaked_bytes": (0, 0), "leaked_allocations": (0, 0), "peak_bytes": (CACHE, CACHE),
                     "allocations": (16, 16)}, "same"),
    "scratch": ([("scratch", "SCRATCH", False), ("main", "MAIN_SCRATCH", False)],
                {"leaked_bytes": (0, 0), "leaked_allocations": (0, 0), "peak_bytes": (0, 0),
                 "allocations": (1000, 1000)}, "same"),
}


def at(frame, function, mark, inlined):
    return (ct.same_function(frame.get("function") or "", function)
            and os.path.basename(frame.get("file") or "") == os.path.basename(src)
            and frame.get("line") == LINES[mark] and frame.get("inlined") == inlined)


def is_site(entry, name):
    """The entry's frames begin with the site's frames (libc's start-up frames follow)."""
    want = SITES[name][0]
    got = entry.get("frames") or []
    return len(got) >= len(want) and all(at(f, *w) for f, w in zip(got, want))


def find(sites, name):
    hits = [s for s in sites if is_site(s, name)]
    env.eq("one %s site" % name, len(hits), 1)
    return hits[0] if hits else None


def diff(base, new, *opts):
    """ctrack-analyze OPTS --diff BASE NEW, which must exit 0."""
    r = env.run_analyze(new, *opts, "--diff", base)
    env.check("%s --diff %s %s exits 0" % (" ".join(opts), os.path.basename(os.path.dirname(base)),
                                           os.path.basename(os.path.dirname(new))),
              r.returncode == 0, r.stderr[-300:])
    return r


def diff_json(base, new):
    r = diff(base, new, "--json")
    try:
        return json.loads(r.stdout)
    except ValueError as e:
        env.check("--diff --json prints JSON", False, str(e))
        return None


def change(before, after):
    return {"base": before, "new": after, "change": after - before}


def check_sites(doc, reverse=False):
    """Every site of SITES with its figures and status (BASE and NEW swapped when reverse)."""
    what = "reversed: " if reverse else ""
    sites = doc["sites"]
    env.eq(what + "sites", len(sites), len(SITES))
    for name, (_, figures, status) in SITES.items():
        s = find(sites, name)
        if not s:
            continue
        if reverse:
            status = {"new": "gone", "gone": "new"}.get(status, status)
        env.eq(what + name + " status", s["status"], status)
        for key, (b, n) in figures.items():
            env.eq(what + name + " " + key, s[key], change(n, b) if reverse else change(b, n))
    env.check(what + "remember first, then parse_entry",
              len(sites) > 1 and is_site(sites[0], "remember") and is_site(sites[1], "parse_entry"))
    keys = [(abs(s["leaked_bytes"]["change"]), abs(s["peak_bytes"]["change"]), abs(s["allocations"]["change"]))
            for s in sites]
    env.eq(what + "largest change first", keys, sorted(keys, reverse=True))


# Two builds: distinct files, so frames can only match by symbols.
env.check("two distinct binaries", os.path.realpath(base_prog) != os.path.realpath(new_prog)
          and not filecmp.cmp(base_prog, new_prog, shallow=False))
base, new = env.trace("base", [base_prog]), env.trace("new", [new_prog])

# Addresses differ between the builds: build_cache is called from a later address in the new main.
# (One entry per backtrace: a site's entry lists only the frames its backtraces share.)
def report_bt(trace):
    r = env.run_analyze(trace, "--json", "--group", "backtrace")
    return json.loads(r.stdout) if r.returncode == 0 else None


rb, rn = report_bt(base), report_bt(new)
if rb and rn:
    def main_address(rep):
        cache = [e for e in rep["peak"] if is_site(e, "build_cache")]
        return cache[0]["frames"][1]["address"] if cache else None
    env.check("build_cache's caller address differs between the builds",
              main_address(rb) and main_address(rn) and main_address(rb) != main_address(rn),
              "%r %r" % (main_address(rb), main_address(rn)))

doc = diff_json(base, new)
if doc:
    for key, want in BASE.items():
        env.eq("base " + key, doc["base"][key], want)
    for key, want in NEW.items():
        env.eq("new " + key, doc["new"][key], want)
        env.eq("change " + key, doc["change"][key], want - BASE[key])
    env.eq("change: +1120 leaked in +6 allocations",
           (doc["change"]["leaked_bytes"], doc["change"]["leaked_allocations"]), (1120, 6))
    check_sites(doc)

# Text: the totals, one block per changed site (remember first), the unchanged ones counted.
text = diff(base, new).stdout.decode()
print(text)
env.check("text: leaked change",
          "change: leaked +1120 bytes (640 -> 1760) in +6 allocations (15 -> 21)" in text)
env.check("text: peak change", "peak heap +1120 bytes (1049216 -> 1050336)" in text)
env.check("text: site counts", "SITES: 1 new, 0 gone, 1 changed, 3 unchanged (not shown)" in text)
blocks = text.split("\n\n")[2:]
env.eq("text: two site blocks", len(blocks), 2)
if len(blocks) == 2:
    env.check("text: remember's block first",
              blocks[0].startswith("+1024 bytes leaked (0 -> 1024, 0 -> 4 allocations), new\n"), blocks[0])
    want = r"\n  #0 remember at \S*%s:%d\n" % (re.escape(os.path.basename(src)), LINES["REMEMBER"])
    env.check("text: remember's frame", re.search(want, blocks[0]), want)
    env.check("text: parse_entry's block",
              blocks[1].startswith("+96 bytes leaked (480 -> 576, 10 -> 12 allocations), changed\n"), blocks[1])
env.check("text: unchanged sites not shown", not re.search(r" (build_cache|scratch|intern_name) at ", text))

# A trace against itself: nothing changed.
same = diff_json(base, base)
if same:
    env.check("self: no change", all(v == 0 for v in same["change"].values()), repr(same["change"]))
    env.check("self: every site the same", same["sites"] and all(s["status"] == "same" for s in same["sites"]))
env.check("self: text", "SITES: 0 new, 0 gone, 0 changed, 4 unchanged" in diff(base, base).stdout.decode())

# NEW against BASE: remember is gone.
back = diff_json(new, base)
if back:
    check_sites(back, reverse=True)


# Two checkouts of the same code, each built in its own build directory from a relative path (meson's
# "../src/flame.c"): different absolute paths, different binaries and addresses.
def checkout(name, *flags):
    top = env.fresh_dir(name)
    os.makedirs(os.path.join(top, "src"))
    os.makedirs(os.path.join(top, "build"))
    shutil.copy(src, os.path.join(top, "src", "flame.c"))
    cmd = ["cc", "-O0", "-g", "-fno-omit-frame-pointer", "-fno-optimize-sibling-calls", "-fno-builtin",
           "-o", "flame", os.path.join("..", "src", "flame.c"), *flags]
    r = subprocess.run(cmd, cwd=os.path.join(top, "build"), capture_output=True, text=True)
    env.check("%s: built with %s" % (name, " ".join(cmd)), r.returncode == 0, r.stderr)
    return top, env.trace(name + "-trace", [os.path.join(top, "build", "flame")])


(one, trace_one), (two, trace_two) = checkout("checkout-one"), checkout("checkout-two")
(three, trace_three) = checkout("checkout-three", "-DNEW_BUILD")
# Relative paths resolved against the compilation directory: each checkout's own absolute path.
rep = env.report(trace_one)
if rep:
    files = {f["file"] for e in rep["leaks"] + rep["peak"] for f in e["frames"]
             if f["file"] and f["file"].endswith("flame.c")}
    env.eq("checkout: flame.c's frames name its absolute path", files,
           {os.path.join(os.path.realpath(one), "src", "flame.c")})
text = diff(trace_one, trace_two).stdout.decode()
env.check("checkouts: every site matched, none changed",
          "SITES: 0 new, 0 gone, 0 changed, 4 unchanged (not shown)" in text, text)
same = diff_json(trace_one, trace_two)
if same:
    env.eq("checkouts: JSON: 4 sites, all the same", [s["status"] for s in same["sites"]], ["same"] * 4)
    env.check("checkouts: growth 0", all(s[k]["change"] == 0 for s in same["sites"]
                                         for k in ("leaked_bytes", "peak_bytes", "allocations")))
# A changed checkout (the new build: remember's 4 x 256 bytes, 2 more parse_entry leaks of 48)
changed = diff_json(trace_one, trace_three)
if changed:
    check_sites(changed)
    env.eq("changed checkout: parse_entry grows by 2 x 48 bytes",
           [s["leaked_bytes"]["change"] for s in changed["sites"] if is_site(s, "parse_entry")], [96])
# A saved JSON report as BASE: the same matching, the same changes.
saved = os.path.join(env.scratch, "one.json")
r = env.run_analyze(trace_one, "--json")
with open(saved, "wb") as f:
    f.write(r.stdout)
from_json = diff_json(saved, trace_three)
if from_json:
    env.eq("JSON BASE: base totals", {k: from_json["base"][k] for k in BASE}, BASE)
    env.eq("JSON BASE: trace named", from_json["base"]["trace"], saved)
    check_sites(from_json)
text = diff(saved, trace_two).stdout.decode()
env.check("JSON BASE against the other checkout: every site matched, none changed",
          "SITES: 0 new, 0 gone, 0 changed, 4 unchanged (not shown)" in text, text)
r = env.run_analyze(trace_two, "--diff", saved, "--flamegraph", os.path.join(env.scratch, "no.svg"))
env.check("JSON BASE: no flame graph (no stacks), said", r.returncode != 0 and b"holds no stacks" in r.stderr,
          r.stderr)

# The differential flame graph: remember's frame grew (red, positive delta); reversed, it shrank.
def frame_name(el):
    names = [el.get("data-name") or "", el.get("data-function") or ""]
    for child in el.iter():
        tag = child.tag.rsplit("}", 1)[-1]
        if tag in ("title", "text") and child.text:
            names.append(child.text.strip())
    return names


def rgb(fill):
    m = re.match(r"#([0-9a-fA-F]{2})([0-9a-fA-F]{2})([0-9a-fA-F]{2})$", fill or "")
    if m:
        return tuple(int(x, 16) for x in m.groups())
    m = re.match(r"rgb\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)", fill or "")
    return tuple(int(x) for x in m.groups()) if m else None


def fill_of(el):
    for child in el.iter():
        colour = child.get("fill") or (re.search(r"fill:\s*([^;]+)", child.get("style") or "") or [None, None])[1]
        if colour and rgb(colour):
            return rgb(colour)
    return None


def remember_frame(svg_path, what):
    try:
        root = ET.parse(svg_path).getroot()
    except (ET.ParseError, OSError) as e:
        env.check(what + ": SVG parses", False, str(e))
        return None, None
    hits = [el for el in root.iter() if el.get("data-delta") is not None
            and any(n.startswith("remember") for n in frame_name(el))]
    if not env.eq(what + ": one remember frame with data-delta", len(hits), 1):
        return None, None
    return float(hits[0].get("data-delta")), fill_of(hits[0])


for what, args, grows in (("growth", (base, new), True), ("shrinkage", (new, base), False)):
    svg = os.path.join(env.scratch, what + ".svg")
    diff(*args, "--flamegraph", svg)
    delta, colour = remember_frame(svg, what)
    if delta is None:
        continue
    env.eq(what + ": remember's data-delta", delta, 1024 if grows else -1024)
    ok = colour and (colour[0] > colour[2] if grows else colour[2] > colour[0])
    env.check(what + ": remember is " + ("reddish" if grows else "bluish"), ok, repr(colour))

# Two checkouts' flame graph: every frame matched (file names, not paths), so no frame changed.
svg = os.path.join(env.scratch, "checkouts.svg")
diff(trace_one, trace_two, "--flamegraph", svg, "--cost", "allocations")
try:
    deltas = [float(el.get("data-delta")) for el in ET.parse(svg).getroot().iter()
              if el.get("data-delta") is not None]
except (ET.ParseError, OSError) as e:
    deltas = [str(e)]
env.check("checkouts' flame graph: frames drawn, none changed", deltas and set(deltas) == {0.0}, deltas[:20])
env.finish()
