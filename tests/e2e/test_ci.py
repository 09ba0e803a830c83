# SPDX-License-Identifier: MIT
# --junit, --sarif, --github (tests/progs/ci_leaks.c): each format parsed (xml.etree, json, a regex)
# and checked against the sites, figures and LINE markers ci_leaks.c states; the same source copied
# under a name full of characters the formats must escape; and the program run with "none", which
# leaks nothing. Then what the check fails on besides leaks, and what the shim could not record:
# tests/progs/invalid_free.c's double free (built here; its LINE markers) in each format; ci_leaks'
# trace with its last byte cut, its frame checksum damaged, and killed.c (built here) killed while it
# sleeps, each an incomplete or damaged trace in each format; a CTRACK_DEPTH the shim refuses (set by
# hand with LD_PRELOAD) as a warning in each format.
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.parse
import xml.etree.ElementTree as ET

import ctrack_test as ct

env = ct.Env(sys.argv)
prog, src = env.progs[0], env.progs[1]
LINES = ct.line_markers(src)
SRC = os.path.basename(src)

# From ci_leaks.c's comment, largest first: (function, LINE of the allocation, LINE of main's call,
# message). Every block is definitely lost (main keeps no pointer): memcheck's class, in each format.
KIND = "definite"
SITES = [
    ("make_buffer", "BUFFER", "MAIN_BUFFER", "300 bytes leaked in 3 blocks (%s)" % KIND),
    ("make_table", "TABLE", None, "128 bytes leaked in 1 block (%s)" % KIND),
    ("make_name", "NAME", None, "24 bytes leaked in 1 block (%s)" % KIND),
]


def analyze(trace, *opts, cwd=None):
    r = subprocess.run([env.analyze, *opts, trace], capture_output=True, cwd=cwd, timeout=120)
    env.check("ctrack-analyze %s exits 0" % " ".join(opts), r.returncode == 0, r.stderr[-500:])
    return r.stdout.decode("utf-8", "surrogateescape")


def same_file(path, want):
    """A path as the formats show it (relative to the compile or current directory, or absolute)
    names the file `want` (a basename, or a path relative to the current directory)."""
    return path == want or (os.path.basename(path) == want and os.sep not in want)


# ---- JUnit ----

def junit(name, text, sites, file):
    try:
        root = ET.fromstring(text.encode("utf-8", "surrogateescape"))
    except ET.ParseError as e:
        return env.check(name + ": JUnit is well-formed XML", False, str(e))
    env.eq(name + ": root testsuites", root.tag, "testsuites")
    suites = root.findall("testsuite")
    env.eq(name + ": one testsuite", len(suites), 1)
    if not suites:
        return
    s = suites[0]
    cases = s.findall("testcase")
    tests = max(len(sites), 1)
    env.eq(name + ": testsuite tests, failures", (s.get("tests"), s.get("failures")),
           (str(tests), str(len(sites))))
    env.eq(name + ": testsuites tests, failures", (root.get("tests"), root.get("failures")),
           (str(tests), str(len(sites))))
    env.eq(name + ": testcases", len(cases), tests)
    env.eq(name + ": no errors, no system-err: the trace is whole",
           (root.get("errors"), s.get("errors"), s.find("system-err")), ("0", "0", None))
    env.check(name + ": classname ctrack.leaks", all(c.get("classname") == "ctrack.leaks" for c in cases))
    if not sites:
        env.eq(name + ": the one testcase passes", [list(c) for c in cases], [[]])
        return
    for c, (fn, mark, main_mark, msg) in zip(cases, sites):
        want = "%s at %s:%d" % (fn, file, LINES[mark])
        got = c.get("name") or ""
        m = re.fullmatch(r"(\w+) at (.*):(\d+)", got)
        env.check(name + ": testcase name " + want,
                  m and m.group(1) == fn and same_file(m.group(2), file) and int(m.group(3)) == LINES[mark],
                  "got %r" % got)
        f = c.find("failure")
        if not env.check(name + ": %s fails" % fn, f is not None):
            continue
        env.eq(name + ": %s failure message" % fn, f.get("message"), msg)
        env.eq(name + ": %s failure type" % fn, f.get("type"), "leak." + KIND)
        body = (f.text or "").strip().splitlines()
        env.check(name + ": %s body: #0 %s at ...:%d" % (fn, fn, LINES[mark]),
                  body and re.fullmatch(r"#0 %s at .*:%d" % (fn, LINES[mark]), body[0]), repr(body))
        if main_mark:
            env.check(name + ": %s body: #1 main at ...:%d" % (fn, LINES[main_mark]),
                      len(body) > 1 and re.fullmatch(r"#1 main at .*:%d" % LINES[main_mark], body[1]),
                      repr(body))


