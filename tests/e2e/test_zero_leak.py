# SPDX-License-Identifier: MIT
# A lost block of no bytes fails the check (tests/progs/zero_leak.c: one malloc(0) block, definitely
# lost, 0 bytes in 1 block as valgrind says): the leak rule counts blocks, not only bytes. Without
# --max-leaked, and with --max-leaked=0, nothing may be lost, not even a block of 0 bytes; an
# allowance of 1 byte or more holds it.
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog = env.progs[0]
d = env.fresh_dir("run")
vg = env.valgrind_main([prog], d)
if vg:
    env.eq("valgrind: 0 bytes in 1 block definitely lost",
           (vg["definitely_lost_bytes"], vg["definitely_lost_blocks"]), (0, 1))
trace = env.trace("zero", [prog])
rep = env.report(trace)
if rep and vg:
    s = rep["summary"]
    env.eq("plain report: definitely lost as valgrind's",
           (s["definitely_lost_bytes"], s["definitely_lost_blocks"]),
           (vg["definitely_lost_bytes"], vg["definitely_lost_blocks"]))

FAILED = "check failed: 0 bytes in 1 block definitely or indirectly lost; none allowed (--max-leaked 0)"
for opts, want in ((["--fail-on=definite"], 23), (["--max-leaked=0"], 23),
                   (["--fail-on=possible", "--max-leaked=0"], 23), (["--fail-on=any"], 23),
                   (["--max-leaked=1"], 0), (["--fail-on=any", "--max-leaked=1"], 0)):
    r = env.run_analyze(trace, *opts)
    out = r.stdout.decode(errors="replace")
    env.eq("%s: exit %d" % (" ".join(opts), want), r.returncode, want)
    if want:
        env.check("%s: the verdict names the block and lose_nothing" % " ".join(opts),
                  out.startswith("check failed: 0 bytes in 1 block") and "lose_nothing" in out, out)
    else:
        env.check("%s: the verdict counts the block" % " ".join(opts),
                  out.startswith("check passed: 0 bytes in 1 block"), out)
r = env.run_analyze(trace, "--fail-on=definite")
env.check("the verdict says no block is allowed", FAILED in r.stdout.decode(errors="replace"),
          r.stdout)
r, _ = env.run_ctrack([prog], d, opts=("--check", "--force", "-o", d + "/check.zst"))
env.eq("ctrack --check: exit 23", r.returncode, 23)
env.finish()
