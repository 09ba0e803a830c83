/* SPDX-License-Identifier: MIT */
/* LeakSanitizer's interface (compiler-rt's sanitizer/lsan_interface.h), exported with its meaning,
 * so a program annotated for LSan (its calls usually declared weak, so it builds without a
 * sanitizer) gets LSan's verdicts under ctrack unchanged:
 *  - __lsan_disable/__lsan_enable (nested, per thread) and __lsan_ignore_object: such blocks are no
 *    leaks; the scan takes each as a start pointer, so it and what it reaches are still reachable
 *    (LSan's frontier does the same);
 *  - __lsan_register_root_region/__lsan_unregister_root_region: regions scanned as roots, where
 *    readable;
 *  - __lsan_do_leak_check: the scan now, and none at exit (its classes are the trace's last);
 *    __lsan_do_recoverable_leak_check: the scan now, 1 when a block is definitely or indirectly lost.
 *    Neither ends the program: the verdict is ctrack's check, after the run, with the suppressions.
 * The ignored blocks are a set of addresses (open addressing, tombstones, grown under a lock): a
 * free looks its block up without the lock, only while the set holds any, and takes it out before
 * the real free, so a new block at that address is not ignored. The lock records its owner: a
 * signal handler interrupting its own thread's holder skips the set instead of deadlocking. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "control.h"
#include "leakscan.h"
#include "lsan.h"
#include "shim.h"

#define EXPORT __attribute__((visibility("default")))
#define EMPTY ((uintptr_t)0)
#define TOMB ((uintptr_t)1)
#define MAX_REGIONS 256

struct set {
	size_t cap; /* a power of two */
	_Atomic uintptr_t key[];
};

static struct {
	_Atomic uintptr_t owner; /* the lock: its holder's thread pointer, or 0 */
	struct set *_Atomic set;
	size_t used; /* keys and tombstones */
	struct region {
		uintptr_t lo, size;
	} regions[MAX_REGIONS];
	size_t nregions;
} g;

_Atomic size_t ct_lsan_ignoring;

static uintptr_t self(void)
{
	return (uintptr_t)__builtin_thread_pointer();
}

/* 1 when taken; 0 when this thread holds it already (a signal handler that interrupted it). */
static int lock(void)
{
	uintptr_t me = self(), none = 0;
	if (atomic_load_explicit(&g.owner, memory_order_relaxed) == me)
		return 0;
	while (!atomic_compare_exchange_weak_explicit(&g.owner, &none, me, memory_order_acquire,
	                                              memory_order_relaxed))
		none = 0;
	return 1;
}

static void unlock(void)
{
	atomic_store_explicit(&g.owner, 0, memory_order_release);
}

