# SPDX-License-Identifier: MIT
# Caller frames are looked up at their call (return address - 1), for module, function, file, line
# and inline chain alike (tests/progs/tailcall.c, built here with gcc -O2 -g -falign-functions=1): a
# call that ends its function returns to the next function's first byte, one that ends a library's
# code returns past its executable segment, and _start (no debug info, right after main's CU in
# crt1.o's code) has no line. Expected figures: the source's LINE markers and addr2line -f -i on the
# return address - 1; the premises (where each call ends) come from objdump, nm and readelf.
import os
import re
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
src = env.progs[0]
FILE = os.path.basename(src)
LINES = ct.line_markers(src)
CFLAGS = ["-O2", "-g", "-falign-functions=1"]


def run(what, cmd, **kw):
    print("run:", " ".join(cmd))
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    env.check(what, r.returncode == 0, r.stderr[-500:])
    return r.stdout


def last_call_end(path, function):
    """(end address, callee) of the last instruction of function in objdump -d, which must be a call."""
    text = run("objdump -d " + os.path.basename(path), ["objdump", "-d", path])
    body = re.search(r"^[0-9a-f]+ <%s>:\n(.*?)(?:\n\n|\Z)" % re.escape(function), text, re.S | re.M)
    rows = [m for m in re.finditer(r"^\s*([0-9a-f]+):\t((?:[0-9a-f]{2} )+)\s*\t?(.*)$",
                                   body.group(1) if body else "", re.M)]
    if not env.check(function + ": disassembled", rows):
        return None, None
    last = rows[-1]
    end = int(last.group(1), 16) + len(last.group(2).split())
    callee = re.search(r"call\s+\S+\s+<([^>+@]+)", last.group(3))
    return end, callee.group(1) if callee else None


def symbols(path):
    """{name: address} of nm's text symbols."""
    out = run("nm " + os.path.basename(path), ["nm", path])
    return {m.group(2): int(m.group(1), 16)
            for m in re.finditer(r"^([0-9a-f]+) [tT] (\S+)$", out, re.M)}


def exec_segment_end(path):
    out = run("readelf -l " + os.path.basename(path), ["readelf", "-lW", path])
    for m in re.finditer(r"^\s*LOAD\s+\S+\s+(0x[0-9a-f]+)\s+\S+\s+\S+\s+(0x[0-9a-f]+)\s+R E", out, re.M):
        return int(m.group(1), 16) + int(m.group(2), 16)
    return None


def addr2line(path, address):
    """addr2line -f -i on address: [(function, file basename or None, line or None)], innermost first."""
    out = run("addr2line", ["addr2line", "-f", "-i", "-e", path, "0x%x" % address]).splitlines()
    chain = []
    for fn, where in zip(out[0::2], out[1::2]):
        file, _, line = where.partition(" ")[0].rpartition(":")
        known = file != "??" and line.isdigit() and line != "0"
        chain.append((fn, os.path.basename(file) if known else None, int(line) if known else None))
    return chain


def shown(f):
    return (f["function"], os.path.basename(f["file"]) if f["file"] else None, f["line"])


def one_leak(what, rep, size):
    leaks = (rep or {}).get("leaks", [])
    env.eq(what + ": one leak of %d bytes" % size, [(e["bytes"], e["allocations"]) for e in leaks],
           [(size, 1)])
    return leaks[0]["frames"] if leaks else []


d = env.fresh_dir("build")
lib = os.path.join(d, "libtailcall.so")
exe = os.path.join(d, "tailcall")
run("compile libtailcall.so", ["gcc", *CFLAGS, "-fPIC", "-shared", "-nostartfiles", "-DTAILCALL_LIB",
                               "-o", lib, src])
run("compile tailcall", ["gcc", *CFLAGS, "-no-pie", "-o", exe, src, "-L" + d, "-ltailcall",
                         "-Wl,-rpath," + d])
env.eq("LINE markers in " + FILE, sorted(LINES),
       sorted(["alloc", "call", "main_call", "main_edge", "edge_alloc", "edge_call"]))

