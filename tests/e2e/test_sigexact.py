# SPDX-License-Identifier: MIT
# The frame a signal interrupted has an exact address, looked up at itself (tests/progs/sigexact.c,
# built here with -no-pie: SIGILL stops first_byte at its first instruction, whose byte before is
# before_first's last; the handler leaks 40 bytes). The leak's backtrace: handler_alloc, on_ill, the
# signal trampoline, first_byte at its own address (nm), then call_first and main at the LINE markers
# of their calls, looked up at the return address - 1 as ever. The premises come from nm.
import os
import re
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
src = env.progs[0]
FILE = os.path.basename(src)
LINES = ct.line_markers(src)


def symbols(path):
    """{name: (address, size)} of nm -S's text symbols."""
    out = subprocess.run(["nm", "-S", path], capture_output=True, text=True).stdout
    return {m.group(3): (int(m.group(1), 16), int(m.group(2), 16))
            for m in re.finditer(r"^([0-9a-f]+) ([0-9a-f]+) [tT] (\S+)$", out, re.M)}


exe = env.cc(src, os.path.join(env.fresh_dir("build"), "sigexact"), "-no-pie")
if exe:
    syms = symbols(exe)
    first, before = syms.get("first_byte", (0, 0)), syms.get("before_first", (0, 0))
    env.check("premise: first_byte's address - 1 is before_first's (nm -S)",
              first[0] and before[0] <= first[0] - 1 < before[0] + before[1], repr((first, before)))
    r, rep = env.run_traced("traced", [exe])
    env.eq("exit status", r.returncode, 0)
    leaks = (rep or {}).get("leaks", [])
    env.eq("one leak of 40 bytes", [(e["bytes"], e["allocations"]) for e in leaks], [(40, 1)])
    frames = leaks[0]["frames"] if leaks else []
    got = [(f["function"], os.path.basename(f["file"] or ""), f["line"]) for f in frames]
    env.eq("handler_alloc and on_ill at their lines", got[:2],
           [("handler_alloc", FILE, LINES["alloc"]), ("on_ill", FILE, LINES["handler"])])
    env.check("then the signal trampoline, in libc",
              len(frames) > 2 and os.path.basename(frames[2]["module"] or "").startswith("libc.so"),
              repr(got))
    env.eq("then first_byte, at its own address, in the program",
           [(f["function"], int(f["address"], 16), f["module"]) for f in frames[3:4]],
           [("first_byte", first[0], exe)])
    env.eq("then call_first and main at the lines of their calls", got[4:6],
           [("call_first", FILE, LINES["call"]), ("main", FILE, LINES["main"])])
env.finish()
