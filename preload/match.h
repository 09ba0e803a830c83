/* SPDX-License-Identifier: MIT */
/* Matching frees to allocations: turns each thread's stream of address events into the records of
 * format.h that name no address (ALLOC, FREE, TEMP, TEMPFREE, RECENT, INFO), with the totals of END.
 *
 * Contract. One thread applies a lane's events (the writer, or the late path under its lock); no
 * locks here but the alloc infos' with several lanes, no malloc (tables come from the arena), records go to
 * the sink's buffer. Events of one stream are applied in the order the thread published them; events on one
 * address, across streams, in the order of their sequence numbers (shim.h): with one lane,
 * ct_match_event() refuses an event that comes before its turn (CT_MATCH_BLOCKED) so the caller can
 * apply other streams first; with several, the orderer asks ct_match_turn() and the lanes are given
 * the events in its order, and never refuse one.
 *
 * A block's fate is decided late: a stream's latest allocation is "held" outside the live table
 * until the stream's next event, so an allocation freed by the very next event of its thread is
 * one TEMP record and never touches the table (heaptrack's temporary allocation). A free of a
 * block among the last CT_RECENT_WINDOW ALLOC records is written as RECENT (its age).
 *
 * A free of an address that is no live block is counted (END's unmatched_frees) and judged: a double
 * free when the address is among the recently freed (a bounded table) and nothing was allocated
 * there since, a free of a global's or the stack's address (where the sink says it lies), or else a
 * free of a block allocated before tracing, unless the program dies in that call (ct_match_crash).
 * The verdict waits for the stream's next event, which the program would not reach if the allocator
 * refused the free; invalid frees are INVALID records, at their call site (the event's return
 * address) or with the crash's backtrace.
 *
 * Lanes. The addresses are split between 1, 2, 4 or 8 lanes by sequence bucket (ct_seq_bucket,
 * modulo the lanes); each lane has its own live table, recently freed addresses, RECENT numbering,
 * totals and sink, so a block's records are all in its lane's output, in the allocator's order;
 * the orderer (ct_match_turn) alone keeps the sequence expectations, of every address, and so
 * decides the order of all events. The alloc info ids are one space for all, behind a lock when
 * there are several lanes, and the orderer writes all their INFO records (ct_match_define_infos).
 * Lanes run on threads of their own (lanes.c). Each lane has a stream per thread and is given every
 * event of it, in the orderer's order: an event on another lane's address only does the stream's bookkeeping
 * (the held block goes to the table, a waiting realloc completes, an odd free is judged), so every
 * lane's records are, event by event, those one lane would write for its addresses, and merged by
 * event (epoch.h) they are one lane's records. */
#ifndef CTRACK_MATCH_H
#define CTRACK_MATCH_H

#include <stdint.h>

#include "ctrack/columns.h"
#include "ctrack/record.h"

/* One thread's event stream as the matcher sees it. Zeroed before first use (ct_match_stream_add);
 * owned by the caller, which keeps it for as long as the matcher runs. */
struct ct_match_stream {
	uint64_t held_ptr; /* last allocation, not yet in the live table: it may turn out temporary */
	uint64_t pending_ptr, pending_ra; /* block a realloc is replacing, while it runs; its call site */
	uint32_t held, pending;           /* their alloc infos */
	/* The last free of an address that was no live block ("odd"), judged at the next event: its
	 * call site, the call site that freed the address before and the block's alloc info + 1 (a
	 * double free), the INVALID kind (CT_INVALID_NOT_ALLOCATED: maybe a block allocated before
	 * tracing) and call, and whether a flush has seen it (ct_match_write_held). */
	uint64_t odd_ra, odd_freed_ra;
	uint32_t odd_block;
	uint8_t has_odd, odd_kind, odd_call, odd_aged;
	uint8_t has_held, has_pending, pending_temp;
	uint8_t held_written, pending_written; /* its ALLOC is already in the file (see TEMPFREE) */
	void *lane_state;                      /* its lane's (ct_match_stream_add) */
	struct ct_match_stream *next;          /* all streams, for frees of another stream's held block */
};

