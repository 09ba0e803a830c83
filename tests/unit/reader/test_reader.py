# SPDX-License-Identifier: MIT
# Runs the real ctrack-analyze on synthetic traces (written by gen_trace) and checks exact figures,
# rankings, error messages and JSON validity. --bench N: the reader's speed on an N-event trace.
import gzip
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

failures = []


# The format's version, from its one specification (gen_trace writes a file one version newer).
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "include", "ctrack",
                       "format.h")) as _f:
    VERSION = int(re.search(r"#define CTRACK_FORMAT_VERSION (\d+)", _f.read()).group(1))


def check(what, got, want):
    if got != want:
        failures.append(f"{what}: got {got!r}, want {want!r}")


def analyze(exe, *args):
    p = subprocess.run([exe, *args], capture_output=True)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def analyze_json(exe, path, *args):
    rc, out, err = analyze(exe, "--json", *args, path)
    check(f"{path}: exit status", rc, 0)
    return json.loads(out.decode("utf-8")), err  # strict: the document must be valid UTF-8 JSON


def addresses(site):
    return [f["address"] for f in site["frames"]]


def test_basic(exe, gen, d):
    doc, err = analyze_json(exe, f"{d}/basic.zst")
    check("basic: stderr", err, "")
    check("basic: complete", doc["complete"], True)
    check("basic: process", doc["process"], {"pid": 42, "ppid": 1, "exe": "/bin/prog", "argv": ["prog", "a b"],
                                              "start_unix_ns": 1700000000000000000})
    check("basic: summary", doc["summary"], {
        "allocations": 10, "frees": 4, "bytes_allocated": 8330, "temporary_allocations": 2,
        "peak_heap_bytes": 5320, "peak_heap_time_ns": 15000, "peak_rss_bytes": 123456,
        "leaked_bytes": 2220, "leaked_allocations": 6, "runtime_ns": 25000, "unmatched_frees": 3,
        "invalid_frees": 0})
    check("basic: leaks", [(s["bytes"], s["allocations"], addresses(s)) for s in doc["leaks"]],
          [(2000, 2, ["0x401200", "0x401010"]), (220, 4, ["0x401100", "0x401010"])])
    check("basic: peak", [(s["bytes"], s["allocations"], addresses(s), s["truncated"]) for s in doc["peak"]],
          [(5000, 1, ["0x401300"], True), (320, 5, ["0x401100", "0x401010"], False)])
    check("basic: allocations", [(s["allocations"], s["bytes"]) for s in doc["allocations"]],
          [(6, 330), (3, 3000), (1, 5000)])
    check("basic: temporary", [(s["temporary_allocations"], s["allocations"]) for s in doc["temporary"]],
          [(1, 6), (1, 1)])
    # No such file: the module's name and offset stand for the function.
    check("basic: frame", doc["leaks"][0]["frames"][0],
          {"address": "0x401200", "function": "libfoo.so+0x1200", "short": "libfoo.so+0x1200", "symbol": None,
           "file": None, "line": None, "module": "/nonexistent/libfoo.so", "inlined": False})
    doc, _ = analyze_json(exe, f"{d}/basic.zst", "--top", "1")
    check("basic --top 1: sizes", [len(doc[k]) for k in ("leaks", "peak", "allocations", "temporary")],
          [2, 1, 1, 1])
    rc, out, err = analyze(exe, f"{d}/basic.zst")
    text = out.decode()
    check("basic text: exit", rc, 0)
    for want in ("command: prog 'a b'\n", "pid: 42\n", "calls to allocation functions: 10", "frees: 4\n",
                 "bytes allocated: 8330 bytes (8.1 KiB)\n", "temporary allocations: 2 (20.0% of allocations)\n",
                 "peak heap: 5320 bytes (5.2 KiB) at 0.000 s\n", "leaked: 2220 bytes (2.2 KiB) in 6 allocations\n",
                 "2000 bytes (2.0 KiB) leaked in 2 allocations\n  #0 0x401200 libfoo.so+0x1200 (libfoo.so)\n"
                 "  #1 0x401010 libfoo.so+0x1010\n",  # the module is named once per run of frames
                 "  #0 0x401300 libfoo.so+0x1300 (libfoo.so)\n  ... (deeper frames were not captured)\n"):
        if want not in text:
            failures.append(f"basic text: {want!r} missing from:\n{text}")
    summary = json.loads(subprocess.run([gen, "--summary", f"{d}/basic.zst"], capture_output=True).stdout)
    check("basic: ct_trace_summarize", summary, {
        "allocations": 10, "frees": 4, "bytes_allocated": 8330, "temporary_allocations": 2,
        "peak_heap_bytes": 5320, "leaked_bytes": 2220, "leaked_allocations": 6, "runtime_ns": 25000,
        "complete": True, "warnings": 0, "first_warning": ""})
    check("basic: no notes", doc["notes"], [])


# gen_trace's classes(): per class (bytes, blocks); the levels' sums follow from them.
CLASSES = {"definitely_lost": (224, 3), "indirectly_lost": (1000, 1), "possibly_lost": (40, 4),
           "still_reachable": (100, 1)}
