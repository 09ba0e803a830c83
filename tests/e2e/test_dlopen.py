# SPDX-License-Identifier: MIT
# dlopen/dlclose (tests/progs/dlopen_host.c loads tests/progs/dlib.c): the library's leaks are
# attributed to its function in its module, and still resolve after dlclose; totals = valgrind's.
# Opened by a relative path ("./libctdlib.so"), the library is recorded by its absolute path, and
# symbolized.
import os
import shutil
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
            env.check("frame 1 resolves to main (%d bytes)" % e["bytes"],
                      len(e["frames"]) > 1 and e["frames"][1].get("function") == "main",
                      repr(e["frames"][:2]))

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
