#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# ctrack --sample (issue 26): a sampled trace's figures are estimates within the sampler's own statistical
# error of the exact ones, and sampling never breaks the matching of frees to allocations.
#
# The error bound: an allocation of s bytes is recorded with probability p = 1 - exp(-s / R) (a Poisson
# process over the bytes, format.h's SAMPLING), independently of the others, and weighed 1 / p. So the
# estimate of n such allocations has variance n (1 - p) / p, of their bytes n s^2 (1 - p) / p; a figure
# passes within 4 standard deviations (plus 2 for the model's rounding down). The peak, a maximum over
# the run of a noisy heap, gets 5. The seed is fixed (CTRACK_SAMPLE_SEED): the test is deterministic.
#
# Exact figures come from tests/progs/sample_sites.c's own comment; for sort, sqlite3 and python3
# (scripts/bench's workloads) from their full, unsampled traces, whose size histogram bounds the variance (each bucket's
# allocations at the worst size in the bucket), plus 1% for what differs between two runs of a real program.
import importlib.machinery
import importlib.util
import math
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ctrack_test import Env  # noqa: E402

SEED_VAR, SEED = "CTRACK_SAMPLE_SEED", "20261206"
RATES = (4096, 65536, 524288)
# sample_sites.c's figures (its header comment)
SMALL_N, SMALL_SIZE = 300000, 48
MID_N, MID_SIZE = 20000, 2000
BIG_N, BIG_SIZE, BIG_LEAKED = 200, 262144, 50
GAP_N, FILLER_N, FILLER_TEMPORARY = 100000, 100001, 50000
PEAK = MID_N * MID_SIZE + BIG_N * BIG_SIZE


def p_of(size, rate):
    return -math.expm1(-max(size, 1) / rate)


def var_count(n, size, rate):
    return n * (1 - p_of(size, rate)) / p_of(size, rate)


def var_bytes(n, size, rate):
    return var_count(n, size, rate) * size * size


def close(env, what, got, want, var, sds=4, slack=2):
    bound = sds * math.sqrt(var) + slack
    return env.check("%s: %d within %.0f of %d (%d sd)" % (what, got, bound, want, sds), abs(got - want) <= bound)


def entry(doc, kind, function):
    """The entry of list `kind` (allocations, leaks, temporary) whose site is `function`, or None."""
    for e in doc[kind]:
        if e["frames"] and e["frames"][0].get("function") == function:
            return e
    return None


