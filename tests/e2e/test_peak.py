# SPDX-License-Identifier: MIT
# Peak heap (tests/progs/peak.c): peak_heap_bytes is the program's own computed peak, 1229800, in
# its second phase (not the earlier 1 MiB block); totals equal valgrind's.
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog = env.progs[0]

vg = env.valgrind_main([prog], env.fresh_dir("valgrind"))
if vg:
    env.eq("valgrind agrees with the program", (vg["allocs"], vg["frees"], vg["bytes"]),
           (8, 4, 2278376))
r, rep = env.run_traced("traced", [prog])
env.eq("exit status", r.returncode, 0)
if rep:
    s = rep["summary"]
    env.compare_valgrind(s, vg)
    env.compare_leaks(s, vg)
    env.eq("peak_heap_bytes", s["peak_heap_bytes"], 1229800)
    env.check("peak time within the run", 0 <= s["peak_heap_time_ns"] <= s["runtime_ns"],
              "peak at %d ns, run %d ns" % (s["peak_heap_time_ns"], s["runtime_ns"]))
    env.eq("leaked", (s["leaked_bytes"], s["leaked_allocations"]), (308200, 4))
    env.eq("peak breakdown adds up to the peak", sum(e["bytes"] for e in rep.get("peak") or []),
           1229800)
env.finish()
