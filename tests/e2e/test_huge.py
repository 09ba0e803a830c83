# SPDX-License-Identifier: MIT
# Sizes and alignments at the edges (tests/progs/huge.c): requests that must fail give NULL and
# glibc's errno under ctrack as without it, alignments up to 1 MiB hold, aligned_alloc blocks go
# through realloc and free; the program's output is the same traced and untraced, and ctrack's
# figures equal the program's and valgrind's total heap usage.
import subprocess
import sys

import ctrack_test as ct
import stress

env = ct.Env(sys.argv)
prog = env.progs[0]

native = subprocess.run([prog], capture_output=True, timeout=60)
env.eq("untraced: the program's own checks pass", native.returncode, 0)
r, rep = env.run_traced("traced", [prog], timeout=60)
env.eq("traced: the program's own checks pass", r.returncode, 0)
env.eq("traced output == untraced output", r.stdout.decode(errors="replace").splitlines(),
       native.stdout.decode(errors="replace").splitlines())
mine = stress.printed(native.stdout.decode(errors="replace"), "allocations=")

# valgrind 3.19 counts a failed realloc as 1 allocation + 1 free: its run skips that call ("vg").
pid, figs, rc, out = env.valgrind_run([prog, "vg"], env.fresh_dir("valgrind"), timeout=120)
vg = figs.get(pid)
env.eq("valgrind: the program's own checks pass", rc, 0)
if env.eq("the program printed its figures", len(mine), 1) and vg:
    env.eq("valgrind: the program's figures", (vg["allocs"], vg["frees"], vg["bytes"]),
           (mine[0]["allocations"], mine[0]["frees"], mine[0]["bytes"]))
if rep:
    env.eq("complete", rep["complete"], True)
    env.compare_valgrind(rep["summary"], vg)
    env.eq("nothing leaked, no unmatched free",
           (rep["summary"]["leaked_allocations"], rep["summary"]["unmatched_frees"]), (0, 0))
env.finish()
