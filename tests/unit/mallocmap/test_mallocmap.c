/* SPDX-License-Identifier: MIT */
/* Unit tests of what the leak scan cuts out of an anonymous mapping as glibc's malloc's
 * (preload/mallocmap.c): mmapped chunks and thread arenas' heaps built by hand in mappings of this
 * test, with the program's pages the kernel would merge with them around; then glibc's own (a
 * malloc above the mmap threshold, a thread's arena holding a block, and one holding free chunks
 * only), found in /proc/self/maps; and the usable size read from a chunk's header against glibc's
 * malloc_usable_size, for blocks of every kind and for one whose memory is gone. */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mallocmap.h"

#define PAGE 4096u
#define HEAP_MAX ((uintptr_t)64 << 20)
#define MAXP 8

static int failures;

static void check(const char *name, int ok)
{
	printf("%s %s\n", ok ? "PASS" : "FAIL", name);
	failures += !ok;
}

/* The pieces a walk gave. */
struct pieces {
	struct ct_reach_span v[MAXP];
	size_t n;
};

static void add_piece(uintptr_t lo, uintptr_t hi, void *arg)
{
	struct pieces *p = arg;
	if (p->n < MAXP)
		p->v[p->n] = (struct ct_reach_span){lo, hi};
	p->n++;
}

static int walk(const struct ct_reach_block *b, size_t n, uintptr_t lo, uintptr_t hi, struct pieces *p)
{
	memset(p, 0, sizeof(*p));
	return ct_mallocmap_walk(b, n, lo, hi, 0, add_piece, p);
}

