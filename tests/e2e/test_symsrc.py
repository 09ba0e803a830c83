# SPDX-License-Identifier: MIT
# The other sources of debug info (tests/progs/symsrc.c, built here at -O2 -g with chosen build-ids):
# compressed debug sections, MiniDebugInfo (.gnu_debugdata), a local debuginfod server, and the places a
# .gnu_debuglink file is looked for by name.
import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import ctrack_test as ct

env = ct.Env(sys.argv)
src = env.progs[0]
LINES = ct.line_markers(src)
FILE = os.path.basename(src)
# The leaks symsrc.c's header states: bytes by the function that called malloc.
LEAKS = {"leak_plain": 40, "leak_inlined": 56}
# Innermost first: (function, file, line, inlined), each caller at the line of its call.
FULL = {
    40: [("leak_plain", FILE, LINES.get("plain_alloc"), False), ("main", FILE, LINES.get("call_plain"), False)],
    56: [("inline_alloc", FILE, LINES.get("inline_alloc"), True),
         ("leak_inlined", FILE, LINES.get("inline_call"), False),
         ("main", FILE, LINES.get("call_inlined"), False)],
}
# From the symbol table alone: names, no file:line, no inline frame.
NAMES = {40: [("leak_plain", None, None, False), ("main", None, None, False)],
         56: [("leak_inlined", None, None, False), ("main", None, None, False)]}
FINE = {"symbols": "symtab", "line_tables": True, "inline_info": True, "advice": None}

# No server unless a case sets one (a login shell may set Debian's).
os.environ.pop("DEBUGINFOD_URLS", None)


def run(what, cmd, **kw):
    print("run:", " ".join(cmd))
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    env.check(what, r.returncode == 0, r.stderr[-500:])
    return r.stdout


def build(d, name, bid, *flags):
    out = os.path.join(d, name)
    run(name + ": compile", ["gcc", "-O2", "-g", *flags, "-Wl,--build-id=0x" + bid, "-o", out, src])
    return out


def sections(path):
    """{name: flags} of the ELF sections, read with binutils (not with the code under test)."""
    text = run("readelf -S " + os.path.basename(path), ["readelf", "-SW", path])
    found = {}
    for line in text.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+(\D*?)\s+\d", line)
        if m:
            found[m.group(1)] = m.group(2)
    return found


def analyze(args, extra_env=None):
    e = dict(os.environ, **(extra_env or {}))
    return subprocess.run([env.analyze, *args], capture_output=True, text=True, env=e, timeout=120)


def report(what, trace, extra_env=None):
    r = analyze(["--json", trace], extra_env)
    if not env.check(what + ": analyze exits 0", r.returncode == 0, r.stderr[-500:]):
        return {}
    return json.loads(r.stdout)


def check_leaks(what, rep, want):
    """The two leaks, their sizes from the source, their frames as want says."""
    leaks = rep.get("leaks", [])
    env.eq(what + ": leak sizes", sorted((e["bytes"], e["allocations"]) for e in leaks),
           sorted((b, 1) for b in LEAKS.values()))
    for e in leaks:
        n = len(want.get(e["bytes"], []))
        got = [(f["function"], f["file"] and os.path.basename(f["file"]), f["line"], f["inlined"])
               for f in e["frames"][:n]]
        env.eq("%s: frames of the %d-byte leak" % (what, e["bytes"]), got, want.get(e["bytes"]))


def check_module(what, rep, path, want):
    mods = [m for m in rep.get("modules", []) if m["path"] == path]
    if env.eq(what + ": one modules entry", len(mods), 1):
        env.eq(what + ": verdict", {k: mods[0][k] for k in want}, want)


def check_symbols(what, path, want, rc, extra_env=None):
    """ctrack-analyze --symbols: JSON verdict, exit status, the advice in the text."""
    r = analyze(["--symbols", "--json", path], extra_env)
    env.eq(what + ": --symbols exit", r.returncode, rc)
    doc = json.loads(r.stdout) if r.stdout else {}
    check_module(what + " --symbols", doc, path, want)
    t = analyze(["--symbols", path], extra_env)
    advice = want.get("advice")
    env.check(what + ": --symbols text", t.returncode == rc and (not advice or advice in t.stdout),
              t.stdout[:600])


# ---- 1. compressed debug sections ----

