/* SPDX-License-Identifier: MIT */
/* Backtraces for the shim: a walker driven by cached CFI rules that also steps Linux's x86_64
 * signal frames. Invariants: no allocation, no stdio, errno preserved, async-signal-safe; the
 * shim's frames are not reported: neither those of the hook a walk starts from, nor those a signal
 * interrupted (only a hook that calls the program back, dlclose's destructors or pthread_exit's,
 * shows its own frame below the program's). */
#ifndef CT_PRELOAD_UNWIND_H
#define CT_PRELOAD_UNWIND_H

#include <stdint.h>

#include "threadslot.h"

/* ips[i] with this bit set holds an exact ip, not a return address: the instruction a signal
 * interrupted (the frame below a signal frame), to be looked up at itself rather than at its call
 * (ip - 1). Bit 63 is never set in a user-space address; the trace's encoder takes the same bit
 * (CT_REC_IP_EXACT, ctrack/record.h). */
#define CT_UNWIND_EXACT ((uintptr_t)1 << 63)

/* Fills ips[] with the calling thread's return addresses, innermost first, skipping every leading
 * frame whose ip lies in the shim (the ELF object that contains this code), so ips[0] is the return
 * address into the program from the hooked allocation function. Past a signal frame, the frames
 * inside the shim the signal interrupted (a hook, its report, a PLT stub) are dropped too: the
 * program's stack never shows them. At most max frames; *truncated = 1 when the stack had more, or
 * when the walk was cut short at a frame it cannot step (see ct_unwind_cuts): a walk ends complete
 * only at the outermost frame (its CFI leaves the return address undefined, as _start's and a
 * thread's clone's do; the return address is 0; or it was planted at a function's first byte, with
 * no call before it, as makecontext plants __start_context's). Returns the number of frames (0 if
 * the stack cannot be walked). Must not allocate, lock (after warm-up), use stdio or change errno:
 * it runs inside malloc. */
int ct_unwind(uintptr_t *ips, int max, int *truncated);
/* The same walk from a known frame: ra is a return address into the program, sp the caller's stack
 * pointer after that return and bp its frame pointer (what the hooked function found on entry).
 * Saves the steps through the shim's own frames. */
int ct_unwind_from(uintptr_t ra, uintptr_t sp, uintptr_t bp, uintptr_t *ips, int max, int *truncated);
/* The same for the thread of slot me (ct_slot()), which the caller looked up already. */
int ct_unwind_from_slot(struct ct_slot *me, uintptr_t ra, uintptr_t sp, uintptr_t bp, uintptr_t *ips, int max,
                        int *truncated);
/* The walk of a signal handler's hook that interrupted a report of its thread (defer.h), from its
 * caller's frame as ct_unwind_from: past the signal frame, the report's frames go as a whole, the
 * shim's and those of the functions it had called (sched_yield, nanosleep, syscall, the real
 * realloc), so the handler is shown interrupting the program's call to the hook. ips has room for
 * CT_DEPTH_MAX frames (the report's are known to be its once the shim's frame below them is seen);
 * the innermost max are kept. */
int ct_unwind_from_handler(uintptr_t ra, uintptr_t sp, uintptr_t bp, uintptr_t *ips, int max, int *truncated);
/* Replays of whole walks. ct_unwind_keep() keeps the thread's last walk (by ct_unwind_from_slot,
 * of n frames, complete) under a tag of the caller's, when the memo holds all of it, it read few
 * enough stack words and its first frame was seen before (walks made once are not kept).
 * ct_unwind_replay() returns 1 and that tag when a walk from (ra, sp, bp) would be a kept walk
 * again, of max frames at most: the same first frame and every stack word it read unchanged. It
 * reads the stack only where that walk did and leaves the memo alone: ct_unwind_shared still speaks
 * of the last walk made. 0 otherwise. Only outside any walk of the thread; as async-signal-safe as
 * the walks. */
int ct_unwind_replay(struct ct_slot *me, uintptr_t ra, uintptr_t sp, uintptr_t bp, int max, uint64_t *tag);
void ct_unwind_keep(struct ct_slot *me, int n, uint64_t tag);
/* How many outermost frames of the calling thread's last walk are known, from the memo at no cost,
 * to be the outermost frames of the walk before it (the same return addresses, in order, read from
 * the same stack): its last ct_unwind_shared() frames equal the last ones of the walk before. 0
 * when nothing is known (a walk cut at max, cut short, through a signal frame, or after one), so a
 * caller may keep what it derived from the outer frames of the previous walk and redo the rest. */
static inline int ct_unwind_shared(void)
{
	return ct_slot()->walk.shared;
}
/* The same for the thread of slot me. */
static inline int ct_unwind_shared_of(const struct ct_slot *me)
{
	return me->walk.shared;
}
/* Walks cut short so far, in all threads, at a frame they cannot step: no simple rule describes it
 * (CFI expressions outside signal trampolines, code described only by .debug_frame), or, in code
 * with no unwind information, a frame-pointer guess that leads nowhere (the code keeps no frame
 * pointer either) or a signal that interrupted such code. They end truncated there. */
unsigned long ct_unwind_cuts(void);
/* Forget cached rules (an object was unloaded, its addresses may be reused). Cheap, thread-safe. */
void ct_unwind_invalidate(void);
/* The calling thread is exiting: unmap its rule cache (mapped again if it walks once more). */
void ct_unwind_thread_exit(void);
/* The stack pointer of the calling thread's innermost frame whose code lies outside all n ranges
 * [lo, hi) (say the shim's and the exit machinery's), from a plain walk: everything above it is
 * the program's. 0 when every frame is inside them. Not for use inside malloc. */
uintptr_t ct_unwind_first_sp_outside(const uintptr_t (*ranges)[2], int n);

#endif
