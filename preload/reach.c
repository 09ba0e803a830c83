/* SPDX-License-Identifier: MIT */
/* Leak classes by reachability (reach.h): a flood fill from the roots over the live blocks, then
 * the lost blocks grouped into cliques, as memcheck's leak checker does, so the classes equal its
 * LEAK SUMMARY. No allocation, no lock, no stdio: it runs while the program's threads are stopped
 * (leakscan.c gathers the roots and blocks). A second thread may help with the flood fill: a
 * block's state and its place on a stack change with atomic operations, and the marking threads
 * hand each other blocks through one buffer (struct ct_reach_share). */
#include <sched.h>
#include <string.h>

#include "reach.h"

#define WORD sizeof(uintptr_t)
#define NONE ((size_t)-1)
#define SEGMENT_GAP ((uintptr_t)1 << 20) /* blocks further apart start a new index segment */
#define MIN_SHIFT 4                      /* the smallest bucket: 16 bytes, malloc's alignment */

enum { SHARE_EMPTY, SHARE_FILLING, SHARE_FULL, SHARE_TAKING };

_Static_assert(sizeof(struct ct_reach_block) == 32, "the scan holds one block record per live block");

/* ---- sorting: most significant digit first radix sort, in place ---- */

static void swap(struct ct_reach_block *a, struct ct_reach_block *b)
{
	struct ct_reach_block t = *a;
	*a = *b;
	*b = t;
}

static void insertion_sort(struct ct_reach_block *b, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct ct_reach_block t = b[i];
		size_t j = i;
		for (; j > 0 && b[j - 1].start > t.start; j--)
			b[j] = b[j - 1];
		b[j] = t;
	}
}

/* Sorts b by the bits of start from `shift` up (the bits above shift + 8 are the same in all), 8
 * at a time: each block is swapped straight into its digit's bucket (American flag sort). */
static void radix_sort(struct ct_reach_block *b, size_t n, unsigned shift)
{
	if (n <= 32) {
		insertion_sort(b, n);
		return;
	}
	size_t count[256] = {0}, next[256];
	for (size_t i = 0; i < n; i++)
		count[(b[i].start >> shift) & 255]++;
	for (size_t d = 0, at = 0; d < 256; at += count[d++])
		next[d] = at;
	for (size_t d = 0, end = 0; d < 256; d++) {
		end += count[d];
		while (next[d] < end) {
			size_t to = (b[next[d]].start >> shift) & 255;
			if (to == d)
				next[d]++;
			else
				swap(&b[next[d]], &b[next[to]++]);
		}
	}
	if (!shift)
		return;
	unsigned lower = shift > 8 ? shift - 8 : 0;
	for (size_t d = 0, at = 0; d < 256; at += count[d++])
		if (count[d] > 1)
			radix_sort(b + at, count[d], lower);
}

