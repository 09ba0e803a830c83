# SPDX-License-Identifier: MIT
# Allocations in a signal handler that interrupts the program's own allocations, and ctrack's work
# on them (tests/progs/sigloop.c: 1000 handler_block allocations of 24 bytes, leaked, while
# main_loop makes N malloc(16)/free pairs, N printed):
#  - one block per interruption: every one is recorded, none in a NOTE: N + 1000 allocations, N
#    frees, 16 N + 24000 bytes, the 1000 blocks leaked at handler_block, each backtrace through the
#    signal frame to main, the most frequent one with none of ctrack's frames;
#  - 40 per interruption ("burst"), more than ctrack keeps while it records another event: each of
#    the 1000 is in the trace or counted in the warning NOTE, never silently lost, and the NOTE
#    comes (some interruptions do fall in ctrack's work); the N pairs are all there.
import os
import re
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
env.analyze_opts = ["--callers", "100000"]  # every backtrace of a site listed
prog = env.progs[0]
HANDLER_BLOCKS, BLOCK = 1000, 24
IN_SIGNAL = re.compile(r"(\d+) allocation events were not recorded: signal handlers")


def traced(name, *args):
    """(N, report) of a traced run of sigloop ARGS, or (None, None)."""
    d = env.fresh_dir(name)
    trace = os.path.join(d, "trace.zst")
    r, _ = env.run_ctrack([prog, *args], d, opts=("-o", trace), timeout=120)
    env.eq(name + ": exit status", r.returncode, 0)
    m = re.match(rb"loop (\d+)\n$", r.stdout)
    rep = env.report(trace) if os.path.exists(trace) else None
    if not env.check(name + ": the program's count", m and rep, r.stdout[-100:]):
        return None, None
    env.eq(name + ": complete", rep["complete"], True)
    env.eq(name + ": unmatched frees", rep["summary"]["unmatched_frees"], 0)
    return int(m.group(1)), rep


def noted(name, rep):
    """The handler events the in-signal NOTE counts (each such note a warning)."""
    count = 0
    for note in rep["notes"]:
        hit = IN_SIGNAL.match(note["text"])
        if hit:
            count += int(hit.group(1))
            env.eq(name + ": the note is a warning", note["level"], "warning")
    return count


n, rep = traced("one")
if rep:
    s = rep["summary"]
    env.eq("one: no handler event in a NOTE", noted("one", rep), 0)
    env.eq("one: allocations, frees, bytes",
           (s["allocations"], s["frees"], s["bytes_allocated"]),
           (n + HANDLER_BLOCKS, n, 16 * n + BLOCK * HANDLER_BLOCKS))
    env.eq("one: leaked", (s["leaked_bytes"], s["leaked_allocations"]), (BLOCK * HANDLER_BLOCKS, HANDLER_BLOCKS))
    env.eq("one: the leaks at handler_block", ct.sites(rep["leaks"], "handler_block"),
           (BLOCK * HANDLER_BLOCKS, HANDLER_BLOCKS))
    site = [e for e in rep["leaks"] if ct.same_function(ct.frame0(e), "handler_block")]
    env.check("one: handler_block's site is in on_alarm",
              site and all([f.get("function") for f in e["frames"]][1:2] == ["on_alarm"] for e in site),
              repr(site)[:2000])
    callers = sorted(([f.get("function") or "" for f in c["frames"]], c["allocations"])
                     for e in site for c in e["callers"])
    env.check("one: each of its backtraces reaches main through the signal frame",
              callers and all("main" in c for c, _ in callers), repr(callers)[:2000])
    # those of the handlers that interrupted ctrack's work, most of them, skip the shim's frames
    env.check("one: its most frequent backtrace goes on at main_loop",
              callers and max(callers, key=lambda c: c[1])[0][:1] == ["main_loop"], repr(callers)[:2000])

n, rep = traced("burst", "burst")
if rep:
    s = rep["summary"]
    dropped = noted("burst", rep)
    _, kept = ct.sites(rep["leaks"], "handler_block")
    print("burst: handler blocks: %d recorded, %d counted in the NOTE" % (kept, dropped))
    env.check("burst: some counted in the NOTE", dropped > 0, str(rep["notes"]))
    env.eq("burst: handler blocks recorded + noted == 1000", kept + dropped, HANDLER_BLOCKS)
    env.eq("burst: allocations == N + handler blocks recorded", s["allocations"], n + kept)
    env.eq("burst: frees == N", s["frees"], n)
env.finish()
