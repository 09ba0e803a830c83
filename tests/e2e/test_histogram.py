# SPDX-License-Identifier: MIT
# The allocation size histogram (issue 24): tests/progs/sizes.c allocates known sizes (its comment's
# table); JSON's histogram and the text of --histogram give exactly those buckets, and the
# allocations add up to valgrind's total heap usage.
import os
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog, src = env.progs[0], env.progs[1]
ALLOC = ct.line_markers(src)["ALLOC"]
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
    # Each bucket's one top site: row() at the ALLOC line, with the bucket's allocations and bytes.
    tops = [[(t["allocations"], t["bytes"], t["frame"]["function"], os.path.basename(t["frame"]["file"]),
              t["frame"]["line"]) for t in b["top"]] for b in rep["histogram"] if b["allocations"]]
    env.eq("JSON histogram: each bucket's top site is row() with all its allocations", tops,
           [[(w[2], w[3], "row", "sizes.c", ALLOC)] for w in want])
    env.eq("JSON histogram: an empty bucket has no top site",
           [b["top"] for b in rep["histogram"] if not b["allocations"]][:1], [[]])
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
    lines = text.splitlines()
    at = [i for i, l in enumerate(lines) if l.startswith("16..31 ")]
    env.eq("--histogram: under the 16..31 row, its top site",
           lines[at[0] + 1].split(" at ")[0].split() if at else None, ["7", "from", "row"])
    env.check("--histogram: the site's place and bytes",
              bool(at) and lines[at[0] + 1].endswith(f"/sizes.c:{ALLOC} (168 bytes)"), lines[at[0] + 1] if at else text)
    out = env.run_analyze(trace, "--histogram", "--json")
    env.eq("--histogram with --json: two outputs on stdout, a usage error", out.returncode, 2)
env.finish()
