# SPDX-License-Identifier: MIT
# ctrack-analyze on a terminal: a progress line (percent of the file, events per second) on
# stderr, erased at the end; colour in the report on stdout (not with NO_COLOR). Neither on pipes.
# The line's numbers: a trace smaller than one read is 100% read at its first line; and the event
# rate of a trace of tests/progs/pairs.c (2000000 events, its comment), fed through a named pipe
# that stays open PAUSE seconds after the last byte, is 2000000 over the time the test measured
# between the first line and the last.
import os
import pty
import re
import subprocess
import sys
import threading
import time

import ctrack_test as ct

EVENTS = 2 * 1000000  # pairs.c: 1000000 allocations and 1000000 frees
PAUSE = 1.0           # seconds the pipe stays open after the trace's last byte
LINE = re.compile(rb"ctrack-analyze: reading: +(\d+)%, (\d+\.\d) M events/s")

env = ct.Env(sys.argv)
prog, pairs = env.progs[0], env.progs[1]


def read_pty(master, chunks):
    """Appends (time, bytes) read from master to chunks until the other side closes."""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the other side is closed
            break
        if not chunk:
            break
        chunks.append((time.monotonic(), chunk))


d = env.fresh_dir("progress")
r, files = env.run_ctrack([prog], d)
if env.eq("one trace", len(files), 1):
    trace = os.path.join(d, files[0])

    def on_terminal(out_to_pty, extra_env=None):
        master, slave = pty.openpty()
        p = subprocess.Popen([env.analyze, trace], stdout=slave if out_to_pty else subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL if out_to_pty else slave,
                             env=dict(os.environ, **(extra_env or {})))
        os.close(slave)
        chunks = []
        read_pty(master, chunks)
        os.close(master)
        env.eq("exit status on a terminal", p.wait(), 0)
        return b"".join(c for _, c in chunks)

    report = on_terminal(True, {"NO_COLOR": ""})
    env.check("colour on a terminal", b"\x1b[1m" in report and b"\x1b[0m" in report, repr(report[:300]))
    env.check("no colour with NO_COLOR", b"\x1b[" not in on_terminal(True, {"NO_COLOR": "1"}))
    env.check("no colour on a pipe", b"\x1b[" not in env.run_analyze(trace).stdout)
    seen = on_terminal(False)
    env.check("progress line on a terminal", b"ctrack-analyze: reading: " in seen and b"%, " in seen
              and b"M events/s" in seen, repr(seen[:300]))
    env.check("and erased at the end", seen.endswith(b"\r\x1b[K"), repr(seen[-40:]))
    # zstd reads at least 128 KiB at a time (ZSTD_DStreamInSize): a smaller trace is read whole by
    # the first read, so every line says 100%.
    size = os.path.getsize(trace)
    if env.check("the trace is smaller than one read", size < 128 << 10, "%d bytes" % size):
        env.eq("percent read, trace read whole", sorted({m.group(1) for m in LINE.finditer(seen)}), [b"100"])
    r = env.run_analyze(trace)
    env.eq("nothing of it on a pipe", (r.returncode, b"reading:" in r.stderr), (0, False))

# The event rate: the whole trace goes into a named pipe at once, which stays open PAUSE s more; the
# analyzer decodes it, then waits in read() for the end of the file, which comes with the close and
# shows a last line. That line's rate is EVENTS over the time since the first line, which lies
# between (close - first line seen) and (last line seen - first byte written).
trace = env.trace("pairs", [pairs])
if os.path.exists(trace):
    with open(trace, "rb") as f:
        data = f.read()
    fifo = os.path.join(env.scratch, "pairs", "trace.fifo")
    os.mkfifo(fifo)
    master, slave = pty.openpty()
    p = subprocess.Popen([env.analyze, fifo], stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    chunks = []
    reader = threading.Thread(target=read_pty, args=(master, chunks))
    reader.start()
    with open(fifo, "wb") as w:  # opens once the analyzer has opened its end
        written = time.monotonic()
        w.write(data)
        w.flush()
        for _ in range(500):  # the first line: the analyzer has read the trace
            if chunks:
                break
            time.sleep(0.01)
        first_seen = chunks[0][0] if chunks else None
        time.sleep(PAUSE)
        closed = time.monotonic()
    env.eq("pipe: exit status", p.wait(timeout=60), 0)
    reader.join()
    os.close(master)
    lines = [(t, m) for t, c in chunks for m in LINE.finditer(c)]
    if env.check("pipe: a first line, then one after the close", first_seen and lines and lines[-1][0] >= closed,
                 repr(chunks[:4])):
        last_seen, rate = lines[-1][0], float(lines[-1][1].group(2))
        low, high = EVENTS / (last_seen - written) / 1e6, EVENTS / (closed - first_seen) / 1e6
        print("pipe: last line %r; bounds %.3f..%.3f" % (lines[-1][1].group(0), low, high))
        env.check("pipe: the last line's rate is the program's %d events over the time it took" % EVENTS,
                  low - 0.05 <= rate <= high + 0.05, "%.1f M events/s, want %.2f..%.2f" % (rate, low, high))
env.finish()
