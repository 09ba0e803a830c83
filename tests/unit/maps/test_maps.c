/* SPDX-License-Identifier: MIT */
/* The live block table's erase (preload/maps.c), driven without LD_PRELOAD. Backward-shift
 * deletion has no tombstones to fall back on: a key it fails to pull back behind a hole, or pulls in
 * front of its home slot, is lost to every later find, and the matcher then books the block's free
 * as unmatched and the block as leaked. The cases lay out collision chains that wrap around the
 * table's end and erase their head, their middle, the table's last slot and the slot after it,
 * with keys at home (which must stay) between the hole and keys that must move. After every erase,
 * every remaining key is found with its value and every erased key is absent. Keys are chosen by
 * their home slot as the table itself places them (the slot a key takes alone in an empty table),
 * and each case checks that its layout is the one it describes, so the test follows maps.c's hash
 * whatever it becomes. Then random inserts and erases on small tables, against a plain list. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "maps.h"

#define CAP 64 /* holds 32 keys before it grows: every case fits */
#define MAX_KEYS 16

static int failures;

static void fail(const char *name, const char *what, uint64_t key)
{
	printf("FAIL %s: %s (key %#" PRIx64 ")\n", name, what, key);
	failures++;
}

static uint64_t value_of(uint64_t key)
{
	return key * 3 + 1;
}

/* The slot of key, or -1 when the table does not find it. */
static int64_t slot_of(struct ct_live_map *m, uint64_t key)
{
	uint64_t *v = ct_live_find(m, key);
	if (!v)
		return -1;
	return (int64_t)((struct ct_live_slot *)((char *)v - offsetof(struct ct_live_slot, val)) - m->slots);
}

/* The home slot of key in a table of CAP slots: where it goes in the empty probe table, emptied by
 * hand afterwards (not by the erase under test). */
static uint64_t home_of(uint64_t key)
{
	static struct ct_live_map probe;
	if (!probe.slots && ct_live_init(&probe, CAP) < 0) {
		printf("FAIL no memory for the probe table\n");
		return UINT64_MAX;
	}
	ct_live_insert(&probe, key, 0);
	int64_t slot = slot_of(&probe, key);
	if (slot >= 0)
		probe.slots[slot].key = 0;
	probe.count = 0;
	return (uint64_t)slot;
}

/* A key never used before whose home slot is home: 16-byte aligned, as malloc's blocks are. */
static uint64_t key_homed_at(uint64_t home)
{
	static uint64_t next = 0x7f0000001000;
	for (;;) {
		uint64_t key = next;
		next += 16;
		if (home_of(key) == home)
			return key;
	}
}

/* A layout: keys by their home, inserted in order, and the slot each must take. */
struct layout {
	int n;
	uint64_t home[MAX_KEYS], slot[MAX_KEYS];
};

struct table {
	struct ct_live_map m;
	uint64_t key[MAX_KEYS];
	int erased[MAX_KEYS];
	int n;
};

/* Builds the layout in a fresh table; 0, or -1 (a failure reported) when a key is not where the
 * layout says, so the case would not test what it describes. */
static int build(const char *name, const struct layout *l, struct table *t)
{
	memset(t, 0, sizeof(*t));
	if (ct_live_init(&t->m, CAP) < 0) {
		fail(name, "no memory", 0);
		return -1;
	}
	t->n = l->n;
	for (int i = 0; i < l->n; i++) {
		t->key[i] = key_homed_at(l->home[i]);
		if (ct_live_insert(&t->m, t->key[i], value_of(t->key[i])) < 0) {
			fail(name, "insert refused", t->key[i]);
			return -1;
		}
	}
	for (int i = 0; i < l->n; i++)
		if (slot_of(&t->m, t->key[i]) != (int64_t)l->slot[i]) {
			fail(name, "the layout is not the case's (maps.c's probing changed?)", t->key[i]);
			return -1;
		}
	return 0;
}

