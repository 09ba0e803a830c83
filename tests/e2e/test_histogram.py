# SPDX-License-Identifier: MIT
# The allocation size histogram (issue 24): tests/progs/sizes.c allocates known sizes (its comment's
# table); JSON's histogram and the text of --histogram give exactly those buckets, and the
# allocations add up to valgrind's total heap usage.
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog = env.progs[0]
M = 1 << 20
# (min, max, allocations, bytes, temporary, leaked), from sizes.c's table
want = [(0, 0, 3, 0, 0, 0), (1, 1, 10, 10, 0, 0), (16, 31, 7, 168, 0, 7), (64, 127, 5, 500, 0, 0),
        (4096, 8191, 2, 10000, 0, 1), (M, 2 * M - 1, 1, M, 1, 0)]
vg = env.valgrind_main([prog], env.fresh_dir("vg"))
r, rep = env.run_traced("sizes", [prog])
if rep:
    got = [(b["min_size"], b["max_size"], b["allocations"], b["bytes"], b["temporary"], b["leaked"])
           for b in rep["histogram"] if b["allocations"]]
    env.eq("JSON histogram: the program's sizes", got, want)
    first, last = rep["histogram"][0], rep["histogram"][-1]
    env.eq("JSON histogram: from the first bucket with allocations to the last",
           (first["min_size"], last["max_size"]), (0, 2 * M - 1))
    if vg:
        env.eq("the buckets add up to valgrind's allocations",
               sum(b["allocations"] for b in rep["histogram"]), vg["allocs"])
    trace = env.scratch + "/sizes/trace.zst"
    out = env.run_analyze(trace, "--histogram")
    text = out.stdout.decode()
    env.eq("--histogram exits 0", out.returncode, 0)
    env.check("--histogram: the header", text.startswith("ALLOCATION SIZES:"), text)
    rows = {l.split()[0]: l.split()[1:] for l in text.splitlines()[3:] if l.strip()}
    env.eq("--histogram: the 16..31 row (allocations, share, bytes, temporary, leaked)",
           rows.get("16..31"), ["7", "25.0%", "168", "0", "7"])
    env.eq("--histogram: the 1048576..2097151 row", rows.get("1048576..2097151"),
           ["1", "3.6%", "1048576", "1", "0"])
    env.eq("--histogram: an empty bucket between is listed", rows.get("32..63"),
           ["0", "0.0%", "0", "0", "0"])
    out = env.run_analyze(trace, "--histogram", "--json")
    env.eq("--histogram with --json: two outputs on stdout, a usage error", out.returncode, 2)
env.finish()
