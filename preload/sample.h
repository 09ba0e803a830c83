/* SPDX-License-Identifier: MIT */
/* Sampling (ctrack --sample=BYTES, CTRACK_SAMPLE): the shim records one allocation per `rate` bytes
 * on average, chosen by a Poisson process over the bytes each thread allocates (heapprofd's and
 * tcmalloc's sampler): each thread counts down an exponentially distributed number of bytes, and an
 * allocation that reaches zero is recorded, the countdown drawn again. An allocation of s bytes is
 * so recorded with probability 1 - exp(-s / rate), whatever came before it (format.h's SAMPLING: the
 * analyzer weighs it by the inverse). An allocation that is not recorded costs its thread a
 * countdown and a compare: no walk, no event.
 *
 * A free is recorded only when it ends a recorded block: the recorded live blocks are a set of
 * addresses (sharded open-addressing tables under spin locks, in the arena), with a filter in front,
 * so the free of a block that was not recorded costs a hash and one load when no recorded block
 * hashes where it does (nearly always at useful rates). The filter is a bitmap, one bit per 16 bytes
 * of heap (a cache line of it covers 8 KiB): a program's heap of megabytes reads a few KiB of it,
 * which stay in the first-level cache (a 16-bit counter per 16 bytes read eight times as many lines,
 * missed on deep's 1 MiB heap, and was a tenth of the sampled run's time). Who set a bit is counted
 * aside (a byte per bit, only under the set's locks: the addresses of one bit share a shard), so a
 * bit is cleared when its last recorded block leaves. An address enters the set after the
 * real allocation and leaves it before the real free, so a reused address is never mistaken for the
 * block it had before. The set's locks know their holder's slot: a signal handler that interrupts
 * its own thread inside the set cannot wait for it, and drops its event (ct_losses.in_signal).
 *
 * Everything here may run inside the program's malloc: no malloc, no stdio, errno untouched. */
#ifndef CTRACK_SAMPLE_H
#define CTRACK_SAMPLE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "threadslot.h"

#define CT_SAMPLE_FILTER_BITS 20 /* bits in the filter: 128 KiB, repeating every 16 MiB of heap */

/* rate: 0 when every allocation is recorded (no sampling); filter: the bitmap, mapped with the set
 * when sampling starts. Written once, by ct_sample_init, before any hook reports. */
struct ct_sampler {
	uint64_t rate;
	_Atomic uint64_t *filter;
	uint64_t seed; /* the seed of the draws, as the SAMPLING record gives it */
};
extern struct ct_sampler ct_sampler CT_HIDDEN;

/* Reads CTRACK_SAMPLE and CTRACK_SAMPLE_SEED (at the shim's start): 0, or -1 when CTRACK_SAMPLE is
 * set but refused (*bad names it; tracing records every allocation then). Without memory for the
 * set, sampling stays off too (-1). */
int ct_sample_init(const char **bad) CT_HIDDEN;
/* Starts sampling at one allocation per rate bytes (1 to CT_SAMPLE_MAX) with seed, or one from the
 * clock when seeded is 0: what ct_sample_init does with the environment's values, for a start whose
 * settings come another way (ctrack -p, attached to a running process: hooks may be running, and
 * see the rate only once the filter is there). 0, or -1 without memory for the filter (sampling
 * stays off: every allocation is recorded). */
int ct_sample_start(uint64_t rate, uint64_t seed, int seeded) CT_HIDDEN;

/* After ct_sample_take crossed zero at an allocation of n bytes on thread s: draws the next
 * countdown, and says whether the allocation is to be recorded (1; 0 at the thread's first, when
 * the first draw lies past it). The block goes into the set with ct_sample_enter once it exists: 1
 * when it did (0 when the set has no room, or a signal handler found its own thread inside it). */
int ct_sample_cross(struct ct_slot *s, uint32_t n) CT_HIDDEN;
int ct_sample_enter(struct ct_slot *s, void *p) CT_HIDDEN;

/* Sampling stops, and nothing of it is left for a later start to misread (ctrack -p: at a detach, and
 * again at the next attach before its settings apply): the rate is 0, the set and the filter are
 * empty (the set's tables back to the system; the filter stays mapped, since a hook may still load
 * from it), every thread's countdown is undrawn (its next sampled allocation draws one at the next
 * rate, not what is left of one drawn at this rate), and the draws start again from the seed.
 * Why this is safe while hooks may run on other threads: the unhooking sends new calls straight
 * to libc, and tracing is off, so a hook consults the sampler only if it checked the tracing state
 * before it went off (a thread inside a hook). Every change to the set and the filter is made under
 * a shard's lock, and this holds all of them, so no insert or remove is halfway while they are
 * emptied; the filter's words are zeroed, never unmapped, and the fast path only loads them. What
 * such a thread does after this is its own event of the window that ended: a block it then puts in
 * the set is one allocated before the next attach, whose free that attach would count as such (it
 * is cleared again at that attach, so only a thread held inside a hook from the detach to the next
 * attach can leave one), and a countdown it stores then is one drawn at the old rate. A fork
 * meanwhile holds the locks from its prepare handler to its parent's (ct_sample_lock_all): this
 * waits for them. Not from a signal handler; on a thread that holds no shard (the writer; gdb's
 * thread, stopped at an allocator's entry, outside the hooks' set operations). */
void ct_sample_stop(void) CT_HIDDEN;

