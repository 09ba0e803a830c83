# SPDX-License-Identifier: MIT
# lld (tests/progs/lld_leak.c, built here at -O1 -g with -fuse-ld=lld and with the default linker):
# lld lays segments out differently (code not at file offset = address); both name the same frames.
import os
import re
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
src = env.progs[0]
FILE = os.path.basename(src)


def marked_lines(path):
    """{name: line number} of the `/* LINE:name */` comments."""
    with open(path) as f:
        return {name: number for number, text in enumerate(f, 1)
                for name in re.findall(r"/\* LINE:(\w+) \*/", text)}


def leak_size(path):
    """The bytes leaked with argc == 1: the factor of `(size_t)argc * N`."""
    with open(path) as f:
        m = re.search(r"\(size_t\)argc \* (\d+)", f.read())
    return int(m.group(1)) if m else None


LINES = marked_lines(src)
SIZE = leak_size(src)
env.eq("LINE: comments in " + FILE, sorted(LINES), ["alloc", "call"])
env.check("leak size in " + FILE, SIZE)
WANT = [("leak_here", FILE, LINES.get("alloc"), False), ("main", FILE, LINES.get("call"), False)]


def run(what, cmd):
    print("run:", " ".join(cmd))
    r = subprocess.run(cmd, capture_output=True, text=True)
    env.check(what, r.returncode == 0, r.stderr[-500:])
    return r.stdout


def loads(prog):
    """(offset, vaddr, flags) of the LOAD segments."""
    out = run("readelf -l " + os.path.basename(prog), ["readelf", "-lW", prog])
    return [(int(f[1], 16), int(f[2], 16), " ".join(f[6:-1]))
            for f in (l.split() for l in out.splitlines()) if f[:1] == ["LOAD"]]


def case(name, link_flags):
    d = env.fresh_dir(name)
    prog = os.path.join(d, "lld_leak")
    run(name + ": compile", ["cc", "-O1", "-g", *link_flags, "-o", prog, src])
    if not os.path.exists(prog):
        return None
    segs = loads(prog)
    r, rep = env.run_traced(name + "/run", [prog])
    env.eq(name + ": exit status", r.returncode, 0)
    leaks = (rep or {}).get("leaks", [])
    env.eq(name + ": one leak", [(e["bytes"], e["allocations"]) for e in leaks], [(SIZE, 1)])
    frames = leaks[0]["frames"][:2] if leaks else []
    got = [(f["function"], os.path.basename(f["file"] or ""), f["line"], f["inlined"]) for f in frames]
    env.eq(name + ": leak_here and main at the marked lines", got, WANT)
    return segs


lld = case("lld", ["-fuse-ld=lld"])
comment = run("readelf -p .comment", ["readelf", "-p", ".comment",
                                      os.path.join(env.scratch, "lld", "lld_leak")])
env.check("lld: linked by LLD", re.search(r"Linker: .*LLD", comment), comment)
env.check("lld: first LOAD read-only, code LOAD at vaddr != offset",
          lld and lld[0][2] == "R" and any("E" in s and off != va for off, va, s in lld), repr(lld))
case("default", [])
env.finish()
