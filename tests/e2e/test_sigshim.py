# SPDX-License-Identifier: MIT
# A signal handler that interrupted ctrack's own work shows the program's stack, never the shim's
# (tests/progs/sigshim.c: its handler allocates only when the signal stopped libctrack.so's code, a
# hook in its report or out of it, or a libc call the shim made while it waited for its writer,
# sched_yield, nanosleep or syscall). Run on one CPU, so the shim's rings fill and it waits. Every
# handler_block backtrace is handler_block, on_alarm, the signal trampoline (libc's), then main_loop
# at its malloc's or its free's line (LINE markers) and main: no frame in libctrack.so, no libc wait.
# The program counts its blocks; the premise, that both kinds of interruption happened, is its own.
import os
import re
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
env.analyze_opts = ["--callers", "100000"]  # every backtrace of the site
prog, src = env.progs
FILE = os.path.basename(src)
LINES = ct.line_markers(src)

cpus = os.sched_getaffinity(0)
os.sched_setaffinity(0, {min(cpus)})  # the program and ctrack's writer share a CPU
try:
    r, rep = env.run_traced("one-cpu", [prog], timeout=120)
finally:
    os.sched_setaffinity(0, cpus)
env.eq("exit status", r.returncode, 0)
m = re.match(rb"shim (\d+) wait (\d+) loop (\d+)\n$", r.stdout)
if env.check("the program's counts", m, r.stdout[-200:]) and rep:
    shim, wait = int(m.group(1)), int(m.group(2))
    print("handler blocks: %d in the shim's code, %d in its waits" % (shim, wait))
    env.check("premise: signals stopped the shim's code", shim > 0, str(shim))
    env.check("premise: signals stopped the shim's waits", wait > 0, str(wait))
    env.eq("the handler's blocks", ct.sites(rep["leaks"], "handler_block"), (24 * (shim + wait), shim + wait))
    env.eq("no note of events not recorded", [n["text"] for n in rep["notes"] if "not recorded" in n["text"]],
           [])
    site = [e for e in rep["leaks"] if ct.same_function(ct.frame0(e), "handler_block")]
    top = [[(f["function"], os.path.basename(f["file"] or ""), f["line"]) for f in e["frames"][:2]]
           for e in site]
    env.eq("the site: handler_block in on_alarm", top,
           [[("handler_block", FILE, LINES["block"]), ("on_alarm", FILE, LINES["handler"])]])
    trampolines = {os.path.basename(e["frames"][2]["module"] or "") for e in site if len(e["frames"]) > 2}
    env.check("the site: then the signal trampoline, in libc",
              len(trampolines) == 1 and trampolines.pop().startswith("libc.so"), repr(site)[:1000])
    exe = os.path.basename(prog)
    wrong = {}  # the backtraces below the trampoline that are not main_loop's call, then main
    for e in site:
        for c in e["callers"]:
            frames = tuple((f["function"], f["line"], os.path.basename(f["module"] or "")) for f in c["frames"])
            if ([(fn, mod) for fn, _, mod in frames] != [("main_loop", exe), ("main", exe)]
                    or frames[0][1] not in (LINES["alloc"], LINES["free"])):
                wrong[frames] = wrong.get(frames, 0) + c["allocations"]
    env.eq("below the trampoline: main_loop at its malloc or free, then main (the others, most frequent "
           "first)", sorted(wrong.items(), key=lambda kv: -kv[1])[:10], [])
env.finish()
