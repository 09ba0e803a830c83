/* SPDX-License-Identifier: MIT */
/* Matching frees to allocations (see match.h): per-stream held and pending blocks, the live table,
 * alloc info interning, sequence order across streams, the recently freed addresses and the
 * verdict on frees of other addresses, the totals; each lane for its own addresses. One thread at
 * a time, no locks, no malloc. */
#include <errno.h>
#include <stdatomic.h>

#include "arena.h"
#include "event.h"
#include "maps.h"
#include "match.h"

#define HOT static inline __attribute__((always_inline)) /* on every event's path */

/* A lane: the matcher of the addresses whose sequence buckets are its own (match.h). */
struct lane {
	struct ct_match_sink sink;
	struct ct_live_map live;
	uint32_t *expect;       /* one lane's, per bucket: the next event's number (match.h: order) */
	struct freed *freed;    /* recently freed addresses (FREED_SLOTS) */
	struct recent *recent;  /* the last ALLOC records by address (RECENT_SLOTS) */
	uint32_t stacks;        /* stack node ids below this are defined in its output */
	uint32_t alloc_records; /* ALLOC records it wrote so far (mod 2^32), to name blocks by age */
	uint32_t index, mask;   /* its buckets: those b with b & mask == index */
	uint64_t allocations, frees, bytes, unmatched, lost, dropped;
	struct ct_match_figures fig; /* with one lane (count) */
	struct ct_match_stream *streams;
};

static struct {
	struct lane lane[CT_MATCH_LANES_MAX];
	struct ct_info_map infos; /* the alloc infos, one id space for all lanes */
	atomic_flag infos_lock;   /* with several lanes */
	uint32_t infos_defined;   /* ids below this have their INFO record in the output */
	uint64_t bytes_taken;     /* the lanes' bytes allocated at the last ct_match_take_bytes */
	uint32_t *expect;         /* several lanes: the orderer's, per bucket (ct_match_turn) */
	uint32_t def_stacks;      /* several lanes: stack ids defined where the INFO records go */
	uint32_t lanes, shift;    /* lanes = 1 << shift */
	int numbered;             /* events may have taken numbers: a reset was done before */
	void (*aggregate)(unsigned tag, uint32_t info); /* ct_match_aggregate, or NULL */
} m = {.lanes = 1};

static inline struct lane *lane_of(const struct ct_match_stream *s)
{
	return s->lane_state;
}

/* ---- recently freed addresses ----
 * A direct-mapped table of the last free of each address it holds (a newer free of another address
 * with the same slot takes it): the call site and the block. An address found here that is no live
 * block was freed and not allocated again since, as far as ctrack saw (a block allocated there later
 * would have been found live): freeing it again is a double free. 8192 slots, 192 KiB: a double
 * free a few thousand frees after the first is still told; one the table forgot is judged as any
 * other unknown address (glibc's abort still makes it an invalid free, ct_match_crash). */

#define FREED_BITS 13
#define FREED_SLOTS (1u << FREED_BITS)

struct freed {
	uint64_t p, ra; /* the address, and the call that freed it */
	uint32_t block; /* its alloc info + 1, 0 unknown */
};

HOT struct freed *freed_slot(struct lane *L, uint64_t p)
{
	return &L->freed[(p * 0x9E3779B97F4A7C15ull) >> (64 - FREED_BITS)];
}

HOT void remember_free(struct lane *L, uint64_t p, uint64_t ra, uint32_t block)
{
	*freed_slot(L, p) = (struct freed){p, ra, block};
}

/* ---- alloc infos ---- */

/* With several lanes the table is shared: a spin lock, held for a lookup or a copy (the other
 * lanes' threads wait a few dozen instructions at most). */
static void lock_infos(void)
{
	while (atomic_flag_test_and_set_explicit(&m.infos_lock, memory_order_acquire))
		__builtin_ia32_pause();
}

static void unlock_infos(void)
{
	atomic_flag_clear_explicit(&m.infos_lock, memory_order_release);
}

/* The columns of sink for one more record that takes `appends` of their room (an append adds at
 * most CT_VARINT_MAX bytes to a column), or NULL: write it to out (no columns, or no room). The
 * records waiting in out go to the columns first, so the stream keeps its order. */
