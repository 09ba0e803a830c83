# SPDX-License-Identifier: MIT
# The built-in suppressions (tests/progs/runtime_keeps.c): the checks count only the program's own
# lost block (OWN bytes, from its source) at every level, while --no-builtin-suppressions counts what
# the runtime keeps, as valgrind sees it (its still reachable and possibly lost bytes are not zero);
# a plain report keeps memcheck's classes.
import re
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog, src = env.progs
with open(src) as f:
    OWN = int(re.search(r"#define OWN (\d+)", f.read()).group(1))
d = env.fresh_dir("run")
trace = d + "/trace.zst"
r, _ = env.run_ctrack([prog], d, opts=("-o", trace))
env.eq("traced run exits 0", r.returncode, 0)


def analyze(*args):
    p = subprocess.run([env.analyze, *args, trace], capture_output=True, timeout=120)
    return p.returncode, p.stdout.decode()


vg = env.valgrind_main([prog], d)
if vg:
    env.eq("valgrind: definitely lost is the program's own block", vg["definitely_lost_bytes"], OWN)
    env.check("valgrind: the runtime keeps blocks (still reachable or possibly lost)",
              vg["still_reachable_bytes"] + vg["possibly_lost_bytes"] > 0, vg)

for level in ("definite", "possible", "reachable", "any"):
    rc, out = analyze("--fail-on=" + level, "--max-leaked=%d" % OWN)
    env.eq("--fail-on=%s --max-leaked=OWN: passes with the built-in list" % level, rc, 0)
    rc, out = analyze("--fail-on=" + level, "--max-leaked=%d" % (OWN - 1))
    env.check("--fail-on=%s --max-leaked=OWN-1: the own block fails, alone" % level,
              rc == 23 and "check failed: %d bytes in 1 block" % OWN in out, out[-600:])
rc, out = analyze("--fail-on=any", "--max-leaked=%d" % OWN, "--no-builtin-suppressions")
env.eq("--no-builtin-suppressions: the runtime's blocks fail --fail-on=any", rc, 23)
env.check("built-in matches are named", re.search(r"^suppressed by leak:\^setlocale\$ \(built-in:\d+\)", analyze(
    "--fail-on=any", "--max-leaked=1GiB")[1], re.M))
rep = env.report(trace)
if rep and vg:
    s = rep["summary"]
    env.eq("plain report: definitely lost as valgrind", s["definitely_lost_bytes"], vg["definitely_lost_bytes"])
    env.check("plain report: still reachable kept (no suppression)", s["still_reachable_bytes"] > 0, s)
# ctrack --check applies them too
r, _ = env.run_ctrack([prog], d, opts=("-o", d + "/check.zst", "--check", "--fail-on=any",
                                        "--max-leaked=%d" % OWN))
env.eq("ctrack --check --fail-on=any --max-leaked=OWN: exit 0", r.returncode, 0)
r, _ = env.run_ctrack([prog], d, opts=("-o", d + "/check2.zst", "--check", "--fail-on=any",
                                        "--max-leaked=%d" % OWN, "--no-builtin-suppressions"))
env.eq("ctrack --check --no-builtin-suppressions: exit 23", r.returncode, 23)
env.finish()