# ---- SARIF ----

def sarif_errors(doc):
    """What SARIF 2.1.0's schema requires of the parts ctrack writes ([] when valid)."""
    errs = []

    def need(ok, what):
        if not ok:
            errs.append(what)

    def message(m, where):
        need(isinstance(m, dict) and (isinstance(m.get("text"), str) or isinstance(m.get("id"), str)),
             where + ".message: text or id")

    def location(loc, where):
        need(isinstance(loc, dict), where + ": an object")
        if not isinstance(loc, dict):
            return
        pl = loc.get("physicalLocation")
        if pl is not None:
            al = pl.get("artifactLocation", {})
            need(isinstance(al.get("uri"), str), where + ".physicalLocation.artifactLocation.uri")
            reg = pl.get("region")
            if reg is not None:
                need(isinstance(reg.get("startLine"), int) and reg["startLine"] >= 1,
                     where + ".region.startLine >= 1")
        if "message" in loc:
            message(loc["message"], where)

    need(isinstance(doc, dict), "$: an object")
    if not isinstance(doc, dict):
        return errs
    need(doc.get("version") == "2.1.0", "$.version: 2.1.0")
    runs = doc.get("runs")
    need(isinstance(runs, list), "$.runs: an array")
    for i, run in enumerate(runs if isinstance(runs, list) else []):
        w = "$.runs[%d]" % i
        driver = run.get("tool", {}).get("driver", {})
        need(isinstance(driver.get("name"), str), w + ".tool.driver.name")
        for k, rule in enumerate(driver.get("rules", [])):
            need(isinstance(rule.get("id"), str), w + ".rules[%d].id" % k)
        for k, base in (run.get("originalUriBaseIds") or {}).items():
            need(isinstance(base.get("uri"), str) and base["uri"].endswith("/"),
                 w + ".originalUriBaseIds.%s.uri ends with /" % k)
        for k, inv in enumerate(run.get("invocations", [])):
            iw = w + ".invocations[%d]" % k
            need(isinstance(inv.get("executionSuccessful"), bool), iw + ".executionSuccessful: a boolean")
            for n, note in enumerate(inv.get("toolExecutionNotifications", [])):
                message(note.get("message"), iw + ".toolExecutionNotifications[%d]" % n)
                need(note.get("level", "warning") in ("none", "note", "warning", "error"),
                     iw + ".toolExecutionNotifications[%d].level" % n)
        results = run.get("results")
        need(isinstance(results, list), w + ".results: an array")
        for j, res in enumerate(results if isinstance(results, list) else []):
            rw = "%s.results[%d]" % (w, j)
            message(res.get("message"), rw)
            need(res.get("level", "warning") in ("none", "note", "warning", "error"), rw + ".level")
            need(isinstance(res.get("properties", {}), dict), rw + ".properties: an object")
            for k, loc in enumerate(res.get("locations", [])):
                location(loc, rw + ".locations[%d]" % k)
            for k, cf in enumerate(res.get("codeFlows", [])):
                tfs = cf.get("threadFlows")
                need(isinstance(tfs, list) and tfs, rw + ".codeFlows[%d].threadFlows" % k)
                for tf in tfs or []:
                    locs = tf.get("locations")
                    need(isinstance(locs, list) and locs, rw + ".threadFlows[].locations")
                    for tl in locs or []:
                        location(tl.get("location"), rw + ".threadFlows[].locations[]")
            for k, st in enumerate(res.get("stacks", [])):
                need(isinstance(st.get("frames"), list), rw + ".stacks[%d].frames" % k)
                if "message" in st:
                    message(st["message"], rw + ".stacks[%d]" % k)
                for fr in st.get("frames") or []:
                    location(fr.get("location"), rw + ".stacks[%d].frames[]" % k)
    return errs


