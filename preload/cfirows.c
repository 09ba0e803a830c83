/* SPDX-License-Identifier: MIT */
/* The FDE row tables (cfirows.h): an open-addressing table of pointers by FDE address, each to rows
 * kept in 128 KiB chunks of the arena, mapped as they fill and freed only when the program needs the
 * memory (ct_cfirows_release). A thread that makes a table publishes it with one compare-and-swap;
 * readers take what they find, counted while they read so that the store is never unmapped under
 * one. */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "cfirows.h"

#define SLOT_BITS 13
#define SLOTS (1u << SLOT_BITS)
/* Slots an FDE's table may lie in, from its hash's: past them it is not kept. */
#define PROBES 8
/* The tables' bytes, in chunks mapped as they fill (the program's address space is its own: a
 * python that maps right up to its limit must not find 4 MiB gone): cc1 -O2 on a 140 KB file keeps
 * some 2,400 tables in 565 KiB. A program that meets more functions than fit runs the CFI of the
 * rest as before. */
#define CHUNK_BITS 17
#define CHUNK (1u << CHUNK_BITS)
#define CHUNKS 32
_Static_assert(CT_CFIROWS_MAX * sizeof(struct ct_cfi_row) + 64 <= CHUNK, "a table fits in a chunk");

/* An FDE's table made in generation gen: its n rows for [begin, begin + range), or n < 0 when it has
 * none (ct_cfi_fde_rows failed: the FDE's CFI is run for each ip, as before). */
struct table {
	const uint8_t *fde;
	uintptr_t begin, range;
	unsigned gen;
	int n;
	struct ct_cfi_row rows[];
};

struct store {
	_Atomic(struct table *) slots[SLOTS];
	_Atomic size_t used; /* bytes of the chunks taken, in order; may run past the last one */
	_Atomic(char *) chunk[CHUNKS];
	_Atomic unsigned chunks; /* mapped */
};

/* Rules computed without a store before one is mapped: a program that meets a few hundred functions
 * (most tests, short tools) pays neither its address space nor its tables' making. */
#define STORE_AFTER 256

static _Atomic(struct store *) store_;
static _Atomic int no_store;     /* no memory for it, or given back: not mapped again */
static _Atomic unsigned readers; /* threads between taking the store and their last read of it */
static _Atomic unsigned before;  /* rules computed while there was none */

/* The store, mapped on the STORE_AFTER-th rule a walk that may keep one computes (pages as they
 * fill). The caller counts itself among the readers first (seq_cst both: ct_cfirows_release either
 * sees it or is seen). */
static struct store *store_get(int make)
{
	struct store *s = atomic_load(&store_);
	if (s || !make || atomic_load_explicit(&no_store, memory_order_relaxed) ||
	    atomic_fetch_add_explicit(&before, 1, memory_order_relaxed) < STORE_AFTER)
		return s;
	struct store *fresh = ct_arena_map(sizeof(*fresh));
	if (!fresh) {
		atomic_store_explicit(&no_store, 1, memory_order_relaxed);
		return NULL;
	}
	if (atomic_compare_exchange_strong(&store_, &s, fresh))
		return fresh;
	ct_arena_unmap(fresh, sizeof(*fresh)); /* another thread's came first */
	return s;
}

size_t ct_cfirows_bytes(void)
{
	struct store *s = atomic_load(&store_);
	return s ? sizeof(*s) + (size_t)atomic_load(&s->chunks) * CHUNK : 0;
}

void ct_cfirows_release(void)
{
	atomic_store_explicit(&no_store, 1, memory_order_relaxed);
	struct store *s = atomic_exchange(&store_, NULL);
	if (!s)
		return;
	/* Readers leave within microseconds; one that stays (stopped by a debugger, or its handler
	 * blocked) keeps the store mapped. */
	for (int tries = 0; atomic_load(&readers) && tries < 100000; tries++)
		sched_yield();
	if (atomic_load(&readers))
		return;
	for (unsigned i = 0; i < CHUNKS; i++)
		ct_arena_unmap(atomic_load(&s->chunk[i]), CHUNK);
	ct_arena_unmap(s, sizeof(*s));
}

static unsigned slot_of(const uint8_t *fde)
{
	return (unsigned)(((uintptr_t)fde * 0x9e3779b97f4a7c15ull) >> (64 - SLOT_BITS));
}

static size_t table_bytes(int n)
{
	return (offsetof(struct table, rows) + (size_t)(n > 0 ? n : 0) * sizeof(struct ct_cfi_row) + 15) &
	       ~(size_t)15;
}

/* Chunk i, mapped by the first thread to need it; NULL without memory (no table is made again). */
static char *chunk_get(struct store *s, unsigned i)
{
	char *c = atomic_load_explicit(&s->chunk[i], memory_order_acquire);
	if (c)
		return c;
	char *fresh = ct_arena_map(CHUNK);
	if (!fresh) {
		atomic_store_explicit(&no_store, 1, memory_order_relaxed);
		return NULL;
	}
	if (atomic_compare_exchange_strong(&s->chunk[i], &c, fresh)) {
		atomic_fetch_add(&s->chunks, 1);
		return fresh;
	}
	ct_arena_unmap(fresh, CHUNK); /* another thread's came first */
	return c;
}

