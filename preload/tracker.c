/* SPDX-License-Identifier: MIT */
/* The tracker core: turns a hooked call into a ring event (unwind, intern the stack, push), and
 * owns the shim's life cycle: configuration, the trace file, threads, fork, exec, exit.
 * Runs inside hooks with ct_in_shim set: no malloc, no stdio, errno restored by the caller. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <dlfcn.h>

#include "aggregate.h"
#include "attach.h"
#include "cfirows.h"
#include "defer.h"
#include "epollwait.h"
#include "leakscan.h"
#include "procmaps.h"
#include "sample.h"
#include "shim.h"
#include "text.h"
#include "unwind.h"
#include "writer.h"

_Atomic int ct_state;
int ct_depth = CT_DEPTH_DEFAULT;
struct ct_losses ct_losses;

static int follow_children;
static pid_t traced_pid;         /* the process the trace file belongs to */
static char trace_dir[PATH_MAX]; /* where a traced child writes its trace; "" = current dir */

/* ---- per-thread state: mapped on first use, recycled when the thread exits ---- */

/* The seeds of the two chains of hash_prefixed. */
#define CHAIN_SEED_X 0x9E3779B97F4A7C15ull
#define CHAIN_SEED_Y 0xC2B2AE3D27D4EB4Full

/* Backtrace hash -> stack id, in sets of 2: two stacks of a loop that shared a slot of a
 * direct-mapped cache would be interned again at every turn. Two levels: every thread has the small
 * cache inside its state (8 KiB, mostly in L1/L2); a thread that misses it often (a program of many
 * stacks: cc1 walks 47,000 times to a stack the small cache lost, and each miss interns 20-40 frames
 * under the table's lock) maps a big one behind it once it has missed GROW_AFTER times (256 KiB):
 * only the threads that need it pay its memory and page faults. Every stack interned after that goes
 * into both; a hit in the big one comes back into the small one. The small one stays first because
 * a lookup in the big one is a cache miss (a random line of 256 KiB), as costly as the walk's own
 * frames on cc1. */
#define STACK_CACHE 512
#define STACK_CACHE_BIG 16384
#define GROW_AFTER (2 * STACK_CACHE)

/* An entry of a stack cache: a set of two is 32 bytes, so a lookup reads one cache line. */
struct stack_entry {
	uint64_t hash; /* 0: empty */
	uint32_t id;
};

struct ct_thread {
	struct ct_ring *ring;
	struct ct_thread *next_free;
	uint32_t generation; /* of the stack index, see ct_stacks_reset_index */
	uint32_t last_id;    /* stack id of the thread's previous backtrace, when last_valid */
	int last_valid;
	int prefix_n; /* chain[0, prefix_n + 2) holds the previous backtrace's hash states (hash_prefixed) */
	uint32_t own_bucket;     /* the counter of the report's own event's next number (own_seq_take) */
	uint32_t cache_misses;   /* of the small cache, until the big one is mapped */
	struct stack_entry *big; /* the big cache (STACK_CACHE_BIG entries), NULL until mapped */
	_Alignas(64) struct stack_entry cache[STACK_CACHE]; /* the small cache */
	uintptr_t ips[CT_DEPTH_MAX];
	struct ct_defer defer; /* events of signal handlers that interrupted a report */
	/* The hash chains' values, outermost frame first: chain[0] and chain[1] their seeds, chain[k + 2]
	 * the value frame k (from the outermost) gives the chain it extends. */
	uint64_t chain[CT_DEPTH_MAX + 2];
};

static pthread_key_t thread_key;
static int have_key; /* thread_key is the shim's (key_lock) */
static pthread_mutex_t key_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ct_thread *free_threads;
static _Atomic uint32_t stack_generation;

/* Empties the thread's stack caches; the big one, if any, is unmapped. */
static void stack_cache_reset(struct ct_thread *t)
{
	if (t->big)
		ct_arena_unmap(t->big, STACK_CACHE_BIG * sizeof(struct stack_entry));
	t->big = NULL;
	memset(t->cache, 0, sizeof(t->cache));
	t->cache_misses = 0;
}

/* Maps the big cache (empty: the stacks the thread meets again fill it at one lookup of the stack
 * table each). Without memory the thread keeps the small one alone. */
static __attribute__((noinline, cold)) void stack_cache_grow(struct ct_thread *t)
{
	t->big = ct_arena_map(STACK_CACHE_BIG * sizeof(struct stack_entry));
}

/* The stack id of hash h in the big cache, 0 when not there (0 is the empty stack's: found again by
 * interning it, as cheap as this). Out of line: most lookups end in the small cache. */
static __attribute__((noinline)) uint32_t stack_cache_big_find(struct ct_thread *t, uint64_t h)
{
	const struct stack_entry *set = &t->big[(unsigned)(h >> 40) & (STACK_CACHE_BIG - 2)];
	return set[0].hash == h ? set[0].id : set[1].hash == h ? set[1].id : 0;
}

static void stack_cache_put(struct stack_entry *set, uint64_t h, uint32_t id)
{
	set[1] = set[0]; /* the set's older entry makes room */
	set[0].hash = h;
	set[0].id = id;
}

