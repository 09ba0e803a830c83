/* SPDX-License-Identifier: MIT */
/* The unwinder test library: unwind.c compiled into its own shared object, exactly as in the shim,
 * so "skip the frames of our own object" is exercised; included to reach its fallback counter. */
#include "preload/unwind.c"

#include "capture.h"

CTU_API __attribute__((noinline)) void ctu_capture(int max, struct ctu_walk *fast, struct ctu_walk *slow)
{
	fast->n = ct_unwind(fast->ips, max, &fast->truncated);
	slow->n = ct_unwind_slow(slow->ips, max, &slow->truncated);
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
