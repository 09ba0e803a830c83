# SPDX-License-Identifier: MIT
# Rust (tests/progs/rust/leak.rs, built here with plain rustc -C opt-level=2): v0 and legacy names
# demangled, and the allocation calls' file:line with debuginfo=2 and line-tables-only, none when stripped.
import json
import os
import re
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
rustc, src = env.progs[0], env.progs[1]
CRATE = "rust_leak"
FUNCTION = CRATE + "::shop::restock"
FILE = os.path.basename(src)


def read_source():
    with open(src) as f:
        return f.read()


def marked_lines(text):
    """{name: line number} of the `// LINE:name` comments."""
    return {name: number for number, line in enumerate(text.splitlines(), 1)
            for name in re.findall(r"// LINE:(\w+)", line)}


def leak_sizes(text):
    """{marker: bytes} from the program's own sizes: the boxed array, the Vec<u64>'s capacity, the
    String's literal."""
    box = re.search(r"Box::new\(\[\w+; (\d+)\]\)", text)
    vec = re.search(r"Vec::<u64>::with_capacity\((\d+)\)", text)
    string = re.search(r'String::from\("([^"]*)"\)', text)
    if not (box and vec and string):
        return {}
    return {"box": int(box.group(1)), "vec": 8 * int(vec.group(1)),
            "string": len(string.group(1).encode())}


TEXT = read_source()
LINES = marked_lines(TEXT)
SIZES = leak_sizes(TEXT)
env.eq("LINE: comments in " + FILE, sorted(LINES), ["box", "string", "vec"])
env.eq("leak sizes found in " + FILE, sorted(SIZES), ["box", "string", "vec"])


def run(what, cmd):
    print("run:", " ".join(cmd))
    try:
        r = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        env.check(what, False, str(e))
        return None
    env.check(what, r.returncode == 0, r.stderr[-800:])
    return r


def compile_rust(name, d, flags):
    """rustc -C opt-level=2 FLAGS; legacy mangling is rustc's default, and `-C
    symbol-mangling-version=legacy` needs -Z unstable-options on newer stable releases."""
    out = os.path.join(d, name)
    cmd = [rustc, "--edition=2021", "--crate-name", CRATE, "-C", "opt-level=2", *flags, "-o", out, src]
    print("compile:", " ".join(cmd))
    try:
        r = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        env.check(name + ": rustc runs (rustc must be installed)", False, str(e))
        return None
    legacy = ["-C", "symbol-mangling-version=legacy"]
    if r.returncode and "-Z unstable-options" in r.stderr and flags[:2] == legacy:
        print("rustc wants -Z unstable-options for legacy, its default: compiling without the flag")
        return compile_rust(name, d, flags[2:])
    return out if env.check(name + ": compile", r.returncode == 0, r.stderr[-800:]) else None


def mangled_restock(prog):
    """The restock symbol as the symbol table spells it."""
    r = run("nm " + os.path.basename(prog), ["nm", prog])
    names = [l.split()[-1] for l in (r.stdout if r else "").splitlines() if "restock" in l]
    return names[0] if len(names) == 1 else repr(names)


def check_lld_layout(name, prog):
    """rustc links with LLD here: the first LOAD segment is read-only, code not at offset = address."""
    comment = run(name + ": readelf -p .comment", ["readelf", "-p", ".comment", prog])
    env.check(name + ": linked by LLD", comment and re.search(r"Linker: .*LLD", comment.stdout),
              comment.stdout if comment else "")
    r = run(name + ": readelf -l", ["readelf", "-lW", prog])
    loads = [l.split() for l in (r.stdout if r else "").splitlines() if l.split()[:1] == ["LOAD"]]
    env.check(name + ": first LOAD read-only, code LOAD at vaddr != offset",
              loads and loads[0][6] == "R" and
              any("E" in l[6:-1] and int(l[1], 16) != int(l[2], 16) for l in loads), repr(loads))