/* Room for a table of n rows within one chunk, or NULL when the chunks are full. */
static struct table *table_new(struct store *s, int n)
{
	size_t bytes = table_bytes(n);
	for (;;) {
		size_t at = atomic_fetch_add_explicit(&s->used, bytes, memory_order_relaxed);
		if (at + bytes > (size_t)CHUNKS * CHUNK)
			return NULL;
		if (at >> CHUNK_BITS != (at + bytes - 1) >> CHUNK_BITS)
			continue; /* across two chunks: lost, and the next try starts in the second */
		char *c = chunk_get(s, (unsigned)(at >> CHUNK_BITS));
		return c ? (struct table *)(c + (at & (CHUNK - 1))) : NULL;
	}
}

/* The rule at ip from n >= 0 rows of [begin, begin + range). */
static int rows_rule(const struct ct_cfi_row *rows, int n, uintptr_t begin, uintptr_t range, uintptr_t ip,
                     struct ct_cfi_rule *out)
{
	if (ip < begin || ip - begin >= range || n < 1)
		return -ENOENT;
	*out = ct_cfi_row_rule(rows, n, ip - begin);
	return 0;
}

/* fde's table of generation gen, made in the store: through scratch (its rows copied), or for an FDE
 * with more rows than scratch holds, counted first and then made in place. NULL when the store is
 * full; a table of n -1 when the FDE has none. */
static struct table *make_table(struct store *s, const uint8_t *fde, unsigned gen, struct ct_cfi_row *scratch)
{
	uintptr_t begin = 0, range = 0;
	int n = ct_cfi_fde_rows(fde, scratch, CT_CFIROWS_SCRATCH, &begin, &range);
	if (n == -ENOSPC)
		n = ct_cfi_fde_rows(fde, NULL, CT_CFIROWS_MAX, &begin, &range);
	struct table *t = table_new(s, n);
	if (!t)
		return NULL;
	if (n > CT_CFIROWS_SCRATCH)
		n = ct_cfi_fde_rows(fde, t->rows, n, &begin, &range); /* the same n: the same run */
	else if (n > 0)
		memcpy(t->rows, scratch, (size_t)n * sizeof(*scratch));
	t->fde = fde;
	t->begin = begin;
	t->range = range;
	t->gen = gen;
	t->n = n < 0 ? -1 : n;
	return t;
}

static int table_rule(const struct table *t, const uint8_t *fde, uintptr_t ip, struct ct_cfi_rule *out)
{
	return t->n < 0 ? ct_cfi_fde_rule(fde, ip, out)
	                : rows_rule(t->rows, t->n, t->begin, t->range, ip, out);
}

/* ct_cfirows_rule with the store s taken. */
static int store_rule(struct store *s, const uint8_t *fde, uintptr_t ip, unsigned gen,
                      struct ct_cfi_row *scratch, struct ct_cfi_rule *out)
{
	_Atomic(struct table *) *room = NULL;
	struct table *old = NULL;
	unsigned h = slot_of(fde);
	for (unsigned k = 0; k < PROBES; k++) {
		_Atomic(struct table *) *slot = &s->slots[(h + k) & (SLOTS - 1)];
		struct table *t = atomic_load_explicit(slot, memory_order_acquire);
		if (t && t->fde == fde && t->gen == gen)
			return table_rule(t, fde, ip, out);
		if (!room && (!t || t->gen != gen)) {
			room = slot;
			old = t;
		}
		if (!t) /* tables are never removed: fde's would lie before the first empty slot */
			break;
	}
	struct table *t = NULL;
	if (scratch && room &&
	    atomic_load_explicit(&s->used, memory_order_relaxed) < (size_t)CHUNKS * CHUNK &&
	    !atomic_load_explicit(&no_store, memory_order_relaxed))
		t = make_table(s, fde, gen, scratch);
	if (!t)
		return ct_cfi_fde_rule(fde, ip, out);
	/* lost to another thread's table for this slot: these bytes stay unused */
	atomic_compare_exchange_strong_explicit(room, &old, t, memory_order_release, memory_order_relaxed);
	return table_rule(t, fde, ip, out);
}

int ct_cfirows_rule(const uint8_t *fde, uintptr_t ip, unsigned gen, struct ct_cfi_row *scratch,
                    struct ct_cfi_rule *out)
{
	atomic_fetch_add(&readers, 1);
	struct store *s = store_get(scratch != NULL);
	int rc = s ? store_rule(s, fde, ip, gen, scratch, out) : ct_cfi_fde_rule(fde, ip, out);
	atomic_fetch_sub(&readers, 1);
	return rc;
}
