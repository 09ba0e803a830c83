# SPDX-License-Identifier: MIT
# The leak scan at exit on the shapes LeakSanitizer's and memcheck's own tests hold (issue 23): a live
# block with pages nobody may read (scan_guard), a program exiting on a heap-allocated stack
# (scan_heapstack), a thread that forgot the block it just allocated (scan_deadword, -O2), a
# program that left no descriptor for /proc (scan_fdlimit), a joined thread's TLS (scan_tls),
# detached threads alive at exit (scan_detached), a program told to end by a signal (scan_killed),
# a pointer only a register holds (scan_regs), one in dynamic TLS (scan_tlsdyn) and an object held
# through its second base (scan_inherit, C++); glibc's malloc with blocks where its own pointers
# and the program's old ones lie (scan_malloc: reused memory, the tcache, the top chunk, mmapped
# chunks, a thread's arena, a thread's heap of free chunks, a program's mmap page the kernel merged
# with mmapped chunks); a large pointer-rich heap that the writer and the exiting thread mark
# together (scan_big); a lost block's address that RBP alone held while an allocation below was walked
# (scan_rbpword); a region whose missing pages a thread of the program serves (scan_uffd); a sparse
# mapping of 16 TiB (scan_sparse); blocks held only from shared memory (scan_shared). The classes equal memcheck's LEAK SUMMARY, except where each program's comment says why LeakSanitizer's verdict is the one to give;
# a scan that could not read its roots gives no classes, a NOTE, and no verdict.
import os
import shutil
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
guard, heapstack, deadword, fdlimit, tls, detached, killed, regs, tlsdyn, tlslib, inherit, mallocs, big, rbpword, uffd, sparse, shared = env.progs
KEYS = [k + s for k in ("definitely_lost", "indirectly_lost", "possibly_lost", "still_reachable")
        for s in ("_bytes", "_blocks")]


def classes(summary):
    return [summary.get(k) for k in KEYS]


def vg_classes(vg):
    return [vg[k] for k in KEYS]


SIGNAL = dict(os.environ, CTRACK_SCAN_STOP="signal")  # threads stopped by the fallback's signal


def traced(name, args, opts=(), **kw):
    r, rep = env.run_traced(name, args, opts=opts, **kw)
    env.eq(name + ": exit status is the program's", r.returncode, 0)
    return rep


# 1. Pages that cannot be read: the scan reads around them (it crashed the program with SIGSEGV).
# memcheck ignores a pointer to an unreadable address, so it calls the coroutine stack (its guard
# page is its first) definitely lost though a global holds it; LeakSanitizer counts the pointer, and
# so does ctrack: that block is still reachable, the rest is memcheck's.
vg = env.valgrind_main([guard], env.fresh_dir("guard-vg"))
rep = traced("guard", [guard])
if rep and vg:
    want = vg_classes(vg)
    want[0] -= 65536
    want[1] -= 1
    want[6] += 65536
    want[7] += 1
    env.eq("guard: classes (memcheck's, the guarded stack still reachable)", classes(rep["summary"]),
           want)

# 2. A program exiting on a coroutine's stack from malloc: that stack is scanned to the end of its
# block, not to the end of the heap (which made the lost blocks reachable).
vg = env.valgrind_main([heapstack], env.fresh_dir("heapstack-vg"))
rep = traced("heapstack", [heapstack])
if rep and vg:
    env.eq("heapstack: classes are memcheck's", classes(rep["summary"]), vg_classes(vg))
    env.eq("heapstack: memcheck's figures are the program's", vg_classes(vg)[:4], [264, 2, 100, 1])

# 3. The block a thread forgot: the shim's dead frames below its stack pointer are no root. Several
# runs: where the thread stands when it is stopped varies (the last stopped by the fallback's signal).
for i in range(4):
    rep = traced("deadword-%d" % i, [deadword], **({"env": SIGNAL} if i == 3 else {}))
    if rep:
        s = rep["summary"]
        env.eq("deadword run %d: the 1337 bytes definitely lost" % i,
               (s["definitely_lost_bytes"], s["definitely_lost_blocks"]), (1337, 1))
