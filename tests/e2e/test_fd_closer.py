# SPDX-License-Identifier: MIT
# A program that closes the trace file's descriptor and reuses its number for a file of its own
# (tests/progs/fd_closer.c): ctrack must never write into that file; the program runs as without it.
import os
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog = env.progs[0]
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
        # Whatever was written before the descriptor was taken away stays readable; the 5 blocks
        # made before the close loop are at most what it can show.
        env.check("the trace is readable up to the close", rep["summary"]["allocations"] <= 205)
env.finish()