/* Where an address that is no live block lies (the sink's classify): maybe a heap block allocated
 * before tracing, in a loaded object (a global, a constant) or in the main thread's stack; with
 * CT_WHERE_UNSURE when allocations may have gone unseen (events were dropped), so that an address
 * freed before is no proof of a double free. */
enum { CT_WHERE_HEAP, CT_WHERE_STATIC, CT_WHERE_STACK };
#define CT_WHERE_UNSURE 0x100

/* Where records go. define_stacks(upto, arg) must write the FRAME records of every stack node id
 * below upto (an INFO record names its stack, which must be defined first) and returns how many
 * ids are defined now (at least upto). intern(ips, n, truncated, arg) gives the stack node id of
 * the backtrace ips[0 .. n), innermost first (0 when it cannot); classify(p, arg) says where p lies
 * (above). Either may be NULL: no backtrace, and every address on the heap. */
struct ct_match_sink {
	struct ct_rec_buf *out;
	/* Optional (NULL: every record goes to out): columns of a BATCH that the most frequent records
	 * (ALLOC, FREE, TEMP, RECENT, TEMPFREE) are appended to directly (ctrack/columns.h). Before
	 * each, the records waiting in out must go there first: stage(out) moves them and makes room,
	 * returning cols->room (0: none to be had; the record then goes to out). */
	struct ct_columns *cols;
	size_t (*stage)(struct ct_rec_buf *out);
	uint32_t (*define_stacks)(uint32_t upto, void *arg);
	void *arg;
	uint32_t (*intern)(const uint64_t *ips, int n, int truncated, void *arg);
	int (*classify)(uint64_t p, void *arg);
};

#define CT_MATCH_LANES_MAX 8
/* Resets all state for a new trace file, with lanes lanes (a power of two up to
 * CT_MATCH_LANES_MAX) writing to sinks[0 .. lanes): tables emptied (mapped on first call), totals
 * zeroed, every registered stream emptied, and the sequence expectations set from the current
 * counters (numbers taken before, e.g. in a parent before fork, are not this trace's). Streams
 * registered for lanes beyond lanes are no longer given events. 0, -EINVAL or -ENOMEM. */
int ct_match_reset(const struct ct_match_sink *sinks, unsigned lanes);

/* Tracing is over: the tables go back to the system (ct_match_reset makes them again). */
void ct_match_release(void);
/* The bytes the tables hold. */
size_t ct_match_bytes(void);
/* Registers a zeroed stream of lane lane (kept registered for good). */
void ct_match_stream_add(struct ct_match_stream *s, unsigned lane);

enum { CT_MATCH_DONE, CT_MATCH_PASSED, CT_MATCH_BLOCKED };
/* Applies one event (ev: the event's words, ct_event_words(ev[0]) of them) of stream s's thread:
 * in s's lane when its address is the lane's (CT_MATCH_DONE), else only s's bookkeeping
 * (CT_MATCH_PASSED). With one lane and ordered set, an event whose sequence number is ahead of its
 * address's turn is not applied: CT_MATCH_BLOCKED. With ordered clear it is applied regardless
 * (its predecessor will never come). */
int ct_match_event(struct ct_match_stream *s, const uint64_t *ev, int ordered);
/* Several lanes: whether the event ev may be given to the lanes now (CT_MATCH_DONE: its turn is
 * taken) or must wait (CT_MATCH_BLOCKED, with ordered set), as ct_match_event decides for one lane.
 * One thread, the orderer, asks for every event. */
int ct_match_turn(const uint64_t *ev, int ordered);
/* The tables worth loading ahead (ct_match_prefetch): those too large for the caches, whose
 * lookups are random. Below that size a lookup hits L2 anyway and the hints are instructions for
 * nothing (8 to 35 an event each on the event-dense shapes of issue 25). */
enum { CT_PREFETCH_LIVE = 1, CT_PREFETCH_INFO = 2 };
unsigned ct_match_prefetching(const struct ct_match_stream *s);
/* What ct_match_prefetch works out for an event and ct_match_event_hinted uses again: the alloc
 * info's hash (an ALLOC's). */
