# SPDX-License-Identifier: MIT
# Every hooked allocation function once (tests/progs/hooks.c): totals equal valgrind's, the leaks
# are exactly the program's, each attributed to the function that allocated it. The program checks
# every block it gets (size usable, bytes writable, alignment) and exits 1 naming a bad one: its
# exit status and stderr are checked untraced, under valgrind and under ctrack.
import subprocess
import sys

import ctrack_test as ct

LEAKS = {"leak_malloc": 100, "leak_calloc": 200, "leak_realloc": 400,
         "leak_posix_memalign": 128, "leak_memalign": 96, "leak_valloc": 4096}

env = ct.Env(sys.argv)
prog = env.progs[0]

native = subprocess.run([prog, "pvalloc"], capture_output=True)
env.eq("untraced: every call behaved (exit, stderr)", (native.returncode, native.stderr), (0, b""))

pid, figs, vg_rc, _ = env.valgrind_run([prog], env.fresh_dir("valgrind"))
vg = figs.get(pid)
env.eq("valgrind: exit status (every call behaved)", vg_rc, 0)
if not env.check("valgrind reported total heap usage", vg and "allocs" in vg, repr(figs)):
    vg = None
if vg:
    env.eq("valgrind agrees with the program: totals", (vg["allocs"], vg["frees"], vg["bytes"]),
           (11, 5, 6122))
    env.eq("valgrind agrees with the program: in use at exit",
           (vg["in_use_bytes"], vg["in_use_blocks"]), (5020, 6))

r, rep = env.run_traced("plain", [prog])
env.eq("exit status (every call behaved)", r.returncode, 0)
env.eq("no bad block named", r.stderr.decode(errors="replace"), "")
if rep:
    s = rep["summary"]
    env.eq("complete", rep["complete"], True)
    env.compare_valgrind(s, vg)
    env.compare_leaks(s, vg)
    env.eq("leaked_bytes", s["leaked_bytes"], sum(LEAKS.values()))
    env.eq("leaked_allocations", s["leaked_allocations"], len(LEAKS))
    env.eq("unmatched_frees", s["unmatched_frees"], 0)
    env.eq("one leak entry per site", len(rep["leaks"]), len(LEAKS))
    for fn, size in LEAKS.items():
        env.eq("leak attributed to " + fn, ct.sites(rep["leaks"], fn), (size, 1))
    sizes = [e["bytes"] for e in rep["leaks"]]
    env.eq("leaks sorted by bytes, descending", sizes, sorted(sizes, reverse=True))

# pvalloc: valgrind 3.19 aborts on it, so the expected figures are the program's (page-sized
# request, so the count is the same whether a tool records the request or the rounded size).
r, rep = env.run_traced("pvalloc", [prog, "pvalloc"])
env.eq("pvalloc run: exit status", r.returncode, 0)
env.eq("pvalloc run: no bad block named", r.stderr.decode(errors="replace"), "")
if rep:
    s = rep["summary"]
    env.eq("pvalloc run: totals", (s["allocations"], s["frees"], s["bytes_allocated"]),
           (12, 6, 14314))
    env.eq("pvalloc run: leaked", (s["leaked_bytes"], s["leaked_allocations"]), (5020, 6))
env.finish()