HOT struct ct_columns *sink_columns(const struct ct_match_sink *sink, size_t appends)
{
	struct ct_columns *c = sink->cols;
	if (!c)
		return NULL;
	if (CT_UNLIKELY(sink->out->len != 0 || c->room < appends) &&
	    (!sink->stage(sink->out) || c->room < appends))
		return NULL;
	c->room -= appends;
	return c;
}

/* The INFO records of every id below upto not written yet, in id order, each after the FRAME
 * records of its stack (*stacks: the stack ids defined so far in that output): a record may only
 * name an id defined before it, and ids are assigned by whichever lane meets a (size, stack) first. */
static void define_infos(const struct ct_match_sink *sink, uint32_t *stacks, uint32_t upto, int columns)
{
	for (; m.infos_defined < upto; m.infos_defined++) {
		if (m.lanes > 1)
			lock_infos();
		uint64_t size = m.infos.sizes[m.infos_defined];
		uint32_t stack = m.infos.stacks[m.infos_defined];
		if (m.lanes > 1)
			unlock_infos();
		if (stack >= *stacks)
			*stacks = sink->define_stacks(stack + 1, sink->arg);
		struct ct_columns *c = columns ? sink_columns(sink, 2) : NULL;
		if (c) /* a program's first allocations define an INFO each: staging out for each cost more */
			ct_col_core2(c, CT_REC_INFO, size, stack);
		else
			ct_rec_info(sink->out, size, stack);
	}
}

/* The id of (size, stack); with one lane, its INFO record is written first if it is not in the
 * output yet (several: ct_match_define_infos). UINT32_MAX when the table is out of memory. */
HOT uint32_t intern_info(struct lane *L, uint32_t hash, uint64_t size, uint32_t stack)
{
	int is_new;
	if (CT_UNLIKELY(m.lanes > 1))
		lock_infos();
	uint32_t id = ct_info_intern_hashed(&m.infos, hash, size, stack, &is_new);
	if (CT_UNLIKELY(m.lanes > 1))
		unlock_infos();
	if (id != UINT32_MAX && id >= m.infos_defined && m.lanes == 1)
		define_infos(&L->sink, &L->stacks, id + 1, 1);
	return id;
}

/* ---- the last ALLOC records, by address ----
 * A free names its block by age (RECENT) when the block's ALLOC record is among the last
 * CT_RECENT_WINDOW. The live table keeps only a block's alloc info (one word a block), so the
 * numbers of the latest ALLOC records are kept here, direct-mapped by address: a collision only
 * turns a RECENT into a FREE. The ALLOC of a block that ends is the last one written at its
 * address (a later one would have needed its free first), except for a block that the allocator
 * handed out again unseen, which live_add ends with a FREE. 256 sets of two, the older of a set's
 * two replaced, 8 KiB: direct-mapped, 256 slots lost one RECENT in eight of the window's blocks to
 * collisions (sqlite3's trace grew by a third), and 2048 (32 KiB) cost the writer 0.6 more L1
 * misses an event than the table in the live slots before it. */

#define RECENT_BITS 8
#define RECENT_SLOTS (2u << RECENT_BITS)

struct recent {
	uint64_t p;
	uint32_t number, info; /* the ALLOC record's number (L->alloc_records after it) and info */
};

/* The set of p: two entries on one half of a cache line. */
HOT struct recent *recent_set(struct lane *L, uint64_t p)
{
	return &L->recent[2 * ((p * 0x9E3779B97F4A7C15ull) >> (64 - RECENT_BITS))];
}

/* ---- the records of blocks: straight into the sink's columns when it has them ---- */

/* The columns for one more record of L's, or NULL: write it to out. */
HOT struct ct_columns *hot(struct lane *L)
{
	return sink_columns(&L->sink, 1);
}

/* The live bytes and their peak of the record tag of info, just written (ALLOC, TEMP, or FREE for a
 * FREE, RECENT or TEMPFREE), in L's figures; the counts are END's (ct_match_figures). One lane only:
 * several would need the infos' lock for the size, and their sum has no order until it is read. */
HOT void count(struct lane *L, unsigned tag, uint32_t info)
{
	if (CT_UNLIKELY(m.lanes != 1))
		return;
	uint64_t size = m.infos.sizes[info], top = L->fig.live_bytes + size;
	if (tag == CT_REC_FREE) {
		L->fig.live_bytes -= size;
		return;
	}
	L->fig.peak = top > L->fig.peak ? top : L->fig.peak; /* a TEMP's block is live at its record */
	if (tag == CT_REC_ALLOC)
		L->fig.live_bytes = top;
}

