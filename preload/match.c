/* SPDX-License-Identifier: MIT */
/* Matching frees to allocations (see match.h): per-stream held and pending blocks, the live table,
 * alloc info interning, sequence order across streams, the recently freed addresses and the
 * verdict on frees of other addresses, the totals. One thread at a time, no locks, no malloc. */
#include <errno.h>
#include <stdatomic.h>

#include "arena.h"
#include "event.h"
#include "maps.h"
#include "match.h"

#define HOT static inline __attribute__((always_inline)) /* on every event's path */

static struct {
	struct ct_match_sink sink;
	struct ct_live_map live;
	struct ct_info_map infos;
	uint32_t *expect;       /* per sequence bucket: the number of the next event to apply */
	struct freed *freed;    /* recently freed addresses (FREED_SLOTS) */
	struct recent *recent;  /* the last ALLOC records by address (RECENT_SLOTS) */
	int numbered;           /* events may have taken numbers: a reset was done before */
	uint32_t stacks;        /* stack node ids below this are defined in the output */
	uint32_t alloc_records; /* ALLOC records written so far (mod 2^32), to name blocks by age */
	uint64_t allocations, frees, bytes, unmatched, lost, dropped, bytes_since_taken;
	struct ct_match_stream *streams;
} m;

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

HOT struct freed *freed_slot(uint64_t p)
{
	return &m.freed[(p * 0x9E3779B97F4A7C15ull) >> (64 - FREED_BITS)];
}

HOT void remember_free(uint64_t p, uint64_t ra, uint32_t block)
{
	*freed_slot(p) = (struct freed){p, ra, block};
}

/* ---- alloc infos ---- */

/* The id of (size, stack); a new pair is written as an INFO record first (after its frames).
 * UINT32_MAX when the table is out of memory. */
HOT uint32_t intern_info(uint64_t size, uint32_t stack)
{
	int is_new;
	uint32_t id = ct_info_intern(&m.infos, size, stack, &is_new);
	if (!is_new || id == UINT32_MAX)
		return id;
	if (stack >= m.stacks)
		m.stacks = m.sink.define_stacks(stack + 1, m.sink.arg);
	ct_rec_info(m.sink.out, size, stack);
	return id;
}

/* ---- the last ALLOC records, by address ----
 * A free names its block by age (RECENT) when the block's ALLOC record is among the last
 * CT_RECENT_WINDOW. The live table keeps only a block's alloc info (one word a block), so the
 * numbers of the latest ALLOC records are kept here, direct-mapped by address: a collision only
 * turns a RECENT into a FREE. The ALLOC of a block that ends is the last one written at its
 * address (a later one would have needed its free first), except for a block that the allocator
 * handed out again unseen, which live_add ends with a FREE. 2048 slots, 32 KiB: with 256, one free
 * in eight of the window's blocks lost its RECENT to a collision, and sqlite3's trace grew by a
 * third. */

#define RECENT_BITS 11
#define RECENT_SLOTS (1u << RECENT_BITS)

struct recent {
	uint64_t p;
	uint32_t number, info; /* the ALLOC record's number (m.alloc_records after it) and info */
};

HOT struct recent *recent_slot(uint64_t p)
{
	return &m.recent[(p * 0x9E3779B97F4A7C15ull) >> (64 - RECENT_BITS)];
}

/* ---- the records of blocks: straight into the sink's columns when it has them ---- */

/* The columns for one more record, or NULL: write it to out (no columns, or no room). The records
 * waiting in out go to the columns first, so the stream keeps its order. */
HOT struct ct_columns *hot(void)
{
	struct ct_columns *c = m.sink.cols;
	if (!c)
		return NULL;
	if (CT_UNLIKELY(m.sink.out->len != 0 || c->room == 0) && !m.sink.stage(m.sink.out))
		return NULL;
	c->room--;
	return c;
}

