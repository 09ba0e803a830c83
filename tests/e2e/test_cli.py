# SPDX-License-Identifier: MIT
# The command lines (issue 24, help and install): `ctrack --help` and `ctrack-analyze --help` grouped
# by purpose with examples, under 100 columns; the man pages render without a groff warning; every
# option of --help is in the man page and the bash completion and back; the completion completes
# (bash runs the script with COMP_WORDS/COMP_CWORD set and the function fills COMPREPLY); the options
# new in issue 24 parse, and refuse bad values with exit 2; the check options give both commands
# the same reasons. Extra arguments: PROGRAM (tests/progs/temporary.c, traced for a real trace), then
# the man page and completion of ctrack and of ctrack-analyze (the build writes them, docs/).
import os
import re
import shutil
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog, ctrack_man, ctrack_comp, analyze_man, analyze_comp = env.progs
COMMANDS = {"ctrack": (env.ctrack, ctrack_man, ctrack_comp),
            "ctrack-analyze": (env.analyze, analyze_man, analyze_comp)}
GROUPS = {"ctrack": ["Tracing", "Leak checks (CI)", "General"],
          "ctrack-analyze": ["Reports", "Outputs (files)", "Time window", "Flame graphs and names",
                             "Leak checks (CI)", "Comparing runs", "Symbols and debug info", "General"]}


def run(cmd, *args, **kw):
    return subprocess.run([cmd, *args], capture_output=True, text=True, timeout=60, **kw)


def help_options(text):
    """The options --help lists: the words of its option lines ('  -h, --help', '  --top N')."""
    opts = set()
    for line in text.splitlines():
        m = re.match(r"  (-[\w-]+)(?:, (--[\w-]+))?", line)
        if m:
            opts.update(o for o in m.groups() if o)
    return opts


def man_options(path):
    """The options of the man page's OPTIONS section: its .TP tags, rendered as text."""
    src = open(path, encoding="utf-8").read().splitlines()
    opts = set()
    for i, line in enumerate(src[:-1]):
        if line == ".TP":
            tag = re.sub(r"\\f[BIR]", "", src[i + 1]).replace("\\-", "-")
            opts.update(re.findall(r"(?<![\w-])(--?[\w-]+)", tag))
    return opts


def complete(script, words, cwd=None):
    """COMPREPLY after the completion function of script ran on words (the last one being
    completed), as bash calls it: COMP_WORDS split at '=' as COMP_WORDBREAKS splits them."""
    cmd = words[0]
    fn = "_" + cmd.replace("-", "_")
    arr = " ".join("'%s'" % w.replace("'", "'\\''") for w in words)
    sh = ('source "$1" || exit 9\nCOMP_WORDS=(%s)\nCOMP_CWORD=%d\nCOMP_LINE="${COMP_WORDS[*]}"\n'
          'COMP_POINT=${#COMP_LINE}\n%s %s "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"\n'
          'printf "%%s\\n" "${COMPREPLY[@]}"\n' % (arr, len(words) - 1, fn, cmd))
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", sh, "bash", script],
                       capture_output=True, text=True, timeout=60, cwd=cwd)
    if r.returncode:
        return ["<bash exit %d: %s>" % (r.returncode, r.stderr.strip())]
    return [w for w in r.stdout.split("\n") if w]


# ---- --help ----

