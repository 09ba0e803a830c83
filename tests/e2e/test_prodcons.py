# SPDX-License-Identifier: MIT
# A program that creates threads allocates exactly as much under ctrack as without it: 3 producers
# and 3 consumers (tests/progs/prodcons.c), every block freed by another thread. Allocations, frees
# and bytes equal valgrind's `total heap usage`, and what is in use at exit its `in use at exit`,
# glibc's per-thread TLS vectors included: glibc sizes them by the loaded modules with thread-local
# storage, so the shim has none (no PT_TLS segment) and loads no library that has (libunwind had).
# Runs 3 times: races between threads show up as varying counts.
import os
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog = env.progs[0]
shim = os.path.join(os.path.dirname(env.ctrack), "libctrack.so")
PROGRAM = (60000, 60000, 8880000)  # allocations, frees, bytes: the program's comment
THREADS = 6

segments = subprocess.run(["readelf", "-lW", shim], capture_output=True, text=True)
env.check("readelf lists the shim's segments", segments.returncode == 0 and "LOAD" in segments.stdout,
          segments.stderr)
env.eq("the shim has no TLS segment",
       [line.strip() for line in segments.stdout.splitlines() if line.strip().startswith("TLS")], [])
libs = subprocess.run(["ldd", shim], capture_output=True, text=True)
env.check("ldd lists the shim's libraries", libs.returncode == 0 and "libc.so" in libs.stdout, libs.stderr)
env.eq("the shim loads no libunwind", [line for line in libs.stdout.splitlines() if "unwind" in line], [])

vg = env.valgrind_main([prog], env.fresh_dir("valgrind"))
if vg:
    env.eq("valgrind: the program's allocations and frees, one TLS vector more per thread",
           (vg["allocs"], vg["frees"]), (PROGRAM[0] + THREADS, PROGRAM[1] + THREADS - vg["in_use_blocks"]))
    env.check("valgrind: more bytes than the program's own", vg["bytes"] > PROGRAM[2], repr(vg))
    print("valgrind:", vg)

for run in range(3):
    name = "run%d" % run
    r, rep = env.run_traced(name, [prog])
    env.eq(name + ": exit status", r.returncode, 0)
    if not rep or not vg:
        continue
    s = rep["summary"]
    print(name, "ctrack:", {k: s[k] for k in ("allocations", "frees", "bytes_allocated", "leaked_bytes",
                                             "leaked_allocations")})
    env.compare_valgrind(s, vg, name + ": ")
    env.compare_leaks(s, vg, name + ": ")
    env.eq(name + ": the producers' blocks", ct.sites(rep["allocations"], "produce_block"),
           (PROGRAM[2], PROGRAM[0]))
    env.eq(name + ": unmatched_frees", s["unmatched_frees"], 0)
env.finish()