def uri_path(al, run):
    """The path an artifactLocation names: relative to its uriBaseId, or a file:// URI's path."""
    uri = al.get("uri", "")
    if uri.startswith("file://"):
        return urllib.parse.unquote(uri[len("file://"):])
    return urllib.parse.unquote(uri)


def sarif(name, text, sites, file, cwd=None):
    try:
        doc = json.loads(text)
    except ValueError as e:
        return env.check(name + ": SARIF is JSON", False, str(e))
    env.eq(name + ": valid SARIF 2.1.0 (required fields)", sarif_errors(doc), [])
    for what, change in [("without version", lambda d: d.pop("version")),
                         ("without a driver name", lambda d: d["runs"][0]["tool"]["driver"].pop("name")),
                         ("with a result without message",
                          lambda d: d["runs"][0]["results"] and d["runs"][0]["results"][0].pop("message"))]:
        bad = json.loads(text)
        change(bad)
        if what.endswith("message") and not sites:
            continue
        env.check(name + ": the check rejects a document " + what, sarif_errors(bad), "accepted")
    run = (doc.get("runs") or [{}])[0]
    env.eq(name + ": driver ctrack", run.get("tool", {}).get("driver", {}).get("name"), "ctrack")
    env.eq(name + ": a whole trace, no notification", run.get("invocations"), [{"executionSuccessful": True}])
    results = run.get("results", [])
    env.eq(name + ": one result per leak site", len(results), len(sites))
    for res, (fn, mark, main_mark, msg) in zip(results, sites):
        env.eq(name + ": %s ruleId, level" % fn, (res.get("ruleId"), res.get("level")),
               ("ctrack/leak/" + KIND, "error"))
        env.eq(name + ": %s message" % fn, res.get("message", {}).get("text"), msg)
        pl = (res.get("locations") or [{}])[0].get("physicalLocation", {})
        path = uri_path(pl.get("artifactLocation", {}), run)
        env.check(name + ": %s located at %s:%d" % (fn, file, LINES[mark]),
                  same_file(path, file) and pl.get("region", {}).get("startLine") == LINES[mark],
                  repr(pl))
        if cwd:
            env.eq(name + ": %s uri relative to SRCROOT" % fn,
                   pl.get("artifactLocation", {}).get("uriBaseId"), "SRCROOT")
        flow = res.get("codeFlows", [{}])[0].get("threadFlows", [{}])[0].get("locations", [])
        lines = [tl["location"].get("physicalLocation", {}).get("region", {}).get("startLine")
                 for tl in flow]
        want = ([LINES[main_mark]] if main_mark else []) + [LINES[mark]]
        env.check(name + ": %s code flow ends main -> %s" % (fn, fn), lines[-len(want):] == want,
                  repr(lines))
        frames = res.get("stacks", [{}])[0].get("frames", [])
        env.eq(name + ": %s stack frame 0" % fn,
               frames and frames[0]["location"]["logicalLocations"][0]["name"], fn)
    if cwd:
        base = run.get("originalUriBaseIds", {}).get("SRCROOT", {}).get("uri", "")
        env.eq(name + ": SRCROOT is the current directory",
               urllib.parse.unquote(base[len("file://"):]), os.path.realpath(cwd) + "/")


# ---- GitHub ----

GH = re.compile(r"::error file=([^,]*),line=(\d+),title=([^:]*)::(.*)")


def gh_decode(s):
    return re.sub(r"%([0-9A-F]{2})", lambda m: chr(int(m.group(1), 16)), s)


def github(name, text, sites, file):
    lines = text.splitlines()
    env.eq(name + ": one ::error line per leak site", len(lines), len(sites))
    for line, (fn, mark, main_mark, msg) in zip(lines, sites):
        m = GH.fullmatch(line)
        if not env.check(name + ": %s: a workflow command" % fn, m, repr(line)):
            continue
        path, title, message = gh_decode(m.group(1)), gh_decode(m.group(3)), gh_decode(m.group(4))
        env.check(name + ": %s file=%s line=%d" % (fn, file, LINES[mark]),
                  same_file(path, file) and int(m.group(2)) == LINES[mark], repr(line))
        env.eq(name + ": %s title" % fn, title, "ctrack: memory leak (%s)" % KIND)
        body = message.split("\n")
        env.eq(name + ": %s message's first line" % fn, body[0], msg)
        env.check(name + ": %s message: the backtrace" % fn,
                  len(body) > 1 and body[1].startswith("#0 %s at " % fn), repr(body))


