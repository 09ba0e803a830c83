/* SPDX-License-Identifier: MIT */
/* The FDE row tables (cfirows.h): an open-addressing table of pointers by FDE address, each to rows
 * kept in one arena mapping that fills from the start and is never freed. A thread that makes a table
 * publishes it with one compare-and-swap; readers take what they find. */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "cfirows.h"

#define SLOT_BITS 14
#define SLOTS (1u << SLOT_BITS)
/* Slots an FDE's table may lie in, from its hash's: past them it is not kept. */
#define PROBES 8
/* The tables' bytes: cc1 -O2 on a 140 KB file keeps 2,448 (640 KiB); a program that meets more
 * functions than fit runs the CFI of the rest as before. */
#define TABLE_BYTES (4u << 20)

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
	_Atomic size_t used; /* bytes[] taken; may run past the end, which takes nothing more */
	_Alignas(16) char bytes[TABLE_BYTES];
};

static _Atomic(struct store *) store_;
static _Atomic int store_failed; /* no memory for it: not asked for again */

/* The store, mapped by the first thread to keep a table (pages as they fill). */
static struct store *store_get(int make)
{
	struct store *s = atomic_load_explicit(&store_, memory_order_acquire);
	if (s || !make || atomic_load_explicit(&store_failed, memory_order_relaxed))
		return s;
	struct store *fresh = ct_arena_map(sizeof(*fresh));
	if (!fresh) {
		atomic_store_explicit(&store_failed, 1, memory_order_relaxed);
		return NULL;
	}
	if (atomic_compare_exchange_strong_explicit(&store_, &s, fresh, memory_order_acq_rel,
	                                            memory_order_acquire))
		return fresh;
	ct_arena_unmap(fresh, sizeof(*fresh)); /* another thread's came first */
	return s;
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

/* Room for a table of n rows, or NULL when the store is full. */
static struct table *table_new(struct store *s, int n)
{
	size_t bytes = table_bytes(n);
	size_t at = atomic_fetch_add_explicit(&s->used, bytes, memory_order_relaxed);
	return at + bytes <= TABLE_BYTES ? (struct table *)(s->bytes + at) : NULL;
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

/* Makes fde's table in scratch and keeps a copy in *room, which held old (NULL or a table of another
 * generation); then answers from scratch. */
static int make_table(struct store *s, _Atomic(struct table *) *room, struct table *old, const uint8_t *fde,
                      uintptr_t ip, unsigned gen, struct ct_cfi_row *scratch, struct ct_cfi_rule *out)
{
	uintptr_t begin = 0, range = 0;
	int n = ct_cfi_fde_rows(fde, scratch, CT_CFIROWS_MAX, &begin, &range);
	struct table *t = table_new(s, n);
	if (t) {
		*t = (struct table){fde, begin, range, gen, n < 0 ? -1 : n};
		if (n > 0)
			memcpy(t->rows, scratch, (size_t)n * sizeof(*scratch));
		/* lost to another thread's table for this slot: these bytes stay unused */
		atomic_compare_exchange_strong_explicit(room, &old, t, memory_order_release,
		                                        memory_order_relaxed);
	}
	return n < 0 ? ct_cfi_fde_rule(fde, ip, out) : rows_rule(scratch, n, begin, range, ip, out);
}

int ct_cfirows_rule(const uint8_t *fde, uintptr_t ip, unsigned gen, struct ct_cfi_row *scratch,
                    struct ct_cfi_rule *out)
{
	struct store *s = store_get(scratch != NULL);
	if (!s)
		return ct_cfi_fde_rule(fde, ip, out);
	_Atomic(struct table *) *room = NULL;
	struct table *old = NULL;
	unsigned h = slot_of(fde);
	for (unsigned k = 0; k < PROBES; k++) {
		_Atomic(struct table *) *slot = &s->slots[(h + k) & (SLOTS - 1)];
		struct table *t = atomic_load_explicit(slot, memory_order_acquire);
		if (t && t->fde == fde && t->gen == gen)
			return t->n < 0 ? ct_cfi_fde_rule(fde, ip, out)
			                : rows_rule(t->rows, t->n, t->begin, t->range, ip, out);
		if (!room && (!t || t->gen != gen)) {
			room = slot;
			old = t;
		}
		if (!t) /* tables are never removed: fde's would lie before the first empty slot */
			break;
	}
	if (!scratch || !room || atomic_load_explicit(&s->used, memory_order_relaxed) >= TABLE_BYTES)
		return ct_cfi_fde_rule(fde, ip, out);
	return make_table(s, room, old, fde, ip, gen, scratch, out);
}
