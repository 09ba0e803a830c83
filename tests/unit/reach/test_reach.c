/* SPDX-License-Identifier: MIT */
/* Unit tests of the leak classes (preload/reach.c) on heaps built by hand: real blocks from
 * malloc, roots that are arrays of this test (never its globals), and the classes memcheck's
 * manual gives for each shape (the nine cases of "Memcheck's leak detection": start and interior
 * pointers, chains, trees, cycles) and its heuristics. Then a large random heap carved from one
 * buffer (segments far apart, huge blocks among small ones) classified three ways, which must agree
 * block by block: by binary search, with the index, and with the index and a second marking thread. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reach.h"

#define MAXB 16

static int failures;
static const char *const names[] = {"definite", "indirect", "possible", "reachable"};

/* A heap of n blocks of the given sizes, zeroed. A case sets its pointers, then scans its roots
 * (a root scan follows the pointers as they are then, as the shim's scan of a stopped program). */
struct heap {
	struct ct_reach_block b[MAXB];
	uint32_t stack[MAXB];
	uintptr_t *mem[MAXB];
	size_t n;
	struct ct_reach r;
};

static void make(struct heap *h, size_t n, const size_t *sizes)
{
	memset(h, 0, sizeof(*h));
	h->n = n;
	for (size_t i = 0; i < n; i++) {
		h->mem[i] = calloc(1, sizes[i] ? sizes[i] : 1);
		h->b[i] = (struct ct_reach_block){
		    .start = (uintptr_t)h->mem[i], .size = sizes[i], .tag = (uint32_t)i};
	}
	ct_reach_sort(h->b, n);
	h->r =
	    (struct ct_reach){.blocks = h->b, .n = n, .stack = h->stack, .heuristics = CT_REACH_HEURISTICS};
	ct_reach_begin(&h->r);
}

static void drop(struct heap *h)
{
	for (size_t i = 0; i < h->n; i++)
		free(h->mem[i]);
}

static uintptr_t at(struct heap *h, size_t i, size_t offset)
{
	return (uintptr_t)h->mem[i] + offset;
}

/* Block `tag`'s entry after sorting. */
static const struct ct_reach_block *block(const struct heap *h, size_t tag)
{
	for (size_t i = 0; i < h->n; i++)
		if (h->b[i].tag == tag)
			return &h->b[i];
	return NULL;
}

/* The bytes lost through block `tag` (its clique's indirectly lost blocks). */
static uint64_t lost_through(struct heap *h, size_t tag)
{
	return ct_reach_lost_through(&h->r, (size_t)(block(h, tag) - h->b));
}

/* want: one class letter per block (d, i, p, r); indirect: bytes lost through block 0, when >= 0. */
static void expect(const char *name, struct heap *h, const char *want, long indirect_of_0)
{
	static const char letters[] = "dipr";
	ct_reach_finish(&h->r);
	char got[MAXB + 1] = {0};
	for (size_t i = 0; i < h->n; i++)
		got[i] = letters[block(h, i)->state];
	int ok = !strcmp(got, want) && (indirect_of_0 < 0 || lost_through(h, 0) == (uint64_t)indirect_of_0);
	if (!ok) {
		printf("FAIL %s: classes %s, want %s; block 0 (%s) loses %llu indirect bytes, want %ld\n",
		       name, got, want, names[block(h, 0)->state], (unsigned long long)lost_through(h, 0),
		       indirect_of_0);
		failures++;
	} else {
		printf("ok   %s\n", name);
	}
	drop(h);
}

static void root(struct heap *h, uintptr_t p)
{
	uintptr_t words[3] = {0x12345, p, 7}; /* a root range with other words around */
	ct_reach_root(&h->r, words, sizeof(words));
}

static void point(struct heap *h, size_t from, size_t slot, uintptr_t to)
{
	h->mem[from][slot] = to;
}

/* struct ct_reach's hidden: [hidden_lo, hidden_hi). */
static uintptr_t hidden_lo, hidden_hi;

