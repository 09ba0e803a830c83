# SPDX-License-Identifier: MIT
# Compiler-made suffixes (tests/progs/clones.c, built here with gcc -O2 -g -no-pie): frames of
# sized_alloc.isra.0, tagged_alloc.constprop.0.isra.0, get_buffer.part.0 and checksum.cold show the
# source's function names, as addr2line -f at the call (ra - 1) does, and JSON keeps the symbol table's
# name (nm) in "symbol". glibc's _nl_make_l10nflist.localalias (`clones intl`, libc6-dbg's symbols)
# shows as valgrind names it. Lines come from the source's LINE markers.
import os
import re
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
src = env.progs[0]
FILE = os.path.basename(src)
LINES = ct.line_markers(src)
# LINE marker: the function the source names there (each one's clone allocates at its line)
SITES = {"isra": "sized_alloc", "constprop": "tagged_alloc", "part": "get_buffer", "cold": "checksum"}
SUFFIX = re.compile(r"\.(localalias|isra|part|constprop|cold|lto_priv)\b")


def run(what, cmd, **kw):
    print("run:", " ".join(cmd))
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    env.check(what, r.returncode == 0, r.stderr[-500:])
    return r.stdout


def symbol_at(syms, address):
    """The nm symbol whose [value, value + size) holds address, or None."""
    hits = [name for lo, size, name in syms if lo <= address < lo + size]
    return hits[0] if len(hits) == 1 else None


d = env.fresh_dir("build")
exe = os.path.join(d, "clones")
run("compile clones", ["gcc", "-O2", "-g", "-no-pie", "-o", exe, src])
env.eq("LINE markers in " + FILE, sorted(LINES), sorted(list(SITES) + ["intl"]))
syms = [(int(m.group(1), 16), int(m.group(2), 16), m.group(3))
        for m in re.finditer(r"^([0-9a-f]+) ([0-9a-f]+) [tT] (\S+)$", run("nm -S", ["nm", "-S", exe]), re.M)]
clones = sorted(name for _, _, name in syms if SUFFIX.search(name))
print("clones:", clones)
for fn in SITES.values():  # the premise: gcc made a suffixed copy of every allocating function
    env.check("gcc cloned " + fn, any(c.startswith(fn + ".") for c in clones), repr(clones))

r, rep = env.run_traced("clones", [exe])
env.eq("clones: exit status", r.returncode, 0)
leaks = (rep or {}).get("leaks", [])
MARK = {fn: mark for mark, fn in SITES.items()}
got, want, sizes = [], [], {}
for e in leaks:
    f = e["frames"][0]
    address = int(f["address"], 16) - 1
    a2l = (run("addr2line", ["addr2line", "-f", "-e", exe, "0x%x" % address]).splitlines() or [""])[0]
    got.append((f["function"], f.get("symbol"), os.path.basename(f["file"] or ""), f["line"]))
    want.append((a2l, symbol_at(syms, address), FILE, LINES.get(MARK.get(a2l))))
    sizes[f["function"]] = e["bytes"]
env.eq("clones: leak sites (function, symbol, file, line) as addr2line, nm and the markers",
       sorted(got, key=repr), sorted(want, key=repr))
env.eq("clones: bytes leaked per function (the source's comment)", sizes,
       {"sized_alloc": 25, "tagged_alloc": 56, "get_buffer": 40, "checksum": 16})
env.check("clones: every symbol differs from its name", got and all(g[1] and g[1] != g[0] for g in got),
          repr(got))
text = env.run_analyze(os.path.join(env.scratch, "clones", "trace.zst")).stdout.decode(errors="replace")
for mark, fn in SITES.items():
    env.check("text: #0 %s at its line" % fn,
              re.search(r"#0 0x[0-9a-f]+ %s at \S*%s:%d\b" % (fn, re.escape(FILE), LINES[mark]), text),
              text[:2000])
env.check("text: no compiler suffix shown", not SUFFIX.search(text), text[:2000])

# glibc's local alias, as valgrind names it at the same file:line.
intl_env = dict(os.environ, LANGUAGE="fr", LANG="C.UTF-8")
intl_env.pop("LC_ALL", None)
r, rep = env.run_traced("intl", [exe, "hello"], env=intl_env)
env.eq("intl: exit status", r.returncode, 0)
frames = [f for e in (rep or {}).get("leaks", []) for f in e["frames"]]
aliases = {(f["function"], f.get("symbol"), os.path.basename(f["file"] or ""), f["line"]) for f in frames
           if f.get("symbol") and ".localalias" in f.get("symbol")}
env.check("intl: frames in a .localalias symbol (libc6-dbg's symbol table)", aliases, repr(frames[:8]))
env.check("intl: _nl_make_l10nflist.localalias shows as _nl_make_l10nflist",
          aliases and all(fn == "_nl_make_l10nflist" for fn, sym, _, _ in aliases
                          if sym == "_nl_make_l10nflist.localalias"), repr(aliases))
env.check("intl: no compiler suffix shown", not any(SUFFIX.search(f["function"]) for f in frames),
          repr(sorted({f["function"] for f in frames})))
vg_dir = env.fresh_dir("intl-vg")
vg = subprocess.run([env.valgrind, "--leak-check=full", "--show-leak-kinds=all", "--run-libc-freeres=no",
                     exe, "hello"], cwd=vg_dir, env=intl_env, capture_output=True, text=True, timeout=300)
named = set(re.findall(r"(?:at|by) 0x[0-9A-F]+: (\S+) \(([^:()]+):(\d+)\)", vg.stderr))
named = {(fn, file, int(line)) for fn, file, line in named}
env.check("intl: valgrind names the same frames", aliases and all(
    (fn, file, line) in named for fn, _, file, line in aliases), "%r not in %r" % (aliases, named))
env.finish()