def compressed():
    d = env.fresh_dir("compressed")
    base = build(d, "plain", "c1" * 20)
    zlib = os.path.join(d, "objcopy-zlib")
    run("objcopy --compress-debug-sections=zlib", ["objcopy", "--compress-debug-sections=zlib", base, zlib])
    builds = [("objcopy zlib", zlib, "c1" * 20, "C"),
              ("gcc -gz", build(d, "gz", "c2" * 20, "-gz"), "c2" * 20, "C"),
              ("gcc -gz=zlib-gnu", build(d, "gz-gnu", "c3" * 20, "-gz=zlib-gnu"), "c3" * 20, None)]
    for what, prog, bid, flag in builds:
        s = sections(prog)
        if flag:  # SHF_COMPRESSED
            env.check(what + ": .debug_info compressed", flag in s.get(".debug_info", ""), repr(s))
        else:  # the old GNU format: .zdebug_* sections
            env.check(what + ": .zdebug_info", ".zdebug_info" in s and ".debug_info" not in s, repr(s))
        rep = report(what, env.trace(what.replace(" ", "_"), [prog]))
        check_leaks(what, rep, FULL)
        want = dict(FINE, build_id=bid, debug_file=prog)
        check_module(what, rep, prog, want)
        check_symbols(what, prog, want, 0)


# ---- 2. MiniDebugInfo (gdb's manual, "MiniDebugInfo") ----

def nm_names(args, prog, types=None):
    out = run("nm " + " ".join(args), ["nm", *args, "--format=posix", "--defined-only", prog])
    return {f[0] for f in (l.split() for l in out.splitlines()) if len(f) > 1 and (not types or f[1] in types)}


def minidebuginfo():
    d = env.fresh_dir("minidebuginfo")
    prog = build(d, "mini", "c4" * 20)
    bare = os.path.join(d, "bare")
    # The function symbols not in .dynsym go to a .symtab-only ELF, xz-compressed into the stripped file.
    keep = os.path.join(d, "keep_symbols")
    with open(keep, "w") as f:
        f.write("\n".join(sorted(nm_names([], prog, "Tt") - nm_names(["-D"], prog))) + "\n")
    run("only-keep-debug", ["objcopy", "--only-keep-debug", prog, prog + ".dbg"])
    run("keep-symbols", ["objcopy", "-S", "--remove-section", ".gdb_index", "--remove-section", ".comment",
                         "--keep-symbols=" + keep, prog + ".dbg", prog + ".mini"])
    run("strip --strip-all", ["strip", "--strip-all", "-R", ".comment", prog])
    shutil.copy(prog, bare)
    run("xz", ["xz", "-f", prog + ".mini"])
    run("add .gnu_debugdata", ["objcopy", "--add-section", ".gnu_debugdata=" + prog + ".mini.xz", prog])
    s = sections(prog)
    env.check("minidebuginfo: .gnu_debugdata, no .symtab, no DWARF",
              ".gnu_debugdata" in s and ".symtab" not in s and not any(n.startswith(".debug_") for n in s), repr(s))

    # Without .gnu_debugdata, the same stripped file names no function of its own.
    rep = report("stripped", env.trace("bare", [bare]))
    own = [f["function"] for e in rep.get("leaks", []) for f in e["frames"][:2]]
    env.check("stripped: frames are addresses", own and all(fn.startswith("bare+0x") for fn in own), repr(own))

    rep = report("minidebuginfo", env.trace("mini", [prog]))
    check_leaks("minidebuginfo", rep, NAMES)
    want = {"build_id": "c4" * 20, "symbols": "minidebuginfo", "line_tables": False, "inline_info": False,
            "debug_file": None}
    check_module("minidebuginfo", rep, prog, want)
    advice = [m["advice"] for m in rep.get("modules", []) if m["path"] == prog]
    env.check("minidebuginfo: advice says line tables are missing",
              advice and (advice[0] or "").startswith("MiniDebugInfo only") and "no file:line" in advice[0],
              repr(advice))
    check_symbols("minidebuginfo", prog, dict(want, advice=advice[0] if advice else "?"), 3)


# ---- 3. debuginfod ----

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_served(url, server, limit=60):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and server.poll() is None:
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status == 200:
                    return True
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.5)
    return False