def test_sites(env, prog):
    """sample_sites sites at three rates: each site's allocations and bytes, the small site's temporary
    allocations, the big site's leaks, the peak; the sites every block of which was freed leak nothing."""
    full = env.report(env.trace("sites-full", [prog, "sites"]))
    if not full:
        return
    # The C runtime's own blocks (none here, but measured rather than assumed) are in the full trace's peak.
    runtime = full["summary"]["peak_heap_bytes"] - PEAK
    env.check("full trace: the peak is the program's (C runtime: %d bytes)" % runtime, 0 <= runtime < 65536)
    temporary = lambda doc, fn: (entry(doc, "temporary", fn) or {"temporary_allocations": 0})["temporary_allocations"]
    env.eq("full trace: gap_site and filler_site temporary allocations",
           (temporary(full, "gap_site"), temporary(full, "filler_site")), (0, FILLER_TEMPORARY))
    for rate in RATES:
        name = "sites-%d" % rate
        trace = env.trace(name, [prog, "sites"], opts=("--sample=%d" % rate,))
        doc = env.report(trace)
        if not doc:
            continue
        env.eq(name + ": the trace says its rate", doc["sampling"] and doc["sampling"]["rate"], rate)
        for fn, n, size in (("small_site", SMALL_N, SMALL_SIZE), ("mid_site", MID_N, MID_SIZE),
                            ("big_site", BIG_N, BIG_SIZE)):
            e = entry(doc, "allocations", fn) or {"allocations": 0, "bytes": 0}
            close(env, "%s: %s allocations" % (name, fn), e["allocations"], n, var_count(n, size, rate))
            close(env, "%s: %s bytes" % (name, fn), e["bytes"], n * size, var_bytes(n, size, rate))
        e = entry(doc, "temporary", "small_site") or {"temporary_allocations": 0}
        close(env, name + ": small_site temporary allocations", e["temporary_allocations"], SMALL_N,
              var_count(SMALL_N, SMALL_SIZE, rate))
        # A recorded block whose free came next in the ring but not next among the thread's calls (sampling
        # left out the calls between) is no temporary: exactly none of gap_site's, an unbiased estimate of
        # filler_site's.
        env.eq(name + ": gap_site temporary allocations", temporary(doc, "gap_site"), 0)
        close(env, name + ": filler_site temporary allocations", temporary(doc, "filler_site"), FILLER_TEMPORARY,
              var_count(FILLER_TEMPORARY, SMALL_SIZE, rate))
        e = entry(doc, "allocations", "filler_site") or {"allocations": 0}
        close(env, name + ": filler_site allocations", e["allocations"], FILLER_N, var_count(FILLER_N, SMALL_SIZE, rate))
        e = entry(doc, "leaks", "big_site") or {"allocations": 0, "bytes": 0}
        close(env, name + ": big_site leaked blocks", e["allocations"], BIG_LEAKED,
              var_count(BIG_LEAKED, BIG_SIZE, rate))
        close(env, name + ": big_site leaked bytes", e["bytes"], BIG_LEAKED * BIG_SIZE,
              var_bytes(BIG_LEAKED, BIG_SIZE, rate))
        env.eq(name + ": small_site and mid_site, all freed, leak nothing",
               [entry(doc, "leaks", f) for f in ("small_site", "mid_site")], [None, None])
        close(env, name + ": peak", doc["summary"]["peak_heap_bytes"], PEAK + runtime,
              var_bytes(MID_N, MID_SIZE, rate) + var_bytes(BIG_N, BIG_SIZE, rate), sds=5)
        env.eq(name + ": no leak classes", doc["summary"].get("definitely_lost_bytes"), None)


def histogram_var(doc, rate):
    """Upper bounds of the variances of the estimated allocations and bytes from a full trace's size
    histogram: each bucket's allocations at the worst size in it."""
    vc = vb = 0.0
    for b in doc["histogram"]:
        lo, hi = max(b["min_size"], 1), min(b["max_size"] or 1 << 40, 1 << 40)
        grid = [lo + (hi - lo) * i / 32 for i in range(33)]
        vc += var_count(b["allocations"], lo, rate)  # (1 - p) / p falls with the size
        vb += b["allocations"] * max(s * s * (1 - p_of(s, rate)) / p_of(s, rate) for s in grid) * 1.05
    return vc, vb


def test_real(env, name, argv, cwd):
    """A real program at 64 KiB: its allocations, bytes allocated and peak against its full trace's."""
    full = env.report(env.trace(name + "-full", argv, opts=()))
    doc = env.report(env.trace(name + "-sampled", argv, opts=("--sample=64KiB",)))
    if not full or not doc:
        return
    vc, vb = histogram_var(full, 65536)
    f, s = full["summary"], doc["summary"]
    close(env, name + ": allocations", s["allocations"], f["allocations"], vc, slack=2 + f["allocations"] / 100)
    close(env, name + ": bytes allocated", s["bytes_allocated"], f["bytes_allocated"], vb,
          slack=2 + f["bytes_allocated"] / 100)
    # Temporary allocations are some of them: vc bounds their estimate's variance too. (Judged among the
    # recorded events alone, sqlite3's were 4.0 times the full trace's at this rate, the median of 7 seeds.)
    close(env, name + ": temporary allocations", s["temporary_allocations"], f["temporary_allocations"], vc,
          slack=2 + f["temporary_allocations"] / 100)
    # The heap at any time sums fewer blocks than every allocation: vb bounds its variance too.
    close(env, name + ": peak", s["peak_heap_bytes"], f["peak_heap_bytes"], vb, sds=5,
          slack=2 + f["peak_heap_bytes"] / 100)
    env.eq(name + ": no invalid or unmatched frees", (s["invalid_frees"], s["unmatched_frees"]), (0, 0))


