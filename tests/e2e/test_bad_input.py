# SPDX-License-Identifier: MIT
# The analyzer on bad input: missing, empty, text, random, foreign zstd, truncated (100 evenly
# spaced cuts) and corrupted traces; hostile ones: a FIFO or a device as the trace, a future
# version, lengths and counts past the end, module paths naming a FIFO, a directory, a text file. Missing/foreign: exit 1 and one line `ctrack-analyze: ...`; a truncated or corrupted trace:
# exit 0, "complete": false and a warning (or the clean error when the cut or damage precedes the
# header; test_damage checks damage closely);
# never a signal, in both --json and text modes. A trace cut by its last bytes only is truncated too.
import json
import os
import random
import shutil
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog, trickle = env.progs[0], env.progs[1]
d = env.fresh_dir("inputs")


def write(name, data):
    path = os.path.join(d, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def clean_error(label, r):
    lines = r.stderr.decode(errors="replace").strip().splitlines()
    env.eq(label + ": exit 1", r.returncode, 1)
    env.check(label + ": one-line error `ctrack-analyze: ...`",
              len(lines) == 1 and lines[0].startswith("ctrack-analyze: "), repr(lines))


def each_mode(path):
    for mode in (["--json"], []):
        yield ("json" if mode else "text"), env.run_analyze(path, *mode)


def expect_error(label, path):
    for mode, r in each_mode(path):
        clean_error("%s (%s)" % (label, mode), r)


def expect_partial_or_error(label, path, truncated):
    """Truncated or damaged: a clean error, or exit 0 with a warning (and, when truncated, a JSON
    report that says it is incomplete) -- never a crash, never silence."""
    for mode, r in each_mode(path):
        lab = "%s (%s)" % (label, mode)
        env.check(lab + ": no signal", r.returncode >= 0, "killed by signal %d" % -r.returncode)
        if r.returncode == 1:
            clean_error(lab, r)
            continue
        if not env.eq(lab + ": exit 0 (or a clean error)", r.returncode, 0):
            continue
        env.check(lab + ": warning on stderr", r.stderr.strip() != b"",
                  "exit 0 and no warning: the damage went unnoticed")
        if mode == "json" and truncated:
            try:
                rep = json.loads(r.stdout.decode("utf-8", "surrogateescape"))
                env.eq(lab + ": complete", rep["complete"], False)
            except ValueError as e:
                env.check(lab + ": valid JSON", False, str(e))


def real_trace(name, program):
    path = os.path.join(d, name)
    r, _ = env.run_ctrack([program], d, opts=("-o", path))
    env.eq(name + ": program exit status", r.returncode, 0)
    if not env.check(name + " written", os.path.exists(path)):
        env.finish()
    with open(path, "rb") as f:
        return path, f.read()


# A real trace to damage.
real, data = real_trace("real.zst", prog)
rep = env.report(real)
env.check("real trace is complete", rep and rep["complete"] is True)

expect_error("missing file", os.path.join(d, "no-such-file.zst"))
expect_error("directory", d)
expect_error("empty file", write("empty.zst", b""))
expect_error("text file", write("text.zst", b"this is not a trace\n" * 50))
rng = random.Random(1234)
expect_error("random binary", write("random.zst", bytes(rng.randrange(256) for _ in range(4096))))
foreign = subprocess.run(["zstd", "-q", "-c"], input=b"hello, not a trace\n" * 100,
                         capture_output=True)
if env.check("zstd made a foreign compressed file", foreign.returncode == 0):
    expect_error("zstd file of something else", write("foreign.zst", foreign.stdout))
env.check("real trace is large enough to damage", len(data) > 64, "%d bytes" % len(data))

for frac in (0.5, 0.25, 0.75, 0.9):
    cut = int(len(data) * frac)
    expect_partial_or_error("cut at %d%% (%d of %d bytes)" % (frac * 100, cut, len(data)),
                            write("cut%d.zst" % (frac * 100), data[:cut]), True)
for frac in (0.5, 0.3, 0.7):
    pos = int(len(data) * frac)
    flipped = bytearray(data)
    flipped[pos] ^= 0xff
    expect_partial_or_error("byte %d flipped" % pos, write("flip%d.zst" % (frac * 100), flipped),
                            False)

# A trace written in several flushes (tests/progs/trickle.c: 600 allocations over ~0.6 s), cut at
# half its size: the cut falls well after the header, so this one must be a partial report.
long_trace, long_data = real_trace("trickle.zst", trickle)
half = write("trickle-half.zst", long_data[:len(long_data) // 2])
r = env.run_analyze(half, "--json")
label = "trickle cut at half (%d of %d bytes)" % (len(long_data) // 2, len(long_data))
if env.eq(label + ": exit 0", r.returncode, 0):
    env.check(label + ": warning on stderr", r.stderr.strip() != b"")
    try:
        rep = json.loads(r.stdout.decode("utf-8", "surrogateescape"))
        env.eq(label + ": complete", rep["complete"], False)
        n = rep["summary"]["allocations"]
        env.check(label + ": some but not all 600 allocations", 0 < n < 600, "got %d" % n)
    except ValueError as e:
        env.check(label + ": valid JSON", False, str(e))
else:
    print(r.stderr.decode(errors="replace"))


def cut_summary(label, data, n):
    """data[:n] analyzed: exit 0, the truncation warning and "complete": false; its summary or None."""
    path = write("cut-at-%d.zst" % n, data[:n])
    r = env.run_analyze(path, "--json")
    if not env.eq(label + ": exit 0", r.returncode, 0):
        print(r.stderr.decode(errors="replace"))
        return None
    env.eq(label + ": the truncation warning", r.stderr.decode(errors="replace"),
           "ctrack-analyze: warning: %s is truncated (the process was killed?); figures cover what "
           "was recorded\n" % path)
    try:
        rep = json.loads(r.stdout.decode("utf-8", "surrogateescape"))
    except ValueError as e:
        env.check(label + ": valid JSON", False, str(e))
        return None
    env.eq(label + ": complete", rep["complete"], False)
    return rep["summary"]


# A trace without its last bytes is truncated, never complete, even when those bytes hold no record:
# the shim ends its frames with a 4-byte checksum, so a cut by 1 to 4 bytes leaves every record (and
# every figure of the program) readable. Deeper cuts keep the figures up to them: never more than
# the program's, more the later the cut. Figures from the programs' comments.
HOOKS = {"allocations": 11, "frees": 5, "bytes_allocated": 6122, "leaked_bytes": 5020,
         "leaked_allocations": 6}  # tests/progs/hooks.c
TRICKLE = {"allocations": 600, "frees": 600, "bytes_allocated": 239700, "leaked_bytes": 0,
           "leaked_allocations": 0}  # tests/progs/trickle.c
for name, whole, want, fractions in (("hooks", data, HOOKS, ()),
                                     ("trickle", long_data, TRICKLE, (0.3, 0.5, 0.7, 0.9))):
    for k in (1, 2, 4):
        label = "%s without its last %d bytes" % (name, k)
        s = cut_summary(label, whole, len(whole) - k)
        if s:
            env.eq(label + ": the program's figures", {f: s[f] for f in want}, want)
    previous = {f: 0 for f in want}
    for n in [int(len(whole) * f) for f in fractions] + [len(whole) - 8]:
        label = "%s cut at %d of %d bytes" % (name, n, len(whole))
        s = cut_summary(label, whole, n)
        for f in ("allocations", "frees", "bytes_allocated") if s else ():
            env.check("%s: %s %d within [%d, %d]" % (label, f, s[f], previous[f], want[f]),
                      previous[f] <= s[f] <= want[f])
        previous = s or previous


# 100 evenly spaced cuts of trickle's trace: each a clean error (a cut before the first flush leaves
# no header to read) or exit 0, the truncation warning, "complete": false and figures up to the
# cut: never more than the program's, never fewer than at an earlier cut. Never a signal.
POINTS = 100
previous, errors, partial = {f: 0 for f in TRICKLE}, 0, 0
for i in range(1, POINTS + 1):
    n = len(long_data) * i // (POINTS + 1)
    path = write("even-cut.zst", long_data[:n])
    r = env.run_analyze(path, "--json")
    label = "trickle cut %d of %d at %d bytes" % (i, POINTS, n)
    if r.returncode < 0 or r.returncode not in (0, 1):
        env.check(label + ": exit 0 or 1, no signal", False, "exit %d" % r.returncode)
        continue
    if r.returncode == 1:
        errors += 1
        env.check(label + ": a clean error, and only before any figure was readable",
                  partial == 0 and r.stderr.decode(errors="replace").startswith("ctrack-analyze: ")
                  and len(r.stderr.splitlines()) == 1, repr(r.stderr))
        continue
    partial += 1
    rep = json.loads(r.stdout.decode("utf-8", "surrogateescape"))
    s = rep["summary"]
    ok = (r.stderr.decode(errors="replace") == "ctrack-analyze: warning: %s is truncated (the process "
          "was killed?); figures cover what was recorded\n" % path and rep["complete"] is False and
          all(previous[f] <= s[f] <= TRICKLE[f] for f in ("allocations", "frees", "bytes_allocated")))
    env.check(label + ": the warning, incomplete, figures within [previous cut, program]", ok,
              "stderr %r, complete %r, %r after %r" % (r.stderr, rep["complete"],
                                                      {f: s[f] for f in TRICKLE}, previous))
    previous = {f: s[f] for f in TRICKLE}
print("%d cuts: %d clean errors (before the first readable flush), %d partial reports" %
      (POINTS, errors, partial))
env.check("most cuts give a partial report", partial > POINTS // 2, "%d of %d" % (partial, POINTS))

# ---- hostile files ----

def timed_analyze(path, *opts):
    """ctrack-analyze within 30 s: (completed process or None after the timeout)."""
    try:
        return subprocess.run([env.analyze, *opts, path], capture_output=True, timeout=30,
                              preexec_fn=ct.no_core)
    except subprocess.TimeoutExpired:
        return None


# A FIFO as the trace is read as a stream (test_progress feeds one), but one that nobody writes to
# would block its open and its first read forever: after 10 s, a clean error.
fifo = os.path.join(d, "trace-fifo.zst")
os.mkfifo(fifo)
r = timed_analyze(fifo)
if env.check("FIFO nobody writes to as the trace: no hang", r is not None):
    env.eq("FIFO nobody writes to as the trace: exit 1 and one line",
           (r.returncode, r.stderr.decode()),
           (1, "ctrack-analyze: cannot read '%s': it is a FIFO that nothing wrote to in 10 s\n" % fifo))
# A device is not even opened (reading /dev/zero would never end; opening some has effects).
r = timed_analyze("/dev/zero")
env.eq("character device as the trace: exit 1 and one line", (r.returncode, r.stderr.decode()) if r else None,
       (1, "ctrack-analyze: cannot read '/dev/zero': it is a character device, not a trace file\n"))


def recompressed(name, edit):
    """The real trace decompressed, edit(bytes) applied, compressed again: the new file's path."""
    raw = subprocess.run(["zstd", "-d", "-q", "-c"], input=data, capture_output=True).stdout
    out = subprocess.run(["zstd", "-q", "-c"], input=edit(raw), capture_output=True).stdout
    return write(name, out)


# A future format version (version and min_version 99): the error names both versions.
future = recompressed("future.zst", lambda raw: raw[:8] + b"\x63\x00\x63\x00" + raw[12:])
expect_error("future format version", future)
r = env.run_analyze(future)
env.check("future format version: the error names version 99",
          b"version 99" in r.stderr and b"upgrade ctrack" in r.stderr, r.stderr)
# A record whose length runs past the end of the data (a NOTE claiming 65535 bytes), and one whose
# count does (a PROCESS record of 2**60 arguments in 3 bytes): cut or corrupt, never a crash.
expect_partial_or_error("a length past the end",
                        recompressed("long.zst", lambda raw: raw + b"\x42\xff\xff\x03\x01abc"), True)
expect_partial_or_error("a count past the end",
                        recompressed("count.zst", lambda raw: raw + b"\x10\x03\x00\x00\x00"
                                     b"\x00\x80\x80\x80\x80\x80\x80\x80\x80\x10"), False)

# The program's file replaced, after the run, by a FIFO, a directory, a text file: the module path
# in the trace names it. The report comes (frames unresolved), without hanging on the FIFO.
copy_dir = env.fresh_dir("module-paths")
copy = os.path.join(copy_dir, "prog")
shutil.copy(prog, copy)
traced = os.path.join(copy_dir, "trace.zst")
r, _ = env.run_ctrack([copy], copy_dir, opts=("-o", traced))
env.eq("copy of hooks traced", r.returncode, 0)
for kind, make in (("a FIFO", os.mkfifo), ("a directory", os.mkdir),
                   ("a text file", lambda p: open(p, "w").write("not ELF\n"))):
    os.unlink(copy) if not os.path.isdir(copy) else os.rmdir(copy)
    make(copy)
    r = timed_analyze(traced, "--json")
    label = "the program's file is now %s" % kind
    if not env.check(label + ": no hang", r is not None):
        continue
    env.eq(label + ": exit 0", r.returncode, 0)
    try:
        rep = json.loads(r.stdout.decode("utf-8", "surrogateescape"))
        env.eq(label + ": figures as the program's", {f: rep["summary"][f] for f in HOOKS}, HOOKS)
    except ValueError as e:
        env.check(label + ": valid JSON", False, str(e))
env.finish()
