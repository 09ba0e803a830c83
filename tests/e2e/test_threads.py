# SPDX-License-Identifier: MIT
# 8 threads passing blocks around a ring, each freed by another thread (tests/progs/threads.c):
# totals equal valgrind's, the per-thread leaks are exactly the program's. Runs 3 times: races
# between threads show up as varying counts.
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog = env.progs[0]

vg = env.valgrind_main([prog], env.fresh_dir("valgrind"))
if vg:
    # glibc allocates for each thread's TLS on top of the program's own 8008 / 8000 / 488028.
    env.check("valgrind sees at least the program's figures",
              vg["allocs"] >= 8008 and vg["frees"] >= 8000 and vg["bytes"] >= 488028, repr(vg))

# glibc's thread creation callocs a TLS vector (allocate_dtv) per thread, whose size grows with
# the number of modules using TLS: the shim is one more than valgrind's preload, so those blocks
# are bigger under ctrack (measured: 304 vs 272 bytes). Their number must match valgrind's; the
# program's own blocks must match its comment exactly.
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
    env.eq(name + ": the program's own allocations", own(rep["allocations"]), (488028, 8008))
    env.eq(name + ": the program's own leaks", own(rep["leaks"]), (8028, 8))
    env.eq(name + ": thread_leak sites", ct.sites(rep["leaks"], "thread_leak"),
           (sum(1000 + i for i in range(8)), 8))
    env.eq(name + ": unmatched_frees", s["unmatched_frees"], 0)
env.finish()
