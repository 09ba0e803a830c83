# SPDX-License-Identifier: MIT
# errno under the hooks (tests/progs/errno_check.c): untouched by successful calls, ENOMEM from
# failed ones, free(NULL) harmless. The program checks itself; its exit status is the verdict.
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog = env.progs[0]

native = subprocess.run([prog], capture_output=True)
env.eq("untraced program passes its own checks (glibc reference)", native.returncode, 0)

r, rep = env.run_traced("traced", [prog])
env.check("traced program passes its checks", r.returncode == 0,
          "exit %d: %s" % (r.returncode, r.stderr.decode(errors="replace").strip()))
# valgrind 3.19's calloc does not set ENOMEM on overflow, so only its counts are used.
vg = env.valgrind_main([prog], env.fresh_dir("valgrind"))
if vg:
    env.eq("valgrind agrees with the program", (vg["allocs"], vg["frees"], vg["bytes"]),
           (3, 3, 122))
if rep:
    s = rep["summary"]
    env.compare_valgrind(s, vg)
    env.eq("nothing leaked", (s["leaked_bytes"], s["leaked_allocations"]), (0, 0))
env.finish()