# ---- the leaking program ----

trace = env.trace("leaks", [prog])
d = os.path.dirname(trace)
junit("leaks", analyze(trace, "--junit", "-"), SITES, SRC)
sarif("leaks", analyze(trace, "--sarif", "-"), SITES, SRC)
github("leaks", analyze(trace, "--github"), SITES, SRC)
# all three at once, into files
out = analyze(trace, "--junit", os.path.join(d, "leaks.xml"), "--sarif", os.path.join(d, "leaks.sarif"),
              "--github")
github("files", out, SITES, SRC)
with open(os.path.join(d, "leaks.xml"), encoding="utf-8", errors="surrogateescape") as f:
    junit("files", f.read(), SITES, SRC)
with open(os.path.join(d, "leaks.sarif"), encoding="utf-8", errors="surrogateescape") as f:
    sarif("files", f.read(), SITES, SRC)

# ---- a source file named with characters every format must escape ----

WEIRD = "leak &<'\">%,:\x01.c"
wd = env.fresh_dir("weird")
wsrc = os.path.join(wd, WEIRD)
shutil.copy(src, wsrc)
wprog = env.cc(wsrc, os.path.join(wd, "weird"), "-fno-optimize-sibling-calls", "-fno-builtin")
if wprog:
    wtrace = env.trace("weird-trace", [wprog])
    # XML has no control characters: the one in the name is shown as '?'
    junit("escaping", analyze(wtrace, "--junit", "-", cwd=wd), SITES, WEIRD.replace("\x01", "?"))
    sarif("escaping", analyze(wtrace, "--sarif", "-", cwd=wd), SITES, WEIRD, cwd=wd)
    gh = analyze(wtrace, "--github", cwd=wd)
    github("escaping", gh, SITES, WEIRD)
    env.check("escaping: %, comma and colon encoded in file=", "file=leak &<'\">%25%2C%3A" in gh, gh[:200])

# ---- no leaks ----

trace = env.trace("none", [prog, "none"])
junit("no leaks", analyze(trace, "--junit", "-"), [], SRC)
sarif("no leaks", analyze(trace, "--sarif", "-"), [], SRC)
github("no leaks", analyze(trace, "--github"), [], SRC)

# ---- what else fails a check (invalid frees, a cut or damaged trace), and the shim's warnings ----

def parse_junit(name, text):
    try:
        return ET.fromstring(text.encode("utf-8", "surrogateescape"))
    except ET.ParseError as e:
        env.check(name + ": JUnit is well-formed XML", False, str(e))
        return None


def parse_sarif(name, text):
    """The run of a SARIF document, checked against the schema's requirements; None if no JSON."""
    try:
        doc = json.loads(text)
    except ValueError as e:
        env.check(name + ": SARIF is JSON", False, str(e))
        return None
    env.eq(name + ": valid SARIF 2.1.0 (required fields)", sarif_errors(doc), [])
    return (doc.get("runs") or [{}])[0]


GH_ANY = re.compile(r"::(error|warning) (?:file=([^,]*),line=(\d+),)?title=([^:]*)::(.*)")


def gh_commands(name, text):
    """[(command, file, line, title, message)] of every line, each a workflow command."""
    out = []
    for line in text.splitlines():
        m = GH_ANY.fullmatch(line)
        if env.check(name + ": a workflow command", m, repr(line)):
            out.append((m.group(1), gh_decode(m.group(2) or ""), int(m.group(3) or 0),
                        gh_decode(m.group(4)), gh_decode(m.group(5))))
    return out


def totals_agree(name, root, trace_errors):
    """JUnit's counts: failures = failing testcases, errors = erring ones, in both elements."""
    s = root.find("testsuite")
    cases = s.findall("testcase") if s is not None else []
    failing = sum(1 for c in cases if c.find("failure") is not None)
    erring = sum(1 for c in cases if c.find("error") is not None)
    env.eq(name + ": errors", erring, trace_errors)
    for el in (root, s):
        env.eq(name + ": %s tests, failures, errors count the testcases" % el.tag,
               (el.get("tests"), el.get("failures"), el.get("errors")),
               (str(len(cases)), str(failing), str(erring)))
    return cases


