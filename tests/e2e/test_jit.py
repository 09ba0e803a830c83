# SPDX-License-Identifier: MIT
# Generated code (tests/progs/jit.c): the leak's backtrace goes from jit_leak through the frame of
# code in no module (an address, no function) to main at the line of the call, where it ends; with
# --full-stacks it goes on to _start.
import json
import os
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog, src = env.progs[0], env.progs[1]
LINES = ct.line_markers(src)
FILE = os.path.basename(src)

r, rep = env.run_traced("jit", [prog])
trace = os.path.join(env.scratch, "jit", "trace.zst")
env.eq("jit: exit status", r.returncode, 0)
if rep:
    s = rep["summary"]
    env.eq("jit: figures", (s["allocations"], s["bytes_allocated"], s["leaked_bytes"], s["leaked_allocations"]),
           (1, 123, 123, 1))
    frames = rep["leaks"][0]["frames"] if rep["leaks"] else []
    got = [(f["function"], f["file"] and os.path.basename(f["file"]), f["line"], f["module"] is None)
           for f in frames[:3]]
    env.eq("jit: jit_leak, the generated code, main", got,
           [("jit_leak", FILE, LINES.get("alloc"), False), ("??", None, None, True),
            ("main", FILE, LINES.get("call"), False)])
    env.eq("jit: the backtrace ends at main", len(frames), 3)
    full = env.run_analyze(trace, "--json", "--full-stacks")
    frames = json.loads(full.stdout)["leaks"][0]["frames"] if full.returncode == 0 else []
    env.check("jit: the walk goes on to _start (--full-stacks)",
              any(f["function"] == "_start" for f in frames[3:]), repr([f["function"] for f in frames]))
env.finish()