for name, (exe, man, comp) in COMMANDS.items():
    r = run(exe, "--help")
    env.check(name + " --help: exit 0, on stdout, Usage first",
              r.returncode == 0 and r.stderr == "" and r.stdout.startswith("Usage: " + name + " "),
              "rc %d %r" % (r.returncode, (r.stdout + r.stderr)[:300]))
    long_lines = [l for l in r.stdout.splitlines() if len(l) >= 100]
    env.eq(name + " --help: every line under 100 columns", long_lines, [])
    headings = [l[:-1] for l in r.stdout.splitlines() if re.match(r"^[A-Z][\w ()]*:$", l)]
    env.eq(name + " --help: the groups in order, then the examples", headings,
           GROUPS[name] + ["Examples"])
    ex = r.stdout.split("\nExamples:\n")[-1]
    env.check(name + " --help: examples run " + name,
              len(re.findall(r"^  %s " % re.escape(name), ex, re.M)) >= 3, ex)
    opts = help_options(r.stdout)
    listed = [o for l in r.stdout.splitlines() for o in re.findall(r"^  (--?[\w-]+)", l)]
    env.eq(name + " --help: each option once", sorted(set(listed)), sorted(listed))
    h = run(exe, "-h")
    env.eq(name + " -h is --help", (h.returncode, h.stdout), (0, r.stdout))
    for hidden in ("--help-man", "--help-completion"):
        env.check(name + " --help does not list the build's " + hidden, hidden not in r.stdout)

    # ---- the man page: renders without warnings, lists what --help lists ----
    g = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", man], capture_output=True, text=True,
                       timeout=60)
    env.check(name + "(1): groff -man -ww renders it without a warning",
              g.returncode == 0 and g.stderr == "", g.stderr[:500])
    m = subprocess.run(["man", "--warnings", "-l", man], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, MANWIDTH="100", MAN_KEEP_FORMATTING="", PAGER="cat"))
    env.check(name + "(1): man -l renders it without a warning",
              m.returncode == 0 and m.stderr == "" and name.upper() + "(1)" in m.stdout,
              m.stderr[:500] + m.stdout[:200])
    for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXAMPLES", "EXIT STATUS"):
        env.check("%s(1) has %s" % (name, section), re.search(r"^%s$" % section, m.stdout, re.M),
                  m.stdout[:300])
    for grp in GROUPS[name]:
        env.check("%s(1) has the group %s" % (name, grp), re.search(r"^   %s$" % re.escape(grp),
                                                                   m.stdout, re.M))
    mo = man_options(man)
    env.eq(name + ": the man page's options are --help's", sorted(mo), sorted(opts))

    # ---- the completion: its option list is --help's ----
    co = complete(comp, [name, "-"])
    env.eq(name + ": completing '-' offers --help's options", sorted(co), sorted(opts))

# ---- completion behaviour ----

d = env.fresh_dir("complete")
os.makedirs(os.path.join(d, "symbols.d"))
for f in ("report.html", "trace.zst", "supp.txt"):
    open(os.path.join(d, f), "w").close()
comp = analyze_comp
env.eq("ctrack-analyze --co<TAB>", sorted(complete(comp, ["ctrack-analyze", "--co"])),
       ["--context", "--cost"])
env.eq("ctrack-analyze --cost <TAB>: the costs",
       sorted(complete(comp, ["ctrack-analyze", "--cost", ""])),
       sorted(["lost", "leaked", "peak", "allocations", "temporary", "allocated"]))
env.eq("ctrack-analyze --cost=pe<TAB> (split at '=')",
       complete(comp, ["ctrack-analyze", "--cost", "=", "pe"]), ["peak"])
env.eq("ctrack-analyze --group <TAB>", sorted(complete(comp, ["ctrack-analyze", "--group", ""])),
       ["backtrace", "site"])
env.eq("ctrack-analyze --pprof-at <TAB>",
       sorted(complete(comp, ["ctrack-analyze", "--pprof-at", ""])), ["exit", "peak"])
env.eq("ctrack-analyze --fail-on <TAB>",
       sorted(complete(comp, ["ctrack-analyze", "--fail-on", ""])),
       sorted(["definite", "possible", "reachable", "any"]))
env.eq("ctrack-analyze --html re<TAB>: files",
       complete(comp, ["ctrack-analyze", "--html", "re"], cwd=d), ["report.html"])
env.eq("ctrack-analyze --debug-dir <TAB>: directories only",
       complete(comp, ["ctrack-analyze", "--debug-dir", ""], cwd=d), ["symbols.d"])
env.eq("ctrack-analyze --top <TAB>: nothing to offer",
       complete(comp, ["ctrack-analyze", "--top", ""], cwd=d), [])
env.eq("ctrack-analyze --json tr<TAB>: the trace operand",
       complete(comp, ["ctrack-analyze", "--json", "tr"], cwd=d), ["trace.zst"])
comp = ctrack_comp
env.eq("ctrack --fail-on p<TAB>", complete(comp, ["ctrack", "--fail-on", "p"]), ["possible"])
env.eq("ctrack --suppressions su<TAB>: files",
       complete(comp, ["ctrack", "--suppressions", "su"], cwd=d), ["supp.txt"])
env.eq("ctrack -o re<TAB>: files", complete(comp, ["ctrack", "-o", "re"], cwd=d), ["report.html"])
got = complete(comp, ["ctrack", "--depth", "8", "ech"])
env.check("ctrack --depth 8 ech<TAB>: a command", "echo" in got, str(got))
got = complete(comp, ["ctrack", "-q", "--", "ech"])
env.check("ctrack -q -- ech<TAB>: a command", "echo" in got, str(got))
env.eq("ctrack -o t.zst ./prog su<TAB>: the program's arguments (files)",
       complete(comp, ["ctrack", "-o", "t.zst", "./prog", "su"], cwd=d), ["supp.txt"])
