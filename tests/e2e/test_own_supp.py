# SPDX-License-Identifier: MIT
# A program's own suppressions (tests/progs/supp_tree.c: its __lsan_default_suppressions names
# hold_cache, whose 64-byte block, definitely lost, holds make_child's 32-byte block, indirectly
# lost; with an argument real_leak loses 16 bytes more). A plain report keeps memcheck's classes
# (valgrind's figures) and names what the checks would suppress; a check suppresses hold_cache's
# block and, as LeakSanitizer does, the block that hangs from it, also when another definitely lost
# block is there (the trace's HOLDERS say which block holds which).
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog = env.progs[0]
KEYS = [k + s for k in ("definitely_lost", "indirectly_lost", "possibly_lost", "still_reachable")
        for s in ("_bytes", "_blocks")]
d = env.fresh_dir("run")
vg = env.valgrind_main([prog], d)
if vg:
    env.eq("valgrind: 64 bytes definitely and 32 indirectly lost",
           [vg[k] for k in KEYS[:4]], [64, 1, 32, 1])
trace = env.trace("tree", [prog])

# ---- the plain report: every lost block, and what the checks suppress ----
rep = env.report(trace)
if rep and vg:
    env.eq("plain JSON: the classes are memcheck's", [rep["summary"][k] for k in KEYS],
           [vg[k] for k in KEYS])
    kinds = sorted((e["kind"], ct.frame0(e), e["bytes"]) for e in rep["leaks"] if e["kind"] != "reachable")
    env.eq("plain JSON: both lost blocks listed", kinds,
           [("definite", "hold_cache", 64), ("indirect", "make_child", 32)])
    env.eq("plain JSON: the suppressions, not applied", rep.get("suppressions"),
           {"applied": False,
            "matched": [{"pattern": "hold_cache", "origin": "__lsan_default_suppressions:1",
                         "blocks": 1, "bytes": 64}],
            "indirect_blocks": 1, "indirect_bytes": 32,
            "unsure_indirect_blocks": 0, "unsure_indirect_bytes": 0})
r = env.run_analyze(trace)
text = r.stdout.decode(errors="replace")
env.eq("plain text: exit 0", r.returncode, 0)
for line in ("definitely lost: 64 bytes in 1 block", "indirectly lost: 32 bytes in 1 block",
             "suppressed in checks by leak:hold_cache (__lsan_default_suppressions:1): 64 bytes in 1 block",
             "suppressed in checks with the suppressed blocks that hold them: 32 bytes in 1 block "
             "indirectly lost"):
    env.check("plain text: " + line, "\n" + line + "\n" in text, text[:1500])
env.check("plain text: both sites listed", "hold_cache" in text and "make_child" in text, text)

# ---- the checks: hold_cache's block and the one it holds are suppressed ----
r = env.run_analyze(trace, "--fail-on=definite")
out = r.stdout.decode(errors="replace")
env.eq("--fail-on=definite: passes (LeakSanitizer reports nothing)", r.returncode, 0)
env.check("--fail-on=definite: the suppressions' take",
          "suppressed by leak:hold_cache (__lsan_default_suppressions:1): 64 bytes in 1 block\n"
          "suppressed with the suppressed blocks that hold them: 32 bytes in 1 block indirectly lost\n"
          in out, out)
env.check("--fail-on=definite: nothing counted", "check passed: 0 bytes in 0 blocks" in out, out)
r, _ = env.run_ctrack([prog], d, opts=("--check", "--force", "-o", d + "/check.zst"))
env.eq("ctrack --check: exit 0", r.returncode, 0)

# With real_leak's block the child still goes with hold_cache's, which holds it (HOLDERS): the check
# counts real_leak's 16 bytes alone, as LeakSanitizer reports them.
vgx = env.valgrind_main([prog, "x"], d)
if vgx:
    env.eq("valgrind with real_leak: 80 bytes definitely and 32 indirectly lost",
           [vgx[k] for k in KEYS[:4]], [80, 2, 32, 1])
tracex = env.trace("tree-x", [prog, "x"])
r = env.run_analyze(tracex, "--fail-on=definite")
out = r.stdout.decode(errors="replace")
env.eq("with real_leak: --fail-on=definite fails", r.returncode, 23)
env.check("with real_leak: the verdict counts real_leak's block alone",
          "check failed: 16 bytes in 1 block" in out and "real_leak" in out, out)
env.check("with real_leak: the child went with the block that holds it",
          "suppressed with the suppressed blocks that hold them: 32 bytes in 1 block" in out, out)
r = env.run_analyze(tracex, "--max-leaked=16")
env.eq("with real_leak: --max-leaked=16 passes (LeakSanitizer: 16 bytes leaked)", r.returncode, 0)
env.finish()