def frame_line(text, fn, file, line):
    """A backtrace line "#0 fn at PATH:line" whose PATH names file."""
    m = re.fullmatch(r"#0 (\w+) at (.*):(\d+)", text or "")
    return bool(m) and m.group(1) == fn and same_file(m.group(2), file) and int(m.group(3)) == line


# invalid_free.c's "double": malloc(32) at LINE double_alloc, free at double_first, free again at
# double_free: one double free, once (glibc aborts in it), of a 32-byte block.
IF_SRC = os.path.join(os.path.dirname(src), "invalid_free.c")
IF_FILE = os.path.basename(IF_SRC)
IF = ct.line_markers(IF_SRC)
IF_MSG = "invalid free() of a block already freed (a double free): 1 time"
IF_SECTIONS = [("invalid free", "double_free"), ("freed before", "double_first"), ("allocation", "double_alloc")]


def invalid_junit(name, text):
    root = parse_junit(name, text)
    if root is None:
        return
    cases = totals_agree(name, root, 0)
    bad = [c for c in cases if c.get("classname") == "ctrack.invalid_frees"]
    env.eq(name + ": one ctrack.invalid_frees testcase", len(bad), 1)
    env.eq(name + ": no passing testcase", [c.get("name") for c in cases if not list(c)], [])
    if not bad:
        return
    c = bad[0]
    m = re.fullmatch(r"double_free at (.*):(\d+)", c.get("name") or "")
    env.check(name + ": testcase name double_free at %s:%d" % (IF_FILE, IF["double_free"]),
              m and same_file(m.group(1), IF_FILE) and int(m.group(2)) == IF["double_free"], c.get("name"))
    env.check(name + ": its file and line", same_file(c.get("file") or "", IF_FILE) and
              c.get("line") == str(IF["double_free"]), repr(c.attrib))
    f = c.find("failure")
    if not env.check(name + ": it fails", f is not None):
        return
    env.eq(name + ": failure type, message", (f.get("type"), f.get("message")),
           ("invalid_free.double_free", IF_MSG))
    body = (f.text or "").strip().splitlines()
    env.check(name + ": body: #0 double_free at ...:%d" % IF["double_free"],
              body and frame_line(body[0], "double_free", IF_FILE, IF["double_free"]), repr(body))
    for head, mark in [("freed before at:", "double_first"),
                       ("the block, 32 bytes, was allocated at:", "double_alloc")]:
        k = body.index(head) if head in body else -1
        env.check(name + ": body: %s #0 double_free at ...:%d" % (head, IF[mark]),
                  k > 0 and k + 1 < len(body) and frame_line(body[k + 1], "double_free", IF_FILE, IF[mark]),
                  repr(body))


def invalid_sarif(name, text):
    run = parse_sarif(name, text)
    if run is None:
        return
    rules = [r.get("id") for r in run.get("tool", {}).get("driver", {}).get("rules", [])]
    env.check(name + ": rule ctrack/invalid-free", "ctrack/invalid-free" in rules, repr(rules))
    bad = [r for r in run.get("results", []) if r.get("ruleId") == "ctrack/invalid-free"]
    env.eq(name + ": one ctrack/invalid-free result", len(bad), 1)
    if not bad:
        return
    res = bad[0]
    env.eq(name + ": level, message", (res.get("level"), res.get("message", {}).get("text")),
           ("error", IF_MSG))
    env.eq(name + ": kind, call, count", res.get("properties"),
           {"kind": "double_free", "call": "free", "count": 1})
    pl = (res.get("locations") or [{}])[0].get("physicalLocation", {})
    env.check(name + ": located at %s:%d" % (IF_FILE, IF["double_free"]),
              same_file(uri_path(pl.get("artifactLocation", {}), run), IF_FILE) and
              pl.get("region", {}).get("startLine") == IF["double_free"], repr(pl))
    flow = res.get("codeFlows", [{}])[0].get("threadFlows", [{}])[0].get("locations", [])
    env.eq(name + ": the code flow ends at the call",
           flow and flow[-1]["location"].get("physicalLocation", {}).get("region", {}).get("startLine"),
           IF["double_free"])
    got = []
    for st in res.get("stacks", []):
        fr = (st.get("frames") or [{}])[0].get("location", {})
        got.append((st.get("message", {}).get("text"),
                    (fr.get("logicalLocations") or [{}])[0].get("name"),
                    fr.get("physicalLocation", {}).get("region", {}).get("startLine")))
    env.eq(name + ": stacks: the call, the earlier free, the allocation", got,
           [(what, "double_free", IF[mark]) for what, mark in IF_SECTIONS])


