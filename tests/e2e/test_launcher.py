# SPDX-License-Identifier: MIT
# End-to-end checks of the launcher `ctrack`: exit codes, stdio, errors, trace file safety, options.
# Usage: test_launcher.py CTRACK_EXE SCRATCH_DIR. Builds its C programs with `cc` into SCRATCH_DIR.
import os
import shutil
import signal
import stat
import subprocess
import sys
import time

CTRACK = os.path.abspath(sys.argv[1])
SCRATCH = os.path.abspath(sys.argv[2])
results = []

PROGS = {
    # exits with the status given as argv[1]
    "exitcode": '#include <stdlib.h>\nint main(int c, char **v) { return atoi(v[1]); }\n',
    # kills itself with the signal number given as argv[1]
    "killself": '#include <signal.h>\n#include <stdlib.h>\n'
                'int main(int c, char **v) { raise(atoi(v[1])); return 0; }\n',
    # copies stdin to stdout and writes a fixed line to stderr, with raw syscalls only
    "copy": '#include <unistd.h>\nint main(void) { char b[4096]; ssize_t n;\n'
            '  while ((n = read(0, b, sizeof b)) > 0) write(1, b, n);\n'
            '  write(2, "to-stderr\\n", 10); return 0; }\n',
    # prints its pid, argv (one per line) and LD_PRELOAD
    "show": '#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\n'
            'int main(int c, char **v) { printf("pid=%d\\n", (int)getpid());\n'
            '  for (int i = 0; i < c; i++) printf("argv[%d]=%s\\n", i, v[i]);\n'
            '  const char *p = getenv("LD_PRELOAD"); printf("LD_PRELOAD=%s\\n", p ? p : "(unset)");\n'
            '  return 0; }\n',
    # creates the file argv[1]: proves the program ran
    "touch": '#include <fcntl.h>\n#include <unistd.h>\n'
             'int main(int c, char **v) { close(open(v[1], O_WRONLY | O_CREAT, 0644)); return 0; }\n',
    # says it is ready, then waits to be signalled
    "wait": '#include <unistd.h>\nint main(void) { write(1, "ready\\n", 6); for (;;) pause(); }\n',
    # 10 blocks of 1000 bytes, 7 freed: exact figures for the closing summary
    "leak": '#include <stdlib.h>\nint main(void) { void *p[10];\n'
            '  for (int i = 0; i < 10; i++) p[i] = malloc(1000);\n'
            '  for (int i = 0; i < 7; i++) free(p[i]);\n'
            '  return p[9] == 0; }\n',
}


def check(name, ok, detail=""):
    results.append(ok)
    print(("PASS " if ok else "FAIL ") + name + ("" if ok or not detail else ": " + detail))


def build(name, src, extra=()):
    c = os.path.join(SCRATCH, name + ".c")
    with open(c, "w") as f:
        f.write(src)
    out = os.path.join(SCRATCH, name)
    r = subprocess.run(["cc", "-O0", "-o", out, c, *extra], capture_output=True, text=True)
    return out if r.returncode == 0 else None