# The premises, from the binaries: each call ends where the next function or the code ends.
syms = symbols(exe)
end, callee = last_call_end(exe, "fail_with")
env.eq("fail_with ends with its call to die_alloc", callee, "die_alloc")
env.check("fail_with's return address is after's first byte", end and end == syms.get("after"),
          "call ends at %r, after at %r" % (end, syms.get("after")))
env.eq("addr2line at fail_with's call", addr2line(exe, end - 1 if end else 0)[:1],
       [("fail_with", FILE, LINES["call"])])
lib_end, lib_callee = last_call_end(lib, "edge_fail")
env.eq("edge_fail ends with its call to edge_die", lib_callee, "edge_die")
env.check("edge_fail's return address is the end of the library's code",
          lib_end and lib_end == exec_segment_end(lib),
          "call ends at %r, R E segment at %r" % (lib_end, exec_segment_end(lib)))
env.eq("addr2line at edge_fail's call", addr2line(lib, lib_end - 1 if lib_end else 0)[:1],
       [("edge_fail", FILE, LINES["edge_call"])])

# 1. Calls that end their function: every frame of the executable as addr2line says at ra - 1, _start
# included (--full-stacks: by default stacks end at main).
env.analyze_opts = ["--full-stacks"]
r, rep = env.run_traced("exe", [exe])
env.analyze_opts = []
env.eq("tailcall: exit status", r.returncode, 0)
frames = one_leak("tailcall", rep, 40)
env.eq("tailcall: innermost frames at the LINE markers", [shown(f) for f in frames[:3]],
       [("die_alloc", FILE, LINES["alloc"]), ("fail_with", FILE, LINES["call"]),
        ("main", FILE, LINES["main_call"])])
mine = [f for f in frames if f["module"] == exe]
env.check("tailcall: _start is shown", any(f["function"] == "_start" for f in mine),
          repr([shown(f) for f in frames]))
for address in sorted({f["address"] for f in mine}, key=lambda a: int(a, 16)):
    chain = [shown(f) for f in mine if f["address"] == address]
    env.eq("tailcall: frame %s as addr2line at ra - 1" % chain[-1][0], chain,
           addr2line(exe, int(address, 16) - 1))

# 2. A call that ends the library's code: its frame is the library's.
edge_dir = env.fresh_dir("edge")
trace = os.path.join(edge_dir, "trace.zst")
r, _ = env.run_ctrack([exe, "edge"], edge_dir, opts=("-o", trace))
env.eq("tailcall edge: exit status", r.returncode, 0)
frames = one_leak("tailcall edge", env.report(trace), 24)
env.eq("tailcall edge: frames at the LINE markers", [shown(f) for f in frames[:3]],
       [("edge_die", FILE, LINES["edge_alloc"]), ("edge_fail", FILE, LINES["edge_call"]),
        ("main", FILE, LINES["main_edge"])])
env.eq("tailcall edge: edge_fail's module", [f["module"] for f in frames[:2]], [lib, lib])

# The text report and the exports share the lookup.
text = env.run_analyze(trace).stdout.decode(errors="replace")
env.check("text: edge_fail at its call's line",
          re.search(r" edge_fail at \S*%s:%d\b" % (re.escape(FILE), LINES["edge_call"]), text),
          text[-1500:])
folded = os.path.join(edge_dir, "out.folded")
env.run_analyze(trace, "--folded", folded)
with open(folded) as f:
    stacks = f.read()
env.check("folded: main;edge_fail;edge_die", re.search(r"\bmain;edge_fail;edge_die 24$", stacks, re.M),
          stacks)
pb = os.path.join(edge_dir, "out.pb.gz")
env.run_analyze(trace, "--pprof", pb)
home = env.fresh_dir("go")
go_env = dict(os.environ, HOME=home, GOCACHE=os.path.join(home, "cache"),
              GOPATH=os.path.join(home, "path"), GOTOOLCHAIN="local")
traces = run("go tool pprof -traces -lines",
             ["go", "tool", "pprof", "-symbolize=none", "-traces", "-lines", pb], env=go_env)
env.check("pprof: edge_fail at its call's line",
          re.search(r"\bedge_fail \S*%s:%d\b" % (re.escape(FILE), LINES["edge_call"]), traces), traces)
env.finish()
