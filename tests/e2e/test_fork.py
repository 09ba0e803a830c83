# SPDX-License-Identifier: MIT
# fork (tests/progs/forker.c): without --follow-children one trace with the parent's exact figures;
# with it, one more trace ctrack.forker.CHILDPID.zst beside the parent's, with the child's figures.
import os
import subprocess
import sys

import ctrack_test as ct

PARENT = {"allocations": 3, "frees": 2, "bytes_allocated": 3700, "leaked_bytes": 2000,
          "leaked_allocations": 1}
CHILD = {"allocations": 2, "frees": 1, "bytes_allocated": 700, "leaked_bytes": 300,
         "leaked_allocations": 1}

env = ct.Env(sys.argv)
prog = env.progs[0]
name = os.path.basename(prog)


def figures(rep):
    return {k: rep["summary"][k] for k in PARENT}


def child_pid(r):
    out = r.stdout.decode(errors="replace").strip()
    return int(out.split("=")[1]) if out.startswith("child=") else None


pid, figs, rc, out = env.valgrind_run([prog], env.fresh_dir("valgrind"))
vg = figs.get(pid)
if env.check("valgrind ran parent and child", rc == 0 and vg and len(figs) == 2, repr(figs)):
    env.eq("valgrind agrees with the parent's figures", (vg["allocs"], vg["frees"], vg["bytes"]),
           (3, 2, 3700))

# Without --follow-children: the child is untraced and never writes into the parent's file.
d = env.fresh_dir("nofollow")
r, files = env.run_ctrack([prog], d)
env.eq("nofollow: exit status", r.returncode, 0)
if env.eq("nofollow: exactly one trace file", len(files), 1):
    rep = env.report(os.path.join(d, files[0]))
    if rep:
        env.eq("nofollow: trace named after the parent", files[0],
               "ctrack.%s.%d.zst" % (name, rep["process"]["pid"]))
        env.eq("nofollow: complete", rep["complete"], True)
        env.eq("nofollow: parent's exact figures", figures(rep), PARENT)
        env.compare_valgrind(rep["summary"], vg, "nofollow: ")
        env.eq("nofollow: parent_leak", ct.sites(rep["leaks"], "parent_leak"), (2000, 1))


d = env.fresh_dir("follow")
# Default names in the cwd: the parent's is ctrack.forker.PID.zst, PID unknown until the report.
r, files = env.run_ctrack([prog], d, opts=("--follow-children",))
env.eq("follow: exit status", r.returncode, 0)
cpid = child_pid(r)
env.eq("follow: two trace files", len(files), 2)
child_name = "ctrack.%s.%d.zst" % (name, cpid) if cpid else None
env.check("follow: child trace is ctrack.NAME.CHILDPID.zst", child_name in files, repr(files))
for f in files:
    rep = env.report(os.path.join(d, f))
    if not rep:
        continue
    is_child = f == child_name
    label = "follow: %s trace" % ("child" if is_child else "parent")
    env.eq(label + " named after its pid", f, "ctrack.%s.%d.zst" % (name, rep["process"]["pid"]))
    env.eq(label + " complete", rep["complete"], True)
    env.eq(label + " exact figures", figures(rep), CHILD if is_child else PARENT)
    leak_fn, size = ("child_leak", 300) if is_child else ("parent_leak", 2000)
    env.eq(label + " " + leak_fn, ct.sites(rep["leaks"], leak_fn), (size, 1))

# With -o: the child's trace goes to the directory of the parent's trace, not the cwd.
d = env.fresh_dir("follow-o")
out = os.path.join(d, "out")
os.makedirs(out)
r, files = env.run_ctrack([prog], d, opts=("--follow-children", "-o", os.path.join(out, "p.zst")))
env.eq("follow -o: exit status", r.returncode, 0)
env.eq("follow -o: nothing written to the cwd", files, [])
cpid = child_pid(r)
have = sorted(os.listdir(out))
env.eq("follow -o: parent's file and the child's beside it", have,
       sorted(["p.zst", "ctrack.%s.%s.zst" % (name, cpid)]))
if os.path.exists(os.path.join(out, "p.zst")):
    rep = env.report(os.path.join(out, "p.zst"))
    if rep:
        env.eq("follow -o: parent's exact figures", figures(rep), PARENT)

# The closing message names the child's trace with its own summary; traces already in the directory
# before the run are not the run's.
d = env.fresh_dir("follow-message")
open(os.path.join(d, "ctrack.old.1.zst"), "w").close()
r = subprocess.run([env.ctrack, "--follow-children", "-o", os.path.join(d, "p.zst"), prog], cwd=d,
                   capture_output=True, timeout=60)
cpid = child_pid(r)
lines = r.stderr.decode(errors="replace").splitlines()
env.eq("message: one child trace listed", [line for line in lines if "child trace" in line],
       ["ctrack: 1 child trace in %s:" % os.path.realpath(d)])
env.eq("message: the child's summary",
       [line for line in lines if line.startswith("ctrack:   ")],
       ["ctrack:   ctrack.%s.%s.zst: lost %d bytes in 1 block (definitely lost); %d allocations, "
        "%d bytes allocated, peak %d bytes" % (name, cpid, CHILD["leaked_bytes"], CHILD["allocations"],
                                               CHILD["bytes_allocated"], 300 + 400)])  # child_leak's 300 and the 400 live together

# Many children (forker N: child k leaks 300 + 10 k bytes): the message lists the 10 that leaked
# most, most first, and counts the rest.
N = 12
d = env.fresh_dir("follow-many")
r = subprocess.run([env.ctrack, "--follow-children", "-o", os.path.join(d, "p.zst"), prog, str(N)], cwd=d,
                   capture_output=True, timeout=120)
pids = [int(l.split("=")[1]) for l in r.stdout.decode(errors="replace").split()]
lines = r.stderr.decode(errors="replace").splitlines()
if env.eq("many: forker ran %d children" % N, (r.returncode, len(pids)), (0, N)):
    leak = [300 + 10 * k for k in range(N)]
    shown = sorted(range(N), key=lambda k: -leak[k])[:10]
    env.eq("many: header", [l for l in lines if "child trace" in l],
           ["ctrack: %d child traces in %s; the 10 that leaked most:" % (N, os.path.realpath(d))])
    env.eq("many: the 10 that leaked most, most first",
           [l for l in lines if l.startswith("ctrack:   ctrack.")],
           ["ctrack:   ctrack.%s.%d.zst: lost %d bytes in 1 block (definitely lost); 2 allocations, "
            "%d bytes allocated, peak %d bytes" % (name, pids[k], leak[k], leak[k] + 400, leak[k] + 400)
            for k in shown])
    rest = [k for k in range(N) if k not in shown]
    env.eq("many: the rest counted", [l for l in lines if l.startswith("ctrack:   and ")],
           ["ctrack:   and %d more, which leaked %d bytes in all" % (len(rest), sum(leak[k] for k in rest))])
env.finish()
