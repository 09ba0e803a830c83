# SPDX-License-Identifier: MIT
# The cache of inflated debug files (analyzer/debugcache.h) on tests/progs/symsrc.c built with a
# chosen build-id, its debug file apart with compressed sections (objcopy): a second report is the first, read from
# the entry the first made; a damaged entry is made again; a directory another user could write to,
# or a symlink, is not used; it can be turned off; the entries used longest ago go first.
import json
import os
import shutil
import stat
import subprocess
import sys
import time

import ctrack_test as ct

env = ct.Env(sys.argv)
src = env.progs[0]
LINES = ct.line_markers(src)
FILE = os.path.basename(src)
BID = "d1" * 20
# The leaks symsrc.c's header states, innermost frame first (function, file, line, inlined): the
# inlined frame and the lines come from the DWARF the cache holds (the program's debug file, apart
# and compressed, found by build-id under --debug-dir).
WANT = {
    40: [("leak_plain", FILE, LINES.get("plain_alloc"), False), ("main", FILE, LINES.get("call_plain"), False)],
    56: [("inline_alloc", FILE, LINES.get("inline_alloc"), True),
         ("leak_inlined", FILE, LINES.get("inline_call"), False),
         ("main", FILE, LINES.get("call_inlined"), False)],
}
os.environ.pop("DEBUGINFOD_URLS", None)

d = env.fresh_dir("build")
full = os.path.join(d, "symsrc-full")
prog = os.path.join(d, "symsrc")
debug_dir = os.path.join(d, "debug")
dbg = os.path.join(debug_dir, ".build-id", BID[:2], BID[2:] + ".debug")
os.makedirs(os.path.dirname(dbg))
for cmd in (["gcc", "-O2", "-g", "-Wl,--build-id=0x" + BID, "-o", full, src],
            ["objcopy", "--only-keep-debug", "--compress-debug-sections=zlib", full, dbg],
            ["objcopy", "--strip-debug", full, prog]):
    r = subprocess.run(cmd, capture_output=True, text=True)
    env.check(" ".join(cmd[:2]), r.returncode == 0, r.stderr[-500:])
trace = env.trace("trace", [prog])


def analyze(what, cache=None, wrap=(), **extra):
    """The leaks' frames of trace's JSON report, with CTRACK_CACHE_DIR=cache (None: unset), and extra
    set in the environment (a value of None: unset); wrap: a command the analyzer runs under."""
    e = dict(os.environ)
    e.pop("CTRACK_CACHE_DIR", None)
    if cache is not None:
        e["CTRACK_CACHE_DIR"] = cache
    for k, v in extra.items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    r = subprocess.run([*wrap, env.analyze, "--json", "--debug-dir", debug_dir, trace], capture_output=True,
                       text=True, env=e, timeout=120)
    if not env.check(what + ": analyze exits 0, says nothing", (r.returncode, r.stderr) == (0, ""), r.stderr[-500:]):
        return None
    got = {}
    for leak in json.loads(r.stdout)["leaks"]:
        n = len(WANT.get(leak["bytes"], []))
        got[leak["bytes"]] = [(f["function"], f["file"] and os.path.basename(f["file"]), f["line"], f["inlined"])
                              for f in leak["frames"][:n]]
    env.eq(what + ": the leaks, file:line and inlined frames as the source says", got, WANT)
    return got


def entries(cache):
    """The entries of the program's debug file (the C library's may be there too)."""
    return sorted(n for n in os.listdir(cache) if n.startswith(BID + "-")) if os.path.isdir(cache) else []


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


# First report: one entry, named by the build-id, 0600 in a directory made 0700.
root = env.fresh_dir("cache")
cache = os.path.join(root, "a", "debug")
analyze("cold", cache)
names = entries(cache)
if env.eq("cold: one entry, named by the build-id", len(names), 1):
    entry = os.path.join(cache, names[0])
    env.eq("modes: directory 0700, entry 0600", (mode(cache), mode(os.path.join(root, "a")), mode(entry)),
           (0o700, 0o700, 0o600))
    with open(entry, "rb") as f:
        pristine = f.read()
    # The entry is the debug file with its DWARF stored uncompressed: bigger than the file.
    env.check("the entry holds the inflated copy", pristine[:4] == b"\x7fELF" and len(pristine) > os.path.getsize(dbg),
              len(pristine))

    # Second report: from the entry, which is marked used (its time is now's: it is found and checked).
    old = time.time() - 3600
    os.utime(entry, (old, old))
    ino = os.stat(entry).st_ino
    analyze("warm", cache)
    st = os.stat(entry)
    env.check("warm: the entry was taken (marked used now, the same file)",
              st.st_mtime > old + 1800 and st.st_ino == ino, (st.st_mtime, old))

    # Damaged entries (a byte of the ELF header changed, the section headers cut off) are not used:
    # the report is right, and the entry is made again.
    for what, damage in (("a changed header byte", lambda b: b[:5] + bytes([b[5] ^ 1]) + b[6:]),
                         ("cut short", lambda b: b[:len(b) - 4096])):
        with open(entry, "wb") as f:
            f.write(damage(pristine))
        analyze("damaged entry (%s)" % what, cache)
        with open(entry, "rb") as f:
            env.check("damaged entry (%s): made again" % what, f.read() == pristine, entries(cache))

