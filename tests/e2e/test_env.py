# SPDX-License-Identifier: MIT
# The traced program sees the environment it would have had untraced: ctrack's settings (CTRACK_*)
# and its LD_PRELOAD entry are gone before the program's code runs, so a program that copies its
# environment (tests/progs/env_copy.c prints the bytes it copied) allocates exactly as in a plain
# run, and the trace's bytes are that figure.
import os
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog = env.progs[0]
base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent", "LANG": "C"}
libm = next((p for p in ("/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6")
             if os.path.exists(p)), None)
cases = {"no LD_PRELOAD of the user's": base}
if libm:
    cases["the user's own LD_PRELOAD"] = dict(base, LD_PRELOAD=libm)

for name, e in cases.items():
    d = env.fresh_dir("env-%d" % len(env.results))
    plain = subprocess.run([prog], env=e, capture_output=True, timeout=60)
    env.eq(name + ": plain run exits 0", plain.returncode, 0)
    r, files = env.run_ctrack([prog], d, env=e)
    env.eq(name + ": traced run exits 0", r.returncode, 0)
    env.eq(name + ": the program copies as many bytes as untraced", r.stdout, plain.stdout)
    if files and plain.stdout.strip().isdigit():
        rep = env.report(os.path.join(d, files[0]))
        if rep:
            env.eq(name + ": the trace's bytes are the program's", rep["summary"]["bytes_allocated"],
                   int(plain.stdout))
            env.eq(name + ": one allocation per variable", rep["summary"]["allocations"], len(e))
env.finish()
