# SPDX-License-Identifier: MIT
# dlopen/dlclose (tests/progs/dlopen_host.c loads tests/progs/dlib.c): the library's leaks are
# attributed to its function in its module, and still resolve after dlclose; totals = valgrind's.
# Then 500 load/unload cycles: --group backtrace keeps one entry for one backtrace. Opened by a
# relative path ("./libctdlib.so"), the library is recorded by its absolute path, and symbolized.
import json
import os
import shutil
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
host, lib = env.progs[0], env.progs[1]

vg = env.valgrind_main([host, lib], env.fresh_dir("valgrind"))
r, rep = env.run_traced("traced", [host, lib])
env.eq("exit status", r.returncode, 0)
if rep:
    s = rep["summary"]
    env.compare_valgrind(s, vg)
    if vg:
        env.eq("leaked == valgrind's in use at exit", (s["leaked_bytes"], s["leaked_allocations"]),
               (vg["in_use_bytes"], vg["in_use_blocks"]))
    env.eq("leaks in ct_test_dlib_leak", ct.sites(rep["leaks"], "ct_test_dlib_leak"), (4300, 2))
    real = os.path.realpath(lib)
    for e in rep["leaks"]:
        if ct.frame0(e) == "ct_test_dlib_leak":
            mod = e["frames"][0].get("module") or ""
            env.eq("frame 0 module is the library (%d bytes)" % e["bytes"], os.path.realpath(mod),
                   real)
            env.check("frames 1 and 2 resolve to cycle and main (%d bytes)" % e["bytes"],
                      [f.get("function") for f in e["frames"][1:3]] == ["cycle", "main"],
                      repr(e["frames"][:3]))

# 500 cycles of dlopen, two leaks from one call site, dlclose (tests/progs/dlopen_host.c: 1000
# allocations, 2,150,000 bytes): --group backtrace merges the identical backtraces into one entry,
# however the library's loads were numbered or placed ("move": each load at a new address). The
# stripped copy (symbols, no lines) is grouped by module and offset.
CYCLES = 500
stripped = os.path.join(env.fresh_dir("stripped"), "libctdlib-stripped.so")
r = subprocess.run(["strip", "--strip-debug", "-o", stripped, lib], capture_output=True, text=True)
env.check("strip --strip-debug the library", r.returncode == 0, r.stderr)
for name, library in (("cycles", lib), ("cycles-stripped", stripped)):
    trace = env.trace(name, [host, library, str(CYCLES), "move"])
    r = env.run_analyze(trace, "--json", "--group", "backtrace")
    if not env.eq("%s: --group backtrace exits 0" % name, r.returncode, 0):
        continue
    leaks = [e for e in json.loads(r.stdout)["leaks"] if ct.frame0(e) == "ct_test_dlib_leak"]
    env.eq("%s: one entry for the library's leaks (entries, bytes, allocations)" % name,
           (len(leaks), sum(e["bytes"] for e in leaks), sum(e["allocations"] for e in leaks)),
           (1, 4300 * CYCLES, 2 * CYCLES))
    if leaks and name == "cycles-stripped":
        env.check("cycles-stripped: the library's frame has no line (grouped by module and offset)",
                  leaks[0]["frames"][0].get("file") is None, repr(leaks[0]["frames"][0]))

d = env.fresh_dir("relative")
copy = os.path.join(d, os.path.basename(lib))
shutil.copy(lib, copy)
trace = os.path.join(d, "trace.zst")
r, _ = env.run_ctrack([host, "./" + os.path.basename(lib)], d, opts=("-o", trace))
env.eq("relative: exit status", r.returncode, 0)
rep = env.report(trace) if os.path.exists(trace) else None
if rep:
    env.eq("relative: leaks symbolized in ct_test_dlib_leak",
           ct.sites(rep["leaks"], "ct_test_dlib_leak"), (4300, 2))
    mods = [e["frames"][0].get("module") for e in rep["leaks"]
            if ct.frame0(e) == "ct_test_dlib_leak"]
    env.eq("relative: the module's recorded path is absolute", set(mods), {copy})
env.finish()
