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


def check_run(env, name, args):
    """Runs the program traced (60 s at most): exit 0, a complete trace, and ctrack's figures of the
    program's own events equal to those it printed. (report, printed figures), or None; the figures
    keep the program's standard error under "stderr", for what a program prints there."""
    r, rep = env.run_traced(name, args, timeout=60)
    env.eq(name + ": exit status", r.returncode, 0)
    mine = printed(r.stdout.decode(errors="replace"))
    if not rep or not env.eq(name + ": the program printed its figures", len(mine), 1):
        return None
    fig = mine[0]
    fig["stderr"] = r.stderr.decode(errors="replace")
    print("%s: %s" % (name, fig["line"]))
    env.eq(name + ": complete", rep["complete"], True)
    env.eq(name + ": the program's own figures", own(rep), program(fig))
    env.eq(name + ": unmatched_frees", rep["summary"]["unmatched_frees"], 0)
    return rep, fig


def extra(total, fig):
    """What glibc adds to the program's own events: (allocations, bytes, frees + blocks in use), from
    a run's totals (keys allocations, bytes, frees, in_use) and the figures the program printed."""
    return (total["allocations"] - fig["allocations"], total["bytes"] - fig["bytes"],
            total["frees"] - fig["frees"] + total["in_use"] - fig["leaked_allocations"])


def report_extra(rep, fig):
    """extra() of a ctrack report."""
    s = rep["summary"]
    return extra({"allocations": s["allocations"], "bytes": s["bytes_allocated"], "frees": s["frees"],
                  "in_use": s["leaked_allocations"]}, fig)


def valgrind_extra(env, args, threads):
    """Runs the program under valgrind: what glibc adds to the program's own events (extra()), after
    checking that those are one TLS vector per thread, each freed or still in use at exit; or None."""
    pid, figs, rc, out = env.valgrind_run(args, env.fresh_dir("valgrind"), timeout=240)
    mine = printed(out.decode(errors="replace"))
    vg = figs.get(pid)
    if not env.check("valgrind: the program ran and reported", rc == 0 and vg and "allocs" in vg and mine,
                     "exit %r, %r" % (rc, figs)):
        return None
    print("valgrind: %s" % mine[0]["line"])
    got = extra({"allocations": vg["allocs"], "bytes": vg["bytes"], "frees": vg["frees"],
                 "in_use": vg["in_use_blocks"]}, mine[0])
    env.eq("valgrind: the program's figures and %d TLS vectors" % threads, (got[0], got[2]), (threads, threads))
    return got
