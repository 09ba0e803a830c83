/* SPDX-License-Identifier: MIT */
/* A sampled trace's weights (sampling.h): the inverse of the probability that the shim's Poisson
 * process over bytes (preload/sample.h) chose an allocation of a given size. */
#include <math.h>
#include <stdio.h>

#include "sampling.h"

uint64_t ct_sampling_weight(uint64_t size, uint64_t rate)
{
	double p = -expm1(-(double)(size ? size : 1) / (double)rate); /* exact for small s / rate */
	double w = (double)CT_WEIGHT_ONE / p;
	if (w >= 0x1p63) /* a 1-byte block at a rate past 2^47 bytes, which no writer allows */
		return UINT64_C(1) << 63;
	uint64_t u = (uint64_t)llround(w);
	return u < CT_WEIGHT_ONE ? CT_WEIGHT_ONE : u;
}

void ct_sampling_note(char *buf, unsigned long len, uint64_t rate)
{
	snprintf(buf, len, "sampled: one allocation per %llu bytes on average; figures are estimates",
	         (unsigned long long)rate);
}
