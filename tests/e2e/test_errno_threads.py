# SPDX-License-Identifier: MIT
# errno under the hooks in five threads at once (tests/progs/errno_threads.c, built here with -pthread):
# the hooks save and restore errno through the thread pointer (hooks.c, errno_at), so each thread's own
# errno must come back from every malloc, calloc, realloc and free. The program checks itself (its exit
# status); the totals are valgrind's.
import os
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog = env.cc(env.progs[0], os.path.join(env.scratch, "errno_threads"), "-pthread")
if prog:
    native = subprocess.run([prog], capture_output=True)
    env.eq("untraced program passes its own checks", native.returncode, 0)
    r, rep = env.run_traced("traced", [prog])
    env.check("traced program passes its checks", r.returncode == 0,
              "exit %d: %s" % (r.returncode, r.stderr.decode(errors="replace").strip()))
    vg = env.valgrind_main([prog], env.fresh_dir("valgrind"))
    if vg:  # the program's 300,000 and glibc's own for its threads
        env.check("valgrind counts the program's 300,000 allocations", vg["allocs"] >= 300000,
                  "got %r" % vg["allocs"])
    if rep:
        env.compare_valgrind(rep["summary"], vg)
        env.compare_leaks(rep["summary"], vg)
env.finish()