/* An aggregated trace (match.h): the block's record tag of info is summed, not written. 1 if so. */
HOT int aggregated(unsigned tag, uint32_t info)
{
	if (CT_LIKELY(!m.aggregate))
		return 0;
	m.aggregate(tag, info);
	return 1;
}

/* ALLOC, FREE or TEMP of info. */
HOT void put_event(struct lane *L, unsigned tag, uint32_t info)
{
	if (aggregated(tag, info))
		return;
	struct ct_columns *c = hot(L);
	if (c)
		ct_col_short_event(c, tag, info);
	else
		ct_rec_event(L->sink.out, tag, info);
	count(L, tag, info);
}

/* Writes the ALLOC record of the block of info at p. */
HOT void write_alloc(struct lane *L, uint64_t p, uint32_t info)
{
	if (aggregated(CT_REC_ALLOC, info)) /* no RECENT: no set to keep */
		return;
	put_event(L, CT_REC_ALLOC, info);
	struct recent *set = recent_set(L, p);
	/* p's own entry if it has one, else the older (the window drops it first) */
	int way = set[1].p == p || (set[0].p != p && (int32_t)(set[1].number - set[0].number) < 0);
	set[way] = (struct recent){p, ++L->alloc_records, info};
}

/* Writes the end of the written block of info at p: RECENT when its ALLOC is among the last
 * CT_RECENT_WINDOW, which is most frees (a program frees what it just allocated), else FREE. */
HOT void write_free(struct lane *L, uint64_t p, uint32_t info)
{
	if (aggregated(CT_REC_FREE, info))
		return;
	struct recent *set = recent_set(L, p), *r = &set[set[1].p == p];
	uint32_t age = L->alloc_records - r->number + 1;
	if (r->p != p || r->info != info || age < 1 || age > CT_RECENT_WINDOW) {
		put_event(L, CT_REC_FREE, info);
		return;
	}
	r->p = 0;
	struct ct_columns *c = hot(L);
	if (c)
		ct_col_recent(c, age);
	else
		ct_rec_recent(L->sink.out, age);
	count(L, CT_REC_FREE, info);
}

static void write_tempfree(struct lane *L, uint32_t info)
{
	if (aggregated(CT_REC_TEMPFREE, info))
		return;
	struct ct_columns *c = hot(L);
	if (c)
		ct_col_core1(c, CT_REC_TEMPFREE, info);
	else
		ct_rec_tempfree(L->sink.out, info);
	count(L, CT_REC_FREE, info);
	L->fig.temporary++;
}

/* Each stream's latest allocation ("held") lives only in the stream until the stream's next
 * event decides its fate; the live table holds every other live block. So a temporary
 * allocation never touches the table, and most allocations in a churn are temporaries. */

/* Puts a block into the live table. If its address is there already, the allocator handed it out
 * again, so the old block was freed where ctrack could not see: end it. */
HOT void live_add(struct lane *L, uint64_t p, uint32_t info)
{
	uint32_t old;
	int was = ct_live_add(&L->live, p, info, &old);
	if (CT_LIKELY(was == 0))
		return;
	if (was < 0) {
		L->dropped++; /* its free will be unmatched */
		return;
	}
	put_event(L, CT_REC_FREE, old); /* not RECENT: the last ALLOC at p is the new block's */
	L->frees++;
	L->lost++;
}

HOT void flush_held(struct lane *L, struct ct_match_stream *s)
{
	if (!s->has_held)
		return;
	if (!s->held_written)
		write_alloc(L, s->held_ptr, s->held);
	live_add(L, s->held_ptr, s->held);
	s->has_held = s->held_written = 0;
}

/* The stream, other than s, whose held allocation is p: a block freed by another thread before
 * its own thread did anything else. Rare, so a scan. */
static struct ct_match_stream *held_elsewhere(struct lane *L, const struct ct_match_stream *s, uint64_t p)
{
	for (struct ct_match_stream *o = L->streams; o; o = o->next)
		if (o != s && o->has_held && o->held_ptr == p)
			return o;
	return NULL;
}

