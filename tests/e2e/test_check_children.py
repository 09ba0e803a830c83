# SPDX-License-Identifier: MIT
# --check with --follow-children checks every traced process, as LeakSanitizer does
# (tests/progs/family.c leaky-child: the parent frees all it allocates, its forked child loses
# 13,370 bytes): ctrack fails (23) and names the child that failed (program, pid, trace); the
# program's own failure still wins; a family that leaks nothing passes.
import os
import subprocess
import sys

import ctrack_test as ct

LOST = 13370  # the child's malloc(13370), its only pointer overwritten (family.c)

env = ct.Env(sys.argv)
prog = env.progs[0]
name = os.path.basename(prog)

# valgrind: the child definitely loses 13,370 bytes, the parent nothing.
pid, figs, rc, out = env.valgrind_run([prog, "leaky-child"], env.fresh_dir("valgrind"))
kids = [f for p, f in figs.items() if p != pid]
if env.check("valgrind ran parent and child", rc == 0 and pid in figs and len(kids) == 1, repr(figs)):
    env.eq("valgrind: the parent loses nothing", figs[pid]["definitely_bytes"], 0)
    env.eq("valgrind: the child definitely loses 13,370 bytes", kids[0]["definitely_bytes"], LOST)


def run(d, *opts, status=None):
    args = [prog, "leaky-child"] + ([str(status)] if status is not None else [])
    r = subprocess.run([env.ctrack, *opts, "-o", os.path.join(d, "p.zst"), *args], cwd=d,
                       capture_output=True, timeout=120)
    out = r.stdout.decode(errors="replace")
    cpid = int(out.split("=")[1]) if out.startswith("child=") else None
    return r, cpid, r.stderr.decode(errors="replace")


# Without --follow-children the child is not traced: only the parent is checked, and it passes.
d = env.fresh_dir("nofollow")
r, cpid, err = run(d, "--check")
env.eq("nofollow: the parent passes (exit 0)", r.returncode, 0)

# With it, the child's leak fails the check, and the verdict names the child.
d = env.fresh_dir("follow")
r, cpid, err = run(d, "--follow-children", "--check")
child_trace = os.path.join(os.path.realpath(d), "ctrack.%s.%s.zst" % (name, cpid))
env.eq("follow: the child's leak fails the check (exit 23)", r.returncode, 23)
env.check("follow: the child's trace is beside the parent's", cpid and os.path.exists(child_trace),
          repr(os.listdir(d)))
env.check("follow: the failing process is named (program, pid, trace)",
          any(name in l and "pid %s" % cpid in l and child_trace in l and "failed" in l
              for l in err.splitlines()), err)
env.check("follow: the child's verdict shows its 13,370 bytes",
          "check failed: %d bytes" % LOST in err, err)

# -q: no closing message, the same verdict and status.
d = env.fresh_dir("follow-quiet")
r, cpid, err = run(d, "-q", "--follow-children", "--check")
env.eq("follow -q: exit 23", r.returncode, 23)
env.check("follow -q: the child is named", cpid and "pid %s" % cpid in err, err)

# The program's own failure wins, as for the parent alone.
d = env.fresh_dir("follow-status")
r, cpid, err = run(d, "--follow-children", "--check", status=3)
env.eq("follow: the program's status wins over the child's leak", r.returncode, 3)

# A family that leaks nothing passes: reexec 2 is one process in three images, none allocates.
d = env.fresh_dir("clean")
r = subprocess.run([env.ctrack, "--follow-children", "--check", "-o", os.path.join(d, "p.zst"), prog,
                    "reexec", "2"], cwd=d, capture_output=True, timeout=120)
env.eq("clean family: exit 0", r.returncode, 0)
env.check("clean family: check passed", b"check passed" in r.stderr, r.stderr[-800:])
env.finish()
