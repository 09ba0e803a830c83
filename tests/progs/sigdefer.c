/* SPDX-License-Identifier: MIT */
/* Signal handlers that allocate, free and realloc while their threads allocate, in THREADS workers
 * (argument 1, at most 16), counting every event (valgrind's counting: a realloc of a live block is
 * 1 allocation + 1 free; glibc's TLS vectors are not the program's).
 * Each worker loops: malloc(16 + i % 32), handed to its mailbox (a lock-free cell) when empty, else
 * freed. main sends SIGUSR1 to every worker every 100 us (pthread_kill); a worker's handler, unless
 * it interrupted libc or the loader (whose malloc must not be entered again), frees the block in
 * the NEXT worker's mailbox (made by another thread), keeps handler_leak's malloc(40), and grows its
 * own chain with realloc (16 bytes more each time, never freed), until it has kept PER_THREAD
 * blocks (argument 2), or for SECONDS (argument 3, for valgrind, which delivers signals seldom: then
 * fewer blocks are no failure). main then frees what the mailboxes hold.
 * Leaks: THREADS * PER_THREAD blocks of 40 bytes (handler_leak), and one chain per worker (the
 * figures printed count what the handlers did).
 * Prints "allocations=A frees=F bytes=B leaked_bytes=L leaked_allocations=N handler_allocations=H
 * handler_frees=G" (write(1), no stdio), then on stderr, for each of its four allocation sites (the
 * workers' first block, their loop, handler_leak, handler_grow), "site function=NAME line=L
 * allocations=A bytes=B", counted by the site's own code (write(2)); exit 0, or 1 on a failed call
 * or after 60 s. The sites' figures matter because the loop allocates from one place, over and over,
 * while handlers interrupt it: a loop's block booked to the handler's site changes no total. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "interrupted.h"

#define NOINLINE __attribute__((noinline))
#define MAX_THREADS 16
#define MAX_PER_THREAD 1000

/* A worker's figures: the loop's and its handler's apart, since a handler interrupts the loop. */
struct figures {
	unsigned long allocs, frees, bytes;
};

/* The allocation sites. Each worker counts its own, the loop's sites in the loop and the handler's
 * in the handler, so no count is shared by code that interrupts the other. */
enum site { WARM_UP, LOOP, HANDLER_LEAK, HANDLER_GROW, SITES };

/* Where each site's call is: the function and the line of the AT() around it. */
static struct {
	const char *_Atomic function;
	_Atomic int line;
} where[SITES];

static void site_is(enum site site, const char *function, int line)
{
	atomic_store_explicit(&where[site].function, function, memory_order_relaxed);
	atomic_store_explicit(&where[site].line, line, memory_order_relaxed);
}

/* The allocating call, as site: the macro's line is the call's, the line its return address has. */
#define AT(site, call) (site_is(site, __func__, __LINE__), (call))

struct worker {
	pthread_t id;
	int index;
	struct figures loop, handler;
	unsigned long site_allocs[SITES], site_bytes[SITES];
	void *_Atomic mailbox;
	void *kept[MAX_PER_THREAD];
	_Atomic int held; /* kept so far */
	char *chain;
	size_t chain_size;
};

static struct worker workers[MAX_THREADS];
static int threads, per_thread;
static atomic_int ready, quiet, stop;
static __thread struct worker *self;

NOINLINE static void handler_leak(struct worker *w)
{
	void *p = AT(HANDLER_LEAK, malloc(40));
	if (!p)
		_exit(1);
	w->kept[atomic_load(&w->held)] = p;
	w->handler.allocs++;
	w->handler.bytes += 40;
	w->site_allocs[HANDLER_LEAK]++;
	w->site_bytes[HANDLER_LEAK] += 40;
	atomic_fetch_add(&w->held, 1);
}

NOINLINE static void handler_free(struct worker *w)
{
	void *p = atomic_exchange(&workers[(w->index + 1) % threads].mailbox, NULL);
	if (!p)
		return;
	free(p);
	w->handler.frees++;
}

NOINLINE static void handler_grow(struct worker *w)
{
	char *p = AT(HANDLER_GROW, realloc(w->chain, w->chain_size + 16));
	if (!p)
		_exit(1);
	if (w->chain)
		w->handler.frees++;
	w->chain = p;
	w->chain_size += 16;
	w->handler.allocs++;
	w->handler.bytes += w->chain_size;
	w->site_allocs[HANDLER_GROW]++;
	w->site_bytes[HANDLER_GROW] += w->chain_size;
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si;
	struct worker *w = self;
	if (!w || atomic_load(&quiet) || interrupted_libc(uc) || atomic_load(&w->held) >= per_thread)
		return;
	handler_free(w);
	handler_leak(w);
	handler_grow(w);
}

