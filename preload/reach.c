/* SPDX-License-Identifier: MIT */
/* Leak classes by reachability (reach.h): a flood fill from the roots over the live blocks, then
 * the lost blocks grouped into cliques, as memcheck's leak checker does, so the classes equal its
 * LEAK SUMMARY. No allocation, no lock, no stdio: it runs while the program's threads are stopped
 * (leakscan.c gathers the roots and blocks). */
#include <string.h>

#include "reach.h"

#define WORD sizeof(uintptr_t)
#define NONE ((size_t)-1)

/* ---- sorting and finding blocks ---- */

static void swap(struct ct_reach_block *a, struct ct_reach_block *b)
{
	struct ct_reach_block t = *a;
	*a = *b;
	*b = t;
}

static void sift_down(struct ct_reach_block *b, size_t root, size_t n)
{
	for (size_t child; (child = 2 * root + 1) < n; root = child) {
		if (child + 1 < n && b[child + 1].start > b[child].start)
			child++;
		if (b[root].start >= b[child].start)
			return;
		swap(&b[root], &b[child]);
	}
}

void ct_reach_sort(struct ct_reach_block *blocks, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift_down(blocks, i, n);
	for (size_t end = n; end-- > 1;) {
		swap(&blocks[0], &blocks[end]);
		sift_down(blocks, 0, end);
	}
}

/* ---- the filter: which 1 MiB regions hold blocks ---- */

static unsigned region_bit(uintptr_t region)
{
	return (unsigned)(((uint64_t)region * 0x9E3779B97F4A7C15ull) >> (64 - CT_REACH_FILTER_BITS));
}

static void mark_regions(struct ct_reach *r, uintptr_t start, uint64_t span)
{
	uintptr_t first = start >> CT_REACH_REGION_BITS, last = (start + span - 1) >> CT_REACH_REGION_BITS;
	if (last - first >= (1u << CT_REACH_FILTER_BITS)) { /* a huge block: every bit */
		memset(r->regions, 0xff, sizeof(r->regions));
		return;
	}
	for (uintptr_t g = first; g <= last; g++) {
		unsigned bit = region_bit(g);
		r->regions[bit / 64] |= 1ull << (bit % 64);
	}
}

static void build_filter(struct ct_reach *r)
{
	memset(r->regions, 0, sizeof(r->regions));
	r->lo = r->span = 0;
	if (!r->n)
		return;
	uintptr_t end = 0;
	for (size_t i = 0; i < r->n; i++) {
		const struct ct_reach_block *b = &r->blocks[i];
		uint64_t span = b->size ? b->size : 1;
		mark_regions(r, b->start, span);
		end = b->start + span > end ? b->start + span : end;
	}
	r->lo = r->blocks[0].start;
	r->span = end - r->lo;
}

/* Whether p may lie in a block: no false answer when it does. */
static inline int may_hold(const struct ct_reach *r, uintptr_t p)
{
	unsigned bit = region_bit(p >> CT_REACH_REGION_BITS);
	return p - r->lo < r->span && (r->regions[bit / 64] >> (bit % 64) & 1);
}

/* The block that holds address p, or NONE. A block of size 0 holds its start (as in memcheck:
 * otherwise malloc(0) would always be lost). */
