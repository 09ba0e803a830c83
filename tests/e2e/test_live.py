# SPDX-License-Identifier: MIT
# The live view (issue 26): `ctrack-analyze --follow TRACE` and `ctrack --live PROGRAM`, on
# tests/progs/live_pause.c, which pauses at a known point (its header states its figures there and at its
# end). On a terminal (a pseudo-terminal this script drives): the screen's figures at the pause, the
# keys (sort, select, backtrace, q), the terminal restored, the exit statuses; without one, the
# plain lines. Also --follow on a complete trace, a missing file and a trace cut short.
# The waits below only guard against a hang: nothing is timed.
import atexit
import fcntl
import os
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import termios
import time

from ctrack_test import Env, no_core

HANG = 120  # seconds before a wait counts as a hang
ROWS, COLS = 40, 200
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]")
ENTER, LEAVE = b"\x1b[?1049h", b"\x1b[?1049l"

# At the pause (tests/progs/live_pause.c's header)
PAUSE = {"heap": 410000, "blocks": 14, "allocations": 64, "frees": 50, "temporary": 50}
END = {"heap": 210000, "blocks": 12, "allocations": 64, "frees": 52}
SITES = {  # function: (live bytes, live blocks, allocations, temporary) at the pause
    "keep_big": (400000, 4, 4, 0),
    "keep_small": (10000, 10, 10, 0),
    "churn": (0, 0, 50, 50),
}


STARTED = []  # what this script started: a failed check or a hang must not leave them waiting


@atexit.register
def cleanup():
    for p in STARTED:
        p.cleanup()


def wait_for(what, pred):
    deadline = time.monotonic() + HANG
    while not pred():
        if time.monotonic() > deadline:
            raise SystemExit("hang: waited %d s for %s" % (HANG, what))
        time.sleep(0.05)


class Program:
    """tests/progs/live_pause.c under plain ctrack (or with opts), paused until release()."""

    def __init__(self, env, d, prog, opts=(), pty=False):
        self.fifo, self.ready = os.path.join(d, "go"), os.path.join(d, "ready")
        self.trace = os.path.join(d, "t.zst")
        for f in (self.fifo, self.ready, self.trace):
            if os.path.lexists(f):
                os.unlink(f)
        os.mkfifo(self.fifo)
        self.argv = [env.ctrack, "-q", "-o", self.trace, *opts, prog, self.fifo, self.ready]
        self.proc = None
        STARTED.append(self)

    def start(self, cwd):
        self.proc = subprocess.Popen(self.argv, cwd=cwd, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, preexec_fn=no_core)
        return self

    def wait_paused(self):
        wait_for("the program's pause", lambda: os.path.exists(self.ready))

    def release(self):
        with open(self.fifo, "w") as f:  # the program's open() returns; then its read
            f.write("x")

    def cleanup(self):
        """Released if it still waits (its open of the FIFO is a reader: a writer's open succeeds)."""
        try:
            fd = os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK)
            os.write(fd, b"x")
            os.close(fd)
        except OSError:
            pass  # it did not wait there


