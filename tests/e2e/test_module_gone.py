# SPDX-License-Identifier: MIT
# A traced binary gone or changed since the trace (issue 23, nothing silent): the SYMBOLS section
# says so, in the text report, the JSON "modules" and the HTML report, and its frames stay addresses
# rather than names from another file. A small program is built here and traced, then deleted;
# rebuilt differently (with a build-id, and without one: then its loadable segments tell); rebuilt
# without the build-id the trace recorded; replaced by a text file. Rebuilt without build-ids and
# with the same layout (another constant), only its time tells: it is read, with a warning.
import json
import os
import re
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
d = env.fresh_dir("module-gone")
SRC = os.path.join(d, "gone.c")
with open(SRC, "w") as f:
    f.write("""#include <stdlib.h>
#include <string.h>
#ifdef REBUILT
static char pad[4096] = {1};
int used(void) { return pad[1] + (int)strlen(pad); }
#endif
#ifndef SIZE
#define SIZE 77
#endif
__attribute__((noinline)) static void *leak_here(size_t n) { return malloc(n); }
int main(void) { return leak_here(SIZE) ? 0 : 1; }
""")
GONE = "gone since the trace (no file at this path): frames shown as addresses"
CHANGED = "changed since the trace ("


def build(out, *flags):
    return env.cc(SRC, out, *flags)


def traced(name, *flags):
    """The program built with flags in its own directory, traced: (binary, trace) or None."""
    sub = env.fresh_dir(os.path.join("module-gone", name))
    prog = build(os.path.join(sub, "prog"), *flags)
    trace = os.path.join(sub, "trace.zst")
    r, _ = env.run_ctrack([prog], sub, opts=("-o", trace)) if prog else (None, None)
    if not prog or not env.eq(name + ": traced", r.returncode, 0):
        return None
    rep = env.report(trace)
    mods = [m for m in rep["modules"] if m["path"] == prog] if rep else []
    env.eq(name + ": before: the binary is fine", [m["advice"] for m in mods], [None])
    return prog, trace


def expect(name, prog, trace, advice):
    """The three reports say advice (a prefix) of prog; its frames are addresses."""
    rep = env.report(trace)
    mods = [m for m in rep["modules"] if m["path"] == prog] if rep else []
    if env.eq(name + ": JSON lists the module once", len(mods), 1):
        env.check(name + ": JSON advice", (mods[0]["advice"] or "").startswith(advice), repr(mods[0]))
        env.eq(name + ": JSON: nothing can be read", (mods[0]["symbols"], mods[0]["line_tables"]),
               ("none", False))
    frames = [f for s in (rep or {}).get("leaks", []) for f in s["frames"] if f["module"] == prog]
    env.check(name + ": its frames are addresses", frames and all(
        f["file"] is None and re.fullmatch(r"prog\+0x[0-9a-f]+", f["function"]) for f in frames), repr(frames))
    r = env.run_analyze(trace)
    text = r.stdout.decode(errors="replace")
    symbols = text.split("\nSYMBOLS:\n", 1)[1] if "\nSYMBOLS:\n" in text else ""
    env.check(name + ": text SYMBOLS says so", re.search(r"^prog: symbols none, .*: " + re.escape(advice),
                                                        symbols, re.M), repr(symbols))
    html = os.path.join(os.path.dirname(trace), "report.html")
    r = env.run_analyze(trace, "--html", html)
    page = open(html, encoding="utf-8").read() if r.returncode == 0 else ""
    part = page.split('<h2 id="symbols">', 1)[1] if '<h2 id="symbols">' in page else ""
    row = [tr for tr in part.split("<tr") if prog in tr]
    env.check(name + ": HTML Symbols row", len(row) == 1 and 'class="bad"' in row[0] and
              advice in row[0], repr(row))


# Deleted.
t = traced("deleted", "-Wl,--build-id=sha1")
if t:
    os.unlink(t[0])
    expect("deleted", t[0], t[1], GONE)

# Rebuilt differently: another build-id, or none at all on either side (the loadable segments
# differ), or the build-id the trace recorded lost.
for name, first, second, why in (
        ("rebuilt", ["-Wl,--build-id=sha1"], ["-DREBUILT", "-Wl,--build-id=sha1"],
         "changed since the trace (its build-id differs)"),
        ("rebuilt without build-ids", ["-Wl,--build-id=none"], ["-DREBUILT", "-Wl,--build-id=none"],
         "changed since the trace (its loadable segments differ from the traced ones)"),
        ("rebuilt without its build-id", ["-Wl,--build-id=sha1"], ["-Wl,--build-id=none"],
         "changed since the trace (the traced file had a build-id, this one has none)")):
    t = traced(name, *first)
    if t:
        os.unlink(t[0])
        build(t[0], *second)
        expect(name, t[0], t[1], why)

# Rebuilt without build-ids and the same segments: read, with a warning that it may not be the
# code that ran.
NEWER = ("modified after the trace loaded it, and no build-id tells whether it is the binary that "
         "ran: names may be wrong")
t = traced("same layout", "-Wl,--build-id=none")
if t:
    os.unlink(t[0])
    build(t[0], "-DSIZE=78", "-Wl,--build-id=none")
    rep = env.report(t[1])
    mods = [m for m in rep["modules"] if m["path"] == t[0]] if rep else []
    env.check("same layout: JSON advice", len(mods) == 1 and (mods[0]["advice"] or "").startswith(NEWER),
              repr(mods))
    names = [f["function"] for s in (rep or {}).get("leaks", []) for f in s["frames"] if f["module"] == t[0]]
    env.eq("same layout: its frames are named", names, ["leak_here", "main"])
    text = env.run_analyze(t[1]).stdout.decode(errors="replace")
    env.check("same layout: text SYMBOLS says so", re.search(r"^prog: symbols symtab, .*: " + re.escape(NEWER),
                                                            text, re.M), text[-800:])

# Replaced by something that is not ELF.
t = traced("replaced by text", "-Wl,--build-id=sha1")
if t:
    os.unlink(t[0])
    with open(t[0], "w") as f:
        f.write("not ELF\n")
    expect("replaced by text", t[0], t[1], "changed since the trace (not an ELF file now)")
env.finish()