/* The block of info at p ends, freed by the call at ra. */
HOT void end_block(struct lane *L, uint64_t p, uint64_t ra, uint32_t info, int temp, int written)
{
	remember_free(L, p, ra, info + 1);
	if (!temp)
		write_free(L, p, info);
	else if (written)
		write_tempfree(L, info);
	else {
		put_event(L, CT_REC_TEMP, info);
		L->fig.temporary++;
	}
	L->frees++;
}

/* The same when the realloc it belongs to completes. */
static void pend_block(struct lane *L, struct ct_match_stream *s, uint64_t p, uint64_t ra, uint32_t info,
                       int temp, int written)
{
	/* Another realloc's start, before the end of the one waiting (signal handlers' reallocs whose
	 * events had to be interleaved): that one's old block ends now, not never. */
	if (s->has_pending)
		end_block(L, s->pending_ptr, s->pending_ra, s->pending, s->pending_temp, s->pending_written);
	s->pending = info;
	s->pending_ptr = p;
	s->pending_ra = ra;
	s->pending_temp = (uint8_t)temp;
	s->pending_written = (uint8_t)written;
	s->has_pending = 1;
}

/* The block of info at p ends, freed by the call at ra: now, or as_pending, when its realloc
 * completes. */
HOT void end_or_pend(struct lane *L, struct ct_match_stream *s, uint64_t p, uint64_t ra, uint32_t info,
                     int temp, int written, int as_pending)
{
	if (as_pending)
		pend_block(L, s, p, ra, info, temp, written);
	else
		end_block(L, p, ra, info, temp, written);
}

/* The realloc that the current event completes has freed its old block. */
static void settle_pending(struct lane *L, struct ct_match_stream *s)
{
	if (!s->has_pending)
		return;
	s->has_pending = 0;
	end_block(L, s->pending_ptr, s->pending_ra, s->pending, s->pending_temp, s->pending_written);
}

/* ---- frees of addresses that are no live block ---- */

/* The stack node of backtrace ips[0 .. n), defined in the output (0: none). */
static uint32_t stack_of(struct lane *L, const uint64_t *ips, int n, int truncated)
{
	uint32_t stack = n > 0 && L->sink.intern ? L->sink.intern(ips, n, truncated, L->sink.arg) : 0;
	if (stack >= L->stacks)
		L->stacks = L->sink.define_stacks(stack + 1, L->sink.arg);
	return stack;
}

/* A call site alone: the frame of return address ra, under the truncated root (the rest of the
 * backtrace was never walked). */
static uint32_t call_site(struct lane *L, uint64_t ra)
{
	return ra ? stack_of(L, &ra, 1, 1) : 0;
}

/* The INVALID record of s's odd free, its call's backtrace at node stack. */
static void write_invalid(struct lane *L, const struct ct_match_stream *s, uint32_t stack)
{
	struct ct_rec_invalid v = {s->odd_kind, s->odd_call, stack, call_site(L, s->odd_freed_ra),
	                           s->odd_block};
	ct_rec_invalid(L->sink.out, &v);
	L->fig.invalid++;
}

/* The stream's odd free is judged: an invalid free at its call site, or a free of a block
 * allocated before tracing (counted, not written). */
static void settle_odd(struct lane *L, struct ct_match_stream *s)
{
	if (!s->has_odd)
		return;
	s->has_odd = 0;
	if (s->odd_kind != CT_INVALID_NOT_ALLOCATED)
		write_invalid(L, s, call_site(L, s->odd_ra));
}

/* free(p) or realloc(p, n) at ra (call), p no live block: counted, and held for judgement. */
static void odd_free(struct lane *L, struct ct_match_stream *s, uint64_t p, uint64_t ra, int call)
{
	int where = L->sink.classify ? L->sink.classify(p, L->sink.arg) : CT_WHERE_HEAP;
	const struct freed *f = freed_slot(L, p);
	int again = f->p == p && !(where & CT_WHERE_UNSURE) && !L->dropped;
	where &= ~CT_WHERE_UNSURE;
	L->unmatched++;
	s->odd_kind = where == CT_WHERE_STATIC  ? CT_INVALID_STATIC
	              : where == CT_WHERE_STACK ? CT_INVALID_STACK
	              : again                   ? CT_INVALID_DOUBLE
	                                        : CT_INVALID_NOT_ALLOCATED;
	s->odd_freed_ra = s->odd_kind == CT_INVALID_DOUBLE ? f->ra : 0;
	s->odd_block = s->odd_kind == CT_INVALID_DOUBLE ? f->block : 0;
	s->odd_ra = ra;
	s->odd_call = (uint8_t)call;
	s->odd_aged = 0;
	s->has_odd = 1;
	remember_free(L, p, ra, s->odd_block); /* freeing it once more is a double free */
}

