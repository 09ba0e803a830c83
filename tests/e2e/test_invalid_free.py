# SPDX-License-Identifier: MIT
# Invalid frees (tests/progs/invalid_free.c, issue 23 "Nothing silent"): a double free, frees of a
# global's, a stack array's and a heap block's inner address, each of which glibc aborts on, and a
# double free glibc misses. ctrack's status is the program's own (134 after glibc's abort); each
# report (JSON, text, HTML, the closing message) names one invalid free of its kind, its backtrace
# starting at the program's function and line of the call (the LINE markers), as memcheck's
# "Invalid free()" does on the same program (its count, and its stack's frames below free); none is
# counted among the frees of blocks allocated before tracing, which a forked child's free of its
# parent's block stays. `ctrack --check` fails (23) on the invalid free of a program that goes on.
import os
import re
import signal
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog, src = env.progs[0], env.progs[1]
FILE = os.path.basename(src)
LINES = ct.line_markers(src)

# mode: (JSON kind, the function that frees, its LINE marker, the program's native status)
MODES = {
    "double": ("double_free", "double_free", "double_free", 128 + signal.SIGABRT),
    "global": ("static", "global_free", "global_free", 128 + signal.SIGABRT),
    "stack": ("stack", "stack_free", "stack_free", 128 + signal.SIGABRT),
    "interior": ("not_allocated", "interior_free", "interior_free", 128 + signal.SIGABRT),
    "fastbin": ("double_free", "fastbin_free", "fastbin_free", 0),
}


def place(frame):
    return (frame.get("function"), os.path.basename(frame.get("file") or ""), frame.get("line"))


def valgrind_invalid(mode, d):
    """memcheck's "Invalid free()" reports of the mode: [[(function, file, line) below free, ...]]."""
    log = os.path.join(d, "vg.log")
    subprocess.run([env.valgrind, *ct.VG_FLAGS, "--log-file=" + log, prog, mode], cwd=d,
                   capture_output=True, timeout=300)
    with open(log, errors="replace") as f:
        text = f.read()
    stacks = []
    for block in text.split("Invalid free()")[1:]:
        frames = []
        for line in block.splitlines()[1:]:
            m = re.search(r"(?:at|by) 0x[0-9A-F]+: (\S+) \((?:([^ :]+):(\d+)|in .*)\)", line)
            if not m:
                break
            frames.append((m.group(1), m.group(2), int(m.group(3)) if m.group(3) else None))
        stacks.append(frames)
    return stacks


