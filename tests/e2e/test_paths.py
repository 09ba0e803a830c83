# SPDX-License-Identifier: MIT
# Source paths against the compilation directory (issue 24, names): a file the compiler was given by a
# relative path (meson compiles ../tests/demo/demo.c from its build directory) is shown by the absolute
# path it has under DW_AT_comp_dir when a file is there (the bundled demo, tests/demo/demo.c, built
# by meson; a program compiled in a temporary directory as ../src/prog.c); when nothing is there any
# more (the source removed), the path stays as recorded. In the text report and in JSON alike.
import os
import shutil
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
demo, demo_src, prog_src = env.progs
demo_src = os.path.normpath(os.path.abspath(demo_src))


def source_files(rep, name):
    """Every file named by a frame of rep's lists whose base name is name."""
    return {f["file"] for k in ("leaks", "peak", "allocations", "temporary") for e in rep[k]
            for f in e["frames"] if f["file"] and os.path.basename(f["file"]) == name}


# The demo, as meson built it: relative in its DWARF, absolute in the report.
trace = env.trace("demo", [demo])
rep = env.report(trace)
if rep:
    env.eq("demo: demo.c by its absolute path", source_files(rep, "demo.c"), {demo_src})
text = env.run_analyze(trace).stdout.decode(errors="replace")
env.check("demo: text names %s" % demo_src, " at %s:" % demo_src in text and "../tests/demo" not in text,
          text[:2000])

# A program compiled in a temporary directory from its build directory: src/prog.c as ../src/prog.c.
top = env.fresh_dir("tree")
os.makedirs(os.path.join(top, "src"))
os.makedirs(os.path.join(top, "build"))
shutil.copy(prog_src, os.path.join(top, "src", "prog.c"))
cmd = ["cc", "-O0", "-g", "-fno-omit-frame-pointer", "-o", "prog", os.path.join("..", "src", "prog.c")]
r = subprocess.run(cmd, cwd=os.path.join(top, "build"), capture_output=True, text=True)
env.check("built in %s with %s" % (top, " ".join(cmd)), r.returncode == 0, r.stderr)
trace = env.trace("tree-trace", [os.path.join(top, "build", "prog")])
want = os.path.join(os.path.realpath(top), "src", "prog.c")
rep = env.report(trace)
if rep:
    env.eq("temporary tree: prog.c by its absolute path", source_files(rep, "prog.c"), {want})
# Gone from there: the recorded path, as it was.
shutil.rmtree(os.path.join(top, "src"))
rep = env.report(trace)
if rep:
    env.eq("source removed: prog.c as recorded", source_files(rep, "prog.c"), {"../src/prog.c"})
env.finish()
