# SPDX-License-Identifier: MIT
# Baselines on tests/progs/grow.c: --baseline BASE NEW (BASE a trace or a saved JSON report) with
# --max-growth as a share and as a size, a site that is new, a rebuild that moves every address,
# --diff's rules, every exit status, and the CI formats listing only the leaks --fail-on counts.
# Figures from grow.c's comment (blocks of 100 bytes at keep_old, 64 at keep_new, a reachable 4096-
# byte cache) and from valgrind.
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import ctrack_test as ct

env = ct.Env(sys.argv)
prog, src = env.progs
LINES = ct.line_markers(src)
SRC = os.path.basename(src)
d = env.fresh_dir("runs")


def trace(name, *args, exe=prog):
    path = os.path.join(d, name + ".zst")
    r, _ = env.run_ctrack([exe, *args], d, opts=("-o", path))
    env.check(name + ": traced", r.returncode == 0 and os.path.exists(path), r.stderr[-300:])
    return path


def analyze(*args):
    r = subprocess.run([env.analyze, *args], capture_output=True, timeout=120)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


base, same, grew, new = trace("base", "10"), trace("same", "10"), trace("grew", "11"), trace("new", "10", "1")

# valgrind agrees on what grew: 10 -> 11 blocks of 100 bytes definitely lost.
vg = [env.valgrind_main([prog, n], d) for n in ("10", "11")]
if all(vg):
    env.eq("valgrind: definitely lost 1000 -> 1100", [v["definitely_lost_bytes"] for v in vg], [1000, 1100])

saved = os.path.join(d, "base.json")
rc, out, _ = analyze("--json", base)
with open(saved, "w") as f:
    f.write(out)

for what, b in (("trace", base), ("JSON", saved)):
    rc, out, err = analyze("--baseline", b, same)
    env.check("%s base: unchanged run passes (exit 0)" % what, rc == 0 and out.startswith("check passed"),
              out + err)
    rc, out, err = analyze("--baseline", b, grew)
    env.eq("%s base: 10 -> 11 blocks fails with 23" % what, rc, 23)
    env.check("%s base: names keep_old at LINE OLD as grown" % what,
              re.search(r"^leak grew at keep_old \(%s:%d\): 1000 bytes -> 1100 bytes" % (re.escape(SRC), LINES["OLD"]),
                        out, re.M), out)
    env.check("%s base: the verdict" % what, "check failed: 1 site past the baseline's allowance" in out, out)
    # 9.95% of 1000 bytes is 99.5: the allowance rounds up to 100 bytes, never down to 99; 9.9% is
    # 99 bytes exactly, 1 short.
    for growth, want in (("10%", 0), ("9%", 23), ("9.95%", 0), ("9.9%", 23), ("100", 0), ("99", 23),
                         ("1KiB", 0)):
        rc, out, err = analyze("--baseline", b, "--max-growth", growth, grew)
        env.eq("%s base: +100 bytes (+10%%) with --max-growth %s" % (what, growth), rc, want)
    rc, out, err = analyze("--baseline", b, new)
    env.eq("%s base: a new site fails" % what, rc, 23)
    env.check("%s base: names keep_new at LINE NEW as new" % what,
              re.search(r"^new leak at keep_new \(%s:%d\): 0 bytes -> 64 bytes" % (re.escape(SRC), LINES["NEW"]),
                        out, re.M), out)
    env.eq("%s base: a new site of 64 bytes within --max-growth 64" % what,
           analyze("--baseline", b, "--max-growth=64", new)[0], 0)
    # The cache is still reachable, so it counts only from --fail-on=reachable on: grow it? no, equal.
    env.eq("%s base: --fail-on=any compares the reachable cache too (unchanged)" % what,
           analyze("--baseline", b, "--fail-on=any", same)[0], 0)

# A rebuild: the same source with a function before keep_old (-DPAD), so every address moves; the
# sites still match by function and file.
padded = os.path.join(d, "grow-padded")
env.cc(src, padded, "-g", "-O0", "-fno-omit-frame-pointer", "-DPAD")
rebuilt = trace("rebuilt", "10", exe=padded)
a = env.report(base)
b = env.report(rebuilt)
if a and b:
    env.check("rebuild: the leak's address moved",
              a["leaks"] and b["leaks"] and a["leaks"][0]["frames"][0]["address"] != b["leaks"][0]["frames"][0]["address"])
env.eq("rebuild: matches the baseline (exit 0)", analyze("--baseline", base, rebuilt)[0], 0)
env.eq("rebuild, JSON base: matches (exit 0)", analyze("--baseline", saved, rebuilt)[0], 0)

# --diff with rules: the diff, then the comparison's verdict and status.
rc, out, _ = analyze("--diff", base, grew)
env.eq("--diff without rules: exit 0", rc, 0)
rc, out, _ = analyze("--diff", base, grew, "--max-growth=5%")
env.check("--diff --max-growth 5%: exit 23, diff then verdict",
          rc == 23 and out.index("SITES:") < out.index("check failed"), out[-400:])
env.eq("--diff --fail-on=definite --max-growth 20%: exit 0",
       analyze("--diff", base, grew, "--fail-on=definite", "--max-growth=20%")[0], 0)
env.eq("--diff --fail-on=definite: no growth allowed, exit 23", analyze("--diff", base, grew, "--fail-on=definite")[0], 23)

# Errors: one line, exit 2 for usage, 1 for input.
bad_json = os.path.join(d, "bad.json")
with open(bad_json, "w") as f:
    f.write('{"hello": 1}\n')
for args, want in ((["--baseline", base, "--max-growth=lots", grew], 2),
                   (["--max-growth=5%", grew], 2),
                   (["--baseline", os.path.join(d, "missing.zst"), grew], 1),
                   (["--baseline", bad_json, grew], 1),
                   (["--baseline", base, "--between", "a,b", grew], 2)):
    rc, out, err = analyze(*args)
    env.check("error %s: exit %d, one line" % (" ".join(os.path.basename(a) for a in args), want),
              rc == want and err.count("\n") == 1 and not out, (rc, err))

# A baseline without a site (`true` allocates nothing it keeps): a run of the same passes against it.
none = trace("none", exe="true")
rc, out, err = analyze("--json", none)
with open(os.path.join(d, "none.json"), "w") as f:
    f.write(out)
for b in (none, os.path.join(d, "none.json")):
    rc, out, err = analyze("--baseline", b, none)
    env.eq("a baseline without sites (%s): passes" % os.path.basename(b), (rc, err), (0, ""))

# The CI formats list the leaks --fail-on counts: keep_old only by default, the cache too with any.
for level, want in ((None, ["keep_old"]), ("any", ["keep_old", "main"])):
    opts = ["--junit=-"] + (["--fail-on=" + level, "--max-leaked=1GiB"] if level else [])
    rc, out, err = analyze(*opts, base)
    names = sorted(c.get("name").split(" ")[0] for c in ET.fromstring(out).iter("testcase")) if rc == 0 else None
    env.eq("--junit at %s: the sites" % (level or "the default level"), names, want)
    opts = ["--sarif=-"] + (["--fail-on=" + level, "--max-leaked=1GiB"] if level else [])
    rc, out, err = analyze(*opts, base)
    results = json.loads(out)["runs"][0]["results"] if rc == 0 else []
    env.eq("--sarif at %s: results" % (level or "the default level"), len(results), len(want))
env.finish()
