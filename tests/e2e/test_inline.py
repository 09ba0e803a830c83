# SPDX-License-Identifier: MIT
# Inline chains (tests/progs/inline_leak.c, built here with gcc and clang at -O2 -g): the leak's frames
# are inner_alloc, middle_alloc (inlined), outer, main at the lines its LINE: comments mark, with the
# debug info in the binary, in a .gnu_debuglink file beside it, and in a --debug-dir build-id tree.
import json
import os
import re
import shutil
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
src = env.progs[0]


def marked_lines(path):
    """{name: line number} of the `/* LINE:name */` comments."""
    lines = {}
    with open(path) as f:
        for number, text in enumerate(f, 1):
            for name in re.findall(r"/\* LINE:(\w+) \*/", text):
                lines[name] = number
    return lines


LINES = marked_lines(src)
FILE = os.path.basename(src)
# (function, file, line, inlined), innermost first: each caller at the line of its call.
WANT = [("inner_alloc", FILE, LINES.get("alloc"), True),
        ("middle_alloc", FILE, LINES.get("inner"), True),
        ("outer", FILE, LINES.get("middle"), False),
        ("main", FILE, LINES.get("outer"), False)]


def run(what, cmd):
    print("run:", " ".join(cmd))
    r = subprocess.run(cmd, capture_output=True, text=True)
    env.check(what, r.returncode == 0, r.stderr[-500:])
    return r.stdout


def analyze_json(trace, *opts):
    r = env.run_analyze(trace, "--json", *opts)
    if not env.check("analyze %s exits 0" % " ".join(opts), r.returncode == 0, r.stderr[-500:]):
        return None
    return json.loads(r.stdout)


def leak_frames(what, rep):
    """The frames of the program's one leak (48 bytes in 1 allocation), or []."""
    leaks = (rep or {}).get("leaks", [])
    env.eq(what + ": one leak of 48 bytes in 1", [(e["bytes"], e["allocations"]) for e in leaks],
           [(48, 1)])
    return leaks[0]["frames"] if leaks else []


def check_chain(what, frames):
    got = [(f["function"], os.path.basename(f["file"] or ""), f["line"], f["inlined"])
           for f in frames[:4]]
    env.eq(what + ": inline chain", got, WANT)
    # The inlined frames and their real function share the return address; main has its own.
    addrs = [f["address"] for f in frames[:4]]
    env.check(what + ": one address for the inline chain",
              len(addrs) == 4 and len(set(addrs[:3])) == 1 and addrs[3] != addrs[0], repr(addrs))
    env.check(what + ": frames below main are not inlined",
              not any(f["inlined"] for f in frames[3:]), repr(frames[3:]))


def check_text(what, trace):
    r = env.run_analyze(trace)
    text = r.stdout.decode(errors="replace")
    frames = [l for l in text.splitlines() if re.match(r"  #\d+ ", l)]
    marked = [l for l in frames if l.endswith(" [inlined]")]
    env.check(what + ": text marks inner_alloc and middle_alloc [inlined]",
              any("inner_alloc at " in l for l in marked) and any("middle_alloc at " in l for l in marked)
              and not any(" outer at " in l or " main at " in l for l in marked), "\n".join(frames[:6]))


def build_id(path):
    notes = run("readelf -n " + os.path.basename(path), ["readelf", "-n", path])
    m = re.search(r"Build ID: ([0-9a-f]+)", notes)
    return m.group(1) if m else None


def has_debug_info(path):
    sections = run("readelf -S " + os.path.basename(path), ["readelf", "-SW", path])
    return ".debug_info" in sections


def case(compiler):
    d = env.fresh_dir(compiler)
    exe = shutil.which(compiler)
    if not env.check(compiler + " installed (scripts/deps test)", exe):
        return
    prog = os.path.join(d, "inline_leak")
    run(compiler + ": compile", [exe, "-O2", "-g", "-o", prog, src])
    if not os.path.exists(prog):
        return

    # 1. Debug info in the binary.
    trace = os.path.join(d, "full.zst")
    r, _ = env.run_ctrack([prog], d, opts=("-o", trace))
    env.eq(compiler + ": exit status", r.returncode, 0)
    check_chain(compiler + " full", leak_frames(compiler + " full", analyze_json(trace)))
    check_text(compiler + " full", trace)

    # 2. Stripped, with the debug info in the file its .gnu_debuglink names, beside it.
    split = os.path.join(d, "split")
    os.makedirs(split)
    sprog = os.path.join(split, "inline_leak")
    shutil.copy(prog, sprog)
    run(compiler + ": only-keep-debug", ["objcopy", "--only-keep-debug", sprog, sprog + ".debug"])
    run(compiler + ": strip-debug", ["objcopy", "--strip-debug",
                                     "--add-gnu-debuglink=" + sprog + ".debug", sprog])
    env.check(compiler + ": the stripped binary has no .debug_info", not has_debug_info(sprog))
    strace = os.path.join(d, "split.zst")
    r, _ = env.run_ctrack([sprog], split, opts=("-o", strace))
    env.eq(compiler + ": stripped exit status", r.returncode, 0)
    check_chain(compiler + " debuglink", leak_frames(compiler + " debuglink", analyze_json(strace)))

    # 3. The debug file moved under DIR/.build-id/xx/rest.debug: found only with --debug-dir DIR.
    bid = build_id(sprog)
    if not env.check(compiler + ": build-id", bid and len(bid) > 2):
        return
    root = os.path.join(d, "debug-root")
    os.makedirs(os.path.join(root, ".build-id", bid[:2]))
    shutil.move(sprog + ".debug", os.path.join(root, ".build-id", bid[:2], bid[2:] + ".debug"))
    frames = leak_frames(compiler + " no debug", analyze_json(strace))
    env.eq(compiler + ": without --debug-dir, no debug info",
           [(f["function"], f["file"], f["inlined"]) for f in frames[:2]],
           [("outer", None, False), ("main", None, False)])
    check_chain(compiler + " --debug-dir",
                leak_frames(compiler + " --debug-dir", analyze_json(strace, "--debug-dir", root)))
    check_chain(compiler + " --debug-dir=",
                leak_frames(compiler + " --debug-dir=", analyze_json(strace, "--debug-dir=" + root)))


env.eq("LINE: comments in " + FILE, sorted(LINES), ["alloc", "inner", "middle", "outer"])
for compiler in ("gcc", "clang"):
    case(compiler)
r = env.run_analyze(os.path.join(env.scratch, "gcc", "full.zst"), "--debug-dir",
                    os.path.join(env.scratch, "no-such-dir"))
env.eq("--debug-dir of a missing directory: usage error", r.returncode, 2)
env.finish()
