/* SPDX-License-Identifier: MIT */
/* The table of per-thread slots (contract in threadslot.h): open addressing keyed by the thread
 * pointer, linear probing, freed slots reused; more tables mapped when one is full. Runs inside
 * hooks and signal handlers: no malloc, no lock, no stdio, errno untouched.
 *
 * Invariant that keeps lookups short and correct without a lock: a slot never becomes empty again
 * (a freed one is marked FREE), and a thread claims the first free or empty slot in probe order.
 * So a lookup that meets an empty slot knows the thread has none further on. */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#include "threadslot.h"

enum { EMPTY = 0, FREE = 1 };

struct ct_slot ct_slot_table[CT_SLOT_COUNT];
/* The slot of every thread that finds all tables full and no memory for another: shared, so its
 * recursion guard is held far from 0 (the shim stays out of those threads, whose allocations go
 * unrecorded) and nothing else of it is ever set. */
static struct ct_slot no_room = {.in_shim = 1 << 24};

/* A table after the first, mapped when every table before it was full; never unmapped. */
struct table {
	struct ct_slot s[CT_SLOT_COUNT];
	struct table *_Atomic next;
};
static struct table *_Atomic more; /* the second table, or NULL */

struct probe {
	struct ct_slot *found;      /* the slot tp owns, first in probe order */
	struct ct_slot *free_at;    /* the first free or empty slot, in probe order */
	struct table *_Atomic *end; /* where the next table would be linked, when all are full */
};

/* Looks for tp in one table, from its hash on. Returns 1 when the search is over (found, or an
 * empty slot met: tp is in no later table), 0 when the next table must be searched. */
static int probe_table(struct ct_slot *t, uintptr_t tp, struct probe *p)
{
	uint32_t h = ct_slot_hash(tp);

	for (uint32_t i = 0; i < CT_SLOT_COUNT; i++) {
		struct ct_slot *s = &t[(h + i) & (CT_SLOT_COUNT - 1)];
		uintptr_t o = atomic_load_explicit(&s->owner, memory_order_acquire);
		if (o == tp) {
			p->found = s;
			return 1;
		}
		if (o <= FREE && !p->free_at)
			p->free_at = s;
		if (o == EMPTY)
			return 1;
	}
	return 0;
}

static void lookup(uintptr_t tp, struct probe *p)
{
	struct table *_Atomic *link = &more;

	*p = (struct probe){NULL, NULL, NULL};
	if (probe_table(ct_slot_table, tp, p))
		return;
	for (;;) {
		struct table *t = atomic_load_explicit(link, memory_order_acquire);
		if (!t) {
			p->end = link;
			return;
		}
		if (probe_table(t->s, tp, p))
			return;
		link = &t->next;
	}
}

/* Maps one more table at *end (another thread may have linked one first: that one is used).
 * Returns 0, or -1 when out of memory. */
static int add_table(struct table *_Atomic *end)
{
	int saved_errno = errno;
	struct table *t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct table *expected = NULL;

	errno = saved_errno;
	if (t == MAP_FAILED)
		return atomic_load(end) ? 0 : -1;
	if (!atomic_compare_exchange_strong(end, &expected, t))
		munmap(t, sizeof(*t));
	errno = saved_errno;
	return 0;
}

/* Empties a slot its owner no longer uses, then frees it (release: a later owner sees it empty). */
static void free_slot(struct ct_slot *s)
{
	memset((char *)s + offsetof(struct ct_slot, in_shim), 0,
	       sizeof(*s) - offsetof(struct ct_slot, in_shim));
	atomic_store_explicit(&s->owner, FREE, memory_order_release);
}

struct ct_slot *ct_slot_find(uintptr_t tp)
{
	struct probe p;

	for (;;) {
		lookup(tp, &p);
		if (p.found)
			return p.found;
		if (!p.free_at) {
			if (!p.end || add_table(p.end) < 0)
				return &no_room;
			continue;
		}
		uintptr_t o = atomic_load_explicit(&p.free_at->owner, memory_order_relaxed);
		if (o > FREE || !atomic_compare_exchange_strong_explicit(
		                    &p.free_at->owner, &o, tp, memory_order_acq_rel, memory_order_relaxed))
			continue; /* another thread took it, or a signal handler of this one: look again */
		/* A signal handler that ran between the lookup and the claim may have claimed a slot
		 * for this thread first: the first in probe order is the one every lookup finds. */
		struct ct_slot *claimed = p.free_at;
		lookup(tp, &p);
		if (p.found != claimed)
			free_slot(claimed);
		return p.found;
	}
}

struct ct_slot *ct_slot_lookup(uintptr_t tp)
{
	struct probe p;

	lookup(tp, &p);
	return p.found;
}

void ct_slot_release(void)
{
	struct probe p;

	lookup(ct_slot_tp(), &p);
	struct ct_slot *s = p.found;
	if (s && !s->in_shim && !s->walk.depth && !s->thread && !s->unwind)
		free_slot(s);
}

static void free_others(struct ct_slot *t, uintptr_t tp)
{
	for (uint32_t i = 0; i < CT_SLOT_COUNT; i++) {
		uintptr_t o = atomic_load_explicit(&t[i].owner, memory_order_relaxed);
		if (o > FREE && o != tp)
			free_slot(&t[i]);
	}
}

void ct_slot_after_fork(void)
{
	uintptr_t tp = ct_slot_tp();

	free_others(ct_slot_table, tp);
	for (struct table *t = atomic_load(&more); t; t = atomic_load(&t->next))
		free_others(t->s, tp);
}

static void each_in(struct ct_slot *t, void (*fn)(struct ct_slot *, void *), void *arg)
{
	for (uint32_t i = 0; i < CT_SLOT_COUNT; i++)
		if (atomic_load_explicit(&t[i].owner, memory_order_acquire) > FREE)
			fn(&t[i], arg);
}

void ct_slot_each(void (*fn)(struct ct_slot *, void *), void *arg)
{
	each_in(ct_slot_table, fn, arg);
	for (struct table *t = atomic_load(&more); t; t = atomic_load(&t->next))
		each_in(t->s, fn, arg);
}