class Pty:
    """A program on a new pseudo-terminal, as its controlling terminal; the slave side stays open
    here so that its modes can be read once the program is gone."""

    def __init__(self, argv, cwd):
        self.master, self.slave = os.openpty()
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        self.modes = termios.tcgetattr(self.slave)
        self.pid = os.fork()
        if self.pid == 0:
            try:
                os.setsid()
                fcntl.ioctl(self.slave, termios.TIOCSCTTY, 0)
                for fd in (0, 1, 2):
                    os.dup2(self.slave, fd)
                os.chdir(cwd)
                no_core()
                os.execv(argv[0], argv)
            finally:
                os._exit(127)
        self.out = b""
        self.status = None
        STARTED.append(self)

    def pump(self, timeout=0.1):
        r, _, _ = select.select([self.master], [], [], timeout)
        if r:
            try:
                self.out += os.read(self.master, 65536)
            except OSError:  # EIO: every slave descriptor but ours is closed
                time.sleep(timeout)

    def screen(self):
        """The last screen drawn: the text after the last 'cursor home', escapes removed."""
        last = self.out.rsplit(b"\x1b[H", 1)[-1]
        return ANSI.sub(b"", last).decode(errors="replace").replace("\r", "").split("\n")

    def wait_screen(self, what, pred):
        """The first whole screen for which pred holds: one that ends in 'erase below', the view's last
        write (a read may end inside a screen, its header new and its rows not yet drawn)."""
        deadline = time.monotonic() + HANG
        while True:
            s = self.screen()
            if b"\x1b[J" in self.out.rsplit(b"\x1b[H", 1)[-1] and pred(s):
                return s
            if time.monotonic() > deadline:
                raise SystemExit("hang: waited %d s for %s; screen:\n%s" % (HANG, what, "\n".join(s)))
            self.pump()

    def key(self, k):
        os.write(self.master, k)

    def wait_exit(self):
        deadline = time.monotonic() + HANG
        while self.status is None:
            pid, st = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = os.waitstatus_to_exitcode(st)
            elif time.monotonic() > deadline:
                os.kill(self.pid, signal.SIGKILL)
                raise SystemExit("hang: the program on the terminal did not exit")
            self.pump()
        # Everything it wrote is in the terminal's buffer now: read until it is empty (one read
        # takes at most 64 KiB, and the sanitizer build's run once left the view's last screen and
        # the sequence that leaves it unread).
        while True:
            before = len(self.out)
            self.pump(0)
            if len(self.out) == before:
                return self.status

    def restored(self):
        """The screen left, and the modes as they were before the program ran."""
        return self.out.rfind(LEAVE) > self.out.rfind(ENTER) >= 0 and \
            termios.tcgetattr(self.slave) == self.modes

    def close(self):
        os.close(self.master)
        os.close(self.slave)

    def cleanup(self):
        if self.status is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except OSError:
                pass


def figures(screen):
    """heap, blocks, allocations, frees, temporary from the screen's head, or None."""
    text = "\n".join(screen)
    h = re.search(r"heap in use: (\d+) bytes.* in (\d+) blocks", text)
    a = re.search(r"allocations: (\d+) \(.*frees: (\d+) \(.*temporary: (\d+)", text)
    if not h or not a:
        return None
    return {"heap": int(h[1]), "blocks": int(h[2]), "allocations": int(a[1]), "frees": int(a[2]),
            "temporary": int(a[3])}


ROW = re.compile(r"^([> ])\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(\S+)")


def rows(screen):
    """The sites listed: (selected, live, blocks, allocs, allocated, temp, function, file:line)."""
    out = []
    for line in screen:
        m = ROW.match(line)
        if m:
            out.append((m[1] == ">", *(int(m[i]) for i in range(2, 7)), m[7], m[8]))
    return out


def site_figures(r):
    return (r[1], r[2], r[3], r[5])


def backtraces(screen):
    """The backtrace pane: [(its figures when the site has several, or None; its functions)]."""
    i = next((i for i, l in enumerate(screen) if "the selected site's backtrace" in l), None)
    out = []
    for line in screen[i + 1:] if i is not None else []:
        h = re.match(r"\s+(\d+) bytes live in (\d+) blocks, (\d+) allocations, (\d+) temporary:", line)
        f = re.match(r"\s+#\d+\s+(\S+)", line)
        if h:
            out.append((tuple(int(h[k]) for k in range(1, 5)), []))
        elif f:
            if not out:
                out.append((None, []))
            out[-1][1].append(f[1])
    return out


def plain(line):
    """A plain line's state and key=value figures."""
    m = re.match(r"\[[0-9.]+s\] (\S+(?: \([^)]*\))?) (.*?) top=(.*)$", line)
    if not m:
        return None, {}
    kv = dict(p.split("=", 1) for p in m[2].split())
    kv["top"] = m[3]
    return m[1], kv