LEVEL_BYTES = {"definite": 224 + 1000, "possible": 224 + 1000 + 40, "reachable": 224 + 1000 + 40 + 100,
               "any": 224 + 1000 + 40 + 100}
PEAK = 224 + 1000 + 40 + 100 + 5000


def test_classes(exe, d):
    path = f"{d}/classes.zst"
    doc, err = analyze_json(exe, path)
    check("classes: stderr", err, "")
    s = doc["summary"]
    for name, (nbytes, blocks) in CLASSES.items():
        check(f"classes: summary {name}", (s[f"{name}_bytes"], s[f"{name}_blocks"]), (nbytes, blocks))
    check("classes: leaked", (s["leaked_bytes"], s["leaked_allocations"], s["peak_heap_bytes"]), (1364, 9, PEAK))
    # Site A (0x401100) has two kinds: one entry each, with its own figures; in memcheck's order, the
    # most severe kind first (definitely, indirectly, possibly lost, still reachable), each by bytes.
    check("classes: leak entries", [(x["kind"], x["bytes"], x["allocations"], addresses(x)) for x in doc["leaks"]],
          [("definite", 224, 3, ["0x401100", "0x401010"]), ("indirect", 1000, 1, ["0x401200", "0x401010"]),
           ("possible", 40, 4, ["0x401300", "0x401010"]), ("reachable", 100, 1, ["0x401100", "0x401010"])])
    doc, _ = analyze_json(exe, f"{d}/basic.zst")
    check("no classes: no class keys, no kinds",
          ([k for k in doc["summary"] if k.endswith(("_lost_bytes", "_reachable_bytes"))],
           [x for x in doc["leaks"] if "kind" in x]), ([], []))
    rc, out, _ = analyze(exe, path)
    text = out.decode()
    for want in ("definitely lost: 224 bytes in 3 blocks\n", "indirectly lost: 1000 bytes in 1 block\n",
                 "possibly lost: 40 bytes in 4 blocks\n", "still reachable: 100 bytes in 1 block\n",
                 "\n224 bytes definitely lost in 3 allocations\n  #0 0x401100",
                 "\n100 bytes still reachable in 1 allocation\n  #0 0x401100",
                 "\n1000 bytes indirectly lost in 1 allocation\n", "\n40 bytes possibly lost in 4 allocations\n"):
        check(f"classes text: has {want!r}", want in text, True)
    rc, out, _ = analyze(exe, "--html", "-", path)
    html = out.decode()
    for want in ('data-kind="definite"', 'data-kind="reachable"', "224 bytes definitely lost in 3 allocations"):
        check(f"classes html: has {want!r}", want in html, True)
    check("classes html: the definitely lost figure is 224",
          re.search(r'id="definitely-lost"[^>]* data-value="224"', html) is not None, True)


def test_check(exe, d):
    path = f"{d}/classes.zst"
    kinds = {"definite": ("definitely lost", "indirectly lost"),
             "possible": ("definitely lost", "indirectly lost", "possibly lost"),
             "reachable": ("definitely lost", "indirectly lost", "possibly lost", "still reachable")}
    kinds["any"] = kinds["reachable"]
    all_kinds = kinds["reachable"]
    for level, limit in LEVEL_BYTES.items():
        for args in ([f"--fail-on={level}", f"--max-leaked={limit - 1}"], ["--fail-on", level]):
            rc, out, err = analyze(exe, *args, path)
            text = out.decode()
            check(f"check {args}: exit", (rc, err), (23, ""))
            check(f"check {args}: verdict", text.split("\n")[0].startswith(f"check failed: {limit} bytes"), True)
            for kind in all_kinds:  # each offending entry, and only those, with its kind
                check(f"check {args}: lists {kind}", f" {kind} in " in text, kind in kinds[level])
            check(f"check {args}: backtraces", "  #0 0x401200 libfoo.so+0x1200" in text, True)
        rc, out, err = analyze(exe, f"--fail-on={level}", f"--max-leaked={limit}", path)
        check(f"check {level} at its {limit} bytes: passes", (rc, err, out.decode().startswith("check passed:")),
              (0, "", True))
    # The levels nest: what passes at one level at its bytes fails at the next.
    for lower, upper in (("definite", "possible"), ("possible", "reachable")):
        rc, _, _ = analyze(exe, f"--fail-on={upper}", f"--max-leaked={LEVEL_BYTES[lower]}", path)
        check(f"check: {upper} counts more than {lower}", rc, 23)
    # --max-leaked alone is --fail-on=definite; sizes in units.
    check("check: --max-leaked alone", [analyze(exe, f"--max-leaked={n}", path)[0] for n in (1223, 1224)], [23, 0])
    check("check: --max-leaked=1KiB", analyze(exe, "--max-leaked=1KiB", path)[0], 23)
    check("check: --max-leaked=1.5KiB", analyze(exe, "--max-leaked=1.5KiB", path)[0], 0)
    # --max-peak bounds the peak only.
    check("check: --max-peak", [analyze(exe, f"--max-peak={n}", path)[0] for n in (PEAK - 1, PEAK)], [23, 0])
    rc, out, _ = analyze(exe, "--max-peak=6KiB", path)
    check("check: --max-peak verdict", (rc, out.decode().split("\n")[0]),
          (23, "check failed: peak heap 6364 bytes (6.2 KiB), more than --max-peak 6144 bytes (6.0 KiB); "
               "the largest sites at the peak:"))
    check("check: both rules, peak broken", analyze(exe, "--max-leaked=1224", "--max-peak=6363", path)[0], 23)
    check("check: both rules hold", analyze(exe, "--max-leaked=1224", "--max-peak=6364", path)[0], 0)
    # With --json on stdout, the verdict goes to stderr and the document stays valid.
    rc, out, err = analyze(exe, "--json", "--fail-on=definite", path)
    check("check --json: exit, verdict on stderr", (rc, err.startswith("check failed: 1224 bytes")), (23, True))
    check("check --json: the document", json.loads(out)["summary"]["definitely_lost_bytes"], 224)
    # Usage errors: one line, exit 2.
    for args in (["--fail-on=maybe"], ["--fail-on"], ["--max-leaked=10XB"], ["--max-leaked=-1"], ["--max-peak=lots"],
                 ["--max-peak="]):
        rc, out, err = analyze(exe, *args, path)
        check(f"check {args}: usage error", (rc, out, err.count("\n"), err.startswith("ctrack-analyze: ")),
              (2, b"", 1, True))
    # A trace without classes: definite and possible refuse it; reachable and any count all leaked bytes.
    basic = f"{d}/basic.zst"
    for args in (["--fail-on=definite"], ["--fail-on=possible"], ["--max-leaked=1MiB"]):
        rc, out, err = analyze(exe, *args, basic)
        check(f"no classes {args}", (rc, out, err.startswith("ctrack-analyze: ") and " has no leak classes: " in err,
                                     err.count("\n")), (1, b"", True, 1))
    for level in ("reachable", "any"):
        rc, out, _ = analyze(exe, f"--fail-on={level}", "--max-leaked=2219", basic)
        check(f"no classes {level}: 2220 leaked bytes count", (rc, "2000 bytes (2.0 KiB) leaked in 2" in out.decode()),
              (23, True))
        check(f"no classes {level} at 2220", analyze(exe, f"--fail-on={level}", "--max-leaked=2220", basic)[0], 0)


