#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The suites say what `meson test --suite/--no-suite` runs: the reader's 60 s fuzz run is in suite
# `fuzz` alone (`--no-suite fuzz` leaves it out, `--suite unit` does not wait for it), and
# scripts/test's plain build runs every suite, the fuzz run too (only its sanitizer build, which
# does not build the fuzzer, leaves suites out). Reads the build's meson-info and scripts/test;
# exit 1 on a breach, 77 (skipped) when this build has no fuzz run (no clang).
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
build = sys.argv[1]
with open(os.path.join(build, "meson-info", "intro-tests.json")) as f:
    tests = json.load(f)
failures = []
# meson names suites PROJECT:SUITE
suites = {t["name"]: {s.split(":")[-1] for s in t["suite"]} for t in tests}
with open(os.path.join(ROOT, "scripts", "test")) as f:
    plain = [line for line in f if re.match(r"\s*meson test -C build-test\b", line)]
if len(plain) != 1:
    failures.append("scripts/test: %d `meson test -C build-test` lines, want 1" % len(plain))
elif "--suite" in plain[0] or "--no-suite" in plain[0]:
    failures.append("scripts/test: the plain build's run leaves suites out: " + plain[0].strip())
if "fuzz" in suites and suites["fuzz"] != {"fuzz"}:
    failures.append("the fuzz test's suites are %s, want fuzz alone" % sorted(suites["fuzz"]))
for f in failures:
    print("FAIL " + f)
if failures:
    sys.exit(1)
if "fuzz" not in suites:
    print("SKIP this build has no fuzz test (-Dfuzz=disabled, or no clang)")
    sys.exit(77)
print("PASS the fuzz run is suite fuzz alone; scripts/test's plain build runs every suite")
