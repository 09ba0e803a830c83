# SPDX-License-Identifier: MIT
# dlopen/dlclose (tests/progs/dlopen_host.c loads tests/progs/dlib.c): the library's leaks are
# attributed to its function in its module, and still resolve after dlclose; totals = valgrind's.
import os
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
env.finish()