static size_t find(const struct ct_reach *r, uintptr_t p)
{
	if (!may_hold(r, p))
		return NONE;
	size_t lo = 0, hi = r->n;
	while (lo < hi) { /* the first block that starts after p */
		size_t mid = lo + (hi - lo) / 2;
		if (r->blocks[mid].start <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NONE;
	const struct ct_reach_block *b = &r->blocks[lo - 1];
	uint64_t span = b->size ? b->size : 1;
	return p - b->start < span ? lo - 1 : NONE;
}

static void push(struct ct_reach *r, size_t i)
{
	if (r->blocks[i].pending)
		return;
	r->blocks[i].pending = 1;
	r->stack[r->top++] = (uint32_t)i;
}

/* ---- the heuristics: interior pointers that are start pointers in disguise ---- */

/* Whether the word at b's offset can be read. */
static int readable_at(const struct ct_reach *r, const struct ct_reach_block *b, uint64_t offset)
{
	if (!b->partial)
		return 1;
	uintptr_t p = b->start + offset;
	for (size_t k = 0; k < r->nreadable; k++)
		if (p >= r->readable[k].lo && p + WORD <= r->readable[k].hi)
			return 1;
	return 0;
}

static uintptr_t word_at(const struct ct_reach_block *b, uint64_t offset)
{
	uintptr_t w;
	memcpy(&w, (const void *)(b->start + offset), WORD);
	return w;
}

static int heuristic_start(const struct ct_reach *r, const struct ct_reach_block *b, uintptr_t p)
{
	uint64_t off = p - b->start;
	if (!readable_at(r, b, 0) || !readable_at(r, b, WORD))
		return 0;
	if ((r->heuristics & CT_REACH_STDSTRING) && off == 3 * WORD && b->size >= 3 * WORD) {
		uintptr_t length = word_at(b, 0), capacity = word_at(b, WORD);
		if (3 * WORD + capacity + 1 == b->size && length <= capacity)
			return 1;
	}
	if ((r->heuristics & CT_REACH_LENGTH64) && off == 8 && b->size >= 8) {
		uint64_t size = word_at(b, 0);
		if (size > 0 && b->size - 8 == size)
			return 1;
	}
	if ((r->heuristics & CT_REACH_NEWARRAY) && off == WORD && b->size >= WORD) {
		uintptr_t count = word_at(b, 0);
		if (count > 0 && (b->size - WORD) % count == 0)
			return 1;
	}
	if ((r->heuristics & CT_REACH_MULTIPLE) && r->is_vtable && off % WORD == 0 && off + WORD <= b->size &&
	    readable_at(r, b, off)) {
		uintptr_t inner = word_at(b, off), first = word_at(b, 0);
		if (inner % WORD == 0 && inner >= 4096 && first % WORD == 0 && first >= 4096 &&
		    r->is_vtable(r->vtable_arg, inner) && r->is_vtable(r->vtable_arg, first))
			return 1;
	}
	return 0;
}

/* ---- the flood fill from the roots ---- */

/* A word found in a root (prior_definite) or in a block reached through start pointers only
 * (prior_definite) or not: upgrades the block it points into. */
static inline __attribute__((always_inline)) void reach_word(struct ct_reach *r, uintptr_t p,
                                                             int prior_definite)
{
	size_t i = find(r, p);
	if (i == NONE)
		return;
	struct ct_reach_block *b = &r->blocks[i];
	if (b->state == CT_REACH_REACHABLE || (b->allocator_edge && p - b->start == b->allocator_edge))
		return;
	int start = p == b->start || heuristic_start(r, b, p);
	if (start && prior_definite) {
		b->state = CT_REACH_REACHABLE; /* scanned (again): what it points to is reachable too */
		push(r, i);
	} else if (b->state == CT_REACH_DEFINITE) {
		b->state = CT_REACH_POSSIBLE;
		push(r, i);
	}
}

/* The aligned words of [p, p + len), each given to fn. */
#define FOR_EACH_WORD(p, len, w, body) \
	do { \
		uintptr_t a_ = ((uintptr_t)(p) + WORD - 1) & ~(uintptr_t)(WORD - 1); \
		uintptr_t end_ = ((uintptr_t)(p) + (len)) & ~(uintptr_t)(WORD - 1); \
		for (; a_ < end_; a_ += WORD) { \
			uintptr_t w; \
			memcpy(&w, (const void *)a_, WORD); \
			body; \
		} \
	} while (0)

/* The aligned words of block b that can be read. */
#define FOR_EACH_BLOCK_WORD(r, b, w, body) \
	do { \
		if (__builtin_expect(!(b)->partial, 1)) { \
			FOR_EACH_WORD((b)->start, (b)->size, w, body); \
			break; \
		} \
		for (size_t k_ = 0; k_ < (r)->nreadable; k_++) { \
			uintptr_t lo_ = \
			    (r)->readable[k_].lo > (b)->start ? (r)->readable[k_].lo : (b)->start; \
			uintptr_t hi_ = (r)->readable[k_].hi < (b)->start + (b)->size \
			                    ? (r)->readable[k_].hi \
			                    : (b)->start + (b)->size; \
			if (lo_ < hi_) \
				FOR_EACH_WORD(lo_, hi_ - lo_, w, body); \
		} \
	} while (0)

static void drain(struct ct_reach *r)
{
	while (r->top) {
		size_t i = r->stack[--r->top];
		struct ct_reach_block *b = &r->blocks[i];
		b->pending = 0;
		int definite = b->state == CT_REACH_REACHABLE;
		FOR_EACH_BLOCK_WORD(r, b, w, reach_word(r, w, definite));
	}
}

void ct_reach_begin(struct ct_reach *r)
{
	build_filter(r);
	r->top = 0;
	for (size_t i = 0; i < r->n; i++) {
		r->blocks[i].state = CT_REACH_DEFINITE;
		r->blocks[i].pending = 0;
		r->blocks[i].indirect = 0;
	}
}

void ct_reach_root(struct ct_reach *r, const void *p, size_t len)
{
	FOR_EACH_WORD(p, len, w, reach_word(r, w, 1));
	drain(r);
}

long ct_reach_block_at(const struct ct_reach *r, uintptr_t p)
{
	size_t i = find(r, p);
	return i == NONE ? -1 : (long)i;
}

void ct_reach_root_word(struct ct_reach *r, uintptr_t word)
{
	reach_word(r, word, 1);
	drain(r);
}

/* ---- the lost blocks, in cliques ----
 * Each block still unreached, in address order, leads a clique: every unreached block it reaches
 * (start or interior pointer alike) is indirectly lost through it, and a former leader it reaches
 * brings its own clique along. */

static void lose_word(struct ct_reach *r, uintptr_t p, size_t leader)
{
	size_t i = find(r, p);
	if (i == NONE || i == leader)
		return;
	struct ct_reach_block *b = &r->blocks[i];
	if (b->state != CT_REACH_DEFINITE)
		return;
	r->blocks[leader].indirect += b->size + b->indirect;
	b->indirect = 0;
	b->state = CT_REACH_INDIRECT;
	b->leader = (uint32_t)leader; /* a former leader's blocks follow it here */
	push(r, i);
}

static void gather(struct ct_reach *r, size_t leader)
{
	push(r, leader);
	while (r->top) {
		size_t i = r->stack[--r->top];
		struct ct_reach_block *b = &r->blocks[i];
		b->pending = 0;
		FOR_EACH_BLOCK_WORD(r, b, w, lose_word(r, w, leader));
	}
}

size_t ct_reach_leader(struct ct_reach *r, size_t i)
{
	size_t top = i;
	while (r->blocks[top].state == CT_REACH_INDIRECT)
		top = r->blocks[top].leader;
	while (r->blocks[i].state == CT_REACH_INDIRECT) { /* every block on the way points at top now */
		size_t next = r->blocks[i].leader;
		r->blocks[i].leader = (uint32_t)top;
		i = next;
	}
	return top;
}

void ct_reach_finish(struct ct_reach *r)
{
	drain(r);
	for (size_t i = 0; i < r->n; i++)
		if (r->blocks[i].state == CT_REACH_DEFINITE)
			gather(r, i);
}