int ct_match_crash(struct ct_match_stream *s, const uint64_t *ips, int n, int truncated)
{
	if (!s || !s->has_odd)
		return 0;
	for (int i = 0; i < n; i++)
		if ((ips[i] & ~CT_REC_IP_EXACT) == s->odd_ra) {
			struct lane *L = lane_of(s);
			s->has_odd = 0;
			write_invalid(L, s, stack_of(L, ips + i, n - i, truncated));
			return 1;
		}
	return 0;
}

/* ---- events ---- */

/* hash: ct_info_hash(size, stack) */
HOT void on_alloc(struct lane *L, struct ct_match_stream *s, uint64_t p, uint64_t size, uint32_t stack,
                  uint32_t hash)
{
	settle_pending(L, s);
	flush_held(L, s);
	uint32_t info = intern_info(L, hash, size, stack);
	if (info == UINT32_MAX) {
		L->dropped++;
		return;
	}
	s->held_ptr = p;
	s->held = info;
	s->has_held = 1;
	L->allocations++;
	/* read by the writer while this lane runs (ct_match_take_bytes): one store, never torn */
	__atomic_store_n(&L->bytes, L->bytes + size, __ATOMIC_RELAXED);
}

void ct_match_write_held(struct ct_match_stream *s)
{
	struct lane *L = lane_of(s);
	if (s->has_held && !s->held_written) {
		write_alloc(L, s->held_ptr, s->held);
		s->held_written = 1;
	}
	if (CT_UNLIKELY(s->has_odd) && s->odd_aged++)
		settle_odd(L, s);
}

/* free(p), or realloc(p, n) starting (as_pending: its old block ends when the realloc does), by the
 * call at ra. */
HOT void on_free(struct lane *L, struct ct_match_stream *s, uint64_t p, uint64_t ra, int as_pending)
{
	if (s->has_held && s->held_ptr == p) { /* freed by the thread's very next event */
		int written = s->held_written;
		s->has_held = s->held_written = 0;
		end_or_pend(L, s, p, ra, s->held, 1, written, as_pending);
		return;
	}
	flush_held(L, s);
	uint32_t info;
	if (ct_live_take(&L->live, p, &info)) {
		end_or_pend(L, s, p, ra, info, 0, 0, as_pending);
		return;
	}
	struct ct_match_stream *o = held_elsewhere(L, s, p);
	if (!o) { /* allocated before ctrack started, by a path it cannot see, or never */
		odd_free(L, s, p, ra, as_pending ? CT_INVALID_REALLOC : CT_INVALID_FREE);
		return;
	}
	if (!o->held_written)
		write_alloc(L, o->held_ptr, o->held);
	o->has_held = o->held_written = 0;
	end_or_pend(L, s, p, ra, o->held, 0, 0, as_pending);
}

/* The realloc failed: its old block is live again, exactly as before. */
static void on_realloc_failed(struct lane *L, struct ct_match_stream *s, uint64_t p)
{
	if (!s->has_pending)
		return;
	s->has_pending = 0;
	if (!s->pending_temp) {
		live_add(L, p, s->pending);
		return;
	}
	flush_held(L, s);
	s->held_ptr = p;
	s->held = s->pending;
	s->held_written = s->pending_written;
	s->has_held = 1;
}

/* An event on another lane's address, as this lane's stream of the same ring sees it: the thread
 * went on, so its held block was not freed by its next event (into the table), a realloc waiting
 * for its new block's ALLOC is complete, and an odd free is judged; a realloc's start, failure or
 * end of zero size concern that other lane's block. */
static void pass_by(struct lane *L, struct ct_match_stream *s, unsigned kind)
{
	if (CT_UNLIKELY(s->has_odd))
		settle_odd(L, s);
	if (kind == CT_EV_ALLOC)
		settle_pending(L, s);
	if (kind == CT_EV_ALLOC || kind == CT_EV_FREE || kind == CT_EV_RBEGIN)
		flush_held(L, s);
}