/* ---- temporary allocations ----
 * The matcher takes a block freed by its thread's very next event in the ring for a temporary
 * (match.h). While sampling, the ring holds only the recorded calls: a recorded block's free may come
 * next there with calls left out in between (on sqlite3 at 64 KiB, four times as many temporaries
 * as the full trace's). So from a recorded allocation to the thread's next free (its window) the
 * shim notes whether a call was left out: an allocation moved the countdown off the mark it had at
 * the window's start (every allocation takes a byte or more, or draws anew), a free is left out.
 * Then the thread's next recorded event carries CT_EV_GAP (event.h), and the block is no temporary.
 * An allocation pays nothing for it; a free sampling leaves out looks at its thread's slot only while
 * some thread's window is open, which a counter says (in a cache line of its own: recorded
 * allocations write it). */
struct ct_sample_windows {
	_Alignas(64) _Atomic unsigned open; /* a cache line to itself: sizeof is 64 */
};
extern struct ct_sample_windows ct_sample_windows CT_HIDDEN;

/* Thread s frees: its window, if open, ends; gap 1 when sampling leaves the free out. */
static inline void ct_sample_window_end(struct ct_slot *s, int gap)
{
	if (CT_LIKELY(!s->sample_window))
		return;
	s->sample_window = 0;
	s->sample_gap = (uint8_t)(s->sample_gap | gap | (s->sample_left != s->sample_mark));
	atomic_fetch_sub_explicit(&ct_sample_windows.open, 1, memory_order_relaxed);
}

/* Whether some thread's window is open: a free sampling leaves out must end its own then. */
static inline int ct_sample_windows_open(void)
{
	return atomic_load_explicit(&ct_sample_windows.open, memory_order_relaxed) != 0;
}

/* The slow paths of the inline functions below: ct_sample_cross, then ct_sample_enter. */
int ct_sample_hit(struct ct_slot *s, void *p, uint32_t n) CT_HIDDEN;
int ct_sample_forget_slow(uintptr_t p) CT_HIDDEN;

/* p's bit in the filter. Neighbouring blocks have neighbouring bits, so a program's working set
 * reads a few lines of the filter, not one at random per free (that load was two thirds of the free
 * hook's time on churn); the address's high bits, hashed, place arenas apart. */
static inline uint32_t ct_sample_bit(uintptr_t p)
{
	uint64_t arena = ((p >> 26) * 0x9E3779B97F4A7C15ull) >> (64 - CT_SAMPLE_FILTER_BITS);
	return (uint32_t)((p >> 4) + arena) & ((1u << CT_SAMPLE_FILTER_BITS) - 1);
}

/* The bytes an allocation of size bytes takes off the countdown: malloc(0) counts as a byte (it is
 * an allocation); a size past the countdown's range crosses it. */
static inline uint32_t ct_sample_bytes(size_t size)
{
	return size > UINT32_MAX ? UINT32_MAX : size ? (uint32_t)size : 1;
}

/* Takes n bytes off thread s's countdown: 1 when it reached zero (ct_sample_hit decides then), 0
 * when not. One instruction subtracts and says whether the
 * countdown reached zero (borrow or zero), so a signal handler's allocation on this thread comes
 * wholly before or after it, never in between. */
static inline int ct_sample_take(struct ct_slot *s, uint32_t n)
{
	int crossed;
	__asm__("subl %2, %0" : "+m"(s->sample_left), "=@ccbe"(crossed) : "r"(n));
	return crossed;
}

/* A block of size bytes came back from the real allocator at p, to be reported by thread s: 1 when
 * it is to be recorded (always, without sampling; when sampled, p is in the set now), 0 when not. */
static inline int ct_sample_alloc(struct ct_slot *s, void *p, size_t size)
{
	if (CT_LIKELY(!ct_sampler.rate))
		return 1;
	uint32_t n = ct_sample_bytes(size);
	if (CT_LIKELY(!ct_sample_take(s, n)))
		return 0;
	return ct_sample_hit(s, p, n);
}

/* 1 when p, about to be freed, is certainly not a recorded block (a hash and a load); 0 when it
 * may be (ct_sample_free decides). Only while sampling. */
static inline int ct_sample_unrecorded(const void *p)
{
	uint32_t bit = ct_sample_bit((uintptr_t)p);
	return !(atomic_load_explicit(&ct_sampler.filter[bit >> 6], memory_order_relaxed) >> (bit & 63) & 1);
}

/* p is about to be freed (or realloc'ed) by thread s: 1 when its free is to be recorded (always,
 * without sampling; when sampled, p was a recorded block, and has left the set), 0 when not. */
static inline int ct_sample_free(struct ct_slot *s, const void *p)
{
	if (CT_LIKELY(!ct_sampler.rate))
		return 1;
	int recorded = !ct_sample_unrecorded(p) && ct_sample_forget_slow((uintptr_t)p);
	ct_sample_window_end(s, !recorded);
	return recorded;
}

/* Thread s ends: a window it leaves open would keep every free looking at its slot. */
static inline void ct_sample_thread_exit(struct ct_slot *s)
{
	ct_sample_window_end(s, 0);
}

/* A recorded block that a failed realloc left live goes back into the set. */
void ct_sample_keep(void *p) CT_HIDDEN;

/* Around fork: the set's locks are taken before (when sampling), and the same let go after in both
 * processes (glibc runs one fork's handlers at a time); the child draws from a seed of its own. */
void ct_sample_lock_all(void) CT_HIDDEN;
void ct_sample_unlock_all(int child) CT_HIDDEN;

#endif
