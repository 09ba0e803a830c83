# SPDX-License-Identifier: MIT
# The HTML report's two resolutions (issue 24): tests/progs/busy_phases.c's 4096 stacks, all busy in every
# round, exceed the analyzer's budget of per-site entries, so the sites' slices coarsen while the whole
# heap keeps its own (timeline.h). Checked against the program's own figures (its comment): the data
# document's two widths, the whole heap's per-slice allocations summing to the program's, every site's
# slices to its figures; then in Debian's Chromium (tests/browser/report_test.mjs --phases): the heap
# chart at the heap's resolution, a drag across each phase snapping to site slices (the window's text
# says so) and narrowing the histogram to that phase's allocations exactly, sites of one function told
# apart by their stacks, a zero "definitely lost" not in red.
# Usage: test_html_busy.py CTRACK ANALYZE VALGRIND SCRATCH BUSY REPORT_TEST_MJS SHOTS
# Without Chromium, node or tests/browser/node_modules the browser part is skipped (exit 77 when all
# else passed), unless CI is set: then it fails.
import json
import os
import re
import shutil
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
busy, report_test, shots = env.progs[:3]

# busy_phases.c's comment.
STACKS, R1, R2, S1, S2 = 4096, 240, 240, 24, 80
SUMMARY = {"allocations": STACKS * (R1 + R2), "frees": STACKS * (R1 + R2 - 1),
           "bytes_allocated": STACKS * (R1 * S1 + R2 * S2), "temporary_allocations": 0,
           "peak_heap_bytes": STACKS * S2, "leaked_bytes": STACKS * S2, "leaked_allocations": STACKS}
FIGURES = {"allocations": STACKS * (R1 + R2), "frees": STACKS * (R1 + R2 - 1), "peak-heap": STACKS * S2,
           "definitely-lost": 0}
# The window's text: the range, then the sites' step (it is coarser than the charts' slices).
WINDOW = re.compile(r"^window: \d+\.\d{3} s \u2013 \d+\.\d{3} s \(per-site figures at [\d.]+ (ms|\u00b5s|s) steps\)$")
RED = "rgb(166, 27, 27)"


def data_of(page):
    with open(page, encoding="utf-8") as f:
        m = re.search(r'<script[^>]*\bid="ct-data"[^>]*>(.*?)</script>', f.read(), re.S)
    if not env.check("the page holds its data document", m):
        return None
    return json.loads(m.group(1))


