# SPDX-License-Identifier: MIT
# exec (tests/progs/execer.c runs tests/progs/exec_target.c): without --follow-children one
# trace, the first image's, complete; with it, the exec'd image writes its own trace as well.
import os
import subprocess
import sys

import ctrack_test as ct

EXECER = {"allocations": 2, "frees": 1, "bytes_allocated": 333}
TARGET = {"allocations": 3, "frees": 2, "bytes_allocated": 999, "leaked_bytes": 333,
          "leaked_allocations": 1}

env = ct.Env(sys.argv)
execer, target = env.progs[0], env.progs[1]
ename, tname = os.path.basename(execer), os.path.basename(target)


def pick(rep, keys):
    return {k: rep["summary"][k] for k in keys}


def check_execer(label, rep, argv):
    env.eq(label + ": first image complete", rep["complete"], True)
    env.eq(label + ": first image's figures", pick(rep, EXECER), EXECER)
    env.eq(label + ": first image's argv", rep["process"]["argv"], argv)
    # Still live when the image was replaced: 111 bytes (exec_leak).
    env.eq(label + ": live at exec", ct.sites(rep["leaks"], "exec_leak"), (111, 1))


vg = env.valgrind_main([target], env.fresh_dir("valgrind"))
if vg:
    env.eq("valgrind agrees with exec_target", (vg["allocs"], vg["frees"], vg["bytes"]),
           (3, 2, 999))

argv = [execer, target, "arg one"]
d = env.fresh_dir("nofollow")
r, files = env.run_ctrack(argv, d)
env.eq("nofollow: exit status of the exec'd program", r.returncode, 0)
if env.eq("nofollow: one trace, the first image's", len(files), 1):
    rep = env.report(os.path.join(d, files[0]))
    if rep:
        env.eq("nofollow: named after the first image",
               files[0], "ctrack.%s.%d.zst" % (ename, rep["process"]["pid"]))
        check_execer("nofollow", rep, argv)

# The closing message says which program the process became, and that it was not traced.
d = env.fresh_dir("hint")
r = subprocess.run([env.ctrack, *argv], cwd=d, capture_output=True, timeout=120)
env.eq("nofollow: closing message names the untraced exec",
       b"ctrack: the program then ran '%s' (exec), which was not traced" % target.encode() in r.stderr, True)
r = subprocess.run([env.ctrack, "--follow-children", *argv], cwd=d, capture_output=True, timeout=120)
env.eq("follow: no such hint", b"(exec), which was not traced" in r.stderr, False)

d = env.fresh_dir("follow")
r, files = env.run_ctrack(argv, d, opts=("--follow-children",))
env.eq("follow: exit status", r.returncode, 0)
env.eq("follow: two traces", len(files), 2)
first = [f for f in files if f.startswith("ctrack.%s." % ename)]
second = [f for f in files if f.startswith("ctrack.%s." % tname)]
if env.eq("follow: one trace of each image", (len(first), len(second)), (1, 1)):
    rep1 = env.report(os.path.join(d, first[0]))
    rep2 = env.report(os.path.join(d, second[0]))
    if rep1:
        check_execer("follow", rep1, argv)
    if rep2:
        env.eq("follow: exec'd image complete", rep2["complete"], True)
        env.eq("follow: exec'd image's figures", pick(rep2, TARGET), TARGET)
        env.compare_valgrind(rep2["summary"], vg, "follow: exec'd image: ")
        env.eq("follow: exec'd image's argv", rep2["process"]["argv"], [target, "arg one"])
        env.eq("follow: target_leak", ct.sites(rep2["leaks"], "target_leak"), (333, 1))
        env.eq("follow: exec'd trace named ctrack.NAME.PID.zst", second[0],
               "ctrack.%s.%d.zst" % (tname, rep2["process"]["pid"]))
    if rep1 and rep2:
        env.eq("follow: exec keeps the pid", rep2["process"]["pid"], rep1["process"]["pid"])
env.finish()