/* Every key not erased is found with its value, every erased key is absent, and the count is
 * theirs. */
static int check_all(const char *name, struct table *t)
{
	int ok = 1;
	uint64_t live = 0;
	for (int i = 0; i < t->n; i++) {
		uint64_t *v = ct_live_find(&t->m, t->key[i]);
		if (t->erased[i] && v) {
			fail(name, "an erased key is still found", t->key[i]), ok = 0;
		} else if (!t->erased[i] && !v) {
			fail(name, "a key not erased is no longer found", t->key[i]), ok = 0;
		} else if (v && *v != value_of(t->key[i])) {
			fail(name, "a key found with another key's value", t->key[i]), ok = 0;
		}
		live += !t->erased[i];
	}
	if (t->m.count != live)
		fail(name, "the count is not the keys left", live), ok = 0;
	return ok;
}

static void erase(const char *name, struct table *t, int i)
{
	uint64_t *v = ct_live_find(&t->m, t->key[i]);
	if (!v) {
		fail(name, "the key to erase is not found", t->key[i]);
		return;
	}
	ct_live_erase(&t->m, v);
	t->erased[i] = 1;
}

/* Builds the layout, erases the keys of indexes order[] one after the other, checking everything
 * after each erase; then erases the rest, in insertion order, the same way. */
static void run_case(const char *name, const struct layout *l, const int *order, int n_order)
{
	struct table t;
	int ok = 1;
	if (build(name, l, &t) < 0)
		return;
	for (int k = 0; k < n_order && ok; k++) {
		erase(name, &t, order[k]);
		ok = check_all(name, &t);
	}
	for (int i = 0; i < t.n && ok; i++)
		if (!t.erased[i]) {
			erase(name, &t, i);
			ok = check_all(name, &t);
		}
	ct_live_release(&t.m);
	if (ok)
		printf("ok   %s\n", name);
}

/* Slots 61..63 then 0..6, one cluster across the table's end (key(home)@slot):
 * a(61)@61 b(61)@62 c(61)@63 d(62)@0 e(63)@1 f(0)@2 g(1)@3 h(3)@4 i(5)@5 j(4)@6.
 * i sits at its home and must stay when a hole opens before it; j, past it, must still move. */
static const struct layout wrapped = {
    10, {61, 61, 61, 62, 63, 0, 1, 3, 5, 4}, {61, 62, 63, 0, 1, 2, 3, 4, 5, 6}};

/* Keys at home right after the wrap stay put while a key behind them, homed before the wrap,
 * crosses it: a(62)@62 b(62)@63 c(0)@0 d(0)@1 e(63)@2 f(2)@3. */
static const struct layout at_home = {6, {62, 62, 0, 0, 63, 2}, {62, 63, 0, 1, 2, 3}};

static void cases(void)
{
	run_case("the head of a chain that wraps: every key behind it moves back across the end", &wrapped,
	         (const int[]){0}, 1);
	run_case("the table's last slot: the key in slot 0 moves back to it", &wrapped, (const int[]){2}, 1);
	run_case("slot 0, the middle of a wrapped chain", &wrapped, (const int[]){3}, 1);
	run_case("a hole before a key at home and a key that must move past it", &wrapped, (const int[]){7},
	         1);
	run_case("the middle of the chain after the wrap, then its head", &wrapped, (const int[]){5, 0}, 2);
	run_case("every other key, then the rest", &wrapped, (const int[]){1, 3, 5, 7, 9}, 5);
	run_case("keys at home after the wrap stay, one homed before it crosses", &at_home, (const int[]){1},
	         1);
	run_case("the chain's first key with keys at home after the wrap", &at_home, (const int[]){0}, 1);
}

/* ---- random inserts and erases against a list ---- */

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A table of cap slots (kept at most half full, so it never grows) and a pool of 4 * cap keys,
 * inserted by ct_live_insert or ct_live_add (which also sees present keys); every operation is
 * followed by a find of every key of the pool. */
