# SPDX-License-Identifier: MIT
# ctrack -p PID (issue 26): tests/progs/attach_loop.c runs phases on command and prints its own count
# of each. Phase 0 runs untraced; ctrack attaches, phase 1 runs, ctrack detaches (SIGINT, as Ctrl-C);
# phase 2 runs untraced; ctrack attaches again into a second file, phase 3 runs and the program
# dlopens tests/progs/dlib.c, whose allocation must be traced (a module loaded after the attach);
# ctrack detaches; the program exits. Its stdout and exit status equal an untraced run's, and each
# trace's figures are the program's own for its window: allocations, bytes, frees, frees of blocks
# allocated before the attach (none an invalid free), leaks by class. A phase starts only once
# ctrack said it is attached, and the next command waits for the phase's line: the windows'
# boundaries are exact. Then: --duration, a process that exits while attached, and the refusals
# (no such process, a process under a debugger, attaching twice, a process that exits at once, a
# static program, an existing trace file). Skipped (77) without gdb or without ptrace.
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time

import ctrack_test as ct
from test_sample import close, var_bytes, var_count

env = ct.Env(sys.argv)
prog, lib = env.progs[0], env.progs[1]

if not shutil.which("gdb"):
    print("SKIP: gdb is not installed (Debian: apt-get install gdb)")
    sys.exit(77)
try:
    with open("/proc/sys/kernel/yama/ptrace_scope") as f:
        if f.read().strip() not in ("0", "") and os.geteuid() != 0:
            print("SKIP: ptrace_scope forbids attaching to a non-child as this user")
            sys.exit(77)
except FileNotFoundError:
    pass

PHASE = re.compile(r"phase (\d+) allocs (\d+) bytes (\d+) frees (\d+) prefrees (\d+) live (\d+) lost (\d+)")
LOST_BYTES = 64  # attach_loop.c: each lost block is a calloc of 64 bytes
SCRIPT = ["phase 0", "where", "W1", "where", "phase 1", "thread 7", "D", "where", "phase 2", "W2",
          "phase 3", "dlopen " + lib, "D", "where", "exit"]
THREAD = re.compile(r"thread allocs (\d+) bytes (\d+)")


