# SPDX-License-Identifier: MIT
# --follow-children with a daemon (tests/progs/family.c daemon: a double fork, the daemon sleeps on
# after the program exits): ctrack closes while the daemon still writes its trace, and says that it
# is still running, not that its trace is truncated or empty.
import os
import subprocess
import sys
import time

import ctrack_test as ct

env = ct.Env(sys.argv)
prog = env.progs[0]
name = os.path.basename(prog)

d = env.fresh_dir("daemon")
r = subprocess.run([env.ctrack, "--follow-children", "-o", os.path.join(d, "p.zst"), prog, "daemon", "3000"],
                   cwd=d, capture_output=True, timeout=120)
out = r.stdout.decode(errors="replace")
dpid = int(out.split("=")[1]) if out.startswith("daemon=") else None
err = r.stderr.decode(errors="replace")
env.eq("the program exits 0", r.returncode, 0)
line = [l for l in err.splitlines() if dpid and "ctrack.%s.%d.zst" % (name, dpid) in l]
if env.check("the daemon's trace is listed", len(line) == 1, err):
    env.check("the daemon is still running", "still running" in line[0], line[0])
    env.check("not truncated nor empty", "truncated" not in line[0] and "wrote nothing" not in line[0],
              line[0])

# The daemon ends on its own; its trace is then whole.
deadline = time.time() + 30
while dpid and os.path.exists("/proc/%d" % dpid) and time.time() < deadline:
    time.sleep(0.1)
if dpid:
    rep = env.report(os.path.join(d, "ctrack.%s.%d.zst" % (name, dpid)))
    if rep:
        env.eq("the daemon's trace is complete once it ended", rep["complete"], True)
env.finish()