def no_core():
    import resource
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def fresh_dir(name):
    d = os.path.join(SCRATCH, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def run(args, cwd, stdin=None, env=None, umask=None):
    def pre():
        no_core()
        if umask is not None:
            os.umask(umask)
    return subprocess.run([CTRACK, *args], cwd=cwd, input=stdin, capture_output=True,
                          env=env, preexec_fn=pre, timeout=60)


def traces(d):
    return sorted(f for f in os.listdir(d) if f.startswith("ctrack.") and f.endswith(".zst"))


def check_status(p):
    d = fresh_dir("status")
    r = run(["-q", p["exitcode"], "3"], d)
    check("exit status 3 passes through", r.returncode == 3, f"got {r.returncode}")
    r = run(["-q", p["exitcode"], "0"], d)
    check("exit status 0 passes through", r.returncode == 0, f"got {r.returncode}")
    for sig, want in ((signal.SIGKILL, 137), (signal.SIGABRT, 134)):
        r = run(["-q", p["killself"], str(int(sig))], d)
        check(f"killed by {sig.name} gives {want}", r.returncode == want, f"got {r.returncode}")


def check_stdio(p):
    d = fresh_dir("stdio")
    data = bytes(range(256)) * 1000
    r = run(["-q", "cat"], d, stdin=data)
    check("stdin to stdout through cat is byte-exact", r.returncode == 0 and r.stdout == data,
          f"rc {r.returncode}, {len(r.stdout)} bytes")
    r = run(["-q", p["copy"]], d, stdin=b"abc\n")
    check("program's stdout untouched", r.stdout == b"abc\n", repr(r.stdout))
    check("program's stderr untouched (-q adds nothing)", r.stderr == b"to-stderr\n", repr(r.stderr))
    r = run([p["copy"]], d, stdin=b"")
    check("closing message goes to stderr only", r.stdout == b"" and
          r.stderr.startswith(b"to-stderr\nctrack: trace written to ctrack.copy."), repr(r.stderr))


def check_not_runnable(p):
    d = fresh_dir("notrun")
    r = run(["no-such-program-xyz"], d)
    check("unknown command gives 127 + message",
          r.returncode == 127 and r.stderr == b"ctrack: no-such-program-xyz: command not found\n",
          f"rc {r.returncode} {r.stderr!r}")
    r = run(["./missing"], d)
    check("missing path gives 127 + message",
          r.returncode == 127 and r.stderr == b"ctrack: ./missing: No such file or directory\n",
          f"rc {r.returncode} {r.stderr!r}")
    with open(os.path.join(d, "plain"), "w") as f:
        f.write("#!/bin/sh\nexit 0\n")
    os.chmod(os.path.join(d, "plain"), 0o644)
    r = run(["./plain"], d)
    check("non-executable file gives 126 + message",
          r.returncode == 126 and r.stderr == b"ctrack: ./plain: Permission denied\n",
          f"rc {r.returncode} {r.stderr!r}")
    os.mkdir(os.path.join(d, "adir"))
    r = run(["./adir"], d)
    check("directory gives 126 + message",
          r.returncode == 126 and r.stderr == b"ctrack: ./adir: Is a directory\n",
          f"rc {r.returncode} {r.stderr!r}")
    check("no trace file left by failed commands", traces(d) == [], str(traces(d)))


def check_static():
    # -static-pie has a PT_DYNAMIC (it relocates itself) but no PT_INTERP: no loader, no LD_PRELOAD.
    for kind in ("static", "static-pie"):
        d = fresh_dir(kind)
        exe = build(kind.replace("-", "_") + "_prog", PROGS["touch"], ["-" + kind])
        check(f"cc -{kind} builds a static program", exe is not None, "is libc6-dev (libc.a) installed?")
        if not exe:
            continue
        r = run([exe, "ran"], d)
        want = f"ctrack: {exe} is statically linked; LD_PRELOAD cannot trace it (link it dynamically)\n"
        check(f"{kind} program refused with message + exit 1",
              r.returncode == 1 and r.stderr.decode() == want, f"rc {r.returncode} {r.stderr!r}")
        check(f"{kind} program not run, no trace file", os.listdir(d) == [], str(os.listdir(d)))
    # The loader itself has no PT_INTERP either, but runs the program it is given, shim and all.
    d = fresh_dir("loader")
    loader = os.path.realpath("/lib64/ld-linux-x86-64.so.2")
    r = run([loader, "/bin/true"], d)
    check("the dynamic loader run directly is traced", r.returncode == 0 and len(traces(d)) == 1,
          f"rc {r.returncode} {r.stderr!r} {os.listdir(d)}")


def check_output_file(p):
    d = fresh_dir("output")
    out = os.path.join(d, "t.zst")
    with open(out, "w") as f:
        f.write("precious")
    r = run(["-o", out, p["touch"], "ran"], d)
    check("-o to an existing file is refused",
          r.returncode == 1 and r.stderr.decode() ==
          f"ctrack: cannot create '{out}': File exists (use --force to overwrite)\n",
          f"rc {r.returncode} {r.stderr!r}")
    check("existing file untouched, program not run",
          open(out).read() == "precious" and not os.path.exists(os.path.join(d, "ran")))
    r = run(["--force", "-q", "-o", out, p["touch"], "ran"], d)
    st = os.stat(out)
    check("--force overwrites", r.returncode == 0 and open(out, "rb").read(8) != b"precious"
          and os.path.exists(os.path.join(d, "ran")), f"rc {r.returncode} {r.stderr!r}")
    check("--force makes a fresh 0600 file", stat.S_IMODE(st.st_mode) == 0o600, oct(st.st_mode))

    target = os.path.join(d, "target")
    with open(target, "w") as f:
        f.write("target")
    link = os.path.join(d, "link.zst")
    os.symlink(target, link)
    r = run(["-o", link, p["touch"], "ran2"], d)
    check("-o through a symlink is refused", r.returncode == 1 and not os.path.exists(os.path.join(d, "ran2")),
          f"rc {r.returncode} {r.stderr!r}")
    check("symlink target untouched", open(target).read() == "target" and os.path.islink(link))
    dangling = os.path.join(d, "dangling.zst")
    os.symlink(os.path.join(d, "nowhere"), dangling)
    r = run(["-o", dangling, p["touch"], "ran3"], d)
    check("-o through a dangling symlink is refused, target not created",
          r.returncode == 1 and not os.path.exists(os.path.join(d, "nowhere")), f"rc {r.returncode}")
    r = run(["--force", "-q", "-o", link, p["exitcode"], "0"], d)
    check("--force replaces the symlink itself, never its target",
          r.returncode == 0 and not os.path.islink(link) and open(target).read() == "target",
          f"rc {r.returncode} {r.stderr!r}")


def check_default_name(p):
    d = fresh_dir("default")
    r = run(["-q", p["show"]], d, umask=0)
    pid = r.stdout.decode().splitlines()[0].split("=")[1] if r.stdout else "?"
    name = f"ctrack.show.{pid}.zst"
    check("default name is ctrack.NAME.PID.zst with the traced pid", traces(d) == [name],
          f"{traces(d)} vs {name}")
    if traces(d) == [name]:
        mode = stat.S_IMODE(os.stat(os.path.join(d, name)).st_mode)
        check("trace file mode is 0600 (even with umask 0)", mode == 0o600, oct(mode))


def check_argv(p):
    d = fresh_dir("argv")
    shutil.copy(p["show"], os.path.join(d, "show"))
    r = run(["-q", "./show", "-q", "--depth", "5", "--", "x y"], d)
    want = "argv[0]=./show\nargv[1]=-q\nargv[2]=--depth\nargv[3]=5\nargv[4]=--\nargv[5]=x y\n"
    check("options stop at the program; argv passed as typed", want in r.stdout.decode(), r.stdout.decode())
    r = run(["-q", "--", "./show", "--help"], d)
    check("'--' ends ctrack's options", "argv[1]=--help\n" in r.stdout.decode(), r.stdout.decode())
    env = dict(os.environ, PATH=d + ":" + os.environ.get("PATH", "/usr/bin:/bin"))
    r = run(["-q", "show", "a"], d, env=env)
    check("PATH search, argv[0] as typed", "argv[0]=show\nargv[1]=a\n" in r.stdout.decode(),
          f"rc {r.returncode} {r.stderr!r}")
    script = os.path.join(d, "script.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\necho script-ran \"$0\"\nexit 4\n")
    os.chmod(script, 0o755)
    r = run(["-q", "./script.sh"], d)
    check("#! scripts run", r.returncode == 4 and r.stdout == b"script-ran ./script.sh\n",
          f"rc {r.returncode} {r.stdout!r}")


def check_signals(p):
    d = fresh_dir("signals")
    for sig, want in ((signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGUSR1, 138)):
        proc = subprocess.Popen([CTRACK, "-q", p["wait"]], cwd=d, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, preexec_fn=no_core)
        ready = proc.stdout.readline() == b"ready\n"
        proc.send_signal(sig)
        rc = proc.wait(timeout=30)
        proc.stdout.close()
        proc.stderr.close()
        check(f"{sig.name} to ctrack is forwarded ({want})", ready and rc == want, f"rc {rc}")
    # A terminal's ^C goes to the whole process group: the program dies of it, ctrack does not.
    proc = subprocess.Popen([CTRACK, "-q", p["wait"]], cwd=d, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, preexec_fn=no_core)
    ready = proc.stdout.readline() == b"ready\n"
    os.killpg(proc.pid, signal.SIGINT)
    rc = proc.wait(timeout=30)
    proc.stdout.close()
    proc.stderr.close()
    check("SIGINT to the process group: program's status 130", ready and rc == 130, f"rc {rc}")


def check_options():
    d = fresh_dir("options")
    r = run(["--version"], d)
    out = r.stdout.decode()
    check("--version", r.returncode == 0 and out.startswith("ctrack ") and out.count("\n") == 1
          and out.split()[1][0].isdigit(), repr(out))
    r = run(["--help"], d)
    check("--help on stdout, exit 0", r.returncode == 0 and r.stdout.startswith(b"Usage: ctrack")
          and b"--follow-children" in r.stdout and r.stderr == b"", f"rc {r.returncode}")
    check("--help gives the depth range of common/rules.h", b"(1..256, default 64)" in r.stdout,
          r.stdout.decode())
    for args, what in ((["--bogus", "true"], "unknown long option"), (["-x", "true"], "unknown short option"),
                       (["-o"], "missing argument"), (["--depth"], "missing depth"), ([], "no program")):
        r = run(args, d)
        lines = r.stderr.decode().splitlines()
        check(f"bad usage ({what}) gives 2 + one line + hint", r.returncode == 2 and len(lines) == 2
              and lines[0].startswith("ctrack: ") and "--help" in lines[1] and r.stdout == b"",
              f"rc {r.returncode} {r.stderr!r}")
    # The shim keeps at most 256 frames: a larger --depth is refused, never silently clamped.
    for depth in ("0", "257", "1024", "abc", "12x", "", "-5", "+8", " 8"):
        r = run(["--depth", depth, "true"], d)
        want = ["ctrack: --depth: expected a number from 1 to 256, got '%s'" % depth,
                "Try 'ctrack --help' for more information."]
        check(f"--depth {depth!r} refused: exit 2, the range in one line + hint",
              r.returncode == 2 and r.stderr.decode().splitlines() == want and r.stdout == b"",
              f"rc {r.returncode} {r.stderr!r}")
    check("bad usage leaves no trace file", traces(d) == [], str(traces(d)))


# ---- the checks below need the real shim (libctrack.so writing traces) ----

def check_with_shim(p):
    d = fresh_dir("shim")
    user_lib = build("libuser.so", "int ct_user_lib_marker;\n", ["-shared", "-fPIC"])
    env = dict(os.environ, LD_PRELOAD=user_lib)
    r = run(["-q", p["show"]], d, env=env)
    check("[real shim] program sees exactly the user's LD_PRELOAD",
          f"LD_PRELOAD={user_lib}\n" in r.stdout.decode(), r.stdout.decode())
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    r = run(["-q", p["show"]], d, env=env)
    check("[real shim] LD_PRELOAD unset when the user had none",
          "LD_PRELOAD=(unset)\n" in r.stdout.decode(), r.stdout.decode())

    out = os.path.join(d, "leak.zst")
    r = run(["-o", out, p["leak"]], d)
    lines = r.stderr.decode().splitlines()
    size = os.path.getsize(out) if os.path.exists(out) else 0
    check("[real shim] trace written, non-empty", r.returncode == 0 and size > 0, f"size {size}")
    check("[real shim] closing message: where", len(lines) == 4 and
          lines[0].startswith(f"ctrack: trace written to {out} ("), repr(lines))
    check("[real shim] closing message: exact summary",
          len(lines) == 4 and lines[1] == "ctrack: lost 3,000 bytes in 3 blocks (definitely lost); "
          "10 allocations, 10,000 bytes allocated, peak 10,000 bytes", repr(lines))
    check("[real shim] closing message: analyzer command",
          len(lines) == 4 and lines[2].startswith("ctrack: analyze with: ") and lines[2].endswith(" " + out)
          and "ctrack-analyze" in lines[2], repr(lines))
    analyzer = lines[2][len("ctrack: analyze with: "):-len(" " + out)] if len(lines) == 4 else None
    html = out[:-len(".zst")] + ".html"
    check("[real shim] closing message: HTML report command",
          len(lines) == 4 and lines[3] == f"ctrack: HTML report with: {analyzer} --html={html} {out}", repr(lines))


def main():
    os.makedirs(SCRATCH, exist_ok=True)
    progs = {}
    for name, src in PROGS.items():
        progs[name] = build(name, src)
        if not progs[name]:
            print(f"FAIL cannot build {name} with cc")
            return 1
    check_status(progs)
    check_stdio(progs)
    check_not_runnable(progs)
    check_static()
    check_output_file(progs)
    check_default_name(progs)
    check_argv(progs)
    check_signals(progs)
    check_options()
    check_with_shim(progs)
    failed = results.count(False)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
