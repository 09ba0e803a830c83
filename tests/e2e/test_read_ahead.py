# SPDX-License-Identifier: MIT
# Reading ahead (analyzer/readahead.c): with CTRACK_READ_AHEAD=1 a thread decompresses the trace and
# joins its BATCH records while the reader's thread decodes; with CTRACK_READ_AHEAD=0 one thread does
# it all. Every output must be the same bytes either way, with the same messages and exit status: the
# text report, --json, every file output, on whole traces (tests/progs/pairs.c: 2,000,000 events, 2 MB
# in 16 zstd blocks, each a slot of its own; prodcons.c: 6 threads; leak_classes.c: a classified
# trace; killed.c: a trace cut by SIGKILL), on copies of pairs' cut at several points and on copies
# with damaged bytes, whose warnings name file offsets.
# And the thread does start when asked (gdb), and not otherwise.
import os
import shutil
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
pairs, prodcons, classes, killed = env.progs[:4]
FILES = ["--flamegraph", "--folded", "--html", "--pprof", "--speedscope", "--massif", "--junit",
         "--sarif"]


def analyze(ahead, trace, *args):
    """ctrack-analyze ARGS TRACE with CTRACK_READ_AHEAD=ahead: (exit, stdout, stderr)."""
    e = dict(os.environ, CTRACK_READ_AHEAD=ahead)
    r = subprocess.run([env.analyze, *args, trace], capture_output=True, env=e, timeout=120,
                       preexec_fn=ct.no_core)
    return r.returncode, r.stdout, r.stderr.replace(trace.encode(), b"TRACE")


def outputs(ahead, trace, d):
    """Everything a run of each output gives: {label: bytes or (exit, stdout, stderr)}."""
    got = {"text": analyze(ahead, trace), "json": analyze(ahead, trace, "--json"),
           "github": analyze(ahead, trace, "--github"),
           "callers": analyze(ahead, trace, "--top", "1000", "--callers", "50", "--all-frames")}
    for opt in FILES:
        path = os.path.join(d, "out" + opt)
        if os.path.exists(path):
            os.unlink(path)
        got[opt] = analyze(ahead, trace, opt + "=" + path)
        if os.path.exists(path):
            with open(path, "rb") as f:
                got[opt + " file"] = f.read()
    return got


def same(label, trace, full=True):
    d = env.fresh_dir("out-" + label)
    if full:
        one, two = outputs("0", trace, d), outputs("1", trace, d)
    else:
        one, two = {"text": analyze("0", trace)}, {"text": analyze("1", trace)}
    differ = sorted(k for k in one if one[k] != two.get(k))
    env.eq("%s: every output the same with and without reading ahead" % label, differ, [])
    return one["text"]


def cut(trace, name, at):
    path = os.path.join(env.fresh_dir(name), "trace.zst")
    with open(trace, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data[:at])
    return path


def damaged(trace, name, at):
    path = os.path.join(env.fresh_dir(name), "trace.zst")
    shutil.copyfile(trace, path)
    with open(path, "r+b") as f:
        f.seek(at)
        b = f.read(1)
        f.seek(at)
        f.write(bytes([b[0] ^ 0x10]))
    return path


big = env.trace("pairs", [pairs])
size = os.path.getsize(big)
rc, out, err = same("pairs", big)
env.check("pairs: read whole", rc == 0 and b"calls to allocation functions: 1000000 " in out and not err, (rc, out[:300], err[-300:]))
same("prodcons", env.trace("prodcons", [prodcons]))
same("classes", env.trace("classes", [classes]))
d = env.fresh_dir("killed")
env.run_ctrack([killed, "self"], d, opts=("-o", os.path.join(d, "trace.zst")))
rc, out, err = same("killed", os.path.join(d, "trace.zst"))
env.check("killed: its cut said", b"truncated" in err, err[-300:])

# Cut and damaged copies: the warning (and its offset) and the figures before it.
warned = 0
for k in range(1, 8):
    rc, out, err = same("cut%d" % k, cut(big, "cut%d" % k, size * k // 8), full=k == 4)
    warned += any(w in err for w in (b"truncated", b"corrupt trace near byte", b"cut before the end of its header"))
env.eq("cut copies: each says where it ends", warned, 7)
named = 0
for k in range(1, 8):
    rc, out, err = same("damaged%d" % k, damaged(big, "damaged%d" % k, size * k // 8 + 17), full=k == 4)
    named += b"corrupt trace near byte" in err
env.check("damaged copies: the damage named by its file offset", named >= 3, "%d of 7" % named)

# Damaged records (bytes changed before compression, with the zstd command): the warnings name the
# record, its place in its BATCH and the zstd block that held it, by its file offset.
if shutil.which("zstd"):
    raw = subprocess.run(["zstd", "-dc", big], capture_output=True, check=True).stdout
    named = 0
    for k in range(1, 8):
        b = bytearray(raw)
        b[len(b) * k // 8 + 5] ^= 0x41
        path = os.path.join(env.fresh_dir("records%d" % k), "trace.zst")
        subprocess.run(["zstd", "-q", "-3", "-o", path], input=bytes(b), check=True)
        rc, out, err = same("records%d" % k, path, full=k == 4)
        named += b"corrupt trace near byte" in err and b"of the decompressed trace" in err
    env.check("damaged records: named by their place", named >= 3, "%d of 7" % named)
else:
    print("the zstd command is not installed: damaged records are not checked")

# The thread starts when asked, and only then: a breakpoint on ct_readahead_start (gdb), hit or not.
if shutil.which("gdb"):
    def started(ahead):
        e = dict(os.environ, CTRACK_READ_AHEAD=ahead)
        r = subprocess.run(["gdb", "-q", "-batch", "-ex", "break ct_readahead_start", "-ex", "run",
                            "-ex", "info breakpoints", "--args", env.analyze, big],
                           capture_output=True, env=e, timeout=120)
        return b"breakpoint already hit 1 time" in r.stdout
    env.eq("the read-ahead thread starts with CTRACK_READ_AHEAD=1, not with 0", (started("1"), started("0")),
           (True, False))
else:
    print("gdb is not installed: whether the thread starts is not checked")
env.finish()