void ct_reach_sort(struct ct_reach_block *blocks, size_t n)
{
	if (n < 2)
		return;
	uintptr_t lo = blocks[0].start, hi = lo;
	for (size_t i = 1; i < n; i++) {
		lo = blocks[i].start < lo ? blocks[i].start : lo;
		hi = blocks[i].start > hi ? blocks[i].start : hi;
	}
	unsigned top = lo == hi ? 0 : 64 - (unsigned)__builtin_clzll((unsigned long long)(lo ^ hi));
	radix_sort(blocks, n, top > 8 ? top - 8 : 0); /* the first digit holds the highest bit that differs */
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

static uint64_t span_of(const struct ct_reach_block *b)
{
	return b->size ? b->size : 1; /* a block of size 0 holds its start (as in memcheck) */
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
		mark_regions(r, b->start, span_of(b));
		end = b->start + span_of(b) > end ? b->start + span_of(b) : end;
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

/* ---- the index: segments of blocks, cut into buckets ---- */

/* The segment that starts at block `first`: its blocks [first, end), its span [lo, hi) and its
 * buckets' shift. */
struct seg_plan {
	size_t first, end;
	uintptr_t lo, hi;
	unsigned shift;
	size_t buckets; /* entries, the one past the segment included */
};

static void plan_segment(const struct ct_reach_block *blocks, size_t n, size_t first, struct seg_plan *s)
{
	s->first = first;
	s->lo = blocks[first].start;
	s->hi = s->lo + span_of(&blocks[first]);
	size_t i = first + 1;
	for (; i < n && blocks[i].start - s->hi < SEGMENT_GAP; i++)
		s->hi = blocks[i].start + span_of(&blocks[i]) > s->hi ? blocks[i].start + span_of(&blocks[i])
		                                                      : s->hi;
	s->end = i;
	size_t k = i - first;
	s->shift = MIN_SHIFT; /* about one bucket per block: 4 bytes per block */
	while (s->shift < 63 && ((s->hi - 1 - s->lo) >> s->shift) + 1 > k)
		s->shift++;
	s->buckets = ((s->hi - 1 - s->lo) >> s->shift) + 2;
}

size_t ct_reach_index_bytes(const struct ct_reach_block *blocks, size_t n)
{
	size_t bytes = 0;
	struct seg_plan s;
	for (size_t i = 0; i < n; i = s.end) {
		plan_segment(blocks, n, i, &s);
		bytes += sizeof(struct ct_reach_seg) + s.buckets * sizeof(uint32_t);
	}
	return bytes;
}

/* Fills the buckets of a segment: each holds the first block whose end is above its start. */
static void fill_buckets(const struct ct_reach_block *blocks, const struct seg_plan *s, uint32_t *bucket)
{
	size_t i = s->first;
	for (size_t k = 0; k + 1 < s->buckets; k++) {
		uintptr_t at = s->lo + ((uintptr_t)k << s->shift);
		while (i < s->end && blocks[i].start + span_of(&blocks[i]) <= at)
			i++;
		bucket[k] = (uint32_t)i;
	}
	bucket[s->buckets - 1] = (uint32_t)s->end;
}

static void build_index(struct ct_reach *r)
{
	r->segs = NULL;
	r->nsegs = 0;
	if (!r->index || !r->n || r->index_bytes < ct_reach_index_bytes(r->blocks, r->n))
		return;
	struct seg_plan s;
	size_t nsegs = 0;
	for (size_t i = 0; i < r->n; i = s.end, nsegs++)
		plan_segment(r->blocks, r->n, i, &s);
	struct ct_reach_seg *segs = r->index;
	uint32_t *bucket = (uint32_t *)(segs + nsegs);
	for (size_t i = 0, k = 0; i < r->n; i = s.end, k++) {
		plan_segment(r->blocks, r->n, i, &s);
		fill_buckets(r->blocks, &s, bucket);
		segs[k] = (struct ct_reach_seg){s.lo, s.hi, bucket, s.shift};
		bucket += s.buckets;
	}
	r->segs = segs;
	r->nsegs = nsegs;
}

/* The block that holds p among blocks [lo, hi] (the last that starts at or below p), or NONE. */
static size_t find_between(const struct ct_reach *r, uintptr_t p, size_t lo, size_t hi)
{
	if (r->blocks[lo].start > p)
		return NONE;
	while (hi - lo > 8) { /* a bucket of many blocks: a huge block's neighbours */
		size_t mid = lo + (hi - lo + 1) / 2;
		if (r->blocks[mid].start <= p)
			lo = mid;
		else
			hi = mid - 1;
	}
	while (lo < hi && r->blocks[lo + 1].start <= p)
		lo++;
	return p - r->blocks[lo].start < span_of(&r->blocks[lo]) ? lo : NONE;
}

/* The bucket of the index that holds p, or NULL when p is in no segment. */
static const uint32_t *bucket_of(const struct ct_reach *r, uintptr_t p)
{
	size_t a = 0, b = r->nsegs;
	while (a < b) { /* the first segment that ends above p */
		size_t mid = a + (b - a) / 2;
		if (r->segs[mid].hi <= p)
			a = mid + 1;
		else
			b = mid;
	}
	if (a == r->nsegs || r->segs[a].lo > p)
		return NULL;
	const struct ct_reach_seg *s = &r->segs[a];
	return &s->bucket[(p - s->lo) >> s->shift];
}

/* The block that holds p among those of its bucket k. */
static size_t find_in_bucket(const struct ct_reach *r, uintptr_t p, const uint32_t *k)
{
	size_t lo = k[0], hi = k[1] < r->n ? k[1] : r->n - 1;
	return lo < r->n ? find_between(r, p, lo, hi) : NONE;
}

static size_t find_indexed(const struct ct_reach *r, uintptr_t p)
{
	const uint32_t *k = bucket_of(r, p);
	return k ? find_in_bucket(r, p, k) : NONE;
}

/* The block that holds address p, or NONE. */
static size_t find(const struct ct_reach *r, uintptr_t p)
{
	if (!may_hold(r, p))
		return NONE;
	if (r->nsegs)
		return find_indexed(r, p);
	return find_between(r, p, 0, r->n - 1);
}

/* ---- the marking threads' stacks ---- */

/* A marking thread's stack of blocks to scan: the caller's (r->stack) or the helper's. */
struct lane {
	uint32_t *stack;
	size_t top;
	struct ct_reach_share *share; /* the other thread's handovers, or NULL */
};

/* Puts block i on the lane's stack unless it is on one already. Its memory is fetched meanwhile:
 * the stack is last in, first out, so it is scanned soon. */
static void push(struct ct_reach *r, struct lane *l, size_t i)
{
	if (__atomic_exchange_n(&r->blocks[i].pending, 1, __ATOMIC_SEQ_CST))
		return;
	__builtin_prefetch((const void *)r->blocks[i].start);
	l->stack[l->top++] = (uint32_t)i;
}

/* Hands CT_REACH_SHARE blocks from the top of a full enough stack to the other thread, when the
 * buffer is free. */
static void give(struct ct_reach_share *s, struct lane *l)
{
	int empty = SHARE_EMPTY;
	if (l->top < 2 * CT_REACH_SHARE || !__atomic_load_n(&s->joined, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&s->full, __ATOMIC_RELAXED) != SHARE_EMPTY ||
	    !__atomic_compare_exchange_n(&s->full, &empty, SHARE_FILLING, 0, __ATOMIC_SEQ_CST,
	                                 __ATOMIC_RELAXED))
		return;
	l->top -= CT_REACH_SHARE;
	memcpy(s->v, l->stack + l->top, sizeof(s->v));
	__atomic_store_n(&s->full, SHARE_FULL, __ATOMIC_SEQ_CST);
}

/* Takes the blocks the other thread handed over; 0 when there were none. */
static int take(struct ct_reach_share *s, struct lane *l)
{
	int full = SHARE_FULL;
	if (__atomic_load_n(&s->full, __ATOMIC_RELAXED) != SHARE_FULL ||
	    !__atomic_compare_exchange_n(&s->full, &full, SHARE_TAKING, 0, __ATOMIC_SEQ_CST,
	                                 __ATOMIC_RELAXED))
		return 0;
	memcpy(l->stack + l->top, s->v, sizeof(s->v));
	l->top += CT_REACH_SHARE;
	__atomic_fetch_add(&s->takes, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&s->full, SHARE_EMPTY, __ATOMIC_SEQ_CST);
	return 1;
}

static void pause_briefly(unsigned *spins)
{
	if (++*spins % 64)
		__builtin_ia32_pause();
	else
		sched_yield();
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

/* Copies [a, a + len) to dst as ct_reach_copy does, but nothing that r->hidden says is not the
 * program's memory, asked before the copy and after it (a mapping made during the copy). The bytes
 * copied. */
static size_t safe_copy(const struct ct_reach *r, void *dst, uintptr_t a, size_t len)
{
	if (r->hidden && r->hidden(a, a + len))
		return 0;
	size_t got = ct_reach_copy(dst, a, len);
	return got && r->hidden && r->hidden(a, a + len) ? 0 : got;
}

/* The word at b's offset (0 when threads run and it is gone: no heuristic holds then). */
static uintptr_t word_at(const struct ct_reach *r, const struct ct_reach_block *b, uint64_t offset)
{
	uintptr_t w;
	if (!r->safe)
		return ct_reach_read(&w, b->start + offset, WORD, 0) ? w : 0;
	return safe_copy(r, &w, b->start + offset, WORD) == WORD ? w : 0;
}

static int heuristic_start(const struct ct_reach *r, const struct ct_reach_block *b, uintptr_t p)
{
	uint64_t off = p - b->start;
	if (!readable_at(r, b, 0) || !readable_at(r, b, WORD))
		return 0;
	if ((r->heuristics & CT_REACH_STDSTRING) && off == 3 * WORD && b->size >= 3 * WORD) {
		uintptr_t length = word_at(r, b, 0), capacity = word_at(r, b, WORD);
		if (3 * WORD + capacity + 1 == b->size && length <= capacity)
			return 1;
	}
	if ((r->heuristics & CT_REACH_LENGTH64) && off == 8 && b->size >= 8) {
		uint64_t size = word_at(r, b, 0);
		if (size > 0 && b->size - 8 == size)
			return 1;
	}
	if ((r->heuristics & CT_REACH_NEWARRAY) && off == WORD && b->size >= WORD) {
		uintptr_t count = word_at(r, b, 0);
		if (count > 0 && (b->size - WORD) % count == 0)
			return 1;
	}
	if ((r->heuristics & CT_REACH_MULTIPLE) && r->is_vtable && off % WORD == 0 && off + WORD <= b->size &&
	    readable_at(r, b, off)) {
		uintptr_t inner = word_at(r, b, off), first = word_at(r, b, 0);
		if (inner % WORD == 0 && inner >= 4096 && first % WORD == 0 && first >= 4096 &&
		    r->is_vtable(r->vtable_arg, inner) && r->is_vtable(r->vtable_arg, first))
			return 1;
	}
	return 0;
}

/* ---- the flood fill from the roots ---- */

/* Raises block i's state from `from` to `to`; 1 when this thread did it. */
static int raise_state(struct ct_reach_block *b, uint8_t from, uint8_t to)
{
	return __atomic_compare_exchange_n(&b->state, &from, to, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
}

/* A word found in a root (prior_definite) or in a block reached through start pointers only
 * (prior_definite) or not: upgrades the block it points into. */
static inline __attribute__((always_inline)) void reach_found(struct ct_reach *r, struct lane *l, uintptr_t p,
                                                              size_t i, int prior_definite)
{
	if (i == NONE)
		return;
	struct ct_reach_block *b = &r->blocks[i];
	uint8_t state = __atomic_load_n(&b->state, __ATOMIC_RELAXED);
	if (state == CT_REACH_REACHABLE || (b->allocator_edge && p - b->start == b->allocator_edge))
		return;
	/* A word of a block reached only through an interior pointer can only make its target
	 * possibly lost, start pointer or not: no heuristic is asked, as each reads the target's
	 * memory (a cache miss per pointer into a large heap). */
	if (!prior_definite && state != CT_REACH_DEFINITE)
		return;
	if (prior_definite && (p == b->start || heuristic_start(r, b, p))) {
		/* scanned (again): what it points to is reachable too */
		if (__atomic_exchange_n(&b->state, CT_REACH_REACHABLE, __ATOMIC_SEQ_CST) !=
		    CT_REACH_REACHABLE)
			push(r, l, i);
	} else if (raise_state(b, CT_REACH_DEFINITE, CT_REACH_POSSIBLE)) {
		push(r, l, i);
	}
}

/* A word found in a lost block of leader's clique: the still unreached block i it points into
 * joins the clique. */
static void lose_found(struct ct_reach *r, struct lane *l, size_t i, size_t leader)
{
	if (i == NONE || i == leader)
		return;
	struct ct_reach_block *b = &r->blocks[i];
	if (b->state != CT_REACH_DEFINITE)
		return;
	b->state = CT_REACH_INDIRECT;
	b->leader = (uint32_t)leader; /* a former leader's blocks follow it here */
	push(r, l, i);
}

static void reach_word(struct ct_reach *r, struct lane *l, uintptr_t p, int prior_definite)
{
	reach_found(r, l, p, find(r, p), prior_definite);
}

/* ---- words looked up in batches ----
 * Finding a word's block takes two dependent loads that miss the cache on a large heap (its bucket,
 * then the block); a batch of words has each load of all its words issued before any is used. */

#define BATCH 16

struct batch {
	size_t n;
	int prior_definite; /* of every word in the batch */
	size_t leader;      /* the clique the words' blocks join (lose_found), or NONE: marking */
	uintptr_t p[BATCH];
	const uint32_t *k[BATCH]; /* each word's bucket (NULL without the index) */
};

static void batch_flush(struct ct_reach *r, struct lane *l, struct batch *q)
{
	for (size_t j = 0; j < q->n; j++)
		if (q->k[j] && q->k[j][0] < r->n)
			__builtin_prefetch(&r->blocks[q->k[j][0]]);
	for (size_t j = 0; j < q->n; j++) {
		size_t i =
		    q->k[j] ? find_in_bucket(r, q->p[j], q->k[j]) : find_between(r, q->p[j], 0, r->n - 1);
		if (q->leader != NONE)
			lose_found(r, l, i, q->leader);
		else
			reach_found(r, l, q->p[j], i, q->prior_definite);
	}
	q->n = 0;
}

static inline __attribute__((always_inline)) void batch_add(struct ct_reach *r, struct lane *l,
                                                            struct batch *q, uintptr_t p)
{
	if (!may_hold(r, p))
		return;
	const uint32_t *k = NULL;
	if (r->nsegs) {
		if (!(k = bucket_of(r, p)))
			return;
		__builtin_prefetch(k);
	}
	q->p[q->n] = p;
	q->k[q->n++] = k;
	if (q->n == BATCH)
		batch_flush(r, l, q);
}

/* The aligned words of [p, p + len), each given to body as w. With copy (r->safe: threads run), a
 * page at a time through a copy that fails instead of faulting (safe_copy): a page gone is skipped. */
#define SAFE_PAGE 4096
#define FOR_EACH_WORD(r, copy, p, len, w, body) \
	do { \
		uintptr_t a_ = ((uintptr_t)(p) + WORD - 1) & ~(uintptr_t)(WORD - 1); \
		uintptr_t end_ = ((uintptr_t)(p) + (len)) & ~(uintptr_t)(WORD - 1); \
		if (__builtin_expect(!(copy), 1)) { \
			for (; a_ < end_; a_ += WORD) { \
				uintptr_t w; \
				memcpy(&w, (const void *)a_, WORD); \
				body; \
			} \
			break; \
		} \
		for (uintptr_t page_[SAFE_PAGE / WORD]; a_ < end_;) { \
			size_t want_ = SAFE_PAGE - (a_ & (SAFE_PAGE - 1)); \
			want_ = want_ < end_ - a_ ? want_ : end_ - a_; \
			size_t got_ = safe_copy(r, page_, a_, want_) / WORD; \
			for (size_t k_ = 0; k_ < got_; k_++) { \
				uintptr_t w = page_[k_]; \
				body; \
			} \
			a_ += want_; \
		} \
	} while (0)

/* The aligned words of block b that can be read. */
#define FOR_EACH_BLOCK_WORD(r, b, w, body) \
	do { \
		if (__builtin_expect(!(b)->partial, 1)) { \
			FOR_EACH_WORD(r, (r)->safe, (b)->start, (b)->size, w, body); \
			break; \
		} \
		for (size_t k_ = 0; k_ < (r)->nreadable; k_++) { \
			uintptr_t lo_ = \
			    (r)->readable[k_].lo > (b)->start ? (r)->readable[k_].lo : (b)->start; \
			uintptr_t hi_ = (r)->readable[k_].hi < (b)->start + (b)->size \
			                    ? (r)->readable[k_].hi \
			                    : (b)->start + (b)->size; \
			if (lo_ < hi_) \
				FOR_EACH_WORD(r, (r)->safe, lo_, hi_ - lo_, w, body); \
		} \
	} while (0)

/* Scans the blocks of the lane's stack until it is empty, handing some to the other thread when it
 * holds many, and taking what the other thread handed over when it runs dry. Returns the blocks
 * scanned. */
static uint64_t drain_lane(struct ct_reach *r, struct lane *l)
{
	uint64_t scanned = 0;
	for (;;) {
		while (l->top) {
			size_t i = l->stack[--l->top];
			struct ct_reach_block *b = &r->blocks[i];
			/* off the stack before its state is read: a rise after the read pushes it again */
			__atomic_store_n(&b->pending, 0, __ATOMIC_SEQ_CST);
			struct batch q = {.prior_definite = __atomic_load_n(&b->state, __ATOMIC_SEQ_CST) ==
			                                    CT_REACH_REACHABLE,
			                  .leader = NONE};
			FOR_EACH_BLOCK_WORD(r, b, w, batch_add(r, l, &q, w));
			batch_flush(r, l, &q);
			scanned++;
			if (l->share)
				give(l->share, l);
		}
		if (!l->share || !take(l->share, l))
			return scanned;
	}
}

static void drain(struct ct_reach *r)
{
	struct lane l = {r->stack, r->top, r->share};
	drain_lane(r, &l);
	r->top = l.top;
}

void ct_reach_begin(struct ct_reach *r)
{
	build_filter(r);
	build_index(r);
	r->top = 0;
	for (size_t i = 0; i < r->n; i++) {
		r->blocks[i].state = CT_REACH_DEFINITE;
		r->blocks[i].pending = 0;
	}
}

static void root_range(struct ct_reach *r, uintptr_t p, size_t len, int copy)
{
	struct lane l = {r->stack, r->top, r->share};
	struct batch q = {.prior_definite = 1, .leader = NONE};
	FOR_EACH_WORD(r, copy, p, len, w, batch_add(r, &l, &q, w));
	batch_flush(r, &l, &q);
	r->top = l.top;
	drain(r);
}

void ct_reach_root(struct ct_reach *r, const void *p, size_t len)
{
	root_range(r, (uintptr_t)p, len, r->safe);
}

void ct_reach_root_copied(struct ct_reach *r, uintptr_t p, size_t len)
{
	root_range(r, p, len, 1);
}

long ct_reach_block_at(const struct ct_reach *r, uintptr_t p)
{
	size_t i = r->n ? find(r, p) : NONE;
	return i == NONE ? -1 : (long)i;
}

void ct_reach_freed(struct ct_reach *r, uintptr_t p)
{
	long i = ct_reach_block_at(r, p);
	if (i >= 0 && r->blocks[i].start == p)
		__atomic_store_n(&r->blocks[i].state, CT_REACH_REACHABLE, __ATOMIC_SEQ_CST);
}

void ct_reach_root_word(struct ct_reach *r, uintptr_t word)
{
	struct lane l = {r->stack, r->top, r->share};
	reach_word(r, &l, word, 1);
	r->top = l.top;
	drain(r);
}

/* ---- the second marking thread ---- */

void ct_reach_help(struct ct_reach *r)
{
	struct ct_reach_share *s = r->share;
	struct lane l = {s->stack, 0, s};
	unsigned spins = 0;
	__atomic_store_n(&s->joined, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&s->done, __ATOMIC_SEQ_CST)) {
		__atomic_store_n(&s->busy, 1, __ATOMIC_SEQ_CST); /* before the take: see marking_over */
		if (take(s, &l)) {
			s->helped += drain_lane(r, &l);
			spins = 0;
		}
		__atomic_store_n(&s->busy, 0, __ATOMIC_SEQ_CST);
		pause_briefly(&spins);
	}
}

/* Whether no block is left to mark: this thread's stack is empty (the caller's), nothing is handed
 * over and the helper holds nothing, and no handover was taken meanwhile (a helper that took one
 * between the two loads of busy and full would look idle). */
static int marking_over(struct ct_reach_share *s)
{
	uint64_t takes = __atomic_load_n(&s->takes, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&s->busy, __ATOMIC_SEQ_CST) ||
	    __atomic_load_n(&s->full, __ATOMIC_SEQ_CST) != SHARE_EMPTY)
		return 0;
	return __atomic_load_n(&s->takes, __ATOMIC_SEQ_CST) == takes;
}

/* Marks until neither thread has a block left, then lets the helper go. */
static void finish_marking(struct ct_reach *r)
{
	drain(r);
	struct ct_reach_share *s = r->share;
	if (!s)
		return;
	for (unsigned spins = 0; !marking_over(s); pause_briefly(&spins))
		drain(r);
	__atomic_store_n(&s->done, 1, __ATOMIC_SEQ_CST);
}

/* ---- the lost blocks, in cliques ----
 * Each block still unreached, in address order, leads a clique: every unreached block it reaches
 * (start or interior pointer alike) is indirectly lost through it, and a former leader it reaches
 * brings its own clique along. */

static void gather(struct ct_reach *r, size_t leader)
{
	struct lane l = {r->stack, 0, NULL}; /* the cliques are this thread's alone */
	push(r, &l, leader);
	while (l.top) {
		size_t i = l.stack[--l.top];
		struct ct_reach_block *b = &r->blocks[i];
		b->pending = 0;
		struct batch q = {.leader = leader};
		FOR_EACH_BLOCK_WORD(r, b, w, batch_add(r, &l, &q, w));
		batch_flush(r, &l, &q);
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

uint64_t ct_reach_lost_through(struct ct_reach *r, size_t i)
{
	uint64_t bytes = 0;
	for (size_t k = 0; k < r->n; k++)
		if (r->blocks[k].state == CT_REACH_INDIRECT && ct_reach_leader(r, k) == i)
			bytes += r->blocks[k].size;
	return bytes;
}

void ct_reach_finish(struct ct_reach *r)
{
	finish_marking(r);
	for (size_t i = 0; i < r->n; i++)
		if (r->blocks[i].state == CT_REACH_DEFINITE)
			gather(r, i);
}
