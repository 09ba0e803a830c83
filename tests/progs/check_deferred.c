/* SPDX-License-Identifier: MIT */
/* ctrack_check_leaks() while a thread stands in a signal handler that freed a block in the middle of
 * the shim's work: a free made while the thread reports another event waits in the thread's buffer
 * of deferred events (preload/defer.h) until that report ends, though libc has the block back. A
 * worker makes malloc(32)/free pairs; main sends it SIGUSR1 until the signal lands in libctrack.so
 * (HITS times). There the handler frees `held` (a block of HELD_SIZE bytes reachable through that
 * global until then), waits while main checks, and returns. main loses one block of LEAK_SIZE bytes
 * first, and prints:
 *   checks: HITS answered LEAK_SIZE, 0 otherwise
 * (a block being freed is no leak; the deferred free was taken for one before tracker.c's
 * ct_track_each_deferred_end: checks answered LEAK_SIZE + HELD_SIZE). Untraced: "untraced". */
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <ucontext.h>

#include "ctrack/ctrack.h"
#include "shimspan.h"

#define HITS 20
#define TRIES 200000 /* signals sent at most */
#define LEAK_SIZE 100
#define HELD_SIZE (256 << 10) /* mmapped (the threshold fixed by mallopt) */

#include "lose.h"

enum { SENT, MISSED, FREED, GO_ON, DONE };

/* held's address, masked: no word of the program's memory points to the block (a scan would find
 * it reachable through a copy left in a stack or register, deferred or not). */
#define MASK 0x5a5a5a5a5a5a5a5aull
static volatile uintptr_t held;
static atomic_int phase, stop;
static uintptr_t shim_lo, shim_hi;

static void pause_us(long us)
{
	struct timespec ts = {0, us * 1000};
	nanosleep(&ts, NULL);
}

__attribute__((noinline)) static void hold(void)
{
	held = (uintptr_t)malloc(HELD_SIZE) ^ MASK;
}

__attribute__((noinline)) static void free_held(void)
{
	uintptr_t x = held;
	held = 0;
	free((void *)(x ^ MASK));
}

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	uintptr_t ip = (uintptr_t)((const ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
	(void)sig, (void)si;
	if (ip < shim_lo || ip >= shim_hi) {
		atomic_store(&phase, MISSED);
		return;
	}
	free_held();
	atomic_store(&phase, FREED);
	while (atomic_load(&phase) != GO_ON)
		pause_us(100);
	atomic_store(&phase, DONE);
}

static void *worker(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		void *volatile p = malloc(32); /* volatile: the pair is not optimized away */
		free(p);
	}
	return NULL;
}

/* Signals the worker until the handler frees held in the shim: 1, or 0 after TRIES signals. */
static int hit(pthread_t t)
{
	for (int i = 0; i < TRIES; i++) {
		atomic_store(&phase, SENT);
		pthread_kill(t, SIGUSR1);
		while (atomic_load(&phase) == SENT)
			;
		if (atomic_load(&phase) == FREED)
			return 1;
	}
	return 0;
}

int main(void)
{
	shim_span(&shim_lo, &shim_hi);
	if (!shim_lo) {
		puts("untraced");
		return 0;
	}
	struct sigaction sa = {.sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO | SA_RESTART};
	pthread_t t;
	/* Freed, the block goes back to the kernel: a small one would stay listed in libc's free lists,
	 * which the scan reads (its words point to the block), deferred or not. */
	mallopt(M_MMAP_THRESHOLD, 128 << 10);
	if (sigaction(SIGUSR1, &sa, NULL) != 0 || pthread_create(&t, NULL, worker, NULL) != 0)
		return 1;
	lose();
	int hits = 0, answered = 0;
	while (hits < HITS) {
		hold();
		if (!hit(t))
			break;
		hits++;
		answered += ctrack_check_leaks() == LEAK_SIZE;
		atomic_store(&phase, GO_ON);
		while (atomic_load(&phase) == GO_ON)
			;
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	if (held)
		free_held();
	printf("checks: %d answered %d, %d otherwise\n", answered, LEAK_SIZE, hits - answered);
	return 0;
}