env.eq("ctrack ./prog -<TAB>: not ctrack's options",
       [w for w in complete(comp, ["ctrack", "./prog", "--f"], cwd=d) if w.startswith("--f")], [])

# ---- the options new in issue 24 parse, and refuse bad values ----

t = env.fresh_dir("trace")
r, traces = env.run_ctrack([prog], t, opts=["-o", os.path.join(t, "t.zst")])
trace = os.path.join(t, "t.zst")
env.eq("the program traced", (r.returncode, os.path.exists(trace)), (0, True))
for args in (["--from", "0", "--to", "10s"], ["--from", "1.5ms"], ["--to=1200us"],
             ["--from", "0.25", "--to", "250ms"], ["--full-names"], ["--by-line"], ["--icicle"],
             ["--hide-frames", "^std::", "--hide-frames=malloc|free"], ["--detailed-freq", "1"],
             ["--context", "0"], ["--context=7"]):
    r = env.run_analyze(trace, *args)
    env.check("ctrack-analyze %s: accepted" % " ".join(args), r.returncode == 0,
              "rc %d %s" % (r.returncode, r.stderr[-300:]))
BAD = [
    (["--from", "2", "--to", "1"], "--from is after --to"),
    (["--from", "1.5x"], "--from needs a time"),
    (["--to", "ms"], "--to needs a time"),
    (["--from", "-1"], "--from needs a time"),
    (["--from", "1", "--between", "a,b"], "cannot go with --between"),
    (["--from", "1", "--html", "r.html"], "not --html (the HTML report selects a window on its charts)"),
    (["--between", "a,b", "--massif", "m.out"], "not --massif"),
    (["--to=", ], "--to needs an argument (TIME)"),
    (["--hide-frames", "(unclosed"], "--hide-frames '(unclosed': "),
    (["--detailed-freq", "0"], "--detailed-freq needs a number of at least 1"),
    (["--context", "x"], "--context needs a number"),
    (["--icicle=yes"], "--icicle takes no argument"),
    (["--frobnicate"], "unknown option '--frobnicate'"),
]
for args, why in BAD + [([trace, "--top"], "--top needs an argument (N)")]:
    cmd = [env.analyze, *args] if args[0] == trace else [env.analyze, *args, trace]
    r = subprocess.run(cmd, capture_output=True, timeout=60)
    err = r.stderr.decode(errors="replace")
    env.check("ctrack-analyze %s: usage error (2): %s" % (" ".join(args), why),
              r.returncode == 2 and why in err and err.count("\n") == 1 and r.stdout == b"",
              "rc %d %r" % (r.returncode, err))
# regerror's reason is named: glibc's words for an unmatched parenthesis
r = env.run_analyze(trace, "--hide-frames", "(unclosed")
env.check("--hide-frames: regerror's reason", "Unmatched ( or \\(" in r.stderr.decode(), r.stderr)
# --html goes with --diff
h = os.path.join(t, "diff.html")
r = subprocess.run([env.analyze, "--html", h, "--diff", trace, trace], capture_output=True, timeout=120)
env.check("--html with --diff BASE NEW: no usage error", r.returncode != 2,
          "rc %d %r" % (r.returncode, r.stderr[-300:]))
r = subprocess.run([env.analyze, "--massif", os.path.join(t, "m"), "--diff", trace, trace],
                   capture_output=True, timeout=120)
env.eq("--massif with --diff: still a usage error", r.returncode, 2)

# ---- the check options: one parser, the same reasons from both commands ----
for args, why in ((["--fail-on", "bogus"], "--fail-on needs definite, possible, reachable or any, "
                   "not 'bogus'"),
                  (["--max-leaked", "10XB"], "--max-leaked needs a size (4096, 10KiB, 1.5MB), "
                   "not '10XB'"),
                  (["--max-peak", "-1"], "--max-peak needs a size (4096, 10KiB, 1.5MB), not '-1'")):
    a = subprocess.run([env.analyze, *args, trace], capture_output=True, text=True, timeout=60)
    c = subprocess.run([env.ctrack, *args, prog], capture_output=True, text=True, timeout=60, cwd=t)
    env.check("ctrack-analyze %s: exit 2, %s" % (" ".join(args), why),
              a.returncode == 2 and a.stderr.startswith("ctrack-analyze: " + why), a.stderr)
    env.check("ctrack %s: exit 2, %s" % (" ".join(args), why),
              c.returncode == 2 and c.stderr.startswith("ctrack: " + why + "\n"), c.stderr)
env.finish()
