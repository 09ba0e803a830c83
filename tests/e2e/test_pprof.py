# SPDX-License-Identifier: MIT
# --pprof (tests/progs/flame.c), read back by pprof itself (`go tool pprof`): -raw gives every sample's
# four values and its locations with their inline lines, -top the figures per function, -traces the
# backtraces with the inlined frame and file:line. Expected figures come from flame.c's comment and its
# LINE markers; the peak profile's in-use figures are the heap at its peak.
import gzip
import os
import re
import shutil
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
# flame.c's tree has xmalloc as its one allocation function, a frame of its own in every figure this
# test checks: it is kept (test_sites.py checks how wrappers fold).
env.analyze_opts = ["--no-auto-fold"]
prog, src = env.progs[0], env.progs[1]
SRC = os.path.basename(src)

LINES = ct.line_markers(src)

TYPES = "alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes[dflt]"
# flame.c's sites, each by its innermost shown frames (function, LINE marker), with its values at exit
# and at the peak: [alloc_objects, alloc_space, inuse_objects, inuse_space].
PARSE = (("xmalloc", "XMALLOC"), ("parse_entry", "PARSE"), ("load_config", "LOAD_PARSE"),
         ("main", "MAIN_LOAD"))
INTERN = (("xmalloc", "XMALLOC"), ("intern_name", "INTERN"), ("load_config", "LOAD_INTERN"),
          ("main", "MAIN_LOAD"))
CACHE = (("xmalloc", "XMALLOC"), ("build_cache", "CACHE"), ("main", "MAIN_CACHE"))
SCRATCH = (("scratch", "SCRATCH"), ("main", "MAIN_SCRATCH"))  # malloc itself is folded
NAMES = {PARSE: "parse_entry", INTERN: "intern_name", CACHE: "build_cache", SCRATCH: "scratch"}
SITES = {  # stack: (at exit, at the peak)
    PARSE: ([10, 480, 10, 480], [10, 480, 10, 480]),
    INTERN: ([5, 160, 5, 160], [5, 160, 5, 160]),
    CACHE: ([16, 16 * 65536, 0, 0], [16, 16 * 65536, 16, 16 * 65536]),
    SCRATCH: ([1000, 100000, 0, 0], [1000, 100000, 0, 0]),
}
TOTALS = {"exit": [1031, 1149216, 15, 640], "peak": [1031, 1149216, 31, 1049216]}

home = env.fresh_dir("go")
GO_ENV = dict(os.environ, HOME=home, GOCACHE=os.path.join(home, "cache"),
              GOPATH=os.path.join(home, "path"), PPROF_TMPDIR=os.path.join(home, "pprof"),
              GOTOOLCHAIN="local")


def pprof(path, *opts):
    """`go tool pprof -symbolize=none OPTS PATH`'s output ("" after a failed check)."""
    cmd = ["go", "tool", "pprof", "-symbolize=none", *opts, path]
    r = subprocess.run(cmd, capture_output=True, text=True, env=GO_ENV, timeout=120)
    ok = env.check("pprof %s %s exits 0" % (" ".join(opts), os.path.basename(path)),
                   r.returncode == 0, r.stderr[-500:])
    return r.stdout if ok else ""


def parse_line(text):
    """'func file:line s=0' -> (func, basename of file, line)."""
    text = re.sub(r" s=\d+$", "", text.strip())
    name, _, where = text.rpartition(" ")
    file, _, line = where.rpartition(":")
    return name, os.path.basename(file), int(line)


def parse_raw(text):
    """-raw's samples [(values, [location ids])], locations {id: [(func, file, line) inner first]},
    mappings [line] and the header line of the sample types."""
    samples, locs, maps, types, part, last = [], {}, [], None, None, None
    for line in text.splitlines():
        if line in ("Samples:", "Locations", "Mappings"):
            part = line
        elif part == "Samples:" and types is None:
            types = line.strip()
        elif part == "Samples:" and ":" in line:
            values, ids = line.split(":", 1)
            samples.append(([int(v) for v in values.split()], [int(i) for i in ids.split()]))
        elif part == "Locations":
            m = re.match(r"\s*(\d+): 0x[0-9a-f]+(?: M=\d+)? (.*)$", line)
            if m:
                last = int(m.group(1))
                locs[last] = [parse_line(m.group(2))]
            elif last is not None and line.strip():
                locs[last].append(parse_line(line))
        elif part == "Mappings" and line.strip():
            maps.append(line)
    return samples, locs, maps, types


def shown(stack):
    """The frames we expect from the sites' table: (function, flame.c, marked line)."""
    return [(fn, SRC, LINES[mark]) for fn, mark in stack]


def check_raw(path, when):
    samples, locs, maps, types = parse_raw(pprof(path, "-raw"))
    env.eq(when + ": sample types", types, TYPES)
    env.eq(when + ": totals", [sum(v[i] for v, _ in samples) for i in range(4)], TOTALS[when])
    frames = [[line for i in ids for line in locs.get(i, [("?", "", 0)])] for _, ids in samples]
    for stack, figures in SITES.items():
        want = shown(stack)
        got = [v for (v, _), f in zip(samples, frames) if f[:len(want)] == want]
        env.eq("%s: %s's values" % (when, NAMES[stack]), got, [figures[when == "peak"]])
    # intern_name is inlined into load_config: one address, two lines, innermost first
    chain = [lines for lines in locs.values() if len(lines) > 1]
    env.eq(when + ": the one inline chain", chain, [shown(INTERN[1:3])])
    env.check(when + ": mapping 1 is the program, with a build id",
              maps and re.match(r"1: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ %s [0-9a-f]{40} \[FN\]\[FL\]\[LN\]\[IN\]$"
                                % re.escape(prog), maps[0]), repr(maps[:1]))


