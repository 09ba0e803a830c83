# SPDX-License-Identifier: MIT
# realloc's edge cases (tests/progs/realloc_edge.c) against valgrind: realloc(NULL, n), shrink,
# grow in place, grow with a move, realloc(p, 0), malloc(0), free(NULL), a failed realloc; and the
# temporary allocations, counted by hand in the program's comment.
import subprocess
import sys

import ctrack_test as ct

TOTALS = (8, 7, 1248813)  # allocations, frees, bytes: the program's comment
TEMPORARY = 7  # the program's comment: five blocks freed by the realloc right after them, 0 and 24

env = ct.Env(sys.argv)
prog = env.progs[0]

# Untraced, glibc grows the 32-byte block to 40 in place and moves it for 1 MiB: both paths run.
native = subprocess.run([prog], capture_output=True)
env.eq("untraced: exit status", native.returncode, 0)
env.eq("untraced: in place, then moved", native.stdout, b"moved: shrink=0 grow=0 big=1\n")

pid, figs, vg_rc, vg_out = env.valgrind_run([prog], env.fresh_dir("valgrind"))
vg = figs.get(pid)
env.check("valgrind ran the program", vg_rc == 0 and vg and "allocs" in vg, "exit %d" % vg_rc)
if vg:
    env.eq("valgrind agrees with the program", (vg["allocs"], vg["frees"], vg["bytes"]), TOTALS)


def traced(name, args):
    r, rep = env.run_traced(name, [prog, *args])
    env.eq(name + ": exit status (every call behaved)", r.returncode, 0)
    print(name + ": program says " + r.stdout.decode(errors="replace").strip())
    if not rep:
        return
    s = rep["summary"]
    env.compare_valgrind(s, vg, name + ": ")
    env.compare_leaks(s, vg, name + ": ")
    env.eq(name + ": totals", (s["allocations"], s["frees"], s["bytes_allocated"]), TOTALS)
    env.eq(name + ": leaked", (s["leaked_bytes"], s["leaked_allocations"]), (77, 1))
    env.eq(name + ": leak site", ct.sites(rep["leaks"], "leak_realloc"), (77, 1))
    env.eq(name + ": unmatched_frees", s["unmatched_frees"], 0)
    env.eq(name + ": temporary allocations (realloc frees the block just made)",
           s["temporary_allocations"], TEMPORARY)


traced("plain", [])
# A failed realloc returns no block: it counts nothing, so the figures are the plain run's
# (valgrind 3.19 would count 1 alloc + 1 free of SIZE_MAX/2 bytes here: not a reference).
traced("fail", ["fail"])
env.finish()
