/* SPDX-License-Identifier: MIT */
/* The unwinder test library: unwind.c in its own shared object (cfi.c built beside it), as in the
 * shim, so "skip the frames of our own object" is exercised; included to reach its counter of cut
 * walks. The reference it is compared with is libunwind's walk, which only the tests link. */
#include "unwind.c"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "capture.h"

/* libunwind's walk of the calling thread, frames of this library skipped as ct_unwind does. */
static __attribute__((noinline)) int reference(uintptr_t *ips, int max, int *truncated)
{
	int saved_errno = errno, n = 0, in_self = 1;
	unw_context_t ctx;
	unw_cursor_t cursor;
	unw_word_t ip;
	uintptr_t lo, hi;

	*truncated = 0;
	self_range(&lo, &hi);
	if (unw_getcontext(&ctx) != 0 || unw_init_local(&cursor, &ctx) != 0)
		goto out;
	do {
		if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0)
			break;
		in_self = in_self && ip - lo < hi - lo;
		if (in_self)
			continue;
		if (n == max) {
			*truncated = 1;
			break;
		}
		ips[n++] = (uintptr_t)ip;
	} while (unw_step(&cursor) > 0);
out:
	errno = saved_errno;
	return n;
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
	slow->n = reference(slow->ips, max, &slow->truncated);
	fast->from_differs = 0;
	if (outer) {
		from.n = ct_unwind_from(fp[1], (uintptr_t)(fp + 2), fp[0], from.ips, max, &from.truncated);
		fast->from_differs =
		    from.n != fast->n || from.truncated != fast->truncated ||
		    memcmp(from.ips, fast->ips, (size_t)(from.n > 0 ? from.n : 0) * sizeof(uintptr_t));
	}
	capturing--;
}

CTU_API int ctu_fast(uintptr_t *ips, int max, int *truncated)
{
	return ct_unwind(ips, max, truncated);
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