def invalid_github(name, text):
    cmds = gh_commands(name, text)
    bad = [c for c in cmds if c[0] == "error" and c[3].startswith("ctrack: invalid free")]
    env.eq(name + ": one invalid free ::error", len(bad), 1)
    if not bad:
        return
    _, path, line, title, message = bad[0]
    env.check(name + ": file=%s line=%d" % (IF_FILE, IF["double_free"]),
              same_file(path, IF_FILE) and line == IF["double_free"], repr(bad[0]))
    env.eq(name + ": title", title, "ctrack: invalid free (double_free)")
    body = message.split("\n")
    env.eq(name + ": message's first line", body[0], IF_MSG)
    env.check(name + ": the call's backtrace", len(body) > 1 and
              frame_line(body[1], "double_free", IF_FILE, IF["double_free"]), repr(body))
    env.check(name + ": where it was freed before",
              "freed before at:" in body and frame_line(body[body.index("freed before at:") + 1],
                                                        "double_free", IF_FILE, IF["double_first"]),
              repr(body))


bd = env.fresh_dir("invalid-build")
ifprog = env.cc(IF_SRC, os.path.join(bd, "invalid_free"), "-fno-optimize-sibling-calls", "-fno-builtin")
if ifprog:
    d = env.fresh_dir("invalid")
    itrace = os.path.join(d, "trace.zst")
    r, _ = env.run_ctrack([ifprog, "double"], d, opts=("-o", itrace))
    if env.check("invalid: traced", os.path.exists(itrace), r.stderr[-300:]):
        invalid_junit("invalid junit", analyze(itrace, "--junit", "-"))
        invalid_sarif("invalid sarif", analyze(itrace, "--sarif", "-"))
        invalid_github("invalid github", analyze(itrace, "--github"))
        # listed whatever the leak level, as the check fails on them whatever its rules (exit 23)
        r = subprocess.run([env.analyze, "--junit", "-", "--fail-on=reachable", itrace],
                           capture_output=True, timeout=120)
        env.eq("invalid: --fail-on=reachable fails (23)", r.returncode, 23)
        invalid_junit("invalid junit --fail-on=reachable", r.stdout.decode("utf-8", "surrogateescape"))

# ---- a trace cut or damaged ----

ENDS_EARLY = "the trace ends early: the program was killed or the trace cut; figures stop there"
DAMAGED = re.compile(r"the trace is damaged near byte (\d+) \(.+\): its figures cover only what was read "
                     r"before it, and a damaged trace never passes a check")


def says_problem(name, text, kind, size):
    if kind == "incomplete":
        return env.eq(name + ": says the trace ends early", text, ENDS_EARLY)
    m = DAMAGED.fullmatch(text or "")
    return env.check(name + ": says where the trace is damaged, within its %d bytes" % size,
                     m and int(m.group(1)) < size, repr(text))


def problem_everywhere(name, trace, kind):
    """Each format says the trace is `kind` ("incomplete" or "damaged")."""
    size = os.path.getsize(trace)
    root = parse_junit(name + " junit", analyze(trace, "--junit", "-"))
    if root is not None:
        cases = totals_agree(name + " junit", root, 1)
        traced = [c for c in cases if c.get("name") == "trace"]
        env.eq(name + " junit: one testcase trace, class ctrack.trace",
               [c.get("classname") for c in traced], ["ctrack.trace"])
        err = traced[0].find("error") if traced else None
        if env.check(name + " junit: the trace testcase is in error", err is not None):
            env.eq(name + " junit: error type", err.get("type"), "trace." + kind)
            says_problem(name + " junit", err.get("message"), kind, size)
        env.eq(name + " junit: no passing testcase", [c.get("name") for c in cases if not list(c)], [])
    run = parse_sarif(name + " sarif", analyze(trace, "--sarif", "-"))
    if run is not None:
        inv = (run.get("invocations") or [{}])[0]
        env.eq(name + " sarif: executionSuccessful", inv.get("executionSuccessful"), False)
        notes = inv.get("toolExecutionNotifications") or [{}]
        env.eq(name + " sarif: an error notification", notes[0].get("level"), "error")
        says_problem(name + " sarif", notes[0].get("message", {}).get("text"), kind, size)
    cmds = gh_commands(name + " github", analyze(trace, "--github"))
    first = cmds[0] if cmds else ("", "", 0, "", "")
    env.eq(name + " github: first an ::error titled so", first[:4], ("error", "", 0, "ctrack: trace incomplete"))
    says_problem(name + " github", first[4], kind, size)


