/* SPDX-License-Identifier: MIT */
/* The writer thread: drains the per-thread rings into the matcher (match.c), which turns address
 * events into records, adds the records it writes itself (process, modules, frames, threads, time,
 * RSS, notes, END), and hands them to the output (output.c: zstd and the file). Cross-thread order:
 * a ring whose next event must wait for another thread's (match.h) is left for a later pass. */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "aggregate.h"
#include "attach.h"
#include "ctrack/record.h"
#include "ctrack/trailer.h"
#include "defer.h"
#include "drain.h"
#include "leakscan.h"
#include "match.h"
#include "procmaps.h"
#include "rules.h"
#include "sample.h"
#include "status.h"
#include "text.h"
#include "unwind.h"
#include "writer.h"

#define OUT_COMPRESS_AT (256u << 10)
#define OUT_FIRST (OUT_COMPRESS_AT + (64u << 10)) /* the record buffer's first size: doubled as needed */
#define TIME_STEP_NS 1000000ull                   /* TIME records: 1 ms resolution at most ... */
#define TIME_STEP_MIN_NS 20000ull                 /* ... and 20 us at best, in a young run (age_step) */
#define SAMPLE_NS 100000000ull                    /* RSS samples: every 100 ms at most ... */
#define SAMPLE_MIN_NS 1000000ull                  /* ... every 1 ms at best, in a young run ... */
#define SAMPLE_BYTES (4ull << 20)                 /* ... and every 4 MiB allocated */
#define FLUSH_NS 100000000ull                     /* the file is at most 100 ms behind ... */
#define FLUSH_BUSY_NS 5000000ull                  /* ... and 5 ms when events came: a SIGKILL loses little */
#define IDLE_WAIT_NS 2000000                      /* an idle writer looks again after 2 ms ... */
#define IDLE_LONG_NS 50000000  /* ... doubled on each empty look, to 50 ms: a ring half full wakes it */
#define BATCH_WAIT_NS 200000   /* a writer with little to do lets events pile up for 0.2 ms: */
#define BATCH_EVENTS 4096      /* reading ring heads less often keeps them in their threads' caches */
#define STALL_NS 2000000000ull /* 2 s without progress: a sequence number never came */

enum { REQ_NONE, REQ_SYNC, REQ_EXEC, REQ_MARK, REQ_CHECK, REQ_FINISH, REQ_STOP };

/* What a program thread asks of the writer, on the asker's stack. */
struct request {
	int op;
	const char *text;            /* EXEC's path, MARK's name */
	uint64_t size;               /* STOP: the program's allocation that failed */
	uint64_t lost[CT_CLASSES];   /* CHECK's and FINISH's scan: bytes by leak class */
	uint64_t blocks[CT_CLASSES]; /* ... and blocks */
	int failed;                  /* ... or the scan could not run */
};
enum {
	NOTE_NO_RING,
	NOTE_NO_STACK,
	NOTE_IN_SIGNAL,
	NOTE_TABLES,
	NOTE_RECORDS,
	NOTE_CUT_WALKS,
	NOTE_REOPENED,
	NOTE_SETTING,
	NOTE_UNSCANNED,
	NOTE_FORCED,
	NOTE_AGGREGATE,
	NOTE_KINDS
};

static struct {
	struct ct_rec_buf out;
	uint64_t stalled_since; /* when rings started waiting with nothing else to do, or 0 */
	int stuck;              /* the last pass left a ring waiting for a sequence number */
	uint64_t forced;        /* rings let go on out of their order after STALL_NS */
	/* events after the thread stopped (late destructors), a stream per lane */
	struct ct_match_stream late[CT_MATCH_LANES_MAX];
	int late_registered;
	unsigned lanes;             /* the matcher's lanes (CT_ENV_LANES), 1 unless asked */
	uint64_t noted[NOTE_KINDS]; /* the figure each kind of note last reported, 0 = none */
	int warned;                 /* a warning NOTE is in the trace */
	/* The last CLASSES record's blocks and bytes by class, and the matcher's allocations + frees when
	 * it was written (the summary trailer's, which needs no event after it) */
	int classified;
	uint64_t class_blocks[CT_CLASSES], class_bytes[CT_CLASSES], classes_at;
	uint32_t frames; /* stack nodes written so far */
	uint64_t start_ns, time_us, last_time_ns, last_sample_ns, last_flush_ns, bytes_since_sample;
	uint64_t events_since_flush;
	unsigned empty_looks; /* looks in a row that found no event (next_wait) */
	uint64_t agg_ns;      /* an aggregated trace's snapshot interval (aggregate.h), 0: a full trace */
	pthread_t thread;
	void *stack; /* the thread's stack, from the arena: given back with the rest (give_back) */
	int running;
	_Atomic int wake, sleeping;
	_Atomic int main_gone;                   /* the main thread called pthread_exit */
	_Atomic int crash, crash_done;           /* the signal the program dies of; its END is written */
	_Atomic int crash_roots, crash_scan;     /* its roots: taken by one thread; handed over */
	_Atomic int crash_walking, crash_walked; /* its backtrace (crash_ips): walked by one thread, */
	struct ct_ring *crash_ring;              /* ... whose ring this is (NULL: none), */
	int crash_frames, crash_truncated;       /* ... so many frames, and cut */
	_Atomic int stopped;                     /* the thread has left its loop */
	/* EXEC is the file's last record: nothing more is written (a TIME, an RSS sample, a flush that
	 * opens a frame) until the program shows it went on, the exec having failed, with an event or a
	 * request; else a program slow to reach the exec system call would leave a trace that ends
	 * mid-frame, incomplete. */
	int exec_sent;
	sigset_t program_mask; /* the signal mask of the thread that started the writer */
	_Atomic uint32_t req, done;
	struct request *q; /* the request being served (its asker waits, holding req_lock) */
} w;

static pthread_mutex_t req_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic pid_t req_owner;     /* the thread holding req_lock (request_lock), 0 when none */
static _Atomic uint32_t req_ticket; /* its request's ticket */
static pthread_mutex_t late_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t life_lock = PTHREAD_MUTEX_INITIALIZER; /* the thread's end: finish, give_back */

/* ---- notes: what the shim could not record, said in the trace ---- */

/* A NOTE record; a warning keeps the summary trailer out of the file (its reader would not see it). */
static void note(unsigned level, const char *text, size_t len)
{
	ct_rec_note(&w.out, level, text, len);
	w.warned |= level == CT_NOTE_WARNING;
}

/* A note "<count><text>", written when count has changed since this kind was last noted (END
 * is written again for late events: a note is not repeated with it). */
static void note_count(int kind, unsigned level, uint64_t count, const char *text)
{
	if (!count || count == w.noted[kind])
		return;
	w.noted[kind] = count;
	char buf[320];
	struct ct_text t = ct_text_in(buf, sizeof(buf));
	ct_text_add_uint(&t, count);
	ct_text_add(&t, text);
	note(level, t.s, t.len);
}

/* A warning NOTE "<a><b><c>". */
static void note_warning(const char *a, const char *b, const char *c)
{
	char buf[320];
	struct ct_text t = ct_text_in(buf, sizeof(buf));
	ct_text_add(&t, a);
	ct_text_add(&t, b);
	ct_text_add(&t, c);
	note(CT_NOTE_WARNING, t.s, t.len);
}