class Prog:
    """attach_loop with a pipe to its stdin; cmd() sends a line and returns the line it prints."""

    def __init__(self, cwd):
        self.p = subprocess.Popen([prog], cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, preexec_fn=ct.no_core)
        self.out = []

    def cmd(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        if line == "exit":
            self.p.stdin.close()
            return None
        if line == "where":  # on stderr
            return self.p.stderr.readline().strip()
        got = self.p.stdout.readline()
        self.out.append(got)
        return got.strip()

    def finish(self):
        self.out.append(self.p.stdout.read())
        return self.p.wait(timeout=60), "".join(self.out)


def attach(pid, trace, cwd, *opts, seed=None):
    """Starts ctrack -p (with CTRACK_SAMPLE_SEED=seed in its environment when given); returns it once
    it said it is attached (or ended)."""
    a = subprocess.Popen([env.ctrack, "-p", str(pid), "-o", trace, *opts], cwd=cwd,
                         stderr=subprocess.PIPE, text=True, preexec_fn=ct.no_core,
                         env=dict(os.environ, CTRACK_SAMPLE_SEED=seed) if seed else None)
    first = a.stderr.readline()
    a.first = first
    return a


def detach(a):
    a.send_signal(signal.SIGINT)
    rest = a.stderr.read()
    return a.wait(timeout=120), a.first + rest


def phase_figures(line):
    m = PHASE.match(line or "")
    return [int(x) for x in m.groups()[1:]] if m else None


def check_window(name, trace, phases, extra_allocs=0, extra_bytes=0, extra_live=0):
    """The trace's figures against the sum of the program's own for the phases of its window."""
    rep = env.report(trace)
    if not rep or not phases or None in phases:
        env.check(name + ": report and phase figures", False, repr(phases))
        return None
    allocs, nbytes, frees, prefrees, live, lost = (sum(p[i] for p in phases) for i in range(6))
    s = rep["summary"]
    env.eq(name + ": the trace is complete (END at the detach)", rep["complete"], True)
    env.eq(name + ": allocations, bytes, frees", (s["allocations"], s["bytes_allocated"], s["frees"]),
           (allocs + extra_allocs, nbytes + extra_bytes, frees))
    env.eq(name + ": frees of blocks allocated before the attach", s["unmatched_frees"], prefrees)
    env.eq(name + ": no invalid frees", (s["invalid_frees"], rep["invalid_frees"]), (0, []))
    env.eq(name + ": leaks (blocks live at the end, definitely lost, still reachable)",
           (s["leaked_allocations"], s["definitely_lost_blocks"], s["definitely_lost_bytes"],
            s["still_reachable_blocks"]),
           (live + lost + extra_live, lost, lost * LOST_BYTES, live + extra_live))
    att = rep.get("attach") or {}
    env.check(name + ": the report says the trace starts at an attach",
              "starts at an attach" in (att.get("note") or "")
              and any("starts at an attach" in n["text"] for n in rep["notes"]), repr(att))
    return rep


# ---- the reference: the same commands, untraced ----
d = env.fresh_dir("plain")
ref = Prog(d)
for line in SCRIPT:
    if line not in ("W1", "W2", "D"):
        ref.cmd(line)
ref_status, ref_out = ref.finish()

# ---- attach, detach, attach again, detach ----
d = env.fresh_dir("windows")
p = Prog(d)
figures, ctr, closing = {}, None, {}
traces = {"W1": os.path.join(d, "w1.zst"), "W2": os.path.join(d, "w2.zst")}
for line in SCRIPT:
    if line in traces:
        ctr = attach(p.p.pid, traces[line], d)
        env.check(line + ": ctrack says it is attached", "attached to process" in ctr.first, ctr.first)
        window = line
    elif line == "D":
        rc, closing[window] = detach(ctr)
        env.eq(window + ": ctrack -p exits 0 after the detach", rc, 0)
        env.check(window + ": the closing message says the trace covers the attached window",
                  "covers the attached window" in closing[window], closing[window])
    else:
        got = p.cmd(line)
        if line.startswith("phase"):
            figures[line] = phase_figures(got)
        if line.startswith("thread"):  # a thread started before the attach: its first hooked call
            m = THREAD.match(got or "")
            figures["thread"] = [int(m.group(1)), int(m.group(2))] if m else None
        if line == "where":  # the GOT entry: the hook while attached, libc's malloc again after
            want = "libctrack.so" if ctr and ctr.returncode is None else "libc.so.6"
            env.eq("malloc's GOT entry %s" % ("while attached" if want == "libctrack.so" else "untraced"),
                   got, "malloc in " + want)
status, out = p.finish()
env.eq("the program's exit status equals an untraced run's", status, ref_status)
env.eq("the program's output equals an untraced run's", out, ref_out)
env.check("the program's dlopen worked while attached", "dlopen ok" in out, out)

t = figures.get("thread") or [0, 0]
check_window("window 1", traces["W1"], [figures.get("phase 1")], extra_allocs=t[0], extra_bytes=t[1],
             extra_live=t[0])
rep = check_window("window 2", traces["W2"], [figures.get("phase 3")], extra_allocs=1, extra_bytes=777,
                   extra_live=1)
if rep:
    env.eq("window 2: the library dlopened while attached is traced (ct_test_dlib_leak)",
           ct.sites(rep["leaks"], "ct_test_dlib_leak"), (777, 1))
    env.eq("window 2: the second attach into the process", rep["attach"]["number"], 2)
for w, t in traces.items():
    with open(t, "rb") as f:
        st = os.fstat(f.fileno())
    env.eq(w + ": the trace is private (mode 0600)", st.st_mode & 0o777, 0o600)

# ---- --duration, and a process that exits while attached ----
d = env.fresh_dir("exit")
p = Prog(d)
p.cmd("phase 0")
a = attach(p.p.pid, "t.zst", d, "--duration", "600")
env.check("exit: attached", "attached to process" in a.first, a.first)
fig = phase_figures(p.cmd("phase 1"))
p.cmd("exit")
status, _ = p.finish()
rc = a.wait(timeout=120)
rest = a.stderr.read()
env.eq("exit: ctrack -p ends with the process, exit 0", rc, 0)
env.check("exit: the closing message says the trace ends at the process's exit",
          "from the attach to the process's exit" in rest, rest)
rep = env.report(os.path.join(d, "t.zst"))
if rep and fig:
    env.eq("exit: the trace is complete (END at the exit)", rep["complete"], True)
    env.eq("exit: allocations and bytes of phase 1", (rep["summary"]["allocations"],
                                                     rep["summary"]["bytes_allocated"]), (fig[0], fig[1]))

d = env.fresh_dir("duration")
p = Prog(d)
p.cmd("phase 0")
a = attach(p.p.pid, "t.zst", d, "--duration", "1")
fig = phase_figures(p.cmd("phase 1"))
rc = a.wait(timeout=120)
rest = a.stderr.read()
env.eq("--duration: ctrack -p detaches by itself, exit 0", rc, 0)
env.check("--duration: the process still runs", p.p.poll() is None)
p.cmd("exit")
p.finish()
rep = env.report(os.path.join(d, "t.zst"))
if rep and fig:
    env.eq("--duration: allocations of phase 1", rep["summary"]["allocations"], fig[0])

# ---- execl while attached: the trace ends with its EXEC record, as an execve's does ----
d = env.fresh_dir("execl")
p = Prog(d)
p.cmd("phase 0")
a = attach(p.p.pid, "t.zst", d)
fig = phase_figures(p.cmd("phase 1"))
p.p.stdin.write("execl /bin/true\n")
p.p.stdin.flush()
status = p.p.wait(timeout=60)
rc = a.wait(timeout=120)
rest = a.stderr.read()
env.eq("execl: the process became /bin/true, which exits 0; ctrack -p exits 0", (status, rc), (0, 0))
env.check("execl: the closing message names the exec", "ran '/bin/true' (exec)" in rest, rest)
rep = env.report(os.path.join(d, "t.zst"))
if rep and fig:
    env.eq("execl: the trace is complete (its EXEC record), with phase 1's allocations",
           (rep["complete"], rep["summary"]["allocations"]), (True, fig[0]))

# ---- --live with -p: the view of the attached process; closing it (SIGINT, as Ctrl-C) detaches ----
# Without a terminal the view prints a line of figures a second on stderr: once phase 1 ran, a line
# must show its allocations and its live blocks (the program's own counts), then SIGINT detaches and
# the process runs on.
d = env.fresh_dir("live")
p = Prog(d)
p.cmd("phase 0")
trace = os.path.join(d, "live.zst")
ctr = attach(p.p.pid, trace, d, "--live")
env.check("--live -p: ctrack says it is attached", "attached to process" in ctr.first, ctr.first)
ph = phase_figures(p.cmd("phase 1"))
want = "allocations=%d " % ph[0] if ph else None
seen, buf, deadline = None, b"", time.monotonic() + 60
fd = ctr.stderr.fileno()  # read raw, with a deadline: a view that prints nothing must fail, not hang
while seen is None and time.monotonic() < deadline:
    ready, _, _ = select.select([fd], [], [], 1.0)
    chunk = os.read(fd, 65536) if ready else b""
    if ready and not chunk:
        break
    buf += chunk
    seen = next((l for l in buf.decode(errors="replace").splitlines() if want and want in l), None)
env.check("--live -p: a line shows the phase's allocations (%s)" % want, seen is not None, repr(seen))
blocks = re.search(r" blocks=(\d+) ", seen or "")
env.eq("--live -p: ... and its live blocks", int(blocks.group(1)) if blocks else None,
       ph[4] + ph[5] if ph else -1)
rc, text = detach(ctr)
env.eq("--live -p: SIGINT closes the view and detaches: exit 0", rc, 0)
env.check("--live -p: the closing message says the trace covers the attached window",
          "covers the attached window" in text, text[-400:])
env.check("--live -p: the process runs on after the detach", p.p.poll() is None, str(p.p.poll()))
check_window("--live -p", trace, [ph])
p.cmd("exit")
status, _ = p.finish()
env.eq("--live -p: the program's exit status", status, ref_status)
r = subprocess.run([env.ctrack, "-p", "1", "--live", "--duration", "1"], capture_output=True, text=True)
env.check("--live -p with --duration: a usage error, exit 2", r.returncode == 2 and "--duration" in r.stderr,
          r.stderr)

# ---- --sample and --aggregate with -p ----
# One process, attached to eight times in a row; each window runs commands of attach_loop and the
# test checks that window's trace alone. Sampled windows: the estimates of a burst's allocations and
# bytes within 4 standard deviations of the sampler's own variance (test_sample.py's bound), at two
# rates, with a fixed seed. What a detach must leave behind: nothing. A window sampled at 1 byte
# (every block recorded, and put in the sampled set) keeps phase 1's blocks; the next sampled
# window frees ten of them (phase 3): they are blocks allocated before its attach, which a sampled
# attach never sees, so its trace counts no such free (a set not emptied at the detach would
# count 10). A window sampled at 64 MiB leaves the main thread a countdown of megabytes; the next,
# at 4 KiB, must sample the burst from its first bytes (countdowns left would record few or none of
# its 40 MB). An unsampled window after a sampled one records every event exactly; a sampled one
# after an unsampled one samples. Aggregated windows: the phase's figures equal the program's own,
# the report says aggregated and attached, the tables start empty at each attach, an unaggregated
# attach after an aggregated one writes every event (and the reverse), and the trace holds snapshots,
# not events: a tenth of the full trace of the same burst or less (that one grows tenfold with 100
# times the events: its sizes are scattered, zstd cannot fold them away).
BURST = re.compile(r"burst allocs (\d+) bytes (\d+) frees (\d+)")
BURST_N, BURST_SIZES = 400000, 256  # sizes 1 to 256: about 51 MB
SEED = "20261206"


def window(p, trace, cwd, opts, lines, seed=None):
    """Attaches with opts, runs lines, detaches; the program's answers, or None if not attached."""
    a = attach(p.p.pid, trace, cwd, *opts, seed=seed)
    if not env.check(os.path.basename(trace) + ": attached", "attached to process" in a.first, a.first):
        a.kill()
        a.wait()
        return None
    got = [p.cmd(line) for line in lines]
    rc, text = detach(a)
    env.eq(os.path.basename(trace) + ": ctrack -p exits 0 after the detach", rc, 0)
    return got


def burst_figures(line):
    m = BURST.match(line or "")
    return [int(x) for x in m.groups()] if m else None


def burst_variances(n, sizes, rate):
    """Variances of the estimates of a burst's allocations and bytes (attach_loop.c's sizes)."""
    count, x = {}, 1
    for _ in range(n):
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
        size = 1 + (x >> 16) % sizes
        count[size] = count.get(size, 0) + 1
    return (sum(var_count(c, size, rate) for size, c in count.items()),
            sum(var_bytes(c, size, rate) for size, c in count.items()))


def says_attached(name, rep):
    env.check(name + ": the report says the trace starts at an attach",
              "starts at an attach" in ((rep.get("attach") or {}).get("note") or ""), repr(rep.get("attach")))


def check_sampled(name, trace, rate, fig):
    """A sampled window's trace: sampled at rate and attached, the estimates within the bounds."""
    rep = env.report(trace)
    if not rep or not fig:
        env.check(name + ": report and burst figures", False, repr(fig))
        return None
    env.eq(name + ": the trace says it is sampled, at its rate", (rep["sampling"] or {}).get("rate"), rate)
    says_attached(name, rep)
    text = env.run_analyze(trace).stdout.decode(errors="replace")
    env.check(name + ": the text report says both sampled and attached",
              "sampled: one allocation per %d bytes" % rate in text and "starts at an attach" in text, text[:600])
    vc, vb = burst_variances(BURST_N, BURST_SIZES, rate)
    s = rep["summary"]
    close(env, name + ": estimated allocations", s["allocations"], fig[0], vc)
    close(env, name + ": estimated bytes", s["bytes_allocated"], fig[1], vb)
    env.eq(name + ": no frees of blocks allocated before the attach", s["unmatched_frees"], 0)
    return rep


def check_exact(name, trace, fig):
    """An unsampled window of one burst: every event, exactly."""
    rep = env.report(trace)
    if not rep or not fig:
        env.check(name + ": report and burst figures", False, repr(fig))
        return None
    env.eq(name + ": not sampled", rep["sampling"], None)
    s = rep["summary"]
    env.eq(name + ": allocations, bytes, frees exactly the program's",
           (s["allocations"], s["bytes_allocated"], s["frees"]), tuple(fig))
    return rep


d = env.fresh_dir("sampled")
p = Prog(d)
p.cmd("phase 0")
tr = {k: os.path.join(d, k + ".zst") for k in ("all1", "all2", "huge", "s4k", "s64k", "full", "again")}
burst = "burst %d %d" % (BURST_N, BURST_SIZES)
ph = window(p, tr["all1"], d, ("--sample=1",), ["phase 1"], seed=SEED)
ph1 = phase_figures(ph[0]) if ph else None
rep = env.report(tr["all1"])
if rep and ph1:  # at 1 byte every block is recorded, with a weight of 1: the phase's own figures
    env.eq("sampled at 1 byte: sampled and attached", ((rep["sampling"] or {}).get("rate"), rep["complete"]),
           (1, True))
    says_attached("sampled at 1 byte", rep)
    env.eq("sampled at 1 byte: allocations, bytes, frees (the phase's own)",
           (rep["summary"]["allocations"], rep["summary"]["bytes_allocated"], rep["summary"]["frees"]),
           (ph1[0], ph1[1], ph1[2]))
    env.eq("sampled at 1 byte: no frees of blocks allocated before the attach (not in the set)",
           rep["summary"]["unmatched_frees"], 0)
p.cmd("phase 2")
ph = window(p, tr["all2"], d, ("--sample=1",), ["phase 3"], seed=SEED)
ph3 = phase_figures(ph[0]) if ph else None
rep = env.report(tr["all2"])
if rep and ph3:
    env.eq("sampled after sampled: the phase's own allocations and bytes",
           (rep["summary"]["allocations"], rep["summary"]["bytes_allocated"]), (ph3[0], ph3[1]))
    env.eq("sampled after sampled: the last window's sampled blocks, freed now, are not this one's "
           "(the set was emptied at the detach)", rep["summary"]["unmatched_frees"], 0)
window(p, tr["huge"], d, ("--sample=64MiB",), [burst], seed=SEED)
ph = window(p, tr["s4k"], d, ("--sample=4KiB",), [burst], seed=SEED)
check_sampled("sampled at 4 KiB after 64 MiB (fresh countdowns)", tr["s4k"], 4096,
              burst_figures(ph[0]) if ph else None)
ph = window(p, tr["s64k"], d, ("--sample=64KiB",), [burst], seed=SEED)
check_sampled("sampled at 64 KiB", tr["s64k"], 65536, burst_figures(ph[0]) if ph else None)
ph = window(p, tr["full"], d, (), [burst])
check_exact("unsampled after sampled", tr["full"], burst_figures(ph[0]) if ph else None)
ph = window(p, tr["again"], d, ("--sample=4KiB",), [burst], seed=SEED)
check_sampled("sampled after unsampled", tr["again"], 4096, burst_figures(ph[0]) if ph else None)
p.cmd("exit")
status, _ = p.finish()
env.eq("sampled windows: the program exits 0", status, 0)

d = env.fresh_dir("aggregated")
p = Prog(d)
p.cmd("phase 0")
AGG = ("--aggregate", "--snapshot", "0.1")
tr = {k: os.path.join(d, k + ".zst") for k in ("agg1", "agg2", "small", "big", "fullsmall", "fullbig")}
for k, phase in (("agg1", "phase 1"), ("agg2", "phase 2")):
    ph = window(p, tr[k], d, AGG, [phase])
    rep = check_window("aggregated " + k, tr[k], [phase_figures(ph[0]) if ph else None])
    if rep:
        env.eq("aggregated %s: the report says aggregated, every 100 ms" % k,
               (rep["aggregated"] or {}).get("interval_ns"), 100000000)
sizes = {}
for k, n, opts in (("small", BURST_N // 100, AGG), ("big", BURST_N, AGG), ("fullsmall", BURST_N // 100, ()),
                   ("fullbig", BURST_N, ())):
    ph = window(p, tr[k], d, opts, ["burst %d %d" % (n, BURST_SIZES)])
    rep = check_exact(k, tr[k], burst_figures(ph[0]) if ph else None)
    if rep:
        env.eq(k + ": aggregated or not, as asked", rep["aggregated"] is not None, bool(opts))
    sizes[k] = os.path.getsize(tr[k])
print("trace sizes: %r" % sizes)
# (the aggregated traces' sizes follow the number of snapshots, so the window's length: no bound
# between the two aggregated ones, which a loaded machine could stretch)
env.check("aggregated: a tenth of a full trace's size, or less, for the same burst (snapshots, not events), "
          "where the full trace grew tenfold with the events",
          sizes["fullbig"] > 10 * sizes["fullsmall"] and sizes["fullbig"] > 10 * sizes["big"], repr(sizes))
p.cmd("exit")
status, _ = p.finish()
env.eq("aggregated windows: the program exits 0", status, 0)

for opts in (("--sample=4KiB", "--aggregate"), ("--sample=4KiB", "--snapshot", "1")):
    r = subprocess.run([env.ctrack, "-p", "1", *opts], capture_output=True, text=True)
    env.check("-p %s: a usage error, exit 2, as for a launch" % " ".join(opts),
              r.returncode == 2 and "--sample cannot go with --aggregate" in r.stderr, r.stderr)
r = subprocess.run([env.ctrack, "-p", "1", "--sample=4KiB"], capture_output=True, text=True,
                   env=dict(os.environ, CTRACK_SAMPLE_SEED="x1"))
env.check("-p --sample with CTRACK_SAMPLE_SEED=x1: exit 1, one line naming it",
          r.returncode == 1 and r.stderr == "ctrack: CTRACK_SAMPLE_SEED: expected a whole number, got 'x1'\n",
          r.stderr)

# ---- refusals: one line, exit 1, the process untouched ----
d = env.fresh_dir("refusals")


def refused(name, pid, want, *opts):
    r = subprocess.run([env.ctrack, "-p", str(pid), *opts], cwd=d, capture_output=True, text=True,
                       timeout=120, preexec_fn=ct.no_core)
    lines = r.stderr.strip().splitlines()
    env.check(name + ": exit 1 and one line saying " + repr(want),
              r.returncode == 1 and len(lines) == 1 and want in lines[0], "exit %d: %r" % (r.returncode, r.stderr))
    env.eq(name + ": no trace left", ct.traces(d), [])


dead = subprocess.Popen(["true"])
dead.wait()
refused("no such process", dead.pid, "no process with pid")

p = Prog(d)
p.cmd("phase 0")
gdb = subprocess.Popen(["gdb", "-q", "-nx", "-p", str(p.p.pid)], stdin=subprocess.PIPE,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(300):  # until gdb holds it
    with open("/proc/%d/status" % p.p.pid) as f:
        if re.search(r"TracerPid:\s*[1-9]", f.read()):
            break
    time.sleep(0.1)
refused("under a debugger", p.p.pid, "being traced by process %d" % gdb.pid)
gdb.stdin.write(b"detach\nquit\n")
gdb.stdin.close()
gdb.wait(timeout=60)

a = attach(p.p.pid, os.path.join(d, "..", "twice.zst"), d)
env.check("twice: the first attach", "attached to process" in a.first, a.first)
refused("attaching twice", p.p.pid, "traced by ctrack already")
fig = phase_figures(p.cmd("phase 1"))
rc, _ = detach(a)
env.eq("twice: the first ctrack detaches, exit 0", rc, 0)
p.cmd("exit")
status, _ = p.finish()
env.eq("twice: the program exits 0", status, 0)

static = os.path.join(d, "..", "static-sleep")
r = subprocess.run(["gcc", "-static", "-O1", "-o", static, "-x", "c", "-"], capture_output=True, text=True,
                   input="#include <unistd.h>\nint main(void) { sleep(60); return 0; }\n")
if env.check("a static program builds (gcc -static)", r.returncode == 0, r.stderr):
    s = subprocess.Popen([static])
    refused("static", s.pid, "statically linked")
    s.kill()
    s.wait()

# A process that exits right away, while ctrack attaches: a one-line message, no hang.
# (its parent, sh, ends at once: init reaps it, so it leaves no zombie behind for ctrack to find)
sh = subprocess.run(["sh", "-c", "sleep 0.3 >/dev/null & echo $!"], capture_output=True, text=True)
r = subprocess.run([env.ctrack, "-p", sh.stdout.strip(), "-o", "gone.zst"], cwd=d, capture_output=True,
                   text=True, timeout=120)
lines = r.stderr.strip().splitlines()
env.check("a process that exits during the attach: exit 1, one line", r.returncode == 1 and len(lines) == 1,
          "exit %d: %r" % (r.returncode, r.stderr))

# Another user's process, ctrack not root (as root: nobody's sleep, ctrack as daemon, uid 1).
if os.geteuid() == 0 and shutil.which("setpriv"):
    as_user = ["setpriv", "--reuid=%d", "--regid=%d", "--clear-groups"]
    nobody = subprocess.Popen([a % 65534 if "%" in a else a for a in as_user] + ["sleep", "60"])
    # setpriv runs as root until it has changed its ids and exec'd sleep: wait for that, or the check
    # below would find a root process (seen under load).
    for _ in range(500):
        try:
            with open("/proc/%d/status" % nobody.pid) as f:
                uids = [l.split()[1] for l in f if l.startswith("Uid:")]
            with open("/proc/%d/comm" % nobody.pid) as f:
                comm = f.read().strip()
        except OSError:
            break
        if uids == ["65534"] and comm == "sleep":
            break
        time.sleep(0.01)
    r = subprocess.run([a % 1 if "%" in a else a for a in as_user] + [env.ctrack, "-p", str(nobody.pid)],
                       cwd="/", capture_output=True, text=True, timeout=120)
    if "ermission denied" in r.stderr and "ctrack: " not in r.stderr:
        print("(another user's process: not checked, uid 1 cannot run %s)" % env.ctrack)
    else:
        env.check("another user's process: exit 1 and one line naming its user",
                  r.returncode == 1 and r.stderr.strip() == "ctrack: process %d belongs to user 65534: "
                  "run ctrack as that user or as root" % nobody.pid, "exit %d: %r" % (r.returncode, r.stderr))
    nobody.kill()
    nobody.wait()

open(os.path.join(d, "exists.zst"), "w").close()
p = Prog(d)
r = subprocess.run([env.ctrack, "-p", str(p.p.pid), "-o", "exists.zst"], cwd=d, capture_output=True,
                   text=True, timeout=120)
env.check("an existing trace file: exit 1, --force named", r.returncode == 1 and "--force" in r.stderr,
          r.stderr)
p.cmd("exit")
p.finish()
env.finish()
