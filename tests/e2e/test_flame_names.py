# SPDX-License-Identifier: MIT
# Names in the SVG flame graph (issue 24, flame graphs): tests/progs/cxx_names.cpp makes its 1000
# allocations in Holder<std::vector<int>>::grow<long>(long), called by main. Its box is labelled with the
# short name the program's comment gives and carries it for the script (data-label); --full-names labels
# it in full; --hide-frames matches the full name (grow's allocations become main's own); the script
# in headless Chromium finds the box by its short name too, and the share it reports holds grow's 1000.
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import ctrack_test as ct

env = ct.Env(sys.argv)
prog = env.progs[0]
NS = "{http://www.w3.org/2000/svg}"
FULL = ("std::vector<void*, std::allocator<void*> >& Holder<std::vector<int, std::allocator<int> > >"
        "::grow<long>(long)")
SHORT = "Holder<…>::grow<…>"
GROWS = 1000  # the program's comment: 1000 blocks of 64 bytes from grow


def boxes(root):
    """(title's first line, label, data-label, data-self, data-cost) of each frame."""
    return [(g.find(NS + "title").text.split("\n")[0], g.find(NS + "text").text or "", g.get("data-label"),
             int(g.get("data-self")), int(g.get("data-cost")))
            for g in root.iter(NS + "g") if "f" in g.get("class", "").split()]


def flamegraph(what, *opts):
    path = os.path.join(env.scratch, what + ".svg")
    r = env.run_analyze(trace, "--cost", "allocations", *opts, "--flamegraph", path)
    if not env.check(what + ": exits 0", r.returncode == 0, r.stderr[-300:]):
        return path, []
    return path, boxes(ET.parse(path).getroot())


trace = env.trace("names", [prog])
path, fr = flamegraph("short")
grow = [b for b in fr if b[0] == FULL]
if env.eq("short: one box for grow, titled with the full name", len(grow), 1):
    env.eq("short: labelled with the short name, which the script keeps", grow[0][1:4], (SHORT, SHORT, GROWS))
env.eq("short: a C name has no data-label", [b[2] for b in fr if b[0] == "main"], [None])

_, fr = flamegraph("full", "--full-names")
grow = [b for b in fr if b[0] == FULL]
if env.eq("full: one box for grow", len(grow), 1):
    env.eq("full: labelled with the whole name", grow[0][1:4], (FULL, None, GROWS))

main_self = [b[3] for b in boxes(ET.parse(path).getroot()) if b[0] == "main"]  # its vector's reserve
_, fr = flamegraph("hide", "--hide-frames", r"Holder<.*>::grow<long>\(long\)$")
env.eq("hide: no grow box", [b for b in fr if "::grow<" in b[0]], [])
env.eq("hide: grow's allocations become main's own", [b[3] for b in fr if b[0] == "main"],
       [n + GROWS for n in main_self])
env.eq("hide: the total unchanged", [b[4] for b in fr if b[0] == "all"],
       [b[4] for b in boxes(ET.parse(path).getroot()) if b[0] == "all"])

# The script: ?s= searches on load; the short name's "<…>" is in the label only.
with tempfile.TemporaryDirectory(dir=env.scratch) as profile:
    cmd = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-background-networking", "--enable-logging=stderr", "--v=0", "--user-data-dir=" + profile,
           "--dump-dom", "file://" + path + "?s=" + "%5EHolder%3C%E2%80%A6%3E%3A%3Agrow"]  # ^Holder<…>::grow
    r = subprocess.run(cmd, capture_output=True, timeout=90)
env.eq("chromium: no script error",
       [l for l in r.stderr.decode(errors="replace").splitlines() if "CONSOLE" in l or "Uncaught" in l], [])
try:
    live = ET.fromstring(r.stdout)
except ET.ParseError as e:
    live = None
    env.check("chromium: the DOM", False, str(e))
if live is not None:
    hits = [g.find(NS + "title").text.split("\n")[0] for g in live.iter(NS + "g") if g.get("data-match") == "1"]
    env.eq("chromium: the short name finds grow's box", hits, [FULL])
    said = "".join(t.text or "" for t in live.iter(NS + "text") if t.get("class") == "matched")
    total = [b[4] for b in boxes(live) if b[0] == "all"]
    m = re.fullmatch(r"Matched: ([\d.]+)% \((\d+) allocations\)", said.strip())
    env.check("chromium: the matched share is grow's 1000 allocations",
              m and int(m.group(2)) == GROWS and total and abs(float(m.group(1)) - 100 * GROWS / total[0]) < 0.051,
              said)
env.finish()
