# SPDX-License-Identifier: MIT
# The time window (ctrack-analyze --from/--to, and --between's marks) on tests/progs/window.c: its
# phase 1 (A_COUNT blocks of A_SIZE, all freed) and phase 2 (B_COUNT blocks of B_SIZE, kept) windowed
# by the marks' times and by times in the program's pauses; every figure is the program's own
# constants. Also: a bound past the run's end, a bound left out, the text report's window line, and
# the checks refused with a window.
import json
import re
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog, src = env.progs
with open(src) as f:
    C = {k: int(v) for k, v in re.findall(r"#define (\w+) (\d+)", f.read())}
A_N, A_SIZE, B_N, B_SIZE, PAUSE = C["A_COUNT"], C["A_SIZE"], C["B_COUNT"], C["B_SIZE"], C["PAUSE_MS"]
A, B = A_N * A_SIZE, B_N * B_SIZE

trace = env.trace("run", [prog])
rep = env.report(trace)
if not rep:
    env.finish()
marks = {m["name"]: m["time_ns"] // 1000 for m in rep["marks"]}
env.eq("the program's marks", sorted(marks), ["end", "phase1", "phase2"])
t1, t2, t3 = marks["phase1"], marks["phase2"], marks["end"]
margin = PAUSE * 1000 // 2  # half a pause, in us: well inside the program's sleeps


def window(*args):
    """ctrack-analyze --json ARGS TRACE: the parsed report, or None (a failed check)."""
    r = env.run_analyze(trace, "--json", *args)
    if not env.check("%s: exit 0" % " ".join(args), r.returncode == 0, r.stderr):
        return None, r
    return json.loads(r.stdout), r


def figures(j):
    """(allocations, frees, bytes allocated, growth bytes, growth blocks, live at the end) and the
    sites of each phase in the allocation and leak lists."""
    s, w = j["summary"], j["window"]
    return {
        "summary": (s["allocations"], s["frees"], s["bytes_allocated"], s["leaked_bytes"],
                    s["leaked_allocations"], w["live_at_end_bytes"], w["live_at_end_blocks"]),
        "allocated": (ct.sites(j["allocations"], "phase_a"), ct.sites(j["allocations"], "phase_b")),
        "grown": (ct.sites(j["leaks"], "phase_a"), ct.sites(j["leaks"], "phase_b")),
    }


# Each phase by the marks' times, and by times in the middle of the pauses around it.
PHASE1 = {"summary": (A_N, A_N, A, 0, 0, 0, 0), "allocated": ((A, A_N), (0, 0)),
          "grown": ((0, 0), (0, 0))}
PHASE2 = {"summary": (B_N, 0, B, B, B_N, B, B_N), "allocated": ((0, 0), (B, B_N)),
          "grown": ((0, 0), (B, B_N))}
AFTER = {"summary": (0, 0, 0, 0, 0, B, B_N), "allocated": ((0, 0), (0, 0)), "grown": ((0, 0), (0, 0))}
BEFORE = {"summary": (0, 0, 0, 0, 0, 0, 0), "allocated": ((0, 0), (0, 0)), "grown": ((0, 0), (0, 0))}
cases = [
    ("phase 1 by its marks", ("--from", "%dus" % t1, "--to", "%dus" % t2), PHASE1, (t1, t2)),
    ("phase 1 by the pauses", ("--from", "%dus" % (t1 - margin), "--to", "%dus" % (t1 + margin)), PHASE1,
     (t1 - margin, t1 + margin)),
    ("phase 2 by its marks", ("--from", "%dus" % t2, "--to", "%dus" % t3), PHASE2, (t2, t3)),
    ("phase 2 by the pauses", ("--from=%dus" % (t2 - margin), "--to=%dus" % (t2 + margin)), PHASE2,
     (t2 - margin, t2 + margin)),
    ("phase 2 to the end (--to left out)", ("--from", "%dus" % (t2 - margin)), PHASE2, (t2 - margin, None)),
    ("after phase 2", ("--from", "%dus" % (t2 + margin)), AFTER, (t2 + margin, None)),
    ("before phase 1 (--from left out)", ("--to", "%dus" % (t1 - margin)), BEFORE, (0, t1 - margin)),
    ("both phases", ("--to", "%dus" % (t3 + margin)), {
        "summary": (A_N + B_N, A_N, A + B, B, B_N, B, B_N), "allocated": ((A, A_N), (B, B_N)),
        "grown": ((0, 0), (B, B_N))}, (0, t3 + margin)),
]
for name, args, want, (lo, hi) in cases:
    j, _ = window(*args)
    if not j:
        continue
    env.eq(name + ": figures", figures(j), want)
    w = j["window"]
    env.eq(name + ": window bounds", (w["from_us"], w["to_us"], w["from_mark"], w["past_end"]),
           (lo, w["runtime_us"] if hi is None else hi, None, False))

# --between's marks fill the same window object.
j, _ = window("--between", "phase2,end")
if j:
    env.eq("--between phase2,end: figures", figures(j), PHASE2)
    env.eq("--between: the window names the marks",
           (j["window"]["from_mark"], j["window"]["to_mark"], j["window"]["from_us"], j["window"]["to_us"]),
           ("phase2", "end", t2, t3))

# A bound past the end: the end, and one line on stderr.
j, r = window("--from", "%dus" % t2, "--to", "1000s")
if j:
    env.eq("past the end: figures as to the end", figures(j), PHASE2)
    env.eq("past the end: flagged, ends at the run's end",
           (j["window"]["past_end"], j["window"]["to_us"]), (True, j["window"]["runtime_us"]))
    err = r.stderr.decode()
    env.check("past the end: one warning line", err.count("\n") == 1 and "past the end" in err, err)

# The text report's header says the window and what was live at its end.
r = env.run_analyze(trace, "--from", "%dus" % t2, "--to", "%dus" % t3)
text = r.stdout.decode()
env.check("text: the window line", re.search(r"^window: %.3f s to %.3f s of [\d.]+ s" % (t2 / 1e6, t3 / 1e6),
                                             text, re.M), text[:800])
env.check("text: live at the window's end", re.search(r"^live at %.3f s: %d bytes .*in %d allocations$" %
                                                      (t3 / 1e6, B, B_N), text, re.M), text[:800])
env.check("text: allocations in the window", re.search(r"^calls to allocation functions: %d\b" % B_N, text,
                                                       re.M), text[:800])

# The checks judge a whole run: refused with a window (usage error).
for extra in (("--fail-on", "reachable"), ("--max-leaked", "1000"), ("--baseline", trace)):
    r = env.run_analyze(trace, "--from", "1ms", *extra)
    env.eq("--from with %s: usage error" % extra[0], r.returncode, 2)
r = env.run_analyze(trace, "--from", "2s", "--to", "1s")
env.eq("--from after --to: usage error", r.returncode, 2)
env.finish()
