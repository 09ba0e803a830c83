# SPDX-License-Identifier: MIT
# 8 threads passing blocks around a ring, each freed by another thread (tests/progs/threads.c):
# allocations, frees and bytes equal valgrind's (glibc's TLS vectors included: see prodcons), the
# per-thread leaks are exactly the program's. Runs 3 times: races between threads show up as
# varying counts.
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog = env.progs[0]

THREADS = 8
PROGRAM = (8008, 8000, 488028)  # allocations, frees, bytes: the program's comment

vg = env.valgrind_main([prog], env.fresh_dir("valgrind"))
if vg:
    # On top of the program's own blocks, glibc callocs one TLS vector (allocate_dtv) per created
    # thread; glibc keeps some exited threads' stacks, and their vectors, for reuse: those are in use
    # at exit, so the blocks in use beyond the program's 8 leaks are vectors, at most one a thread.
    env.eq("valgrind: the program's allocations and one TLS vector per thread", vg["allocs"],
           PROGRAM[0] + THREADS)
    env.check("valgrind: at least the program's bytes and frees",
              vg["bytes"] > PROGRAM[2] and vg["frees"] >= PROGRAM[1], repr(vg))
    env.check("valgrind: blocks in use at exit, the program's 8 leaks and at most 8 vectors",
              8 <= vg["in_use_blocks"] <= 8 + THREADS, repr(vg))

DTV = "allocate_dtv"


def own(entries):
    """(bytes, allocations) of the sites that are not glibc's TLS vectors (allocate_dtv is frame 0,
    or frame 1 under ld.so's inlined calloc when ld.so's debug info is installed)."""
    hits = [e for e in entries or []
            if not any(ct.same_function(f["function"], DTV) for f in e.get("frames", []))]
    return sum(e["bytes"] for e in hits), sum(e["allocations"] for e in hits)


for run in range(3):
    name = "run%d" % run
    r, rep = env.run_traced(name, [prog])
    env.eq(name + ": exit status", r.returncode, 0)
    if not rep:
        continue
    s = rep["summary"]
    if vg:
        env.eq(name + ": allocations == valgrind allocs", s["allocations"], vg["allocs"])
        env.eq(name + ": frees == valgrind frees", s["frees"], vg["frees"])
        env.eq(name + ": leaked_allocations == valgrind's blocks in use at exit",
               s["leaked_allocations"], vg["in_use_blocks"])
        env.eq(name + ": bytes_allocated == valgrind bytes", s["bytes_allocated"], vg["bytes"])
        env.eq(name + ": leaked_bytes == valgrind's in use", s["leaked_bytes"], vg["in_use_bytes"])
    env.eq(name + ": the program's own allocations", own(rep["allocations"]), (488028, 8008))
    env.eq(name + ": the program's own leaks", own(rep["leaks"]), (8028, 8))
    env.eq(name + ": thread_leak sites", ct.sites(rep["leaks"], "thread_leak"),
           (sum(1000 + i for i in range(8)), 8))
    env.eq(name + ": unmatched_frees", s["unmatched_frees"], 0)
env.finish()
