/* SPDX-License-Identifier: MIT */
/* The live block table (preload/maps.c), driven without LD_PRELOAD. Backward-shift deletion has
 * no tombstones to fall back on: a key it fails to pull back behind a hole, or pulls in front of its
 * home slot, is lost to every later find, and the matcher then books the block's free as unmatched
 * and the block as leaked. The cases lay out probe runs in one part that cross from its home slots
 * into its tail and erase their head, their middle, the last home slot and the tail's first, with
 * keys at home (which must stay) between the hole and keys that must move. After every erase, every
 * remaining key is found with its value and every erased key is absent. Keys are chosen by their
 * home slot as the table itself computes it, and each case checks that its layout is the one it
 * describes, so the test follows maps.c's hash whatever it becomes. Then keys that do not pack into
 * one word, growth, and random adds and takes on small parts, against a plain list. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../xorshift.h"
#include "maps.h"

#define CAP 64 /* the slots of a part: holds 44 keys before it grows, every case fits */
#define PART 0 /* the part the cases lay their keys out in */
#define MAX_KEYS 16

static int failures;

static void fail(const char *name, const char *what, uint64_t key)
{
	printf("FAIL %s: %s (key %#" PRIx64 ")\n", name, what, key);
	failures++;
}

/* An info that packs into a slot (below 2^20 - 1). */
static uint32_t value_of(uint64_t key)
{
	return (uint32_t)(key >> 4) & 0xffff;
}

/* The slot of key in part PART, or -1 when the table does not find it there; its info in *info. */
static int64_t slot_of(const struct ct_live_map *m, uint64_t key, uint32_t *info)
{
	int part;
	int64_t slot = ct_live_slot_of(m, key, &part, info);
	return slot >= 0 && part == PART ? slot : -1;
}

/* The home slot of key in part PART of a table whose parts have CAP slots (UINT64_MAX: another
 * part's key). */