static pid_t gettid_raw(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void thread_exit(void *arg)
{
	struct ct_thread *t = arg;
	int e = errno;
	ct_in_shim = 1;
	if (t->ring)
		ct_ring_release(t->ring);
	stack_cache_reset(t);
	ct_unwind_thread_exit();
	ct_sample_thread_exit(ct_slot());
	t->ring = NULL;
	if (ct_slot()->thread == t)
		ct_slot()->thread = NULL;
	pthread_mutex_lock(&free_lock);
	t->next_free = free_threads;
	free_threads = t;
	pthread_mutex_unlock(&free_lock);
	ct_in_shim = 0;
	errno = e;
	ct_slot_release();
}

/* ---- learning of a thread's end without keeping the program's resources ----
 * The shim learns of a thread's end through a pthread key's destructor: glibc runs it again while a
 * later destructor of the program's allocates, so the thread's state is released after the
 * program's last event. But the key is one of the program's 1024: when the program asks for a key
 * and none is left, the shim gives its own back (ct_track_give_key) and learns of later threads'
 * ends through glibc's __cxa_thread_atexit_impl (C++ thread_local destructors use it), which takes
 * nothing of the program's: it keeps a list of cells it callocs, and frees each after its call. The
 * shim's cell comes from a pool of its own (calloc's hook sees CT_GUARD_CELL) and goes back there
 * through the free hook (ct_is_cell): the program's heap never holds it. The same pool serves the
 * thread vectors glibc callocs for the lanes' threads (ct_shim_thread), so that starting them moves
 * none of the program's blocks. That handler runs before
 * the program's key destructors: a thread whose destructor allocates makes its state again, kept by
 * its slot for the next thread with the same thread pointer (glibc reuses stacks). Threads that held
 * the key's value when it was given back keep their state (no destructor runs for them). */

int __cxa_thread_atexit_impl(void (*fn)(void *), void *obj, void *dso_symbol);
extern void *__dso_handle __attribute__((weak));

#define CELL_SIZE 64
#define CELLS (CT_CELLS_BYTES / CELL_SIZE)
uintptr_t ct_cells = UINTPTR_MAX - CT_CELLS_BYTES; /* no address until the pool is mapped */
static _Atomic uint64_t cells_used[CELLS / 64];
static uint8_t cell_span[CELLS]; /* the cells of the piece that starts at a cell */

/* Takes n free cells in a row of word w's 64 (n <= 64); the first's index, or -1. */
static long take_cells(size_t w, unsigned n)
{
	uint64_t run = n == 64 ? ~0ull : (1ull << n) - 1, used = atomic_load(&cells_used[w]);
	for (unsigned bit = 0; bit + n <= 64;) {
		if (used & run << bit) {
			bit++;
			continue;
		}
		if (atomic_compare_exchange_weak(&cells_used[w], &used, used | run << bit))
			return (long)(w * 64 + bit);
	}
	return -1;
}

void *ct_track_cell(size_t size)
{
	static _Atomic int mapped; /* 0 not yet, 1 mapping, 2 done, 3 failed */
	int none = 0;
	if (atomic_compare_exchange_strong(&mapped, &none, 1)) {
		void *pool = ct_arena_map(CT_CELLS_BYTES);
		if (pool)
			ct_cells = (uintptr_t)pool;
		atomic_store(&mapped, pool ? 2 : 3);
	}
	while (atomic_load(&mapped) == 1)
		sched_yield();
	unsigned n = size ? (unsigned)((size + CELL_SIZE - 1) / CELL_SIZE) : 1;
	if (size > 64 * CELL_SIZE || atomic_load(&mapped) != 2)
		return NULL;
	for (size_t w = 0; w < CELLS / 64; w++) {
		long i = take_cells(w, n);
		if (i >= 0) {
			void *cell = (void *)(ct_cells + (size_t)i * CELL_SIZE);
			cell_span[i] = (uint8_t)n;
			memset(cell, 0, n * CELL_SIZE);
			return cell;
		}
	}
	return NULL;
}

size_t ct_track_cell_size(const void *p)
{
	return cell_span[((uintptr_t)p - ct_cells) / CELL_SIZE] * (size_t)CELL_SIZE;
}

void ct_track_cell_free(const void *p)
{
	size_t i = ((uintptr_t)p - ct_cells) / CELL_SIZE;
	unsigned n = cell_span[i];
	uint64_t run = n >= 64 ? ~0ull : (1ull << n) - 1;
	atomic_fetch_and(&cells_used[i / 64], ~(run << (i % 64)));
}

/* thread_exit runs when the calling thread ends. */
static void watch_thread_end(struct ct_thread *t)
{
	struct ct_slot *s = ct_slot();
	int saved = s->in_shim;
	pthread_mutex_lock(&key_lock);
	if (have_key) {
		s->in_shim++; /* it may calloc: the shim's own allocation, not a signal handler's */
		pthread_setspecific(thread_key, t);
	} else if (gettid_raw() != getpid()) { /* the main thread's end is the process's */
		s->in_shim = CT_GUARD_CELL;
		__cxa_thread_atexit_impl(thread_exit, t, &__dso_handle);
	}
	s->in_shim = saved;
	pthread_mutex_unlock(&key_lock);
}

int ct_track_give_key(void)
{
	pthread_mutex_lock(&key_lock);
	int had = have_key;
	if (had)
		pthread_key_delete(thread_key);
	have_key = 0;
	pthread_mutex_unlock(&key_lock);
	return had;
}

/* Makes the calling thread's state, in its slot s, during its first report. It is published there
 * before anything is written to it, so that a signal handler interrupting the rest keeps its
 * events in its buffer of deferred events (the first writes to a fresh mapping fault, and a
 * signal is delivered when the kernel returns: a favourite spot). That needs no setting up: a
 * state not in use has no ring and no entry waiting (its thread ended with none). If no ring
 * comes, the handler's events are dropped (counted). */
static struct ct_thread *thread_new(struct ct_slot *s)
{
	pthread_mutex_lock(&free_lock);
	struct ct_thread *t = free_threads;
	if (t)
		free_threads = t->next_free;
	pthread_mutex_unlock(&free_lock);
	if (!t && !(t = ct_arena_map(sizeof(*t))))
		return NULL;
	s->thread = t;
	atomic_signal_fence(memory_order_seq_cst);
	stack_cache_reset(t); /* a state from the free list has no big cache: its thread's end unmapped it */
	t->last_valid = 0;
	t->prefix_n = 0;
	t->chain[0] = CHAIN_SEED_X;
	t->chain[1] = CHAIN_SEED_Y;
	t->generation = atomic_load_explicit(&stack_generation, memory_order_relaxed);
	t->ring = ct_ring_acquire(gettid_raw());
	if (!t->ring) {
		s->thread = NULL;
		return NULL;
	}
	watch_thread_end(t);
	return t;
}

/* ---- stacks ---- */

/* Two independent multiply chains over alternate frames, so the multiplies overlap (the chain of
 * one per frame was a third of the tracker's time), then one mix of both. */
static inline uint64_t hash_stack(const uintptr_t *ips, int n, int truncated)
{
	uint64_t a = (uint64_t)n * 2 + (uint64_t)truncated + 0x9E3779B97F4A7C15ull, b = 0xC2B2AE3D27D4EB4Full;
	int i = 0;
	for (; i + 1 < n; i += 2) {
		a = (a ^ ips[i]) * 0xff51afd7ed558ccdull;
		b = (b ^ ips[i + 1]) * 0xc4ceb9fe1a85ec53ull;
		a ^= a >> 29;
		b ^= b >> 31;
	}
	if (i < n)
		a = (a ^ ips[i]) * 0xff51afd7ed558ccdull;
	uint64_t h = (a ^ (b >> 17) ^ (b << 47)) * 0x9E3779B97F4A7C15ull;
	return (h ^ h >> 32) | 1; /* 0 marks an empty cache slot */
}

/* The hash of a whole backtrace, from the outermost frame in, each step extending the state of the
 * frames outside it: a backtrace that shares its outer frames with the previous one hashes only
 * its own inner frames (ct_unwind_shared). Two chains take turns, so their multiplies overlap:
 * frame k extends the chain whose last value is chain[k], and its value is chain[k + 2], so the
 * state after k frames is (chain[k], chain[k + 1]) and one store per frame keeps it for the next
 * backtrace. Truncated backtraces, whose outermost frame is not the stack's, take hash_stack. */
static inline uint64_t chain_step(uint64_t x, uintptr_t ip)
{
	uint64_t h = (x ^ ip) * 0xff51afd7ed558ccdull;
	return h ^ h >> 29;
}

static inline uint64_t hash_prefixed(struct ct_thread *t, int n, int shared)
{
	uint64_t *c = t->chain + shared;
	const uintptr_t *ip = t->ips + n - 1 - shared; /* frame `shared` from the outermost */
	uint64_t x = c[0], y = c[1];
	int left = n - shared;
	/* Two frames a turn: each chain's value stays in its register, no moves between them. */
	for (; left >= 2; left -= 2, c += 2, ip -= 2) {
		x = chain_step(x, ip[0]);
		y = chain_step(y, ip[-1]);
		c[2] = x, c[3] = y;
	}
	if (left) {
		uint64_t z = chain_step(x, ip[0]);
		c[2] = z;
		x = y, y = z;
	}
	t->prefix_n = n;
	uint64_t h = (x ^ (y >> 17) ^ (y << 47) ^ (uint64_t)n) * 0xc4ceb9fe1a85ec53ull;
	return (h ^ h >> 32) | 1; /* 0 marks an empty cache slot */
}

/* The id of the backtrace in t->ips, which the thread's last walk made; shared: how many of its
 * outer frames that walk took from the memo of the one before (ct_unwind_shared), whose hash
 * states are in t->chain. A backtrace from anywhere else would need 0 and to leave t->chain
 * alone: the thread's next walk speaks of its last one. A signal handler's deferred event passes its
 * own ips (not t->ips) and 0: hash_stack, and t->chain untouched. Inlined: the hot path's. */
static inline __attribute__((always_inline)) uint32_t stack_id(struct ct_thread *t, const uintptr_t *ips,
                                                               int n, int truncated, int shared)
{
	uint32_t gen = atomic_load_explicit(&stack_generation, memory_order_relaxed);
	if (CT_UNLIKELY(gen != t->generation)) {
		memset(t->cache, 0, sizeof(t->cache));
		if (t->big)
			memset(t->big, 0, STACK_CACHE_BIG * sizeof(*t->big));
		t->generation = gen;
		t->last_valid = 0;
	}
	/* Past the previous backtrace or this one: never, unless the unwinder and this disagree. */
	if (truncated || ips != t->ips || shared > t->prefix_n || shared > n)
		shared = 0;
	/* A loop allocating from one place: all of them, and no more. */
	if (t->last_valid && shared > 0 && shared == n && n == t->prefix_n)
		return t->last_id;
	t->last_valid = 1;
	int own = ips == t->ips;
	if (own)
		t->prefix_n = truncated ? 0 : t->prefix_n;
	uint64_t h = own && !truncated ? hash_prefixed(t, n, shared) : hash_stack(ips, n, truncated);
	struct stack_entry *set = &t->cache[(unsigned)(h >> 40) & (STACK_CACHE - 2)];
	if (CT_LIKELY(set[0].hash == h))
		return t->last_id = set[0].id;
	if (set[1].hash == h)
		return t->last_id = set[1].id;
	uint32_t id = t->big ? stack_cache_big_find(t, h) : 0;
	if (id) {
		stack_cache_put(set, h, id);
		return t->last_id = id;
	}
	if (CT_UNLIKELY(!t->big && ++t->cache_misses == GROW_AFTER))
		stack_cache_grow(t);
	id = ct_stacks_intern(ips, n, truncated);
	if (CT_UNLIKELY(id == CT_STACK_ROOT && n > 0)) {
		atomic_fetch_add_explicit(&ct_losses.no_stack, 1, memory_order_relaxed);
		return t->last_id = id; /* not cached: the table may have room again after a dlclose */
	}
	stack_cache_put(set, h, id);
	if (t->big)
		stack_cache_put(&t->big[(unsigned)(h >> 40) & (STACK_CACHE_BIG - 2)], h, id);
	return t->last_id = id;
}

/* ---- events ---- */

/* Sleeps ns (under a second) by the system call itself, not nanosleep(), a cancellation point of the
 * program's: a thread cancelled in the shim would leave it with its guard up and its event lost. */
static void sleep_ns(long ns)
{
	struct timespec ts = {0, ns};
	syscall(SYS_nanosleep, &ts, NULL);
}

/* A full ring waits for the writer, which may need this very core: yield, then sleep briefly. Not
 * once tracing has stopped: the writer may be gone (give_back), and the event is dropped. */
static void wait_for_room(struct ct_thread *t, const uint64_t *w, unsigned n)
{
	atomic_store(&t->ring->inflight, w);
	for (unsigned spins = 0; ct_ring_push(t->ring, w, n) == CT_RING_FULL; spins++) {
		if (atomic_load_explicit(&ct_state, memory_order_relaxed) == CT_OFF)
			break;
		ct_writer_wake();
		if (spins < 8) {
			sched_yield();
		} else {
			sleep_ns(50000);
		}
	}
	atomic_store(&t->ring->inflight, NULL);
}

static inline __attribute__((always_inline)) void push(struct ct_thread *t, const uint64_t *w, unsigned n)
{
	if (CT_UNLIKELY(atomic_load_explicit(&ct_state, memory_order_relaxed) == CT_LATE)) {
		ct_writer_late(w);
		return;
	}
	enum ct_ring_push_result r = ct_ring_push(t->ring, w, n);
	if (CT_UNLIKELY(r != CT_RING_OK)) {
		if (r == CT_RING_FULL)
			wait_for_room(t, w, n);
		ct_writer_wake();
	}
}

/* The thread's state, in its slot (not in TLS), made on its first event; NULL when the thread has
 * no ring (out of memory): its events are counted, for a NOTE, and dropped. */
static struct ct_thread *thread_or_count(struct ct_slot *s)
{
	struct ct_thread *t = s->thread;
	if (CT_LIKELY(t != NULL))
		return t;
	if (CT_UNLIKELY(!(t = thread_new(s))))
		atomic_fetch_add_explicit(&ct_losses.no_ring, 1, memory_order_relaxed);
	return t;
}

static void write_deferred(struct ct_slot *s, struct ct_thread *t, struct ct_defer_entry *e);

static __attribute__((noinline, cold)) void write_predecessors(struct ct_slot *s, struct ct_thread *t,
                                                               const uint64_t *w)
{
	struct ct_defer_entry *e;
	while ((e = ct_defer_before(s, &t->defer, w)))
		write_deferred(s, t, e);
}

/* Pushes the thread's own event w, after the events signal handlers deferred meanwhile whose
 * numbers were taken before w's (defer.h: each ring must hold its events in the order their numbers
 * were taken, or two rings can wait for each other). Their numbers were taken where a
 * reported event takes its own, so they follow the allocator's order; the rest of the deferred
 * events follow w when the report ends (ct_track_deferred). No handler's event can be about the
 * block w is about: a free is reported before its real free (the block is still the program's, and
 * freeing it twice is the program's bug), an allocation after the real one returned but before the
 * program has the block. A realloc's report spans the real call: the events of handlers that ran
 * during it come between its start and its end, where their numbers are (after the end when the
 * realloc failed: defer.h). */
static inline void push_own(struct ct_slot *s, struct ct_thread *t, const uint64_t *w, unsigned n)
{
	if (CT_UNLIKELY(ct_defer_pending(s)))
		write_predecessors(s, t, w);
	push(t, w, n);
}

/* The number of the thread's own event about p. The counter is named first, where a signal
 * handler that defers an event reads it (note_seen): the handler then knows whether it ran before
 * the number was taken, wherever the signal came (defer.h). */
static inline uint32_t own_seq_take_at(struct ct_thread *t, uint32_t bucket)
{
	t->own_bucket = bucket;
	atomic_signal_fence(memory_order_seq_cst);
	return atomic_fetch_add_explicit(&ct_seq[bucket], 1, memory_order_relaxed); /* ct_seq_take's */
}

static inline uint32_t own_seq_take(struct ct_thread *t, uintptr_t p)
{
	return own_seq_take_at(t, ct_seq_bucket(p));
}

/* The thread's gap as the flag of the event that begins its next call (CT_EV_GAP), cleared: set
 * only while sampling, by the calls sampling left out (sample.h). */
static inline uint64_t gap_take(struct ct_slot *s)
{
	if (CT_LIKELY(!s->sample_gap))
		return 0;
	s->sample_gap = 0;
	return CT_EV_GAP;
}

/* The stack id of a walk the thread made before (ct_unwind_replay), kept with the stacks' generation
 * it was interned in: 1 and *stack when this walk would be that one. The tracker's own state (the
 * chain of hashes, the last id) is left to the last walk made, which the memo describes. */
static inline int replayed(struct ct_slot *s, const struct ct_caller *c, uint64_t *stack)
{
	uint64_t tag;
	if (!ct_unwind_replay(s, c->ra, c->sp, c->bp, ct_depth, &tag) ||
	    (uint32_t)(tag >> 32) != atomic_load_explicit(&stack_generation, memory_order_relaxed))
		return 0;
	*stack = (uint32_t)tag;
	return 1;
}

void ct_track_alloc(struct ct_slot *s, void *p, size_t size, const struct ct_caller *c)
{
	struct ct_thread *t = thread_or_count(s);
	if (CT_UNLIKELY(!t))
		return;
	int truncated = 0;
	/* The counter's line comes in during the walk (ct_seq_prefetch's, with the bucket kept). */
	uint32_t bucket = ct_seq_bucket((uintptr_t)p);
	__builtin_prefetch(&ct_seq[bucket], 1, 3);
	uint64_t stack;
	if (!replayed(s, c, &stack)) {
		int n = ct_unwind_from_slot(s, c->ra, c->sp, c->bp, t->ips, ct_depth, &truncated);
		stack = stack_id(t, t->ips, n, truncated, ct_unwind_shared_of(s));
		if (!truncated && stack != CT_STACK_ROOT)
			ct_unwind_keep(s, n, stack | (uint64_t)t->generation << 32);
	}
	uint64_t w[3] = {(uint64_t)CT_EV_ALLOC << CT_EV_SHIFT | (uintptr_t)p | gap_take(s), size,
	                 stack | (uint64_t)own_seq_take_at(t, bucket) << 32};
	push_own(s, t, w, 3);
}

/* free's own, the most frequent event after allocations: no kind to test, a constant length. */
void ct_track_free(struct ct_slot *s, void *p, uintptr_t ra)
{
	struct ct_thread *t = thread_or_count(s);
	if (CT_UNLIKELY(!t))
		return;
	uint64_t w[3] = {(uint64_t)CT_EV_FREE << CT_EV_SHIFT | (uintptr_t)p | gap_take(s),
	                 own_seq_take(t, (uintptr_t)p), ra};
	push_own(s, t, w, 3);
}

void ct_track_event(enum ct_event kind, void *p, uintptr_t ra)
{
	struct ct_slot *s = ct_slot();
	struct ct_thread *t = thread_or_count(s);
	if (CT_UNLIKELY(!t))
		return;
	uint64_t w[3] = {
	    (uint64_t)kind << CT_EV_SHIFT | (uintptr_t)p | (kind == CT_EV_RBEGIN ? gap_take(s) : 0), 0, ra};
	if (kind == CT_EV_RFREE) {
		push_own(s, t, w, 1);
		return;
	}
	w[1] = own_seq_take(t, (uintptr_t)p);
	push_own(s, t, w, kind == CT_EV_RFAIL ? 2 : 3);
}

/* ---- events of signal handlers that interrupted a report (defer.h) ---- */

static void write_deferred(struct ct_slot *s, struct ct_thread *t, struct ct_defer_entry *e)
{
	uint64_t w[3] = {e->w[0], e->w[1], e->w[2]};
	if (CT_EV_KIND(w[0]) == CT_EV_ALLOC) {
		/* The repeat shortcut speaks of the thread's last walks; this backtrace is not one. */
		t->last_valid = 0;
		w[2] |= stack_id(t, e->ips, e->frames, e->truncated, 0);
		t->last_valid = 0;
	}
	push(t, w, ct_event_words(w[0]));
	ct_defer_written(s, &t->defer, e);
}

void ct_track_deferred(void)
{
	struct ct_slot *s = ct_slot();
	struct ct_thread *t = s->thread;
	struct ct_defer_entry *e;
	unsigned lost = 0;
	if (CT_UNLIKELY(!t)) { /* the thread's first report found no ring: nothing can be written */
		uint32_t tail = atomic_load_explicit(&s->defer.tail, memory_order_relaxed);
		lost = tail - s->defer.head;
		s->defer.head = tail;
	} else {
		while ((e = ct_defer_next(s, &t->defer, &lost)))
			write_deferred(s, t, e);
	}
	if (lost)
		atomic_fetch_add_explicit(&ct_losses.in_signal, lost, memory_order_relaxed);
}

struct deferred_end_visit {
	void (*fn)(uint64_t p, void *arg);
	void *arg;
};

static void visit_deferred_ends(struct ct_slot *s, void *arg)
{
	const struct deferred_end_visit *v = arg;
	struct ct_thread *t = s->thread;
	uint32_t tail = atomic_load_explicit(&s->defer.tail, memory_order_relaxed);
	if (!t || tail - s->defer.head > CT_DEFER_ENTRIES) /* none, or read while moving */
		return;
	for (uint32_t pos = s->defer.head; pos != tail; pos++) {
		const struct ct_defer_entry *e = ct_defer_at(&t->defer, pos);
		/* READY comes before the real free (hooks.c); one not ready yet has not freed */
		if (e->state == CT_DEFER_READY && ct_event_ends_block(e->w[0]))
			v->fn(CT_EV_PTR(e->w[0]), v->arg);
	}
}

void ct_track_each_deferred_end(void (*fn)(uint64_t p, void *arg), void *arg)
{
	struct deferred_end_visit v = {fn, arg};
	ct_slot_each(visit_deferred_ends, &v);
}

/* n entries of the thread's buffer for a signal handler: the first one's position, or -1 (the
 * event is counted and dropped): the buffer is full, or the thread has none yet (the interrupted
 * report is its first, and had not made its state yet). */
static int64_t defer_claim(unsigned n)
{
	struct ct_slot *s = ct_slot();
	int64_t pos = s->thread ? ct_defer_claim(s, n) : -1;
	if (pos < 0)
		atomic_fetch_add_explicit(&ct_losses.in_signal, 1, memory_order_relaxed);
	return pos;
}

/* What the handler filling e sees of the interrupted report: the counter named for its own event's
 * number and that counter's value (defer.h). With the handler's own number taken: the handler runs
 * whole, so before or after, the same. */
static void note_seen(struct ct_defer_entry *e)
{
	e->seen_bucket = ct_slot()->thread->own_bucket;
	e->seen = atomic_load_explicit(&ct_seq[e->seen_bucket], memory_order_relaxed);
}

static struct ct_defer_entry *defer_entry(int64_t pos)
{
	return ct_defer_at(&ct_slot()->thread->defer, pos);
}

/* The walk runs here, in the handler, into the entry's own frames (the thread's hold the
 * interrupted report's). The unwinder allows it even nested in the report's own walk: it counts
 * walks in progress, and a nested one writes neither its rule cache nor its memo. The frames of the
 * report it passes through after the signal frame (the hook, the tracker, what they called) are
 * dropped. */
static void fill_alloc(struct ct_defer_entry *e, void *p, size_t size, const struct ct_caller *c)
{
	int truncated = 0;
	e->frames = ct_unwind_from_handler(c->ra, c->sp, c->bp, e->ips, ct_depth, &truncated);
	e->truncated = truncated;
	e->w[0] = (uint64_t)CT_EV_ALLOC << CT_EV_SHIFT | (uintptr_t)p;
	e->w[1] = size;
	e->w[2] = (uint64_t)ct_seq_take((uintptr_t)p) << 32;
	note_seen(e);
	ct_defer_ready(e);
}

static void fill_event(struct ct_defer_entry *e, enum ct_event kind, void *p, uintptr_t ra)
{
	e->w[0] = (uint64_t)kind << CT_EV_SHIFT | (uintptr_t)p;
	e->w[1] = kind == CT_EV_RFREE ? 0 : ct_seq_take((uintptr_t)p);
	note_seen(e);
	e->w[2] = ra;
	ct_defer_ready(e);
}

void ct_track_defer_alloc(void *p, size_t size, const struct ct_caller *c)
{
	int64_t pos = defer_claim(1);
	if (pos >= 0)
		fill_alloc(defer_entry(pos), p, size, c);
}

void ct_track_defer_event(enum ct_event kind, void *p, uintptr_t ra)
{
	int64_t pos = defer_claim(1);
	if (pos >= 0)
		fill_event(defer_entry(pos), kind, p, ra);
}

int64_t ct_track_defer_pair(void)
{
	return defer_claim(2);
}

void ct_track_defer_start(int64_t pair, void *old, uintptr_t ra)
{
	fill_event(defer_entry(pair), CT_EV_RBEGIN, old, ra);
}

void ct_track_defer_end(int64_t pair, void *old, void *p, size_t size, const struct ct_caller *c)
{
	if (p)
		fill_alloc(defer_entry(pair + 1), p, size, c);
	else
		fill_event(defer_entry(pair + 1), size == 0 ? CT_EV_RFREE : CT_EV_RFAIL, old, 0);
}

/* ---- the program runs short of memory ---- */

int ct_track_out_of_memory(size_t size)
{
	if (atomic_load(&ct_state) != CT_ACTIVE || getpid() != traced_pid)
		return 0;
	/* A request that fails whatever the shim holds (huge sizes, a limit far below them) is the
	 * program's own business: tracing goes on. */
	uint64_t room = ct_headroom();
	if (size > ct_writer_releasable() + ct_cfirows_bytes() + (room == UINT64_MAX ? 0 : room))
		return 0;
	atomic_store(&ct_state, CT_OFF); /* the hooks stop reporting; the writer takes what is in */
	int rc = ct_writer_give_back(size);
	ct_cfirows_release(); /* no walk needs the unwinder's row tables now */
	return rc == 0;
}

/* ---- configuration and the trace file ---- */

/* Creates ctrack.NAME.PID.zst (or .PID.N.zst when taken: an exec'd image keeps its pid) in the
 * trace directory: never clobbers, never follows a symlink, mode 0600. */
static int create_trace(void)
{
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[len > 0 ? len : 0] = 0;
	for (unsigned attempt = 0; attempt < 100; attempt++) {
		char path[PATH_MAX];
		if (ct_trace_name(path, sizeof(path), trace_dir, len > 0 ? exe : "process", getpid(),
		                  attempt) < 0)
			return -1;
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

/* CTRACK_FD=FD:DEV:INO names the file the launcher created for this process. After an exec the
 * descriptor is gone (close-on-exec) or is something else: then the new image makes its own. */
static int inherited_trace(void)
{
	const char *v = getenv(CT_ENV_FD);
	if (!v || !*v)
		return -1;
	char *end;
	long fd = strtol(v, &end, 10);
	if (*end != ':')
		return -1;
	unsigned long long dev = strtoull(end + 1, &end, 10);
	if (*end != ':')
		return -1;
	unsigned long long ino = strtoull(end + 1, &end, 10);
	struct stat st;
	if (fd < 0 || fstat((int)fd, &st) < 0 || st.st_dev != dev || st.st_ino != ino || !S_ISREG(st.st_mode))
		return -1;
	if (lseek((int)fd, 0, SEEK_END) != 0) /* already written: not ours any more */
		return -1;
	fcntl((int)fd, F_SETFD, FD_CLOEXEC);
	return (int)fd;
}

/* Without --follow-children, children must not load the shim: take it out of LD_PRELOAD, in
 * place (no allocation), restoring exactly what the user had. */
static void unpreload_self(void)
{
	const char *shim = getenv(CT_ENV_SHIM);
	char *list = getenv("LD_PRELOAD");
	if (!shim || !*shim || !list)
		return;
	size_t n = strlen(shim);
	char *p = list;
	while ((p = strstr(p, shim))) {
		int starts = p == list || p[-1] == ' ' || p[-1] == ':';
		char after = p[n];
		if (!starts || (after && after != ' ' && after != ':')) {
			p += n;
			continue;
		}
		size_t skip = n + (after ? 1 : 0);
		memmove(p, p + skip, strlen(p + skip) + 1);
	}
	if (!*list)
		unsetenv("LD_PRELOAD");
}

/* Once read, ctrack's settings leave the program's environment, so that a program that copies or
 * prints its environment does exactly what it does untraced, and children that are not followed
 * inherit nothing of ctrack. unsetenv moves pointers in place: it does not allocate. */
static void forget_settings(void)
{
	static const char *const names[] = {CT_ENV_DEPTH,       CT_ENV_FOLLOW,   CT_ENV_DIR,
	                                    CT_ENV_FD,          CT_ENV_SHIM,     CT_ENV_SAMPLE,
	                                    CT_ENV_SAMPLE_SEED, CT_ENV_AGGREGATE};
	unpreload_self(); /* it needs CT_ENV_SHIM */
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unsetenv(names[i]);
}

/* A setting the shim refused, for the writer's NOTE ("CTRACK_DEPTH=1024"). */
static void refuse_setting(const char *name, const char *value)
{
	static char buf[96];
	struct ct_text t = ct_text_in(buf, sizeof(buf));
	ct_text_add(&t, name);
	ct_text_add(&t, "=");
	ct_text_add(&t, value); /* cut to fit */
	ct_losses.bad_setting = buf;
}

static void read_config(void)
{
	const char *v = getenv(CT_ENV_DEPTH);
	if (v && *v && ct_parse_depth(v, &ct_depth) < 0)
		refuse_setting(CT_ENV_DEPTH,
		               v); /* the launcher refuses it; a direct LD_PRELOAD gets a NOTE */
	ct_agg_setting(getenv(CT_ENV_AGGREGATE)); /* a value the launcher would refuse: 1 s */
	const char *bad = NULL;
	if (ct_sample_init(&bad) < 0 && bad) /* sampling off: every allocation is recorded */
		refuse_setting(bad, getenv(bad));
	v = getenv(CT_ENV_FOLLOW);
	follow_children = v && *v == '1';
	v = getenv(CT_ENV_DIR);
	if (v && *v && strlen(v) < sizeof(trace_dir))
		strcpy(trace_dir, v);
}

/* ---- life cycle ---- */

/* The prepare handler took the locks: the handlers after the fork let them go even when tracing
 * went off meanwhile (a detach on the writer). glibc runs one fork's handlers at a time. */
static int fork_locked;

static void atfork_prepare(void)
{
	fork_locked = atomic_load(&ct_state) == CT_ACTIVE;
	if (!fork_locked)
		return;
	ct_in_shim++;
	ct_stacks_lock();
	ct_sample_lock_all();
}

static void atfork_parent(void)
{
	if (!fork_locked)
		return;
	fork_locked = 0;
	ct_sample_unlock_all(0);
	ct_stacks_unlock();
	ct_in_shim--;
}

/* The child has one thread, this one, and no writer. It gets a trace of its own, or none. */
static void atfork_child(void)
{
	ct_slot_after_fork();
	ct_attach_after_fork_child();
	int locked = fork_locked;
	fork_locked = 0;
	if (locked) {
		ct_sample_unlock_all(1);
		ct_stacks_unlock();
	}
	if (atomic_load(&ct_state) != CT_ACTIVE) {
		ct_in_shim -= locked;
		return;
	}
	ct_in_shim += !locked; /* tracing started during the fork (an attach): as if prepared */
	pthread_mutex_init(&free_lock, NULL);
	ct_ring_forget_all();
	struct ct_thread *self = ct_slot()->thread;
	if (self && self->ring) {
		self->ring = ct_ring_acquire(gettid_raw());
		if (!self->ring)
			ct_slot()->thread = NULL;
	}
	traced_pid = getpid();
	atomic_store(&ct_losses.no_ring, 0); /* the parent's trace tells its own losses */
	atomic_store(&ct_losses.no_stack, 0);
	atomic_store(&ct_losses.in_signal, 0);
	int fd = follow_children ? create_trace() : -1;
	if (fd < 0)
		atomic_store(&ct_state, CT_OFF);
	ct_writer_after_fork_child(fd);
	ct_in_shim--;
}

static void finish_at_exit(void);

void ct_init(void)
{
	static _Atomic int once;
	int expected = 0;
	if (!atomic_compare_exchange_strong(&once, &expected, 1)) {
		/* Another thread is starting the shim: wait for it (this thread is not inside it). */
		while (atomic_load(&ct_state) == CT_UNINIT && atomic_load(&once) == 1)
			sched_yield();
		return;
	}
	int e = errno;
	ct_in_shim++;
	ct_epoll_init();
	read_config();
	traced_pid = getpid();
	int fd = inherited_trace();
	if (!follow_children) /* followed children need them all */
		forget_settings();
	if (fd < 0)
		fd = create_trace();
	int state = CT_OFF;
	if (fd >= 0) {
		have_key = pthread_key_create(&thread_key, thread_exit) == 0;
		pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
		at_quick_exit(finish_at_exit);
		ct_leakscan_init();
		if (ct_writer_start(fd) == 0)
			state = CT_ACTIVE;
		if (state == CT_ACTIVE)
			ct_crash_install();
	}
	atomic_store(&ct_state, state);
	atomic_store(&once, 2);
	ct_in_shim--;
	errno = e;
}

int ct_track_owns(void)
{
	return atomic_load(&ct_state) == CT_ACTIVE && getpid() == traced_pid;
}

int ct_track_before_exec(const char *path)
{
	/* A vfork child shares our memory and our writer but ran no fork handler: it must not
	 * write into the parent's trace (nor take its lock, which its exec would leave held). */
	return getpid() == traced_pid ? ct_writer_exec(path) : 0;
}

void ct_track_exec_failed(void)
{
	ct_writer_exec_failed();
}

void ct_track_crash(int sig, const void *ucontext)
{
	/* Not in a child the trace is not following, nor in a vfork child (its parent's writer). */
	if (atomic_load(&ct_state) == CT_ACTIVE && getpid() == traced_pid) {
		struct ct_thread *t = ct_slot()->thread;
		ct_writer_crash(sig, ucontext, t ? t->ring : NULL);
	}
}

void ct_track_main_exit(void)
{
	if (atomic_load(&ct_state) == CT_ACTIVE && getpid() == traced_pid && gettid_raw() == traced_pid)
		ct_writer_main_exited();
}

void ct_track_before_dlclose(void)
{
	/* Frames inside the library must be written while its module record can still be read. */
	ct_writer_sync();
}

void ct_track_after_dlclose(void)
{
	/* Its addresses may be reused by the next library: forget rules and interned frames. */
	ct_unwind_invalidate();
	ct_stacks_reset_index();
	atomic_fetch_add(&stack_generation, 1);
	ct_modules_mark_dirty();
}

/* libstdc++ keeps an emergency exception pool that only this function frees (valgrind calls it
 * with --run-cxx-freeres, heaptrack at exit): without it every C++ program "leaks" ~72 KiB. */
static void cxx_freeres(void)
{
	void (*freeres)(void);
	void *sym = dlsym(RTLD_DEFAULT, "_ZN9__gnu_cxx9__freeresEv");
	memcpy(&freeres, &sym, sizeof(sym));
	if (!freeres)
		return;
	int saved = ct_in_shim;
	ct_in_shim = 0;
	freeres();
	ct_in_shim = saved;
}

/* The thread finishing the trace (0: none yet). */
static _Atomic pid_t finisher;

/* Until the trace is finished (ct_state leaves CT_ACTIVE), when another thread finishes it; with
 * limit_ms, for that long at most while no thread has begun to. */
static void wait_finished(long limit_ms)
{
	int e = errno;
	for (long ms = 0; atomic_load(&ct_state) == CT_ACTIVE; ms++) {
		if (limit_ms && ms >= limit_ms && !atomic_load(&finisher))
			break;
		sleep_ns(1000000);
	}
	errno = e;
}

void ct_track_finish(void)
{
	if (atomic_load(&ct_state) != CT_ACTIVE || getpid() != traced_pid)
		return;
	pid_t none = 0, me = gettid_raw();
	if (!atomic_compare_exchange_strong(&finisher, &none, me)) {
		/* Another thread finishes the trace (this one calls _exit meanwhile): the process would end
		 * under it, its last events and END unwritten. The finisher itself (a handler of its) goes
		 * on. */
		if (none != me)
			wait_finished(0);
		return;
	}
	cxx_freeres();
	/* This frame waits while the writer scans: the registers spilled here and every frame above
	 * are the exiting thread's roots. */
	jmp_buf regs;
	setjmp(regs);
	ct_writer_finish(regs);
	atomic_store(&ct_state, CT_LATE);
}

void ct_track_exit_begin(void)
{
	/* pid << 32 | tid of the first thread of this process to call exit (another process's: a fork
	 * or vfork child's, is none) */
	static _Atomic uint64_t first;
	uint64_t pid = (uint64_t)getpid(), me = pid << 32 | (uint32_t)gettid_raw();
	if (atomic_load(&ct_state) != CT_ACTIVE || pid != (uint64_t)traced_pid)
		return;
	uint64_t seen = atomic_load(&first);
	while (seen >> 32 != pid)
		if (atomic_compare_exchange_weak(&first, &seen, me))
			return;
	if (seen != me) /* a thread of this process called exit first */
		wait_finished(EXIT_WAIT_MS);
}

__attribute__((constructor)) static void ct_constructor(void)
{
	if (atomic_load(&ct_state) != CT_UNINIT || ct_in_shim)
		return;
	if (ct_attach_loaded_late()) /* gdb's dlopen (ctrack -p): ctrack_attach_v1 starts tracing */
		atomic_store(&ct_state, CT_OFF);
	else
		ct_init();
}

/* ---- attach mode (attach.c): tracing starts in a running process, maybe again after a detach ---- */

int ct_track_attach(int fd, int depth)
{
	static int prepared;
	int s = atomic_load(&ct_state);
	if (s == CT_ACTIVE || s == CT_LATE) {
		close(fd);
		return -EALREADY;
	}
	ct_epoll_init(); /* not in a hook, where a signal handler's first wait would call dlsym */
	ct_depth = depth;
	traced_pid = getpid();
	atomic_store(&ct_losses.no_ring, 0); /* an earlier window's trace told its own */
	atomic_store(&ct_losses.no_stack, 0);
	atomic_store(&ct_losses.in_signal, 0);
	if (!prepared) { /* no crash handlers: the program's sigaction calls are not hooked */
		have_key = pthread_key_create(&thread_key, thread_exit) == 0;
		pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
		at_quick_exit(finish_at_exit);
		ct_leakscan_init();
		ct_leakscan_untrusted();
		prepared = 1;
	}
	int rc = ct_writer_attach(fd);
	if (rc == 0)
		atomic_store(&ct_state, CT_ACTIVE);
	return rc;
}

/* exit runs the destructors, quick_exit the at_quick_exit handlers (glibc's quick_exit then calls
 * its internal _exit, out of the _exit hook's reach). Registered first, this one runs last. */
static void finish_at_exit(void)
{
	int e = errno;
	ct_in_shim++;
	ct_track_finish();
	ct_in_shim--;
	errno = e;
}

__attribute__((destructor)) static void ct_destructor(void)
{
	finish_at_exit();
}