def test_notes(exe, gen, d):
    # gen_trace's notes(): its texts, levels and repeats.
    w1 = "dropped 5 events: the stack table is full"
    long_kept = "x" * 1024 + "..."  # 2000 bytes, cut at the reader's bound of 1024
    doc, err = analyze_json(exe, f"{d}/notes.zst")
    check("notes: stderr", err, "")
    check("notes: json", doc["notes"], [
        {"level": "warning", "text": w1, "count": 3},
        {"level": "info", "text": "CTRACK_DEPTH=1000 clamped to 256", "count": 1},
        {"level": "warning", "text": "write error: No space left on device\nretrying", "count": 1},
        {"level": "info", "text": long_kept, "count": 1}])
    check("notes: figures beside them", (doc["summary"]["allocations"], doc["summary"]["leaked_bytes"]), (1, 8))
    rc, out, _ = analyze(exe, f"{d}/notes.zst")
    text = out.decode()
    want = (f"warning: {w1} (3 times)\n"
            "note: CTRACK_DEPTH=1000 clamped to 256\n"
            "warning: write error: No space left on device\\nretrying\n"  # one line: the newline escaped
            f"note: {long_kept}\n")
    check("notes: text report, after the trace line", text.split("\n", 1)[1].startswith(want), True)
    rc, out, _ = analyze(exe, "--html", "-", f"{d}/notes.zst")
    html = out.decode()
    for li in (f'<li class="note warning" data-count="3"><b>warning:</b> {w1} (3 times)</li>',
               '<li class="note info" data-count="1"><b>note:</b> CTRACK_DEPTH=1000 clamped to 256</li>'):
        check(f"notes: html has {li!r}", li in html, True)
    rc, out, _ = analyze(exe, "--pprof", "-", f"{d}/notes.zst")  # the comments: strings of the profile
    check("notes: pprof comment", f"warning: {w1} (3 times)".encode() in gzip.decompress(out), True)
    summary = json.loads(subprocess.run([gen, "--summary", f"{d}/notes.zst"], capture_output=True).stdout)
    check("notes: ct_trace_summarize", (summary["warnings"], summary["first_warning"]), (4, w1))
    # 70 distinct warnings: the first 64 kept, the other 6 counted in one more entry.
    doc, _ = analyze_json(exe, f"{d}/notes_many.zst")
    notes = doc["notes"]
    check("notes_many: kept", [(n["level"], n["text"], n["count"]) for n in notes[:64]],
          [("warning", f"note {i}", 1) for i in range(64)])
    check("notes_many: the rest in one entry", (len(notes), notes[-1]["level"], notes[-1]["count"]),
          (65, "warning", 6))
    summary = json.loads(subprocess.run([gen, "--summary", f"{d}/notes_many.zst"], capture_output=True).stdout)
    check("notes_many: ct_trace_summarize", (summary["warnings"], summary["first_warning"]), (70, "note 0"))