def check_pause_screen(env, what, s):
    env.eq("%s: heap, blocks, counts at the pause" % what, figures(s), PAUSE)
    r = rows(s)
    env.eq("%s: three sites" % what, len(r), 3)
    env.eq("%s: the top site by live bytes" % what, r[0][6] if r else None, "keep_big")
    env.eq("%s: keep_big's live bytes, blocks, allocations, temporary" % what,
           site_figures(r[0]) if r else None, SITES["keep_big"])
    env.check("%s: its source line" % what, r and r[0][7].startswith("live_pause.c:"), r and r[0][7])


def keys_and_quit(env, what, t, exits=True):
    """Sort, select, backtraces, then q: the command exits 0 (exits), or goes on without its view."""
    t.key(b"a")
    s = t.wait_screen("sort by allocations", lambda s: any("sorted by allocations" in l for l in s))
    r = rows(s)
    env.eq("%s: a: churn first by allocations" % what, (r[0][6], site_figures(r[0])) if r else None,
           ("churn", SITES["churn"]))
    env.check("%s: a: the first row selected" % what, r and r[0][0], r)
    t.key(b"\r")
    s = t.wait_screen("the backtrace", lambda s: backtraces(s))
    env.eq("%s: Enter: churn's backtrace" % what, backtraces(s), [(None, ["churn", "main"])])
    t.key(b"l")
    s = t.wait_screen("sort by live bytes", lambda s: any("sorted by live bytes" in l for l in s))
    t.key(b"\x1b[B")
    s = t.wait_screen("the second row selected", lambda s: len(rows(s)) > 1 and rows(s)[1][0])
    r = rows(s)
    env.eq("%s: l, Down: keep_small selected" % what, (r[1][6], site_figures(r[1])),
           ("keep_small", SITES["keep_small"]))
    env.eq("%s: its two backtraces, each with its figures" % what, backtraces(s),
           [((6000, 6, 6, 0), ["keep_small", "main"]), ((4000, 4, 4, 0), ["keep_small", "small_helper", "main"])])
    t.key(b"t")
    s = t.wait_screen("sort by temporary", lambda s: any("sorted by temporary" in l for l in s))
    env.eq("%s: t: churn first by temporary allocations" % what, rows(s)[0][6], "churn")
    t.key(b"q")
    if exits:
        env.eq("%s: q: exit status" % what, t.wait_exit(), 0)
    else:
        wait_for("the view closed", lambda: t.pump() or t.out.rfind(LEAVE) > t.out.rfind(ENTER))
    env.check("%s: the terminal restored" % what, t.restored(), t.out[-200:])


def follow_on_terminal(env, prog):
    d = env.fresh_dir("follow-tty")
    p = Program(env, d, prog).start(d)
    p.wait_paused()
    t = Pty([env.analyze, "--follow", p.trace], d)
    s = t.wait_screen("the figures of the pause", lambda s: figures(s) == PAUSE and len(rows(s)) == 3)
    check_pause_screen(env, "follow", s)
    env.check("follow: the state is running", "running" in s[0], s[0])
    keys_and_quit(env, "follow", t)
    t.close()
    # A stopping signal restores the terminal too.
    t = Pty([env.analyze, "--follow", p.trace], d)
    t.wait_screen("the figures of the pause", lambda s: figures(s) == PAUSE)
    os.kill(t.pid, signal.SIGTERM)
    env.eq("follow: SIGTERM: exit status 128 + 15", t.wait_exit(), 128 + signal.SIGTERM)
    env.check("follow: SIGTERM: the terminal restored", t.restored(), t.out[-200:])
    t.close()
    p.release()
    out, err = p.proc.communicate(timeout=HANG)
    env.eq("follow: the program's status through ctrack", p.proc.returncode, 3)
    return p.trace