/* ALLOC, FREE or TEMP of info. */
HOT void put_event(unsigned tag, uint32_t info)
{
	struct ct_columns *c = hot();
	if (c)
		ct_col_short_event(c, tag, info);
	else
		ct_rec_event(m.sink.out, tag, info);
}

/* Writes the ALLOC record of the block of info at p. */
HOT void write_alloc(uint64_t p, uint32_t info)
{
	put_event(CT_REC_ALLOC, info);
	*recent_slot(p) = (struct recent){p, ++m.alloc_records, info};
}

/* Writes the end of the written block of info at p: RECENT when its ALLOC is among the last
 * CT_RECENT_WINDOW, which is most frees (a program frees what it just allocated), else FREE. */
HOT void write_free(uint64_t p, uint32_t info)
{
	struct recent *r = recent_slot(p);
	uint32_t age = m.alloc_records - r->number + 1;
	if (r->p != p || r->info != info || age < 1 || age > CT_RECENT_WINDOW) {
		put_event(CT_REC_FREE, info);
		return;
	}
	r->p = 0;
	struct ct_columns *c = hot();
	if (c)
		ct_col_recent(c, age);
	else
		ct_rec_recent(m.sink.out, age);
}

static void write_tempfree(uint32_t info)
{
	struct ct_columns *c = hot();
	if (c)
		ct_col_core1(c, CT_REC_TEMPFREE, info);
	else
		ct_rec_tempfree(m.sink.out, info);
}

/* Each stream's latest allocation ("held") lives only in the stream until the stream's next
 * event decides its fate; the live table holds every other live block. So a temporary
 * allocation never touches the table, and most allocations in a churn are temporaries. */

/* Puts a block into the live table. If its address is there already, the allocator handed it out
 * again, so the old block was freed where ctrack could not see: end it. */
HOT void live_add(uint64_t p, uint32_t info)
{
	uint32_t old;
	int was = ct_live_add(&m.live, p, info, &old);
	if (CT_LIKELY(was == 0))
		return;
	if (was < 0) {
		m.dropped++; /* its free will be unmatched */
		return;
	}
	put_event(CT_REC_FREE, old); /* not RECENT: the last ALLOC at p is the new block's */
	m.frees++;
	m.lost++;
}

HOT void flush_held(struct ct_match_stream *s)
{
	if (!s->has_held)
		return;
	if (!s->held_written)
		write_alloc(s->held_ptr, s->held);
	live_add(s->held_ptr, s->held);
	s->has_held = s->held_written = 0;
}

/* The stream, other than s, whose held allocation is p: a block freed by another thread before
 * its own thread did anything else. Rare, so a scan. */
static struct ct_match_stream *held_elsewhere(const struct ct_match_stream *s, uint64_t p)
{
	for (struct ct_match_stream *o = m.streams; o; o = o->next)
		if (o != s && o->has_held && o->held_ptr == p)
			return o;
	return NULL;
}

/* The block of info at p ends, freed by the call at ra. */
HOT void end_block(uint64_t p, uint64_t ra, uint32_t info, int temp, int written)
{
	remember_free(p, ra, info + 1);
	if (!temp)
		write_free(p, info);
	else if (written)
		write_tempfree(info);
	else
		put_event(CT_REC_TEMP, info);
	m.frees++;
}

/* The same when the realloc it belongs to completes. */
static void pend_block(struct ct_match_stream *s, uint64_t p, uint64_t ra, uint32_t info, int temp,
                       int written)
{
	/* Another realloc's start, before the end of the one waiting (signal handlers' reallocs whose
	 * events had to be interleaved): that one's old block ends now, not never. */
	if (s->has_pending)
		end_block(s->pending_ptr, s->pending_ra, s->pending, s->pending_temp, s->pending_written);
	s->pending = info;
	s->pending_ptr = p;
	s->pending_ra = ra;
	s->pending_temp = (uint8_t)temp;
	s->pending_written = (uint8_t)written;
	s->has_pending = 1;
}

