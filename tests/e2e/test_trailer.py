# SPDX-License-Identifier: MIT
# The summary trailer (include/ctrack/format.h): the launcher's closing line comes from a few bytes at
# the end of the trace, which the shim's writer puts after END. Checked against the programs' own
# figures: tests/progs/peak.c (8 allocations, 4 frees, 2278376 bytes, peak 1229800, 308200 bytes live
# in 4 blocks; its 1 MiB block is freed by the very next call: 1 temporary allocation) and
# tests/progs/lifecycle.c with lifecycle_lib.c preloaded (3, 1, 666 bytes, 555 live in 2; a
# destructor frees after ctrack's END, so the file goes on past the trailer it had), and a program
# written here whose peak is a temporary allocation's (its comment has the figures). The trailer is
# decoded here from format.h's layout, not by ctrack; the summaries are ct_trace_summarize()'s, which
# the reader's test generator prints (reader-gen-trace --summary TRACE).
import json
import os
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
peak, lifecycle, lib, gen = env.progs
PEAK = {"allocations": 8, "frees": 4, "bytes_allocated": 2278376, "peak_heap_bytes": 1229800,
        "leaked_bytes": 308200, "leaked_allocations": 4}
FIELDS = ("version", "at", "allocations", "frees", "bytes_allocated", "temporary", "peak", "live_bytes",
          "live_blocks", "runtime_us", "classified")


def fnv1a(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return h


def varints(data):
    out, v, shift = [], 0, 0
    for b in data:
        v |= (b & 0x7f) << shift
        shift += 7
        if not b & 0x80:
            out.append(v)
            v, shift = 0, 0
    return out


M64 = (1 << 64) - 1
P1, P2 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F


def rotl(v, r):
    return ((v << r) | (v >> (64 - r))) & M64


def file_hash(data):
    """ct_file_hash of trailer.h, as its comment describes it: 32-byte stripes in four lanes, then the rest
    byte by byte."""
    acc = [(P1 + P2) & M64, P2, 0, (-P1) & M64]
    whole = len(data) // 32 * 32
    for p in range(0, whole, 32):
        for i in range(4):
            w = int.from_bytes(data[p + 8 * i:p + 8 * i + 8], "little")
            acc[i] = (rotl((acc[i] + w * P2) & M64, 31) * P1) & M64
    v = (rotl(acc[0], 1) + rotl(acc[1], 7) + rotl(acc[2], 12) + rotl(acc[3], 18)) & M64
    v ^= (len(data) * P1) & M64
    for b in data[whole:]:
        v = ((v ^ b) * 0x100000001b3) & M64
    v ^= v >> 33
    v = (v * P2) & M64
    return v ^ (v >> 29)


def trailer(data):
    """The fields of the trailer the bytes end with, by format.h's layout; None when they end in none."""
    if len(data) < 32 or data[-4:] != b"CSM1":
        return None
    n = int.from_bytes(data[-8:-4], "little")
    frame = data[-n:]
    if (int.from_bytes(frame[:4], "little") != 0x184D2A5C or int.from_bytes(frame[4:8], "little") != n - 8
            or int.from_bytes(frame[-16:-8], "little") != fnv1a(frame[:-16])
            or int.from_bytes(frame[-24:-16], "little") != file_hash(data[:-n])):
        return None
    v = varints(frame[8:-24])
    t = dict(zip(FIELDS, v))
    if t.get("classified"):
        t["class_blocks"], t["class_bytes"] = v[11:19:2], v[12:19:2]
    return t if t.get("at") == len(data) - n else None


def uvarint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7f) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def encode(t, records):
    """A trailer for the file bytes `records`, by format.h's layout."""
    body = b"".join(uvarint(t[k]) for k in FIELDS)
    if t["classified"]:
        body += b"".join(uvarint(b) + uvarint(n) for b, n in zip(t["class_blocks"], t["class_bytes"]))
    n = 8 + len(body) + 24
    head = (0x184D2A5C).to_bytes(4, "little") + (n - 8).to_bytes(4, "little")
    frame = head + body + file_hash(records).to_bytes(8, "little")
    return frame + fnv1a(frame).to_bytes(8, "little") + n.to_bytes(4, "little") + b"CSM1"


def summary(path, verify=True, fails=False):
    e = dict(os.environ)
    if not verify:
        e.pop("CTRACK_SUMMARY_VERIFY", None)
    r = subprocess.run([gen, "--summary", path], capture_output=True, text=True, env=e)
    if fails:
        return r
    env.check("summary of %s" % os.path.basename(path), r.returncode == 0, r.stderr[-400:])
    return json.loads(r.stdout) if r.returncode == 0 else {}


def figures(s):
    return {k: s.get(k) for k in PEAK}


def copy(path, name, data):
    out = os.path.join(os.path.dirname(path), name)
    with open(out, "wb") as f:
        f.write(data)
    return out


# ---- a whole run: the trailer holds the program's figures ----
d = env.fresh_dir("peak")
trace = os.path.join(d, "trace.zst")
r = subprocess.run([env.ctrack, "-o", trace, peak], cwd=d, capture_output=True, text=True)
env.eq("peak: exit status", r.returncode, 0)
env.check("peak: closing line", "8 allocations" in r.stderr, r.stderr)
data = open(trace, "rb").read()
t = trailer(data)
if env.check("peak: the file ends with a trailer", t is not None, repr(data[-24:])):
    env.eq("peak: trailer figures", (t["allocations"], t["frees"], t["bytes_allocated"], t["peak"],
                                     t["live_bytes"], t["live_blocks"], t["temporary"]),
           (8, 4, 2278376, 1229800, 308200, 4, 1))
    env.eq("peak: classified, every live block in a class", (t["classified"], sum(t["class_blocks"]),
                                                             sum(t["class_bytes"])), (1, 4, 308200))
    env.check("peak: runtime", t["runtime_us"] > 0, repr(t))
