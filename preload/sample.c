/* SPDX-License-Identifier: MIT */
/* The sampler and the set of sampled live blocks (sample.h): the countdown's draws, the set's shards
 * and their locks. Runs inside the program's malloc: no malloc, no stdio, errno untouched, and no
 * libm (the shim links libc alone), so the exponential draw computes its own logarithm. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ctrack/format.h"
#include "sample.h"
#include "shim.h"

_Static_assert(CT_SAMPLE_MAX == CT_SAMPLING_RATE_MAX, "the writer's rates are those readers take");

struct ct_sampler ct_sampler;

/* ---- the draws ----
 * One stream of numbers for the process: splitmix64 of a counter, so a single-threaded program run
 * twice with one seed samples the same allocations. A draw is made per sampled allocation (and per
 * thread's first), next to a walk of the stack: the shared counter's cache line is no cost there, and
 * a thread's slot has no room for a generator of its own (threadslot.h: one cache line). */
static _Atomic uint64_t draws;

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

#define LN2 0.69314718055994530942
#define SQRT2 1.41421356237309504880

/* -ln(k / 2^53) for k in [1, 2^53]: k = m * 2^e with m in [sqrt(1/2), sqrt(2)), ln m by atanh's
 * series, ln m = 2 (t + t^3/3 + t^5/5 + ...) with t = (m - 1) / (m + 1), |t| < 0.172: the terms up
 * to t^13 leave an error below 1e-11, far under what the estimates can tell. */
static double neg_log_unit(uint64_t k)
{
	int e = 63 - __builtin_clzll(k);
	double m = (double)k / (double)(1ull << e);
	if (m > SQRT2) {
		m /= 2;
		e++;
	}
	double t = (m - 1) / (m + 1), t2 = t * t;
	double ln_m =
	    2 * t *
	    (1 + t2 * (1 / 3. + t2 * (1 / 5. + t2 * (1 / 7. + t2 * (1 / 9. + t2 * (1 / 11. + t2 / 13.))))));
	return -(ln_m + (e - 53) * LN2);
}

/* Bytes to the next sample: an exponential variable of mean rate, rounded up (so an allocation of s
 * bytes holds the next sample exactly when the unrounded distance is at most s), 1 at least. */
static uint32_t draw(void)
{
	uint64_t n = atomic_fetch_add_explicit(&draws, 1, memory_order_relaxed);
	uint64_t k = (splitmix64(ct_sampler.seed + n * 0xD1B54A32D192ED03ull) >> 11) + 1;
	double x = neg_log_unit(k) * (double)ct_sampler.rate;
	if (x >= (double)UINT32_MAX)
		return UINT32_MAX;
	uint32_t whole = (uint32_t)x;
	whole += (double)whole < x;
	return whole ? whole : 1;
}

/* ---- the set ---- */

#define SHARDS 16 /* a power of two */
#define FILTER_BITS (1u << CT_SAMPLE_FILTER_BITS)
#define TABLE_MIN 256
#define EMPTY 0
#define GONE 1 /* a key taken out: probes go on past it (heap addresses are never 0 nor 1) */

/* p's hash in its shard's table (the shard is its filter bit's): the probe starts at h >> 4. */
static uint32_t set_hash(uintptr_t p)
{
	return (uint32_t)(((p >> 4) * 0x9E3779B97F4A7C15ull) >> 32);
}

struct shard {
	_Alignas(64) _Atomic uintptr_t holder; /* the slot of the thread that holds it; 0: free */
	uintptr_t *keys;                       /* cap keys, or NULL */
	uint32_t cap, used, live;              /* used: keys not EMPTY (live ones and GONE) */
};
static struct shard shards[SHARDS];

/* How many recorded blocks hold each of the filter's bits, saturating (a bit held by 255 stays set:
 * its frees take the slow path, which finds the truth in the set). Written only under the lock of
 * the bit's shard; mapped with the filter, its pages touched only where blocks were recorded. */
static uint8_t *holders;

/* The shard of p, whose filter bit is `bit`: every address of one bit in one shard, so the bit and
 * its count change under one lock. */
static struct shard *shard_of(uint32_t bit)
{
	return &shards[bit & (SHARDS - 1)];
}

/* 0 with the shard held, or -1 when the calling thread holds it already: a signal handler that
 * interrupted its thread in the set, which cannot wait for itself. */
static int shard_lock(struct shard *sh)
{
	uintptr_t me = (uintptr_t)ct_slot();
	for (unsigned spins = 0;; spins++) {
		uintptr_t seen = 0;
		if (atomic_compare_exchange_weak_explicit(&sh->holder, &seen, me, memory_order_acquire,
		                                          memory_order_relaxed))
			return 0;
		if (seen == me)
			return -1;
		if (spins < 100)
			__builtin_ia32_pause();
		else
			sched_yield();
	}
}