struct ct_match_hint {
	uint32_t info_hash;
};
/* A hint, some events ahead of ct_match_event_hinted: starts loading the slots ev will touch in
 * the tables (CT_PREFETCH_*), and fills *hint for that call. */
void ct_match_prefetch(const struct ct_match_stream *s, const uint64_t *ev, unsigned tables,
                       struct ct_match_hint *hint);
/* ct_match_event, with what ct_match_prefetch filled in for ev. */
int ct_match_event_hinted(struct ct_match_stream *s, const uint64_t *ev, const struct ct_match_hint *hint,
                          int ordered);

/* The stream's thread is gone or the trace ends: its held block becomes an ordinary live block
 * and a realloc left half-done is settled. */
void ct_match_settle(struct ct_match_stream *s);
/* Before the buffer goes to the file: the held block's ALLOC is written now (so a killed process
 * loses none), though the block stays held (a free as the next event is then a TEMPFREE); an odd
 * free that waited through a whole flush interval is judged now (its call returned long since). */
void ct_match_write_held(struct ct_match_stream *s);
/* The program dies of a signal, taken by the thread of stream s (NULL: none) with the backtrace
 * ips[0 .. n) (truncated: cut): when s's odd free is still waiting and its call site is a frame of
 * that backtrace, the program died in that call: an invalid free, whatever the address (the
 * allocator refused it), written with the backtrace from its call site out. 1 then, else 0. Before
 * ct_match_settle_all. */
int ct_match_crash(struct ct_match_stream *s, const uint64_t *ips, int n, int truncated);
/* ct_match_settle on every registered stream. */
void ct_match_settle_all(void);

/* Every block in the live tables (after ct_match_settle_all: every live block), with its size and
 * alloc info; fn must not apply events. Returns the number of blocks visited. */
size_t ct_match_live(void (*fn)(uint64_t p, uint64_t size, uint32_t info, void *arg), void *arg);
/* How many blocks the live tables hold. */
size_t ct_match_live_count(void);
/* Alloc infos defined so far (ids are below this). */
uint32_t ct_match_infos(void);
/* The size of alloc info id (below ct_match_infos()). */
uint64_t ct_match_info_size(uint32_t id);
/* An aggregated trace (preload/aggregate.h), one lane: from the next ct_match_reset on, the records
 * of blocks (ALLOC, FREE, TEMP, TEMPFREE; RECENT as FREE) go to fn(tag, info) instead of the
 * sink; NULL: they are written (a full trace). */
void ct_match_aggregate(void (*fn)(unsigned tag, uint32_t info));

/* Several lanes write no INFO record: the orderer writes every id's assigned so far, in id order,
 * to to->out (FRAME records by to->define_stacks), before it appends the lanes' records that may
 * name them. */
void ct_match_define_infos(const struct ct_match_sink *to);

/* The totals so far, as END carries them (end_us is the caller's). */
void ct_match_totals(struct ct_rec_end *e);
/* Bytes allocated since the last call (drives the writer's RSS samples). */
uint64_t ct_match_take_bytes(void);

/* What the block records written so far add up to, as a reader's model counts them (the summary
 * trailer, ctrack/trailer.h): ALLOC and TEMP records are allocations, FREE, RECENT, TEMP and
 * TEMPFREE frees (END's totals, once the held and pending blocks are settled), TEMP and TEMPFREE
 * temporary ones; bytes by their alloc infos' sizes; the peak of the live bytes in record order.
 * Kept with one lane (valid 0 with several: their records are ordered only when read), not in an
 * aggregated trace, and not when events were dropped. invalid: INVALID records written. */
struct ct_match_figures {
	uint64_t allocations, frees, bytes, temporary, live_bytes, live_blocks, peak, invalid;
	int valid;
};
void ct_match_figures(struct ct_match_figures *f);
/* Blocks and infos the tables had no room for (out of memory): their events were dropped. */
uint64_t ct_match_dropped(void);

#endif
