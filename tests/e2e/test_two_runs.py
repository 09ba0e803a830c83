# SPDX-License-Identifier: MIT
# Two --follow-children runs in one directory at once (tests/progs/family.c brood: 5 children each,
# forked while the other run is going): each run lists its own 5 children, by the process chain its
# traces record, not every trace that appeared in the directory. And the traces of the images one
# process exec'd (family.c reexec 11: one pid, 12 images) sort by name in the order they ran.
import os
import re
import subprocess
import sys
import time

import ctrack_test as ct

N = 5
env = ct.Env(sys.argv)
prog = env.progs[0]
name = os.path.basename(prog)

d = env.fresh_dir("two")
runs = []
for k in range(2):
    runs.append(subprocess.Popen([env.ctrack, "--follow-children", "-o", os.path.join(d, "p%d.zst" % k), prog,
                                  "brood", str(N), "400"], cwd=d, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE))
    time.sleep(0.1)
for k, p in enumerate(runs):
    out, err = p.communicate(timeout=120)
    err = err.decode(errors="replace")
    pids = [int(l.split("=")[1]) for l in out.decode().split()]
    env.eq("run %d: exit 0 with %d children" % (k, N), (p.returncode, len(pids)), (0, N))
    env.eq("run %d: counts its own children" % k, [l for l in err.splitlines() if "child trace" in l],
           ["ctrack: %d child traces in %s:" % (N, os.path.realpath(d))])
    listed = sorted(int(m.group(1)) for m in re.finditer(r"ctrack:   ctrack\.%s\.(\d+)\.zst" % re.escape(name), err))
    env.eq("run %d: lists exactly its own children" % k, listed, sorted(pids))

# One process, 12 images: ctrack.NAME.PID.zst for the first the shim names, then .01, .02 ...: the
# numbered names sort in the order the images ran (.10 after .09, not after .1).
K = 11
d = env.fresh_dir("reexec")
r = subprocess.run([env.ctrack, "-q", "--follow-children", "-o", os.path.join(d, "p.zst"), prog, "reexec",
                    str(K)], cwd=d, capture_output=True, timeout=120)
env.eq("reexec: exit 0", r.returncode, 0)
numbered = sorted(f for f in os.listdir(d) if re.fullmatch(r"ctrack\..*\.\d+\.\d+\.zst", f))
env.eq("reexec: %d numbered traces" % (K - 1), len(numbered), K - 1)
order = []
for f in numbered:
    rep = env.report(os.path.join(d, f))
    order.append(int(rep["process"]["argv"][2]) if rep else None)
env.eq("reexec: sorted by name = the order the images ran", order, list(range(K - 2, -1, -1)))
env.finish()
