/* SPDX-License-Identifier: MIT */
/* preload/threadslot.c: each live thread has a slot of its own, the same on every call, zero when
 * claimed and reused once released; a table that fills up gets a next one; a fork child keeps only
 * the caller's slot. "bench" times a lookup against a __thread access. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "threadslot.h"

static atomic_int failures;

static void fail(const char *what)
{
	atomic_fetch_add(&failures, 1);
	fprintf(stderr, "FAIL %s\n", what);
}

/* ---- live threads: distinct slots, stable, zero when claimed ---- */

#define THREADS 32
#define ROUNDS 2000
static pthread_barrier_t all_claimed;

static void *slot_owner(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	struct ct_slot *s = ct_slot();
	if (s->in_shim || s->walk.cuts || s->thread || s->unwind)
		fail("a new slot is not zero");
	s->walk.cuts = id;
	pthread_barrier_wait(&all_claimed);
	for (int i = 0; i < ROUNDS; i++) {
		if (ct_slot() != s || s->walk.cuts != id) {
			fail("a thread's slot moved, or another thread wrote into it");
			break;
		}
		s->in_shim++;
		s->in_shim--;
	}
	pthread_barrier_wait(&all_claimed);
	s->walk.cuts = 0;
	ct_slot_release();
	return NULL;
}

static size_t owned_slots(void)
{
	size_t n = 0;
	for (unsigned i = 0; i < CT_SLOT_COUNT; i++)
		n += atomic_load(&ct_slot_table[i].owner) > 1;
	return n;
}

static void live_threads(void)
{
	pthread_t t[THREADS];
	size_t before = owned_slots();

	pthread_barrier_init(&all_claimed, NULL, THREADS);
	for (unsigned i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, slot_owner, (void *)(uintptr_t)(i + 1));
	for (unsigned i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&all_claimed);
	if (owned_slots() != before)
		fail("released slots are still owned");
}

/* A thread that keeps something in its slot keeps the slot; one that exits without release
 * leaves a slot a later thread at the same thread pointer takes over (glibc reuses stacks). */
static void *keeps_state(void *arg)
{
	ct_slot()->in_shim = 1;
	ct_slot_release();
	if (!ct_slot()->in_shim)
		fail("a slot still in use was released");
	ct_slot()->in_shim = 0;
	ct_slot_release();
	return arg;
}

/* ---- many owners: more tables ---- */

static void more_tables(void)
{
	enum { FAKE = 3 * CT_SLOT_COUNT + 5 };
	static struct ct_slot *got[FAKE];

	/* Thread pointers no real thread has (low addresses), 64 apart like struct pthreads. */
	for (uintptr_t i = 0; i < FAKE; i++) {
		got[i] = ct_slot_find(4096 + 64 * i);
		if (atomic_load(&got[i]->owner) != 4096 + 64 * i) {
			fail("a claimed slot does not name its owner");
			return;
		}
		got[i]->walk.depth = (int)i;
	}
	for (uintptr_t i = 0; i < FAKE; i++)
		if (ct_slot_find(4096 + 64 * i) != got[i] || got[i]->walk.depth != (int)i) {
			fail("an owner of a later table lost its slot");
			return;
		}
	if (ct_slot() == got[0] || owned_slots() != CT_SLOT_COUNT)
		fail("the first table is not full, or the caller lost its slot");
}

/* ---- fork ---- */

static void fork_child(void)
{
	struct ct_slot *mine = ct_slot();
	mine->walk.shared = 7;
	pid_t pid = fork();
	if (pid == 0) {
		ct_slot_after_fork();
		/* The fake owners of more_tables() and the parent's threads are gone; the caller stays. */
		_exit(ct_slot() == mine && mine->walk.shared == 7 && owned_slots() == 1 ? 0 : 1);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail("after fork, the child kept other slots or lost its own");
	mine->walk.shared = 0;
}

/* ---- cost ---- */

static __thread int tls_word;

static double ns_per(int use_slot, long n)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		if (use_slot) {
			struct ct_slot *s = ct_slot();
			__asm__ volatile("" : : "r"(s) : "memory");
			s->in_shim++;
		} else {
			__asm__ volatile("" : : : "memory");
			tls_word++;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n;
}

static int bench(void)
{
	const long n = 50000000;
	ns_per(1, n / 10);
	double slot = ns_per(1, n), tls = ns_per(0, n);
	printf("bench: ct_slot() and an increment %.2f ns; a __thread increment %.2f ns\n", slot, tls);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "bench") == 0)
		return bench();
	struct ct_slot *mine = ct_slot();
	if (ct_slot() != mine)
		fail("the main thread's slot moved");
	for (int i = 0; i < 20; i++)
		live_threads();
	pthread_t t;
	for (int i = 0; i < 100; i++) {
		pthread_create(&t, NULL, keeps_state, NULL);
		pthread_join(t, NULL);
	}
	more_tables();
	fork_child();
	printf("%s: %d failures\n", argv[0], atomic_load(&failures));
	return atomic_load(&failures) != 0;
}