def restock_frames(what, rep):
    """{marker: frame of restock} of the program's three leaks, checked against the sizes."""
    by_size = {size: marker for marker, size in SIZES.items()}
    found = {}
    for e in (rep or {}).get("leaks", []):
        frames = [f for f in e["frames"] if f["function"] == FUNCTION]
        if not frames:
            continue
        marker = by_size.get(e["bytes"])
        env.check("%s: leak of %d bytes in 1 from %s is one of the program's" % (what, e["bytes"], FUNCTION),
                  marker and e["allocations"] == 1 and marker not in found, repr(e)[:300])
        if marker:
            found[marker] = frames[0]
    env.eq(what + ": leaks from " + FUNCTION, sorted(found), sorted(SIZES))
    names = [f["function"] for e in (rep or {}).get("leaks", []) for f in e["frames"]]
    raw = [n for n in names if n and (n.startswith("_R") or n.startswith("_ZN") or
                                       re.search(r"::h[0-9a-f]{16}$", n))]
    env.eq(what + ": no raw Rust symbols, no legacy hashes", raw, [])
    return found


def case(name, mangling, debug):
    d = env.fresh_dir(name)
    prog = compile_rust(name, d, [*mangling, *debug])
    if not prog:
        return
    sym = mangled_restock(prog)
    if mangling[-1].endswith("v0"):
        env.check(name + ": v0 symbol", sym.startswith("_R") and sym.endswith("7restock"), sym)
    else:
        env.check(name + ": legacy symbol with hash",
                  re.fullmatch(r"_ZN\w*4shop7restock17h[0-9a-f]{16}E", sym), sym)
    check_lld_layout(name, prog)
    r, rep = env.run_traced(name + "/run", [prog])
    env.eq(name + ": exit status", r.returncode, 0)
    if rep:
        env.check(name + ": leaked bytes include the program's",
                  rep["summary"]["leaked_bytes"] >= sum(SIZES.values()), repr(rep["summary"]))
    found = restock_frames(name, rep)
    stripped = "strip=debuginfo" in debug
    for marker, f in sorted(found.items()):
        want = (None, None) if stripped else (FILE, LINES[marker])
        got = (f["file"] and os.path.basename(f["file"]), f["line"])
        env.eq("%s: %s frame at the %s call" % (name, FUNCTION, marker), got, want)
        env.eq("%s: %s frame not inlined" % (name, marker), f["inlined"], False)
    check_diagnostics(name, prog, rep, stripped)


def has_dwarf_tag(prog, tag):
    # What rustc wrote, read with binutils (not with the code under test).
    r = subprocess.run(["readelf", "--debug-dump=info", prog], capture_output=True, text=True)
    return tag in r.stdout


def check_diagnostics(name, prog, rep, stripped):
    """The report's verdict on the program's module follows how it was built: strip=debuginfo keeps
    the symbol table but no line tables ("no debug info" advice); otherwise line tables, and inline
    info exactly when rustc wrote DW_TAG_inlined_subroutine (std's own code counts too)."""
    mods = [m for m in (rep or {}).get("modules", []) if m["path"] == prog]
    if not env.eq(name + ": one modules entry for the program", len(mods), 1):
        return
    m = mods[0]
    env.eq(name + ": symbols", m["symbols"], "symtab")
    if stripped:
        env.eq(name + ": stripped of debug info: no line tables, advice",
               (m["line_tables"], m["inline_info"], (m["advice"] or "").startswith("no debug info")),
               (False, False, True))
        return
    inline = has_dwarf_tag(prog, "DW_TAG_inlined_subroutine")
    env.eq(name + ": line tables, inline info as written",
           (m["line_tables"], m["inline_info"]), (True, inline))
    env.eq(name + ": advice only without inline records", m["advice"] is None, inline)


MANGLINGS = {"v0": ["-C", "symbol-mangling-version=v0"],
             "legacy": ["-C", "symbol-mangling-version=legacy"]}
DEBUG = {"debug2": ["-C", "debuginfo=2"],
         "lines": ["-C", "debuginfo=line-tables-only"],
         "stripped": ["-C", "debuginfo=2", "-C", "strip=debuginfo"]}
for m, mflags in MANGLINGS.items():
    for dname, dflags in DEBUG.items():
        case(m + "-" + dname, mflags, dflags)
env.finish()