/* The block of info at p ends, freed by the call at ra: now, or as_pending, when its realloc
 * completes. */
HOT void end_or_pend(struct ct_match_stream *s, uint64_t p, uint64_t ra, uint32_t info, int temp, int written,
                     int as_pending)
{
	if (as_pending)
		pend_block(s, p, ra, info, temp, written);
	else
		end_block(p, ra, info, temp, written);
}

/* The realloc that the current event completes has freed its old block. */
static void settle_pending(struct ct_match_stream *s)
{
	if (!s->has_pending)
		return;
	s->has_pending = 0;
	end_block(s->pending_ptr, s->pending_ra, s->pending, s->pending_temp, s->pending_written);
}

/* ---- frees of addresses that are no live block ---- */

/* The stack node of backtrace ips[0 .. n), defined in the output (0: none). */
static uint32_t stack_of(const uint64_t *ips, int n, int truncated)
{
	uint32_t stack = n > 0 && m.sink.intern ? m.sink.intern(ips, n, truncated, m.sink.arg) : 0;
	if (stack >= m.stacks)
		m.stacks = m.sink.define_stacks(stack + 1, m.sink.arg);
	return stack;
}

/* A call site alone: the frame of return address ra, under the truncated root (the rest of the
 * backtrace was never walked). */
static uint32_t call_site(uint64_t ra)
{
	return ra ? stack_of(&ra, 1, 1) : 0;
}

/* The INVALID record of s's odd free, its call's backtrace at node stack. */
static void write_invalid(const struct ct_match_stream *s, uint32_t stack)
{
	struct ct_rec_invalid v = {s->odd_kind, s->odd_call, stack, call_site(s->odd_freed_ra), s->odd_block};
	ct_rec_invalid(m.sink.out, &v);
}

/* The stream's odd free is judged: an invalid free at its call site, or a free of a block
 * allocated before tracing (counted, not written). */
static void settle_odd(struct ct_match_stream *s)
{
	if (!s->has_odd)
		return;
	s->has_odd = 0;
	if (s->odd_kind != CT_INVALID_NOT_ALLOCATED)
		write_invalid(s, call_site(s->odd_ra));
}

/* free(p) or realloc(p, n) at ra (call), p no live block: counted, and held for judgement. */
static void odd_free(struct ct_match_stream *s, uint64_t p, uint64_t ra, int call)
{
	int where = m.sink.classify ? m.sink.classify(p, m.sink.arg) : CT_WHERE_HEAP;
	const struct freed *f = freed_slot(p);
	int again = f->p == p && !(where & CT_WHERE_UNSURE) && !m.dropped;
	where &= ~CT_WHERE_UNSURE;
	m.unmatched++;
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
	remember_free(p, ra, s->odd_block); /* freeing it once more is a double free */
}

int ct_match_crash(struct ct_match_stream *s, const uint64_t *ips, int n, int truncated)
{
	if (!s || !s->has_odd)
		return 0;
	for (int i = 0; i < n; i++)
		if ((ips[i] & ~CT_REC_IP_EXACT) == s->odd_ra) {
			s->has_odd = 0;
			write_invalid(s, stack_of(ips + i, n - i, truncated));
			return 1;
		}
	return 0;
}

/* ---- events ---- */

HOT void on_alloc(struct ct_match_stream *s, uint64_t p, uint64_t size, uint32_t stack)
{
	settle_pending(s);
	flush_held(s);
	uint32_t info = intern_info(size, stack);
	if (info == UINT32_MAX) {
		m.dropped++;
		return;
	}
	s->held_ptr = p;
	s->held = info;
	s->has_held = 1;
	m.allocations++;
	m.bytes += size;
	m.bytes_since_taken += size;
}

void ct_match_write_held(struct ct_match_stream *s)
{
	if (s->has_held && !s->held_written) {
		write_alloc(s->held_ptr, s->held);
		s->held_written = 1;
	}
	if (CT_UNLIKELY(s->has_odd) && s->odd_aged++)
		settle_odd(s);
}

