# SPDX-License-Identifier: MIT
# Memory limits (tests/progs/endings.c "return", whose comment states the figures): under
# `ulimit -d 200000` and `ulimit -v 200000` the shim takes its memory as it needs it and the trace
# is whole; under a limit too tight for the shim to start, the program still runs as it would
# untraced, and the trace says why it holds nothing.
import os
import resource
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog = env.progs[0]
BASE = {"allocations": 1011, "frees": 10, "bytes_allocated": 100507}
# A ctrack built with AddressSanitizer (-Dsanitize=true) cannot start under these limits: ASan maps
# terabytes of shadow memory first. There the limit is the traced program's alone, and the program
# loads the shim itself (LD_PRELOAD, the trace in its directory): the shim under the limit is what is
# tested, and the shim is never built with ASan.
asan = ct.needs(env.ctrack, "libasan.so")
shim = os.path.join(os.path.dirname(env.ctrack), "libctrack.so")


def limited(kind, kib):
    def set_limit():
        ct.no_core()
        resource.setrlimit(kind, (kib * 1024, kib * 1024))
    return set_limit


def run(label, kind, kib):
    d = env.fresh_dir(label)
    trace = os.path.join(d, "trace.zst")
    if asan:
        r = subprocess.run([prog, "return"], cwd=d, capture_output=True, timeout=60,
                           env=dict(os.environ, LD_PRELOAD=shim), preexec_fn=limited(kind, kib))
        trace = os.path.join(d, (ct.traces(d) or ["(none)"])[0])
    else:
        r = subprocess.run([env.ctrack, "-q", "-o", trace, prog, "return"], cwd=d, capture_output=True,
                           timeout=60, preexec_fn=limited(kind, kib))
    env.eq(label + ": the program's exit status", r.returncode, 0)
    return env.report(trace) if env.check(label + ": trace written", os.path.exists(trace)) else None


for label, kind in (("data", resource.RLIMIT_DATA), ("as", resource.RLIMIT_AS)):
    rep = run(label + "-200000", kind, 200000)
    if rep:
        env.eq(label + ": complete", rep["complete"], True)
        env.eq(label + ": figures", {k: rep["summary"][k] for k in BASE}, BASE)
        env.eq(label + ": kept_blocks with their stack", ct.sites(rep["leaks"], "kept_blocks"),
               (100000, 1000))
        env.eq(label + ": no warnings", [n["text"] for n in rep["notes"]], [])

# 10 MB of data: the program needs far less, the shim's zstd window and tables more.
rep = run("data-10000", resource.RLIMIT_DATA, 10000)
if rep:
    env.check("data-10000: a note says tracing could not start",
              any("tracing could not start" in n["text"] for n in rep["notes"]), rep["notes"])
env.finish()
