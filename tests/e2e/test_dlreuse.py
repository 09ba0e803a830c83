# SPDX-License-Identifier: MIT
# A library loaded where another was just unloaded (tests/progs/dlreuse.c, 20 cycles alternating
# libalpha.so and libbeta.so, both built here from tests/progs/dlreuse_lib.c, each dlopen right after
# the dlclose before it): each load is recorded as the module it is, before the frames that need it,
# so every leak is named after its own library's function, in its own module, at the LINE markers.
# The premise, that the loads share an address, comes from the program's own output (dlinfo).
import os
import re
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
host_src, lib_src = env.progs
LIB = ct.line_markers(lib_src)
HOST = ct.line_markers(host_src)
CYCLES = 20

d = env.fresh_dir("build")
host = env.cc(host_src, os.path.join(d, "dlreuse"))
libs = {who: env.cc(lib_src, os.path.join(d, "lib%s.so" % who), "-fPIC", "-shared", "-DWHO=" + who)
        for who in ("alpha", "beta")}

if host and all(libs.values()):
    r, rep = env.run_traced("traced", [host, libs["alpha"], libs["beta"], str(CYCLES)])
    env.eq("exit status", r.returncode, 0)
    loads = re.findall(rb"^load (\d+) (\S+) (0x[0-9a-f]+)$", r.stdout, re.M)
    env.eq("the program loaded a library per cycle", len(loads), CYCLES)
    reused = sum(1 for a, b in zip(loads, loads[1:]) if a[2] == b[2] and a[1] != b[1])
    env.check("premise: libraries loaded where the other one was (%d of %d loads)" % (reused, CYCLES - 1),
              reused > 0, r.stdout.decode()[-1000:])
    if rep:
        for who, size in (("alpha", 1000), ("beta", 2000)):
            fn = who + "_leak"
            env.eq("%s: leaks (bytes, allocations)" % fn, ct.sites(rep["leaks"], fn),
                   (size * CYCLES // 2, CYCLES // 2))
            for e in rep["leaks"]:
                if not ct.same_function(ct.frame0(e), fn):
                    continue
                got = [(f.get("function"), os.path.basename(f.get("file") or ""), f.get("line"),
                        os.path.realpath(f.get("module") or "")) for f in e["frames"][:3]]
                env.eq("%s: frames at the LINE markers, in its own module" % fn, got,
                       [(fn, "dlreuse_lib.c", LIB["leak"], os.path.realpath(libs[who])),
                        ("dlreuse_entry", "dlreuse_lib.c", LIB["entry"], os.path.realpath(libs[who])),
                        ("cycle", "dlreuse.c", HOST["cycle"], os.path.realpath(host))])
env.finish()
