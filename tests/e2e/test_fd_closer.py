# SPDX-License-Identifier: MIT
# A program that closes the trace file's descriptor and reuses its number for a file of its own
# (tests/progs/fd_closer.c): ctrack must never write into that file; the program runs as without it;
# and the trace still holds every allocation: totals and leaks exactly valgrind's (which run with
# --run-libc-freeres=no, see ctrack_test.VG_FLAGS), which are the program's own (205 allocations,
# 200 frees, 20500 bytes; 500 bytes leaked in 5 blocks).
import os
import sys

import ctrack_test as ct

PROGRAM = (205, 200, 205 * 100)  # allocations, frees, bytes: the program's comment

env = ct.Env(sys.argv)
prog = env.progs[0]

vgdir = env.fresh_dir("valgrind")
vg = env.valgrind_main([prog, os.path.join(vgdir, "own.txt")], vgdir)
if vg:
    env.eq("valgrind agrees with the program", (vg["allocs"], vg["frees"], vg["bytes"]), PROGRAM)

d = env.fresh_dir("closer")
own = os.path.join(d, "own.txt")
r, files = env.run_ctrack([prog, own], d)
env.eq("exit status is the program's", r.returncode, 0)
with open(own, "rb") as f:
    env.eq("the program's file holds only its own bytes", f.read(), b"x" * 600)
env.eq("one trace file", len(files), 1)
if files:
    rep = env.report(os.path.join(d, files[0]))
    if rep:
        env.eq("the trace is complete", rep["complete"], True)
        env.compare_valgrind(rep["summary"], vg)
        env.compare_leaks(rep["summary"], vg)
env.finish()
