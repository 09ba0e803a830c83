/* SPDX-License-Identifier: MIT */
/* The weights of a sampled trace (format.h's SAMPLING): an allocation of s bytes recorded at one
 * sample per `rate` bytes stands for 1 / p(s) allocations, p(s) = 1 - exp(-s / rate), which makes
 * every sum of them an unbiased estimate. The model counts in whole numbers: the j-th event of a
 * kind of an alloc info counts the weight's whole part, plus one with the probability of its
 * fraction, decided by a hash of (info, kind, j): rounded without bias, so that sums over many
 * infos of a few samples each (a realloc chain, every size its own info) stay unbiased, where
 * rounding each info down lost half an allocation per info. The j-th FREE of an info counts what
 * its j-th ALLOC did, so a free never takes more than its allocations gave and an info whose blocks
 * were all freed has none live. */
#ifndef CTRACK_SAMPLING_H
#define CTRACK_SAMPLING_H

#include <stdint.h>

#define CT_WEIGHT_ONE 65536 /* a weight's unit: weights are 1/65536ths */

/* The weight, in CT_WEIGHT_ONE units, of an allocation of size bytes (0 counts as 1) in a trace
 * sampled at one per rate bytes (rate > 0). At least CT_WEIGHT_ONE. */
uint64_t ct_sampling_weight(uint64_t size, uint64_t rate);

/* The count the (*n + 1)-th event of stream `key` (an info and a kind) adds at weight w, in whole
 * events: w's whole part, and one more when a hash of (key, n) falls below its fraction; *n goes up
 * by one. */
static inline uint64_t ct_sampling_step(uint64_t *n, uint64_t w, uint64_t key)
{
	uint64_t x = key * 0x9E3779B97F4A7C15ull + (*n)++ * 0xD1B54A32D192ED03ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	x ^= x >> 31;
	return w / CT_WEIGHT_ONE + (x % CT_WEIGHT_ONE < w % CT_WEIGHT_ONE);
}

/* The line every report shows once for a sampled trace, into buf (at most len bytes, NUL-ended):
 * "sampled: one allocation per N bytes on average; figures are estimates". */
void ct_sampling_note(char *buf, unsigned long len, uint64_t rate);

#endif
