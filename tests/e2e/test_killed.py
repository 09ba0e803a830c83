# SPDX-License-Identifier: MIT
# A process killed with SIGKILL (tests/progs/killed.c): its trace is readable, "complete": false
# with a warning on stderr and exit 0, and holds the allocations made >= 0.5 s before the kill; a
# check of it never passes (no scan, figures cut), though a rule broken by what was read fails.
import os
import signal
import subprocess
import sys
import time

import ctrack_test as ct

env = ct.Env(sys.argv)
prog = env.progs[0]


def check_trace(label, trace):
    r = env.run_analyze(trace, "--json")
    env.eq(label + ": analyzer exit status", r.returncode, 0)
    # No scan ran and the figures stop at the kill: a check broken by nothing read still never passes.
    c = env.run_analyze(trace, "--max-peak", "1GiB")
    env.eq(label + ": --max-peak under the figures read: not a pass (exit 1)", c.returncode, 1)
    env.check(label + ": ... it says the trace ends early", b"check incomplete" in c.stdout + c.stderr,
              (c.stdout + c.stderr)[-400:])
    c = env.run_analyze(trace, "--max-peak", "1000")
    env.eq(label + ": --max-peak broken by what was read: exit 23", c.returncode, 23)
    env.check(label + ": analyzer warns on stderr", r.stderr.strip() != b"", "stderr empty")
    rep = env.report(trace)
    if not rep:
        return
    s = rep["summary"]
    env.eq(label + ": complete", rep["complete"], False)
    env.check(label + ": allocations in [100, 110]", 100 <= s["allocations"] <= 110,
              "got %d" % s["allocations"])
    env.check(label + ": bytes in [100000, 110000]", 100000 <= s["bytes_allocated"] <= 110000,
              "got %d" % s["bytes_allocated"])
    env.eq(label + ": no frees", s["frees"], 0)
    env.eq(label + ": early_blocks all live", ct.sites(rep["leaks"], "early_blocks"),
           (100000, 100))
    env.eq(label + ": process argv", rep["process"]["argv"][0], prog)


# The program kills itself 1 s after its first 100 blocks.
d = env.fresh_dir("self")
trace = os.path.join(d, "trace.zst")
r, _ = env.run_ctrack([prog], d, opts=("-o", trace))
env.eq("self: ctrack exits 128 + SIGKILL", r.returncode, 128 + signal.SIGKILL)
if env.check("self: trace written", os.path.exists(trace)):
    check_trace("self", trace)

# The test kills it, 0.6 s after it said it had made its 100 blocks.
d = env.fresh_dir("external")
trace = os.path.join(d, "trace.zst")
p = subprocess.Popen([env.ctrack, "-q", "-o", trace, prog, "wait"], cwd=d,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=ct.no_core)
line = p.stdout.readline().decode().split()
if env.check("external: program ready", len(line) == 2 and line[0] == "ready", repr(line)):
    time.sleep(0.6)
    os.kill(int(line[1]), signal.SIGKILL)
try:
    rc = p.wait(timeout=30)
except subprocess.TimeoutExpired:
    p.kill()
    rc = p.wait()
env.eq("external: ctrack exits 128 + SIGKILL", rc, 128 + signal.SIGKILL)
if env.check("external: trace written", os.path.exists(trace)):
    check_trace("external", trace)
env.finish()