static void shard_unlock(struct shard *sh)
{
	atomic_store_explicit(&sh->holder, 0, memory_order_release);
}

/* A fresh table for the live keys, a quarter full at most (taking the GONE ones out). 0 or -1. */
static int shard_rehash(struct shard *sh)
{
	uint32_t cap = TABLE_MIN;
	while (cap < (sh->live + 1) * 4)
		cap *= 2;
	uintptr_t *keys = ct_arena_map(cap * sizeof(*keys));
	if (!keys)
		return -1;
	for (uint32_t j = 0; j < sh->cap; j++) {
		uintptr_t p = sh->keys[j];
		if (p <= GONE)
			continue;
		uint32_t i = (set_hash(p) >> 4) & (cap - 1);
		while (keys[i] != EMPTY)
			i = (i + 1) & (cap - 1);
		keys[i] = p;
	}
	if (sh->keys)
		ct_arena_unmap(sh->keys, sh->cap * sizeof(*keys));
	sh->keys = keys;
	sh->cap = cap;
	sh->used = sh->live;
	return 0;
}

/* With the shard held. A table three quarters used is rehashed first, so probes always end. */
static int shard_insert(struct shard *sh, uintptr_t p, uint32_t h)
{
	if ((sh->used + 1) * 4 > sh->cap * 3 && shard_rehash(sh) < 0)
		return -1;
	uint32_t mask = sh->cap - 1;
	for (uint32_t i = (h >> 4) & mask;; i = (i + 1) & mask)
		if (sh->keys[i] <= GONE) {
			sh->used += sh->keys[i] == EMPTY;
			sh->keys[i] = p;
			sh->live++;
			return 0;
		}
}

/* With the shard held: 1 when p was there (now taken out), else 0. */
static int shard_remove(struct shard *sh, uintptr_t p, uint32_t h)
{
	if (!sh->keys)
		return 0;
	uint32_t mask = sh->cap - 1;
	for (uint32_t i = (h >> 4) & mask; sh->keys[i] != EMPTY; i = (i + 1) & mask)
		if (sh->keys[i] == p) {
			sh->keys[i] = GONE;
			sh->live--;
			return 1;
		}
	return 0;
}

/* With the bit's shard held: one more recorded block holds the bit, or one fewer. */
static void bit_hold(uint32_t bit)
{
	if (holders[bit] == UINT8_MAX)
		return;
	if (holders[bit]++ == 0)
		atomic_fetch_or_explicit(&ct_sampler.filter[bit >> 6], 1ull << (bit & 63),
		                         memory_order_relaxed);
}

static void bit_release(uint32_t bit)
{
	if (holders[bit] == UINT8_MAX)
		return;
	if (--holders[bit] == 0)
		atomic_fetch_and_explicit(&ct_sampler.filter[bit >> 6], ~(1ull << (bit & 63)),
		                          memory_order_relaxed);
}

/* p enters the set: 0, or -1 (a handler inside its own thread's set operation: counted as lost; or
 * no memory for a larger table). */
static int set_add(uintptr_t p)
{
	uint32_t bit = ct_sample_bit(p);
	struct shard *sh = shard_of(bit);
	if (shard_lock(sh) < 0) {
		atomic_fetch_add_explicit(&ct_losses.in_signal, 1, memory_order_relaxed);
		return -1;
	}
	int e = errno; /* a rehash maps memory */
	int rc = shard_insert(sh, p, set_hash(p));
	errno = e;
	if (rc == 0)
		bit_hold(bit);
	shard_unlock(sh);
	return rc;
}

/* The countdown crossed zero at this allocation of n bytes, or was not drawn (0). Until the new
 * countdown is stored, the slot says 0: a signal handler's allocation meanwhile (the draw's shared
 * counter makes this the thread's slowest stretch in the shim, where handlers land) draws a
 * countdown of its own, as good as the thread's (memoryless), rather than find the one this
 * allocation used up and be sampled nearly for sure. */
int ct_sample_cross(struct ct_slot *s, uint32_t n)
{
	uint32_t before = s->sample_left + n; /* the countdown before this allocation took its bytes */
	s->sample_left = 0;
	atomic_signal_fence(memory_order_seq_cst);
	if (!before) { /* the thread's first allocation, or one a handler made in the stretch above */
		before = draw();
		if (n < before) {
			s->sample_left = before - n;
			return 0;
		}
	}
	s->sample_left = draw(); /* memoryless: the distance past this block is a fresh draw */
	return 1;
}

struct ct_sample_windows ct_sample_windows;

int ct_sample_enter(struct ct_slot *s, void *p)
{
	if (set_add((uintptr_t)p) != 0)
		return 0;
	/* the countdown as this allocation's crossing drew it */
	s->sample_mark = s->sample_left;
	if (!s->sample_window) {
		s->sample_window = 1;
		atomic_fetch_add_explicit(&ct_sample_windows.open, 1, memory_order_relaxed);
	}
	return 1;
}

