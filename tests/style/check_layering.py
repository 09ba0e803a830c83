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
# The writer's stages that link and are tested alone (tests/unit/match): they take the event
# encoding and sequence counters from event.h and memory from arena.h, never the tracker's header.
ALONE = {"preload/match.c", "preload/maps.c", "preload/seq.c", "preload/arena.c", "preload/event.h",
         "preload/arena.h"}
FORBIDDEN_PAIRS |= {(path, "shim.h") for path in ALONE}
# The trace file's code stops tracing through its caller (ct_output_open's on_fail), not by setting
# the tracker's state itself.
FORBIDDEN_NAMES = {("preload/output.c", "ct_state")}
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
                    breaches.append(f"{path}: includes '{inc}', which its layer must not")
                owners = where.get(os.path.basename(inc), set())
                if folder in owners or not owners:
                    continue  # its own folder's header, include/ctrack/, the build's config, a system header
                if not owners & ALLOWED[folder]:
                    breaches.append(f"{path}: includes '{inc}' of {', '.join(sorted(owners))}/")
            for where_, name_ in FORBIDDEN_NAMES:
                if where_ == path and re.search(rf"\b{name_}\b", text):
                    breaches.append(f"{path}: uses '{name_}', which its layer must not")
            for other in FOLDERS - {folder}:
                if re.search(rf'#\s*include\s+"[^"]*{other}/', text):
                    breaches.append(f"{path}: reaches into {other}/")
    for b in breaches:
        print(b)
    print(f"{len(breaches)} include rule breach(es)" if breaches else "include rules hold")
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