/* Whether the pieces are exactly the spans want[0..n). */
static int pieces_are(const struct pieces *p, const struct ct_reach_span *want, size_t n)
{
	if (p->n != n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (p->v[i].lo != want[i].lo || p->v[i].hi != want[i].hi)
			return 0;
	return 1;
}

/* Whether any piece overlaps [lo, hi). */
static int overlaps(const struct pieces *p, uintptr_t lo, uintptr_t hi)
{
	for (size_t i = 0; i < p->n && i < MAXP; i++)
		if (p->v[i].lo < hi && lo < p->v[i].hi)
			return 1;
	return 0;
}

static uintptr_t map_rw(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return (uintptr_t)p;
}

static void put(uintptr_t at, uintptr_t value)
{
	memcpy((void *)at, &value, sizeof(value));
}

/* An mmapped chunk between two pages of the program's, in one mapping. */
static void mmapped_by_hand(void)
{
	uintptr_t m = map_rw(4 * PAGE), c = m + PAGE;
	struct pieces p;
	put(c, 0);
	put(c + 8, 2 * PAGE | 2); /* size | IS_MMAPPED */
	struct ct_reach_block b = {.start = c + 16, .size = 8000};
	const struct ct_reach_span around[] = {{m, m + PAGE}, {m + 3 * PAGE, m + 4 * PAGE}};
	check("mmapped chunk: the pages around it are scanned, not it",
	      walk(&b, 1, m, m + 4 * PAGE, &p) == 0 && pieces_are(&p, around, 2));

	put(c, 0), put(c + 8, 0);
	put(c + 48, 48);                  /* prev_size: memalign's offset from the mapping's start */
	put(c + 56, (2 * PAGE - 48) | 2); /* the chunk ends at a page boundary */
	b.start = c + 64;
	check("memalign's mmapped chunk: its offset is the chunk's too",
	      walk(&b, 1, m, m + 4 * PAGE, &p) == 0 && pieces_are(&p, around, 2));

	put(c + 56, (2 * PAGE - 48)); /* no IS_MMAPPED: whose block it is cannot be told */
	check("a block of no known kind: the mapping is left out, nothing scanned",
	      walk(&b, 1, m, m + 4 * PAGE, &p) == -1 && p.n == 0);

	struct ct_reach_block below = {.start = m - 16, .size = 64};
	check("a block that reaches in from below: the mapping is part of it",
	      walk(&below, 1, m, m + 4 * PAGE, &p) == -1 && p.n == 0);

	check("no block at all: the whole mapping", walk(NULL, 0, m, m + 4 * PAGE, &p) == 0 && p.n == 1 &&
	                                                p.v[0].lo == m && p.v[0].hi == m + 4 * PAGE);
	munmap((void *)m, 4 * PAGE);
}

/* A thread arena's first heap, a page of the program's below it and one above its mprotect_size,
 * then a second heap of the same arena. */
static void heaps_by_hand(void)
{
	size_t reserve = 3 * HEAP_MAX;
	void *r = mmap(NULL, reserve, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	/* A page of the reservation below the heap, even when mmap returned an address aligned already
	 * (the page below it is then not the test's: the walk read it and crashed, 1 run in 40). */
	uintptr_t base = ((uintptr_t)r + PAGE + HEAP_MAX - 1) & ~(HEAP_MAX - 1), lo = base - PAGE,
	          hi = base + 3 * PAGE;
	mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE);
	put(base, base + 48);     /* ar_ptr: the malloc_state after a heap_info of glibc 2.35 on */
	put(base + 8, 0);         /* prev: the arena's first heap */
	put(base + 16, PAGE);     /* size */
	put(base + 24, 2 * PAGE); /* mprotect_size */
	put(base + 1024, (uintptr_t)0xdead);
	struct ct_reach_block b = {.start = base + 1040, .size = 100}; /* a chunk of the heap's */
	struct pieces p;
	const struct ct_reach_span program[] = {{lo, base}, {base + 2 * PAGE, hi}};
	check("thread heap: the program's pages around it are scanned, not the heap",
	      walk(&b, 1, lo, hi, &p) == 0 && pieces_are(&p, program, 2));
	check("thread heap holding no block: not scanned either",
	      walk(NULL, 0, lo, hi, &p) == 0 && pieces_are(&p, program, 2));

	put(base, base + 32); /* glibc before 2.35: a heap_info of 4 words */
	check("thread heap of an older glibc", walk(&b, 1, lo, hi, &p) == 0 && pieces_are(&p, program, 2));

	uintptr_t second = base + HEAP_MAX;
	mprotect((void *)second, PAGE, PROT_READ | PROT_WRITE);
	put(second, base + 32), put(second + 8, base), put(second + 16, PAGE), put(second + 24, PAGE);
	struct ct_reach_block b2 = {.start = second + 512, .size = 64};
	check("an arena's second heap", walk(&b2, 1, second, second + PAGE, &p) == 0 && p.n == 0);

	put(second + 8, base + 8); /* prev not a heap's start: no heap_info */
	check("a bad heap_info is no heap: its block leaves the mapping out",
	      walk(&b2, 1, second, second + PAGE, &p) == -1 && p.n == 0);
	put(second + 8, base);
	put(second + 16, 100); /* size not in pages */
	check("a heap_info with a size glibc never writes is no heap",
	      walk(&b2, 1, second, second + PAGE, &p) == -1 && p.n == 0);
	put(second + 16, PAGE);
	put(second, second + 48); /* a first heap (its own arena) must have no prev */
	check("an arena in a heap that has a prev is no first heap",
	      walk(&b2, 1, second, second + PAGE, &p) == -1 && p.n == 0);
	munmap(r, reserve);
}

/* ---- glibc's own ---- */

/* The readable mapping that holds p, from /proc/self/maps; 0 when none does. */
static int mapping_of(uintptr_t p, uintptr_t *lo, uintptr_t *hi)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int found = 0;
	while (f && !found && fgets(line, sizeof(line), f)) {
		unsigned long a, b;
		char perms[5];
		if (sscanf(line, "%lx-%lx %4s", &a, &b, perms) == 3 && a <= p && p < b && perms[0] == 'r') {
			*lo = a, *hi = b;
			found = 1;
		}
	}
	if (f)
		fclose(f);
	return found;
}