/* ct_match_event, with the ALLOC's info hash computed before (hint) or not (NULL). */
HOT int match_event(struct ct_match_stream *s, const uint64_t *ev, const struct ct_match_hint *hint,
                    int ordered)
{
	struct lane *L = lane_of(s);
	uint64_t p = CT_EV_PTR(ev[0]);
	unsigned kind = CT_EV_KIND(ev[0]);
	uint32_t bucket = ct_seq_bucket(p);
	if (L->expect && kind != CT_EV_RFREE) { /* one lane orders its events itself */
		uint32_t *next = &L->expect[bucket];
		int32_t ahead = (int32_t)(ct_event_seq(ev) - *next);
		if (ordered && ahead > 0)
			return CT_MATCH_BLOCKED;
		if (ahead >= 0) /* behind: a number skipped after a stall finally came; apply as is */
			*next = ct_event_seq(ev) + 1;
	}
	if (CT_UNLIKELY((bucket & L->mask) != L->index)) {
		pass_by(L, s, kind);
		return CT_MATCH_PASSED;
	}
	if (CT_UNLIKELY(s->has_odd)) /* the thread went on after its odd free */
		settle_odd(L, s);
	if (CT_UNLIKELY(ev[0] & CT_EV_GAP)) /* events sampling left out came first: held is no temporary */
		flush_held(L, s);
	switch (kind) {
	case CT_EV_ALLOC:
		on_alloc(L, s, p, ev[1], (uint32_t)ev[2],
		         hint ? hint->info_hash : ct_info_hash(ev[1], (uint32_t)ev[2]));
		break;
	case CT_EV_FREE:
		on_free(L, s, p, ev[2], 0);
		break;
	case CT_EV_RBEGIN:
		on_free(L, s, p, ev[2], 1);
		break;
	case CT_EV_RFAIL:
		on_realloc_failed(L, s, p);
		break;
	case CT_EV_RFREE:
		settle_pending(L, s);
		break;
	}
	return CT_MATCH_DONE;
}

int ct_match_event(struct ct_match_stream *s, const uint64_t *ev, int ordered)
{
	return match_event(s, ev, NULL, ordered);
}

int ct_match_event_hinted(struct ct_match_stream *s, const uint64_t *ev, const struct ct_match_hint *hint,
                          int ordered)
{
	return match_event(s, ev, hint, ordered);
}

int ct_match_turn(const uint64_t *ev, int ordered)
{
	if (CT_EV_KIND(ev[0]) == CT_EV_RFREE)
		return CT_MATCH_DONE;
	uint32_t *next = &m.expect[ct_seq_bucket(CT_EV_PTR(ev[0]))];
	int32_t ahead = (int32_t)(ct_event_seq(ev) - *next);
	if (ordered && ahead > 0)
		return CT_MATCH_BLOCKED;
	if (ahead >= 0) /* behind: a number skipped after a stall finally came; apply as is */
		*next = ct_event_seq(ev) + 1;
	return CT_MATCH_DONE;
}

/* A table larger than this is loaded ahead (ct_match_prefetching): a quarter of a core's L2, which
 * the writer's other tables (the sequence numbers, the recently freed) and zstd's share. The event-
 * dense shapes of issue 25 show both sides: their 8,200 alloc infos in 512 KiB of slots are worth it
 * (the writer's perf samples 2-30% fewer, the busier the machine the more), their live table of 4,096
 * blocks in 82 KiB is not (8 instructions an event for no time gained; docs/benchmarks.md, "The
 * writer, part two"). */
#define PREFETCH_FROM_BYTES (256u << 10)

unsigned ct_match_prefetching(const struct ct_match_stream *s)
{
	return (ct_live_bytes(&lane_of(s)->live) > PREFETCH_FROM_BYTES ? CT_PREFETCH_LIVE : 0) |
	       (m.infos.cap * sizeof(*m.infos.slots) > PREFETCH_FROM_BYTES ? CT_PREFETCH_INFO : 0);
}

void ct_match_prefetch(const struct ct_match_stream *s, const uint64_t *ev, unsigned tables,
                       struct ct_match_hint *hint)
{
	unsigned kind = CT_EV_KIND(ev[0]);
	if (kind == CT_EV_ALLOC) {
		hint->info_hash = ct_info_hash(ev[1], (uint32_t)ev[2]);
		if (tables & CT_PREFETCH_INFO)
			ct_info_prefetch(&m.infos, hint->info_hash);
	}
	if ((tables & CT_PREFETCH_LIVE) && kind != CT_EV_RFREE)
		ct_live_prefetch(&lane_of(s)->live, CT_EV_PTR(ev[0]));
}