NOINLINE static void *work(void *arg)
{
	struct worker *w = arg;
	self = w;
	free(AT(WARM_UP, malloc(1))); /* the shim's state for the thread is made before the signals come */
	w->loop.allocs++, w->loop.frees++, w->loop.bytes++;
	w->site_allocs[WARM_UP]++, w->site_bytes[WARM_UP]++;
	atomic_fetch_add(&ready, 1);
	for (unsigned long i = 0; !atomic_load(&stop); i++) {
		size_t size = 16 + i % 32;
		void *p = AT(LOOP, malloc(size)), *empty = NULL;
		if (!p)
			_exit(1);
		w->loop.allocs++;
		w->loop.bytes += size;
		w->site_allocs[LOOP]++;
		w->site_bytes[LOOP] += size;
		if (!atomic_compare_exchange_strong(&w->mailbox, &empty, p)) {
			free(p);
			w->loop.frees++;
		}
	}
	return NULL;
}

static int all_held(void)
{
	for (int i = 0; i < threads; i++)
		if (atomic_load(&workers[i].held) < per_thread)
			return 0;
	return 1;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Signals every worker every 100 us until each handler has kept its blocks, or for seconds: 1
 * when every handler kept them, 0 when the time ran out. */
static int signal_workers(double seconds)
{
	struct timespec gap = {0, 100000};
	double end = now() + seconds;
	while (!all_held()) {
		if (now() > end)
			return 0;
		for (int i = 0; i < threads; i++)
			pthread_kill(workers[i].id, SIGUSR1);
		nanosleep(&gap, NULL);
	}
	return 1;
}

static void add(struct figures *sum, const struct figures *f)
{
	sum->allocs += f->allocs;
	sum->frees += f->frees;
	sum->bytes += f->bytes;
}

int main(int argc, char **argv)
{
	threads = argc > 1 ? atoi(argv[1]) : 4;
	per_thread = argc > 2 ? atoi(argv[2]) : 250;
	double seconds = argc > 3 ? atof(argv[3]) : 60;
	if (threads < 1 || threads > MAX_THREADS || per_thread < 1 || per_thread > MAX_PER_THREAD ||
	    !(seconds > 0) || interrupted_init() < 0)
		return 1;
	struct sigaction sa = {.sa_sigaction = on_signal, .sa_flags = SA_SIGINFO | SA_RESTART};
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) != 0)
		return 1;
	for (int i = 0; i < threads; i++) {
		workers[i].index = i;
		if (pthread_create(&workers[i].id, NULL, work, &workers[i]) != 0)
			return 1;
	}
	while (atomic_load(&ready) < threads)
		sched_yield();
	int done = signal_workers(seconds);
	atomic_store(&quiet, 1); /* a signal still on its way does nothing */
	atomic_store(&stop, 1);
	struct figures sum = {0, 0, 0}, handler = {0, 0, 0};
	unsigned long leaked_bytes = 0, leaked = 0;
	for (int i = 0; i < threads; i++) {
		struct worker *w = &workers[i];
		pthread_join(w->id, NULL);
		void *left = atomic_exchange(&w->mailbox, NULL);
		if (left) {
			free(left);
			sum.frees++;
		}
		add(&sum, &w->loop);
		add(&handler, &w->handler);
		leaked += (unsigned long)atomic_load(&w->held) + (w->chain != NULL);
		leaked_bytes += 40ul * (unsigned long)atomic_load(&w->held) + w->chain_size;
	}
	add(&sum, &handler);
	char line[256];
	int len =
	    snprintf(line, sizeof line,
	             "allocations=%lu frees=%lu bytes=%lu leaked_bytes=%lu leaked_allocations=%lu "
	             "handler_allocations=%lu handler_frees=%lu\n",
	             sum.allocs, sum.frees, sum.bytes, leaked_bytes, leaked, handler.allocs, handler.frees);
	if (write(1, line, (size_t)len) != len)
		return 1;
	for (int site = 0; site < SITES; site++) {
		unsigned long allocs = 0, bytes = 0;
		for (int i = 0; i < threads; i++)
			allocs += workers[i].site_allocs[site], bytes += workers[i].site_bytes[site];
		len = snprintf(line, sizeof line, "site function=%s line=%d allocations=%lu bytes=%lu\n",
		               atomic_load(&where[site].function), atomic_load(&where[site].line), allocs,
		               bytes);
		if (write(2, line, (size_t)len) != len)
			return 1;
	}
	return done || argc > 3 ? 0 : 1;
}
