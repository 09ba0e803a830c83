# SPDX-License-Identifier: MIT
# Two runs with --force -o the same path at once (a make -j with a fixed name): the second replaces
# the first's file while the first program still runs. The first run sums up and checks its own
# trace, never the second's, and says that its file was replaced (tests/progs/family.c leak: the
# first program loses 4,321 bytes and outlives the second, which loses nothing).
import os
import subprocess
import sys
import time

import ctrack_test as ct

LOST = 4321

env = ct.Env(sys.argv)
prog = env.progs[0]

pid, figs, rc, out = env.valgrind_run([prog, "leak", str(LOST), "0"], env.fresh_dir("valgrind"))
if env.check("valgrind ran", rc == 0 and pid in figs, repr(figs)):
    env.eq("valgrind: 4,321 bytes definitely lost", figs[pid]["definitely_bytes"], LOST)

d = env.fresh_dir("race")
same = os.path.join(d, "same.zst")
first = subprocess.Popen([env.ctrack, "--force", "--check", "-o", same, prog, "leak", str(LOST), "2500"],
                         cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
time.sleep(0.5)  # the first program runs, its trace created
second = subprocess.run([env.ctrack, "--force", "--check", "-o", same, prog, "leak", "0", "100"], cwd=d,
                        capture_output=True, timeout=120)
out1, err1 = first.communicate(timeout=120)
err1 = err1.decode(errors="replace")
env.eq("the second run passes its check", second.returncode, 0)
env.eq("the first run fails its own check (exit 23)", first.returncode, 23)
env.check("the first run says its trace file was replaced", "replaced" in err1, err1)
env.check("the first run's summary is its own (4,321 bytes lost)", "ctrack: lost 4,321 bytes" in err1, err1)
env.check("the first run's verdict is its own", "check failed: %d bytes" % LOST in err1, err1)
rep = env.report(same)
if rep:
    env.eq("same.zst holds the second run's trace (nothing leaked)", rep["summary"]["leaked_bytes"], 0)
env.finish()