/* free(p), or realloc(p, n) starting (as_pending: its old block ends when the realloc does), by the
 * call at ra. */
HOT void on_free(struct ct_match_stream *s, uint64_t p, uint64_t ra, int as_pending)
{
	if (s->has_held && s->held_ptr == p) { /* freed by the thread's very next event */
		int written = s->held_written;
		s->has_held = s->held_written = 0;
		end_or_pend(s, p, ra, s->held, 1, written, as_pending);
		return;
	}
	flush_held(s);
	uint32_t info;
	if (ct_live_take(&m.live, p, &info)) {
		end_or_pend(s, p, ra, info, 0, 0, as_pending);
		return;
	}
	struct ct_match_stream *o = held_elsewhere(s, p);
	if (!o) { /* allocated before ctrack started, by a path it cannot see, or never */
		odd_free(s, p, ra, as_pending ? CT_INVALID_REALLOC : CT_INVALID_FREE);
		return;
	}
	if (!o->held_written)
		write_alloc(o->held_ptr, o->held);
	o->has_held = o->held_written = 0;
	end_or_pend(s, p, ra, o->held, 0, 0, as_pending);
}

/* The realloc failed: its old block is live again, exactly as before. */
static void on_realloc_failed(struct ct_match_stream *s, uint64_t p)
{
	if (!s->has_pending)
		return;
	s->has_pending = 0;
	if (!s->pending_temp) {
		live_add(p, s->pending);
		return;
	}
	flush_held(s);
	s->held_ptr = p;
	s->held = s->pending;
	s->held_written = s->pending_written;
	s->has_held = 1;
}

int ct_match_event(struct ct_match_stream *s, const uint64_t *ev, int ordered)
{
	uint64_t p = CT_EV_PTR(ev[0]);
	unsigned kind = CT_EV_KIND(ev[0]);
	if (kind != CT_EV_RFREE) {
		uint32_t *next = &m.expect[ct_seq_bucket(p)];
		int32_t ahead = (int32_t)(ct_event_seq(ev) - *next);
		if (ordered && ahead > 0)
			return CT_MATCH_BLOCKED;
		if (ahead >= 0) /* behind: a number skipped after a stall finally came; apply as is */
			*next = ct_event_seq(ev) + 1;
	}
	if (CT_UNLIKELY(s->has_odd)) /* the thread went on after its odd free */
		settle_odd(s);
	switch (kind) {
	case CT_EV_ALLOC:
		on_alloc(s, p, ev[1], (uint32_t)ev[2]);
		break;
	case CT_EV_FREE:
		on_free(s, p, ev[2], 0);
		break;
	case CT_EV_RBEGIN:
		on_free(s, p, ev[2], 1);
		break;
	case CT_EV_RFAIL:
		on_realloc_failed(s, p);
		break;
	case CT_EV_RFREE:
		settle_pending(s);
		break;
	}
	return CT_MATCH_DONE;
}

/* Tables larger than this are loaded ahead (ct_match_prefetching): about half of a core's L2. */
#define PREFETCH_FROM_BYTES (512u << 10)

int ct_match_prefetching(void)
{
	return ct_live_bytes(&m.live) + m.infos.cap * sizeof(*m.infos.slots) > PREFETCH_FROM_BYTES;
}

void ct_match_prefetch(const uint64_t *ev)
{
	unsigned kind = CT_EV_KIND(ev[0]);
	if (kind == CT_EV_ALLOC)
		ct_info_prefetch(&m.infos, ev[1], (uint32_t)ev[2]);
	if (kind != CT_EV_RFREE)
		ct_live_prefetch(&m.live, CT_EV_PTR(ev[0]));
}

void ct_match_settle(struct ct_match_stream *s)
{
	flush_held(s);
	settle_pending(s);
	settle_odd(s);
}