for mode, (kind, function, line, status) in MODES.items():
    native = subprocess.run([prog, mode], capture_output=True, preexec_fn=ct.no_core)
    native_status = 128 - native.returncode if native.returncode < 0 else native.returncode
    env.eq(mode + ": premise: the program's own status", native_status, status)
    d = env.fresh_dir(mode)
    trace = os.path.join(d, "trace.zst")
    r, _ = env.run_ctrack([prog, mode], d, opts=("-o", trace))
    env.eq(mode + ": ctrack's status is the program's", r.returncode, native_status)
    rep = env.report(trace) if os.path.exists(trace) else None
    if not env.check(mode + ": trace read", rep is not None):
        continue
    s = rep["summary"]
    env.eq(mode + ": one invalid free in the summary", s.get("invalid_frees"), 1)
    env.eq(mode + ": none of blocks allocated before tracing", s["unmatched_frees"], 0)
    entries = rep.get("invalid_frees") or []
    env.eq(mode + ": one entry", len(entries), 1)
    e = entries[0] if entries else {}
    env.eq(mode + ": its kind", (e.get("kind"), e.get("call"), e.get("count")), (kind, "free", 1))
    frames = [place(f) for f in e.get("frames", [])]
    env.eq(mode + ": its backtrace starts at the call", frames[:1], [(function, FILE, LINES[line])])
    if status:  # the program died in the free: the whole backtrace, from the crash's
        env.check(mode + ": ... and goes on to main", any(f[0] == "main" for f in frames),
                  repr(frames))
        crash = rep.get("fatal_signal") or {}
        env.eq(mode + ": the fatal signal", (crash.get("signal"), crash.get("number")),
               ("SIGABRT", signal.SIGABRT))
        taken = [place(f) for f in (crash.get("taken_at") or {}).get("frames", [])]
        env.check(mode + ": the fatal signal's backtrace holds the free's call, then goes on as the "
                  "free's", frames and taken[-len(frames):] == frames, repr(taken))
    else:
        env.eq(mode + ": no fatal signal", rep.get("fatal_signal", "absent"), None)
    if kind == "double_free":
        first, alloc = line.replace("_free", "_first"), line.replace("_free", "_alloc")
        freed = [place(f) for f in (e.get("freed") or {}).get("frames", [])]
        env.eq(mode + ": where it was freed before", freed[:1], [(function, FILE, LINES[first])])
        block = e.get("block") or {}
        env.eq(mode + ": the block's size and allocation",
               (block.get("size"),
                [place(f) for f in (block.get("allocated") or {}).get("frames", [])][:1]),
               (32 if mode == "double" else 100, [(function, FILE, LINES[alloc])]))
    # memcheck on the same program: one "Invalid free()", its frames below free the same
    vg = valgrind_invalid(mode, d)
    env.eq(mode + ": valgrind's Invalid free() count", len(vg), 1)
    vg_frames = [f for f in (vg[0] if vg else []) if f[0] != "free"]
    want = [f for f in frames[:len(vg_frames)]]
    env.eq(mode + ": valgrind's top frames below free", vg_frames[:2] if status else vg_frames[:1],
           want[:2] if status else want[:1])
    # the text report and the HTML page show it
    t = env.run_analyze(trace)
    text = t.stdout.decode(errors="replace")
    section = text.split("INVALID FREES:", 1)[-1]
    env.check(mode + ": text: an INVALID FREES section with the call's line",
              "INVALID FREES:" in text and
              re.search(r"#0 0x[0-9a-f]+ %s at \S*%s:%d" % (function, FILE, LINES[line]), section),
              text[-2000:])
    env.check(mode + ": text: the summary counts it", "invalid frees: 1" in text, text[:1500])
    page = os.path.join(d, "report.html")
    h = env.run_analyze(trace, "--html=" + page)
    body = open(page, errors="replace").read() if h.returncode == 0 and os.path.exists(page) else ""
    listed = body.split('id="invalid-list"', 1)[-1].split("</div>", 1)[0]
    env.check(mode + ": HTML: an invalid free with the call's function and line",
              'id="invalid-frees"' in body and 'data-kind="%s"' % kind in listed and
              'data-function="%s"' % function in listed and 'data-line="%d"' % LINES[line] in listed,
              listed[:1500])
    # the closing message says so
    r2 = subprocess.run([env.ctrack, "-o", os.path.join(d, "again.zst"), prog, mode], cwd=d,
                        capture_output=True, timeout=120, preexec_fn=ct.no_core)
    closing = r2.stderr.decode(errors="replace")
    env.check(mode + ": the closing message names the invalid free",
              "1 invalid free" in closing and "ctrack-analyze" in closing, closing[-800:])

# --check: an invalid free fails it (23) in a program that goes on
d = env.fresh_dir("check")
r, _ = env.run_ctrack([prog, "fastbin"], d, opts=("--check", "-o", os.path.join(d, "t.zst")))
err = r.stderr.decode(errors="replace")
env.eq("check: fails with 23", r.returncode, 23)
env.check("check: the verdict names the invalid free and its line",
          "check failed: 1 invalid free" in err and
          re.search(r"fastbin_free at \S*%s:%d" % (FILE, LINES["fastbin_free"]), err), err[-1500:])

# a forked child frees its parent's block: allocated before the child's trace began, not invalid
d = env.fresh_dir("fork")
r, traces = env.run_ctrack([prog, "fork"], d, opts=("--follow-children",))
env.eq("fork: exit status", r.returncode, 0)
env.eq("fork: two traces", len(traces), 2)
reports = [env.report(os.path.join(d, t)) for t in traces]
by_free = sorted(((rp or {}).get("summary", {}).get("unmatched_frees"),
                  (rp or {}).get("summary", {}).get("invalid_frees")) for rp in reports)
env.eq("fork: the child's free counts as allocated before tracing, none invalid",
       by_free, [(0, 0), (1, 0)])
vg = valgrind_invalid("fork", d)
env.eq("fork: valgrind reports no invalid free", len(vg), 0)
env.finish()
