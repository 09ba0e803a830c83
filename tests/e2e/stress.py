# SPDX-License-Identifier: MIT
# Shared by the stress tests: the figures a program prints about itself, and ctrack's figures of the
# program's own events (its report's totals less glibc's TLS vectors, which thread creation adds).
import re

import ctrack_test as ct

KEYS = ("allocations", "frees", "bytes", "leaked_bytes", "leaked_allocations")
DTV = "allocate_dtv"


def printed(text, prefix=""):
    """The figures of every output line that starts with prefix: [{key: int, "line": text}]."""
    found = []
    for line in text.splitlines():
        if line.startswith(prefix) and "allocations=" in line:
            fig = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", line)}
            fig["line"] = line
            found.append(fig)
    return found


def is_dtv(entry):
    return any(ct.same_function(f.get("function") or "", DTV) for f in entry.get("frames", []))


def tls_vectors(rep):
    """(allocations, bytes, leaked allocations, leaked bytes) of glibc's TLS vectors in a report
    (its allocations ranking must be complete: run the analyzer with a large --top)."""
    made = [e for e in rep["allocations"] if is_dtv(e)]
    kept = [e for e in rep["leaks"] if is_dtv(e)]
    return (sum(e["allocations"] for e in made), sum(e["bytes"] for e in made),
            sum(e["allocations"] for e in kept), sum(e["bytes"] for e in kept))


def own(rep):
    """The report's figures of the program's own events, keyed as the programs print them."""
    s = rep["summary"]
    n, b, kept_n, kept_b = tls_vectors(rep)
    return {"allocations": s["allocations"] - n, "frees": s["frees"] - (n - kept_n),
            "bytes": s["bytes_allocated"] - b, "leaked_bytes": s["leaked_bytes"] - kept_b,
            "leaked_allocations": s["leaked_allocations"] - kept_n}


def program(fig):
    return {k: fig[k] for k in KEYS}