def check_data(d):
    tl, t = d["timeline"], d["totals"]
    print("busy: %d heap slices of %d us, %d site slices of %d us, %d sites" % (
        tl["n"], tl["width_us"], tl["site_n"], tl["site_width_us"], len(d["sites"])))
    env.check("data: the sites' slices coarsened, the heap's did not (%d us, %d us)" % (tl["site_width_us"],
                                                                                         tl["width_us"]),
              tl["site_width_us"] > tl["width_us"] and tl["site_width_us"] % tl["width_us"] == 0)
    env.check("data: the whole heap keeps its resolution: over 512 slices, at most 1024", 512 < tl["n"] <= 1024,
              str(tl["n"]))
    ratio = tl["site_width_us"] // tl["width_us"]
    env.eq("data: the site slices span the heap's", tl["site_n"], (tl["n"] - 1) // ratio + 1)
    env.eq("data: the heap arrays have a value per heap slice",
           [len(tl[k]) for k in ("heap", "rss", "allocs", "temps", "alloc_bytes")], [tl["n"]] * 5)
    env.eq("data: the heap's slices sum to the program's allocations and bytes",
           (sum(tl["allocs"]), sum(tl["alloc_bytes"]), sum(tl["temps"]), max(tl["heap"])),
           (SUMMARY["allocations"], SUMMARY["bytes_allocated"], 0, SUMMARY["peak_heap_bytes"]))
    ok = True
    for s, v in zip(d["sites"], tl["sites"]):
        sl = v[0::6]
        ok &= sl == sorted(set(sl)) and all(0 <= x < tl["site_n"] for x in sl)
        ok &= (sum(v[1::6]), sum(v[2::6]), sum(v[2::6]) - sum(v[4::6])) == (s["n"], s["bytes"], s["live"])
    env.check("data: every site's slices increase within the site slices and sum to its figures", ok)
    marks = {m["name"]: m["t"] for m in d["marks"]}
    env.eq("data: marks", sorted(marks), ["end", "phase2"])
    # The gaps around the mark are wider than two site slices: a window snapped to them holds one phase.
    env.check("data: a site slice (%d us) is far narrower than the gaps (600 ms)" % tl["site_width_us"],
              tl["site_width_us"] * 4 < 600000)


skipped = None


def browser(page):
    global skipped
    if ct.browser_off():
        return None
    node = shutil.which("node")
    why = "node is not installed"
    if node:
        r = subprocess.run([node, report_test, page, shots, "--phases"], capture_output=True, timeout=900)
        err = r.stderr.decode(errors="replace")
        if r.returncode != 77:
            return json.loads(r.stdout) if env.check("browser: report_test.mjs exits 0", r.returncode == 0,
                                                      err[-2000:]) else None
        why = err.strip()
    if os.environ.get("CI"):
        env.check("browser: runs (CI is set: a missing browser is a failure)", False, why)
    else:
        print("SKIP browser part:", why)
        skipped = why
    return None


def bucket(d, size):
    return str(next(h["lo"] for h in d["histogram"] if h["lo"] <= size <= h["hi"]))


def check_browser(d, b):
    tl = d["timeline"]
    print("busy: ready in %d ms" % b["ready_ms"])
    env.eq("browser: data-ready, no uncaught error", (b["ready"], b["errors"]), ("1", None))
    env.eq("browser: no console error or warning, no page error", b["console"] + b["pageerrors"], [])
    env.eq("browser: the header's figures", {k: b["figures"].get(k) for k in FIGURES}, FIGURES)
    env.check("browser: definitely lost, 0 bytes, not in red", (b.get("colours") or {}).get("definitely-lost")
              not in (None, RED), repr(b.get("colours")))
    charts = b.get("charts") or []
    env.check("browser: four charts", len(charts) == 4, repr(charts))
    if charts:
        env.eq("browser: the heap chart has a point per heap slice, not per site slice", charts[0]["points"], tl["n"])
        env.eq("browser: the heap chart rises to the peak", charts[0]["max"], SUMMARY["peak_heap_bytes"])
        env.check("browser: the heap chart has the sites' bands, the other sites and the whole heap's line",
                  charts[0]["series"] >= 4, repr(charts[0]))
    p = b.get("phases") or {}
    one, two, reset = p.get("phase1"), p.get("phase2"), p.get("reset")
    if not env.check("browser: three windows tried", one and two and reset, repr(p)[:500]):
        return
    for name, ph in (("phase 1", one), ("phase 2", two)):
        env.check("browser: %s's window says its per-site step" % name, WINDOW.match(ph["window"]), ph["window"])
        a, z = ph["state"]
        env.check("browser: %s's window is site slices (%d to %d of %d)" % (name, a, z, tl["site_n"]),
                  0 <= a < z <= tl["site_n"])
        env.eq("browser: %s's leaks view says the window does not narrow the leak classes" % name,
               "exit scan" in (ph.get("leaks_note") or ""), True)
        labels = ph.get("labels") or []
        env.check("browser: %s: the sites table's names are all different (the stacks told apart)" % name,
                  len(labels) > 100 and len(set(labels)) == len(labels), repr(labels[:5]))
        env.check("browser: %s: a site is named by its function and its caller" % name,
                  all(re.match(r"^alloc_[ab] \u2190 leaf \u2190 ", x) for x in labels), repr(labels[:5]))
    env.eq("browser: phase 1: the histogram holds A's allocations alone, all of them", one["buckets"],
           {bucket(d, S1): STACKS * R1})
    env.eq("browser: phase 2: the histogram holds B's allocations alone, all of them", two["buckets"],
           {bucket(d, S2): STACKS * R2})
    env.eq("browser: phase 2: B's blocks live at the window's end (the table's rows)",
           sum(r["live"] for r in two["rows"]) if len(two["rows"]) == STACKS else STACKS * S2, STACKS * S2)
    env.check("browser: double-click resets the window", reset["window"].startswith("window: the whole run"),
              reset["window"])
    env.eq("browser: whole run: the histogram holds every allocation", reset["buckets"],
           {bucket(d, S1): STACKS * R1, bucket(d, S2): STACKS * R2})


def main():
    r, rep = env.run_traced("busy", [busy])
    if not rep:
        return
    s = rep["summary"]
    env.eq("busy: figures of busy_phases.c", {k: s[k] for k in SUMMARY}, SUMMARY)
    page = os.path.join(env.scratch, "busy.html")
    r = env.run_analyze(os.path.join(env.scratch, "busy", "trace.zst"), "--html=" + page)
    if not env.check("--html exits 0", r.returncode == 0 and os.path.exists(page), r.stderr[-500:]):
        return
    print("busy: page of %d bytes" % os.path.getsize(page))
    d = data_of(page)
    if not d:
        return
    check_data(d)
    b = browser(page)
    if b:
        check_browser(d, b)


main()
if skipped and env.results and all(env.results):
    print("%d checks passed; the browser part skipped: %s" % (len(env.results), skipped))
    sys.exit(77)
env.finish()