@contextlib.contextmanager
def debuginfod(d, root):
    """A debuginfod scanning root on a free loopback port; yields its URL, stops it at the end."""
    exe = shutil.which("debuginfod")
    if not env.check("debuginfod installed (scripts/deps test)", exe):
        yield None
        return
    port = free_port()
    log = open(os.path.join(d, "debuginfod.log"), "w")
    server = subprocess.Popen([exe, "-F", "-d", os.path.join(d, "db.sqlite"), "-p", str(port), "-t", "0",
                               "-g", "0", root], stdout=log, stderr=subprocess.STDOUT)
    try:
        yield "http://127.0.0.1:%d" % port, server
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def debuginfod_case():
    d = env.fresh_dir("debuginfod")
    bid = "c5" * 20
    prog = build(d, "split", bid)
    root = os.path.join(d, "served")
    os.makedirs(root)
    run("only-keep-debug", ["objcopy", "--only-keep-debug", prog, os.path.join(root, "split.debug")])
    run("strip -g", ["strip", "-g", prog])
    s = sections(prog)
    env.check("debuginfod: stripped of DWARF, no .gnu_debuglink, build-id kept",
              not any(n.startswith(".debug_") for n in s) and ".gnu_debuglink" not in s
              and ".note.gnu.build-id" in s, repr(s))
    trace = env.trace("split", [prog])

    rep = report("no DEBUGINFOD_URLS", trace)
    check_leaks("no DEBUGINFOD_URLS", rep, NAMES)
    want = {"build_id": bid, "symbols": "symtab", "line_tables": False, "inline_info": False,
            "debug_file": None}
    check_module("no DEBUGINFOD_URLS", rep, prog, want)
    advice = [m["advice"] for m in rep.get("modules", []) if m["path"] == prog]
    env.check("no DEBUGINFOD_URLS: advice says separate debug info was not found",
              advice and "separate debug info not found" in (advice[0] or ""), repr(advice))
    check_symbols("no DEBUGINFOD_URLS", prog, dict(want, advice=advice[0] if advice else "?"), 3)

    with debuginfod(d, root) as served:
        if not served:
            return
        url, server = served
        ok = wait_served("%s/buildid/%s/debuginfo" % (url, bid), server)
        if not env.check("debuginfod serves the debug file", ok):
            return
        cache = os.path.join(d, "cache")
        client = {"DEBUGINFOD_URLS": url, "DEBUGINFOD_CACHE_PATH": cache}
        rep = report("debuginfod", trace, client)
        check_leaks("debuginfod", rep, FULL)
        fetched = os.path.join(cache, bid, "debuginfo")
        want = dict(FINE, build_id=bid, debug_file=fetched)
        check_module("debuginfod", rep, prog, want)
        shutil.rmtree(cache)  # --symbols fetches it again
        check_symbols("debuginfod", prog, want, 0, client)


# ---- 4. the places a .gnu_debuglink file is looked for by name ----

def dlopened(args, extra_env=None):
    """The libraries ctrack-analyze ARGS loads with dlopen, as ld.so reports them (LD_DEBUG=files)."""
    e = dict(os.environ, LD_DEBUG="files", **(extra_env or {}))
    r = subprocess.run([env.analyze, *args], capture_output=True, text=True, env=e, timeout=120)
    return [l for l in r.stderr.splitlines() if "dynamically loaded by" in l]


def debuglink_places():
    """The debug file beside the binary, in .debug/ beside it, and under a --debug-dir root that
    mirrors the binary's directory: found each time with full frames. And with nothing to find and
    no DEBUGINFOD_URLS, libdebuginfod (libcurl, GnuTLS) is never loaded."""
    d = env.fresh_dir("debuglink")
    bid = "c6" * 20
    prog = build(d, "linked", bid)
    dbg = os.path.join(d, "linked.dbg")
    run("only-keep-debug", ["objcopy", "--only-keep-debug", prog, dbg])
    run("strip -g", ["strip", "-g", prog])
    run("add-gnu-debuglink", ["objcopy", "--add-gnu-debuglink=linked.dbg", prog], cwd=d)
    trace = env.trace("linked", [prog])
    root = os.path.join(d, "root")
    places = [("beside the binary", dbg, []),
              (".debug/ beside it", os.path.join(d, ".debug", "linked.dbg"), []),
              ("--debug-dir mirroring its directory", root + os.path.join(d, "linked.dbg"), ["--debug-dir", root])]
    at = dbg
    for what, where, opts in places:
        os.makedirs(os.path.dirname(where), exist_ok=True)
        os.rename(at, where)
        at = where
        rep = report(what, trace) if not opts else json.loads(analyze([*opts, "--json", trace]).stdout or "{}")
        check_leaks(what, rep, FULL)
        check_module(what, rep, prog, dict(FINE, build_id=bid, debug_file=where))

    os.remove(at)  # nowhere now
    rep = report("debug file gone", trace)
    check_leaks("debug file gone", rep, NAMES)
    loaded = dlopened(["--json", trace])
    env.check("no DEBUGINFOD_URLS, nothing to find: libdebuginfod not loaded",
              not any("libdebuginfod" in l for l in loaded), "\n".join(loaded))
    if shutil.which("debuginfod"):  # libdebuginfod1 is installed: show the check above can fail
        loaded = dlopened(["--json", trace], {"DEBUGINFOD_URLS": "http://127.0.0.1:1",
                                              "DEBUGINFOD_CACHE_PATH": os.path.join(d, "cache")})
        env.check("with DEBUGINFOD_URLS: libdebuginfod is loaded and asked",
                  any("libdebuginfod" in l for l in loaded), "\n".join(loaded))


env.eq("LINE markers in " + FILE, sorted(LINES),
       ["call_inlined", "call_plain", "inline_alloc", "inline_call", "plain_alloc"])
compressed()
minidebuginfo()
debuginfod_case()
debuglink_places()
env.finish()
