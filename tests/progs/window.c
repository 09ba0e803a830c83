/* SPDX-License-Identifier: MIT */
/* Phases at known times, for the time window (ctrack-analyze --from/--to, --between): the mark
 * "phase1", then A_COUNT blocks of A_SIZE bytes (LINE A) all freed, a pause of PAUSE_MS, the mark
 * "phase2", then B_COUNT blocks of B_SIZE bytes (LINE B) kept in a global to the end (still
 * reachable), a pause of PAUSE_MS, the mark "end", a pause of PAUSE_MS. Nothing else allocates
 * between the marks (no stdio), so a window over a phase holds that phase's blocks only. */
#include <stdlib.h>
#include <time.h>

#include "ctrack/ctrack.h"

#define A_COUNT 100
#define A_SIZE 1000
#define B_COUNT 50
#define B_SIZE 3000
#define PAUSE_MS 200
#define NOINLINE __attribute__((noinline))

static void *volatile a[A_COUNT];
static void *volatile b[B_COUNT];

static void pause_ms(long ms)
{
	struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&t, &t))
		;
}

NOINLINE static void phase_a(void)
{
	for (int i = 0; i < A_COUNT; i++)
		a[i] = malloc(A_SIZE); /* LINE A */
	for (int i = 0; i < A_COUNT; i++)
		free(a[i]);
}

NOINLINE static void phase_b(void)
{
	for (int i = 0; i < B_COUNT; i++)
		b[i] = malloc(B_SIZE); /* LINE B */
}

int main(void)
{
	pause_ms(PAUSE_MS);
	ctrack_mark("phase1");
	phase_a();
	pause_ms(PAUSE_MS);
	ctrack_mark("phase2");
	phase_b();
	pause_ms(PAUSE_MS);
	ctrack_mark("end");
	pause_ms(PAUSE_MS);
	return 0;
}