env.eq("peak: summary", figures(summary(trace)), PEAK)
n = int.from_bytes(data[-8:-4], "little")
# without its trailer, or with a figure changed in it (the check then fails), the records give the same
env.eq("peak: summary without the trailer", figures(summary(copy(trace, "cut.zst", data[:-n]))), PEAK)
bad = bytearray(data)
bad[-n + 10] ^= 0x01  # inside the payload: the check no longer matches
env.check("peak: a changed trailer is none", trailer(bytes(bad)) is None)
env.eq("peak: summary with a changed trailer", figures(summary(copy(trace, "bad.zst", bytes(bad)))), PEAK)
# the summary is the trailer's: one that says 9 allocations, written as a writer would (this test's
# encoder, from format.h), gives 9; and the suite's check (CTRACK_SUMMARY_VERIFY) aborts on it, naming
# the figure
if t:
    nine = copy(trace, "nine.zst", data[:-n] + encode(dict(t, allocations=9), data[:-n]))
    env.eq("peak: this test's encoder writes the same trailer", encode(t, data[:-n]), data[-n:])
    env.eq("peak: summary from a trailer alone", summary(nine, verify=False).get("allocations"), 9)
    r = summary(nine, fails=True)
    env.check("peak: CTRACK_SUMMARY_VERIFY catches a wrong figure",
              r.returncode == -6 and "says allocations 9, its records 8" in r.stderr, r.stderr[-300:])
# joined to another file, the trailer names another offset: none
joined = copy(trace, "joined.zst", data + data)
env.check("peak: a trailer after another trace is none", trailer(open(joined, "rb").read()) is None)
# a byte of the records changed since the writer wrote them: the file hash no longer matches, and the
# summary, read from the records, says the trace is damaged (without the suite's check, which reads
# them anyway)
dam = bytearray(data)
dam[(len(data) - n) // 2] ^= 0xff
env.check("peak: a trailer after changed records is none", trailer(bytes(dam)) is None)
s = summary(copy(trace, "damaged.zst", bytes(dam)), verify=False)
env.eq("peak: summary of changed records: not complete", s.get("complete"), False)

# ---- a peak that a temporary allocation makes: its block is live at its TEMP record ----
# keeps malloc(100), then malloc(1 MiB) freed by the very next call: 2 allocations, 1 free (temporary),
# 1048676 bytes, peak 100 + 1048576 = 1048676, 100 bytes live in 1 block
d = env.fresh_dir("temp-peak")
src = os.path.join(d, "temp_peak.c")
with open(src, "w") as f:
    f.write("#include <stdlib.h>\nvoid *volatile keep;\n"
            "int main(void) { keep = malloc(100); free(malloc(1 << 20)); return 0; }\n")
prog = env.cc(src, os.path.join(d, "temp_peak"), "-fno-builtin")
if prog:
    trace = os.path.join(d, "trace.zst")
    r = subprocess.run([env.ctrack, "-q", "-o", trace, prog], cwd=d, capture_output=True, text=True)
    t = trailer(open(trace, "rb").read()) if os.path.exists(trace) else None
    if env.check("temporary peak: the file ends with a trailer", t is not None, r.stderr[-300:]):
        env.eq("temporary peak: trailer figures", (t["allocations"], t["frees"], t["bytes_allocated"],
                                                   t["temporary"], t["peak"], t["live_bytes"],
                                                   t["live_blocks"]), (2, 1, 1048676, 1, 1048676, 100, 1))

# ---- no trailer where it would not be the whole summary ----
for opts, why in ((["--sample=4096"], "sampled"), (["--lanes", "2"], "two lanes")):
    d = env.fresh_dir("peak-" + opts[0].strip("-").split("=")[0])
    trace = os.path.join(d, "trace.zst")
    r = subprocess.run([env.ctrack, "-q", *opts, "-o", trace, peak], cwd=d, capture_output=True, text=True)
    env.eq("%s: exit status" % why, r.returncode, 0)
    if os.path.exists(trace):
        env.check("%s: no trailer" % why, trailer(open(trace, "rb").read()) is None)
        if why == "two lanes":
            env.eq("two lanes: summary", figures(summary(trace)), PEAK)

# ---- records after END: the trailer written with it no longer ends the file ----
d = env.fresh_dir("lifecycle")
trace = os.path.join(d, "trace.zst")
r = subprocess.run([env.ctrack, "-o", trace, lifecycle], cwd=d, capture_output=True, text=True,
                   env=dict(os.environ, LD_PRELOAD=lib))
env.eq("late free: exit status", r.returncode, 0)
data = open(trace, "rb").read()
env.check("late free: a trailer was written with the first END", b"CSM1" in data)
env.check("late free: the file does not end with it", trailer(data) is None, repr(data[-24:]))
s = summary(trace)
env.eq("late free: summary", (s.get("allocations"), s.get("frees"), s.get("bytes_allocated"),
                              s.get("leaked_bytes"), s.get("leaked_allocations"), s.get("complete")),
       (3, 1, 666, 555, 2, True))
env.finish()
