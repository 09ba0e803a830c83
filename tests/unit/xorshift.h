/* SPDX-License-Identifier: MIT */
/* The unit tests' random numbers: Marsaglia's xorshift64, from a fixed seed, so that a failing case
 * runs again the same. A test including this has its own state (it may set another seed first). */
#ifndef CTRACK_TEST_XORSHIFT_H
#define CTRACK_TEST_XORSHIFT_H

#include <stdint.h>

static uint64_t ct_test_rng = 0x9E3779B97F4A7C15ull;

static inline uint64_t ct_test_random(void)
{
	ct_test_rng ^= ct_test_rng << 13;
	ct_test_rng ^= ct_test_rng >> 7;
	ct_test_rng ^= ct_test_rng << 17;
	return ct_test_rng;
}

#endif
