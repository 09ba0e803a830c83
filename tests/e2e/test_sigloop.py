# SPDX-License-Identifier: MIT
# Allocations in a signal handler that interrupts the program's own allocations
# (tests/progs/sigloop.c: 1000 handler_block allocations, N malloc/free pairs it prints): each of
# the 1000 is either in the trace or counted in a warning NOTE, never silently lost; the main
# loop's N pairs are all there.
import os
import re
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog = env.progs[0]

d = env.fresh_dir("traced")
trace = os.path.join(d, "trace.zst")
r, _ = env.run_ctrack([prog], d, opts=("-o", trace), timeout=120)
env.eq("exit status", r.returncode, 0)
m = re.match(rb"loop (\d+)\n$", r.stdout)
rep = env.report(trace) if os.path.exists(trace) else None
if env.check("the program's count", m, r.stdout[-100:]) and rep:
    n = int(m.group(1))
    s = rep["summary"]
    _, kept = ct.sites(rep["leaks"], "handler_block")
    dropped = 0
    for note in rep["notes"]:
        hit = re.match(r"(\d+) allocation events were not recorded: signal handlers", note["text"])
        if hit:
            dropped += int(hit.group(1))
            env.eq("the note is a warning", note["level"], "warning")
    print("handler blocks: %d recorded, %d counted in the NOTE" % (kept, dropped))
    env.eq("handler blocks recorded + noted == 1000", kept + dropped, 1000)
    env.eq("allocations == N + handler blocks recorded", s["allocations"], n + kept)
    env.eq("frees == N", s["frees"], n)
    env.eq("complete", rep["complete"], True)
env.finish()