static void random_ops(uint64_t cap, int ops)
{
	enum { POOL = 256 };
	uint64_t key[POOL];
	int live[POOL] = {0}, n_live = 0, n_keys = (int)(cap * 4 < POOL ? cap * 4 : POOL);
	struct ct_live_map m;
	char name[64];
	snprintf(name, sizeof(name), "random inserts and erases, %" PRIu64 " slots", cap);
	if (ct_live_init(&m, cap) < 0) {
		fail(name, "no memory", 0);
		return;
	}
	for (int i = 0; i < n_keys; i++)
		key[i] = 0x7f0000000000 + ((next_random() & 0xffff) << 20) + 16 * (uint64_t)i; /* distinct */
	for (int op = 0; op < ops; op++) {
		int i = (int)(next_random() % (uint64_t)n_keys);
		uint64_t old = 0;
		if (live[i] && op % 3 == 0) { /* ct_live_add of a key present: replaced, the old value out */
			if (ct_live_add(&m, key[i], value_of(key[i]), &old) != 1 || old != value_of(key[i])) {
				fail(name, "add of a present key not seen as one", key[i]);
				break;
			}
		} else if (live[i]) {
			ct_live_erase(&m, ct_live_find(&m, key[i]));
			live[i] = 0, n_live--;
		} else if ((uint64_t)(n_live + 1) * 2 <= cap) {
			int rc = op % 2 ? ct_live_add(&m, key[i], value_of(key[i]), &old)
			                : ct_live_insert(&m, key[i], value_of(key[i]));
			if (rc != 0) {
				fail(name, "insert refused", key[i]);
				break;
			}
			live[i] = 1, n_live++;
		}
		int ok = m.cap == cap && m.count == (uint64_t)n_live;
		for (int k = 0; k < n_keys && ok; k++) {
			uint64_t *v = ct_live_find(&m, key[k]);
			ok = live[k] ? v && *v == value_of(key[k]) : !v;
		}
		if (!ok) {
			char what[96];
			snprintf(what, sizeof(what), "the table disagrees with the list after operation %d",
			         op);
			fail(name, what, key[i]);
			ct_live_release(&m);
			return;
		}
	}
	ct_live_release(&m);
	printf("ok   %s\n", name);
}

/* ct_live_add from a table of 16 slots to one of thousands: every key added is found with its value
 * after each growth (the key that made the table grow goes to its place in the new one), and adding
 * it again gives its old value back. */
static void add_grows(void)
{
	enum { KEYS = 3000 };
	const char *name = "ct_live_add across growths";
	struct ct_live_map m;
	if (ct_live_init(&m, 16) < 0) {
		fail(name, "no memory", 0);
		return;
	}
	for (uint64_t i = 0; i < KEYS; i++) {
		uint64_t key = 0x7f0000100000 + 16 * i, old = 0;
		if (ct_live_add(&m, key, value_of(key), &old) != 0) {
			fail(name, "a new key not inserted", key);
			break;
		}
		for (uint64_t k = 0; k <= i; k++) {
			uint64_t *v = ct_live_find(&m, 0x7f0000100000 + 16 * k);
			if (!v || *v != value_of(0x7f0000100000 + 16 * k)) {
				fail(name, "a key added is not found with its value",
				     0x7f0000100000 + 16 * k);
				ct_live_release(&m);
				return;
			}
		}
	}
	uint64_t key = 0x7f0000100000 + 16 * 7, old = 0;
	if (m.count != KEYS || ct_live_add(&m, key, 5, &old) != 1 || old != value_of(key))
		fail(name, "the count, or a present key added again", key);
	ct_live_release(&m);
	printf("ok   %s\n", name);
}

int main(void)
{
	cases();
	add_grows();
	random_ops(16, 200000);
	random_ops(64, 200000);
	if (failures)
		printf("%d failure(s)\n", failures);
	return failures ? 1 : 0;
}
