# SPDX-License-Identifier: MIT
# Shared helper of the end-to-end tests: runs ctrack, ctrack-analyze --json and valgrind, checks.
# Invariant: expected figures come from the programs' own comments or from valgrind, never from ctrack.
import json
import os
import re
import shutil
import subprocess
import sys

VG_FLAGS = [
    "--tool=memcheck", "--leak-check=full", "--show-leak-kinds=definite",
    # ctrack runs __gnu_cxx::__freeres at exit like valgrind, but not glibc's __libc_freeres: the
    # frees glibc would do there for its own buffers are no part of the program's behaviour.
    "--run-cxx-freeres=yes", "--run-libc-freeres=no",
]


class Env:
    """Command line of every test: CTRACK ANALYZE VALGRIND SCRATCH [PROGRAM...]."""

    def __init__(self, argv):
        if len(argv) < 5:
            sys.exit("usage: %s CTRACK ANALYZE VALGRIND SCRATCH [PROGRAM...]" % argv[0])
        self.ctrack, self.analyze, self.valgrind, root = (os.path.abspath(a) for a in argv[1:5])
        self.progs = [os.path.abspath(p) for p in argv[5:]]
        self.analyze_opts = []  # options of every ctrack-analyze run (a script may set them)
        self.scratch = own_scratch(root)
        self.results = []

    # ---- checks ----

    def check(self, name, ok, detail=""):
        if isinstance(detail, bytes):  # a failing program's output, as the test captured it
            detail = detail.decode(errors="replace")
        self.results.append(bool(ok))
        print(("PASS " if ok else "FAIL ") + name + ("" if ok or not detail else ": " + detail),
              flush=True)
        return bool(ok)

    def eq(self, name, got, want):
        return self.check(name, got == want, "got %r, want %r" % (got, want))

    def finish(self):
        failed = self.results.count(False)
        print("%d checks, %d failed" % (len(self.results), failed))
        sys.exit(1 if failed or not self.results else 0)

    # ---- files ----

    def fresh_dir(self, name):
        d = os.path.join(self.scratch, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        return d

    # ---- running ----

    def run_ctrack(self, prog_args, cwd, opts=(), timeout=120, **kw):
        """Runs `ctrack OPTS PROGRAM ARGS` in cwd; returns (completed process, new trace files)."""
        before = set(traces(cwd))
        cmd = [self.ctrack, "-q", *opts, *prog_args]
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, timeout=timeout,
                           preexec_fn=no_core, **kw)
        return r, sorted(set(traces(cwd)) - before)

    def run_analyze(self, trace, *extra, timeout=120):
        return subprocess.run([self.analyze, *self.analyze_opts, *extra, trace], capture_output=True,
                              timeout=timeout,
                              preexec_fn=no_core)

    def report(self, trace):
        """ctrack-analyze --json TRACE, which must succeed; the parsed report (None on failure)."""
        r = self.run_analyze(trace, "--json")
        if not self.check("analyze %s exits 0" % os.path.basename(trace), r.returncode == 0,
                          "exit %d, stderr %r" % (r.returncode, r.stderr[-500:])):
            return None
        try:
            # Bytes that are not UTF-8 survive as surrogates: os.fsencode() gives them back.
            return json.loads(r.stdout.decode("utf-8", "surrogateescape"))
        except ValueError as e:
            self.check("analyze %s prints JSON" % trace, False, str(e))
            return None

    def valgrind_run(self, prog_args, cwd, timeout=300):
        """Runs the program under memcheck; returns {pid: figures} for every process (forks too)
        and the exit status. Figures: allocs, frees, bytes, in_use_bytes, in_use_blocks,
        definitely_bytes, definitely_blocks."""
        logdir = os.path.join(cwd, "vg-logs")
        shutil.rmtree(logdir, ignore_errors=True)
        os.makedirs(logdir)
        cmd = [self.valgrind, *VG_FLAGS, "--log-file=" + os.path.join(logdir, "vg.%p.log"),
               *prog_args]
        p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = p.communicate(timeout=timeout)
        figures = {}
        for name in os.listdir(logdir):
            with open(os.path.join(logdir, name), errors="replace") as f:
                figures[int(name.split(".")[1])] = parse_valgrind(f.read())
        return p.pid, figures, p.returncode, out

    def valgrind_main(self, prog_args, cwd):
        """valgrind's figures for the first process of prog_args (fails the test if absent)."""
        pid, figs, _, _ = self.valgrind_run(prog_args, cwd)
        vg = figs.get(pid)
        if not self.check("valgrind reported total heap usage", vg and "allocs" in vg,
                          "logs: %r" % figs):
            return None
        return vg

    def compare_valgrind(self, summary, vg, what=""):
        """allocations / frees / bytes_allocated equal valgrind's `total heap usage` line."""
        if summary is None or vg is None:
            return self.check(what + "summary vs valgrind", False, "missing figures")
        self.eq(what + "allocations == valgrind allocs", summary["allocations"], vg["allocs"])
        self.eq(what + "frees == valgrind frees", summary["frees"], vg["frees"])
        self.eq(what + "bytes_allocated == valgrind bytes", summary["bytes_allocated"], vg["bytes"])
        return True

    def compare_leaks(self, summary, vg, what=""):
        """leaked_bytes / leaked_allocations (allocated, never freed) equal valgrind's `in use at
        exit`. Not `definitely lost`: whether a stale copy of a pointer survives in a register or
        stack slot decides definitely/possibly/reachable, and that varies from run to run."""
        if summary is None or vg is None:
            return self.check(what + "leaks vs valgrind", False, "missing figures")
        return self.eq(what + "leaked == valgrind in use at exit",
                       (summary["leaked_bytes"], summary["leaked_allocations"]),
                       (vg["in_use_bytes"], vg["in_use_blocks"]))

    def cc(self, src, out, *flags, cxx=False):
        """Compiles src into out; the command line is printed for the log."""
        cmd = ["c++" if cxx else "cc", "-O0", "-g", "-fno-omit-frame-pointer", "-o", out, src,
               *flags]
        print("compile:", " ".join(cmd))
        r = subprocess.run(cmd, capture_output=True, text=True)
        if not self.check("compile " + os.path.basename(src), r.returncode == 0, r.stderr):
            return None
        return out

    def trace(self, name, prog_args, opts=()):
        """ctrack -o DIR/trace.zst PROGRAM ARGS in a fresh dir DIR, which must succeed; the trace's path."""
        d = self.fresh_dir(name)
        trace = os.path.join(d, "trace.zst")
        r, _ = self.run_ctrack(prog_args, d, opts=("-o", trace, *opts))
        self.check(name + ": traced", r.returncode == 0 and os.path.exists(trace), r.stderr[-300:])
        return trace

    def run_traced(self, name, prog_args, opts=(), **kw):
        """ctrack -o DIR/trace.zst PROGRAM ARGS in a fresh dir; (completed, report or None)."""
        d = self.fresh_dir(name)
        trace = os.path.join(d, "trace.zst")
        r, _ = self.run_ctrack(prog_args, d, opts=("-o", trace, *opts), **kw)
        if not os.path.exists(trace):
            self.check(name + ": trace written", False, "stderr %r" % r.stderr[-500:])
            return r, None
        return r, self.report(trace)


