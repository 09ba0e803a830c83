/* SPDX-License-Identifier: MIT */
/* Threads under stress, counting its own allocation events with atomics (valgrind's counting: a
 * realloc of a live block is 1 allocation + 1 free; glibc's TLS vectors are not the program's).
 * `cross SECONDS`: 64 threads for SECONDS (or 20000 rounds each): each round allocates one block
 *   (malloc, calloc, or malloc then realloc) into the mailbox of another thread, then frees what
 *   others sent it (every 8th after a realloc), so every block is freed by a thread that did not
 *   allocate it; main frees what is left at the end. Each thread leaks malloc(100 + i).
 * `storm N`: 4 runner threads allocate and free (one block every 50 us) until N short-lived threads (half
 * joined, half detached, 16 at a time) have each made malloc(8 + t % 200) and calloc(2, 16) and freed them;
 *   storm thread t with t % 500 == 0 leaks malloc(1000).
 * Prints "allocations=A frees=F bytes=B leaked_bytes=L leaked_allocations=N" (write(1), no stdio),
 * exit 0, 1 on a failed call. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define CROSS_THREADS 64
#define CROSS_ROUNDS 20000
#define RUNNERS 4
#define WAVE 16

struct block {
	struct block *next;
	char pad[8];
};

struct mailbox {
	pthread_mutex_t lock;
	struct block *head;
};

static struct mailbox boxes[CROSS_THREADS];
static atomic_ullong allocs, frees, bytes, leaked_bytes, leaked_allocs;
static atomic_int stop, failed, detached_done;

static void *counted(void *p, size_t n)
{
	if (!p) {
		atomic_store(&failed, 1);
		return NULL;
	}
	atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&bytes, n, memory_order_relaxed);
	return p;
}

static void counted_free(void *p)
{
	free(p);
	atomic_fetch_add_explicit(&frees, 1, memory_order_relaxed);
}

/* realloc of a live block: the old one freed, a new one of n bytes allocated */
static void *counted_realloc(void *p, size_t n)
{
	void *q = realloc(p, n);
	if (q)
		atomic_fetch_add_explicit(&frees, 1, memory_order_relaxed);
	return counted(q, n);
}

NOINLINE static void leak_one(size_t n)
{
	if (counted(malloc(n), n)) {
		atomic_fetch_add(&leaked_bytes, n);
		atomic_fetch_add(&leaked_allocs, 1);
	}
}

static struct block *make_block(unsigned long k, int i)
{
	size_t n = 16 + 8 * ((k + (unsigned long)i) % 64);
	switch (k % 4) {
	case 2:
		return counted(calloc(1, n), n);
	case 3:
		return counted_realloc(counted(malloc(n), n), n + 8);
	default:
		return counted(malloc(n), n);
	}
}

static void post(struct mailbox *box, struct block *b)
{
	pthread_mutex_lock(&box->lock);
	b->next = box->head;
	box->head = b;
	pthread_mutex_unlock(&box->lock);
}

static struct block *take_all(struct mailbox *box)
{
	pthread_mutex_lock(&box->lock);
	struct block *list = box->head;
	box->head = NULL;
	pthread_mutex_unlock(&box->lock);
	return list;
}

static void free_list(struct block *b, unsigned long k)
{
	while (b) {
		struct block *next = b->next;
		if (++k % 8 == 0)
			b = counted_realloc(b, 48);
		if (b)
			counted_free(b);
		b = next;
	}
}

static void *cross_thread(void *arg)
{
	int i = (int)(long)arg;
	leak_one(100 + (size_t)i);
	for (unsigned long k = 0; k < CROSS_ROUNDS && !atomic_load(&stop); k++) {
		struct block *b = make_block(k, i);
		if (!b)
			return NULL;
		post(&boxes[(i + 1 + k % (CROSS_THREADS - 1)) % CROSS_THREADS], b);
		free_list(take_all(&boxes[i]), k);
	}
	return NULL;
}

static int cross(double seconds)
{
	pthread_t t[CROSS_THREADS];
	for (int i = 0; i < CROSS_THREADS; i++)
		pthread_mutex_init(&boxes[i].lock, NULL);
	for (int i = 0; i < CROSS_THREADS; i++)
		if (pthread_create(&t[i], NULL, cross_thread, (void *)(long)i))
			return 1;
	struct timespec ts = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
	nanosleep(&ts, NULL);
	atomic_store(&stop, 1);
	for (int i = 0; i < CROSS_THREADS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < CROSS_THREADS; i++)
		free_list(take_all(&boxes[i]), 1); /* main frees what the threads left */
	return 0;
}

static void *runner(void *arg)
{
	(void)arg;
	for (unsigned long k = 0; !atomic_load(&stop); k++) {
		size_t n = 32 + k % 100;
		void *p = counted(malloc(n), n);
		if (!p)
			return NULL;
		counted_free(p);
		struct timespec pause = {0, 50000}; /* running beside the storm, not flooding the trace */
		nanosleep(&pause, NULL);
	}
	return NULL;
}

static void *storm_thread(void *arg)
{
	unsigned long t = (unsigned long)arg;
	size_t n = 8 + t % 200;
	void *p = counted(malloc(n), n);
	void *q = counted(calloc(2, 16), 32);
	if (t % 500 == 0)
		leak_one(1000);
	if (p)
		counted_free(p);
	if (q)
		counted_free(q);
	if (t % 2)
		atomic_fetch_add(&detached_done, 1);
	return NULL;
}

/* one wave of WAVE threads from `first`: the even ones joined, the odd ones detached */
static int wave(unsigned long first)
{
	pthread_t t[WAVE];
	for (int w = 0; w < WAVE; w++)
		if (pthread_create(&t[w], NULL, storm_thread, (void *)(first + (unsigned long)w)))
			return 1;
	for (int w = 0; w < WAVE; w++)
		if ((first + (unsigned long)w) % 2 ? pthread_detach(t[w]) : pthread_join(t[w], NULL))
			return 1;
	return 0;
}

static int storm(unsigned long n)
{
	pthread_t r[RUNNERS];
	for (int i = 0; i < RUNNERS; i++)
		if (pthread_create(&r[i], NULL, runner, NULL))
			return 1;
	n -= n % WAVE;
	for (unsigned long first = 0; first < n; first += WAVE)
		if (wave(first))
			return 1;
	struct timespec ms = {0, 1000000};
	while ((unsigned long)atomic_load(&detached_done) < n / 2)
		nanosleep(&ms, NULL);
	atomic_store(&stop, 1);
	for (int i = 0; i < RUNNERS; i++)
		pthread_join(r[i], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 1;
	int rc = strcmp(argv[1], "cross") == 0   ? cross(atof(argv[2]))
	         : strcmp(argv[1], "storm") == 0 ? storm(strtoul(argv[2], NULL, 10))
	                                         : 1;
	char line[200];
	int len =
	    snprintf(line, sizeof line,
	             "allocations=%llu frees=%llu bytes=%llu leaked_bytes=%llu leaked_allocations=%llu\n",
	             atomic_load(&allocs), atomic_load(&frees), atomic_load(&bytes),
	             atomic_load(&leaked_bytes), atomic_load(&leaked_allocs));
	if (write(1, line, (size_t)len) != len)
		return 1;
	return rc || atomic_load(&failed);
}
