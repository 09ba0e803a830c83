# SPDX-License-Identifier: MIT
# ctrack's closing line leads with what was lost (issue 24, severity first), in memcheck's words and
# with valgrind's figures on the same programs: tests/progs/leak_classes.c (every class: "lost N
# bytes in N blocks (definitely ..., indirectly ...); possibly lost ...; N bytes still reachable"),
# tests/progs/reachable_only.c (nothing lost, stdout's buffer still reachable: "no leaks (N bytes
# still reachable at exit)") and tests/progs/argv_echo.c (nothing live at all: "no leaks (all heap
# blocks were freed)", valgrind's "All heap blocks were freed"). The text report lists the lost
# sites first, still reachable ones apart under their own heading.
import os
import re
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
classes, reachable, clean = env.progs


def count(n):
    return "{:,}".format(n)


def size(n):
    """closing.c's sizes: exact below 10 KiB (these programs' figures all are)."""
    assert n < 10240
    return "%s byte%s" % (count(n), "" if n == 1 else "s")


def blocks(nbytes, nblocks):
    return "%s in %s block%s" % (size(nbytes), count(nblocks), "" if nblocks == 1 else "s")


def closing(prog, name):
    """ctrack's closing line (the second line of its message) for prog, and the trace."""
    d = env.fresh_dir(name)
    trace = os.path.join(d, "trace.zst")
    r = subprocess.run([env.ctrack, "-o", trace, prog], cwd=d, capture_output=True, timeout=120)
    lines = r.stderr.decode(errors="replace").splitlines()
    env.eq(name + ": exit status", r.returncode, 0)
    line = lines[1] if len(lines) > 1 else ""
    return re.sub(r"; [0-9,]+ allocations?, .*$", "", line), trace


for prog, name in ((classes, "classes"), (reachable, "reachable"), (clean, "clean")):
    vg = env.valgrind_main([prog], env.fresh_dir(name + "-vg"))
    got, trace = closing(prog, name)
    if not vg:
        continue
    db, dn = vg["definitely_lost_bytes"], vg["definitely_lost_blocks"]
    ib, inn = vg["indirectly_lost_bytes"], vg["indirectly_lost_blocks"]
    pb, pn = vg["possibly_lost_bytes"], vg["possibly_lost_blocks"]
    rb, rn = vg["still_reachable_bytes"], vg["still_reachable_blocks"]
    if name == "classes":
        env.check("classes: valgrind sees every class", dn and inn and pn and rn, repr(vg))
        want = "ctrack: lost %s (definitely %s in %s, indirectly %s in %s); possibly lost %s; %s still reachable" % (
            blocks(db + ib, dn + inn), count(db), count(dn), count(ib), count(inn), blocks(pb, pn), size(rb))
    elif name == "reachable":
        env.check("reachable: valgrind: nothing lost, a block still reachable",
                  not (dn or inn or pn) and rn == 1, repr(vg))
        want = "ctrack: no leaks (%s still reachable at exit)" % size(rb)
    else:
        env.check("clean: valgrind: all heap blocks were freed", not (dn or inn or pn or rn), repr(vg))
        want = "ctrack: no leaks (all heap blocks were freed)"
    env.eq(name + ": the closing line's headline", got, want)

    # The text report: lost sites under LOST, the reachable ones apart, after them.
    text = env.run_analyze(trace, "--top", "100").stdout.decode(errors="replace")
    lost_at, kept_at = text.find("\nLOST ("), text.find("\nSTILL REACHABLE AT EXIT")
    env.check(name + ": text: LOST, then STILL REACHABLE AT EXIT", 0 <= lost_at < kept_at, text[:1500])
    lost_part, kept_part = text[lost_at:kept_at], text[kept_at:text.find("\nMOST BYTES AT THE PEAK")]
    kinds_lost = re.findall(r"^\S.* (definitely lost|indirectly lost|possibly lost|still reachable) in ",
                            lost_part, re.M)
    kinds_kept = re.findall(r"^\S.* (definitely lost|indirectly lost|possibly lost|still reachable) in ",
                            kept_part, re.M)
    order = ["definitely lost", "indirectly lost", "possibly lost"]
    env.eq(name + ": text: lost entries in memcheck's order", kinds_lost,
           sorted(kinds_lost, key=order.index))
    env.eq(name + ": text: lost entries' kinds", sorted(set(kinds_lost)),
           sorted(k for k, n in zip(order, (dn, inn, pn)) if n))
    env.eq(name + ": text: only still reachable apart", set(kinds_kept), {"still reachable"} if rn else set())
    if name == "classes":
        # --top 1: one entry per list, and the rest counted with their bytes
        top1 = env.run_analyze(trace, "--top", "1").stdout.decode(errors="replace")
        more = re.findall(r"^\((\d+) more entries, (\d+) bytes(?: \([^)]*\))? in all; --top N shows more\)$", top1, re.M)
        env.check("classes: --top 1: the lost and the reachable rest counted, with bytes", len(more) == 2,
                  top1[:3000])
        rep = env.report(trace)
        if rep:
            sev = ["definite", "indirect", "possible", "reachable", "unscanned"]
            order = [(sev.index(e["kind"]), -e["bytes"]) for e in rep["leaks"]]
            env.eq("classes: JSON leaks in memcheck's order, each kind by bytes", order, sorted(order))
            if len(more) == 2:
                rest = sum(e["bytes"] for e in rep["leaks"] if e["kind"] != "reachable")
                rest -= next(e["bytes"] for e in rep["leaks"] if e["kind"] != "reachable")
                env.eq("classes: --top 1: the lost rest's bytes", int(more[0][1]), rest)
env.finish()