void ct_match_settle_all(void)
{
	for (struct ct_match_stream *s = m.streams; s; s = s->next)
		ct_match_settle(s);
}

/* ---- set-up and totals ---- */

void ct_match_stream_add(struct ct_match_stream *s)
{
	s->next = m.streams;
	m.streams = s;
}

int ct_match_reset(const struct ct_match_sink *sink)
{
	m.sink = *sink;
	ct_live_release(&m.live);
	ct_info_release(&m.infos);
	if (!m.expect)
		m.expect = ct_arena_map(CT_SEQ_BUCKETS * sizeof(*m.expect));
	/* Fresh zero pages: what a parent freed before a fork is not the child's to judge. */
	ct_arena_unmap(m.freed, FREED_SLOTS * sizeof(*m.freed));
	m.freed = ct_arena_map(FREED_SLOTS * sizeof(*m.freed));
	ct_arena_unmap(m.recent, RECENT_SLOTS * sizeof(*m.recent));
	m.recent = ct_arena_map(RECENT_SLOTS * sizeof(*m.recent));
	if (!m.expect || !m.freed || !m.recent || ct_info_init(&m.infos, 1u << 14) < 0 ||
	    ct_live_init(&m.live, 1u << 12) < 0)
		return -ENOMEM;
	/* The first reset comes before any event is numbered (the hooks report nothing until the
	 * writer has started), so the fresh table's zeros are the counters: copying them would cost
	 * 128 page faults while the program waits to start. A forked child, or a trace opened again,
	 * starts where the counters are: numbers taken before are not its. */
	for (uint32_t b = 0; m.numbered && b < CT_SEQ_BUCKETS; b++)
		m.expect[b] = atomic_load_explicit(&ct_seq[b], memory_order_relaxed);
	m.numbered = 1;
	for (struct ct_match_stream *s = m.streams; s; s = s->next) {
		struct ct_match_stream *next = s->next;
		*s = (struct ct_match_stream){.next = next};
	}
	m.stacks = CT_STACK_FIRST;
	m.alloc_records = 0;
	m.allocations = m.frees = m.bytes = m.unmatched = m.lost = m.dropped = m.bytes_since_taken = 0;
	return 0;
}

void ct_match_release(void)
{
	ct_live_release(&m.live);
	ct_info_release(&m.infos);
	ct_arena_unmap(m.expect, CT_SEQ_BUCKETS * sizeof(*m.expect));
	m.expect = NULL;
	ct_arena_unmap(m.freed, FREED_SLOTS * sizeof(*m.freed));
	m.freed = NULL;
	ct_arena_unmap(m.recent, RECENT_SLOTS * sizeof(*m.recent));
	m.recent = NULL;
}

size_t ct_match_bytes(void)
{
	return ct_live_bytes(&m.live) + m.infos.cap * sizeof(*m.infos.slots) +
	       m.infos.cap / 2 * sizeof(*m.infos.sizes) +
	       (m.expect ? CT_SEQ_BUCKETS * sizeof(*m.expect) : 0) +
	       (m.freed ? FREED_SLOTS * sizeof(*m.freed) : 0) +
	       (m.recent ? RECENT_SLOTS * sizeof(*m.recent) : 0);
}

void ct_match_totals(struct ct_rec_end *e)
{
	e->allocations = m.allocations;
	e->frees = m.frees;
	e->bytes_allocated = m.bytes;
	e->unmatched_frees = m.unmatched;
	e->lost_allocations = m.lost;
}

uint64_t ct_match_take_bytes(void)
{
	uint64_t b = m.bytes_since_taken;
	m.bytes_since_taken = 0;
	return b;
}

uint64_t ct_match_dropped(void)
{
	return m.dropped;
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
	return (size_t)ct_live_each(&m.live, visit_block, &v);
}

size_t ct_match_live_count(void)
{
	return (size_t)m.live.count;
}

uint32_t ct_match_infos(void)
{
	return m.infos.count;
}
