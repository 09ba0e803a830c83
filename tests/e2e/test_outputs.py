# SPDX-License-Identifier: MIT
# Where a trace cannot go: `-o` naming a FIFO, a device node or a directory is refused with one line
# that names what it is, with or without --force, and the file is left as it was (never unlinked,
# never opened: a FIFO without a reader would block). A full file system: the program's status
# stays ctrack's, and the closing message names the write error (a 64 KiB tmpfs; needs root).
# The device node and the tmpfs are made in the scratch directory, never /dev/null itself.
import os
import stat
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
trickle = env.progs[0]  # tests/progs/trickle.c: 600 allocations over ~0.6 s
d = env.fresh_dir("special")


def ctrack(args, cwd):
    return subprocess.run([env.ctrack, *args], cwd=cwd, capture_output=True, timeout=60,
                          preexec_fn=ct.no_core)


def refused(label, path, what, identity):
    """-o path, with and without --force: exit 1, one line naming what path is, the program not
    run, path still the same file (identity(st) unchanged)."""
    before = identity(os.lstat(path))
    ran = os.path.join(d, "ran")
    for opts in ([], ["--force"]):
        lab = "%s%s" % (label, " --force" if opts else "")
        r = ctrack([*opts, "-o", path, "touch", ran], d)
        env.eq(lab + ": exit 1", r.returncode, 1)
        env.eq(lab + ": the reason", r.stderr.decode(errors="replace"),
               "ctrack: cannot create '%s': it is %s; traces go to regular files only, and --force "
               "never replaces anything else\n" % (path, what))
        env.check(lab + ": the program did not run", not os.path.exists(ran))
        env.eq(lab + ": the file is untouched", identity(os.lstat(path)), before)


fifo = os.path.join(d, "fifo")
os.mkfifo(fifo, 0o600)
refused("-o FIFO", fifo, "a FIFO", lambda st: (stat.S_ISFIFO(st.st_mode), st.st_ino))

if os.geteuid() == 0:
    node = os.path.join(d, "null-copy")
    os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # /dev/null's numbers, in scratch
    refused("-o character device", node, "a character device",
            lambda st: (stat.S_ISCHR(st.st_mode), st.st_rdev, st.st_ino))
else:
    print("SKIP the device node part: mknod needs root (the FIFO and directory parts ran)")

adir = os.path.join(d, "adir")
os.mkdir(adir)
refused("-o directory", adir, "a directory", lambda st: (stat.S_ISDIR(st.st_mode), st.st_ino))


# ---- a full file system ----

def on_full_disk(mnt, fill, label):
    """trickle traced into mnt, after `fill` bytes of another file: (completed, trace path)."""
    with open(os.path.join(mnt, "fill"), "wb") as f:
        try:
            f.write(b"\0" * fill)
        except OSError:
            pass  # full already: that is the point
    trace = os.path.join(mnt, label + ".zst")
    r = ctrack(["-o", trace, trickle], mnt)
    os.unlink(os.path.join(mnt, "fill"))
    return r, trace


def full_disk():
    mnt = env.fresh_dir("tmpfs")
    m = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", mnt],
                       capture_output=True, text=True)
    if m.returncode != 0:
        print("SKIP the full file system part: cannot mount a 64 KiB tmpfs (%s)" % m.stderr.strip())
        return
    try:
        # No room at all: the shim cannot write a byte, not even the NOTE.
        r, trace = on_full_disk(mnt, 1 << 20, "nothing")
        err = r.stderr.decode(errors="replace")
        env.eq("full: the program's status", r.returncode, 0)
        env.eq("full: an empty trace", os.path.getsize(trace) if os.path.exists(trace) else None, 0)
        env.check("full: the closing message names the write error",
                  "No space left on device" in err, err)
        # Room for a few KiB: the trace is cut where the disk filled, and says so.
        r, trace = on_full_disk(mnt, 60000, "cut")
        err = r.stderr.decode(errors="replace")
        env.eq("nearly full: the program's status", r.returncode, 0)
        env.check("nearly full: the closing message says the trace is cut",
                  "(trace is truncated)" in err, err)
        env.check("nearly full: the closing message names the write error",
                  "No space left on device" in err, err)
        rep = env.run_analyze(trace, "--json")
        if env.eq("nearly full: the cut trace is readable (exit 0)", rep.returncode, 0):
            import json
            s = json.loads(rep.stdout)["summary"]
            env.check("nearly full: some of trickle's 600 allocations, not all",
                      0 <= s["allocations"] < 600, "got %d" % s["allocations"])
    finally:
        subprocess.run(["umount", mnt])


full_disk()
env.finish()
