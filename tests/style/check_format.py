#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Every C and C++ source of the tree follows the checked-in .clang-format: runs
# `clang-format --dry-run --Werror` on each and names the files that do not (fix: clang-format -i).
# Usage: check_format.py CLANG_FORMAT
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FOLDERS = ("common", "preload", "analyzer", "launcher", "include", "tests")
SUFFIXES = (".c", ".h", ".cpp")


def sources():
    for folder in FOLDERS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, folder)):
            dirnames[:] = sorted(d for d in dirnames if d != "node_modules")  # npm's, not ours
            for name in sorted(filenames):
                if name.endswith(SUFFIXES):
                    yield os.path.join(dirpath, name)


def main():
    clang_format = sys.argv[1] if len(sys.argv) > 1 else "clang-format"
    files = list(sources())
    r = subprocess.run([clang_format, "--dry-run", "--Werror", "--style=file"] + files,
                       cwd=ROOT, capture_output=True, text=True)
    bad = {}  # file -> its first complaint, "path:line:col: error: code should be clang-formatted"
    for line in r.stderr.splitlines():
        path, sep, rest = line.partition(": error: ")
        if sep:
            bad.setdefault(path.rsplit(":", 2)[0], path)
    if r.returncode and not bad:
        print(r.stderr.strip() or f"{clang_format} failed with status {r.returncode}")
        return 1
    for first in bad.values():
        print(f"{os.path.relpath(first, ROOT)}: not as .clang-format says")
    print(f"{len(files) - len(bad)} of {len(files)} files formatted as .clang-format says")
    if bad:
        print("fix with: clang-format -i FILE")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
