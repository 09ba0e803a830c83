# SPDX-License-Identifier: MIT
# An installed ctrack finds its shim wherever the installed tree is (issue 24, install): the build is
# installed with meson install --destdir into the scratch directory, the tree is moved elsewhere,
# and the moved ctrack traces a program with the shim beside it in ../LIBDIR/ctrack. CTRACK_SHIM
# names another shim; one that does not exist is a clear error (exit 2). `ctrack -h` is the help. The
# man pages go to share/man/man1 and the bash completions to share/bash-completion/completions.
import os
import shutil
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
meson, build_root, prog = env.progs
stage = env.fresh_dir("stage")
r = subprocess.run([meson, "install", "-C", build_root, "--destdir", stage, "--no-rebuild", "--quiet"],
                   capture_output=True, text=True, timeout=300)
env.eq("meson install --destdir", r.returncode, 0)
found = [os.path.join(d, f) for d, _, fs in os.walk(stage) for f in fs
         if f == "ctrack" and os.path.basename(d) == "bin"]  # not its bash completion
env.eq("one ctrack installed", len(found), 1)
if found:
    prefix = os.path.dirname(os.path.dirname(found[0]))
    moved = os.path.join(env.scratch, "moved")
    shutil.rmtree(moved, ignore_errors=True)
    shutil.move(prefix, moved)
    ctrack = os.path.join(moved, "bin", "ctrack")
    # The man pages and bash completions the build writes from the option tables (docs/meson.build).
    for rel in ("share/man/man1/ctrack.1", "share/man/man1/ctrack-analyze.1",
                "share/bash-completion/completions/ctrack",
                "share/bash-completion/completions/ctrack-analyze"):
        path = os.path.join(moved, rel)
        env.check("installed: " + rel, os.path.isfile(path) and os.path.getsize(path) > 0, path)
    page = os.path.join(moved, "share/man/man1/ctrack-analyze.1")
    if os.path.isfile(page):
        r = subprocess.run(["man", "-l", page], capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, MANWIDTH="100", PAGER="cat"))
        env.check("the installed ctrack-analyze(1) opens with man -l",
                  r.returncode == 0 and "--fail-on" in r.stdout, r.stderr[:300])
    d = env.fresh_dir("run")
    r = subprocess.run([ctrack, "-q", "-o", os.path.join(d, "t.zst"), prog], capture_output=True,
                       timeout=60, cwd=d)
    env.eq("the moved ctrack runs the program with its own shim", r.returncode, 0)
    rep = env.report(os.path.join(d, "t.zst"))
    env.check("the moved ctrack's trace has the program's allocations",
              rep and rep["summary"]["allocations"] > 0, str(rep and rep["summary"]))
    r = subprocess.run([ctrack, "-q", "-o", os.path.join(d, "u.zst"), prog], capture_output=True,
                       timeout=60, cwd=d, env=dict(os.environ, CTRACK_SHIM="/nonexistent/libctrack.so"))
    err = r.stderr.decode(errors="replace")
    env.eq("CTRACK_SHIM naming nothing: exit 2", r.returncode, 2)
    env.check("CTRACK_SHIM naming nothing: the error names it",
              "CTRACK_SHIM=/nonexistent/libctrack.so" in err, err)
r = subprocess.run([env.ctrack, "-h"], capture_output=True, text=True, timeout=60)
env.check("ctrack -h is the help", r.returncode == 0 and r.stdout.startswith("Usage: ctrack"),
          r.stdout[:200] + r.stderr)
env.finish()