def test_peak_and_ties(exe, d):
    doc, _ = analyze_json(exe, f"{d}/peak.zst")
    s = doc["summary"]
    check("peak: heap", (s["peak_heap_bytes"], s["peak_heap_time_ns"]), (30, 7000))
    check("peak: sites", [(x["bytes"], x["allocations"], addresses(x)) for x in doc["peak"]], [(30, 3, ["0x1000"])])
    check("peak: leaks", [(x["bytes"], x["allocations"]) for x in doc["leaks"]], [(5, 5)])
    doc, _ = analyze_json(exe, f"{d}/ties.zst")
    check("ties: leak order", [(x["bytes"], x["allocations"], addresses(x)) for x in doc["leaks"]],
          [(100, 1, ["0x1000"]), (8, 2, ["0x1020"]), (8, 1, ["0x1010"]), (8, 1, ["0x1030"])])


def test_short_events(exe, d):
    doc, err = analyze_json(exe, f"{d}/short.zst")
    s = doc["summary"]
    # ALLOC 4 bytes, ALLOC 34, TEMP 21, FREE of the 4, ALLOC 6 + TEMPFREE of it, ALLOC 10, 11, 12,
    # each freed by RECENT (age 2, 1, 3).
    check("short: figures", (s["allocations"], s["frees"], s["bytes_allocated"], s["temporary_allocations"],
                             s["leaked_bytes"], s["leaked_allocations"]), (7, 6, 98, 2, 34, 1))
    check("short: RECENT frees the right blocks", [(x["bytes"], x["allocations"]) for x in doc["leaks"]], [(34, 1)])
    rc, out, err = analyze(exe, f"{d}/short_bad.zst")
    check("short: RECENT beyond the ALLOCs read is corrupt: read up to it",
          (rc, err.startswith(f"ctrack-analyze: warning: {d}/short_bad.zst: corrupt trace near byte "),
           "RECENT of age 32, after 6 ALLOC records" in err), (0, True, True))
    rc, out, err = analyze(exe, f"{d}/recent_v1.zst")
    check("short: RECENT in a version 1 file is corrupt: read up to it",
          (rc, "RECENT record in a version 1 file" in err), (0, True))


def test_epochs(exe, d):
    """gen_trace's epochs(): the lanes' records in the order their marks give, RECENT per lane."""
    doc, err = analyze_json(exe, f"{d}/epochs.zst")
    s = doc["summary"]
    check("epochs: figures", (s["allocations"], s["frees"], s["bytes_allocated"], s["leaked_bytes"],
                              s["leaked_allocations"], doc["complete"]), (43, 2, 1510, 410, 41, True))
    check("epochs: the peak in the order given", (s["peak_heap_bytes"], s["peak_heap_time_ns"]), (1110, 5000))
    for name, why in (("epochs_bytes.zst", "EPOCH mark names more of lane 0's records than it holds"),
                      ("epochs_marks.zst", "EPOCH marks of lane 1 cut short"),
                      ("epochs_recent.zst", "RECENT of age 2, after 1 ALLOC records"),
                      ("epochs_v5.zst", "EPOCH record in a version 5 file")):
        rc, out, err = analyze(exe, f"{d}/{name}")
        check(f"{name}: corrupt, read up to it", (rc, why in err, "corrupt trace near byte" in err),
              (0, True, True))


def test_zepochs(exe, d):
    """gen_trace's zepochs(): each lane's parts decoded by a stream of its own (a new frame where a part
    says fresh), then merged as an EPOCH's: epochs()'s figures."""
    doc, err = analyze_json(exe, f"{d}/zepochs.zst")
    s = doc["summary"]
    check("zepochs: figures", (s["allocations"], s["frees"], s["bytes_allocated"], s["leaked_bytes"],
                               s["leaked_allocations"], doc["complete"]), (43, 2, 1510, 410, 41, True))
    check("zepochs: the peak in the order given", (s["peak_heap_bytes"], s["peak_heap_time_ns"]), (1110, 5000))
    for name, why in (("zepochs_fresh.zst", "ZEPOCH lane 1's part is corrupt: "),
                      ("zepochs_cols.zst", "ZEPOCH lane 0's part is corrupt: its column lengths are cut short or too long"),
                      ("zepochs_v6.zst", "ZEPOCH record in a version 6 file"),
                      ("zepochs_marks.zst", "ZEPOCH marks of lane 1 cut short")):
        rc, out, err = analyze(exe, f"{d}/{name}")
        check(f"{name}: corrupt, read up to it", (rc, why in err, "corrupt trace near byte" in err),
              (0, True, True))


def test_argv(exe, d):
    doc, _ = analyze_json(exe, f"{d}/argv.zst")
    check("argv: json", doc["process"]["argv"],
          ["prog", "line1\nline2", "\u00ff\u00fe bad", "tab\there", "quote\"back\\", "caf\u00e9", "\u0001ctl",
           "it's", "\u00ed\u00a0\u0080"])
    check("argv: exe", doc["process"]["exe"], "/bin/pr\u00f8g")
    rc, out, _ = analyze(exe, f"{d}/argv.zst")
    lines = [l for l in out.split(b"\n") if l.startswith(b"command: ")]
    check("argv: text command line", lines,
          [b"command: prog $'line1\\nline2' '\xff\xfe bad' $'tab\\there' 'quote\"back\\' 'caf\xc3\xa9' $'\\x01ctl' "
           b"'it'\\''s' '\xed\xa0\x80'"])