static int hide(uintptr_t lo, uintptr_t hi)
{
	return lo < hidden_hi && hidden_lo < hi;
}

static int fake_vtable(const void *arg, uintptr_t p)
{
	(void)arg;
	return p == 0x10000 || p == 0x20000;
}

/* ---- a large random heap, classified three ways ---- */

#define BIG_BLOCKS 60000
#define BIG_BUFFER ((size_t)96 << 20)

struct big {
	unsigned char *buf;
	struct ct_reach_block *b;
	uint32_t *stack, *helper_stack;
	uintptr_t roots[64];
	uint64_t seed;
};

static uint64_t rnd(struct big *g)
{
	g->seed = g->seed * 6364136223846793005ull + 1442695040888963407ull;
	return g->seed >> 17;
}

/* Blocks laid out in address order with gaps of 0 to 64 bytes, a 2 MiB gap now and then (a new
 * segment) and a 1 MiB block now and then (a bucket of many blocks); each word is 0, a start or
 * interior pointer to a random block, or a number; the roots hold a few pointers. */
static void big_make(struct big *g)
{
	g->buf = calloc(1, BIG_BUFFER);
	g->b = calloc(BIG_BLOCKS, sizeof(*g->b));
	g->stack = calloc(BIG_BLOCKS, sizeof(*g->stack));
	g->helper_stack = calloc(BIG_BLOCKS, sizeof(*g->helper_stack));
	if (!g->buf || !g->b || !g->stack || !g->helper_stack)
		exit(2);
	size_t at = 0;
	for (size_t i = 0; i < BIG_BLOCKS; i++) {
		uint64_t r = rnd(g);
		size_t size = r % 5000 == 0 ? (size_t)1 << 20 : 16 * (1 + r % 20);
		at += r % 3000 == 1 ? (size_t)2 << 20 : 16 * (r % 5);
		if (at + size > BIG_BUFFER)
			exit(2);
		g->b[i] = (struct ct_reach_block){
		    .start = (uintptr_t)g->buf + at, .size = size, .tag = (uint32_t)i};
		at += size;
	}
	for (size_t i = 0; i < BIG_BLOCKS; i++) {
		uintptr_t *w = (uintptr_t *)g->b[i].start;
		size_t words = g->b[i].size / sizeof(*w) < 64 ? g->b[i].size / sizeof(*w) : 64;
		for (size_t k = 0; k < words; k++) {
			uint64_t r = rnd(g), to = rnd(g) % BIG_BLOCKS;
			if (r % 10 < 2) /* sparse enough that some blocks stay unreached */
				w[k] =
				    g->b[to].start + (r % 10 == 1 ? 8 * (rnd(g) % (g->b[to].size / 8)) : 0);
			else if (r % 10 < 4)
				w[k] = (uintptr_t)r;
		}
	}
	for (size_t k = 0; k < 64; k++)
		g->roots[k] = g->b[rnd(g) % BIG_BLOCKS].start + (k % 4 == 3 ? 16 : 0);
}

struct helper {
	struct ct_reach *r;
	pthread_t thread;
};

static void *help_main(void *arg)
{
	ct_reach_help(((struct helper *)arg)->r);
	return NULL;
}

/* Classifies the big heap: with the index (when index) and a second thread (when helped); the
 * classes and clique leaders into out (2 entries per block). Returns the blocks the helper marked. */
