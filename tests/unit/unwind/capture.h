/* SPDX-License-Identifier: MIT */
/* Entry points of the unwinder test library (libctu.so: preload/unwind.c in an object of its own).
 * Every frame inside libctu.so is skipped, so ips[0] is the return address into the caller. */
#ifndef CTU_CAPTURE_H
#define CTU_CAPTURE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CTU_MAX 1024
#define CTU_API __attribute__((visibility("default")))

struct ctu_walk {
	int n, truncated;
	int from_differs;   /* ct_unwind_from, started at the capturing call's frame, disagreed */
	int shared_wrong;   /* a walk's last ct_unwind_shared() frames were not the walk before's last */
	int replay_differs; /* ct_unwind_replay stood for a walk kept before that is not this one */
	uintptr_t ips[CTU_MAX];
};

/* Walks the caller's stack from the same call site: ct_unwind, then libunwind (slow, the reference);
 * also ct_unwind_from the capturing function's own frame, as the shim's hooks do, which is kept for
 * replays (ct_unwind_keep) after a replay from that frame was tried and, if it found one, checked. */
CTU_API void ctu_capture(int max, struct ctu_walk *fast, struct ctu_walk *slow);
CTU_API int ctu_fast(uintptr_t *ips, int max, int *truncated);
/* ctu_fast for timings, with nothing around the walk: the ct_unwind_shared checks of the captures
 * that follow in the thread are wrong after it. */
CTU_API int ctu_bench(uintptr_t *ips, int max, int *truncated);
CTU_API int ctu_slow(uintptr_t *ips, int max, int *truncated);
CTU_API void ctu_invalidate(void);
/* Replays found by captures and checked against the walk made, in all threads so far. */
CTU_API unsigned long ctu_replays(void);
/* ct_unwind_shared() after the calling thread's last walk. */
CTU_API int ctu_shared(void);
/* Walks of the calling thread that ct_unwind cut short at a frame it could not step. */
CTU_API unsigned long ctu_cuts(void);
/* ct_unwind_first_sp_outside: the stack pointer of the first frame outside the n ranges. */
CTU_API uintptr_t ctu_first_sp_outside(const uintptr_t (*ranges)[2], int n);

#ifdef __cplusplus
}
#endif
#endif