d = env.fresh_dir("deadword-check")
r, _ = env.run_ctrack([deadword], d, opts=("--check", "-o", os.path.join(d, "t.zst")))
env.eq("deadword: ctrack --check fails (exit 23), as LeakSanitizer does", r.returncode, 23)

# 4. No descriptor left for /proc. With the soft limit alone lowered the scan reads /proc all the
# same (the limit raised by one for the open): memcheck's classes. With the hard limit lowered too
# and no CAP_SYS_RESOURCE (setpriv drops it, as for any user but root), no classes: a NOTE says why,
# and --check gives no verdict (exit 1, never 23).
vg = env.valgrind_main([fdlimit, "soft"], env.fresh_dir("fdlimit-vg"))
rep = traced("fdlimit-soft", [fdlimit, "soft"])
if rep and vg:
    env.eq("fdlimit soft: classes are memcheck's", classes(rep["summary"]), vg_classes(vg))
setpriv = shutil.which("setpriv")
nocap = [setpriv, "--bounding-set=-sys_resource", "--inh-caps=-sys_resource"]
d = env.fresh_dir("fdlimit-hard")
trace = os.path.join(d, "t.zst")
r, _ = env.run_ctrack([fdlimit, "hard"], d, opts=("--check", "-o", trace))
env.check("fdlimit hard, as root: no false verdict", r.returncode in (0, 1), r.stderr[-600:])
r = ct.subprocess.run(nocap + [env.ctrack, "--check", "--force", "-o", trace, fdlimit, "hard"],
                      capture_output=True, timeout=120)
err = r.stderr.decode(errors="replace")
env.eq("fdlimit hard, no CAP_SYS_RESOURCE: ctrack --check gives no verdict (exit 1)", r.returncode, 1)
env.check("fdlimit hard: the closing message says why there are no classes",
          "no leak classes: the scan for pointers at exit could not run (cannot open /proc/self/" in err
          and "Too many open files" in err, err)
rep = env.report(trace)
if rep:
    env.eq("fdlimit hard: the trace has no classes", rep["summary"].get("definitely_lost_bytes"), None)
    env.check("fdlimit hard: the JSON notes say why",
              any("could not run" in n.get("text", "") for n in rep.get("notes", [])), str(rep.get("notes")))

# 5. A joined thread's static TLS, below its control block in the stack glibc keeps: a root.
vg = env.valgrind_main([tls], env.fresh_dir("tls-vg"))
rep = traced("tls", [tls])
if rep and vg:
    env.eq("tls: classes are memcheck's", classes(rep["summary"]), vg_classes(vg))
    env.eq("tls: the TLS block still reachable (the program's 333 bytes)", vg_classes(vg)[6:], [333, 1])

# 6. Detached threads that end right after the scan let them go: all were stopped and scanned, so no
# note says any was not (it said 18446744073709551613 of them: the count taken after they ended).
# Stopped by ptrace, then by the fallback's signal.
vg = env.valgrind_main([detached], env.fresh_dir("detached-vg"))
for i in range(4):
    rep = traced("detached-%d" % i, [detached], **({"env": SIGNAL} if i >= 2 else {}))
    if rep and vg:
        env.eq("detached run %d: classes are memcheck's" % i, classes(rep["summary"]), vg_classes(vg))
        env.eq("detached run %d: no note of unscanned threads" % i,
               [n["text"] for n in rep.get("notes", []) if "still running" in n.get("text", "")], [])

