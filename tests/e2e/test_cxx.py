# SPDX-License-Identifier: MIT
# C++ (tests/progs/cxx.cpp): new/delete, new[]/delete[], vector, string, an exception; totals equal
# valgrind's (--run-cxx-freeres), the leaks are the program's two, the emergency pool is not one.
import sys

import ctrack_test as ct



def own_sites(entries, function):
    """(bytes, allocations) of the leaks whose innermost frame outside operator new/new[] (they
    call malloc: they are frame 0) is `function`."""
    total = [0, 0]
    for e in entries or []:
        names = [f.get("function") or "" for f in e.get("frames", [])]
        own = [n for n in names if not n.startswith("operator new")]
        if own and ct.same_function(own[0], function):
            total[0] += e["bytes"]
            total[1] += e["allocations"]
    return tuple(total)


env = ct.Env(sys.argv)
prog = env.progs[0]

vg = env.valgrind_main([prog], env.fresh_dir("valgrind"))
if vg:
    env.eq("valgrind: in use at exit is the program's 88 bytes in 2",
           (vg["in_use_bytes"], vg["in_use_blocks"]), (88, 2))
r, rep = env.run_traced("traced", [prog])
env.eq("exit status", r.returncode, 0)
if rep:
    s = rep["summary"]
    env.compare_valgrind(s, vg)
    env.compare_leaks(s, vg)
    env.eq("leaked", (s["leaked_bytes"], s["leaked_allocations"]), (88, 2))
    env.eq("leak_new", own_sites(rep["leaks"], "leak_new"), (48, 1))
    env.eq("leak_array", own_sites(rep["leaks"], "leak_array"), (40, 1))
    env.eq("two leak entries", len(rep["leaks"]), 2)
env.finish()
