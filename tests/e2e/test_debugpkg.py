# SPDX-License-Identifier: MIT
# The symbol advice names the package that holds a module's missing debug info
# (tests/progs/zlib_user.c, built here with -lz): libz.so.1's owner as `dpkg -S` tells it, as
# PACKAGE-dbgsym (libc6's is libc6-dbg), with the distribution's debuginfod server (os-release), in
# --symbols (JSON and text) and in a trace's SYMBOLS section. A file no package owns keeps the generic
# advice. The answers are kept between runs in the debug cache, for the state of dpkg's lists then.
import json
import os
import re
import shutil
import subprocess
import sys
import time

import ctrack_test as ct

env = ct.Env(sys.argv)
src = env.progs[0]
SERVERS = {"debian": "https://debuginfod.debian.net", "ubuntu": "https://debuginfod.ubuntu.com"}


def run(what, cmd, ok=(0,)):
    print("run:", " ".join(cmd))
    r = subprocess.run(cmd, capture_output=True, text=True)
    env.check(what, r.returncode in ok, r.stderr[-500:])
    return r


def owner(path):
    """The package dpkg -S names for the file path is (compared by real path), or None."""
    r = run("dpkg -S " + os.path.basename(path), ["dpkg", "-S", os.path.basename(path)], ok=(0, 1))
    real = os.path.realpath(path)
    for line in r.stdout.splitlines():
        pkgs, _, listed = line.rpartition(": ")
        if os.path.realpath(listed) == real and "," not in pkgs:
            return pkgs.split(":")[0]
    return None


def distro():
    with open("/etc/os-release") as f:
        ids = [l.strip().split("=", 1)[1].strip('"') for l in f if l.startswith("ID=")]
    return ids[0] if ids else None


def symbols_json(what, binary):
    r = env.run_analyze(binary, "--json", "--symbols")
    env.check(what + ": --symbols runs", r.returncode in (0, 3), r.stderr[-300:])
    try:
        return json.loads(r.stdout).get("modules", [])
    except ValueError:
        return []


d = env.fresh_dir("build")
prog = os.path.join(d, "zlib_user")
run("compile zlib_user", ["gcc", "-O0", "-g", "-o", prog, src, "-lz"])
libz = [m for m in symbols_json("zlib_user", prog) if re.search(r"/libz\.so[.\d]*$", m["path"])]
if not env.check("--symbols lists libz", len(libz) == 1, repr(libz)):
    env.finish()
libz = libz[0]
pkg = owner(libz["path"])
env.check("dpkg owns " + libz["path"], pkg, "not a Debian system?")
debug_pkg = (pkg or "?") + ("-dbg" if pkg == "libc6" else "-dbgsym")
server = SERVERS.get(distro())
# The premise: libz's debug info is not installed here.
env.eq("libz has no line tables (%s not installed)" % debug_pkg, libz["line_tables"], False)
advice = libz.get("advice") or ""
print("advice:", advice)
env.check("--symbols: advice names " + debug_pkg, "install %s" % debug_pkg in advice, advice)
env.check("--symbols: advice names the debuginfod server",
          server and "DEBUGINFOD_URLS=" + server in advice, "%r for %r" % (advice, distro()))
env.check("--symbols: the loss comes first", advice.startswith("separate debug info not found: ")
          or advice.startswith("no debug info"), advice)
out = env.run_analyze(prog, "--symbols").stdout.decode()
env.check("--symbols text: advice names " + debug_pkg,
          re.search(r"libz\.so[.\d]*: .*install %s" % re.escape(debug_pkg), out), out)

# A trace: the SYMBOLS section.
r, rep = env.run_traced("trace", [prog])
env.eq("zlib_user: exit status", r.returncode, 0)
mods = [m for m in (rep or {}).get("modules", []) if re.search(r"/libz\.so[.\d]*$", m["path"])]
env.check("trace JSON: libz's advice names " + debug_pkg,
          mods and "install %s" % debug_pkg in (mods[0].get("advice") or ""), repr(mods))
text = env.run_analyze(os.path.join(env.scratch, "trace", "trace.zst")).stdout.decode()
env.check("trace text: SYMBOLS names " + debug_pkg,
          re.search(r"^SYMBOLS:\n(.*\n)*libz\.so[.\d]*: .*install %s" % re.escape(debug_pkg), text, re.M),
          text[-800:])

