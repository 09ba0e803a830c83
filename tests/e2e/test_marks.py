# SPDX-License-Identifier: MIT
# Runtime control (include/ctrack/ctrack.h) on tests/progs/marks.c: ctrack_check_leaks()'s answer
# against the program's own figure and valgrind's definitely lost; the marks in the reports;
# --between warm,done (the per-request leak and nothing of the warm-up); a process killed after a
# check (its later blocks "unscanned"); the calls as no-ops without ctrack; and tests/progs/check_threads.c:
# forty checks in a row while four threads allocate, each answering the bytes lost.
import re
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog, src, check_threads, check_src = env.progs
LINES = ct.line_markers(src)
with open(src) as f:
    text = f.read()
C = {k: int(v) for k, v in re.findall(r"#define (\w+) (\d+)", text)}
REQUESTS, LEAK, AFTER = C["REQUESTS"], C["LEAK_SIZE"], C["AFTER"]
LOST = (REQUESTS + 1) * LEAK  # the warm-up's block and one per request

# Without ctrack: both calls do nothing; the check answers -1.
plain = subprocess.run([prog], capture_output=True, timeout=60)
env.eq("plain run: check answers -1", (plain.returncode, plain.stdout), (0, b"check: -1\n"))

# Under ctrack: the check's answer, the marks, the exit classes against valgrind.
d = env.fresh_dir("run")
trace = d + "/trace.zst"
r, _ = env.run_ctrack([prog], d, opts=("-o", trace))
env.eq("traced run: exit 0", r.returncode, 0)
env.eq("ctrack_check_leaks() = (REQUESTS + 1) * LEAK_SIZE", r.stdout, b"check: %d\n" % LOST)
vg = env.valgrind_main([prog], d)
if vg:
    env.eq("the check's bytes == valgrind's definitely lost", LOST, vg["definitely_lost_bytes"])
rep = env.report(trace)
if rep:
    env.eq("marks in order", [m["name"] for m in rep["marks"]], ["warm", "done"])
    times = [m["time_ns"] for m in rep["marks"]]
    env.check("mark times ascend", times == sorted(times), times)
    s = rep["summary"]
    env.eq("exit: definitely lost", (s["definitely_lost_bytes"], s["definitely_lost_blocks"]),
           (vg["definitely_lost_bytes"], vg["definitely_lost_blocks"]) if vg else None)
    env.check("exit: no unscanned kind after the exit scan", "unscanned_bytes" not in s, s)
text_report = env.run_analyze(trace).stdout.decode()
env.check("text report lists the marks", re.search(r"^marks: warm at [\d.]+ s, done at [\d.]+ s$",
                                                   text_report, re.M), text_report[:600])

# --between warm,done: REQUESTS leaks of LEAK bytes at LINE LEAK (called from handle), and the
# allocations of the requests: a temporary and a leak each.
b = env.run_analyze(trace, "--json", "--between", "warm,done")
env.eq("--between: exit 0", b.returncode, 0)
if b.returncode == 0:
    import json
    j = json.loads(b.stdout)
    leaks = j["leaks"]
    env.eq("--between: one leak entry", len(leaks), 1)
    if leaks:
        f = leaks[0]["frames"]
        env.eq("--between: the leak's site and size",
               (f[0]["function"], f[0]["line"], f[1]["function"], leaks[0]["bytes"],
                leaks[0]["allocations"]),
               ("lose", LINES["LEAK"], "handle", REQUESTS * LEAK, REQUESTS))
    env.eq("--between: allocations and temporaries made between the marks",
           (j["summary"]["allocations"], j["summary"]["temporary_allocations"], j["summary"]["frees"]),
           (2 * REQUESTS, REQUESTS, REQUESTS))
    env.eq("--between: named in the JSON", (j["between"]["from"], j["between"]["to"]), ("warm", "done"))
for arg, want in (("warm,nowhere", "no mark 'nowhere' after mark 'warm'"), ("nowhere,done", "no mark 'nowhere' in"),
                  ("done,warm", "no mark 'warm' after mark 'done'")):
    e = env.run_analyze(trace, "--between", arg)
    env.check("--between %s: exit 1, one line" % arg,
              e.returncode == 1 and want in e.stderr.decode() and e.stderr.count(b"\n") == 1, e.stderr)
e = env.run_analyze(trace, "--between", "warm")
env.eq("--between without a comma: usage error", e.returncode, 2)

# Killed after the check: the AFTER blocks allocated since were never scanned.
d = env.fresh_dir("kill")
trace = d + "/trace.zst"
r, _ = env.run_ctrack([prog, "kill"], d, opts=("-o", trace))
env.eq("killed run: SIGKILL's status", r.returncode, 128 + 9)
rep = env.report(trace)
if rep:
    s = rep["summary"]
    env.eq("killed: the check's classes stand",
           (s["definitely_lost_bytes"], s["definitely_lost_blocks"]), (LOST, REQUESTS + 1))
    env.eq("killed: unscanned blocks", (s.get("unscanned_bytes"), s.get("unscanned_blocks")),
           (48 * AFTER, AFTER))
    kinds = [e["kind"] for e in rep["leaks"]]
    env.check("killed: an unscanned leak entry", "unscanned" in kinds, kinds)
    f = subprocess.run([env.analyze, "--fail-on=definite", trace], capture_output=True, timeout=60)
    env.eq("killed: --fail-on=definite counts the check's lost blocks", f.returncode, 23)
    ok = subprocess.run([env.analyze, "--fail-on=definite", "--max-leaked=%d" % LOST, trace],
                        capture_output=True, timeout=60)
    env.eq("killed: --max-leaked at the lost bytes passes (unscanned count only at reachable)",
           ok.returncode, 0)

# Checks over and over while threads allocate: each stops the others and lets them go; every answer is
# the bytes main lost, and the process lives through them all (a check that found the counts of the
# one before it once let SIGRTMAX's default action end the process).
with open(check_src) as f:
    K = {k: int(v) for k, v in re.findall(r"#define (\w+) (\d+)", f.read())}
d = env.fresh_dir("checks")
r, _ = env.run_ctrack([check_threads], d, opts=("-o", d + "/trace.zst"))
env.eq("checks in a row: exit 0", r.returncode, 0)
env.eq("checks in a row: each answers LOST * LEAK_SIZE", r.stdout,
       b"checks:" + b" %d" % (K["LOST"] * K["LEAK_SIZE"]) * K["CHECKS"] + b"\n")

env.finish()