static uint64_t home_of(uint64_t key)
{
	static struct ct_live_map probe;
	if (!probe.part[PART].slots && ct_live_init(&probe, CAP * CT_LIVE_SHARDS) < 0) {
		printf("FAIL no memory for the probe table\n");
		return UINT64_MAX;
	}
	int part;
	uint64_t home = ct_live_home(&probe, key, value_of(key), &part);
	return part == PART ? home : UINT64_MAX;
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
	if (ct_live_init(&t->m, CAP * CT_LIVE_SHARDS) < 0) {
		fail(name, "no memory", 0);
		return -1;
	}
	t->n = l->n;
	for (int i = 0; i < l->n; i++) {
		uint32_t old;
		t->key[i] = key_homed_at(l->home[i]);
		if (ct_live_add(&t->m, t->key[i], value_of(t->key[i]), &old) != 0) {
			fail(name, "insert refused", t->key[i]);
			return -1;
		}
	}
	uint32_t info;
	for (int i = 0; i < l->n; i++)
		if (slot_of(&t->m, t->key[i], &info) != (int64_t)l->slot[i]) {
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
		uint32_t info = 0;
		int found = slot_of(&t->m, t->key[i], &info) >= 0;
		if (t->erased[i] && found) {
			fail(name, "an erased key is still found", t->key[i]), ok = 0;
		} else if (!t->erased[i] && !found) {
			fail(name, "a key not erased is no longer found", t->key[i]), ok = 0;
		} else if (found && info != value_of(t->key[i])) {
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
	uint32_t info;
	if (!ct_live_take(&t->m, t->key[i], &info) || info != value_of(t->key[i])) {
		fail(name, "the key to erase is not found with its value", t->key[i]);
		return;
	}
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

/* A run from the last home slots into the tail (key(home)@slot): a(61)@61 b(61)@62 c(61)@63
 * d(62)@64 e(63)@65 f(63)@66 g(62)@67 h(60)@60 i(60)@68. Every key but h and i sits after its home,
 * and i, homed before all of them, last. */
static const struct layout tail = {
    9, {61, 61, 61, 62, 63, 63, 62, 60, 60}, {61, 62, 63, 64, 65, 66, 67, 60, 68}};

/* A key at home between a hole and keys that must move past it: a(58)@58 b(58)@59 c(60)@60
 * d(58)@61 e(61)@62. */
static const struct layout at_home = {5, {58, 58, 60, 58, 61}, {58, 59, 60, 61, 62}};

static void cases(void)
{
	run_case("the head of a run that crosses into the tail: every key behind it moves back", &tail,
	         (const int[]){0}, 1);
	run_case("the last home slot: the tail's first key moves back to it", &tail, (const int[]){2}, 1);
	run_case("the tail's first slot", &tail, (const int[]){3}, 1);
	run_case("the key homed first: the run's last key moves back over keys that stay", &tail,
	         (const int[]){7}, 1);
	run_case("the middle of the run, then its head", &tail, (const int[]){5, 0}, 2);
	run_case("every other key, then the rest", &tail, (const int[]){1, 3, 5, 7}, 4);
	run_case("a hole before a key at home and a key that must move past it", &at_home, (const int[]){1},
	         1);
	run_case("the run's first key with a key at home in it", &at_home, (const int[]){0}, 1);
}

/* ---- random inserts and erases against a list ---- */

/* A table whose part PART has cap slots (kept at most 40% full, so it never grows) and a pool of
 * keys of that part, at least 4 * cap, added by ct_live_add (present or not) and taken by
 * ct_live_take; every operation is followed by a lookup of every key of the pool. */
static void random_ops(uint64_t cap, int ops)
{
	enum { POOL = 256 };
	uint64_t key[POOL];
	int live[POOL] = {0}, n_live = 0, n_keys = (int)(cap * 4 < POOL ? cap * 4 : POOL);
	struct ct_live_map m;
	char name[64];
	snprintf(name, sizeof(name), "random adds and takes, %" PRIu64 " slots", cap);
	if (ct_live_init(&m, cap * CT_LIVE_SHARDS) < 0) {
		fail(name, "no memory", 0);
		return;
	}
	for (int i = 0; i < n_keys; i++) { /* distinct, all of part PART */
		int part;
		do
			key[i] = 0x7f0000000000 + ((ct_test_random() & 0xffff) << 20) + 16 * (uint64_t)i;
		while (ct_live_home(&m, key[i], 1, &part), part != PART);
	}
	for (int op = 0; op < ops; op++) {
		int i = (int)(ct_test_random() % (uint64_t)n_keys);
		uint32_t old = 0;
		if (live[i] && op % 3 == 0) { /* ct_live_add of a key present: replaced, the old value out */
			if (ct_live_add(&m, key[i], value_of(key[i]), &old) != 1 || old != value_of(key[i])) {
				fail(name, "add of a present key not seen as one", key[i]);
				break;
			}
		} else if (live[i]) {
			if (!ct_live_take(&m, key[i], &old) || old != value_of(key[i])) {
				fail(name, "a key taken is not found with its value", key[i]);
				break;
			}
			live[i] = 0, n_live--;
		} else if ((uint64_t)(n_live + 1) * 10 <= cap * 4) {
			if (ct_live_add(&m, key[i], value_of(key[i]), &old) != 0) {
				fail(name, "a new key not inserted", key[i]);
				break;
			}
			live[i] = 1, n_live++;
		}
		int ok = m.part[PART].cap == cap && m.count == (uint64_t)n_live;
		for (int k = 0; k < n_keys && ok; k++) {
			uint32_t info = 0;
			int found = slot_of(&m, key[k], &info) >= 0;
			ok = live[k] ? found && info == value_of(key[k]) : !found;
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

static void count_key(uint64_t p, uint32_t info, void *arg)
{
	(void)p, (void)info, (void)arg;
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
		uint64_t key = 0x7f0000100000 + 16 * i;
		uint32_t old = 0;
		if (ct_live_add(&m, key, value_of(key), &old) != 0) {
			fail(name, "a new key not inserted", key);
			break;
		}
		for (uint64_t k = 0; k <= i; k++) {
			uint32_t info = 0;
			int part;
			if (ct_live_slot_of(&m, 0x7f0000100000 + 16 * k, &part, &info) < 0 ||
			    info != value_of(0x7f0000100000 + 16 * k)) {
				fail(name, "a key added is not found with its value",
				     0x7f0000100000 + 16 * k);
				ct_live_release(&m);
				return;
			}
		}
	}
	uint64_t key = 0x7f0000100000 + 16 * 7;
	uint32_t old = 0;
	if (m.count != KEYS || ct_live_each(&m, count_key, NULL) != KEYS ||
	    ct_live_add(&m, key, 5, &old) != 1 || old != value_of(key))
		fail(name, "the count, or a present key added again", key);
	ct_live_release(&m);
	printf("ok   %s\n", name);
}

/* Keys that do not pack into one word (an address above 2^47 or not 8-byte aligned, an info of
 * 2^20 - 1 or more) among keys that do, against a list: each is found in the part it belongs to with
 * its info, a key whose info stops or starts packing moves between parts and is never in both, and
 * every key is taken back once. */
static void wide_keys(void)
{
	enum { KEYS = 600 };
	const char *name = "keys that do not pack, mixed with keys that do";
	static uint64_t key[KEYS];
	static uint32_t info[KEYS];
	struct ct_live_map m;
	if (ct_live_init(&m, 64) < 0) {
		fail(name, "no memory", 0);
		return;
	}
	for (int i = 0; i < KEYS; i++) {
		uint64_t base = 0x7f0000200000 + 32 * (uint64_t)i;
		key[i] = i % 5 == 1 ? base + 4 : i % 5 == 2 ? base | 1ull << 50 : base;
		info[i] = i % 5 == 3 ? (1u << 20) - 1 + (uint32_t)i : (uint32_t)i;
	}
	uint32_t old = 0, got = 0;
	int ok = 1, part;
	for (int i = 0; i < KEYS && ok; i++)
		ok = ct_live_add(&m, key[i], info[i], &old) == 0;
	for (int i = 0; i < KEYS && ok; i += 4) { /* infos that stop packing, or start to */
		info[i] = info[i] < (1u << 20) - 1 ? UINT32_MAX - (uint32_t)i : (uint32_t)i;
		ok = ct_live_add(&m, key[i], info[i], &old) == 1;
	}
	for (int i = 0; i < KEYS && ok; i++) {
		int wide = key[i] >= 1ull << 47 || (key[i] & 7) || info[i] >= (1u << 20) - 1;
		ok = ct_live_slot_of(&m, key[i], &part, &got) >= 0 && got == info[i] &&
		     (part == CT_LIVE_SHARDS) == wide;
	}
	ok = ok && m.count == KEYS && ct_live_each(&m, count_key, NULL) == KEYS;
	for (int i = 0; i < KEYS && ok; i++)
		ok = ct_live_take(&m, key[i], &got) == 1 && got == info[i] && !ct_live_take(&m, key[i], &got);
	if (!ok || m.count != 0)
		fail(name, "a key not found where it belongs, with its info, once", 0);
	else
		printf("ok   %s\n", name);
	ct_live_release(&m);
}

int main(void)
{
	cases();
	wide_keys();
	add_grows();
	random_ops(16, 200000);
	random_ops(64, 200000);
	if (failures)
		printf("%d failure(s)\n", failures);
	return failures ? 1 : 0;
}
