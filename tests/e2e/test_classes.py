# SPDX-License-Identifier: MIT
# Leak classes equal to memcheck's LEAK SUMMARY, byte for byte and block for block: the shim scans
# the program's memory at exit, and ctrack-analyze reports definitely, indirectly and possibly lost
# and still reachable. Programs: leak_classes (every shape of memcheck's manual, TLS, the new[]
# heuristic), cxx (a C++ program's leaks through new and new[]), hooks (every allocation function),
# leak_thread (a thread still running at exit, stopped for the scan), threads (8 threads that ended).
# Then the offline CI check on that real trace: --fail-on levels and --max-leaked around the
# figures valgrind gave.
import os
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
KEYS = [k + s for k in ("definitely_lost", "indirectly_lost", "possibly_lost", "still_reachable")
        for s in ("_bytes", "_blocks")]

first = None
for prog in env.progs:
    name = os.path.basename(prog)
    d = env.fresh_dir(name)
    vg = env.valgrind_main([prog], d)
    r, rep = env.run_traced(name + "-traced", [prog])
    env.eq(name + ": exit status", r.returncode, 0)
    if not rep or not vg:
        continue
    s = rep["summary"]
    env.eq(name + ": the leak classes are memcheck's LEAK SUMMARY", [s.get(k) for k in KEYS],
           [vg[k] for k in KEYS])
    env.check(name + ": every leak entry has its class",
              all(e.get("kind") in ("definite", "indirect", "possible", "reachable") for e in rep["leaks"]))
    if first is None:
        first = (os.path.join(env.scratch, name + "-traced", "trace.zst"), vg)

if first:
    trace, vg = first
    lost = vg["definitely_lost_bytes"] + vg["indirectly_lost_bytes"]
    possible = lost + vg["possibly_lost_bytes"]
    cases = [
        (("--fail-on=definite",), 23 if lost else 0),
        (("--max-leaked=%d" % lost,), 0),
        (("--max-leaked=%d" % (lost - 1),), 23 if lost else 2),
        (("--fail-on=possible", "--max-leaked=%d" % (possible - 1)), 23),
        (("--fail-on=possible", "--max-leaked=%d" % possible), 0),
        (("--fail-on=any", "--max-leaked=%d" % possible), 23 if vg["still_reachable_bytes"] else 0),
    ]
    for opts, want in cases:
        r = env.run_analyze(trace, *opts)
        env.eq("check %s: exit status" % " ".join(opts), r.returncode, want)
# ctrack --check: the same rules right after the run. The program's own failure wins over the leaks.
leaky = env.progs[0]
d = env.fresh_dir("check")
for opts, want in [(("--check",), 23 if first and lost else 0),
                   (("--fail-on=possible", "--max-leaked=%d" % possible), 0) if first else ((), 0),
                   (("--check", "--max-leaked=1.5XB"), 2)]:
    r, _ = env.run_ctrack([leaky], d, opts=(*opts, "--force", "-o", os.path.join(d, "t.zst")))
    env.eq("ctrack %s: exit status" % " ".join(opts), r.returncode, want)
# Suppressions: leak_classes.c loses every definitely and indirectly lost block in lose() (its
# comment), so `leak:lose` takes them all (valgrind's figures), and the check passes; a pattern that
# matches nothing is named.
supp = os.path.join(d, "supp.txt")
with open(supp, "w") as f:
    f.write("# leak_classes.c's lost shapes\nleak:^lose$\nleak:no_such_function\n")
if first:
    r = env.run_analyze(trace, "--suppressions", supp, "--fail-on=definite")
    out = r.stdout.decode(errors="replace")
    env.eq("ctrack-analyze --suppressions: the lost blocks suppressed, the check passes", r.returncode, 0)
    env.check("the suppression's take is reported",
              "suppressed by leak:^lose$ (%s:2): %d bytes in %d blocks" % (
                  supp, lost, vg["definitely_lost_blocks"] + vg["indirectly_lost_blocks"]) in out, out)
    env.check("the suppression that matched nothing is named",
              "suppression leak:no_such_function (%s:3) matched nothing" % supp in out, out)
    r = env.run_analyze(trace, "--suppressions", supp, "--fail-on=possible")
    env.eq("suppressed, but the possibly lost blocks still fail --fail-on=possible", r.returncode,
           23 if vg["possibly_lost_bytes"] else 0)
r, _ = env.run_ctrack([leaky], d, opts=("--suppressions", supp, "--force", "-o", os.path.join(d, "t.zst")))
env.eq("ctrack --suppressions: the check passes", r.returncode, 0)
with open(os.path.join(d, "bad.txt"), "w") as f:
    f.write("race:foo\n")
r = env.run_analyze(os.path.join(d, "t.zst"), "--suppressions", os.path.join(d, "bad.txt"))
env.eq("a suppressions file with another sanitizer's line: exit 2", r.returncode, 2)
# The program's own suppressions (lsan_supp.c: __lsan_default_suppressions takes cached_forever's 64
# bytes; real_leak's 32 stay definitely lost).
lsan = os.path.join(os.path.dirname(leaky), "e2e-lsan_supp")
r, _ = env.run_ctrack([lsan], d, opts=("--check", "--force", "-o", os.path.join(d, "l.zst")))
err = r.stderr.decode(errors="replace")
env.eq("the program's own suppressions: real_leak still fails the check", r.returncode, 23)
env.check("the program's suppression is named with its take",
          "suppressed by leak:cached_forever (__lsan_default_suppressions:2): 64 bytes in 1 block" in err, err)
env.check("the failing leak is real_leak's 32 bytes", "32 bytes in 1 block definitely" in err, err)
with open(os.path.join(d, "real.txt"), "w") as f:
    f.write("leak:real_leak\n")
r = env.run_analyze(os.path.join(d, "l.zst"), "--fail-on=definite", "--suppressions", os.path.join(d, "real.txt"))
env.eq("the program's and a file's suppressions together: the check passes", r.returncode, 0)
r, _ = env.run_ctrack(["sh", "-c", "exit 3"], d, opts=("--check", "--force", "-o", os.path.join(d, "s.zst")))
env.eq("ctrack --check of a program that fails: the program's status", r.returncode, 3)
env.finish()