static uint64_t big_classify(struct big *g, int index, int helped, uint32_t *out)
{
	struct ct_reach r = {
	    .blocks = g->b, .n = BIG_BLOCKS, .stack = g->stack, .heuristics = CT_REACH_HEURISTICS};
	struct ct_reach_share share = {.stack = g->helper_stack};
	r.index_bytes = index ? ct_reach_index_bytes(g->b, BIG_BLOCKS) : 0;
	r.index = index ? malloc(r.index_bytes) : NULL;
	ct_reach_begin(&r);
	struct helper h = {&r, 0};
	if (helped) {
		r.share = &share;
		if (pthread_create(&h.thread, NULL, help_main, &h))
			exit(2);
		while (!__atomic_load_n(&share.joined, __ATOMIC_SEQ_CST))
			;
	}
	ct_reach_root(&r, g->roots, sizeof(g->roots));
	ct_reach_finish(&r);
	if (helped)
		pthread_join(h.thread, NULL);
	for (size_t i = 0; i < BIG_BLOCKS; i++) {
		out[2 * i] = g->b[i].state;
		out[2 * i + 1] = g->b[i].state == CT_REACH_INDIRECT ? (uint32_t)ct_reach_leader(&r, i) : 0;
	}
	free(r.index);
	return share.helped;
}

static void big_cases(void)
{
	struct big g = {.seed = 42};
	big_make(&g);
	for (size_t i = BIG_BLOCKS - 1; i > 0; i--) { /* shuffled, then sorted back */
		size_t j = (size_t)(rnd(&g) % (i + 1));
		struct ct_reach_block t = g.b[i];
		g.b[i] = g.b[j];
		g.b[j] = t;
	}
	ct_reach_sort(g.b, BIG_BLOCKS);
	int sorted = 1;
	for (size_t i = 0; i < BIG_BLOCKS; i++)
		sorted &= g.b[i].tag == i;
	printf("%s the radix sort puts shuffled blocks back in address order\n", sorted ? "ok  " : "FAIL");
	failures += !sorted;

	uint32_t *plain = calloc(2 * BIG_BLOCKS, sizeof(uint32_t)),
	         *indexed = calloc(2 * BIG_BLOCKS, sizeof(uint32_t)),
	         *two = calloc(2 * BIG_BLOCKS, sizeof(uint32_t));
	if (!plain || !indexed || !two)
		exit(2);
	big_classify(&g, 0, 0, plain);
	size_t count[4] = {0};
	for (size_t i = 0; i < BIG_BLOCKS; i++)
		count[plain[2 * i]]++;
	int all = count[0] && count[1] && count[2] && count[3];
	printf("%s the big heap has blocks of every class (%zu d, %zu i, %zu p, %zu r)\n",
	       all ? "ok  " : "FAIL", count[0], count[1], count[2], count[3]);
	failures += !all;

	big_classify(&g, 1, 0, indexed);
	int same = !memcmp(plain, indexed, 2 * BIG_BLOCKS * sizeof(uint32_t));
	printf("%s the index finds what binary search finds: the same classes and leaders\n",
	       same ? "ok  " : "FAIL");
	failures += !same;

	struct ct_reach r = {.blocks = g.b, .n = BIG_BLOCKS, .stack = g.stack};
	r.index_bytes = ct_reach_index_bytes(g.b, BIG_BLOCKS);
	r.index = malloc(r.index_bytes);
	ct_reach_begin(&r);
	struct ct_reach plain_r = {.blocks = g.b, .n = BIG_BLOCKS, .stack = g.stack};
	ct_reach_begin(&plain_r);
	int found = 1;
	for (int k = 0; k < 200000; k++) {
		uintptr_t p = (uintptr_t)g.buf - 4096 + rnd(&g) % (BIG_BUFFER + 8192);
		found &= ct_reach_block_at(&r, p) == ct_reach_block_at(&plain_r, p);
	}
	free(r.index);
	printf("%s ct_reach_block_at: the index and binary search agree on 200,000 addresses\n",
	       found ? "ok  " : "FAIL");
	failures += !found;

	for (int run = 0; run < 5; run++) {
		uint64_t helped = big_classify(&g, 1, 1, two);
		same = !memcmp(plain, two, 2 * BIG_BLOCKS * sizeof(uint32_t));
		printf("%s two marking threads, run %d: the same classes and leaders (the helper marked %llu "
		       "blocks)\n",
		       same ? "ok  " : "FAIL", run, (unsigned long long)helped);
		failures += !same;
	}
	free(plain);
	free(indexed);
	free(two);
	free(g.buf);
	free(g.b);
	free(g.stack);
	free(g.helper_stack);
}

