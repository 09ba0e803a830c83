# SPDX-License-Identifier: MIT
# The System V signal calls (tests/progs/sigset_modes.c, whose comment states what each mode does
# and allocates): sigset with a handler, SIG_DFL, a restored disposition and SIG_HOLD, sigignore,
# __sysv_signal, siginterrupt. glibc builds them on its internal sigaction, past the shim's hook;
# the shim now builds them itself. And a handler set past every hook (__sigaction): the program sees
# it, and setting SIG_DFL afterwards gives the signal back to the shim. Each mode's output (what every call returned, what sigaction
# says, the signal mask) and exit status are those of the untraced program; the trace holds all of
# kept_blocks (1000 allocations, 100000 bytes), complete; a death by a signal is a warning NOTE in
# the trace, and the launcher names the signal and exits 128 + signal.
import signal
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog = env.progs[0]
KEPT = {"allocations": 1000, "bytes_allocated": 100000, "leaked_allocations": 1000}
# mode: the signal it dies of, or None
MODES = {"handler": None, "default": signal.SIGSEGV, "restore": signal.SIGSEGV, "sysv": signal.SIGSEGV,
         "hold": signal.SIGTERM, "release": None, "ignore": signal.SIGINT, "raw": signal.SIGSEGV,
         "interrupt": None}

for mode, sig in MODES.items():
    d = env.fresh_dir("plain-" + mode)
    plain = subprocess.run([prog, mode], cwd=d, capture_output=True, timeout=30, preexec_fn=ct.no_core)
    env.eq(mode + ": untraced, the status the program's comment says",
           plain.returncode, -sig if sig else (42 if mode == "handler" else 0))
    r, rep = env.run_traced(mode, [prog, mode], timeout=30)
    env.eq(mode + ": output as untraced", r.stdout, plain.stdout)
    env.eq(mode + ": ctrack's status", r.returncode, 128 + sig if sig else plain.returncode)
    if not env.check(mode + ": report", rep is not None):
        continue
    env.eq(mode + ": complete", rep["complete"], True)
    env.eq(mode + ": kept_blocks", {k: rep["summary"][k] for k in KEPT}, KEPT)
    warnings = [n["text"] for n in rep["notes"] if n["level"] == "warning"]
    if sig:
        name = signal.Signals(sig).name
        env.check(mode + ": a note names the signal", any(("killed by " + name) in w for w in warnings),
                  warnings)
        env.check(mode + ": the launcher names the signal",
                  ("was killed by %s" % name).encode() in r.stderr, r.stderr[-300:])
    else:
        env.eq(mode + ": no warnings", warnings, [])
env.finish()