static size_t slot_of(uintptr_t p, size_t cap)
{
	return (size_t)(((uint64_t)p * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
}

/* The slot that holds p in s, or the capacity when none does. */
static size_t find(const struct set *s, uintptr_t p)
{
	for (size_t i = slot_of(p, s->cap), n = 0; n < s->cap; i = (i + 1) & (s->cap - 1), n++) {
		uintptr_t k = atomic_load_explicit(&s->key[i], memory_order_acquire);
		if (k == p)
			return i;
		if (k == EMPTY)
			break;
	}
	return s->cap;
}

static void put(struct set *s, uintptr_t p)
{
	size_t i = slot_of(p, s->cap);
	while (atomic_load_explicit(&s->key[i], memory_order_relaxed) > TOMB)
		i = (i + 1) & (s->cap - 1);
	atomic_store_explicit(&s->key[i], p, memory_order_release);
}

/* A set with room for one more key (under the lock), or NULL. Old sets stay mapped: a free may be
 * reading one without the lock. They add up to less than the newest. */
static struct set *room(void)
{
	struct set *s = atomic_load_explicit(&g.set, memory_order_relaxed);
	if (s && 2 * (g.used + 1) <= s->cap)
		return s;
	size_t cap = s ? s->cap * 2 : 1024;
	struct set *t = ct_arena_map(sizeof(*t) + cap * sizeof(t->key[0]));
	if (!t)
		return NULL;
	t->cap = cap;
	g.used = 0;
	for (size_t i = 0; s && i < s->cap; i++) {
		uintptr_t k = atomic_load_explicit(&s->key[i], memory_order_relaxed);
		if (k > TOMB)
			put(t, k), g.used++;
	}
	atomic_store_explicit(&g.set, t, memory_order_release);
	return t;
}

static void ignore(uintptr_t p)
{
	if (!p || !lock())
		return;
	struct set *s = atomic_load_explicit(&g.set, memory_order_relaxed);
	if (!s || find(s, p) == s->cap) {
		s = room();
		if (s) {
			put(s, p);
			g.used++;
			atomic_fetch_add(&ct_lsan_ignoring, 1);
		}
	}
	unlock();
}

void ct_lsan_ignore(const void *p)
{
	ignore((uintptr_t)p);
}

void ct_lsan_forget(const void *p)
{
	struct set *s = atomic_load_explicit(&g.set, memory_order_acquire);
	if (!s || find(s, (uintptr_t)p) == s->cap || !lock())
		return;
	s = atomic_load_explicit(&g.set, memory_order_relaxed); /* the newest, under the lock */
	size_t i = find(s, (uintptr_t)p);
	if (i < s->cap) {
		atomic_store_explicit(&s->key[i], TOMB, memory_order_release);
		atomic_fetch_sub(&ct_lsan_ignoring, 1);
	}
	unlock();
}

void ct_lsan_roots(struct ct_reach *r,
                   void (*root_range)(struct ct_reach *r, uintptr_t lo, uintptr_t hi, void *arg), void *arg,
                   uint64_t *blocks, uint64_t *bytes)
{
	*blocks = *bytes = 0;
	int locked = lock(); /* the other threads are stopped: none holds it but this one */
	const struct set *s = atomic_load_explicit(&g.set, memory_order_relaxed);
	for (size_t i = 0; s && i < s->cap; i++) {
		uintptr_t p = atomic_load_explicit(&s->key[i], memory_order_relaxed);
		long b = p > TOMB ? ct_reach_block_at(r, p) : -1;
		if (b < 0)
			continue;
		ct_reach_root_word(r, r->blocks[b].start);
		*blocks += 1;
		*bytes += r->blocks[b].size;
	}
	for (size_t i = 0; i < g.nregions; i++)
		root_range(r, g.regions[i].lo, g.regions[i].lo + g.regions[i].size, arg);
	if (locked)
		unlock();
}

/* ---- the interface ---- */

EXPORT void __lsan_disable(void);
EXPORT void __lsan_enable(void);
EXPORT void __lsan_ignore_object(const void *p);
EXPORT void __lsan_register_root_region(const void *p, size_t size);
EXPORT void __lsan_unregister_root_region(const void *p, size_t size);
EXPORT void __lsan_do_leak_check(void);
EXPORT int __lsan_do_recoverable_leak_check(void);

void __lsan_disable(void)
{
	int e = errno;
	ct_slot()->lsan_disabled++;
	errno = e;
}

void __lsan_enable(void)
{
	int e = errno;
	struct ct_slot *s = ct_slot();
	if (s->lsan_disabled > 0) /* LSan dies of an unmatched enable; the program's behaviour wins */
		s->lsan_disabled--;
	errno = e;
}

/* The heap block that holds p is no leak. The shim knows no block's bounds (the writer does): p is
 * kept as it is and the scan takes the block that holds it; a free takes out the block's start, so an
 * interior pointer stays in the set after its block is freed (and may name a later block there). */
void __lsan_ignore_object(const void *p)
{
	int e = errno;
	ignore((uintptr_t)p);
	errno = e;
}

void __lsan_register_root_region(const void *p, size_t size)
{
	int e = errno;
	int locked = lock();
	if (g.nregions < MAX_REGIONS)
		g.regions[g.nregions++] = (struct region){(uintptr_t)p, size};
	if (locked)
		unlock();
	errno = e;
}

void __lsan_unregister_root_region(const void *p, size_t size)
{
	int e = errno;
	int locked = lock();
	for (size_t i = 0; i < g.nregions; i++)
		if (g.regions[i].lo == (uintptr_t)p && g.regions[i].size == size) {
			g.regions[i] = g.regions[--g.nregions];
			break;
		}
	if (locked)
		unlock();
	errno = e;
}

void __lsan_do_leak_check(void)
{
	static _Atomic int done;
	int e = errno;
	uint64_t lost[CT_CLASSES], blocks[CT_CLASSES];
	if (!atomic_exchange(&done, 1) && ct_control_check(lost, blocks) == 0)
		ct_leakscan_last();
	errno = e;
}

int __lsan_do_recoverable_leak_check(void)
{
	int e = errno;
	uint64_t lost[CT_CLASSES], blocks[CT_CLASSES];
	int leaks =
	    ct_control_check(lost, blocks) == 0 && blocks[CT_CLASS_DEFINITE] + blocks[CT_CLASS_INDIRECT] > 0;
	errno = e;
	return leaks;
}
