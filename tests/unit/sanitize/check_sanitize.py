#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# -Dsanitize=true does what it says, so that CI's sanitizer run cannot quietly become a plain one:
# ctrack, ctrack-analyze and the unit-test programs load AddressSanitizer and UndefinedBehaviorSanitizer
# (their runtimes start: ASAN_OPTIONS=help=1 lists ASan's flags); the shim loads neither, nor
# libstdc++, and has no TLS segment, yet its code calls UBSan's checks, which its own runtime
# (preload/ubsan.c) answers with the kind and the source line, then SIGABRT.
# Usage: check_sanitize.py SHIM UB_TRIGGER UB_TRIGGER_SOURCE PROGRAM... (the programs that carry ASan)
import os
import re
import signal
import subprocess
import sys

failures = 0


def check(name, ok, detail=""):
    global failures
    failures += not ok
    print(("PASS " if ok else "FAIL ") + name + ("" if ok or not detail else ": " + str(detail)), flush=True)


def needed(binary):
    out = subprocess.run(["readelf", "-dW", binary], capture_output=True, text=True, check=True).stdout
    return re.findall(r"\(NEEDED\).*\[(.*)\]", out)


def carries(binary, lib, symbol):
    """binary loads lib (gcc links the runtimes as shared libraries) or defines its symbol (clang
    links them in)."""
    if any(l.startswith(lib + ".so") for l in needed(binary)):
        return True
    syms = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True).stdout
    return re.search(r"\s%s$" % symbol, syms, re.M) is not None


shim, trigger, source, programs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]

for prog in programs:
    name = os.path.basename(prog)
    check(name + " carries ASan's and UBSan's runtimes",
          carries(prog, "libasan", "__asan_init") and carries(prog, "libubsan", "__ubsan_handle_add_overflow_abort"),
          needed(prog))
    r = subprocess.run([prog, "--version"], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, ASAN_OPTIONS="help=1"))
    check(name + ": ASan's runtime starts (help=1 lists its flags)",
          "Available flags for AddressSanitizer" in r.stderr, r.stderr[-300:])

libs = needed(shim)
check("the shim loads no sanitizer runtime nor libstdc++",
      not [l for l in libs if re.match(r"lib(asan|ubsan|stdc\+\+)", l)], libs)
segments = subprocess.run(["readelf", "-lW", shim], capture_output=True, text=True, check=True).stdout
check("the shim has no TLS segment", "LOAD" in segments and not re.search(r"^\s*TLS\b", segments, re.M))
exported = subprocess.run(["nm", "-D", "--defined-only", shim], capture_output=True, text=True, check=True).stdout
check("the shim exports no __ubsan_ name", "__ubsan_" not in exported)
code = subprocess.run(["objdump", "-d", "--no-show-raw-insn", shim], capture_output=True, text=True,
                      check=True).stdout
calls = len(re.findall(r"call\s+\S+ <__ubsan_handle_\w+>", code))
check("the shim's code calls UBSan's checks (%d calls)" % calls, calls > 100, calls)

with open(source) as f:
    lines = {m.group(1): n for n, text in enumerate(f, 1) for m in [re.search(r"LINE (\w+)", text)] if m}
for kind, what in (("add", "signed integer overflow in an addition"),
                   ("shift", "shift exponent or base out of bounds")):
    r = subprocess.run([trigger, kind], capture_output=True, text=True, timeout=60)
    check(kind + ": SIGABRT", r.returncode == -signal.SIGABRT, r.returncode)
    # The file as gcc was given it, relative to the build directory.
    want = r"libctrack\.so: UndefinedBehaviorSanitizer: %s at \S*/%s:%d:\d+\n$" % (
        re.escape(what), re.escape(os.path.basename(source)), lines[kind])
    check(kind + ": the kind and the line on stderr", re.match(want, r.stderr), "%r, want %r" % (r.stderr, want))
print("%d failures" % failures)
sys.exit(1 if failures else 0)
