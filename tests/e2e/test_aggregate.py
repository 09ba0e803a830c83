# SPDX-License-Identifier: MIT
# Long runs (ctrack --aggregate, issue 26): the shim keeps each alloc info's figures and writes
# AGG_SNAPSHOT records instead of every event, and every report gives a full trace's figures.
# Programs: tests/progs/agg_churn.c (its own counts on stdout, an exact peak of 177088 bytes when
# single-threaded, marks "half" and "done"), leak_classes.c (memcheck's classes: valgrind's LEAK
# SUMMARY), forker.c (a forked child's exact figures), killed.c (SIGKILL: the trace up to its last
# snapshot), endings.c (a fault, SIGTERM, an exec: the last snapshot comes before the classes and the
# END or EXEC). The bound: 100 times the events make less than twice the trace.
import json
import os
import re
import signal
import subprocess
import sys
import time

import ctrack_test as ct

KEYS = ("allocations", "frees", "bytes_allocated", "temporary_allocations", "peak_heap_bytes",
        "leaked_bytes", "leaked_allocations", "unmatched_frees", "invalid_frees",
        "definitely_lost_bytes", "definitely_lost_blocks", "indirectly_lost_bytes", "indirectly_lost_blocks",
        "possibly_lost_bytes", "possibly_lost_blocks", "still_reachable_bytes", "still_reachable_blocks")
CHILD = {"allocations": 2, "frees": 1, "bytes_allocated": 700, "leaked_bytes": 300, "leaked_allocations": 1}
PEAK = 16 * (8 * 100 + 28) + 40 * 4096  # agg_churn.c's own peak, one thread

env = ct.Env(sys.argv)
churn, leak_classes, forker, killed, endings = env.progs
AGG = ("--aggregate",)


def no_addresses(x):
    """x without its frames' addresses (ASLR puts each run elsewhere)."""
    if isinstance(x, dict):
        return {k: no_addresses(v) for k, v in x.items() if k != "address"}
    if isinstance(x, list):
        return [no_addresses(v) for v in x]
    return x


def sites(rep, key):
    """A list's entries, every figure and frame but the addresses."""
    return no_addresses(rep.get(key) or [])


def essentials(rep, ordered=True):
    """What a report says that does not depend on timing, nor, unless ordered, on the threads'
    order: the peak, and which allocation is freed by its thread's next event as the writer sees it
    (a multi-threaded run's temporaries vary by one from run to run, full or aggregated)."""
    timed = ("peak_heap_bytes", "temporary_allocations")
    keys = [k for k in KEYS if k in rep["summary"] and (ordered or k not in timed)]
    lists = ("leaks", "allocations") + (("temporary", "histogram", "peak") if ordered else ())
    return {k: rep["summary"][k] for k in keys}, {k: sites(rep, k) for k in lists}


def own_counts(stdout):
    """agg_churn's own line: {name: value}."""
    words = stdout.decode().split()
    return {words[i]: int(words[i + 1]) for i in range(0, len(words) - 1, 2)}


def traced_pair(name, args, opts=(), agg_opts=()):
    """The program traced fully and aggregated (with agg_opts too): ((completed, report) full,
    (completed, report) aggregated)."""
    return (env.run_traced(name + "-full", args, opts=opts),
            env.run_traced(name + "-agg", args, opts=AGG + tuple(opts) + tuple(agg_opts)))


