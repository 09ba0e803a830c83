#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The include rules of ARCHITECTURE.md, checked: the shim (preload/) never includes analyzer or
# launcher code, the analyzer never includes shim or launcher code, common/ includes neither, and
# the shim's hot-path header never pulls in the writer side. Reads the sources; exit 1 on a breach.
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FOLDERS = {"preload", "analyzer", "launcher", "common"}
# folder -> folders whose headers it may include (besides its own, include/ and system headers)
ALLOWED = {
    "preload": {"common"},
    "analyzer": {"common"},
    "launcher": {"common", "analyzer"},
    "common": set(),
}
# header -> headers it must not include (directly)
FORBIDDEN_PAIRS = {("preload/shim.h", "writer.h"), ("preload/shim.h", "match.h")}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def headers_by_name():
    """Every project header's file name -> the folders that hold one of that name."""
    where = {}
    for folder in FOLDERS:
        for name in os.listdir(os.path.join(ROOT, folder)):
            if name.endswith(".h"):
                where.setdefault(name, set()).add(folder)
    return where


def main():
    where = headers_by_name()
    breaches = []
    for folder in sorted(FOLDERS):
        for name in sorted(os.listdir(os.path.join(ROOT, folder))):
            if not name.endswith((".c", ".h")):
                continue
            path = f"{folder}/{name}"
            with open(os.path.join(ROOT, path), encoding="utf-8") as f:
                text = f.read()
            for inc in INCLUDE.findall(text):
                if "/" in inc and not inc.startswith("ctrack/"):
                    breaches.append(f"{path}: includes '{inc}' by path")
                    continue
                if (path, inc) in FORBIDDEN_PAIRS:
                    breaches.append(f"{path}: the hot-path header includes '{inc}'")
                owners = where.get(os.path.basename(inc), set())
                if folder in owners or not owners:
                    continue  # its own folder's header, include/ctrack/, the build's config, a system header
                if not owners & ALLOWED[folder]:
                    breaches.append(f"{path}: includes '{inc}' of {', '.join(sorted(owners))}/")
            for other in FOLDERS - {folder}:
                if re.search(rf'#\s*include\s+"[^"]*{other}/', text):
                    breaches.append(f"{path}: reaches into {other}/")
    for b in breaches:
        print(b)
    print(f"{len(breaches)} include rule breach(es)" if breaches else "include rules hold")
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