def follow_ended_on_terminal(env, trace):
    """A complete trace on a terminal: its final figures, kept until q; a resize redraws it (after the
    end the view draws only on a key or a resize: SIGWINCH's)."""
    d = env.fresh_dir("follow-ended")
    t = Pty([env.analyze, "--follow", trace], d)
    s = t.wait_screen("the final figures", lambda s: any("the trace ended" in l for l in s))
    f = figures(s)
    env.eq("ended: the final figures", f and {k: f[k] for k in END}, END)
    env.check("ended: the state is ended", "ended" in s[0], s[0])
    fcntl.ioctl(t.slave, termios.TIOCSWINSZ, struct.pack("HHHH", 20, 50, 0, 0))
    s = t.wait_screen("a redraw 50 columns wide", lambda s: len(s) == 20 and "ctrack live" in s[0])
    env.check("ended: resized: 20 rows of 50 columns at most", all(len(l) <= 50 for l in s),
              [len(l) for l in s])
    t.key(b"q")
    env.eq("ended: q: exit status", t.wait_exit(), 0)
    env.check("ended: the terminal restored", t.restored(), t.out[-200:])
    t.close()


def live_on_terminal(env, prog):
    d = env.fresh_dir("live-tty")
    p = Program(env, d, prog)
    t = Pty([env.ctrack, "--live", "-o", p.trace, prog, p.fifo, p.ready], d)
    p.wait_paused()
    s = t.wait_screen("the figures of the pause", lambda s: figures(s) == PAUSE and len(rows(s)) == 3)
    check_pause_screen(env, "live", s)
    output = os.path.join(d, "t.out")
    env.check("live: the view names the program's output file",
              any("program output: " + output in l for l in s), "\n".join(s[:6]))
    keys_and_quit(env, "live", t, exits=False)  # q closes the view; ctrack waits for the program
    wait_for("the message after the view", lambda: t.pump() or b"runs on" in t.out.rsplit(LEAVE, 1)[-1])
    tail = ANSI.sub(b"", t.out.rsplit(LEAVE, 1)[-1]).decode(errors="replace")
    env.check("live: q says that the program runs on", "runs on, traced" in tail, tail)
    p.release()
    env.eq("live: ctrack exits with the program's status", t.wait_exit(), 3)
    got = open(output).read() if os.path.exists(output) else None
    env.eq("live: the program's stdout and stderr went to the file", got, "done\ndone\n")
    rep = env.report(p.trace)
    if rep:
        s = rep["summary"]
        env.eq("live: the trace is whole", (s["allocations"], s["frees"], s["leaked_bytes"], rep["complete"]),
               (END["allocations"], END["frees"], END["heap"], True))
    t.close()
    # The program ends while the view is up: the view closes by itself, the terminal restored.
    d = env.fresh_dir("live-end")
    p = Program(env, d, prog)
    t = Pty([env.ctrack, "-q", "--live", "-o", p.trace, prog, p.fifo, p.ready], d)
    p.wait_paused()
    t.wait_screen("the figures of the pause", lambda s: figures(s) == PAUSE)
    p.release()
    env.eq("live to the end: ctrack exits with the program's status", t.wait_exit(), 3)
    env.check("live to the end: the terminal restored", t.restored(), t.out[-200:])
    t.close()


def follow_plain(env, prog):
    """Without a terminal: a line per refresh, while the program pauses and at its end."""
    d = env.fresh_dir("follow-plain")
    p = Program(env, d, prog).start(d)
    p.wait_paused()
    f = subprocess.Popen([env.analyze, "--follow", p.trace], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, preexec_fn=no_core)
    state, kv = None, {}
    while state != "running" or int(kv.get("heap", -1)) != PAUSE["heap"]:
        line = f.stdout.readline().decode()
        if not line:
            break
        state, kv = plain(line)
    env.eq("plain: at the pause", (state, {k: int(kv.get(k, -1)) for k in ("heap", "blocks", "allocations", "frees", "temporary")}),
           ("running", PAUSE))
    env.eq("plain: the top site", (kv.get("top", "").split()[0] if kv.get("top") else None,
                                   int(kv.get("top_live", -1)), int(kv.get("top_blocks", -1)),
                                   int(kv.get("top_allocations", -1))), ("keep_big", *SITES["keep_big"][:3]))
    p.release()
    rest, err = f.communicate(timeout=HANG)
    last = rest.decode().splitlines()[-1] if rest else ""
    state, kv = plain(last)
    env.eq("plain: the last line, at the end",
           (state, {k: int(kv.get(k, -1)) for k in ("heap", "blocks", "allocations", "frees")}), ("ended", END))
    env.eq("plain: --follow exits 0 at the trace's end", f.returncode, 0)
    p.proc.communicate(timeout=HANG)
    env.eq("plain: the program's status through ctrack", p.proc.returncode, 3)
    return p.trace