void ct_match_settle(struct ct_match_stream *s)
{
	struct lane *L = lane_of(s);
	flush_held(L, s);
	settle_pending(L, s);
	settle_odd(L, s);
}

void ct_match_settle_all(void)
{
	for (uint32_t i = 0; i < m.lanes; i++)
		for (struct ct_match_stream *s = m.lane[i].streams; s; s = s->next)
			ct_match_settle(s);
}

/* ---- batches of the other lanes ---- */

void ct_match_define_infos(const struct ct_match_sink *to)
{
	if (m.lanes > 1)
		lock_infos();
	uint32_t n = m.infos.count;
	if (m.lanes > 1)
		unlock_infos();
	define_infos(to, &m.def_stacks, n, 0);
}

/* ---- set-up and totals ---- */

void ct_match_stream_add(struct ct_match_stream *s, unsigned lane)
{
	struct lane *L = &m.lane[lane];
	s->lane_state = L;
	s->next = L->streams;
	L->streams = s;
}

#define EXPECT_BYTES (CT_SEQ_BUCKETS * sizeof(uint32_t))

static void release_lane(struct lane *L)
{
	ct_live_release(&L->live);
	ct_arena_unmap(L->expect, EXPECT_BYTES);
	L->expect = NULL;
	ct_arena_unmap(L->freed, FREED_SLOTS * sizeof(*L->freed));
	L->freed = NULL;
	ct_arena_unmap(L->recent, RECENT_SLOTS * sizeof(*L->recent));
	L->recent = NULL;
}

/* The expectations start from the counters as they stand. The first reset comes before any event is
 * numbered (the hooks report nothing until the writer has started), so the fresh table's zeros are
 * the counters: copying them would cost 128 page faults while the program waits to start. A forked
 * child, or a trace opened again, starts where the counters are: numbers taken before are not its. */
static void expect_from_counters(uint32_t *expect)
{
	for (uint32_t b = 0; expect && m.numbered && b < CT_SEQ_BUCKETS; b++)
		expect[b] = atomic_load_explicit(&ct_seq[b], memory_order_relaxed);
}

static int reset_lane(struct lane *L, const struct ct_match_sink *sink)
{
	L->sink = *sink;
	ct_live_release(&L->live);
	if (!L->expect && L->index == 0 && m.lanes == 1)
		L->expect = ct_arena_map(EXPECT_BYTES);
	/* Fresh zero pages: what a parent freed before a fork is not the child's to judge. */
	ct_arena_unmap(L->freed, FREED_SLOTS * sizeof(*L->freed));
	L->freed = ct_arena_map(FREED_SLOTS * sizeof(*L->freed));
	ct_arena_unmap(L->recent, RECENT_SLOTS * sizeof(*L->recent));
	L->recent = ct_arena_map(RECENT_SLOTS * sizeof(*L->recent));
	if ((L->index == 0 && m.lanes == 1 && !L->expect) || !L->freed || !L->recent ||
	    ct_live_init(&L->live, (1u << 12) >> m.shift) < 0)
		return -ENOMEM;
	expect_from_counters(L->expect);
	for (struct ct_match_stream *s = L->streams; s; s = s->next) {
		struct ct_match_stream *next = s->next;
		*s = (struct ct_match_stream){.next = next, .lane_state = s->lane_state};
	}
	L->stacks = CT_STACK_FIRST;
	L->alloc_records = 0;
	L->allocations = L->frees = L->bytes = L->unmatched = L->lost = L->dropped = 0;
	L->fig = (struct ct_match_figures){0};
	return 0;
}