def test_errors(exe, d):
    with open(f"{d}/empty.zst", "wb"):
        pass
    with open(f"{d}/text.txt", "w") as f:
        f.write("hello, this is a text file\n")
    with open(f"{d}/tiny.txt", "w") as f:
        f.write("hi\n")
    cases = [
        ("missing.zst", f"cannot open '{d}/missing.zst': No such file or directory"),
        ("empty.zst", f"'{d}/empty.zst' is empty (the traced process wrote nothing)"),
        ("text.txt", f"'{d}/text.txt' is not a ctrack trace"),
        ("tiny.txt", f"'{d}/tiny.txt' is not a ctrack trace"),
        ("other.zst", f"'{d}/other.zst' is not a ctrack trace"),
        ("newer.zst", f"'{d}/newer.zst' has trace format version {VERSION + 1} (readable from version "
                      f"{VERSION + 1} on); this ctrack-analyze reads version {VERSION}: upgrade ctrack"),
    ]
    for name, msg in cases:
        rc, out, err = analyze(exe, "--json", f"{d}/{name}")
        check(f"{name}: error", (rc, out, err), (1, b"", f"ctrack-analyze: {msg}\n"))
    # A corrupt record reads as damage: what came before it, and where (the file's one zstd block,
    # after its 6-byte frame header) and what, in a warning and in the JSON "damaged".
    for name, why in (("corrupt.zst", "ALLOC refers to undefined alloc info 5, in the record at byte 27 of the "
                                      "decompressed trace"),
                      ("badtag.zst", "invalid record tag 0x00, in the record at byte 22 of the decompressed trace")):
        doc, err = analyze_json(exe, f"{d}/{name}")
        check(f"{name}: warning", err, damage_warning(f"{d}/{name}", 6, why))
        check(f"{name}: incomplete, damaged", (doc["complete"], doc["damaged"]),
              (False, {"near_byte": 6, "why": why}))
    check("usage: no trace", analyze(exe)[0], 2)
    check("usage: bad --top", analyze(exe, "--top", "x", f"{d}/basic.zst")[0], 2)
    check("usage: unknown option", analyze(exe, "--frobnicate", f"{d}/basic.zst")[0], 2)


def test_exact(exe, d):
    """gen_trace's exact(): an exact ip is looked up at itself, a return address at its call."""
    doc, err = analyze_json(exe, f"{d}/exact.zst")
    check("exact: stderr", err, "")
    frames = [[(f["address"], f["function"], f["module"]) for f in s["frames"]] for s in doc["leaks"]]
    check("exact: frames", frames,
          [[("0x401000", "??", None), ("0x401010", "libfoo.so+0x1010", "/nonexistent/libfoo.so")],
           [("0x401000", "libfoo.so+0x1000", "/nonexistent/libfoo.so"),
            ("0x401010", "libfoo.so+0x1010", "/nonexistent/libfoo.so")]])
    doc, err = analyze_json(exe, f"{d}/exact_first.zst")
    check("exact_first: damaged", err, damage_warning(f"{d}/exact_first.zst", 6,
                                                      "EXACT record refers to an undefined or reused id, in "
                                                      "the record at byte 20 of the decompressed trace"))


def test_invalid(exe, d):
    """gen_trace's invalid(): invalid frees and the fatal signal, in JSON and text; a bad one."""
    doc, err = analyze_json(exe, f"{d}/invalid.zst")
    check("invalid: stderr", err, "")
    check("invalid: summary", (doc["summary"]["invalid_frees"], doc["summary"]["unmatched_frees"]), (3, 1))

    def at(stack):
        return stack and ([f["address"] for f in stack["frames"]], stack["truncated"])

    got = [(v["kind"], v["call"], v["count"], at(v), at(v["freed"]),
            v["block"] and (v["block"]["size"], at(v["block"]["allocated"]))) for v in doc["invalid_frees"]]
    check("invalid: entries", got,
          [("double_free", "free", 2, (["0x401100"], True), (["0x401100"], True),
            (32, (["0x401100", "0x401010"], False))),
           ("static", "free", 1, (["0x401200", "0x401010"], False), None, None)])
    check("invalid: fatal signal", (doc["fatal_signal"]["signal"], doc["fatal_signal"]["number"],
                                    at(doc["fatal_signal"]["taken_at"])),
          ("SIGSEGV", 11, (["0x401300", "0x401200", "0x401010"], False)))
    rc, out, err = analyze(exe, f"{d}/invalid.zst")
    text = out.decode()
    check("invalid: text", (rc, "invalid frees: 3 (INVALID FREES below)" in text,
                            "frees of blocks allocated before tracing: 1" in text,
                            "invalid free() of a block already freed (a double free): 2 times" in text,
                            "FATAL SIGNAL: SIGSEGV (Segmentation fault), taken at:" in text), (0, True, True, True, True))
    rc, out, err = analyze(exe, "--fail-on=reachable", f"{d}/invalid.zst")
    check("invalid: a check fails on them", (rc, out.decode().startswith("check failed: 3 invalid frees")),
          (23, True))
    rc, out, err = analyze(exe, "--json", f"{d}/invalid_bad.zst")
    check("invalid_bad: corrupt at its INVALID record",
          "INVALID record refers to an undefined or reused id" in err and "20" in err, True)
    doc, err = analyze_json(exe, f"{d}/basic.zst")
    check("basic: no invalid frees, no fatal signal", (doc["invalid_frees"], doc["fatal_signal"]), ([], None))