def load_bench(root):
    loader = importlib.machinery.SourceFileLoader("ctrack_bench", os.path.join(root, "scripts", "bench"))
    spec = importlib.util.spec_from_loader("ctrack_bench", loader)
    bench = importlib.util.module_from_spec(spec)
    loader.exec_module(bench)
    return bench


def test_real_programs(env, root):
    bench = load_bench(root)
    d = env.fresh_dir("real-inputs")
    for name in ("sort", "sqlite3", "python3"):
        try:
            argv = bench.prepare_real(name, d)
        except bench.Missing as why:
            print("SKIP %s: %s" % (name, why))
            continue
        test_real(env, name, argv, d)


def own_leaks(doc):
    """The leak entries whose site is in sample_sites.c."""
    return [e for e in doc["leaks"] if e["frames"] and e["frames"][0].get("file", "").endswith("sample_sites.c")]


def test_churn(env, prog):
    """sample_sites churn at a high rate (many blocks sampled, most not): threads freeing each other's
    blocks, reallocs between sampled and unsampled sizes, realloc(NULL) and to 0, fork. Every block is
    freed: no site of the program may leak, no free may be invalid or unmatched, in the parent's trace;
    the child's frees only what it inherited (unmatched, blocks from before its trace) and its own."""
    for rate in (4096, 65536):
        name = "churn-%d" % rate
        d = env.fresh_dir(name)
        r, new = env.run_ctrack([prog, "churn"], d, opts=("--sample=%d" % rate, "--follow-children"))
        env.eq(name + ": exit status", r.returncode, 0)
        env.eq(name + ": two traces (the child's)", len(new), 2)
        docs = [env.report(os.path.join(d, t)) for t in new]
        if len(new) != 2 or not all(docs):
            continue
        # the child is the trace whose process's parent is the other's (not the higher pid: pids wrap)
        child, parent = docs if docs[0]["process"]["ppid"] == docs[1]["process"]["pid"] else docs[::-1]
        env.eq(name + ": the child's parent is the other trace's process", child["process"]["ppid"],
               parent["process"]["pid"])
        s = parent["summary"]
        env.eq(name + ": parent: no invalid or unmatched frees", (s["invalid_frees"], s["unmatched_frees"]), (0, 0))
        env.eq(name + ": parent: the program's sites leak nothing", own_leaks(parent), [])
        env.check(name + ": parent: live bytes not negative", 0 <= s["leaked_bytes"] < 1 << 40, s["leaked_bytes"])
        env.check(name + ": parent: some blocks sampled, not all", 0 < s["allocations"], s)
        c = child["summary"]
        env.eq(name + ": child: sampled too, with a seed of its own",
               (child["sampling"] or {}).get("rate") == rate and child["sampling"]["seed"] != parent["sampling"]["seed"],
               True)
        env.eq(name + ": child: no invalid frees", c["invalid_frees"], 0)
        env.eq(name + ": child: the program's sites leak nothing", own_leaks(child), [])
        env.check(name + ": child: live bytes not negative", 0 <= c["leaked_bytes"] < 1 << 40, c["leaked_bytes"])


