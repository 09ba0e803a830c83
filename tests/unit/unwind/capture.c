/* SPDX-License-Identifier: MIT */
/* The unwinder test library: unwind.c in its own shared object (cfi.c built beside it), as in the
 * shim, so "skip the frames of our own object" is exercised; included to reach its counter of cut
 * walks. The reference it is compared with is libunwind's walk, which only the tests link. */
#include "unwind.c"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "capture.h"

/* libunwind's walk of the calling thread, frames of this library skipped as ct_unwind does (the
 * leading ones, and past a signal frame all of them), the ip below a signal frame marked exact. */
static __attribute__((noinline)) int reference(uintptr_t *ips, int max, int *truncated)
{
	int saved_errno = errno, n = 0, in_self = 1, past_signal = 0;
	unw_context_t ctx;
	unw_cursor_t cursor;
	unw_word_t ip;
	uintptr_t lo, hi, exact = 0;

	*truncated = 0;
	self_range(&lo, &hi);
	if (unw_getcontext(&ctx) != 0 || unw_init_local(&cursor, &ctx) != 0)
		goto out;
	do {
		if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0)
			break;
		uintptr_t at = (uintptr_t)ip | exact;
		/* A signal handler returns to the trampoline, whose caller is the interrupted ip. */
		exact = !memcmp((const void *)ip, restorer, sizeof(restorer)) ? CT_UNWIND_EXACT : 0;
		past_signal |= exact != 0;
		in_self = in_self && ip - lo < hi - lo;
		if (in_self || (past_signal && ip - lo < hi - lo))
			continue;
		if (n == max) {
			*truncated = 1;
			break;
		}
		ips[n++] = at;
	} while (unw_step(&cursor) > 0);
out:
	errno = saved_errno;
	return n;
}

/* The calling thread's last walk by ct_unwind or ct_unwind_from, which ct_unwind_shared speaks of,
 * kept by captures that no other capture of the thread is in the middle of. The walks of a nested
 * one (in a signal handler) are not kept: they leave nothing for the next walk to share. */
static __thread struct {
	int known, n; /* known 0: the last walk was ctu_fast's, not kept */
	uintptr_t ips[CTU_MAX];
} last;

/* Whether ct_unwind_shared() is wrong about the walk just made (n frames in ips): its last
 * `shared` frames must be the last ones of the walk before. It becomes the walk before. */
static int shared_wrong(const uintptr_t *ips, int n)
{
	int s = ct_unwind_shared(), wrong = s < 0 || s > n || (last.known && s > last.n);

	if (!wrong && s && last.known)
		wrong = memcmp(ips + n - s, last.ips + last.n - s, (size_t)s * sizeof(*ips)) != 0;
	last.known = 1;
	last.n = n;
	memcpy(last.ips, ips, (size_t)n * sizeof(*ips));
	return wrong;
}

/* Walks kept for replays (ct_unwind_keep), each under a tag the thread counts up, in kept[tag % KEPT]:
 * a replay returns the tag of the walk it stands for, compared here with the walk just made. */
#define KEPT 32
static __thread struct {
	uint64_t tag;
	int n;
	uintptr_t ips[MEMO_FRAMES];
} kept[KEPT];
static __thread uint64_t kept_tags;
static atomic_ulong replays_checked;

static void keep(const struct ctu_walk *w)
{
	if (w->truncated || w->n > MEMO_FRAMES)
		return;
	uint64_t tag = ++kept_tags;
	kept[tag % KEPT].tag = tag;
	kept[tag % KEPT].n = w->n;
	memcpy(kept[tag % KEPT].ips, w->ips, (size_t)w->n * sizeof(w->ips[0]));
	ct_unwind_keep(ct_slot(), w->n, tag);
}

/* Whether the walk a replay stood for (tag) is not w; not known when its record was overwritten. */
static int replay_wrong(uint64_t tag, const struct ctu_walk *w)
{
	if (kept[tag % KEPT].tag != tag)
		return 0;
	atomic_fetch_add(&replays_checked, 1);
	return w->truncated || w->n != kept[tag % KEPT].n ||
	       memcmp(w->ips, kept[tag % KEPT].ips, (size_t)w->n * sizeof(w->ips[0]));
}

CTU_API __attribute__((noinline)) void ctu_capture(int max, struct ctu_walk *fast, struct ctu_walk *slow)
{
	/* One buffer per thread for the third walk; a capture nested in a signal handler that
	 * interrupts this one skips it rather than share the buffer. */
	static __thread struct ctu_walk from;
	static __thread int capturing;
	uintptr_t *fp = __builtin_frame_address(0);
	int outer = !capturing++;
	fast->n = ct_unwind(fast->ips, max, &fast->truncated);
	fast->shared_wrong = outer && shared_wrong(fast->ips, fast->n);
	slow->n = reference(slow->ips, max, &slow->truncated);
	fast->from_differs = fast->replay_differs = 0;
	if (outer) {
		uint64_t tag;
		int replayed = ct_unwind_replay(ct_slot(), fp[1], (uintptr_t)(fp + 2), fp[0], max, &tag);
		from.n = ct_unwind_from(fp[1], (uintptr_t)(fp + 2), fp[0], from.ips, max, &from.truncated);
		fast->replay_differs = replayed && replay_wrong(tag, &from);
		keep(&from);
		fast->shared_wrong |= shared_wrong(from.ips, from.n);
		fast->from_differs =
		    from.n != fast->n || from.truncated != fast->truncated ||
		    memcmp(from.ips, fast->ips, (size_t)(from.n > 0 ? from.n : 0) * sizeof(uintptr_t));
	}
	capturing--;
}

CTU_API unsigned long ctu_replays(void)
{
	return atomic_load(&replays_checked);
}

CTU_API int ctu_fast(uintptr_t *ips, int max, int *truncated)
{
	int n = ct_unwind(ips, max, truncated);
	last.known = 0;
	return n;
}

CTU_API int ctu_bench(uintptr_t *ips, int max, int *truncated)
{
	return ct_unwind(ips, max, truncated);
}

CTU_API int ctu_shared(void)
{
	return ct_unwind_shared();
}

CTU_API int ctu_slow(uintptr_t *ips, int max, int *truncated)
{
	return reference(ips, max, truncated);
}

CTU_API void ctu_invalidate(void)
{
	ct_unwind_invalidate();
}

CTU_API unsigned long ctu_cuts(void)
{
	return ct_slot()->walk.cuts;
}

CTU_API uintptr_t ctu_first_sp_outside(const uintptr_t (*ranges)[2], int n)
{
	return ct_unwind_first_sp_outside(ranges, n);
}