def trailer_size(data):
    """The bytes of the summary trailer (format.h) that end a trace's bytes, 0 when there is none: its
    zstd frames are data[:len(data) - trailer_size(data)]."""
    return int.from_bytes(data[-8:-4], "little") if data[-4:] == b"CSM1" else 0


def browser_off():
    """True in a build that leaves the tests' browser parts out: the sanitizer build (scripts/test's
    second run; tests/meson.build sets CTRACK_TEST_BROWSER=0 there). The pages' scripts are the same
    bytes in both builds and Chromium's time would double the suite's; the sanitized analyzer still
    makes every page, and the tests still check its data. Prints why, once."""
    off = os.environ.get("CTRACK_TEST_BROWSER", "1") == "0"
    if off and not getattr(browser_off, "said", False):
        print("browser part: left to the plain build (CTRACK_TEST_BROWSER=0)")
        browser_off.said = True
    return off


def own_scratch(root):
    """The run's own directory under the test's scratch directory, run.PID: `meson test --repeat N`
    runs several instances of one test at once, which in one directory removed each other's files
    (fresh_dir) mid-run. A run's files stay for a look after it, until the next run starts (the
    directories of runs whose process still runs are left alone)."""
    os.makedirs(root, exist_ok=True)
    for name in os.listdir(root):
        m = re.fullmatch(r"run\.(\d+)", name)
        if m and not alive(int(m.group(1))):
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)
    d = os.path.join(root, "run.%d" % os.getpid())
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def needs(binary, lib):
    """True if binary's dynamic section names a library whose name starts with lib (readelf -d):
    needs(ctrack, "libasan.so") tells a -Dsanitize=true build."""
    r = subprocess.run(["readelf", "-dW", binary], capture_output=True, text=True, check=True)
    return any("(NEEDED)" in line and "[" + lib in line for line in r.stdout.splitlines())


