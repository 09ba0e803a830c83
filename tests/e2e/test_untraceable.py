# SPDX-License-Identifier: MIT
# Programs ctrack cannot trace (fully), each told in one line before the run, never a silent empty or
# wrong trace: a set-user-ID or set-group-ID copy of a test program (refused: exit 1, not run; needs
# root to give the copy to another user), a program that defines malloc itself (tests/progs/
# own_malloc.c: a warning, then the run with the program's own status and output), Go programs
# (tests/progs/go_alloc.go with cgo: a warning; go_pure.go, static: refused). A plain program and a
# root-owned set-user-ID program run by root get no word.
import os
import shutil
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
plain, own_malloc, go_alloc, go_pure = env.progs  # plain: tests/progs/hooks.c
CANNOT = "the dynamic loader ignores LD_PRELOAD for it, so ctrack cannot trace it"


def run(label, prog, *args):
    d = env.fresh_dir(label)
    trace = os.path.join(d, "trace.zst")
    r = subprocess.run([env.ctrack, "-q", "-o", trace, prog, *args], cwd=d, capture_output=True,
                       timeout=60, preexec_fn=ct.no_core)
    return r, trace


def refused(label, prog, why):
    r, trace = run(label, prog)
    env.eq(label + ": exit 1", r.returncode, 1)
    env.eq(label + ": one line saying why", r.stderr.decode(errors="replace"),
           "ctrack: %s: %s\n" % (prog, why))
    env.check(label + ": not run, no trace", not os.path.exists(trace))


def warned(label, prog, why, stdout=None):
    r, trace = run(label, prog)
    env.eq(label + ": the program's status", r.returncode, 0)
    env.eq(label + ": one warning before the run", r.stderr.decode(errors="replace"),
           "ctrack: warning: %s: %s\n" % (prog, why))
    if stdout is not None:
        env.eq(label + ": the program's output", r.stdout, stdout)
    env.check(label + ": traced all the same", os.path.exists(trace))


def silent(label, prog):
    r, trace = run(label, prog)
    env.eq(label + ": the program's status", r.returncode, 0)
    env.eq(label + ": no word from ctrack", r.stderr, b"")
    env.check(label + ": a trace with something in it",
              os.path.exists(trace) and os.path.getsize(trace) > 0)


silent("plain program", plain)

# ---- set-ID ----
copies = env.fresh_dir("copies")
nosuid = os.statvfs(copies).f_flag & os.ST_NOSUID
if os.geteuid() != 0:
    print("SKIP the set-ID part: giving a copy to another user needs root")
elif nosuid:
    print("SKIP the set-ID part: the scratch directory is on a nosuid file system")
else:
    for kind, bit, owner in (("set-user-ID", 0o4000, (65534, -1)), ("set-group-ID", 0o2000, (-1, 65534))):
        copy = os.path.join(copies, kind)
        shutil.copy(plain, copy)
        os.chown(copy, *owner)
        os.chmod(copy, 0o755 | bit)
        what = "uid" if bit == 0o4000 else "gid"
        advice = ("trace a copy without the bit, or run ctrack as uid 65534" if bit == 0o4000
                  else "trace a copy without the bit")
        refused("%s copy" % kind, copy,
                "it is %s (it runs as %s 65534): %s (%s)" % (kind, what, CANNOT, advice))
        os.chmod(copy, 0o755)  # leave no set-ID program behind in the build tree
    mine = os.path.join(copies, "root-setuid")
    shutil.copy(plain, mine)
    os.chmod(mine, 0o4755)  # root's, run by root: no change of user, LD_PRELOAD holds
    silent("root-owned set-user-ID copy run by root", mine)
    os.chmod(mine, 0o755)

# ---- an allocator of its own ----
warned("own malloc", own_malloc,
       "it defines malloc, free, calloc and realloc itself (an allocator linked into the program, "
       "such as a static jemalloc or tcmalloc): those calls never reach ctrack, so the trace misses "
       "them", stdout=b"done\n")

# ---- Go ----
home = env.fresh_dir("go")
go_env = dict(os.environ, HOME=home, GOCACHE=os.path.join(home, "cache"),
              GOPATH=os.path.join(home, "path"), GO111MODULE="off", GOTOOLCHAIN="local")
if env.check("go is installed (golang-go)", shutil.which("go") is not None):
    built = {}
    for name, src, cgo in (("go_alloc", go_alloc, "1"), ("go_pure", go_pure, "0")):
        out = os.path.join(home, name)
        b = subprocess.run(["go", "build", "-o", out, src], capture_output=True, text=True,
                           env=dict(go_env, CGO_ENABLED=cgo), timeout=300)
        if env.check("go build " + name, b.returncode == 0, b.stderr):
            built[name] = out
    if "go_alloc" in built:
        warned("Go with cgo", built["go_alloc"],
               "it is a Go program: Go's allocator does not call malloc, so the trace holds only "
               "the allocations of its C code (cgo and C libraries)")
    if "go_pure" in built:
        r, trace = run("Go without cgo", built["go_pure"])
        env.eq("Go without cgo: refused as static", (r.returncode, r.stderr.decode()),
               (1, "ctrack: %s is statically linked; LD_PRELOAD cannot trace it (link it "
                   "dynamically)\n" % built["go_pure"]))
env.finish()
