/* SPDX-License-Identifier: MIT */
/* What glibc's malloc owns in an anonymous mapping (mallocmap.h): thread arenas' heaps, found by their
 * heap_info, and the mmapped chunks of live blocks, found by their headers, cut out of the mapping.
 * Runs in the leak scan: no allocation, no lock, no stdio. */
#include <sys/mman.h>

#include "mallocmap.h"

#define WORD sizeof(uintptr_t)
#define PAGE 4096u
#define HEAP_MAX ((uintptr_t)64 << 20) /* HEAP_MAX_SIZE: 2 * DEFAULT_MMAP_THRESHOLD_MAX */
#define CHUNK_HEADER (2 * WORD)        /* prev_size, size */
#define CHUNK_IS_MMAPPED 2
#define CHUNK_FLAGS 7

/* The end of the rw part of the thread arena's heap at base, clamped to hi; 0 when base holds none.
 * Every field must be what glibc writes: a page-multiple size within mprotect_size within HEAP_MAX,
 * a HEAP_MAX-aligned prev, an arena right after a heap_info (4 words before glibc 2.35, 6 since it
 * holds the page size), in this very heap exactly when it is the arena's first (prev NULL). */
static uintptr_t heap_end(uintptr_t base, uintptr_t hi, int safe)
{
	unsigned char in_core = 0;
	uintptr_t h[4];
	if (hi - base < 6 * WORD)
		return 0;
	/* glibc wrote a heap_info's page; one never touched may be a userfaultfd region's, whose
	 * handler thread is stopped: a read of it would wait for ever */
	if (mincore((void *)base, PAGE, &in_core) < 0 || !(in_core & 1) ||
	    !ct_reach_read(h, base, sizeof(h), safe))
		return 0;
	uintptr_t ar = h[0], prev = h[1], size = h[2], mprotect = h[3];
	uintptr_t ar_heap = ar & ~(HEAP_MAX - 1);
	if (!size || size % PAGE || mprotect % PAGE || size > mprotect || mprotect > HEAP_MAX)
		return 0;
	if (prev % HEAP_MAX || (ar - ar_heap != 4 * WORD && ar - ar_heap != 6 * WORD) ||
	    !prev != (ar_heap == base))
		return 0;
	return mprotect < hi - base ? base + mprotect : hi;
}

/* The mmapped chunk that holds block b, wholly inside [lo, hi): its end, and its start in *start;
 * 0 when b is not one. */
static uintptr_t mmapped_chunk(const struct ct_reach_block *b, uintptr_t lo, uintptr_t hi, uintptr_t *start,
                               int safe)
{
	uintptr_t w[2];
	if (b->start < lo || b->start - lo < CHUNK_HEADER ||
	    !ct_reach_read(w, b->start - CHUNK_HEADER, sizeof(w), safe))
		return 0;
	uintptr_t c = b->start - CHUNK_HEADER;
	uintptr_t prev = w[0], size = w[1] & ~(uintptr_t)CHUNK_FLAGS;
	if (!(w[1] & CHUNK_IS_MMAPPED) || prev > c - lo || size > hi - c || size < CHUNK_HEADER ||
	    b->size > size - CHUNK_HEADER || (c - prev) % PAGE || (prev + size) % PAGE)
		return 0;
	*start = c - prev;
	return c + size;
}

/* The index of the first block that starts at or after lo (n when none does). */
static size_t first_block(const struct ct_reach_block *blocks, size_t n, uintptr_t lo)
{
	size_t a = 0, b = n;
	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if (blocks[mid].start < lo)
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}

/* The walk: heaps and chunks in address order, the pieces between them given to piece (none when it
 * is NULL). -1 at the first part of a block that is neither. */
static int walk(const struct ct_reach_block *blocks, size_t n, uintptr_t lo, uintptr_t hi, int safe,
                void (*piece)(uintptr_t, uintptr_t, void *), void *arg)
{
	size_t i = first_block(blocks, n, lo);
	if (i && blocks[i - 1].start + (blocks[i - 1].size ? blocks[i - 1].size : 1) > lo)
		return -1; /* a block reaches into the mapping from below: the mapping is part of it */
	uintptr_t at = lo, base = (lo + HEAP_MAX - 1) & ~(HEAP_MAX - 1), end = 0;
	for (;;) {
		while (base < hi && !(end = heap_end(base, hi, safe)))
			base += HEAP_MAX;
		uintptr_t cut = base < hi ? base : hi; /* the next heap, or the mapping's end */
		for (; i < n && blocks[i].start < cut; i++) {
			uintptr_t start, stop = mmapped_chunk(&blocks[i], at, cut, &start, safe);
			if (!stop)
				return -1;
			if (piece && at < start)
				piece(at, start, arg);
			at = stop;
		}
		if (piece && at < cut)
			piece(at, cut, arg);
		if (cut == hi)
			return 0;
		for (at = end; i < n && blocks[i].start < end; i++)
			; /* the heap's own blocks */
		base += HEAP_MAX;
	}
}

size_t ct_mallocmap_usable_size(uintptr_t p)
{
	uintptr_t size;
	if (ct_reach_copy(&size, p - WORD, WORD) != WORD)
		return 0;
	size_t chunk = size & ~(uintptr_t)CHUNK_FLAGS, header = size & CHUNK_IS_MMAPPED ? CHUNK_HEADER : WORD;
	return chunk > header ? chunk - header : 0;
}

int ct_mallocmap_walk(const struct ct_reach_block *blocks, size_t n, uintptr_t lo, uintptr_t hi, int safe,
                      void (*piece)(uintptr_t plo, uintptr_t phi, void *arg), void *arg)
{
	if (walk(blocks, n, lo, hi, safe, NULL, NULL) < 0)
		return -1;
	return walk(blocks, n, lo, hi, safe, piece, arg);
}
