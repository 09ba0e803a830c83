# SPDX-License-Identifier: MIT
# C++ names in flame graphs, the text report and JSON (issue 24, names): tests/progs/cxx_names.cpp allocates everything in
# Holder<std::vector<int>>::grow<long>(long); its box's label is the short form the program's comment
# gives, Holder<…>::grow<…>, and the box's title (on hover) keeps the whole demangled name, return
# type and parameters included. Its stacks are whole: libstdc++'s allocation in a constructor that
# the loader's entry code runs (_dl_start_user, which marks itself outermost in no way) is no stack
# cut short, and no note says backtraces end early.
import os
import sys
import xml.etree.ElementTree as ET

import ctrack_test as ct

env = ct.Env(sys.argv)
prog = env.progs[0]
trace = env.trace("names", [prog])
svg = os.path.join(env.scratch, "names.svg")
r = env.run_analyze(trace, "--flamegraph", svg, "--cost", "allocations")
env.eq("--flamegraph exits 0", r.returncode, 0)
NS = "{http://www.w3.org/2000/svg}"
boxes = []
if os.path.exists(svg):
    for g in ET.parse(svg).iter(NS + "g"):
        title, text = g.find(NS + "title"), g.find(NS + "text")
        if title is not None and text is not None and "::grow<long>(long)" in (title.text or ""):
            boxes.append((title.text.split("\n")[0], text.text))
env.eq("one box for grow", len(boxes), 1)
if boxes:
    title, label = boxes[0]
    env.eq("its label is the short name", label, "Holder<…>::grow<…>")
    env.check("its title keeps the whole name",
              title.startswith("std::vector<void*, std::allocator<void*> >& Holder<std::vector<int, "
                               "std::allocator<int> > >::grow<long>(long)"), title)
# The text report names the frame by its short name, and in full with --full-names; JSON keeps the
# full name under "function" and gives the short one under "short"; C names (main) are left alone.
FULL = ("std::vector<void*, std::allocator<void*> >& Holder<std::vector<int, std::allocator<int> > >"
        "::grow<long>(long)")
SHORT = "Holder<…>::grow<…>"
text = env.run_analyze(trace, "--top", "1").stdout.decode()
env.check("text: the short name", " %s at " % SHORT in text and FULL not in text, text[-1500:])
env.check("text: main as it is", " main at " in text, text[-1500:])
full = env.run_analyze(trace, "--top", "1", "--full-names").stdout.decode()
env.check("text --full-names: the whole name", " %s at " % FULL in full and SHORT not in full, full[-1500:])
rep = env.report(trace)
if rep:
    frames = [f for e in rep["allocations"] for f in e["frames"]]
    grow = [f for f in frames if f["function"] == FULL]
    env.check("JSON: function is the whole name", grow, repr(frames[:3]))
    env.eq("JSON: short is the short name", {f["short"] for f in grow}, {SHORT})
    env.eq("JSON: a C name's short is itself", {f["short"] for f in frames if f["function"] == "main"}, {"main"})
    env.eq("no note of backtraces that end early",
           [n["text"] for n in rep["notes"] if "end early" in n["text"]], [])
    cut = [[f["function"] for f in e["frames"]] for k in ("peak", "allocations", "temporary", "leaks")
           for e in rep[k] if e.get("truncated")]
    env.eq("no stack is marked truncated", cut, [])
env.finish()