int ct_match_reset(const struct ct_match_sink *sinks, unsigned lanes)
{
	if (lanes < 1 || lanes > CT_MATCH_LANES_MAX || (lanes & (lanes - 1)))
		return -EINVAL;
	if (lanes != m.lanes) {
		for (uint32_t i = 0; i < m.lanes; i++)
			release_lane(&m.lane[i]);
		m.lanes = lanes;
		m.shift = (uint32_t)__builtin_ctz(lanes);
	}
	if (lanes > 1 && !m.expect && !(m.expect = ct_arena_map(EXPECT_BYTES)))
		return -ENOMEM;
	expect_from_counters(lanes > 1 ? m.expect : NULL);
	ct_info_release(&m.infos);
	m.infos_defined = 0;
	m.def_stacks = CT_STACK_FIRST;
	m.bytes_taken = 0;
	atomic_flag_clear(&m.infos_lock); /* a child forked while a lane held it */
	if (ct_info_init(&m.infos, 1u << 14) < 0)
		return -ENOMEM;
	for (uint32_t i = 0; i < lanes; i++) {
		m.lane[i].index = i;
		m.lane[i].mask = lanes - 1;
		if (reset_lane(&m.lane[i], &sinks[i]) < 0)
			return -ENOMEM;
	}
	m.numbered = 1;
	return 0;
}

void ct_match_release(void)
{
	for (uint32_t i = 0; i < m.lanes; i++)
		release_lane(&m.lane[i]);
	ct_info_release(&m.infos);
	ct_arena_unmap(m.expect, EXPECT_BYTES);
	m.expect = NULL;
}

size_t ct_match_bytes(void)
{
	size_t n = m.infos.cap * sizeof(*m.infos.slots) + m.infos.cap / 2 * sizeof(*m.infos.sizes) +
	           (m.expect ? EXPECT_BYTES : 0);
	for (uint32_t i = 0; i < m.lanes; i++) {
		const struct lane *L = &m.lane[i];
		n += ct_live_bytes(&L->live) + (L->expect ? EXPECT_BYTES : 0) +
		     (L->freed ? FREED_SLOTS * sizeof(*L->freed) : 0) +
		     (L->recent ? RECENT_SLOTS * sizeof(*L->recent) : 0);
	}
	return n;
}

void ct_match_totals(struct ct_rec_end *e)
{
	e->allocations = e->frees = e->bytes_allocated = e->unmatched_frees = e->lost_allocations = 0;
	for (uint32_t i = 0; i < m.lanes; i++) {
		const struct lane *L = &m.lane[i];
		e->allocations += L->allocations;
		e->frees += L->frees;
		e->bytes_allocated += L->bytes;
		e->unmatched_frees += L->unmatched;
		e->lost_allocations += L->lost;
	}
}

void ct_match_figures(struct ct_match_figures *f)
{
	const struct lane *L = &m.lane[0];
	*f = L->fig;
	f->allocations = L->allocations, f->frees = L->frees, f->bytes = L->bytes;
	f->live_blocks = L->allocations - L->frees;
	f->valid = m.lanes == 1 && !m.aggregate && !L->dropped;
}

uint64_t ct_match_take_bytes(void)
{
	uint64_t b = 0;
	for (uint32_t i = 0; i < m.lanes; i++)
		b += __atomic_load_n(&m.lane[i].bytes, __ATOMIC_RELAXED);
	uint64_t since = b - m.bytes_taken;
	m.bytes_taken = b;
	return since;
}

uint64_t ct_match_dropped(void)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < m.lanes; i++)
		n += m.lane[i].dropped;
	return n;
}

struct visit {
	void (*fn)(uint64_t p, uint64_t size, uint32_t info, void *arg);
	void *arg;
};

static void visit_block(uint64_t p, uint32_t info, void *arg)
{
	const struct visit *v = arg;
	v->fn(p, m.infos.sizes[info], info, v->arg);
}

size_t ct_match_live(void (*fn)(uint64_t p, uint64_t size, uint32_t info, void *arg), void *arg)
{
	struct visit v = {fn, arg};
	size_t n = 0;
	for (uint32_t i = 0; i < m.lanes; i++)
		n += (size_t)ct_live_each(&m.lane[i].live, visit_block, &v);
	return n;
}

size_t ct_match_live_count(void)
{
	size_t n = 0;
	for (uint32_t i = 0; i < m.lanes; i++)
		n += (size_t)m.lane[i].live.count;
	return n;
}

uint32_t ct_match_infos(void)
{
	return m.infos.count;
}

uint64_t ct_match_info_size(uint32_t id)
{
	return m.infos.sizes[id];
}

void ct_match_aggregate(void (*fn)(unsigned tag, uint32_t info))
{
	m.aggregate = fn;
}