def test_sampled(exe, d):
    """gen_trace's sampled(): the figures weighted by 1 / p(size), p(s) = 1 - exp(-s / rate) (format.h),
    in 1/65536ths, each record rounded up or down by analyzer/sampling.h's hash of (info, kind, record);
    the note in every report; a check refused; three bad ones."""
    mask = (1 << 64) - 1

    def step(key, j, size, rate=4096):  # what the j-th record of stream key counts (sampling.h)
        w = round(65536 / -math.expm1(-size / rate))
        x = (key * 0x9E3779B97F4A7C15 + j * 0xD1B54A32D192ED03) & mask
        x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & mask
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & mask
        x ^= x >> 31
        return w // 65536 + (x % 65536 < w % 65536)
    # info 0 (stream 0: ALLOC and FREE), two ALLOCs and a FREE; info 1's TEMP (stream 2 * 1 + 1)
    big1 = step(0, 0, 4096)
    big2, small1 = big1 + step(0, 1, 4096), step(3, 0, 100)
    doc, err = analyze_json(exe, f"{d}/sampled.zst")
    check("sampled: stderr", err, "")
    check("sampled: its rate and seed", (doc["sampling"]["rate"], doc["sampling"]["seed"]), (4096, 7))
    s = doc["summary"]
    check("sampled: weighted totals",
          (s["allocations"], s["frees"], s["bytes_allocated"], s["temporary_allocations"]),
          (big2 + small1, big1 + small1, big2 * 4096 + small1 * 100, small1))
    check("sampled: live blocks", (s["leaked_allocations"], s["leaked_bytes"]),
          (big2 - big1, (big2 - big1) * 4096))
    rc, out, err = analyze(exe, f"{d}/sampled.zst")
    check("sampled: the text report says so",
          "\nsampled: one allocation per 4096 bytes on average; figures are estimates\n" in out.decode(),
          True)
    rc, out, err = analyze(exe, "--fail-on=any", f"{d}/sampled.zst")
    check("sampled: a check is refused", (rc, out, "is sampled" in err), (2, b"", True))
    corrupt_at(exe, d, "SAMPLING",
               (("sampling_zero", 20, "SAMPLING record's rate 0 is not from 1 to 67108864 bytes"),
                ("sampling_late", 27, "SAMPLING record comes after allocations, or says another rate"),
                ("sampling_cut", 20, "SAMPLING record is shorter than its fields")))


def corrupt_at(exe, d, tag, cases):
    """Each (name, offset, why) of cases: name.zst read as corrupt at its `tag` record at that offset."""
    for name, near, why in cases:
        rc, out, err = analyze(exe, "--json", f"{d}/{name}.zst")
        check(f"{name}: corrupt at its {tag} record", (rc, f"({why}, in the record at byte {near} " in err),
              (0, True))


def test_attached(exe, d):
    """gen_trace's attached(): a trace that starts at an attach says so in every report; four bad ones."""
    doc, err = analyze_json(exe, f"{d}/attached.zst")
    check("attached: stderr", err, "")
    check("attached: its time and number", (doc["attach"]["unix_ns"], doc["attach"]["number"]),
          (1700000000 * 10**9, 2))
    s = doc["summary"]
    check("attached: figures, and the frees of blocks allocated before it",
          (s["allocations"], s["frees"], s["bytes_allocated"], s["unmatched_frees"], s["invalid_frees"]),
          (2, 1, 128, 2, 0))
    note = "trace starts at an attach at 2023-11-14 22:13:20 UTC"
    check("attached: the JSON note", any(n["text"].startswith(note) for n in doc["notes"]), True)
    rc, out, err = analyze(exe, f"{d}/attached.zst")
    check("attached: the text report says so", note in out.decode(), True)
    misplaced = "ATTACH record comes twice, after allocations, or with attach number 0"
    corrupt_at(exe, d, "ATTACH", (("attach_twice", 32, misplaced), ("attach_late", 27, misplaced),
                                  ("attach_zero", 20, misplaced),
                                  ("attach_cut", 20, "ATTACH record is shorter than its fields")))


