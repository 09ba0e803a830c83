/* SPDX-License-Identifier: MIT */
/* Backtraces for the shim: a walker driven by cached CFI rules that also steps Linux's x86_64
 * signal frames. Invariants: no allocation, no stdio, errno preserved, async-signal-safe; frames
 * inside the shim are never reported. */
#ifndef CT_PRELOAD_UNWIND_H
#define CT_PRELOAD_UNWIND_H

#include <stdint.h>

#include "threadslot.h"

/* Fills ips[] with the calling thread's return addresses, innermost first, skipping every leading
 * frame whose ip lies in the shim (the ELF object that contains this code), so ips[0] is the return
 * address into the program from the hooked allocation function. At most max frames; *truncated = 1
 * when the stack had more (or the walk was cut short at a frame it cannot step: see
 * ct_unwind_cuts). Returns the number of frames (0 if the stack cannot be walked).
 * Must not allocate, lock (after warm-up), use stdio or change errno: it runs inside malloc. */
int ct_unwind(uintptr_t *ips, int max, int *truncated);
/* The same walk from a known frame: ra is a return address into the program, sp the caller's stack
 * pointer after that return and bp its frame pointer (what the hooked function found on entry).
 * Saves the steps through the shim's own frames. */
int ct_unwind_from(uintptr_t ra, uintptr_t sp, uintptr_t bp, uintptr_t *ips, int max, int *truncated);
/* Removes from ips[0 .. n) the frames whose ip lies in the shim, keeping the others' order; returns
 * how many are left. A walk from a signal handler that interrupted the shim passes through the
 * shim's frames (the hook the program called, the report it was making): the program's are the
 * frames that matter. */
int ct_unwind_drop_shim(uintptr_t *ips, int n);
/* How many outermost frames of the calling thread's last walk are known, from the memo at no cost,
 * to be the outermost frames of the walk before it (the same return addresses, in order, read from
 * the same stack): its last ct_unwind_shared() frames equal the last ones of the walk before. 0
 * when nothing is known (a walk cut at max, cut short, through a signal frame, or after one), so a
 * caller may keep what it derived from the outer frames of the previous walk and redo the rest. */
static inline int ct_unwind_shared(void)
{
	return ct_slot()->walk.shared;
}
/* Walks cut short so far, in all threads, at a frame no simple rule steps (CFI expressions
 * outside signal trampolines, code described only by .debug_frame): they end truncated there. */
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
