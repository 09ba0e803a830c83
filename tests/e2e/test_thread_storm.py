# SPDX-License-Identifier: MIT
# A thread creation storm (tests/progs/stress_threads.c storm): 3000 short-lived threads, half joined,
# half detached, while 4 others allocate; no hang (the run is bounded), and ctrack's figures of the
# program's own events equal the program's atomic counts, twice.
import sys

import ctrack_test as ct
import stress

STORM = 3000
env = ct.Env(sys.argv)
env.analyze_opts = ["--top", "100000"]  # complete rankings: the TLS vectors' site is among them
prog = env.progs[0]

for run in range(2):
    name = "run%d" % run
    got = stress.check_run(env, name, [prog, "storm", str(STORM)])
    if not got:
        continue
    rep = got[0]
    env.eq(name + ": storm threads 0, 500, ... leak 1000 bytes each", ct.sites(rep["leaks"], "leak_one"),
           (1000 * (STORM // 500), STORM // 500))
    env.check(name + ": a TLS vector per thread at most", stress.tls_vectors(rep)[0] <= STORM + 4,
              repr(stress.tls_vectors(rep)))
env.finish()