def test_aggregated(exe, d):
    """gen_trace's aggregated(): two snapshots; the figures their records stand for (format.h)."""
    doc, err = analyze_json(exe, f"{d}/aggregated.zst")
    check("aggregated: stderr", err, "")
    check("aggregated: complete, its interval", (doc["complete"], doc["aggregated"]["interval_ns"]),
          (True, 1000000000))
    s = doc["summary"]
    check("aggregated: summary", {k: s[k] for k in (
        "allocations", "frees", "bytes_allocated", "temporary_allocations", "peak_heap_bytes", "peak_heap_time_ns",
        "peak_rss_bytes", "leaked_bytes", "leaked_allocations", "runtime_ns")},
          {"allocations": 7, "frees": 4, "bytes_allocated": 2500, "temporary_allocations": 2, "peak_heap_bytes": 2300,
           "peak_heap_time_ns": 800000, "peak_rss_bytes": 8192, "leaked_bytes": 1200, "leaked_allocations": 3,
           "runtime_ns": 3000000})
    check("aggregated: the peak's sites (info 0 listed, info 1 as live after the snapshot)",
          [(x["bytes"], x["allocations"]) for x in doc["peak"]], [(2000, 2), (300, 3)])
    check("aggregated: leaks", [(x["bytes"], x["allocations"]) for x in doc["leaks"]], [(1000, 1), (200, 2)])
    rc, out, err = analyze(exe, f"{d}/aggregated.zst")
    check("aggregated: the text report says so",
          "\naggregated: memory over time every 1 s (snapshots of the figures, not every event)\n" in out.decode(),
          True)
    # A bad second snapshot changes nothing: the figures are the first one's, with a warning.
    first = (7, 3, 2500, 2300, 2200)
    for name, why in (("agg_undefined", "AGG_SNAPSHOT names undefined alloc info 9"),
                      ("agg_overfree", "AGG_SNAPSHOT frees more blocks than were live of alloc info 1"),
                      ("agg_unordered", "AGG_SNAPSHOT lists its alloc infos out of order, near info 0"),
                      ("agg_lowpeak", "AGG_SNAPSHOT gives a peak below the last one, in bytes: 2300"),
                      ("agg_none", "AGG_SNAPSHOT record in a trace without AGGREGATE")):
        rc, out, err = analyze(exe, "--json", f"{d}/{name}.zst")
        check(f"{name}: a one-line warning naming it", (rc, f"({why}, in the record at byte " in err,
                                                       err.count("\n")), (0, True, 1))
        if name != "agg_none":
            s = json.loads(out)["summary"]
            check(f"{name}: the first snapshot's figures", (s["allocations"], s["frees"], s["bytes_allocated"],
                                                          s["peak_heap_bytes"], s["leaked_bytes"]), first)
    doc, err = analyze_json(exe, f"{d}/agg_cut.zst")
    check("agg_cut: warning", err, warning(f"{d}/agg_cut.zst"))
    s = doc["summary"]
    check("agg_cut: the figures up to the last whole snapshot",
          (doc["complete"], s["allocations"], s["frees"], s["bytes_allocated"], s["peak_heap_bytes"], s["leaked_bytes"]),
          (False,) + first)


def damage_warning(path, near, why):
    return (f"ctrack-analyze: warning: {path}: corrupt trace near byte {near} ({why}); figures cover what "
            "was read before it\n")


def warning(path):
    return (f"ctrack-analyze: warning: {path} is truncated (the process was killed?); "
            "figures cover what was recorded\n")


def test_truncated(exe, d):
    doc, err = analyze_json(exe, f"{d}/truncated.zst")
    check("truncated: warning", err, warning(f"{d}/truncated.zst"))
    check("truncated: complete", doc["complete"], False)
    s = doc["summary"]
    check("truncated: figures up to the cut",
          (s["allocations"], s["frees"], s["bytes_allocated"], s["leaked_bytes"], s["runtime_ns"]),
          (10, 1, 640, 576, 1000000))
    doc, err = analyze_json(exe, f"{d}/noend.zst")
    check("noend: warning", err, warning(f"{d}/noend.zst"))
    check("noend: figures", (doc["complete"], doc["summary"]["leaked_bytes"], doc["summary"]["runtime_ns"]),
          (False, 8, 3000))
    doc, err = analyze_json(exe, f"{d}/big.zst")
    check("big record", (err, len(doc["process"]["argv"][1])), ("", 3 << 20))