static void emit_notes(void)
{
	const unsigned warn = CT_NOTE_WARNING;
	note_count(NOTE_NO_RING, warn, atomic_load(&ct_losses.no_ring),
	           " allocation events were not recorded: a thread could get no event ring (out of memory)");
	note_count(NOTE_NO_STACK, warn, atomic_load(&ct_losses.no_stack),
	           " backtraces were not recorded: the stack table is full or out of memory (those "
	           "allocations have no stack)");
	_Static_assert(CT_DEFER_ENTRIES == 16, "the note below says how many");
	note_count(NOTE_IN_SIGNAL, warn, atomic_load(&ct_losses.in_signal),
	           " allocation events were not recorded: signal handlers made them while ctrack was "
	           "recording another event of their thread, and found no room to wait (more than 16 in "
	           "one interruption, or during the thread's first event)");
	note_count(NOTE_TABLES, warn, ct_match_dropped(),
	           " allocation events were not recorded: out of memory for the writer's tables");
	note_count(NOTE_RECORDS, warn, w.out.dropped,
	           " records were lost: out of memory for the record buffer");
	note_count(NOTE_CUT_WALKS, CT_NOTE_INFO, ct_unwind_cuts(),
	           " backtraces end early, at a frame the unwinder cannot step (code with neither unwind "
	           "tables nor frame pointers, CFI expressions, code described by .debug_frame only)");
	note_count(NOTE_FORCED, warn, w.forced,
	           " time(s) the writer went on without an event a thread had numbered and not published "
	           "for 2 s (it died in the middle of a report, or stopped there): events of those "
	           "addresses may be out of order, and frees among them may count as unmatched");
	note_count(NOTE_AGGREGATE, warn, ct_agg_dropped(),
	           " allocation events were not counted: out of memory for the aggregated figures");
	note_count(NOTE_REOPENED, CT_NOTE_INFO, ct_output_reopened(),
	           " reopening(s) of the trace file: the program closed its descriptor, and ctrack opened "
	           "the file again by its path");
	if (ct_losses.bad_setting && !w.noted[NOTE_SETTING]) {
		char buf[320];
		struct ct_text t = ct_text_in(buf, sizeof(buf));
		ct_text_add(&t, "ignored ");
		ct_text_add(&t, ct_losses.bad_setting);
		ct_text_add(&t, ": not a depth from 1 to ");
		ct_text_add_uint(&t, CT_DEPTH_MAX);
		ct_text_add(&t, "; backtraces kept ");
		ct_text_add_uint(&t, (uint64_t)ct_depth);
		ct_text_add(&t, " frames");
		note(CT_NOTE_WARNING, t.s, t.len);
		w.noted[NOTE_SETTING] = 1;
	}
}

static int grow_out(struct ct_rec_buf *b, size_t need)
{
	return ct_rec_grow_arena(b, need, OUT_FIRST);
}

/* ---- stacks and modules ---- */

/* FRAME records for every interned stack node not written yet, each after the MODULE record of
 * the code it points into. Returns the number of nodes defined in the output. */
static uint32_t emit_frames(void)
{
	uint32_t n = ct_stacks_count();
	int synced = 0;
	for (; w.frames < n; w.frames++) {
		uint32_t parent;
		uintptr_t ip;
		ct_stacks_node(w.frames, &parent, &ip);
		if (!synced && !ct_modules_covers(ip)) {
			ct_modules_sync(&w.out);
			synced = 1;
		}
		ct_rec_frame(&w.out, parent, ip);
	}
	return w.frames;
}

static uint32_t define_stacks(uint32_t upto, void *arg)
{
	(void)upto;
	(void)arg;
	return emit_frames();
}

/* ---- what the matcher asks of a free it cannot match (match.h) ---- */

static uint32_t intern_stack(const uint64_t *ips, int n, int truncated, void *arg)
{
	(void)arg;
	return ct_stacks_intern_patient((const uintptr_t *)ips, n, truncated);
}

static int stack_mapping(const char *line, void *arg)
{
	uintptr_t *range = arg;
	const char *end = strchr(line, 0);
	if (end - line < 7 || strcmp(end - 7, "[stack]") || !ct_procmaps_range(line, &range[0], &range[1]))
		return 0;
	return 1;
}

/* Whether p lies in the main thread's stack: its mapping's top down to as far as RLIMIT_STACK lets
 * it grow (the kernel keeps that room for it: no heap can be there). Looked up once, at the first
 * free that asks. */
