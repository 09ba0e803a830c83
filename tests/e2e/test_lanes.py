# SPDX-License-Identifier: MIT
# The matcher's lanes (ctrack --lanes 2 and 4: preload/lanes.c, ZEPOCH records in the trace): the
# writer orders the events and the lanes' records are merged by event, so a single-threaded program's
# report is the one lane's, figure by figure: the peak (tests/progs/peak.c's own 1229800 bytes, made
# of blocks in different lanes), its sites, the temporary allocations (tests/progs/temporary.c: its
# 1000), the leaks. A program with threads (tests/progs/threads.c) gives valgrind's totals and
# leaks; a forked child (tests/progs/forker.c) its own exact figures in a trace of its own. Without
# --lanes, CTRACK_LANES from the environment decides (a trace with ZEPOCH records says min_version 7).
import os
import subprocess
import sys

import ctrack_test as ct

KEYS = ("allocations", "frees", "bytes_allocated", "temporary_allocations", "peak_heap_bytes",
        "leaked_bytes", "leaked_allocations", "unmatched_frees", "invalid_frees")
CHILD = {"allocations": 2, "frees": 1, "bytes_allocated": 700, "leaked_bytes": 300, "leaked_allocations": 1}

env = ct.Env(sys.argv)
peak, temporary, threads, forker = env.progs


def lanes_opt(n):
    return ("--lanes", str(n))


def sites(rep, key):
    """A list's entries: their figures and their frames' functions (no addresses: ASLR)."""
    return [(sorted((k, v) for k, v in e.items() if k != "frames"), [f.get("function") for f in e.get("frames", [])])
            for e in rep.get(key) or []]


def essentials(rep):
    """What a run's report says that does not depend on timing."""
    return ({k: rep["summary"][k] for k in KEYS}, sites(rep, "peak"), sites(rep, "leaks"), sites(rep, "temporary"))


for prog, want in ((peak, {"peak_heap_bytes": 1229800, "leaked_bytes": 308200, "allocations": 8}),
                   (temporary, {"temporary_allocations": 1000, "allocations": 1200, "leaked_bytes": 0})):
    name = os.path.basename(prog)
    base = None
    for n in (1, 2, 4):
        r, rep = env.run_traced("%s-%d" % (name, n), [prog], opts=lanes_opt(n))
        if not env.check("%s, %d lanes: traced, exit 0, complete" % (name, n),
                         r.returncode == 0 and rep and rep["complete"], r.stderr[-300:]):
            continue
        env.eq("%s, %d lanes: the program's own figures" % (name, n),
               {k: rep["summary"][k] for k in want}, want)
        if n == 1:
            base = essentials(rep)
        elif base:
            env.eq("%s, %d lanes: one lane's report (figures, peak, leaks, temporary sites)" % (name, n),
                   essentials(rep), base)

vg = env.valgrind_main([threads], env.fresh_dir("valgrind"))
for n in (2, 4):
    r, rep = env.run_traced("threads-%d" % n, [threads], opts=lanes_opt(n))
    if env.check("threads, %d lanes: traced, exit 0" % n, r.returncode == 0 and rep, r.stderr[-300:]):
        env.compare_valgrind(rep["summary"], vg, "threads, %d lanes: " % n)
        env.compare_leaks(rep["summary"], vg, "threads, %d lanes: " % n)

for n in (2, 4):
    d = env.fresh_dir("forker-%d" % n)
    r, files = env.run_ctrack([forker], d, opts=("--follow-children", *lanes_opt(n)))
    reps = [env.report(os.path.join(d, f)) for f in files]
    kids = [x for x in reps if x and x["process"]["ppid"] != os.getpid() and x["summary"]["allocations"] == 2]
    if env.eq("forker, %d lanes: two traces, exit 0" % n, (len(files), r.returncode), (2, 0)) and \
            env.eq("forker, %d lanes: a child's trace" % n, len(kids), 1):
        env.eq("forker, %d lanes: the child's exact figures" % n,
               {k: kids[0]["summary"][k] for k in CHILD}, CHILD)


def min_version(trace):
    head = subprocess.run(["zstd", "-dc", trace], capture_output=True).stdout[:12]
    return int.from_bytes(head[10:12], "little") if len(head) == 12 else None


for lanes, want in (("2", 7), ("1", 4)):
    e = dict(os.environ, CTRACK_LANES=lanes)
    trace = os.path.join(env.fresh_dir("env-%s" % lanes), "trace.zst")
    r, _ = env.run_ctrack(["-o", trace, peak], os.path.dirname(trace), env=e)
    env.eq("CTRACK_LANES=%s without --lanes: the trace's min_version" % lanes, (r.returncode, min_version(trace)),
           (0, want))
env.finish()
