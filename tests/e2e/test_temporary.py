# SPDX-License-Identifier: MIT
# Temporary allocations (tests/progs/temporary.c): exactly the 1000 blocks freed by the very next
# allocation event of their thread; totals equal valgrind's.
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog = env.progs[0]

vg = env.valgrind_main([prog], env.fresh_dir("valgrind"))
if vg:
    env.eq("valgrind agrees with the program", (vg["allocs"], vg["frees"], vg["bytes"]),
           (1200, 1200, 72000))
r, rep = env.run_traced("traced", [prog])
env.eq("exit status", r.returncode, 0)
if rep:
    s = rep["summary"]
    env.compare_valgrind(s, vg)
    env.eq("temporary_allocations", s["temporary_allocations"], 1000)
    env.eq("nothing leaked", (s["leaked_bytes"], s["leaked_allocations"]), (0, 0))
    tmp = rep.get("temporary") or []
    env.eq("temporary sites: one of 1000 (main's malloc(64))",
           [(e["allocations"], ct.frame0(e)) for e in tmp], [(1000, "main")])
env.finish()