# ---- one thread: every figure a full trace's, and the program's own ----
(rf, full), (ra, agg) = traced_pair("churn", [churn, "20000", "1"], agg_opts=("--snapshot", "0.02"))
if env.check("churn: both traced, exit 0, complete", full and agg and rf.returncode == 0 and
             ra.returncode == 0 and agg["complete"], ra.stderr[-300:]):
    own = own_counts(ra.stdout)
    env.eq("churn, aggregated: the program's own figures",
           {k: agg["summary"][k] for k in ("allocations", "frees", "bytes_allocated", "leaked_bytes",
                                              "leaked_allocations")},
           {"allocations": own["allocations"], "frees": own["frees"], "bytes_allocated": own["bytes"],
            "leaked_bytes": own["leaked_bytes"], "leaked_allocations": own["leaked_allocations"]})
    env.eq("churn, aggregated: the program's temporary allocations and peak",
           (agg["summary"]["temporary_allocations"], agg["summary"]["peak_heap_bytes"]),
           (own["temporary"], PEAK))
    env.eq("churn: the aggregated report is the full one (totals, classes, every site list)",
           essentials(agg), essentials(full))
    env.eq("churn: the JSON says aggregated, every 20 ms", (agg.get("aggregated") or {}).get("interval_ns"),
           20000000)
    env.eq("churn: a full trace's JSON says not", full.get("aggregated", "absent"), None)
    trace = os.path.join(env.scratch, "churn-agg", "trace.zst")
    text = env.run_analyze(trace).stdout.decode()
    env.check("churn: the text report says aggregated", "aggregated: memory over time every 0.02 s" in text,
              text[:300])

# ---- marks: --between gives the full trace's window ----
for_between = {}
for kind in ("full", "agg"):
    r = env.run_analyze(os.path.join(env.scratch, "churn-" + kind, "trace.zst"), "--json", "--between",
                        "half,done")
    if env.check("churn %s: --between half,done exits 0" % kind, r.returncode == 0, r.stderr[-300:]):
        rep = json.loads(r.stdout)
        for_between[kind] = essentials(rep)
if len(for_between) == 2:
    env.eq("churn: --between half,done aggregated is the full trace's", for_between["agg"], for_between["full"])

# ---- every output works, and those without time say the same ----
OUTS = (("--folded", "folded"), ("--flamegraph", "svg"), ("--speedscope", "json"), ("--massif", "massif"),
        ("--pprof", "pb.gz"), ("--html", "html"), ("--junit", "xml"), ("--sarif", "sarif"))
for opt, ext in OUTS:
    got = {}
    for kind in ("full", "agg"):
        d = os.path.join(env.scratch, "churn-" + kind)
        out = os.path.join(d, "out." + ext)
        r = env.run_analyze(os.path.join(d, "trace.zst"), opt, out)
        if env.check("churn %s: %s exits 0 and writes" % (kind, opt), r.returncode == 0 and
                     os.path.getsize(out) > 0, r.stderr[-300:]):
            with open(out, "rb") as f:
                got[kind] = f.read()
    if opt in ("--folded", "--junit") and len(got) == 2:
        scrub = lambda b: re.sub(rb"churn-(full|agg)|0x[0-9a-f]+|time=\"[^\"]*\"|timestamp=\"[^\"]*\"", b"", b)
        env.eq("churn: %s aggregated is the full trace's" % opt, scrub(got["agg"]), scrub(got["full"]))
html = os.path.join(env.scratch, "churn-agg", "out.html")
if os.path.exists(html):
    with open(html, errors="replace") as f:
        env.check("churn: the HTML report says aggregated", 'data-test="aggregated"' in f.read())

# ---- threads: totals, leaks and temporaries (the peak depends on the threads' order) ----
(rf, full), (ra, agg) = traced_pair("churn-threads", [churn, "5000", "4"])
if env.check("churn, 4 threads: both traced, exit 0", full and agg and rf.returncode == 0 and ra.returncode == 0,
             ra.stderr[-300:]):
    own = own_counts(ra.stdout)
    env.eq("churn, 4 threads: the aggregated report is the full one but for the peak and temporaries",
           essentials(agg, ordered=False), essentials(full, ordered=False))
    env.eq("churn, 4 threads: the program's leaks (glibc's for the threads apart)",
           ct.sites(agg["leaks"], "leak"), (own["leaked_bytes"], own["leaked_allocations"]))

