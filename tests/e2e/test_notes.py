# SPDX-License-Identifier: MIT
# What the shim could not record is said in the trace (NOTE records) and shown by the reports:
#  - a trace file that cannot be written (a file size limit here, as a full disk would): the file
#    holds everything up to the last flush, then a warning naming the error, and reads as cut;
#  - a program that closes the trace file's descriptor (tests/progs/fd_closer.c): the file is
#    opened again, the trace is whole, and an info note says so;
#  - a CTRACK_DEPTH the shim refuses, set by hand with LD_PRELOAD (the launcher refuses it itself);
#  - backtraces through a signal frame, which the unwinder steps: whole, so no note about walks
#    that end early.
# Programs: steady (100000 allocations, its comment), fd_closer (205 allocations, valgrind), hooks,
# sigalloc (3 allocations in a signal handler, its comment).
import os
import resource
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
steady, fd_closer, hooks, sigalloc = env.progs
STEADY_ALLOCATIONS = 100000  # tests/progs/steady.c: 50 rounds x 2000


def text_report(trace):
    r = env.run_analyze(trace)
    return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def notes(rep):
    return [n["text"] for n in rep.get("notes", [])] if rep else []


# ---- a write error: RLIMIT_FSIZE makes write() fail with EFBIG, as a full disk does with ENOSPC ----
d = env.fresh_dir("write-error")
limit = 96 * 1024


def small_files():
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    ct.no_core()


r = subprocess.run([env.ctrack, steady], cwd=d, capture_output=True, timeout=120, preexec_fn=small_files)
env.eq("the program's exit status under a file size limit", r.returncode, 0)
files = ct.traces(d)
env.eq("one trace", len(files), 1)
if files:
    trace = os.path.join(d, files[0])
    env.check("the trace stays within the limit", os.path.getsize(trace) <= limit)
    code, out, err = text_report(trace)
    env.eq("the cut trace is analyzed", code, 0)
    env.check("the analyzer warns that the trace is cut", "truncated" in err, err)
    env.check("the text report says why it stops", "the trace stops here" in out and "File too large" in out,
              out[:2000])
    rep = env.report(trace)
    if rep:
        n = rep["summary"]["allocations"]
        env.check("allocations up to the cut are there", 0 < n < STEADY_ALLOCATIONS, str(n))
        env.check("the JSON report carries the note", any("File too large" in t for t in notes(rep)),
                  str(notes(rep)))
    env.check("the launcher says why the trace stops", "File too large" in r.stderr.decode(errors="replace"),
              r.stderr.decode(errors="replace")[-800:])

# Wherever the limit falls, the note fits below it: writes stop short of the limit by the note's room
# (a flush point that ended within that room of the limit left no place for it: the trace stopped
# at the limit without a word, one limit in 40 here), and no write reaches it (SIGXFSZ).
missing = []
for k in range(16):
    lim_k = 8192 + 5113 * k
    d = env.fresh_dir("write-error-%d" % k)

    def at_limit(lim_k=lim_k):
        resource.setrlimit(resource.RLIMIT_FSIZE, (lim_k, lim_k))
        ct.no_core()

    r = subprocess.run([env.ctrack, steady], cwd=d, capture_output=True, timeout=120, preexec_fn=at_limit)
    files = ct.traces(d)
    out = text_report(os.path.join(d, files[0]))[1] if files else ""
    if r.returncode or "File too large" not in out or "File too large" not in r.stderr.decode(errors="replace"):
        missing.append((lim_k, r.returncode))
env.eq("at 16 file size limits: exit 0, and the report and the launcher say why the trace stops",
       missing, [])

# ---- the program closes the trace file's descriptor ----
d = env.fresh_dir("closer")
r, files = env.run_ctrack([fd_closer, os.path.join(d, "own.txt")], d)
env.eq("fd_closer exits 0", r.returncode, 0)
if files:
    rep = env.report(os.path.join(d, files[0]))
    if rep:
        env.eq("the whole trace is there (valgrind: 205 allocs)", rep["summary"]["allocations"], 205)
        env.check("an info note says the file was opened again",
                  any("opened the file again" in t for t in notes(rep)), str(notes(rep)))

# ---- a depth the shim refuses, set by hand ----
d = env.fresh_dir("depth")
shim = os.path.join(os.path.dirname(env.ctrack), "libctrack.so")
e = dict(os.environ, LD_PRELOAD=shim, CTRACK_DEPTH="1024")
r = subprocess.run([hooks], cwd=d, env=e, capture_output=True, timeout=60, preexec_fn=ct.no_core)
env.eq("hooks exits 0 under a hand-set LD_PRELOAD", r.returncode, 0)
files = ct.traces(d)
if env.eq("one trace", len(files), 1):
    code, out, _ = text_report(os.path.join(d, files[0]))
    env.check("the report names the refused setting", "CTRACK_DEPTH=1024" in out, out[:2000])
# ---- backtraces through a signal frame ----
d = env.fresh_dir("signal")
r, files = env.run_ctrack([sigalloc], d)
env.eq("sigalloc exits 0", r.returncode, 0)
if files:
    rep = env.report(os.path.join(d, files[0]))
    if rep:
        env.eq("its 3 allocations", (rep["summary"]["allocations"], rep["summary"]["leaked_bytes"]), (3, 96))
        env.eq("no note of backtraces that end early",
               [n["text"] for n in rep.get("notes", []) if "end early" in n["text"]], [])
        env.check("each backtrace goes from the handler through the signal frame to main",
                  all([f.get("function") for f in e["frames"]][:1] == ["handler"] and
                      any(f.get("function") == "main" for f in e["frames"]) for e in rep["allocations"]),
                  repr(rep["allocations"])[:2000])
env.finish()