int ct_sample_hit(struct ct_slot *s, void *p, uint32_t n)
{
	return ct_sample_cross(s, n) && ct_sample_enter(s, p);
}

int ct_sample_forget_slow(uintptr_t p)
{
	uint32_t bit = ct_sample_bit(p);
	struct shard *sh = shard_of(bit);
	if (shard_lock(sh) < 0) {
		atomic_fetch_add_explicit(&ct_losses.in_signal, 1, memory_order_relaxed);
		return 0;
	}
	int was = shard_remove(sh, p, set_hash(p));
	if (was)
		bit_release(bit);
	shard_unlock(sh);
	return was;
}

void ct_sample_keep(void *p)
{
	if (ct_sampler.rate)
		set_add((uintptr_t)p);
}

/* ---- the settings, fork ---- */

int ct_sample_init(const char **bad)
{
	const char *v = getenv(CT_ENV_SAMPLE), *sv = getenv(CT_ENV_SAMPLE_SEED);
	uint64_t rate, seed = 0;
	if (!v || !*v)
		return 0;
	if (ct_parse_sample(v, &rate) < 0) {
		*bad = CT_ENV_SAMPLE;
		return -1;
	}
	if (sv && *sv && ct_parse_seed(sv, &seed) < 0) {
		*bad = CT_ENV_SAMPLE_SEED;
		return -1;
	}
	return ct_sample_start(rate, seed, sv && *sv);
}

int ct_sample_start(uint64_t rate, uint64_t seed, int seeded)
{
	if (!seeded) /* the time stamp counter, the pid and where the stack lies */
		seed = splitmix64(__builtin_ia32_rdtsc() ^ (uint64_t)getpid() << 32 ^ (uintptr_t)&seed);
	if (!holders)
		holders = ct_arena_map(FILTER_BITS);
	if (holders && !ct_sampler.filter)
		ct_sampler.filter = ct_arena_map(FILTER_BITS / 8);
	if (!ct_sampler.filter || !rate || rate > CT_SAMPLE_MAX)
		return -1;
	ct_sampler.seed = seed;
	__atomic_store_n(&ct_sampler.rate, rate, __ATOMIC_RELEASE); /* last: the hooks test it first */
	return 0;
}

/* The locks ct_sample_lock_all took, for its unlock: the rate may change in between (a detach). */
static int fork_held;

void ct_sample_lock_all(void)
{
	fork_held = ct_sampler.rate != 0;
	for (unsigned i = 0; fork_held && i < SHARDS; i++)
		shard_lock(&shards[i]);
}

void ct_sample_unlock_all(int child)
{
	for (unsigned i = 0; fork_held && i < SHARDS; i++)
		shard_unlock(&shards[i]);
	fork_held = 0;
	if (child && ct_sampler.rate) { /* the parent goes on with the same draws: the child's must differ */
		ct_sampler.seed = splitmix64(ct_sampler.seed ^ (uint64_t)getpid());
		atomic_store(&draws, 0);
	}
	if (child) /* the other threads' windows stayed in the parent */
		atomic_store(&ct_sample_windows.open, ct_slot()->sample_window);
}

static void undraw(struct ct_slot *s, void *arg)
{
	(void)arg;
	s->sample_left = 0;
	s->sample_window = s->sample_gap = 0;
}

/* With every shard held (sample.h says why that is enough). */
static void empty_all(void)
{
	for (uint32_t i = 0; ct_sampler.filter && i < FILTER_BITS / 64; i++)
		atomic_store_explicit(&ct_sampler.filter[i], 0, memory_order_relaxed);
	if (holders) { /* back to zero pages: only the touched ones held anything */
		int e = errno;
		madvise(holders, FILTER_BITS, MADV_DONTNEED);
		errno = e;
	}
	for (unsigned i = 0; i < SHARDS; i++) {
		struct shard *sh = &shards[i];
		if (sh->keys)
			ct_arena_unmap(sh->keys, sh->cap * sizeof(*sh->keys));
		sh->keys = NULL;
		sh->cap = sh->used = sh->live = 0;
	}
}

void ct_sample_stop(void)
{
	int held[SHARDS], all = 1;
	for (unsigned i = 0; i < SHARDS; i++) {
		held[i] = shard_lock(&shards[i]) == 0; /* never this thread's already (sample.h) ... */
		all &= held[i];
	}
	if (all) /* ... else it is inside a set operation of its own: leave the set to it */
		empty_all();
	__atomic_store_n(&ct_sampler.rate, 0, __ATOMIC_RELEASE);
	ct_slot_each(undraw, NULL);
	atomic_store(&ct_sample_windows.open, 0);
	atomic_store(&draws, 0);
	for (unsigned i = 0; i < SHARDS; i++)
		if (held[i])
			shard_unlock(&shards[i]);
}
