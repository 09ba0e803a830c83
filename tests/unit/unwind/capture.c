/* SPDX-License-Identifier: MIT */
/* The unwinder test library: unwind.c in its own shared object (cfi.c built beside it), as in the
 * shim, so "skip the frames of our own object" is exercised; included to reach its fallback counter. */
#include "unwind.c"

#include "capture.h"

CTU_API __attribute__((noinline)) void ctu_capture(int max, struct ctu_walk *fast, struct ctu_walk *slow)
{
	/* One buffer per thread for the third walk; a capture nested in a signal handler that
	 * interrupts this one skips it rather than share the buffer. */
	static __thread struct ctu_walk from;
	static __thread int capturing;
	uintptr_t *fp = __builtin_frame_address(0);
	int outer = !capturing++;
	fast->n = ct_unwind(fast->ips, max, &fast->truncated);
	slow->n = ct_unwind_slow(slow->ips, max, &slow->truncated);
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
	return ct_unwind_slow(ips, max, truncated);
}

CTU_API void ctu_invalidate(void)
{
	ct_unwind_invalidate();
}

CTU_API unsigned long ctu_fallbacks(void)
{
	return fallbacks;
}