static int in_main_stack(uint64_t p)
{
	static uintptr_t range[2];
	static int looked;
	if (!looked) {
		struct rlimit lim;
		looked = 1;
		if (ct_procmaps_each(stack_mapping, range) != 1)
			range[0] = range[1] = 0;
		else if (getrlimit(RLIMIT_STACK, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY &&
		         lim.rlim_cur < range[1] && range[1] - lim.rlim_cur < range[0])
			range[0] = range[1] - lim.rlim_cur;
	}
	return p >= range[0] && p < range[1];
}

/* Where a freed address that is no live block lies: a loaded object's memory, the main thread's
 * stack, or maybe a heap block allocated before tracing; unsure whether a free before means a
 * double free when events were dropped (an allocation there may have gone unseen). */
static int lane_classify(uint64_t p, void *arg)
{
	(void)arg;
	int unsure = atomic_load_explicit(&ct_losses.no_ring, memory_order_relaxed) ||
	                     atomic_load_explicit(&ct_losses.in_signal, memory_order_relaxed)
	                 ? CT_WHERE_UNSURE
	                 : 0;
	if (ct_modules_covers(p))
		return CT_WHERE_STATIC | unsure;
	return (in_main_stack(p) ? CT_WHERE_STACK : CT_WHERE_HEAP) | unsure;
}

/* The same for the writer's own matching, with the module list synced first. */
static int classify(uint64_t p, void *arg)
{
	if (ct_modules_dirty()) /* a library went away: its range may be anything now */
		ct_modules_sync(&w.out);
	return lane_classify(p, arg);
}

/* ---- draining the rings ---- */

/* The writer's state for r, in the ring, set up on first sight with every lane's: a lane reads a
 * ring from where the writer first saw it. With one lane the writer's is the lane's (its stream
 * registered here); with several, the orderer's, and each lane registers its stream itself. */
static struct ct_drain *drain_of(struct ct_ring *r)
{
	struct ct_drain *d = ct_drain_at(r, ct_lanes() == 1 ? 0 : CT_DRAIN_ORDERER);
	if (CT_UNLIKELY(!r->consumer_ready)) {
		memset(ct_drain_at(r, 0), 0, sizeof(*d) * (CT_MATCH_LANES_MAX + 1));
		for (unsigned k = 0; k <= CT_MATCH_LANES_MAX; k++)
			atomic_store(&ct_drain_at(r, k)->pos, atomic_load(&r->tail));
		if (ct_lanes() == 1) {
			ct_match_stream_add(&d->st, 0);
			d->registered = 1;
		}
		__atomic_store_n(&r->consumer_ready, 1, __ATOMIC_RELEASE);
	}
	return d;
}

/* Where the writer has read r to: the ring's tail itself when it is the only lane, else the
 * orderer's position. */
static _Atomic uint64_t *read_pos(struct ct_ring *r, struct ct_drain *d)
{
	return ct_lanes() == 1 ? &r->tail : &d->pos;
}

/* The ring's thread has exited, its events are all in and every lane has settled its stream: the
 * ring can serve a new thread. */
static void retire(struct ct_ring *r, struct ct_drain *d)
{
	if (ct_lanes() == 1)
		ct_match_settle(&d->st);
	if (d->announced)
		ct_rec_thread(&w.out, (uint64_t)r->tid, CT_THREAD_EXITED);
	d->announced = d->blocked = d->settling = 0;
	atomic_fetch_add(&d->gen, 1);
	atomic_store_explicit(&r->state, CT_RING_FREE, memory_order_release);
}

/* INFO and FRAME records before an EPOCH: its records may name any id assigned so far. */
static void define_for_batch(void)
{
	static const struct ct_match_sink defs = {
	    .out = &w.out, .define_stacks = define_stacks, .intern = intern_stack, .classify = classify};
	emit_frames();
	ct_match_define_infos(&defs);
}

/* The other lanes parked or stopped: every lane's records so far into the writer's buffer, and every
 * id defined (a CLASSES record names any). */
static void collect_lanes(void)
{
	ct_lanes_collect(&w.out, define_for_batch);
	define_for_batch();
}

/* r's thread has exited and the writer has read its every event: settled, and the ring retired once
 * every lane has read them too. */
static void thread_gone(struct ct_ring *r, struct ct_drain *d)
{
	if (ct_lanes() == 1) {
		retire(r, d);
		return;
	}
	if (!d->settling) {
		ct_lanes_settle(r, d);
		d->settling = 1;
	} else if (ct_lanes_settled(r) && atomic_load(&r->tail) == atomic_load(&r->head)) {
		retire(r, d);
	}
}

/* One pass over all rings. A ring that waits for a sequence number that never comes (a thread
 * that died between taking it and publishing) is let through after STALL_NS without progress. */
static int pump(void)
{
	emit_frames();
	ct_lanes_merge(&w.out, define_for_batch);
	int progress = 0, stuck = 0;
	int force = w.stalled_since && ct_now_ns() - w.stalled_since > STALL_NS;
	for (struct ct_ring *r = ct_ring_list(); r; r = r->next) {
		int st = atomic_load_explicit(&r->state, memory_order_acquire);
		struct ct_drain *d;
		if (st == CT_RING_FREE || st == CT_RING_CLAIMED)
			continue;
		d = drain_of(r);
		if (!d->announced) {
			ct_rec_thread(&w.out, (uint64_t)r->tid, CT_THREAD_STARTED);
			d->announced = 1;
		}
		int was_blocked = d->blocked, ordered = !(force && d->blocked), n;
		if (ct_lanes() == 1) {
			n = ct_drain(r, d, &r->tail, ordered);
		} else {
			n = ct_lanes_order(r, d, ordered);
			ct_drain_tail(r, ct_lanes());
		}
		progress += n;
		w.forced += force && was_blocked && n > 0;
		if (d->blocked)
			stuck = 1;
		else if (st == CT_RING_DEAD && atomic_load(&r->head) == atomic_load(read_pos(r, d)))
			thread_gone(r, d);
	}
	if (ct_lanes() > 1)
		ct_lanes_tick(0);
	if (progress || !stuck || force)
		w.stalled_since = 0;
	else if (!w.stalled_since)
		w.stalled_since = ct_now_ns();
	w.stuck = stuck;
	return progress;
}

/* ---- events not matched yet, for the leak scan ---- */

struct unmatched_visit {
	void (*end)(uint64_t p, void *arg);
	void (*start)(uint64_t p, uint64_t size, void *arg);
	void *arg;
};

/* The event whose first two words are w0, w1 (w1 0 for a one-word event), to v's callbacks. */
static void visit(const struct unmatched_visit *v, uint64_t w0, uint64_t w1)
{
	if (v->end && ct_event_ends_block(w0))
		v->end(CT_EV_PTR(w0), v->arg);
	else if (v->start && ct_event_starts_block(w0))
		v->start(CT_EV_PTR(w0), CT_EV_KIND(w0) == CT_EV_ALLOC ? w1 : 0, v->arg);
}

void ct_writer_each_unmatched(void (*end)(uint64_t p, void *arg),
                              void (*start)(uint64_t p, uint64_t size, void *arg), void *arg)
{
	const struct unmatched_visit v = {end, start, arg};
	for (struct ct_ring *r = ct_ring_list(); r; r = r->next) {
		int st = atomic_load_explicit(&r->state, memory_order_acquire);
		if (st == CT_RING_FREE || st == CT_RING_CLAIMED)
			continue;
		uint64_t t = atomic_load(r->consumer_ready ? read_pos(r, drain_of(r)) : &r->tail);
		uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
		while (t < h) { /* what the ring holds past the writer: whole events, in order */
			uint64_t w0 = r->words[t & CT_RING_MASK], n = ct_event_words(w0);
			visit(&v, w0, n > 1 ? r->words[(t + 1) & CT_RING_MASK] : 0);
			t += n;
		}
		/* The words are on the stack of a thread stopped in wait_for_room; only a live thread's
		 * (one cancelled in there ended without clearing them, and its stack may be gone). A
		 * thread running on, one the signal could not stop, may leave them meanwhile: a stale word
		 * is only taken as a root. */
		const uint64_t *w = st == CT_RING_ACTIVE ? atomic_load(&r->inflight) : NULL;
		if (w)
			visit(&v, w[0], ct_event_words(w[0]) > 1 ? w[1] : 0);
	}
	if (end)
		ct_track_each_deferred_end(end, arg); /* and those not in a ring yet */
}

/* ---- time, memory samples, flushing ---- */

/* Opened for each sample (ten times a second): a descriptor kept open could be closed by the
 * program and its number reused for one of the program's files. */
static uint64_t rss_bytes(void)
{
	uint64_t rss;
	return ct_procstatm(NULL, &rss, NULL) == 0 ? rss : 0;
}

/* The clock's step, the RSS samples and the writer's waits follow the run's age, so that a run of
 * 2 ms gets a chart of a hundred points and one of an hour is not woken more often than it needs:
 * a TIME record at most every age/1024, an RSS sample every age/64, a wait of age/1024 while events
 * come and age/128 while none do, each between its bounds. The wakeups this costs grow with the log
 * of the run's length (about 1024 per factor e of age while events come), not with its length. */
static uint64_t age_step(uint64_t now, unsigned shift, uint64_t lo, uint64_t hi)
{
	uint64_t step = (now - w.start_ns) >> shift;
	return step < lo ? lo : step > hi ? hi : step;
}

/* Where TIME and SAMPLE records go: among the events, with several lanes in the orderer's run (marked
 * there by timeline_done), so that they stand between the same events as with one. */
static struct ct_rec_buf *timeline(void)
{
	return ct_lanes() == 1 ? &w.out : ct_lanes_timeline();
}

static void timeline_done(void)
{
	if (ct_lanes() > 1)
		ct_lanes_mark0();
}

static void tick(uint64_t now)
{
	uint64_t us = (now - w.start_ns) / 1000;
	if (us > w.time_us) {
		ct_rec_time(timeline(), us - w.time_us);
		timeline_done();
		w.time_us = us;
	}
	w.last_time_ns = now;
}

static void sample(uint64_t now)
{
	ct_rec_sample(timeline(), rss_bytes());
	timeline_done();
	w.last_sample_ns = now;
	w.bytes_since_sample = 0;
}

/* Between a busy flush's columns (ct_output_flush_busy): a ring more than a quarter full is drained,
 * so that no thread waits for room while its events are compressed. Rings with less are left for
 * later: the writer that reads far behind a thread reads cache lines the thread has left. */
static void drain_between(void)
{
	for (struct ct_ring *r = ct_ring_list(); r; r = r->next) {
		uint64_t fill = atomic_load_explicit(&r->head, memory_order_relaxed) -
		                atomic_load_explicit(&r->tail, memory_order_relaxed);
		if (fill > CT_RING_WORDS / 4) {
			w.events_since_flush += (uint64_t)pump();
			return;
		}
	}
}

/* Every stream's held ALLOC written at this point (one lane: the writer's streams). */
static void write_held_one_lane(void)
{
	for (struct ct_ring *r = ct_ring_list(); r; r = r->next)
		if (r->consumer_ready)
			ct_match_write_held(&drain_of(r)->st);
	ct_match_write_held(&w.late[0]);
}

/* ---- aggregated traces (aggregate.h) ---- */

/* The figures so far as an AGG_SNAPSHOT at the clock's time: every interval, and before a record
 * that must see them (MARK, CLASSES, EXEC, CRASH, END), after the matcher settled what came before
 * it. Nothing in a full trace. */
static void agg_point(void)
{
	if (!w.agg_ns)
		return;
	tick(ct_now_ns());
	ct_agg_snapshot(&w.out, rss_bytes());
}

/* housekeeping() of an aggregated trace: the clock and the RSS samples go to the aggregator, not
 * into TIME and SAMPLE records, and the file is written at each snapshot (the held ALLOCs counted
 * first, as a full trace's flush writes them): a killed program's trace ends at its last snapshot. */
static void agg_housekeeping(uint64_t now)
{
	ct_agg_clock((now - w.start_ns) / 1000);
	if (ct_modules_dirty())
		ct_modules_sync(&w.out);
	w.bytes_since_sample += ct_match_take_bytes();
	if (now - w.last_sample_ns >= age_step(now, 6, SAMPLE_MIN_NS, SAMPLE_NS) ||
	    w.bytes_since_sample >= SAMPLE_BYTES) {
		ct_agg_rss(rss_bytes());
		w.last_sample_ns = now;
		w.bytes_since_sample = 0;
	}
	if (now - w.last_flush_ns >= w.agg_ns) {
		write_held_one_lane();
		agg_point();
		w.last_flush_ns = now;
		ct_output_flush_busy(&w.out, drain_between);
	} else if (w.out.len + ct_output_staged() >= OUT_COMPRESS_AT) {
		ct_output_flush_busy(&w.out, drain_between);
	}
}

static void housekeeping(int events)
{
	uint64_t now = ct_now_ns();
	w.events_since_flush += (uint64_t)events;
	if (w.agg_ns) {
		agg_housekeeping(now);
		return;
	}
	if (now - w.last_time_ns >= age_step(now, 10, TIME_STEP_MIN_NS, TIME_STEP_NS))
		tick(now);
	if (ct_modules_dirty())
		ct_modules_sync(&w.out);
	w.bytes_since_sample += ct_match_take_bytes();
	if (now - w.last_sample_ns >= age_step(now, 6, SAMPLE_MIN_NS, SAMPLE_NS) ||
	    w.bytes_since_sample >= SAMPLE_BYTES)
		sample(now);
	if (now - w.last_flush_ns >= (w.events_since_flush ? FLUSH_BUSY_NS : FLUSH_NS)) {
		if (ct_lanes() == 1) {
			write_held_one_lane();
		} else { /* every lane's held ALLOCs at this point, in the file a flush later */
			ct_lanes_held();
			ct_lanes_tick(1);
		}
		w.last_flush_ns = now;
		w.events_since_flush = 0;
		ct_output_flush_busy(&w.out, drain_between);
	} else if (w.out.len + ct_output_staged() >= OUT_COMPRESS_AT) {
		/* A flush, not just compression: zstd ends its block (128 KiB at most) here anyway, and a
		 * flush point is where a cut trace ends readable and where a write error's NOTE goes. */
		ct_output_flush_busy(&w.out, drain_between);
	}
}

/* ---- the summary trailer (format.h) ---- */

/* A CLASSES record was written, of these blocks and bytes by class. */
static void remember_classes(const uint64_t bytes[CT_CLASSES], const uint64_t blocks[CT_CLASSES])
{
	struct ct_match_figures f;
	ct_match_figures(&f);
	memcpy(w.class_bytes, bytes, sizeof(w.class_bytes));
	memcpy(w.class_blocks, blocks, sizeof(w.class_blocks));
	w.classes_at = f.allocations + f.frees;
	w.classified = 1;
}

/* After END: the trailer, when its figures are the whole of what a summary of the trace says. */
static void put_trailer(void)
{
	struct ct_match_figures f;
	ct_match_figures(&f);
	if (!f.valid || f.invalid || w.warned || ct_sampler.rate || w.agg_ns ||
	    (w.classified && f.allocations + f.frees != w.classes_at))
		return;
	struct ct_trailer t = {.allocations = f.allocations,
	                       .frees = f.frees,
	                       .bytes_allocated = f.bytes,
	                       .temporary = f.temporary,
	                       .peak = f.peak,
	                       .live_bytes = f.live_bytes,
	                       .live_blocks = f.live_blocks,
	                       .runtime_us = w.time_us,
	                       .classified = w.classified};
	memcpy(t.class_blocks, w.class_blocks, sizeof(t.class_blocks));
	memcpy(t.class_bytes, w.class_bytes, sizeof(t.class_bytes));
	ct_output_trailer(&t);
}

static void emit_end(void)
{
	uint64_t now = ct_now_ns();
	struct ct_rec_end e;
	tick(now);
	sample(now); /* a short run gets its RSS too */
	emit_notes();
	ct_match_totals(&e);
	e.end_us = w.time_us;
	ct_rec_end(&w.out, &e);
	ct_output_write(&w.out, CT_OUT_END);
	put_trailer();
}

/* ---- the thread ---- */

static void idle_wait(long ns)
{
	atomic_store(&w.sleeping, 1);
	if (!atomic_exchange(&w.wake, 0)) {
		struct timespec ts = {0, ns};
		syscall(SYS_futex, &w.wake, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
	}
	atomic_store(&w.sleeping, 0);
	atomic_store(&w.wake, 0);
}

/* How long to wait after a look that found `events` (fewer than a batch). A few: more may follow at
 * once (a batch). None, or a sampled run's few: the idle step (a sampled run records one allocation
 * in thousands, and its writer woke every 0.2 ms for each), doubled on each empty look in a row up
 * to age/64 and 50 ms, so that an idle server's writer wakes 20 times a second, not 500 (11 to 14
 * ms of CPU a second, measured); the first events after a pause are timed at most age/64 late.
 * A burst after a long wait costs nothing: a ring half full wakes the writer (push in tracker.c),
 * and the next events' flush follows at once (FLUSH_BUSY_NS). */
static long next_wait(int events)
{
	uint64_t now = ct_now_ns();
	if (events && !ct_sampler.rate) {
		w.empty_looks = 0;
		return (long)age_step(now, 10, TIME_STEP_MIN_NS, BATCH_WAIT_NS);
	}
	uint64_t step = age_step(now, 7, TIME_STEP_MIN_NS, IDLE_WAIT_NS);
	uint64_t most = age_step(now, 6, TIME_STEP_MIN_NS, IDLE_LONG_NS); /* events' times: age/64 late */
	w.empty_looks = events ? 0 : w.empty_looks + 1;
	for (unsigned i = 1; i < w.empty_looks && step < most; i++)
		step *= 2;
	return (long)(step < most ? step : most);
}

void ct_writer_wake(void)
{
	if (!atomic_exchange(&w.wake, 1) && atomic_load(&w.sleeping))
		syscall(SYS_futex, &w.wake, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Everything published so far; a ring waiting for a thread that is between taking a sequence
 * number and publishing its event gets up to 50 ms. */
static void drain_everything(void)
{
	for (int i = 0; i < 50; i++) {
		while (pump() + ct_lanes_absorb()) /* the lanes parked: the writer does their work */
			;
		if (!w.stuck)
			break;
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	collect_lanes();
}

/* The leak scan (the thread that asked prepared its roots), its CLASSES record and, when other
 * threads could not be stopped, a note that says so. 0, or -1 when the scan could not run: a note
 * says why, and the trace has no classes (so no check gives a verdict from it). */
static int scan(uint64_t lost[CT_CLASSES], uint64_t blocks[CT_CLASSES])
{
	if (ct_sampler.rate) /* the scan needs every block: a sampled trace has no classes (SAMPLING) */
		return -1;
	int rc = ct_leakscan(&w.out, lost, blocks);
	if (rc > 0) /* the program's last scan came earlier (__lsan_do_leak_check) */
		return 0;
	if (rc == 0)
		remember_classes(lost, blocks);
	if (rc < 0) {
		int err;
		const char *why = ct_leakscan_failure(&err), *desc = err ? strerrordesc_np(err) : NULL;
		char buf[320];
		struct ct_text t = ct_text_in(buf, sizeof(buf));
		ct_text_add(&t, "no leak classes: the scan for pointers at exit could not run (");
		ct_text_add(&t, why ? why : "it was not prepared");
		ct_text_add(&t, desc ? ": " : "");
		ct_text_add(&t, desc ? desc : "");
		ct_text_add(&t, "), so no check can tell lost blocks from reachable ones");
		note(CT_NOTE_WARNING, t.s, t.len);
		return -1;
	}
	uint64_t ignored, ignored_bytes;
	ct_leakscan_ignored(&ignored, &ignored_bytes);
	if (ignored) {
		char buf[320];
		struct ct_text t = ct_text_in(buf, sizeof(buf));
		ct_text_add_uint(&t, ignored);
		ct_text_add(&t, " blocks (");
		ct_text_add_uint(&t, ignored_bytes);
		ct_text_add(&t,
		            " bytes) are no leaks by the program's word (LeakSanitizer's __lsan_disable or "
		            "__lsan_ignore_object): they and what they reach count as still reachable");
		note(CT_NOTE_INFO, t.s, t.len);
	}
	note_count(NOTE_UNSCANNED, CT_NOTE_WARNING, ct_leakscan_threads_not_scanned(),
	           " other threads were still running at the scan: their stacks were read whole as they "
	           "ran, their registers not at all, so a block one of them holds in a register alone "
	           "counts as lost");
	return 0;
}

/* ---- giving the memory back ---- */

static void release_memory(void)
{
	ct_output_release();
	ct_match_release();
	ct_agg_release();
	ct_arena_unmap(w.out.data, w.out.cap);
	w.out = (struct ct_rec_buf){0}; /* no grow function: nothing is recorded any more */
}

/* The program's allocation of size bytes failed, and what the shim holds might have let it succeed:
 * the trace ends (everything published so far, a NOTE saying why, END) and the writer's memory goes
 * back to the system, for the program to retry. */
static void stop_for_program(uint64_t size)
{
	char buf[320];
	struct ct_text t = ct_text_in(buf, sizeof(buf));
	ct_text_add(&t, "the program ran out of memory (an allocation of ");
	ct_text_add_uint(&t, size);
	ct_text_add(&t, " bytes failed; a memory limit such as ulimit -v or -d?): ctrack stopped tracing "
	                "there and gave its own memory to the program, which ran on untraced; the blocks "
	                "live then count as leaked");
	note(CT_NOTE_WARNING, t.s, t.len);
	emit_end();
	release_memory();
}

/* Does what q asks once every event published before it is in. Every request but SYNC settles the
 * held and pending events first, so what came before the request is written before its record (or
 * counted in its scan). */
static void serve_op(struct request *q)
{
	int op = q->op;
	ct_lanes_park(5000);
	drain_everything();
	if (op != REQ_SYNC) {
		ct_match_settle_all();
		collect_lanes();
		agg_point();
	}
	switch (op) {
	case REQ_EXEC:
		emit_notes();
		ct_rec_exec(&w.out, q->text, strlen(q->text));
		ct_output_write(&w.out, CT_OUT_END);
		break;
	case REQ_MARK:
		tick(ct_now_ns());
		ct_rec_mark(&w.out, q->text, strnlen(q->text, CT_MARK_MAX));
		ct_output_write(&w.out, CT_OUT_FLUSH);
		break;
	case REQ_CHECK:
		tick(ct_now_ns());
		q->failed = scan(q->lost, q->blocks) < 0;
		ct_output_write(&w.out, CT_OUT_FLUSH);
		break;
	case REQ_FINISH:
		q->failed = scan(q->lost, q->blocks) < 0;
		emit_end();
		break;
	case REQ_STOP:
		stop_for_program(q->size);
		break;
	}
	if (op == REQ_FINISH || op == REQ_STOP)
		ct_lanes_stop(); /* late events are the writer's to apply, for every lane */
	else
		ct_lanes_resume();
}

/* Runs a request from a program thread. */
static int serve(uint32_t req)
{
	int op = w.q->op;
	serve_op(w.q);
	w.exec_sent = op == REQ_EXEC;
	atomic_store(&w.done, req);
	return op == REQ_FINISH || op == REQ_STOP;
}

/* ---- the program dies of a signal (crash.c asks, from its handler) ---- */

/* The backtrace of the thread that took the signal, walked in its handler: from the instruction
 * the signal interrupted (the first exact frame; the handler's frames are the shim's, skipped, and
 * the signal trampoline's is the kernel's) outward, at most ct_depth frames. Static: one crash, on a
 * handler's stack that may be small (sigaltstack). */
static uint64_t crash_ips[CT_DEPTH_MAX];

static void walk_crash(void *ring)
{
	int truncated = 0, first = 0;
	int n = ct_unwind((uintptr_t *)crash_ips, CT_DEPTH_MAX, &truncated);
	while (first < n && !(crash_ips[first] & CT_UNWIND_EXACT))
		first++;
	if (first == n) /* no signal frame crossed: keep what there is */
		first = 0;
	n -= first;
	memmove(crash_ips, crash_ips + first, (size_t)n * sizeof(*crash_ips));
	if (n > ct_depth) {
		n = ct_depth;
		truncated = 1;
	}
	w.crash_frames = n;
	w.crash_truncated = truncated;
	w.crash_ring = ring;
	atomic_store(&w.crash_walked, 1);
}

/* The CRASH record, after the INVALID record of the free the program dies in, if it does. */
static void write_crash(int sig)
{
	uint32_t stack = 0;
	if (atomic_load(&w.crash_walked)) {
		struct ct_ring *r = w.crash_ring;
		/* the odd free the program may die in is in the lane of its address */
		for (unsigned k = 0; k < ct_lanes() && r && r->consumer_ready; k++)
			ct_match_crash(&ct_drain_at(r, k)->st, crash_ips, w.crash_frames, w.crash_truncated);
		if (w.crash_frames)
			stack = ct_stacks_intern_patient((const uintptr_t *)crash_ips, w.crash_frames,
			                                 w.crash_truncated);
		emit_frames();
	}
	ct_rec_crash(&w.out, (uint64_t)sig, stack);
}

/* Everything published is written, with a NOTE naming the signal and END, and tracing stops. A
 * program told to end (SIGTERM, SIGINT, SIGHUP) is scanned as memcheck does at that point: its
 * heap is whole, and the thread that took the signal handed over its roots. After a fault it is
 * not (a corrupt heap, a thread stopped in the middle of an update): no scan, the live blocks
 * count as leaked. */
static void crash_end(int sig)
{
	ct_lanes_park(1000); /* a lane that does not answer keeps its records */
	drain_everything();
	write_crash(sig);
	ct_match_settle_all();
	collect_lanes();
	agg_point();
	const char *abbrev = sigabbrev_np(sig);
	uint64_t lost[CT_CLASSES], blocks[CT_CLASSES];
	int scanned = atomic_load(&w.crash_scan) && scan(lost, blocks) == 0;
	note_warning("the program was killed by SIG", abbrev ? abbrev : "?",
	             scanned ? ": the trace ends there, and the leak classes are those of that moment"
	                     : ": the trace ends there, and the blocks live then count as leaked");
	emit_end();
	atomic_store(&ct_state, CT_OFF);
	atomic_store(&w.crash_done, 1);
	ct_lanes_stop();
}

/* ---- the program's last thread ----
 * glibc ends the process when its last thread ends, and the writer counts as one: a program whose
 * main thread ends with pthread_exit would wait for the writer forever. So once the main thread
 * has gone (a zombie, in /proc) and the writer is the only other thread, the writer does what the
 * last thread would: exit(0), which runs the program's atexit handlers and the shim's finish. */

/* 1 when /proc/self/stat says the main thread is a zombie and the process has no threads but it,
 * the writer and the lanes'. */
static int only_writer_left(void)
{
	char buf[1024];
	const char *p = ct_procstat_fields("/proc/self/stat", buf, sizeof(buf));
	if (!p || *p != 'Z')
		return 0;
	for (int field = 4; field <= 20 && p; field++) /* p: the space before field `field` */
		p = strchr(p + 1, ' ');
	unsigned shim = 1 + (ct_lanes() > 1 ? ct_lanes() : 0); /* the writer and the lanes */
	return p && strtoul(p + 1, NULL, 10) == 1 + shim;      /* field 20: num_threads */
}

static _Noreturn void exit_as_last_thread(void)
{
	pthread_sigmask(SIG_SETMASK, &w.program_mask, NULL);
	ct_in_shim = 0; /* the program's exit handlers run here, and are the program's */
	exit(0);
}

/* ---- attach mode (attach.c): the launcher detaches ---- */

static int attached; /* the trace started at an attach (ct_writer_attach) */
static int detached; /* the writer ended at a detach: its thread is still to be joined */

/* The hooks go (their GOT entries get back what they held), tracing stops, and the trace ends as at
 * the program's exit but for the exit machinery (every published event, the leak scan of the blocks
 * allocated while attached, END); the writer's memory goes back to the system, the file is closed,
 * and the launcher learns it (the end of its connection). The program runs on. */
static void detach(void)
{
	ct_attach_unhook();
	atomic_store(&ct_state, CT_OFF); /* hooks still running finish their report */
	struct request q = {.op = REQ_FINISH};
	ct_leakscan_prepare(__builtin_frame_address(0), 0);
	serve_op(&q);
	ct_sample_stop(); /* after the last drain: no event of the window is recorded unsampled */
	ct_output_drop();
	release_memory();
	w.running = 0;
	detached = 1;
	ct_attach_done();
}

/* ATTACH: when, and which attach into this process it is. */
static void emit_attach(void)
{
	static uint64_t ordinal;
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	ct_rec_attach(&w.out, (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec, ++ordinal);
}

static void *writer_main(void *arg)
{
	(void)arg;
	ct_in_shim = 1; /* whatever this thread allocates is the shim's, not the program's */
	/* A young run's short waits (age_step) would be stretched to the default 50 us slack. */
	prctl(PR_SET_TIMERSLACK, 10000UL, 0, 0, 0);
	for (;;) {
		uint32_t req = atomic_load(&w.req);
		int events = pump();
		if (events)
			w.exec_sent = 0;
		if (!w.exec_sent)
			housekeeping(events);
		int sig = atomic_load(&w.crash);
		if (sig) {
			crash_end(sig);
			break;
		}
		if (req != atomic_load_explicit(&w.done, memory_order_relaxed) && serve(req))
			break;
		if (CT_UNLIKELY(attached) && ct_attach_poll()) {
			detach();
			break;
		}
		if (atomic_load_explicit(&w.main_gone, memory_order_relaxed) && only_writer_left())
			exit_as_last_thread();
		if (events < BATCH_EVENTS)
			idle_wait(next_wait(events));
	}
	if (attached && !detached) /* the trace ended otherwise (exit, crash, out of memory): say so */
		ct_attach_done();
	atomic_store(&w.stopped, 1);
	return NULL;
}

static int on_writer(void)
{
	return w.running && pthread_equal(pthread_self(), w.thread);
}

/* Whether the request of this ticket was served (the writer's done counter is at it or past it: a
 * nested request's, made after it, moved it past). */
static int served_at(uint32_t ticket)
{
	return (int32_t)(atomic_load(&w.done) - ticket) >= 0;
}

/* Waits (about 5 s at most) until the request of this ticket is served; the scan's helper marks
 * meanwhile. */
static void wait_served(uint32_t ticket, int scans)
{
	for (int i = 0; !served_at(ticket) && i < 100000; i++) {
		if (scans)
			ct_leakscan_help(); /* marks with the writer while its scan is open */
		struct timespec ts = {0, 50000};
		nanosleep(&ts, NULL);
	}
}

/* Takes req_lock with every signal blocked (*old: the mask to put back), so that a signal handler
 * that interrupts its owner finds req_owner and req_ticket set: a request from there (a check in a
 * handler over a check of the same thread, or exit() there) cannot wait for a lock its own thread
 * holds (it waited for ever); it waits for that request to be served instead, then makes its own
 * under the same lock. 0 with the lock taken, 1 when the calling thread held it already. */
static int request_lock(sigset_t *old)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, old);
	pid_t me = (pid_t)syscall(SYS_gettid);
	if (atomic_load(&req_owner) == me) {
		pthread_sigmask(SIG_SETMASK, old, NULL); /* handlers over this wait may nest as well */
		wait_served(atomic_load(&req_ticket), 0);
		pthread_sigmask(SIG_SETMASK, &all, NULL);
		return 1;
	}
	pthread_mutex_lock(&req_lock);
	atomic_store(&req_owner, me);
	return 0;
}

static void request_unlock(void)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	atomic_store(&req_owner, 0);
	pthread_mutex_unlock(&req_lock);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Hands q to the writer and waits until it is served (at most ~5 s: a writer that died leaves the
 * program running). A scan's roots are the asker's: CHECK and FINISH take them here, under the lock,
 * from sp up (FINISH: from the first frame outside the exit machinery). Returns 0 once served, or -1
 * when there is no writer or it did not answer. With held, the request lock stays held once the
 * writer was asked, and *held says so; never in a request nested in the thread's own (request_lock),
 * whose lock the request under way lets go. */
static int request_held(struct request *q, const void *sp, int *held)
{
	if (!w.running)
		return -1;
	int scans = q->op == REQ_CHECK || q->op == REQ_FINISH;
	if (on_writer()) { /* the writer runs the program's exit (exit_as_last_thread) */
		if (scans)
			ct_leakscan_prepare(sp, q->op == REQ_FINISH);
		serve_op(q);
		return 0;
	}
	/* No cancellation in here (nanosleep is a cancellation point): a thread cancelled while it
	 * waited left the lock held, and every later request (the exit's) waited for ever, or its stack
	 * went while the scan read it as roots (tests/progs/check_cancel.c). A cancel waits for the
	 * program's next cancellation point. */
	int cancel;
	sigset_t old;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	int nested = request_lock(&old);
	uint32_t outer = atomic_load(&req_ticket);
	if (scans)
		ct_leakscan_prepare(sp, q->op == REQ_FINISH);
	w.q = q;
	uint32_t ticket = atomic_fetch_add(&w.req, 1) + 1;
	atomic_store(&req_ticket, ticket);
	pthread_sigmask(SIG_SETMASK, &old, NULL); /* from here a handler's request waits for this one */
	ct_writer_wake();
	wait_served(ticket, scans);
	/* Read before the lock goes: the next request (another thread's, or a signal handler's on this
	 * one once request_unlock lets signals in) moves done past the ticket, and a check that was
	 * served answered -1 (1 in 200 of tests/progs/check_in_handler.c's). */
	int served = served_at(ticket);
	if (nested)
		atomic_store(&req_ticket, outer);
	else if (held)
		*held = 1;
	else
		request_unlock();
	pthread_setcancelstate(cancel, NULL);
	return served ? 0 : -1;
}

static int request(struct request *q, const void *sp)
{
	return request_held(q, sp, NULL);
}

void ct_writer_main_exited(void)
{
	atomic_store(&w.main_gone, 1);
	ct_writer_wake();
}

/* From a signal handler: async-signal-safe (atomics, futex, nanosleep). The writer gets 5 s. */
/* Signals that tell a healthy program to end: its heap is worth a leak scan. */
static int ends_healthy(int sig)
{
	return sig == SIGTERM || sig == SIGINT || sig == SIGHUP;
}

void ct_writer_crash(int sig, const void *ucontext, struct ct_ring *ring)
{
	if (!w.running || on_writer())
		return;
	if (!atomic_exchange(&w.crash_walking, 1)) /* before w.crash, which sends the writer to it */
		ct_crash_guarded(walk_crash, ring);
	if (ends_healthy(sig) && !atomic_exchange(&w.crash_roots, 1)) {
		ct_leakscan_prepare_signal(__builtin_frame_address(0), ucontext);
		atomic_store(&w.crash_scan, 1); /* before w.crash, which the writer reads first */
	}
	int none = 0;
	atomic_compare_exchange_strong(&w.crash, &none, sig);
	ct_writer_wake();
	for (int i = 0; i < 10000 && !atomic_load(&w.crash_done) && !atomic_load(&w.stopped); i++) {
		struct timespec ts = {0, 500000};
		nanosleep(&ts, NULL);
	}
}

/* ---- the first records of a file ---- */

static size_t read_file(const char *path, uint8_t **buf, size_t *cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	if (fd < 0)
		return 0;
	for (;;) {
		if (len == *cap) {
			size_t n = *cap ? *cap * 2 : 4096;
			if (ct_arena_grow((void **)buf, *cap, n) < 0)
				break;
			*cap = n;
		}
		ssize_t k = read(fd, *buf + len, *cap - len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		len += (size_t)k;
	}
	close(fd);
	return len;
}

static void emit_process(void)
{
	char exe[4096];
	ssize_t exe_len = readlink("/proc/self/exe", exe, sizeof(exe));
	uint8_t *cmd = NULL;
	size_t cap = 0;
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	struct ct_rec_process p = {
	    .pid = (uint64_t)getpid(),
	    .ppid = (uint64_t)getppid(),
	    .start_unix_ns = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec,
	    .exe = exe,
	    .exe_len = exe_len > 0 ? (size_t)exe_len : 0,
	};
	p.args_len = read_file("/proc/self/cmdline", &cmd, &cap);
	p.args = (const char *)cmd;
	ct_rec_process(&w.out, &p);
	ct_arena_unmap(cmd, cap);
}

/* The writer's stack: its deepest frames hold a few KiB (module records, notes, the leak scan's
 * walk). Not the 8 MiB default, which a program under `ulimit -v` may not have to spare. Mapped
 * from the arena, with a guard page at its bottom, so that it can be given back (glibc keeps the
 * stacks it maps for threads that ended); a forked child's writer runs on the parent's. */
#define WRITER_STACK (1u << 20)
#define GUARD_PAGE 4096

static int map_stack(void)
{
	if (!w.stack && (w.stack = ct_arena_map(WRITER_STACK)))
		mprotect(w.stack, GUARD_PAGE, PROT_NONE);
	return w.stack ? 0 : -1;
}

/* What the compressor leaves to be had when it takes its memory: the first thread's event ring
 * (256 KiB), the stack table's first chunk and index (80 KiB), and the rings of a few more threads. */
#define COMPRESSOR_SPARE (1u << 20)

/* The trace file cannot be written: the program runs on untraced. */
static void stop_tracing(void)
{
	atomic_store(&ct_state, CT_OFF);
}

/* What the lanes ask of the writer's side: no FRAME records (the writer writes them before it appends
 * their ZEPOCH), and where an address lies without syncing the module list (lane_classify: a sync
 * writes MODULE records; a list that a dlclose made stale says "heap" for a while, ct_modules_covers). */
static uint32_t lane_define_stacks(uint32_t upto, void *arg)
{
	(void)arg;
	return upto;
}

/* The matcher emptied for a new trace, with lanes lanes: one lane writes to the writer's buffer and
 * the zstd columns; several each to their runs of an epoch (lanes.c), and the writer writes the
 * INFO records (define_for_batch). */
static int reset_matcher(unsigned lanes)
{
	struct ct_match_sink sinks[CT_MATCH_LANES_MAX];
	if (ct_lanes_prepare(lanes) < 0)
		return -ENOMEM;
	sinks[0] = (struct ct_match_sink){.out = &w.out,
	                                  .cols = ct_output_columns(),
	                                  .stage = ct_output_stage,
	                                  .define_stacks = define_stacks,
	                                  .intern = intern_stack,
	                                  .classify = classify};
	ct_match_aggregate(w.agg_ns ? ct_agg_block : NULL);
	for (unsigned k = 0; k < lanes && lanes > 1; k++) {
		sinks[k] = (struct ct_match_sink){
		    .define_stacks = lane_define_stacks, .intern = intern_stack, .classify = lane_classify};
		ct_lanes_sink(k, &sinks[k]);
	}
	return ct_match_reset(sinks, lanes);
}

/* The lanes asked for (CT_ENV_LANES, ct_parse_lanes; anything else is 1). */
static unsigned lanes_asked(void)
{
	int n;
	return ct_parse_lanes(getenv(CT_ENV_LANES), &n) == 0 ? (unsigned)n : 1;
}

/* Under a memory limit (ulimit -v or -d), one lane: the lanes' stacks and buffers (a megabyte or
 * two) are the program's to have (README says so; a NOTE would be a warning in every report of a
 * program run so). */
static unsigned lanes_allowed(unsigned asked)
{
	if (w.agg_ns) /* the aggregator is the writer's alone */
		return 1;
	return asked > 1 && ct_headroom() != UINT64_MAX ? 1 : asked;
}

/* The lane threads (after the file is open, before the writer starts): without them, one lane, and
 * an info NOTE says why. */
static int start_lanes(void)
{
	static const char why[] = "one lane, not the lanes asked for: their threads could not be made";
	if (w.lanes == 1 || ct_lanes_start() == 0)
		return 0;
	w.lanes = 1;
	note(CT_NOTE_INFO, why, sizeof(why) - 1);
	return reset_matcher(1);
}

#define NO_LANES "one lane, not the lanes asked for: the memory for their compressors was not to be had"

/* Takes the trace file (output.c) and writes its first records. */
static int open_file(int fd)
{
	int rc = ct_output_open(fd, stop_tracing);
	if (rc < 0)
		return rc;
	w.start_ns = w.last_time_ns = w.last_sample_ns = w.last_flush_ns = ct_now_ns();
	w.time_us = w.bytes_since_sample = 0;
	w.frames = CT_STACK_FIRST;
	memset(w.noted, 0, sizeof(w.noted));
	w.warned = w.classified = 0;
	w.out.len = 0;
	w.out.last_ip = 0;
	w.out.dropped = 0;
	w.out.grow = grow_out;
	if (!w.late_registered) {
		for (unsigned k = 0; k < CT_MATCH_LANES_MAX; k++)
			ct_match_stream_add(&w.late[k], k);
		w.late_registered = 1;
	}
	in_main_stack(0); /* looked up now, before the lanes may ask */
	int no_lanes = w.lanes > 1 && reset_matcher(w.lanes) < 0; /* their compressors: one lane */
	if (no_lanes)
		w.lanes = 1;
	if ((w.lanes == 1 && reset_matcher(1) < 0) || !ct_rec_room(&w.out, OUT_FIRST) || map_stack() < 0 ||
	    ct_agg_reset() < 0)
		return -ENOMEM;
	ct_output_compress(COMPRESSOR_SPARE, (int)w.lanes);
	if (w.agg_ns)
		ct_rec_header_min(&w.out, CTRACK_FORMAT_AGG_MIN);
	else if (ct_sampler.rate) /* its min_version, 8, covers ZEPOCH's too */
		ct_rec_header_min(&w.out, CTRACK_FORMAT_SAMPLING_MIN);
	else if (attached) /* min_version 8 as well */
		ct_rec_header_min(&w.out, CTRACK_FORMAT_ATTACH_MIN);
	else if (w.lanes > 1)
		ct_rec_header_min(&w.out, CTRACK_FORMAT_ZEPOCH_MIN);
	else
		ct_rec_header(&w.out);
	emit_process();
	if (attached)
		emit_attach();
	if (ct_sampler.rate)
		ct_rec_sampling(&w.out, ct_sampler.rate, ct_sampler.seed);
	if (w.agg_ns)
		ct_rec_aggregate(&w.out, w.agg_ns / 1000);
	char text[320];
	size_t n = ct_output_rung_note(text, sizeof(text));
	if (n)
		note(CT_NOTE_INFO, text, n);
	if (no_lanes)
		note(CT_NOTE_INFO, NO_LANES, sizeof(NO_LANES) - 1);
	ct_modules_reset();
	ct_modules_sync(&w.out);
	ct_output_write(&w.out, CT_OUT_FLUSH);
	return ct_output_ok() ? 0 : -EIO;
}

int ct_shim_thread(pthread_t *t, void *stack, size_t size, void *(*fn)(void *), void *arg, const char *name,
                   int cells)
{
	sigset_t all, old;
	pthread_attr_t attr;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* the program's signals are not ours */
	int rc = pthread_attr_init(&attr);
	if (rc == 0) {
		rc = pthread_attr_setstack(&attr, stack, size);
		int saved = ct_in_shim;
		ct_in_shim = cells ? CT_GUARD_CELL : saved + 1;
		if (rc == 0)
			rc = pthread_create(t, &attr, fn, arg);
		ct_in_shim = saved;
		pthread_attr_destroy(&attr);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc == 0)
		pthread_setname_np(*t, name);
	return -rc;
}

static int start_thread(void)
{
	pthread_sigmask(SIG_SETMASK, NULL, &w.program_mask);
	atomic_store(&w.stopped, 0);
	int rc = ct_shim_thread(&w.thread, w.stack, WRITER_STACK, writer_main, NULL, "ctrack-writer", 0);
	if (rc)
		return rc;
	w.running = 1;
	return 0;
}

/* Tracing cannot start (out of memory, no thread): the trace ends at once with a NOTE saying why
 * (written without memory when need be), the shim's memory goes back to the system, and the program
 * runs on untraced. */
static void give_up(int err)
{
	char buf[320];
	struct ct_text t = ct_text_in(buf, sizeof(buf));
	const char *why = strerrordesc_np(err);
	ct_text_add(&t, "tracing could not start (");
	ct_text_add(&t, why ? why : "unknown error");
	ct_text_add(&t, "; a memory limit such as ulimit -d or -v?): the program ran untraced");
	ct_output_end_with_note(t.s, t.len);
	release_memory();
	ct_arena_unmap(w.stack, WRITER_STACK);
	w.stack = NULL;
}

/* The launcher's status page (common/status.h), with --follow-children: mapped by every image that
 * starts a writer, inherited by its forked children, which may have no descriptor to open it. */
static struct ct_status_page *status_page;

/* The file's first records, the lanes and the thread; when one fails, give_up. 0 or -errno. */
static int start_writing(int fd)
{
	int rc = open_file(fd);
	if (rc == 0)
		rc = start_lanes();
	if (rc == 0)
		rc = start_thread();
	if (rc < 0)
		give_up(-rc);
	return rc;
}

/* No request is pending or served, no crash under way (a new writer after a fork or a detach). */
static void forget_requests(void)
{
	atomic_store(&w.req, 0);
	atomic_store(&w.done, 0);
	atomic_store(&w.crash, 0);
	atomic_store(&w.crash_done, 0);
	atomic_store(&w.crash_walking, 0);
	atomic_store(&w.crash_walked, 0);
}

/* The settings a writer takes at its start (an attach's come from the launcher, aggregate.h). */
static void take_settings(void)
{
	w.agg_ns = ct_agg_interval_ms() * 1000000ull;
	w.lanes = lanes_allowed(lanes_asked());
}

int ct_writer_start(int fd)
{
	status_page = ct_status_attach(getenv(CT_ENV_STATUS));
	take_settings();
	return start_writing(fd);
}

/* Every ring is read from where its tail is, by a drain that has announced nothing yet. */
static void forget_drains(void)
{
	for (struct ct_ring *r = ct_ring_list(); r; r = r->next)
		for (unsigned k = 0; r->consumer_ready && k <= CT_MATCH_LANES_MAX; k++) {
			struct ct_drain *d = ct_drain_at(r, k);
			d->announced = d->blocked = d->settling = 0;
			atomic_store(&d->settled, 0);
			atomic_store(&d->pos, atomic_load(&r->tail));
		}
}

void ct_writer_after_fork_child(int fd)
{
	int err = errno; /* why fd is -1: the tracker's open of the child's trace left it */
	pthread_mutex_init(&req_lock, NULL);
	atomic_store(&req_owner, 0);
	pthread_mutex_init(&late_lock, NULL);
	pthread_mutex_init(&life_lock, NULL);
	w.running = 0;
	forget_requests();
	atomic_store(&w.main_gone, 0);
	ct_output_drop();          /* the parent's file: never written by a child */
	if (fd < 0 && status_page) /* a followed child that could not create its trace */
		ct_status_note(status_page, err);
	if (fd < 0)
		return;
	/* A fresh buffer and context (open_file resets the matcher): what the parent's writer was
	 * doing at the fork is not ours, nor which of its threads it had announced. */
	w.out.data = NULL;
	w.out.cap = w.out.len = 0;
	ct_lanes_after_fork_child();
	forget_drains(); /* the parent's lanes are gone */
	if (start_writing(fd) < 0)
		atomic_store(&ct_state, CT_OFF);
}

void ct_writer_sync(void)
{
	struct request q = {.op = REQ_SYNC};
	request(&q, NULL);
}

int ct_writer_exec(const char *path)
{
	struct request q = {.op = REQ_EXEC, .text = path};
	int held = 0;
	request_held(&q, NULL, &held);
	return held;
}

void ct_writer_exec_failed(void)
{
	request_unlock();
}

void ct_writer_mark(const char *name)
{
	struct request q = {.op = REQ_MARK, .text = name};
	request(&q, NULL);
}

int ct_writer_check(const void *sp, uint64_t lost[CT_CLASSES], uint64_t blocks[CT_CLASSES])
{
	struct request q = {.op = REQ_CHECK};
	if (request(&q, sp) < 0 || q.failed)
		return -1;
	memcpy(lost, q.lost, sizeof(q.lost));
	memcpy(blocks, q.blocks, sizeof(q.blocks));
	return 0;
}

void ct_writer_finish(const void *sp)
{
	pthread_mutex_lock(&life_lock);
	if (w.running) {
		struct request q = {.op = REQ_FINISH};
		request(&q, sp);
		pthread_join(w.thread, NULL);
		w.running = 0;
	}
	pthread_mutex_unlock(&life_lock);
}

size_t ct_writer_releasable(void)
{
	return ct_output_bytes() + ct_match_bytes() + w.out.cap + (w.stack ? WRITER_STACK : 0) +
	       ct_lanes_bytes() + ct_agg_bytes();
}

int ct_writer_give_back(uint64_t size)
{
	int rc = 0;
	if (on_writer())
		return -1;
	pthread_mutex_lock(&life_lock);
	if (w.running) { /* else another thread did it, or the trace ended */
		struct request q = {.op = REQ_STOP, .size = size};
		rc = request(&q, NULL);
		if (rc == 0) {
			pthread_join(w.thread, NULL);
			w.running = 0;
			ct_arena_unmap(w.stack, WRITER_STACK);
			w.stack = NULL;
			ct_lanes_release(); /* their threads were stopped by the request */
		}
	}
	pthread_mutex_unlock(&life_lock);
	return rc;
}

void ct_writer_late(const uint64_t *ev)
{
	pthread_mutex_lock(&late_lock);
	if (ct_output_ok()) {
		emit_frames();
		if (ct_lanes() == 1) {
			ct_match_event(&w.late[0], ev, 0);
			ct_match_settle(&w.late[0]);
		} else { /* every lane's, the lane threads stopped */
			ct_lanes_late(w.late, ev);
		}
		collect_lanes();
		agg_point();
		emit_end();
	}
	pthread_mutex_unlock(&late_lock);
}

/* A later attach: the writer of the last one ended at its detach (or never started: the first
 * starts as at start-up); what its threads published after its last drain belongs to no trace. */
int ct_writer_attach(int fd)
{
	pthread_mutex_lock(&life_lock);
	attached = 1;
	if (!detached) {
		int rc = ct_writer_start(fd);
		pthread_mutex_unlock(&life_lock);
		return rc;
	}
	pthread_join(w.thread, NULL);
	detached = 0;
	forget_requests();
	for (struct ct_ring *r = ct_ring_list(); r; r = r->next)
		atomic_store(&r->tail, atomic_load(&r->head));
	forget_drains();
	take_settings(); /* this attach's, not the last one's */
	int rc = start_writing(fd);
	pthread_mutex_unlock(&life_lock);
	return rc;
}