TOP_ROW = re.compile(r"^\s*(\d+)B?\s+\S+\s+\S+\s+(\d+)B?\s+\S+\s+(\S+)( \(inline\))?$")


def top(path, index):
    """-top's {function: (flat, cum)} and its total, exact (bytes with -unit=byte) and unpruned."""
    unit = ["-unit=byte"] if index.endswith("_space") else []  # counts print bare
    out = pprof(path, "-top", "-nodefraction=0", "-sample_index=" + index, *unit)
    rows = {m.group(3): (int(m.group(1)), int(m.group(2)))
            for m in map(TOP_ROW.match, out.splitlines()) if m}
    total = re.search(r"Total samples = (\d+)B?\s*$", out, re.M)
    return rows, int(total.group(1)) if total else None


r, rep = env.run_traced("traced", [prog])
env.eq("exit status", r.returncode, 0)
trace = os.path.join(env.scratch, "traced", "trace.zst")
if not shutil.which("go", path=GO_ENV.get("PATH")):
    env.check("go is installed (golang-go)", False)
elif rep:
    files = {"exit": os.path.join(env.scratch, "exit.pb.gz"), "peak": os.path.join(env.scratch, "peak.pb.gz")}
    a = env.run_analyze(trace, "--pprof", files["exit"])
    env.check("--pprof exits 0", a.returncode == 0 and not a.stderr, a.stderr[-300:])
    a = env.run_analyze(trace, "--pprof=" + files["peak"], "--pprof-at=peak")
    env.check("--pprof-at=peak exits 0", a.returncode == 0 and not a.stderr, a.stderr[-300:])
    for when, path in files.items():
        with open(path, "rb") as f:
            data = f.read()
        env.eq(when + ": gzip magic", data[:2], b"\x1f\x8b")
        env.check(when + ": gunzips", len(gzip.decompress(data)) > 0)
        check_raw(path, when)

    # -top: the leaks at exit, per function (flame.c: 480 via parse_entry, 160 via intern_name)
    rows, total = top(files["exit"], "inuse_space")
    env.eq("top inuse_space: total", total, 640)
    want = {"xmalloc": (640, 640), "parse_entry": (0, 480), "intern_name": (0, 160),
            "load_config": (0, 640), "main": (0, 640)}
    env.eq("top inuse_space: rows", {k: rows.get(k) for k in want}, want)
    # ... the same sites and bytes as ctrack's own report
    env.eq("top inuse_space: flat == the report's leaks",
           {ct.frame0(e): rows.get(ct.frame0(e), (None,))[0] for e in rep["leaks"]},
           {ct.frame0(e): e["bytes"] for e in rep["leaks"]})
    rows, total = top(files["peak"], "inuse_space")
    env.eq("top peak inuse_space: total", total, 1049216)
    env.eq("top peak inuse_space: build_cache", rows.get("build_cache"), (0, 16 * 65536))
    rows, total = top(files["peak"], "inuse_objects")
    env.eq("top peak inuse_objects: total", total, 31)
    rows, total = top(files["exit"], "alloc_objects")
    env.eq("top alloc_objects: total", total, 1031)
    env.eq("top alloc_objects: scratch, xmalloc",
           (rows.get("scratch"), rows.get("xmalloc")), ((1000, 1000), (31, 31)))
    rows, total = top(files["exit"], "alloc_space")
    env.eq("top alloc_space: total", total, 1149216)

    # -traces: the backtraces, the inlined frame marked, file:line from flame.c's markers
    out = pprof(files["exit"], "-traces", "-lines", "-sample_index=inuse_space")
    blocks = [b.strip().splitlines() for b in re.split(r"^-+\+-+$", out, flags=re.M)[1:]]
    traces = {}
    for b in blocks:
        m = re.match(r"\s*(\d+)B?\s+(.*)$", b[0]) if b else None
        if m and m.group(1) != "0":
            traces[int(m.group(1))] = [m.group(2).strip()] + [x.strip() for x in b[1:]]

    def trace_of(stack, inline=None):
        return ["%s FILE:%d%s" % (fn, LINES[mark], " (inline)" if fn == inline else "")
                for fn, mark in stack]

    def normalized(lines):
        """Frames of flame.c with its path replaced by FILE; the libc/start frames dropped."""
        return [re.sub(r"\S*" + re.escape(SRC) + ":", "FILE:", x) for x in lines if SRC in x]

    env.eq("traces: 480 B through parse_entry", normalized(traces.get(480, [])), trace_of(PARSE))
    env.eq("traces: 160 B through the inlined intern_name", normalized(traces.get(160, [])),
           trace_of(INTERN, inline="intern_name"))
    out = pprof(files["exit"], "-traces")
    env.check("traces: '(inline)' without -lines", "intern_name (inline)" in out, out[-800:])
    raw = pprof(files["peak"], "-raw")
    env.check("peak: the comment says so", "heap's peak" in raw, raw[:300])

    # a broken output path: one line on stderr, non-zero exit
    for bad in (os.path.join(env.scratch, "missing-dir", "x.pb.gz"), "/dev/full"):
        a = env.run_analyze(trace, "--pprof", bad)
        err = a.stderr.decode(errors="replace")
        env.check("--pprof %s fails with one line" % bad,
                  a.returncode != 0 and err.count("\n") == 1 and bad in err, "exit %d, %r" % (a.returncode, err))
env.finish()