def no_core():
    import resource
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def traces(d):
    return [n for n in os.listdir(d) if n.startswith("ctrack.") and n.endswith(".zst")]


def _num(s):
    return int(s.replace(",", ""))


def parse_valgrind(text):
    """The figures of one valgrind log (absent leak kinds are 0)."""
    fig = {"definitely_bytes": 0, "definitely_blocks": 0}
    m = re.search(r"total heap usage: ([\d,]+) allocs, ([\d,]+) frees, ([\d,]+) bytes allocated",
                  text)
    if m:
        fig["allocs"], fig["frees"], fig["bytes"] = (_num(x) for x in m.groups())
    m = re.search(r"in use at exit: ([\d,]+) bytes in ([\d,]+) blocks", text)
    if m:
        fig["in_use_bytes"], fig["in_use_blocks"] = (_num(x) for x in m.groups())
    m = re.search(r"definitely lost: ([\d,]+) bytes in ([\d,]+) blocks", text)
    if m:
        fig["definitely_bytes"], fig["definitely_blocks"] = (_num(x) for x in m.groups())
    # the LEAK SUMMARY, class by class, as ctrack's JSON names them (0 when absent)
    for vg_name, key in (("definitely lost", "definitely_lost"), ("indirectly lost", "indirectly_lost"),
                         ("possibly lost", "possibly_lost"), ("still reachable", "still_reachable")):
        m = re.search(vg_name + r": ([\d,]+) bytes in ([\d,]+) blocks", text)
        fig[key + "_bytes"], fig[key + "_blocks"] = (_num(x) for x in m.groups()) if m else (0, 0)
    return fig


def line_markers(path):
    """{NAME: line number} of the `LINE NAME` (or `LINE:NAME`) markers in a source file."""
    with open(path) as f:
        return {m.group(1): n for n, text in enumerate(f, 1)
                for m in [re.search(r"LINE[ :](\w+)", text)] if m}


def frame0(entry):
    f = entry.get("frames") or [{}]
    return f[0].get("function") or ""


def same_function(name, want):
    """A symbol table name, demangled or not: `leak_new` matches `leak_new()`."""
    return name == want or name.startswith(want + "(")


def frame_at(frame, function, src, line):
    """Whether a report's frame is `function` at `line` of the source file `src`."""
    return (same_function(frame.get("function") or "", function)
            and os.path.basename(frame.get("file") or "") == os.path.basename(src)
            and frame.get("line") == line)


def sites(entries, function):
    """(bytes, allocations) summed over the entries whose frame 0 is `function`."""
    hits = [e for e in entries or [] if same_function(frame0(e), function)]
    return sum(e["bytes"] for e in hits), sum(e["allocations"] for e in hits)