# No package owns a file of our own: the generic advice.
split = os.path.join(d, "split")
shutil.copy(prog, split)
run("only-keep-debug", ["objcopy", "--only-keep-debug", split, split + ".debug"])
run("strip-debug", ["objcopy", "--strip-debug", "--add-gnu-debuglink=" + split + ".debug", split])
os.remove(split + ".debug")
GENERIC = "install the debug package (-dbgsym), pass --debug-dir or set DEBUGINFOD_URLS"
own = [m for m in symbols_json("split", split) if m["path"].endswith("/split")]
env.check("own split binary: generic advice", len(own) == 1 and (own[0].get("advice") or "").endswith(
    GENERIC), repr(own))

# The answers kept between runs (analyzer/packages.h): the cache's file dpkg-owners, of the lists'
# directory as it is, with a line per file looked up (a package or "-" for none; the real path or
# "-" for the path itself). The file's layout is the one packages.c's comment gives.
INFO = "/var/lib/dpkg/info"
cache = env.fresh_dir("cache")
kept = os.path.join(cache, "dpkg-owners")
while time.time() - os.stat(INFO).st_mtime < 3:  # a directory changed just now is not trusted
    time.sleep(1)


def key(st):
    return "ctrack dpkg owners 1 %d %d %d %d" % (st.st_dev, st.st_ino, st.st_mtime_ns // 10**9,
                                                  st.st_mtime_ns % 10**9)


def advice_with_cache(binary, suffix):
    """The advice --symbols gives for binary's module whose path ends with suffix, with the cache."""
    cmd = [env.analyze, "--json", "--symbols", binary]
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, CTRACK_CACHE_DIR=cache))
    env.check("--symbols with the cache runs", r.returncode in (0, 3), r.stderr[-300:])
    mods = [m for m in json.loads(r.stdout or "{}").get("modules", []) if m["path"].endswith(suffix)]
    return (mods[0].get("advice") or "") if len(mods) == 1 else repr(mods)


def kept_lines():
    with open(kept) as f:
        return f.read().splitlines()


real = os.path.realpath(libz["path"])
libz_line = "%s\t%s\t%s" % (debug_pkg, libz["path"], real if real != libz["path"] else "-")
env.check("first run: advice names " + debug_pkg,
          "install %s" % debug_pkg in advice_with_cache(prog, os.path.basename(libz["path"])), "")
if env.check("first run: the answers are kept", os.path.exists(kept), os.listdir(cache)):
    env.eq("the kept file is the user's alone", oct(os.stat(kept).st_mode & 0o777), "0o600")
    lines = kept_lines()
    env.eq("the kept answers are of the lists' directory as it is", lines[0], key(os.stat(INFO)))
    env.check("libz's answer is kept", libz_line in lines[1:], repr(lines))
# Kept answers are taken: a made-up package for libz in a file of the same directory.
fake = libz_line.replace(debug_pkg, "zlib-made-up-dbgsym", 1)
with open(kept, "w") as f:
    f.write(key(os.stat(INFO)) + "\n" + fake + "\n")
env.check("a kept answer is taken (no list read)",
          "install zlib-made-up-dbgsym" in advice_with_cache(prog, os.path.basename(libz["path"])), "")
# Answers of another state of the directory are not: dpkg changed a list since.
st = os.stat(INFO)
with open(kept, "w") as f:
    f.write(key(st).rsplit(" ", 1)[0] + " %d\n" % (st.st_mtime_ns % 10**9 + 1) + fake + "\n")
env.check("answers kept for another state of the lists are not taken",
          "install %s" % debug_pkg in advice_with_cache(prog, os.path.basename(libz["path"])), "")
env.eq("they are replaced by the answers of the state now", kept_lines()[:1], [key(os.stat(INFO))])
# A file no package owns: "none" is kept too, and taken.
env.check("own split binary with the cache: generic advice",
          advice_with_cache(split, "/split").endswith(GENERIC), "")
env.check("its answer (no package) is kept", "-\t%s\t-" % split in kept_lines(), repr(kept_lines()))
env.check("own split binary, answered by the kept file: generic advice",
          advice_with_cache(split, "/split").endswith(GENERIC), "")
# A symlink in its place is neither read nor written through.
os.remove(kept)
decoy = os.path.join(d, "decoy")
with open(decoy, "w") as f:
    f.write(key(os.stat(INFO)) + "\n" + fake + "\n")
os.symlink(decoy, kept)
env.check("a symlink in the cache is not read",
          "install %s" % debug_pkg in advice_with_cache(prog, os.path.basename(libz["path"])), "")
env.check("nor written through", open(decoy).read().endswith(fake + "\n") and not os.path.islink(kept), "")
env.finish()
