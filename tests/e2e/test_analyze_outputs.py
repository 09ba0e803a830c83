# SPDX-License-Identifier: MIT
# Where ctrack-analyze's outputs may not go, and what a failed write says. Every file output refuses
# (exit 2, one line, nothing written) a path that is an input of the run (the trace, by its name or
# another: a symlink; --diff's traces; a --baseline report) or that holds another ctrack trace (its
# first bytes are the trace magic, include/ctrack/format.h); two outputs on standard output are a
# usage error. A write that fails names its own error, for every file output and for standard
# output: /dev/full says "No space left on device", never "Input/output error".
import hashlib
import os
import shutil
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog = env.progs[0]
trace = env.trace("trace", [prog])
other = env.trace("other", [prog])
d = env.fresh_dir("run")
FILES = ["--flamegraph", "--folded", "--html", "--pprof", "--speedscope", "--massif", "--junit",
         "--sarif"]


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def analyze(*args, stdout=subprocess.PIPE):
    r = subprocess.run([env.analyze, *args], stdout=stdout, stderr=subprocess.PIPE, timeout=120)
    return r.returncode, r.stdout or b"", r.stderr.decode(errors="replace")


def one_line(label, got, want_rc, words):
    rc, out, err = got
    env.check("%s: exit %d, one line: %s" % (label, want_rc, words),
              rc == want_rc and err.count("\n") == 1 and err.startswith("ctrack-analyze: ")
              and words in err and not out, repr((rc, err, out[:200])))


# ---- an input, or another trace, as an output ----
# Each try reads and aims at copies (a refusal that fails destroys them, not the traces used below).
def copies():
    for src, name in ((trace, "in.zst"), (other, "other.zst")):
        shutil.copyfile(src, os.path.join(d, name))
    with open(os.path.join(d, "base.json"), "wb") as f:
        f.write(report)
    return {p: digest(p) for p in (victim, victim2, saved)}


victim, victim2, saved = (os.path.join(d, n) for n in ("in.zst", "other.zst", "base.json"))
link = os.path.join(d, "link.zst")
os.symlink(victim, link)
report = analyze("--json", trace)[1]
for opt in FILES:
    for target, words in ((victim, "it is the input '%s'" % victim), (link, "it is the input '%s'" % victim),
                          (victim2, "it is a ctrack trace")):
        before = copies()
        one_line("%s=%s" % (opt, os.path.basename(target)), analyze(opt + "=" + target, victim), 2,
                 "refusing to write %s to '%s': %s" % (opt, target, words))
        env.eq("%s=%s: the files are untouched" % (opt, os.path.basename(target)),
               {p: digest(p) for p in before}, before)
before = copies()
one_line("--diff BASE NEW --flamegraph=BASE", analyze("--diff", victim2, victim, "--flamegraph", victim2),
         2, "refusing to write --flamegraph to '%s': it is the input '%s'" % (victim2, victim2))
one_line("--baseline REPORT --html=REPORT", analyze("--baseline", saved, "--html", saved, victim), 2,
         "refusing to write --html to '%s': it is the input '%s'" % (saved, saved))
env.eq("--diff, --baseline: the files are untouched", {p: digest(p) for p in before}, before)
fresh = os.path.join(d, "fresh.html")
env.eq("a new file is written (exit 0)", analyze("--html=" + fresh, trace)[0], 0)
env.eq("... and may be written again (exit 0)", analyze("--html=" + fresh, trace)[0], 0)

# ---- two outputs on standard output ----
for opts in (["--json", "--html=-"], ["--html=-", "--folded=-"], ["--json", "--github"],
             ["--github", "--sarif", "-"], ["--diff", other, "--flamegraph=-"]):
    one_line(" ".join(opts), analyze(*opts, trace), 2, "standard output")
for opts in (["--html=-"], ["--json", "--html=" + fresh], ["--diff", other, "--json"]):
    env.eq("%s: one output on standard output (exit 0)" % " ".join(opts), analyze(*opts, trace)[0], 0)

# ---- a write that fails ----
for opt in FILES:
    one_line(opt + "=/dev/full", analyze(opt + "=/dev/full", trace), 1,
             "cannot write '/dev/full': No space left on device")
with open("/dev/full", "wb") as full:
    for opts in ([], ["--json"], ["--html=-"], ["--github"], ["--diff", other]):
        one_line("%s > /dev/full" % " ".join(opts or ["the text report"]),
                 analyze(*opts, trace, stdout=full), 1, "No space left on device")
env.finish()
