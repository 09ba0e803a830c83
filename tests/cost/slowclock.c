/* SPDX-License-Identifier: MIT */
/* The cost guard's clock (tests/cost/guard): preloaded before the shim under callgrind, it makes
 * CLOCK_MONOTONIC run SLOWDOWN times slower, so that the writer's clock-driven work (flushes every 5 ms
 * while events come, TIME records, RSS samples: preload/writer.c) follows the events, not how fast
 * valgrind runs on a loaded machine. Every other clock is the kernel's. No allocation, no stdio. */
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* callgrind runs these workloads 100-300 times slower than they run natively: with 1000, a run of
 * 4-10 s sees 4-10 ms go by, a flush or two by the clock (tests/cost/guard says what that bought). */
#define SLOWDOWN 1000

#define NS 1000000000ull

int clock_gettime(clockid_t id, struct timespec *ts);

int clock_gettime(clockid_t id, struct timespec *ts)
{
	static _Atomic uint64_t start;          /* the first reading, in ns: the slow clock starts there */
	if (syscall(SYS_clock_gettime, id, ts)) /* sets errno, as clock_gettime does */
		return -1;
	if (id != CLOCK_MONOTONIC)
		return 0;
	uint64_t now = (uint64_t)ts->tv_sec * NS + (uint64_t)ts->tv_nsec, first = 0;
	if (!atomic_compare_exchange_strong(&start, &first, now))
		now = now > first ? first + (now - first) / SLOWDOWN : first; /* another thread began it */
	ts->tv_sec = (time_t)(now / NS);
	ts->tv_nsec = (long)(now % NS);
	return 0;
}