def live_plain(env, prog):
    """ctrack --live without a terminal: lines of figures on stderr; the program keeps its descriptors."""
    d = env.fresh_dir("live-plain")
    p = Program(env, d, prog, opts=["--live"]).start(d)
    state, kv = None, {}
    while state != "running" or int(kv.get("heap", -1)) != PAUSE["heap"]:
        line = p.proc.stderr.readline().decode()
        if not line:
            break
        state, kv = plain(line)
    env.eq("live, plain: at the pause", (state, int(kv.get("heap", -1)), int(kv.get("blocks", -1))),
           ("running", PAUSE["heap"], PAUSE["blocks"]))
    p.release()
    out, err = p.proc.communicate(timeout=HANG)
    lines = err.decode().splitlines()
    ended = [plain(l) for l in lines if l.startswith("[")]
    env.eq("live, plain: the last line, at the end", (ended[-1][0], int(ended[-1][1].get("heap", -1)))
           if ended else None, ("ended", END["heap"]))
    env.eq("live, plain: the program's stdout is its own", out, b"done\n")
    env.check("live, plain: and its stderr", "done" in lines, lines)
    env.eq("live, plain: ctrack exits with the program's status", p.proc.returncode, 3)
    env.check("live, plain: no output file", not os.path.exists(os.path.join(d, "t.out")))


def follow_files(env, trace):
    d = env.fresh_dir("follow-files")
    r = subprocess.run([env.analyze, "--follow", trace], capture_output=True, timeout=HANG)
    lines = r.stdout.decode().splitlines()
    state, kv = plain(lines[-1]) if lines else (None, {})
    env.eq("complete trace: ends at once with the final figures",
           (r.returncode, state, {k: int(kv.get(k, -1)) for k in ("heap", "blocks", "allocations", "frees")}),
           (0, "ended", END))
    missing = os.path.join(d, "missing.zst")
    r = subprocess.run([env.analyze, "--follow", missing], capture_output=True, timeout=HANG)
    err = r.stderr.decode()
    env.check("missing file: exit 1 with one line", r.returncode == 1 and err.count("\n") == 1 and
              "cannot open" in err and not r.stdout, (r.returncode, err, r.stdout))
    r = subprocess.run([env.analyze, "--follow", "--json", trace], capture_output=True, timeout=HANG)
    env.check("--follow with another output: a usage error", r.returncode == 2 and
              r.stderr.decode().count("\n") == 1, (r.returncode, r.stderr))
    # Cut in the middle: its writer is long gone, so the reading ends at the cut and says so.
    cut = os.path.join(d, "cut.zst")
    with open(trace, "rb") as f:
        data = f.read()
    with open(cut, "wb") as f:
        f.write(data[:len(data) * 2 // 3])
    r = subprocess.run([env.analyze, "--follow", cut], capture_output=True, timeout=HANG)
    lines, err = r.stdout.decode().splitlines(), r.stderr.decode()
    state, kv = plain(lines[-1]) if lines else (None, {})
    env.check("cut trace: exit 0, the last line says it is cut", r.returncode == 0 and
              state and state.startswith("cut"), (r.returncode, lines[-1:]))
    env.check("cut trace: one warning: the writer is gone and the trace ends there",
              err.count("\n") == 1 and "ends there" in err and "gone" in err, err)


def main():
    env = Env(sys.argv)
    prog = env.progs[0]
    trace = follow_plain(env, prog)
    follow_files(env, trace)
    live_plain(env, prog)
    follow_on_terminal(env, prog)
    follow_ended_on_terminal(env, trace)
    live_on_terminal(env, prog)
    env.finish()


main()