# ---- leak classes and --check: valgrind's classes, the same verdict ----
vg = env.valgrind_main([leak_classes], env.fresh_dir("valgrind"))
(rf, full), (ra, agg) = traced_pair("classes", [leak_classes], ("--check",))
if env.check("classes: both traced", full and agg):
    env.eq("classes, --check: the same verdict (exit 23: definite leaks)", (ra.returncode, rf.returncode), (23, 23))
    env.eq("classes: the aggregated report is the full one", essentials(agg), essentials(full))
    if vg:
        classes = ("definitely_lost", "indirectly_lost", "possibly_lost", "still_reachable")
        env.eq("classes, aggregated: valgrind's LEAK SUMMARY",
               {c: (agg["summary"][c + "_bytes"], agg["summary"][c + "_blocks"]) for c in classes},
               {c: (vg[c + "_bytes"], vg[c + "_blocks"]) for c in classes})

# ---- fork: the child's writer aggregates too ----
d = env.fresh_dir("forker")
r, files = env.run_ctrack([forker], d, opts=("--follow-children",) + AGG)
reps = [env.report(os.path.join(d, f)) for f in files]
kids = [x for x in reps if x and x["summary"]["allocations"] == 2]
if env.eq("forker: two traces, exit 0", (len(files), r.returncode), (2, 0)) and env.eq("forker: a child's", len(kids), 1):
    env.eq("forker: the child's trace is aggregated", kids[0].get("aggregated") is not None, True)
    env.eq("forker: the child's exact figures", {k: kids[0]["summary"][k] for k in CHILD}, CHILD)

# ---- endings: a fault (no scan), SIGTERM (a scan), an exec: a full trace's figures and notes ----
for how in ("segv", "sigterm", "execv"):
    (rf, full), (ra, agg) = traced_pair("endings-" + how, [endings, how])
    if env.check("endings %s: both traced, complete" % how, full and agg and agg["complete"], ra.stderr[-300:]):
        env.eq("endings %s: the aggregated report is the full one, notes too" % how,
               (essentials(agg), [n["text"] for n in agg["notes"]], ra.returncode),
               (essentials(full), [n["text"] for n in full["notes"]], rf.returncode))

# ---- SIGKILL: everything up to the last snapshot ----
d = env.fresh_dir("killed")
trace = os.path.join(d, "trace.zst")
p = subprocess.Popen([env.ctrack, "-q", "--aggregate", "--snapshot", "0.05", "-o", trace, killed, "wait"],
                     cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
line = p.stdout.readline().decode()
pid = int(line.split()[1]) if line.startswith("ready") else None
if env.check("killed: the program is ready", pid is not None, line):
    time.sleep(0.5)  # several snapshots: the blocks were made before the "ready" line
    os.kill(pid, signal.SIGKILL)
    p.communicate(timeout=60)
    rep = env.report(trace)
    if rep:
        env.eq("killed: its 100 early blocks, from its last snapshot",
               (rep["summary"]["allocations"], rep["summary"]["bytes_allocated"], rep["complete"]),
               (100, 100000, False))

# ---- the bound: the trace grows with stacks and snapshots, not with events ----
sizes = {}
for rounds in (2000, 200000):
    d = env.fresh_dir("bound-%d" % rounds)
    trace = os.path.join(d, "trace.zst")
    r, _ = env.run_ctrack([churn, str(rounds), "1"], d, opts=("-o", trace) + AGG, timeout=600)
    if env.check("bound, %d rounds: traced" % rounds, r.returncode == 0 and os.path.exists(trace)):
        sizes[rounds] = (os.path.getsize(trace), own_counts(r.stdout)["allocations"])
if len(sizes) == 2:
    (small, n_small), (big, n_big) = sizes[2000], sizes[200000]
    print("bound: %d allocations -> %d bytes, %d allocations -> %d bytes" % (n_small, small, n_big, big))
    env.check("bound: 100 times the events make less than twice the trace", n_big >= 99 * n_small and big < 2 * small,
              "%d -> %d bytes" % (small, big))

# ---- bad options: one line, exit 2 ----
for bad in ("0", "0.001", "-1", "x", "100000", "1e400"):
    r = subprocess.run([env.ctrack, "--snapshot", bad, "true"], capture_output=True)
    env.check("--snapshot %s: exit 2, one line naming it" % bad,
              r.returncode == 2 and r.stderr.decode().startswith("ctrack: --snapshot: expected seconds"),
              r.stderr.decode())
env.finish()