def test_cuts(exe, d):
    """A trace cut anywhere after its header reads as truncated, with a warning, never as complete --
    also when only its last bytes are gone, which hold no record (the frame's checksum, or the empty
    last block) -- and has every figure up to the cut. The flush points and their figures come from
    gen_trace's cuts() in NAME.json."""
    keys = ("allocations", "frees", "bytes_allocated", "leaked_bytes", "runtime_ns")
    for name in ("cuts.zst", "cuts_nocheck.zst"):
        with open(f"{d}/{name}", "rb") as f:
            data = f.read()
        with open(f"{d}/{name}.json") as f:
            points = json.load(f)
        doc, err = analyze_json(exe, f"{d}/{name}")
        check(f"{name}: whole", (doc["complete"], err), (True, ""))
        cuts = [(f"without its last {k} bytes", len(data) - k) for k in (1, 2, 4, 8)]
        cuts += [(f"at flush {i}", p["offset"]) for i, p in enumerate(points)]
        cuts += [(f"between flushes {i} and {i + 1}", (p["offset"] + q["offset"]) // 2)
                 for i, (p, q) in enumerate(zip(points, points[1:]))]
        cuts += [(f"{k} bytes after flush {i}", p["offset"] + k) for i, p in enumerate(points[:-1]) for k in (1, 4)]
        for label, n in cuts:
            label = f"{name} cut {label} ({n} of {len(data)} bytes)"
            path = f"{d}/cut.zst"
            with open(path, "wb") as f:
                f.write(data[:n])
            doc, err = analyze_json(exe, path)
            check(f"{label}: warning", err, warning(path))
            check(f"{label}: complete", doc["complete"], False)
            # Every record up to the last flush before the cut is there; nothing after the next.
            before = [p for p in points if p["offset"] <= n][-1]
            after = ([p for p in points if p["offset"] > n] or [before])[0]
            s = doc["summary"]
            for k in ("allocations", "frees", "bytes_allocated"):
                check(f"{label}: {k} {s[k]} within flush {points.index(before)}'s {before[k]} and the next's "
                      f"{after[k]}", before[k] <= s[k] <= after[k], True)
            if n == before["offset"]:
                check(f"{label}: figures", {k: s[k] for k in keys}, {k: before[k] for k in keys})


def measured(argv, timeout=60):
    """Runs argv; (exit status or None after the timeout, stderr, CPU seconds, peak RSS in MiB). CPU time,
    not wall time: the suite runs two tests at a time on a machine that may be busy."""
    with tempfile.TemporaryFile() as err:
        start = time.monotonic()
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            dt = time.monotonic() - start
            if pid or dt > timeout:
                break
            time.sleep(0.02)
        if not pid:
            p.kill()
            _, status, usage = os.wait4(p.pid, 0)
        p.returncode = 0  # reaped here: keep Popen from waiting for it
        err.seek(0)
        rc = os.waitstatus_to_exitcode(status) if pid else None
        return rc, err.read().decode("utf-8", "replace"), usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def test_bombs(exe, gen, d):
    """Small files that ask for much (gen_trace --bombs): each read up to the bound, as damage (one
    warning line naming the bound), in bounded time and memory. Before the bounds, bomb_info.zst (50
    million INFO records in ~13 KiB) took 17 s and 2.7 GB, the CLASSES and lookup bombs minutes. The
    sanitizer build's analyzer takes about 8 times the CPU (bomb_classes: 1.2 s plain, 10 s sanitized)."""
    limit = 40 if os.environ.get("CTRACK_TEST_SANITIZED") == "1" else 10
    subprocess.run([gen, "--bombs", d], check=True)
    cases = {
        "bomb_info.zst": "stack nodes and alloc infos from",
        "bomb_modules.zst": "modules from",
        "bomb_lookups.zst": "ask for more work than",
        "bomb_classes.zst": "ask for more work than",
    }
    for name, why in cases.items():
        path = f"{d}/{name}"
        size = os.path.getsize(path)
        rc, err, dt, rss = measured([exe, "--json", path])
        lines = err.splitlines()
        check(f"{name} ({size} bytes): exit 0", rc, 0)
        check(f"{name}: one line naming the bound", len(lines) == 1 and
              lines[0].startswith(f"ctrack-analyze: warning: {path}: corrupt trace near byte ") and
              why in lines[0], True)
        check(f"{name}: {dt:.2f} s of CPU, under {limit} s", dt < limit, True)
        check(f"{name}: peak RSS {rss:.0f} MiB, under 256 MiB", rss < 256, True)
        print(f"{name}: {size} bytes, {dt:.2f} s of CPU, {rss:.0f} MiB: {err.strip()}")


def bench(exe, gen, d, events):
    path = f"{d}/bench.zst"
    want = json.loads(subprocess.run([gen, "--bench", str(events), path], capture_output=True, check=True).stdout)
    t = time.monotonic()
    summary = json.loads(subprocess.run([gen, "--summary", path], capture_output=True, check=True).stdout)
    dt = time.monotonic() - t
    check("bench: ct_trace_summarize", {k: summary[k] for k in want}, want)
    t = time.monotonic()
    doc, _ = analyze_json(exe, path)
    dt_json = time.monotonic() - t
    check("bench: ctrack-analyze --json", {k: doc["summary"][k] for k in want}, want)
    print(f"reader: {events} events, {os.path.getsize(path)} bytes compressed: reader+model {dt:.2f} s "
          f"({events / dt / 1e6:.1f} M events/s); ctrack-analyze --json {dt_json:.2f} s")


def main():
    args = sys.argv[1:]
    events = 0
    if args[0] == "--bench":
        events, args = int(args[1]), args[2:]
    gen, exe = args
    with tempfile.TemporaryDirectory(prefix="ctrack-reader-") as d:
        if events:
            bench(exe, gen, d, events)
        else:
            subprocess.run([gen, d], check=True)
            test_basic(exe, gen, d)
            test_classes(exe, d)
            test_check(exe, d)
            test_notes(exe, gen, d)
            test_peak_and_ties(exe, d)
            test_short_events(exe, d)
            test_epochs(exe, d)
            test_zepochs(exe, d)
            test_argv(exe, d)
            test_errors(exe, d)
            test_exact(exe, d)
            test_invalid(exe, d)
            test_sampled(exe, d)
            test_attached(exe, d)
            test_aggregated(exe, d)
            test_truncated(exe, d)
            test_cuts(exe, d)
            test_bombs(exe, gen, d)
            bench(exe, gen, d, 1000000)  # records straddle the reader's window many times
    for f in failures:
        print("FAIL:", f)
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