static void *keep_one(void *arg)
{
	void **out = arg;
	*out = malloc(100);
	return NULL;
}

static void *free_all(void *arg)
{
	uintptr_t *out = arg;
	void *p = malloc(100);
	*out = (uintptr_t)p;
	free(p);
	return NULL;
}

static void run(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	if (pthread_create(&t, NULL, fn, arg) || pthread_join(t, NULL)) {
		perror("pthread");
		exit(1);
	}
}

static void glibc_own(void)
{
	struct pieces p;
	uintptr_t lo, hi;
	void *big = malloc(1 << 20); /* above the mmap threshold */
	struct ct_reach_block b = {.start = (uintptr_t)big, .size = 1 << 20};
	check("glibc's mmapped chunk: recognised, not scanned",
	      mapping_of(b.start, &lo, &hi) && walk(&b, 1, lo, hi, &p) == 0 &&
	          !overlaps(&p, b.start - 16, b.start + b.size));

	uintptr_t freed = 0;
	run(free_all, &freed);
	int mapped = mapping_of(freed, &lo, &hi);
	check("a thread's heap of free chunks only: not scanned",
	      mapped && walk(NULL, 0, lo, hi, &p) == 0 &&
	          !overlaps(&p, freed & ~(HEAP_MAX - 1), freed + 100));

	void *kept = NULL;
	run(keep_one, &kept);
	b = (struct ct_reach_block){.start = (uintptr_t)kept, .size = 100};
	check("a thread's heap holding a block: recognised, not scanned",
	      mapping_of(b.start, &lo, &hi) && walk(&b, 1, lo, hi, &p) == 0 &&
	          !overlaps(&p, b.start & ~(HEAP_MAX - 1), b.start + 100));
	free(big);
	free(kept);
}

/* ct_mallocmap_usable_size against glibc's own answer: small chunks, the main arena's and a thread's,
 * mmapped ones (their header is two words), aligned ones; then a large block freed, whose pages are
 * unmapped at once: 0, not a fault. */
static void *thread_block(void *arg)
{
	*(void **)arg = malloc(200);
	return NULL;
}

static void usable_sizes(void)
{
	static const size_t sizes[] = {1, 8, 24, 25, 100, 1000, 4096, 100000, 200000, 1 << 20, 3 << 20};
	char name[80];
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		void *blocks[3] = {malloc(sizes[i]), calloc(1, sizes[i]), NULL};
		if (posix_memalign(&blocks[2], 4096, sizes[i]))
			blocks[2] = NULL;
		for (int k = 0; k < 3; k++) {
			snprintf(name, sizeof(name), "usable size of %s(%zu)",
			         k == 0   ? "malloc"
			         : k == 1 ? "calloc"
			                  : "posix_memalign 4096",
			         sizes[i]);
			check(name, blocks[k] && ct_mallocmap_usable_size((uintptr_t)blocks[k]) ==
			                             malloc_usable_size(blocks[k]));
			free(blocks[k]);
		}
	}
	void *t = NULL;
	run(thread_block, &t);
	check("usable size of a thread arena's block",
	      t && ct_mallocmap_usable_size((uintptr_t)t) == malloc_usable_size(t));
	free(t);
	void *big = malloc(8 << 20); /* mmapped: free unmaps it */
	uintptr_t gone = (uintptr_t)big;
	check("a large block is mmapped", big && ct_mallocmap_usable_size(gone) == malloc_usable_size(big) &&
	                                      malloc_usable_size(big) >= (8 << 20));
	free(big);
	check("the usable size of a block whose memory is gone is 0", ct_mallocmap_usable_size(gone) == 0);
}

int main(void)
{
	mmapped_by_hand();
	heaps_by_hand();
	glibc_own();
	usable_sizes();
	return failures ? 1 : 0;
}