def test_signals(env, sigdefer):
    """tests/progs/sigdefer.c at 4096 bytes: signal handlers that free, allocate and realloc while their
    threads report (deferred events) or sit in the sampler (its slowest stretch, where handlers land):
    each site's estimate within the bound of the program's own counts, which it prints (a handler's
    malloc(40) that found the countdown its thread had just used up was sampled 3.5 times too often),
    and no free unmatched or invalid. Events the shim could not record (a NOTE counts them) widen the
    bound by their weight."""
    threads, per_thread, rate = 4, 1000, 4096
    d = env.fresh_dir("signals")
    trace = os.path.join(d, "t.zst")
    r, _ = env.run_ctrack([sigdefer, str(threads), str(per_thread)], d, opts=("-o", trace, "--sample=%d" % rate))
    env.eq("signals: exit status", r.returncode, 0)
    doc = env.report(trace)
    if not doc:
        return
    sites = dict((m.group(1), int(m.group(2))) for m in
                 re.finditer(r"site function=(\w+) line=\d+ allocations=(\d+)", r.stderr.decode()))
    dropped = sum(int(m.group(1)) for n in doc["notes"] for m in [re.match(r"(\d+) allocation events", n["text"])]
                  if m)
    slack = 2 + dropped * 1 / p_of(16, rate)
    s = doc["summary"]
    env.eq("signals: no invalid or unmatched frees", (s["invalid_frees"], s["unmatched_frees"]), (0, 0))
    loop = sites.get("work", 0) - threads  # work's warm-up malloc(1) is its first site, line apart
    variances = {"handler_leak": var_count(threads * per_thread, 40, rate),
                 "handler_grow": threads * sum(var_count(1, 16 * k, rate) for k in range(1, per_thread + 1))}
    for fn, var in variances.items():
        e = entry(doc, "allocations", fn) or {"allocations": 0}
        close(env, "signals: %s allocations" % fn, e["allocations"], sites.get(fn, -1), var, slack=slack)
    e = entry(doc, "allocations", "work") or {"allocations": 0}
    close(env, "signals: the loop's allocations", e["allocations"], loop,
          sum(var_count(loop / 32, size, rate) for size in range(16, 48)), slack=slack + threads)


def test_refusals(env, prog):
    """--sample with --check is refused (exit 2, one line); so is a check of a sampled trace by
    ctrack-analyze; a bad rate is a usage error; every report and the closing message say "sampled"."""
    d = env.fresh_dir("refusals")
    for opts in (("--sample=64KiB", "--check"), ("--sample=64KiB", "--max-peak=1MiB"), ("--sample=0",),
                 ("--sample=64GiB",), ("--sample=lots",)):
        r, new = env.run_ctrack([prog, "sites"], d, opts=opts)
        lines = r.stderr.decode().splitlines()
        env.check("ctrack %s: exit 2, one line, nothing run" % " ".join(opts),
                  r.returncode == 2 and not new and len(lines) == 2 and lines[0].startswith("ctrack: --sample")
                  and not r.stdout, r.stderr)
    trace = os.path.join(d, "t.zst")
    r = subprocess.run([env.ctrack, "-o", trace, "--sample=64KiB", prog, "sites"], cwd=d, capture_output=True,
                       timeout=120)  # without -q: the closing message
    env.check("closing message says sampled",
              "ctrack: sampled: one allocation per 65536 bytes on average; figures are estimates\n"
              in r.stderr.decode(), r.stderr)
    for rule in ("--fail-on=definite", "--max-leaked=0", "--max-peak=1GiB", "--sarif=" + os.path.join(d, "s.json")):
        a = env.run_analyze(trace, rule)
        env.check("ctrack-analyze %s of a sampled trace: exit 2, one line" % rule,
                  a.returncode == 2 and a.stderr.decode().count("\n") == 1 and b"is sampled" in a.stderr,
                  a.stderr)
    text = env.run_analyze(trace).stdout.decode()
    env.check("the text report says sampled, once",
              text.count("sampled: one allocation per 65536 bytes on average; figures are estimates") == 1)
    html = os.path.join(d, "t.html")
    env.run_analyze(trace, "--html=" + html)
    with open(html, errors="replace") as f:
        page = f.read()
    env.check("the HTML report says sampled", 'data-test="sampled"' in page and '"sample_rate":65536' in page)


def main():
    env = Env(sys.argv[:5])
    prog, root, sigdefer = sys.argv[5], sys.argv[6], sys.argv[7]
    env.analyze_opts = ["--top", "100"]
    os.environ[SEED_VAR] = SEED  # every sampled run's draws (a full run has no use for it)
    test_refusals(env, prog)
    test_sites(env, prog)
    test_churn(env, prog)
    test_signals(env, sigdefer)
    test_real_programs(env, root)
    env.finish()


if __name__ == "__main__":
    main()
