# SPDX-License-Identifier: MIT
# LeakSanitizer's interface exported by the shim (issue 23): tests/progs/lsan_iface.c, annotated for
# LSan through weak declarations, gets LSan's verdicts under ctrack. The expected figures are the
# program's (its comment), and the same program built with clang -fsanitize=leak says them too:
# the script runs it and reads LSan's own SUMMARY and output.
import os
import re
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog, src = env.progs


def lsan_build():
    out = os.path.join(env.scratch, "lsan_iface_lsan")
    r = subprocess.run(["clang", "-fsanitize=leak", "-O0", "-g", "-o", out, src], capture_output=True,
                       text=True)
    return out if env.check("clang -fsanitize=leak builds the program", r.returncode == 0, r.stderr) else None


def lsan_run(exe, mode):
    r = subprocess.run([exe, mode], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, LSAN_OPTIONS="exitcode=23"))
    m = re.search(r"SUMMARY: LeakSanitizer: (\d+) byte\(s\) leaked in (\d+) allocation", r.stderr)
    return r.returncode, (int(m.group(1)), int(m.group(2))) if m else (0, 0), r.stdout


def lost(summary):
    return (summary["definitely_lost_bytes"] + summary["indirectly_lost_bytes"],
            summary["definitely_lost_blocks"] + summary["indirectly_lost_blocks"])


lsan = lsan_build()
want = {"plain": (23, (1403, 2), ""), "recoverable": (23, (77, 1), "0\n0\n1\n"), "final": (0, (0, 0), "")}
for mode, (code, figures, out) in want.items():
    if lsan:
        env.eq("LSan itself on %s: exit, lost, output" % mode, lsan_run(lsan, mode), (code, figures, out))
    r, rep = env.run_traced(mode, [prog, mode])
    env.eq(mode + ": the program's output and status", (r.stdout.decode(), r.returncode), (out, 0))
    if rep:
        env.eq(mode + ": definitely and indirectly lost are LSan's", lost(rep["summary"]), figures)
    d = env.fresh_dir(mode + "-check")
    r, _ = env.run_ctrack([prog, mode], d, opts=("--check", "-o", os.path.join(d, "t.zst")))
    env.eq(mode + ": ctrack --check's verdict is LSan's", r.returncode, code)

# The blocks the program said are no leaks are said in the report: the 400 disabled and the 274
# ignored (with the 99 it holds, reachable through it).
rep = env.report(os.path.join(env.scratch, "plain", "trace.zst"))
if rep:
    env.check("plain: a note counts the blocks the program ignored",
              any("2 blocks (674 bytes) are no leaks by the program's word" in n["text"]
                  for n in rep["notes"]), rep["notes"])
env.finish()
