# SPDX-License-Identifier: MIT
# --junit, --sarif, --github (tests/progs/ci_leaks.c): each format parsed (xml.etree, json, a regex)
# and checked against the sites, figures and LINE markers ci_leaks.c states; the same source copied
# under a name full of characters the formats must escape; and the program run with "none", which
# leaks nothing.
import json
import os
import re
import shutil
import subprocess
import sys
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
        results = run.get("results")
        need(isinstance(results, list), w + ".results: an array")
        for j, res in enumerate(results if isinstance(results, list) else []):
            rw = "%s.results[%d]" % (w, j)
            message(res.get("message"), rw)
            need(res.get("level", "warning") in ("none", "note", "warning", "error"), rw + ".level")
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
env.finish()