trace = env.trace("cut-leaks", [prog])
with open(trace, "rb") as f:
    data = f.read()
cd = env.fresh_dir("cut")
cut, bad = os.path.join(cd, "cut.zst"), os.path.join(cd, "bad.zst")
end = len(data) - ct.trailer_size(data)  # the zstd frames end there
with open(cut, "wb") as f:
    f.write(data[:end - 1])  # the zstd frame's last byte (its checksum's, RFC 8878) gone
with open(bad, "wb") as f:  # the checksum no longer matches (the trailer after it no longer vouches)
    f.write(data[:end - 1] + bytes([data[end - 1] ^ 0xFF]) + data[end:])
problem_everywhere("cut", cut, "incomplete")
problem_everywhere("checksum", bad, "damaged")

# killed.c "wait": 100 blocks, "ready PID", then sleeps until killed
kprog = env.cc(os.path.join(os.path.dirname(src), "killed.c"), os.path.join(bd, "killed"))
if kprog:
    d = env.fresh_dir("killed")
    ktrace = os.path.join(d, "trace.zst")
    p = subprocess.Popen([env.ctrack, "-q", "-o", ktrace, kprog, "wait"], cwd=d, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, preexec_fn=ct.no_core)
    ready = p.stdout.readline().decode().split()
    if env.check("killed: program ready", len(ready) == 2 and ready[0] == "ready", repr(ready)):
        time.sleep(0.3)
        os.kill(int(ready[1]), signal.SIGKILL)
    try:
        p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    if env.check("killed: trace written", os.path.exists(ktrace)):
        problem_everywhere("killed", ktrace, "incomplete")

# ---- a warning of the shim: a CTRACK_DEPTH it refuses (the launcher would refuse it itself) ----

d = env.fresh_dir("warning")
shim = os.path.join(os.path.dirname(env.ctrack), "libctrack.so")
r = subprocess.run([prog], cwd=d, env=dict(os.environ, LD_PRELOAD=shim, CTRACK_DEPTH="1024"),
                   capture_output=True, timeout=60, preexec_fn=ct.no_core)
files = ct.traces(d)
if env.eq("warning: one trace", len(files), 1):
    wtrace = os.path.join(d, files[0])
    root = parse_junit("warning junit", analyze(wtrace, "--junit", "-"))
    if root is not None:
        cases = totals_agree("warning junit", root, 0)
        env.eq("warning junit: the leak sites still fail", len(cases), len(SITES))
        err = root.find("testsuite/system-err")
        lines = (err.text or "").strip().splitlines() if err is not None else []
        env.check("warning junit: system-err: warning: ... CTRACK_DEPTH=1024 ...",
                  any(x.startswith("warning: ") and "CTRACK_DEPTH=1024" in x for x in lines), repr(lines))
    run = parse_sarif("warning sarif", analyze(wtrace, "--sarif", "-"))
    if run is not None:
        inv = (run.get("invocations") or [{}])[0]
        env.eq("warning sarif: executionSuccessful", inv.get("executionSuccessful"), True)
        env.check("warning sarif: a warning notification naming CTRACK_DEPTH=1024",
                  any(n.get("level") == "warning" and "CTRACK_DEPTH=1024" in n.get("message", {}).get("text", "")
                      for n in inv.get("toolExecutionNotifications", [])), repr(inv))
        env.eq("warning sarif: the leak sites", len(run.get("results", [])), len(SITES))
    cmds = gh_commands("warning github", analyze(wtrace, "--github"))
    env.check("warning github: a ::warning naming CTRACK_DEPTH=1024",
              any(c[0] == "warning" and c[3] == "ctrack: tracing warning" and "CTRACK_DEPTH=1024" in c[4]
                  for c in cmds), repr(cmds))
    env.eq("warning github: and the leak sites' ::error lines", sum(c[0] == "error" for c in cmds), len(SITES))
env.finish()