# Directories not used: one others may write to, and a symlink to a good one. The report is right.
loose = os.path.join(root, "loose")
os.makedirs(loose)
os.chmod(loose, 0o777)
analyze("a directory others may write to", loose)
env.eq("a directory others may write to: nothing written", entries(loose), [])
good = os.path.join(root, "good")
os.makedirs(good, mode=0o700)
link = os.path.join(root, "link")
os.symlink(good, link)
analyze("a symlink", link)
env.eq("a symlink: nothing written where it points", entries(good), [])

# A disk without room for the copy: a tmpfs of one page, mounted in a mount namespace of its own (root
# may; another user in a user namespace of its own). No entry, the report right: the copy is written
# through a shared mapping, where a disk found full at a page's first write kills with SIGBUS.
full_disk = os.path.join(root, "full")
os.makedirs(full_disk)
mount = ["unshare", *([] if os.geteuid() == 0 else ["--map-root-user"]), "--mount", "sh", "-c",
         'mount -t tmpfs -o size=4k none "$0" && exec "$@"', full_disk]
analyze("a full disk", os.path.join(full_disk, "cache"), wrap=mount)

# Where it goes: $XDG_CACHE_HOME/ctrack/debug, else $HOME/.cache/ctrack/debug; CTRACK_CACHE_DIR set
# empty turns it off.
home = os.path.join(root, "home")
xdg = os.path.join(root, "xdg")
os.makedirs(home)
analyze("off", "", HOME=home, XDG_CACHE_HOME=None)
env.eq("CTRACK_CACHE_DIR empty: nothing written under $HOME", os.listdir(home), [])
analyze("default", None, HOME=home, XDG_CACHE_HOME=None)
env.eq("default: $HOME/.cache/ctrack/debug", len(entries(os.path.join(home, ".cache/ctrack/debug"))), 1)
analyze("xdg", None, HOME=home, XDG_CACHE_HOME=xdg)
env.eq("$XDG_CACHE_HOME/ctrack/debug", len(entries(os.path.join(xdg, "ctrack/debug"))), 1)
# A HOME that is not this user's (sudo keeps the user's): nothing made in it. As root, one given to
# nobody; as another user, / (root's).
theirs = os.path.join(root, "theirs")
os.makedirs(theirs)
if os.geteuid() == 0:
    os.chown(theirs, 65534, 65534)
else:
    theirs = "/"
before = sorted(os.listdir(theirs))
analyze("another's HOME", None, HOME=theirs, XDG_CACHE_HOME=None)
env.eq("another's HOME: nothing made in it", sorted(os.listdir(theirs)), before)

# The size: with room for 4 entries (CTRACK_CACHE_MAX), the debug file at 6 times (an entry per
# time), the first one used again after the fourth: the second and third are dropped, used longest
# ago; a copy bigger than a quarter of the size is not kept.
size = len(pristine) if names else 0
cap = os.path.join(root, "cap")
limit = "%dK" % ((4 * size + 1023) // 1024 + 1)
first = time.time() - 100000
made = []
for k in range(6):
    if k == 4:
        os.utime(dbg, (first, first))  # the first file again: its entry used
        analyze("size: the first used again", cap, CTRACK_CACHE_MAX=limit)
    t = first + 1000 * k
    os.utime(dbg, (t, t))
    before = set(entries(cap))
    analyze("size: entry %d" % k, cap, CTRACK_CACHE_MAX=limit)
    made += sorted(set(entries(cap)) - before)
env.eq("size: six entries made, one at a time", len(made), 6)
env.eq("size: the four used last kept", entries(cap), sorted([made[0]] + made[3:]))
small = os.path.join(root, "small")
analyze("size: too big", small, CTRACK_CACHE_MAX="%dK" % (4 * size // 1024 - 1))
env.eq("size: a copy bigger than a quarter of the size is not kept", entries(small), [])
env.finish()
