# SPDX-License-Identifier: MIT
# A trace read from a pipe (issue 23, nothing silent): a writer that stalls after its first bytes,
# holding the pipe open, ends the analyzer with one line after 10 s without a byte (a named FIFO,
# and a shell's <(...) as /dev/fd/N), never a hang; a writer that sends the whole trace slowly but
# steadily (1 KiB every 200 ms, or every 2 s: longer in all than the 10 s bound) is read
# whole. The stalled and the slow pipes run side by side.
import json
import os
import subprocess
import sys
import threading
import time

import ctrack_test as ct

env = ct.Env(sys.argv)
trickle = env.progs[0]
d = env.fresh_dir("fifo-stall")
BOUND = 10  # s: README, "A trace may be a FIFO"
TRICKLE = {"allocations": 600, "frees": 600, "bytes_allocated": 239700}  # tests/progs/trickle.c

trace = os.path.join(d, "trickle.zst")
r, _ = env.run_ctrack([trickle], d, opts=("-o", trace))
env.eq("trickle traced", r.returncode, 0)
with open(trace, "rb") as f:
    data = f.read()


def feed(fd, chunk, pause, stall=0):
    """Writes data to fd in chunks, pause s apart; with stall, only the first chunk, then holds fd
    open for stall s."""
    try:
        for i in range(0, len(data), chunk):
            os.write(fd, data[i:i + chunk])
            if stall:
                time.sleep(stall)
                break
            time.sleep(pause)
    except BrokenPipeError:
        pass
    finally:
        os.close(fd)


def analyze(path, pass_fds=()):
    """ctrack-analyze --json path, started; a thread notes its result and how long it ran."""
    p = subprocess.Popen([env.analyze, "--json", path], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, pass_fds=pass_fds, preexec_fn=ct.no_core)
    p.started, p.result = time.monotonic(), None

    def wait():
        out, err = p.communicate()
        p.result = p.returncode, out, err.decode(errors="replace"), time.monotonic() - p.started
    p.waiter = threading.Thread(target=wait, daemon=True)
    p.waiter.start()
    return p


def fifo(name):
    path = os.path.join(d, name)
    os.mkfifo(path)
    return path


def finish(label, p, timeout):
    """p's (exit status, stdout, stderr, seconds it ran), or None when it runs past timeout s."""
    p.waiter.join(max(0, p.started + timeout - time.monotonic()))
    if p.result is None:
        p.kill()
        env.check(label + ": ends within %d s" % timeout, False, "it hangs")
    return p.result


def expect_stall(label, res, path):
    if res is None:
        return
    rc, out, err, took = res
    print("%s: ended after %.1f s" % (label, took))
    env.check(label + ": not before the bound", took >= BOUND - 0.5, "%.1f s" % took)
    env.eq(label + ": exit 1, nothing on stdout", (rc, out), (1, b""))
    want = ("ctrack-analyze: cannot read '%s': its writer sent nothing for %d s (after %d bytes)\n"
            % (path, BOUND, 1024))
    env.eq(label + ": one line", err, want)


def expect_whole(label, res):
    if res is None:
        return
    rc, out, err, took = res
    env.eq(label + ": exit 0, nothing on stderr", (rc, err), (0, ""))
    doc = json.loads(out) if rc == 0 else {}
    env.eq(label + ": complete", doc.get("complete"), True)
    env.eq(label + ": the program's figures",
           {k: doc.get("summary", {}).get(k) for k in TRICKLE}, TRICKLE)
    print("%s: read in %.1f s" % (label, took))


# The stalled writers: a named FIFO, and a pipe as /dev/fd/N (bash's <(...)).
stalled_fifo = fifo("stalled.fifo")
p_fifo = analyze(stalled_fifo)
w_fifo = threading.Thread(daemon=True, target=lambda: feed(os.open(stalled_fifo, os.O_WRONLY), 1024, 0, stall=60))
w_fifo.start()
rd, wr = os.pipe()
stalled_fd = "/dev/fd/%d" % rd
p_pipe = analyze(stalled_fd, pass_fds=(rd,))
os.close(rd)
w_pipe = threading.Thread(daemon=True, target=feed, args=(wr, 1024, 0, 60))
w_pipe.start()
# The steady ones: 1 KiB every 200 ms, and every 2 s (the whole trace takes longer than the bound,
# but no gap does).
steady = fifo("steady.fifo")
p_steady = analyze(steady)
threading.Thread(daemon=True, target=lambda: feed(os.open(steady, os.O_WRONLY), 1024, 0.2)).start()
slow = fifo("slow.fifo")
p_slow = analyze(slow)
threading.Thread(daemon=True, target=lambda: feed(os.open(slow, os.O_WRONLY), 1024, 2)).start()
print("trace of %d bytes: the slow writer takes %d s" % (len(data), (len(data) + 1023) // 1024 * 2))

expect_stall("stalled FIFO", finish("stalled FIFO", p_fifo, BOUND + 20), stalled_fifo)
expect_stall("stalled pipe as /dev/fd/N", finish("stalled pipe", p_pipe, BOUND + 20), stalled_fd)
expect_whole("steady FIFO (1 KiB / 200 ms)", finish("steady FIFO", p_steady, 60))
expect_whole("slow FIFO (1 KiB / 2 s)", finish("slow FIFO", p_slow, 60))
env.finish()