int main(void)
{
	struct heap h;
	const size_t s32[4] = {32, 32, 32, 32}, s16[4] = {16, 16, 16, 16};

	make(&h, 1, s32);
	root(&h, at(&h, 0, 0));
	expect("(1) a root points at the block's start", &h, "r", -1);

	make(&h, 2, s32);
	point(&h, 0, 1, at(&h, 1, 0));
	root(&h, at(&h, 0, 0));
	expect("(2) root -> A -> B, start pointers", &h, "rr", -1);

	make(&h, 1, s32);
	root(&h, 0x1000);
	expect("(3) nothing points at it", &h, "d", 0);

	make(&h, 2, (size_t[]){32, 48});
	point(&h, 0, 2, at(&h, 1, 0));
	expect("(4) A -> B, A lost: B lost through A", &h, "di", 48);

	make(&h, 1, s32);
	root(&h, at(&h, 0, 8));
	expect("(5) only an interior pointer from a root", &h, "p", -1);

	make(&h, 2, s32);
	point(&h, 0, 0, at(&h, 1, 16));
	root(&h, at(&h, 0, 0));
	expect("(6) root -> A -?> B", &h, "rp", -1);

	make(&h, 2, s32);
	point(&h, 0, 0, at(&h, 1, 0));
	root(&h, at(&h, 0, 16));
	expect("(7) root -?> A -> B: B possible too", &h, "pp", -1);

	make(&h, 2, s32);
	point(&h, 0, 0, at(&h, 1, 8));
	root(&h, at(&h, 0, 16));
	expect("(8) root -?> A -?> B", &h, "pp", -1);

	make(&h, 2, (size_t[]){32, 40});
	point(&h, 0, 3, at(&h, 1, 24));
	expect("(9) A -?> B, A lost: B lost through A all the same", &h, "di", 40);

	make(&h, 4, s16);
	point(&h, 0, 0, at(&h, 1, 0));
	point(&h, 0, 1, at(&h, 2, 0));
	point(&h, 1, 0, at(&h, 3, 0));
	expect("a lost tree: the root definite, the rest through it", &h, "diii", 48);

	make(&h, 2, (size_t[]){24, 40});
	point(&h, 0, 0, at(&h, 1, 0));
	point(&h, 1, 0, at(&h, 0, 0));
	{
		ct_reach_finish(&h.r);
		const struct ct_reach_block *lo = &h.b[0], *hi = &h.b[1];
		int ok = lo->state == CT_REACH_DEFINITE && hi->state == CT_REACH_INDIRECT &&
		         ct_reach_lost_through(&h.r, 0) == hi->size;
		printf("%s a lost cycle: the lower address definite, the other through it\n",
		       ok ? "ok  " : "FAIL");
		failures += !ok;
		drop(&h);
	}

	make(&h, 1, s32);
	point(&h, 0, 0, at(&h, 0, 0));
	expect("a block that points only at itself", &h, "d", 0);

	make(&h, 3, s32);
	point(&h, 0, 0, at(&h, 1, 0));
	point(&h, 1, 0, at(&h, 2, 0));
	root(&h, at(&h, 0, 8)); /* first reached through an interior pointer: all possible ... */
	root(&h, at(&h, 0, 0)); /* ... then through its start: all upgraded */
	expect("possible, then reachable: the chain below is upgraded too", &h, "rrr", -1);

	make(&h, 3, s32);
	{
		/* y -> x -> z, x the lowest address: x leads a clique first (x, z), then y takes it over */
		uintptr_t *x = (uintptr_t *)h.b[0].start, *y = (uintptr_t *)h.b[1].start,
		          *z = (uintptr_t *)h.b[2].start;
		*y = (uintptr_t)x;
		*x = (uintptr_t)z;
		ct_reach_finish(&h.r);
		int ok = h.b[1].state == CT_REACH_DEFINITE && ct_reach_lost_through(&h.r, 1) == 64 &&
		         h.b[0].state == CT_REACH_INDIRECT && ct_reach_lost_through(&h.r, 0) == 0 &&
		         h.b[2].state == CT_REACH_INDIRECT;
		printf("%s a former clique leader joins the clique of a block that reaches it (64 bytes)\n",
		       ok ? "ok  " : "FAIL");
		failures += !ok;
		drop(&h);
	}

	make(&h, 2, (size_t[]){0, 32});
	root(&h, at(&h, 0, 0));
	root(&h, at(&h, 1, 32)); /* one past the end: not a pointer into it */
	expect("malloc(0) pointed at; a pointer one past a block's end", &h, "rd", -1);

	make(&h, 2, (size_t[]){3 << 20, 32}); /* 3 MiB: its own mapping, several filter regions */
	root(&h, at(&h, 0, (5 << 20) / 2));
	root(&h, at(&h, 1, 32) + (1 << 20)); /* 1 MiB past the small block: in no region of a block */
	expect("a large block's 1 MiB regions: an interior pointer 2.5 MiB in is found", &h, "pd", -1);

	make(&h, 2, (size_t[]){56, 56});
	h.b[0].allocator_edge = h.b[1].allocator_edge = 48; /* glibc: the next chunk's header at + 48 */
	root(&h, h.b[0].start + 48);                        /* what the allocator's top pointer looks like */
	root(&h, h.b[1].start + 40);                        /* an interior pointer of the program's */
	ct_reach_finish(&h.r);
	{
		int ok = h.b[0].state == CT_REACH_DEFINITE && h.b[1].state == CT_REACH_POSSIBLE;
		printf("%s the allocator's pointer to the next chunk is no pointer into the block\n",
		       ok ? "ok  " : "FAIL");
		failures += !ok;
		drop(&h);
	}

	/* A freed block (its free not matched yet) that still holds a pointer: reached, never read, so
	 * what only it pointed at is lost; before the roots and after them. */
	make(&h, 3, s32);
	point(&h, 0, 0, at(&h, 1, 0));
	ct_reach_freed(&h.r, at(&h, 0, 0));
	root(&h, at(&h, 0, 0));
	ct_reach_freed(&h.r, at(&h, 2, 8)); /* not a block's start: no block */
	expect("a freed block: not lost, its pointers not followed", &h, "rdd", -1);

	make(&h, 2, s32);
	root(&h, at(&h, 1, 0));
	ct_reach_freed(&h.r, at(&h, 0, 0)); /* freed while the scan ran */
	expect("a block freed after the roots: not lost", &h, "rr", -1);

	/* Threads run (safe): memory the caller hides (the shim's own) is never read for pointers, in a
	 * block (its pages mapped again by the shim) or by a heuristic. */
	make(&h, 3, (size_t[]){4096, 32, 72});
	point(&h, 0, 5, at(&h, 1, 0));
	h.mem[2][0] = 64;
	hidden_lo = at(&h, 0, 0), hidden_hi = at(&h, 0, 4096);
	h.r.safe = 1;
	h.r.hidden = hide;
	root(&h, at(&h, 0, 0));
	root(&h, at(&h, 2, 8)); /* length64, its size word readable */
	expect("safe: a hidden block's words are not read, the rest is", &h, "rdr", -1);

	make(&h, 1, (size_t[]){72});
	h.mem[0][0] = 64;
	hidden_lo = at(&h, 0, 0), hidden_hi = at(&h, 0, 8);
	h.r.safe = 1;
	h.r.hidden = hide;
	root(&h, at(&h, 0, 8));
	expect("safe: a heuristic reads no hidden word", &h, "p", -1);

	make(&h, 1, (size_t[]){72});
	h.mem[0][0] = 64; /* length64: its own size - 8 */
	root(&h, at(&h, 0, 8));
	expect("length64 heuristic: + 8 after the size", &h, "r", -1);

	make(&h, 1, (size_t[]){8 + 3 * 16});
	h.mem[0][0] = 3; /* new[] of 3 elements of 16 bytes */
	root(&h, at(&h, 0, 8));
	expect("newarray heuristic: + 8 after the count", &h, "r", -1);

	make(&h, 1, (size_t[]){24 + 10 + 1});
	h.mem[0][0] = 4, h.mem[0][1] = 10; /* length, capacity */
	root(&h, at(&h, 0, 24));
	expect("stdstring heuristic: + 24 at the characters", &h, "r", -1);

	make(&h, 1, (size_t[]){72});
	h.mem[0][0] = 64;
	h.r.heuristics = 0;
	root(&h, at(&h, 0, 8));
	expect("heuristics off: the same pointer is interior", &h, "p", -1);

	make(&h, 1, (size_t[]){40});
	h.mem[0][0] = 7; /* 32 bytes are no whole number of 7 elements */
	root(&h, at(&h, 0, 8));
	expect("newarray heuristic: an implausible count", &h, "p", -1);

	/* The clique leaders (HOLDERS): blocks 0 and 2 are lost, 0 holds 2; then 1, lost too, holds 0,
	 * so 0's clique joins 1's, and 2's leader is 1 (leaders go in address order: the case needs
	 * calloc's blocks in increasing order, which it checks). */
	make(&h, 3, (size_t[]){32, 32, 32});
	if (h.mem[0] < h.mem[1] && h.mem[1] < h.mem[2]) {
		point(&h, 0, 0, at(&h, 2, 0));
		point(&h, 1, 0, at(&h, 0, 0));
		expect("a leader taken into a later clique", &h, "idi", -1);
		size_t leader2 = ct_reach_leader(&h.r, (size_t)(block(&h, 2) - h.b));
		size_t leader0 = ct_reach_leader(&h.r, (size_t)(block(&h, 0) - h.b));
		int ok = h.b[leader2].tag == 1 && h.b[leader0].tag == 1;
		printf("%s the leader of both indirectly lost blocks is block 1\n", ok ? "ok  " : "FAIL");
		failures += !ok;
	} else {
		drop(&h);
	}

	/* multipleinheritance: a pointer at a second base's vtable pointer, 16 bytes in, counts as a
	 * start pointer when both words are vtables (this test's is_vtable knows the two it made). */
	make(&h, 2, (size_t[]){32, 32});
	h.mem[0][0] = 0x10000, h.mem[0][2] = 0x20000; /* the vtable pointers of both bases */
	h.mem[1][0] = 0x10000, h.mem[1][2] = 0x30000; /* the second is no vtable */
	h.r.is_vtable = fake_vtable;
	root(&h, at(&h, 0, 16));
	root(&h, at(&h, 1, 16));
	expect("multipleinheritance heuristic: two vtables", &h, "rp", -1);

	make(&h, 1, (size_t[]){32});
	h.mem[0][0] = 0x10000, h.mem[0][2] = 0x20000;
	root(&h, at(&h, 0, 16));
	expect("multipleinheritance heuristic: no is_vtable, interior", &h, "p", -1);

	/* A block with a part that cannot be read: only the readable spans are read, and the
	 * heuristics never read an unreadable word (the spans here leave out its first 16 bytes). */
	make(&h, 3, (size_t[]){64, 8, 8});
	point(&h, 0, 1, at(&h, 1, 0)); /* in the unreadable part: not followed */
	point(&h, 0, 4, at(&h, 2, 0)); /* in the readable part */
	h.mem[0][0] = 56;              /* length64 would say start, were it readable */
	{
		struct ct_reach_block *b = (struct ct_reach_block *)block(&h, 0);
		struct ct_reach_span span = {b->start + 16, b->start + 64};
		b->partial = 1;
		h.r.readable = &span, h.r.nreadable = 1;
		root(&h, at(&h, 0, 0));
		root(&h, at(&h, 0, 8));
		expect("a partly readable block: its readable words only", &h, "rdr", -1);
	}

	big_cases();

	printf("%s\n", failures ? "FAIL" : "ok   all reachability cases");
	return failures ? 1 : 0;
}
