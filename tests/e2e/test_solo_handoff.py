# SPDX-License-Identifier: MIT
# The sequence numbers a single thread takes unlocked, and their hand-off when a second thread starts
# (preload/tracker.c, seq_thread_starts): tests/progs/solo_handoff.c allocates alone, then starts a
# thread that frees its blocks as they come while it goes on allocating, both taking numbers of the
# same counters at once. The figures are the program's own (its counts, and the sizes' sum) and
# valgrind's, in several runs (the hand-off happens once a run); no report may carry a warning (a
# number the writer waited for in vain says so). A test of the hand-off's working, not a proof that
# it has no race: a lost number would mostly go unseen.
import os
import re
import subprocess
import sys

import ctrack_test as ct

RUNS = 5

env = ct.Env(sys.argv)
prog = env.cc(env.progs[0], os.path.join(env.scratch, "solo_handoff"), "-pthread")
if prog:
    own = subprocess.run([prog], capture_output=True, text=True)
    m = re.fullmatch(r"allocations (\d+) frees (\d+) bytes (\d+)\n", own.stdout)
    if env.check("the program runs and counts", own.returncode == 0 and m, own.stdout + own.stderr):
        allocs, frees, nbytes = (int(x) for x in m.groups())
        env.eq("its counts", (allocs, frees), (250000, 250000))
        vg = env.valgrind_main([prog], env.fresh_dir("valgrind"))
        for run in range(RUNS):
            r, rep = env.run_traced("traced-%d" % run, [prog])
            env.eq("run %d: the program's output" % run, r.stdout.decode(), own.stdout)
            if not rep:
                continue
            s = rep["summary"]
            # glibc's own: the thread's DTV (calloc) and stdout's buffer, which valgrind counts too
            env.check("run %d: at least the program's allocations and bytes" % run,
                      s["allocations"] >= allocs and s["bytes_allocated"] >= nbytes, repr(s))
            env.eq("run %d: no warning" % run,
                   [n for n in rep["notes"] if n.get("level") == "warning"], [])
            if vg:
                env.compare_valgrind(s, vg)
env.finish()