# 7. memcheck's multipleinheritance heuristic: a pointer to an object's second base, whose vtable
# pointer it points at (the first's at the block's start), counts as a start pointer.
vg = env.valgrind_main([inherit], env.fresh_dir("inherit-vg"))
rep = traced("inherit", [inherit])
if rep and vg:
    env.eq("inherit: classes are memcheck's", classes(rep["summary"]), vg_classes(vg))
    env.eq("inherit: the object held through its second base still reachable (32 bytes)",
           vg_classes(vg)[6:], [32, 1])

# 8. A program killed by SIGTERM, SIGINT or SIGHUP is classified at that point, as memcheck does.
for sig, status in (("TERM", 143), ("INT", 130), ("HUP", 129)):
    vg = env.valgrind_main([killed, sig], env.fresh_dir("killed-vg"))
    r, rep = env.run_traced("killed-" + sig, [killed, sig])
    env.eq("killed by SIG%s: ctrack's status is the program's" % sig, r.returncode, status)
    if rep and vg:
        env.eq("killed by SIG%s: classes are memcheck's" % sig, classes(rep["summary"]), vg_classes(vg))
        env.check("killed by SIG%s: the note says the classes are those of that moment" % sig,
                  any("killed by SIG%s" % sig in n["text"] and "leak classes are those of that moment"
                      in n["text"] for n in rep["notes"]), str(rep["notes"]))
# 9. LeakSanitizer's use_registers and use_tls_dynamic shapes: a stopped thread's registers, and a
# dlopened library's dynamic TLS, are roots.
for name, args in (("regs", [regs]), ("tlsdyn", [tlsdyn, tlslib])):
    vg = env.valgrind_main(args, env.fresh_dir(name + "-vg"))
    for how, kw in (("", {}), ("-signal", {"env": SIGNAL})):  # stopped by ptrace, then by the signal
        rep = traced(name + how, args, **kw)
        if rep and vg:
            env.eq(name + how + ": classes are memcheck's", classes(rep["summary"]), vg_classes(vg))
    if vg:
        env.check(name + ": the 1337 bytes still reachable", vg_classes(vg)[6] >= 1337, str(vg_classes(vg)))

