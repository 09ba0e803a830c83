# SPDX-License-Identifier: MIT
# The shim takes none of the program's pthread keys (issue 23): tests/progs/keys_all.c takes every
# key glibc has, then runs 64 threads whose key destructor frees a block. Under ctrack it gets as many
# keys as it gets alone (the shim gives its own back when the program finds none left), and the
# counts equal valgrind's total heap usage, so every thread's events, destructors included, are in.
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog = env.progs[0]
alone = subprocess.run([prog], capture_output=True, text=True, timeout=60)
env.eq("alone: the program gets PTHREAD_KEYS_MAX keys", alone.stdout, "1024 keys\n")
vg = env.valgrind_main([prog], env.fresh_dir("vg"))
r, rep = env.run_traced("traced", [prog])
env.eq("traced: the program's output and status are its own", (r.stdout.decode(), r.returncode),
       (alone.stdout, 0))
if rep and vg:
    env.compare_valgrind(rep["summary"], vg)
    env.compare_leaks(rep["summary"], vg)
env.finish()
