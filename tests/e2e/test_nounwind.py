# SPDX-License-Identifier: MIT
# Backtraces end complete only at the outermost frame (tests/progs/nounwind.c: a leak from main and
# one from a thread, through middle and leaf, built here three ways):
#  - bare (-fomit-frame-pointer -fno-asynchronous-unwind-tables, leaf's RBP its own): the walk cannot
#    step past leaf, so each backtrace is leaf alone, marked truncated, and an info NOTE counts the
#    backtraces that end early (at least these two);
#  - cfi (unwind tables, no frame pointers) and fp (frame pointers, no unwind tables): whole
#    backtraces, at the LINE markers, down to _start and to the thread's clone (--full-stacks), not
#    truncated, and no such NOTE.
# Expected frames: the source's LINE markers; readelf says which build has unwind tables.
import json
import os
import re
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
src = env.progs[0]
FILE = os.path.basename(src)
LINES = ct.line_markers(src)
END_EARLY = re.compile(r"(\d+) backtraces end early")
BUILDS = {
    "bare": ["-fomit-frame-pointer", "-fno-asynchronous-unwind-tables", "-DJUNK_RBP"],
    "cfi": ["-fomit-frame-pointer", "-DJUNK_RBP"],
    "fp": ["-fno-omit-frame-pointer", "-fno-asynchronous-unwind-tables"],
}


def build(name):
    exe = os.path.join(env.fresh_dir("build-" + name), "nounwind")
    cmd = ["gcc", "-O1", "-g", *BUILDS[name], "-o", exe, src, "-pthread"]
    print("compile:", " ".join(cmd))
    r = subprocess.run(cmd, capture_output=True, text=True)
    return exe if env.check(name + ": compiled", r.returncode == 0, r.stderr) else None


def fde_covers(exe, function):
    """Whether the .eh_frame of exe has an FDE covering function (nm's address; readelf). The
    .debug_frame that -g writes without unwind tables is no unwind table: nothing loads it."""
    nm = subprocess.run(["nm", exe], capture_output=True, text=True).stdout
    m = re.search(r"^([0-9a-f]+) T %s$" % function, nm, re.M)
    dump = subprocess.run(["readelf", "--debug-dump=frames", exe], capture_output=True, text=True).stdout
    frames = "".join(re.findall(r"^Contents of the \.eh_frame section:\n(.*?)(?=^Contents of|\Z)", dump,
                                re.M | re.S))
    address = int(m.group(1), 16) if m else -1
    return any(int(lo, 16) <= address < int(hi, 16)
               for lo, hi in re.findall(r"FDE cie=\w+ pc=([0-9a-f]+)\.\.([0-9a-f]+)", frames))


def shown(frames):
    return [(f["function"], os.path.basename(f["file"] or ""), f["line"]) for f in frames]


def end_early(rep):
    return [(int(m.group(1)), n["level"]) for n in rep["notes"] for m in [END_EARLY.match(n["text"])] if m]


for name in BUILDS:
    exe = build(name)
    if not exe:
        continue
    env.eq(name + ": premise, leaf's unwind table", fde_covers(exe, "leaf"), name == "cfi")
    d = env.fresh_dir(name)
    trace = os.path.join(d, "trace.zst")
    r, _ = env.run_ctrack([exe], d, opts=("-o", trace))
    env.eq(name + ": exit status", r.returncode, 0)
    a = env.run_analyze(trace, "--json", "--full-stacks", "--group", "backtrace")
    if not env.eq(name + ": analyzed", a.returncode, 0):
        continue
    rep = json.loads(a.stdout)
    leaks = sorted((e for e in rep["leaks"] if e["bytes"] in (100, 200) or ct.frame0(e) == "leaf"),
                   key=lambda e: e["bytes"])
    if name == "bare":
        env.eq("bare: the leaks, leaf alone, truncated",
               [(e["bytes"], e["allocations"], shown(e["frames"]), e["truncated"]) for e in leaks],
               [(300, 2, [("leaf", FILE, LINES["leaf"])], True)])
        notes = end_early(rep)
        env.check("bare: an info NOTE counts the backtraces that end early (at least 2)",
                  len(notes) == 1 and notes[0][0] >= 2 and notes[0][1] == "info", repr(rep["notes"]))
        continue
    # The outermost frames: _start, and glibc's clone3 (__clone3 in its debug info) or clone.
    for size, caller, outermost in ((100, "main", ("_start",)), (200, "thread_main", ("clone3", "clone"))):
        e = [e for e in leaks if e["bytes"] == size]
        frames = e[0]["frames"] if len(e) == 1 else []
        env.eq("%s: the %d-byte leak's frames" % (name, size), shown(frames[:3]),
               [("leaf", FILE, LINES["leaf"]), ("middle", FILE, LINES["middle"]),
                (caller, FILE, LINES["main" if caller == "main" else "thread"])])
        last = frames[-1]["function"] if frames else ""
        env.check("%s: the %d-byte leak's backtrace goes on to %s" % (name, size, outermost[0]),
                  last in outermost or last.lstrip("_") in outermost, repr(shown(frames)))
        env.eq("%s: the %d-byte leak is not truncated" % (name, size), e and e[0]["truncated"], False)
    env.eq(name + ": no NOTE of backtraces that end early", end_early(rep), [])
env.finish()
