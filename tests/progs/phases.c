/* SPDX-License-Identifier: MIT */
/* A run in two phases with marks between, for the HTML report's time window (tests/e2e/test_html.py
 * drags across each phase on the page's chart). Phase 1: alloc_a allocates N1 blocks of S1 bytes,
 * one every STEP1_US, holds them HOLD_US and frees them all. Then the mark "phase2", a sleep of
 * GAP_US, and phase 2: alloc_b allocates N2 blocks of S2 bytes, one every STEP2_US, and drops every
 * pointer (definitely lost); the mark "end", a sleep of GAP_US, and exit. Nothing else allocates
 * (no stdio), so under ctrack:
 *   allocations N1 + N2 = 150, frees N1 = 100, bytes allocated N1*S1 + N2*S2 = 10100000,
 *   leaked (definitely lost) N2*S2 = 10000000 bytes in N2 = 50 blocks, peak heap 10000000 (at the
 *   end), temporary allocations 0 (each allocation is followed by another allocation or a sleep).
 * (valgrind agrees, with 3 more allocations: dlsym's error message, ctrack_mark finding no shim.)
 * S2 is above glibc's mmap threshold (128 KiB): each B block is a mapping of its own, so no pointer of
 * the allocator's (a neighbouring chunk's header, libc's arena) points inside one: written into the
 * heap's free space, ctrack's scan found most "possibly lost" where memcheck says definitely lost. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctrack/ctrack.h"

#define N1 100
#define S1 1000
#define N2 50
#define S2 200000
#define STEP1_US 1000
#define STEP2_US 2000
#define HOLD_US 50000
#define GAP_US 100000
#define NOINLINE __attribute__((noinline))

static void *a[N1];

static void pause_us(long us)
{
	struct timespec t = {us / 1000000, (us % 1000000) * 1000};
	while (nanosleep(&t, &t))
		;
}

NOINLINE static void *alloc_a(void)
{
	return malloc(S1);
}

NOINLINE static void alloc_b(void)
{
	void *volatile p = malloc(S2);
	memset(p, 0, S2); /* its pages resident: RSS grows with phase 2 */
	p = NULL;         /* lost: no pointer to it remains */
	(void)p;
}

int main(void)
{
	for (int i = 0; i < N1; i++) {
		a[i] = alloc_a();
		pause_us(STEP1_US);
	}
	pause_us(HOLD_US);
	for (int i = 0; i < N1; i++)
		free(a[i]);
	ctrack_mark("phase2");
	pause_us(GAP_US);
	for (int i = 0; i < N2; i++) {
		alloc_b();
		pause_us(STEP2_US);
	}
	ctrack_mark("end");
	pause_us(GAP_US);
	return 0;
}