# 10. glibc's malloc keeps pointers of its own next to and inside the program's blocks (bins, the top
# chunk, a thread arena's heap_info and malloc_state, mmapped chunks' headers), and its free chunks
# keep the program's old pointers: none of it is the program's, and memcheck, whose allocator is its
# own, never reads it. Every shape (tests/progs/scan_malloc.c) gives memcheck's classes. Without
# MALLOC_PERTURB_ (meson sets it): glibc would overwrite the free chunks, and the old pointers in
# them are what the shapes are about.
plain = {k: v for k, v in os.environ.items() if k != "MALLOC_PERTURB_"}
for args in (["reuse", "3000"], ["reuse", "200"], ["reuse", "50000"], ["tcache"], ["top"], ["large"],
             ["thread"], ["thread-free"], ["mmap-buf"]):
    name = "malloc-" + "-".join(args)
    vg = env.valgrind_main([mallocs, *args], env.fresh_dir(name + "-vg"))
    r, rep = env.run_traced(name, [mallocs, *args], env=plain)
    env.eq(name + ": exit status is the program's", r.returncode, 0)
    if not (rep and vg):
        continue
    want = vg_classes(vg)
    # (SIZE, N, still reachable blocks) of the modes made of one shape
    shapes = ((int(args[1]), 20, 3) if args[0] == "reuse" else
              {"large": (200000, 6, 3), "mmap-buf": (200000, 6, 4), "thread": (3000, 20, 3)}.get(args[0]))
    if shapes:
        # One shape(SIZE, N) (scan_malloc.c's comment): N - 4 blocks definitely lost, 1 indirectly, 1
        # possibly, 2 still reachable with stdout's buffer (and mmap-buf's malloc(77); memcheck's
        # figures for those). memcheck itself now and then finds lost blocks possibly lost (a stale
        # word of its run pointing into them): a definitely lost one, an indirectly lost one, or
        # both in one run (all seen), never the other way. The program's own figures are the
        # answer, and memcheck's must differ from them by that at most.
        size, n, kept = shapes
        # glibc's own possibly lost blocks beside the shape's, smaller than SIZE (the thread mode's
        # thread leaves one of 272 bytes), as memcheck counts them
        glibc = (want[4] % size, want[5] - want[4] // size)
        own = [(n - 4) * size, n - 4, size, 1, size + glibc[0], 1 + glibc[1], want[6], kept]
        moved = [own[i] - want[i] for i in range(4)] + [want[4] - own[4], want[5] - own[5]]
        seen = [[d * size, d, i * size, i, (d + i) * size, d + i] for d in (0, 1) for i in (0, 1)]
        env.check(name + ": memcheck agrees with the program (or saw lost blocks possibly lost)",
                  want[7] == kept and want[6] >= 2 * size and moved in seen, repr(want))
        want = own
    env.eq(name + ": classes are memcheck's", classes(rep["summary"]), want)
# The program's own dangling pointers: glibc reused the memory they point to for blocks the program
# then dropped, so they point at or into those blocks now, and the classes follow memcheck's rules
# on that memory (the program counts them itself). memcheck's allocator keeps freed memory aside,
# so under it the same pointers point at nothing: it says all 50 blocks definitely lost.
vg = env.valgrind_main([mallocs, "dangling"], env.fresh_dir("malloc-dangling-vg"))
r, rep = env.run_traced("malloc-dangling", [mallocs, "dangling"], env=plain)
m = ct.re.search(r"dangling: (\d+) definite, (\d+) possible, (\d+) reachable", r.stdout.decode())
if env.check("malloc-dangling: the program printed its counts", m, r.stdout[-300:]) and rep and vg:
    d, p, k = (int(x) for x in m.groups())
    env.eq("malloc-dangling: memcheck says all 50 definitely lost", vg_classes(vg)[:2], [150000, 50])
    env.eq("malloc-dangling: classes are the program's count",
           classes(rep["summary"]),
           [3000 * d, d, 0, 0, 3000 * p, p, vg_classes(vg)[6] + 3000 * k, vg_classes(vg)[7] + k])
    env.eq("malloc-dangling: every block counted once", d + p + k, 50)

# 11. A large pointer-rich heap (scan_big.c: 200,000 blocks, a second thread's arena, every class):
# the exiting thread, which waits for the scan anyway, marks blocks the writer hands it. The classes
# are the program's own figures, whichever thread marked what, run after run, but for what glibc
# allocated for the thread: its DTV (272 bytes), which the TCB of the stack glibc keeps points
# into (+8), possibly lost as memcheck says. memcheck agrees, or sees a few blocks of lost trees,
# definitely or indirectly lost, as possibly lost (stale words of its own run pointing into them, as
# in section 10: up to 6 blocks seen at 200,000), never the other way: the program's own figures are
# the exact check.
vg = env.valgrind_main([big, "200000", "1"], env.fresh_dir("big-vg"))
for i in range(3):
    r, rep = env.run_traced("big-%d" % i, [big, "200000", "1"])
    env.eq("big run %d: exit status is the program's" % i, r.returncode, 0)
    m = ct.re.search(r"own: ([0-9 ]+)", r.stdout.decode())
    if not (env.check("big run %d: the program printed its figures" % i, m, r.stdout[-300:]) and rep):
        continue
    own, got = [int(x) for x in m.group(1).split()], classes(rep["summary"])
    extra = [sum(got[0::2]) - sum(own[0::2]), sum(got[1::2]) - sum(own[1::2])]
    env.check("big run %d: glibc's own blocks are one at most, of 1 KiB at most" % i,
              0 <= extra[1] <= 1 and 0 <= extra[0] <= 1024, repr(extra))
    env.eq("big run %d: classes are the program's own figures (glibc's blocks possibly lost)" % i, got,
           own[:4] + [own[4] + extra[0], own[5] + extra[1]] + own[6:])
    if vg:
        want = vg_classes(vg)
        moved = [got[k] - want[k] for k in range(8)]
        env.check("big run %d: classes are memcheck's (or it saw a few lost blocks possibly lost)" % i,
                  min(moved[:4]) >= 0 and moved[1] + moved[3] <= 16 and moved[5] == -(moved[1] + moved[3])
                  and moved[4] == -(moved[0] + moved[2]) and moved[6:] == [0, 0],
                  "ctrack %r, memcheck %r" % (got, want))

# 12. A lost block's address held only in RBP while an allocation below it was walked: the walk's memo
# keeps every frame's RBP, and the scan read the memo as the program's memory ("still reachable").
# Definitely lost, memcheck's figures and the program's.
vg = env.valgrind_main([rbpword], env.fresh_dir("rbpword-vg"))
rep = traced("rbpword", [rbpword])
if rep and vg:
    env.eq("rbpword: memcheck's figures are the program's", vg_classes(vg)[:2], [4096, 1])
    env.eq("rbpword: classes are memcheck's", classes(rep["summary"]), vg_classes(vg))
d = env.fresh_dir("rbpword-check")
r, _ = env.run_ctrack([rbpword], d, opts=("--check", "-o", os.path.join(d, "t.zst")))
env.eq("rbpword: ctrack --check fails (exit 23)", r.returncode, 23)

def ends_in_time(name, args, seconds, output=None):
    """Runs args under ctrack, killed by timeout(1) after `seconds` (SIGTERM, which the launcher passes
    on: no process is left waiting); its report, or None. Skipped when the program alone exits 77."""
    d = env.fresh_dir(name)
    if ct.subprocess.run(args, cwd=d, capture_output=True, timeout=60).returncode == 77:
        print(name + ": skipped, the kernel refuses what it needs here")
        return None
    trace = os.path.join(d, "trace.zst")
    r = ct.subprocess.run(["timeout", str(seconds), env.ctrack, "-q", "-o", trace, *args], cwd=d,
                          capture_output=True, timeout=seconds + 60)
    env.eq(name + ": the program ends under ctrack within %d s, its exit status" % seconds, r.returncode, 0)
    if output is not None:
        env.eq(name + ": its output", r.stdout, output)
    return env.report(trace) if r.returncode == 0 else None


def definitely_lost(name, rep, want):
    if rep:
        s = rep["summary"]
        env.eq(name + ": definitely lost (bytes, blocks)",
               (s["definitely_lost_bytes"], s["definitely_lost_blocks"]), want)


# 13. A region whose missing pages a thread of the program serves (userfaultfd): the scan stops that
# thread, and a read of a page never touched would wait for it for ever. It reads none: the program
# ends, and its 100-byte block is definitely lost (valgrind has no userfaultfd: the program's figures).
definitely_lost("uffd", ends_in_time("uffd", [uffd], 60, output=b"7\n"), (100, 1))

# 14. A sparse mapping of 16 TiB with 16 pages written: the scan asks which pages are in memory 64 MiB at
# a time and skips absent ones 8 at a time: 7 s here with a CI run beside it, where 1 MiB a call took
# 44 s. The program's figures.
definitely_lost("sparse", ends_in_time("sparse", [sparse, "16384"], 25), (100, 1))

# 15. Blocks held only from shared memory (a shared anonymous mapping, a memfd's, POSIX and SysV shared
# memory): still reachable, as memcheck says; the scan read no memory a file names, and called them
# definitely lost. A disk file's mapping is still not read (a database's would be gigabytes).
vg = env.valgrind_main([shared], env.fresh_dir("shared-vg"))
rep = traced("shared", [shared])
if rep and vg:
    env.eq("shared: memcheck's figures are the program's", vg_classes(vg), [50, 1, 0, 0, 0, 0, 1000, 4])
    env.eq("shared: classes are memcheck's", classes(rep["summary"]), vg_classes(vg))
env.finish()
