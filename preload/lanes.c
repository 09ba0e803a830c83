/* SPDX-License-Identifier: MIT */
/* The matcher's lanes on threads of their own (match.h, ARCHITECTURE.md): the writer, the orderer,
 * decides the order of the events and tells the lanes step by step; every lane applies them to its
 * own addresses and compresses its records itself (lanezip.h), and the writer writes the lanes'
 * parts of each epoch as a ZEPOCH record, which readers merge by event (epoch.h). */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "drain.h"
#include "lanezip.h"
#include "rules.h"
#include "writer.h"

#define LANE_STACK (256u << 10)
#define GUARD_PAGE 4096
#define OUT_FIRST (64u << 10)
#define STEPS (1u << 14)        /* the orderer's steps not yet applied by every lane: 256 KiB */
#define EPOCH_EVENTS (1u << 15) /* an epoch ends after this many events, */
#define EPOCH_NS 1000000        /* or 1 ms, or at a flush or a stop */
#define IDLE_WAIT_NS 2000000    /* an idle lane looks again after 2 ms, or when woken */
/* The lanes' compressors' windows: 1 MiB of a lane's records (about 1.5 MiB of memory each), and
 * 64 KiB of the orderer's TIME and SAMPLE records, which are few. */
#define LANE_WINDOW_LOG 20
#define ORDER_WINDOW_LOG 16

_Static_assert(CT_LANES_MAX + 1 <= CT_EPOCH_LANES_MAX && CT_LANES_MAX <= CT_MATCH_LANES_MAX,
               "an EPOCH holds the orderer's run and every lane's");

/* What the orderer did, for the lanes to do the same in the same order. */
enum { STEP_RUN, STEP_SETTLE, STEP_HELD, STEP_END };
struct step {
	struct ct_ring *r;
	uint32_t n; /* RUN: events of r; SETTLE: the ring's generation */
	uint32_t kind;
};

struct lane {
	pthread_t thread;
	void *stack;
	struct ct_run cur;     /* the epoch being made */
	struct ct_lanezip zip; /* the epoch before, compressed, until the orderer has written it (ready) */
	_Atomic int ready, parked;
	_Atomic pid_t tid;
	_Atomic uint64_t taken; /* steps applied */
	uint64_t event;         /* events applied, in the orderer's numbering */
};

/* The orderer's own (the writer's): its run is the EPOCH's lane 0, its TIME and SAMPLE records
 * between the events; the lanes' are lanes 1 to n. */
static struct {
	unsigned n; /* lanes: 1 (the writer is the one lane, none of this runs), 2 or 4 */
	struct lane lane[CT_LANES_MAX];
	struct lane order_lane; /* its runs and its count of events; no thread, no stream */
	struct step *steps;
	_Atomic uint64_t published;
	_Atomic int park, stop, wake, sleeping;
	uint64_t epoch_first, epoch_ns; /* where and when the epoch started */
} L = {.n = 1};

static int grow(struct ct_rec_buf *b, size_t need)
{
	return ct_rec_grow_arena(b, need, OUT_FIRST);
}

unsigned ct_lanes(void)
{
	return L.n;
}

static void futex_wake(_Atomic int *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

static void futex_wait(_Atomic int *word, int value, long ns)
{
	struct timespec ts = {0, ns};
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, value, &ts, NULL, 0);
}

static void wake_lanes(void)
{
	if (L.n > 1 && !atomic_exchange(&L.wake, 1) && atomic_load(&L.sleeping))
		futex_wake(&L.wake);
}

/* ---- a lane's work: the orderer's steps, in order ---- */

static struct ct_drain *lane_drain(struct ct_ring *r, unsigned k)
{
	struct ct_drain *d = ct_drain_at(r, k);
	if (!d->registered) {
		ct_match_stream_add(&d->st, k);
		d->registered = 1;
	}
	return d;
}

/* The epoch ends: lane l compresses its records so far, which wait for the orderer's ZEPOCH (its
 * last epoch is written: the orderer ends one only then). */
static void hand_over(struct lane *l)
{
	ct_lanezip_put(&l->zip, &l->cur);
	ct_run_clear(&l->cur, l->event);
	atomic_store_explicit(&l->ready, 1, memory_order_release);
}

static void apply(unsigned k, const struct step *s)
{
	struct lane *l = &L.lane[k];
	switch (s->kind) {
	case STEP_RUN:
		ct_drain_run(s->r, lane_drain(s->r, k), &l->cur, &l->event, s->n);
		ct_drain_tail(s->r, L.n);
		break;
	case STEP_SETTLE: {
		struct ct_drain *d = lane_drain(s->r, k);
		ct_match_settle(&d->st);
		ct_run_mark(&l->cur, l->event++, 0);
		atomic_store(&d->settled, s->n + 1);
		break;
	}
	case STEP_HELD:
		for (struct ct_ring *r = ct_ring_list(); r; r = r->next)
			if (ct_drain_ready(r) && ct_drain_at(r, k)->registered)
				ct_match_write_held(&ct_drain_at(r, k)->st);
		ct_run_mark(&l->cur, l->event++, 0);
		break;
	case STEP_END:
		hand_over(l);
		break;
	}
}

/* Lane k applies the steps published (on its thread, until it is asked to park); returns how
 * many there were. */
static uint64_t follow(unsigned k, int own_thread)
{
	struct lane *l = &L.lane[k];
	uint64_t t = atomic_load_explicit(&l->taken, memory_order_relaxed);
	uint64_t p = atomic_load_explicit(&L.published, memory_order_acquire), n = p - t;
	for (; t < p && !(own_thread && atomic_load_explicit(&L.park, memory_order_relaxed)); t++) {
		apply(k, &L.steps[t % STEPS]);
		atomic_store_explicit(&l->taken, t + 1, memory_order_release);
	}
	return n;
}

static void idle(void)
{
	atomic_store(&L.sleeping, 1);
	if (!atomic_exchange(&L.wake, 0))
		futex_wait(&L.wake, 0, IDLE_WAIT_NS);
	atomic_store(&L.sleeping, 0);
}

static void *lane_main(void *arg)
{
	unsigned k = (unsigned)(uintptr_t)arg;
	struct lane *l = &L.lane[k];
	ct_in_shim = 1; /* whatever this thread allocates is the shim's, not the program's */
	atomic_store(&l->tid, (pid_t)syscall(SYS_gettid));
	for (;;) {
		if (atomic_load(&L.park)) {
			atomic_store(&l->parked, 1);
			while (atomic_load(&L.park) && !atomic_load(&L.stop))
				futex_wait(&L.park, 1, 10000000);
			if (atomic_load(&L.stop))
				break;
			atomic_store(&l->parked, 0);
			continue;
		}
		if (!follow(k, 1))
			idle();
	}
	return NULL;
}

/* ---- the orderer: its steps ---- */

static uint64_t slowest_taken(void)
{
	uint64_t lo = atomic_load(&L.published);
	for (unsigned k = 0; k < L.n; k++) {
		uint64_t t = atomic_load_explicit(&L.lane[k].taken, memory_order_acquire);
		lo = t < lo ? t : lo;
	}
	return lo;
}

int ct_lanes_absorb(void)
{
	int steps = 0;
	for (unsigned k = 0; k < L.n; k++)
		if (atomic_load(&L.lane[k].parked)) /* one that did not answer is not ours to touch */
			steps += (int)follow(k, 0);
	return steps;
}

/* Publishes a step, once every lane has room for it (parked lanes: the orderer does their work). */
static void push(unsigned kind, struct ct_ring *r, uint32_t n)
{
	uint64_t p = atomic_load_explicit(&L.published, memory_order_relaxed);
	while (p - slowest_taken() >= STEPS) {
		if (atomic_load(&L.park)) {
			ct_lanes_absorb();
			continue;
		}
		wake_lanes();
		sched_yield();
	}
	L.steps[p % STEPS] = (struct step){r, n, kind};
	atomic_store_explicit(&L.published, p + 1, memory_order_release);
}

int ct_lanes_order(struct ct_ring *r, struct ct_drain *d, int ordered)
{
	int n = ct_drain_order(r, d, ordered);
	if (n > 0) {
		push(STEP_RUN, r, (uint32_t)n);
		L.order_lane.event += (uint64_t)n;
	}
	return n;
}

struct ct_rec_buf *ct_lanes_timeline(void)
{
	return &L.order_lane.cur.out;
}

void ct_lanes_mark0(void)
{
	ct_run_mark(&L.order_lane.cur, L.order_lane.event, 0);
}

/* A step that makes records in every lane (a flush's held ALLOCs, a dead thread's streams settled)
 * counts as an event: what the orderer writes after it (TIME, SAMPLE) follows the lanes' records. */
static void step_event(unsigned kind, struct ct_ring *r, uint32_t n)
{
	ct_run_mark(&L.order_lane.cur, L.order_lane.event++, 0);
	push(kind, r, n);
}

void ct_lanes_settle(struct ct_ring *r, struct ct_drain *d)
{
	step_event(STEP_SETTLE, r, atomic_load(&d->gen));
}

int ct_lanes_settled(struct ct_ring *r)
{
	uint32_t gen = atomic_load(&ct_drain_at(r, CT_DRAIN_ORDERER)->gen);
	for (unsigned k = 0; k < L.n; k++)
		if (atomic_load(&ct_drain_at(r, k)->settled) != gen + 1)
			return 0;
	return 1;
}

void ct_lanes_held(void)
{
	step_event(STEP_HELD, NULL, 0);
}

/* The orderer ends the epoch, if the one before is merged. */
static void end_epoch(void)
{
	struct lane *o = &L.order_lane;
	if (atomic_load_explicit(&o->ready, memory_order_relaxed))
		return;
	hand_over(o);
	push(STEP_END, NULL, 0);
	L.epoch_first = o->event;
	L.epoch_ns = ct_now_ns();
}

void ct_lanes_tick(int flush)
{
	uint64_t events = L.order_lane.event - L.epoch_first;
	if (flush || events >= EPOCH_EVENTS || (events && ct_now_ns() - L.epoch_ns >= EPOCH_NS))
		end_epoch();
	wake_lanes();
}

/* The lane of an EPOCH's lane e: the orderer's, then the lanes'. */
static struct lane *epoch_lane(unsigned e)
{
	return e == 0 ? &L.order_lane : &L.lane[e - 1];
}

/* Writes the ZEPOCH of every lane's last epoch, when all are in (or, with force, as far as they
 * are: a lane that did not answer gives nothing). Returns 1 if one was written. */
static int merge(struct ct_rec_buf *out, void (*define)(void), int force)
{
	const uint8_t *z[CT_EPOCH_LANES_MAX];
	size_t zlen[CT_EPOCH_LANES_MAX];
	int ready[CT_EPOCH_LANES_MAX], fresh[CT_EPOCH_LANES_MAX], any = 0;
	for (unsigned e = 0; e <= L.n; e++) {
		struct lane *l = epoch_lane(e);
		ready[e] = atomic_load_explicit(&l->ready, memory_order_acquire);
		if (!ready[e] && !force)
			return 0;
		z[e] = l->zip.z.data;
		zlen[e] = ready[e] ? l->zip.z.len : 0;
		fresh[e] = l->zip.fresh;
		any |= ready[e];
	}
	if (!any)
		return 0;
	define(); /* INFO and FRAME records first: the runs may name any id assigned so far */
	int written = ct_rec_zepoch(out, L.n + 1, z, zlen, fresh);
	for (unsigned e = 0; e <= L.n; e++)
		if (ready[e]) {
			struct ct_lanezip *zip = &epoch_lane(e)->zip;
			out->dropped += zip->dropped; /* a lane's records that did not fit */
			zip->dropped = 0;
			ct_lanezip_taken(zip, written);
			atomic_store_explicit(&epoch_lane(e)->ready, 0, memory_order_release);
		}
	return 1;
}

int ct_lanes_merge(struct ct_rec_buf *out, void (*define)(void))
{
	return L.n > 1 && merge(out, define, 0);
}

void ct_lanes_collect(struct ct_rec_buf *out, void (*define)(void))
{
	if (L.n == 1)
		return;
	ct_lanes_absorb();
	merge(out, define, 1); /* an epoch ended before: its runs are all in now */
	hand_over(&L.order_lane);
	for (unsigned k = 0; k < L.n; k++)
		if (atomic_load(&L.lane[k].parked) || atomic_load(&L.stop))
			hand_over(&L.lane[k]);
	merge(out, define, 1);
	L.epoch_first = L.order_lane.event;
}

void ct_lanes_late(struct ct_match_stream *late, const uint64_t *ev)
{
	uint64_t event = L.order_lane.event++;
	for (unsigned k = 0; k < L.n; k++) {
		int rc = ct_match_event(&late[k], ev, 0);
		ct_match_settle(&late[k]);
		ct_run_mark(&L.lane[k].cur, event, rc == CT_MATCH_DONE);
		L.lane[k].event = event + 1;
	}
}

/* ---- stops ---- */

int ct_lanes_park(int wait_ms)
{
	if (L.n == 1)
		return 0;
	atomic_store(&L.park, 1);
	atomic_store(&L.wake, 1);
	futex_wake(&L.wake);
	for (int i = 0; i < wait_ms * 20; i++) {
		unsigned parked = 0;
		for (unsigned k = 0; k < L.n; k++)
			parked += (unsigned)atomic_load(&L.lane[k].parked);
		if (parked == L.n)
			return 0;
		struct timespec ts = {0, 50000};
		nanosleep(&ts, NULL);
	}
	return -1;
}

void ct_lanes_resume(void)
{
	if (L.n == 1)
		return;
	atomic_store(&L.park, 0);
	futex_wake(&L.park);
}

/* ---- the threads ---- */

static int start_one(unsigned k)
{
	struct lane *l = &L.lane[k];
	if (!l->stack && (l->stack = ct_arena_map(LANE_STACK)))
		mprotect(l->stack, GUARD_PAGE, PROT_NONE);
	if (!l->stack)
		return -ENOMEM;
	char name[16] = "ctrack-lane0";
	name[11] = (char)('0' + k);
	return ct_shim_thread(&l->thread, l->stack, LANE_STACK, lane_main, (void *)(uintptr_t)k, name, 1);
}

void ct_lanes_sink(unsigned k, struct ct_match_sink *sink)
{
	sink->out = &L.lane[k].cur.out;
}

/* A lane's state for a new trace (its buffers kept), its compressor's stream new. 0, or -ENOMEM. */
static int reset(struct lane *l, int window_log)
{
	atomic_store(&l->tid, 0);
	ct_run_clear(&l->cur, 0);
	l->cur.out.grow = l->cur.marks.grow = grow;
	l->event = 0;
	atomic_store(&l->taken, 0);
	atomic_store(&l->ready, 0);
	atomic_store(&l->parked, 0);
	return ct_lanezip_open(&l->zip, window_log);
}

int ct_lanes_prepare(unsigned lanes)
{
	if (lanes > 1 && !L.steps && !(L.steps = ct_arena_map(STEPS * sizeof(*L.steps))))
		return -ENOMEM;
	atomic_store(&L.park, 0);
	atomic_store(&L.stop, 0);
	atomic_store(&L.published, 0);
	for (unsigned k = 0; k < lanes && lanes > 1; k++)
		if (reset(&L.lane[k], LANE_WINDOW_LOG) < 0)
			return -ENOMEM;
	if (lanes > 1 && reset(&L.order_lane, ORDER_WINDOW_LOG) < 0)
		return -ENOMEM;
	for (unsigned k = lanes > 1 ? lanes : 0; k < CT_LANES_MAX; k++) /* memory not to be used */
		ct_lanezip_release(&L.lane[k].zip);
	if (lanes == 1)
		ct_lanezip_release(&L.order_lane.zip);
	L.epoch_first = 0;
	L.epoch_ns = ct_now_ns();
	L.n = lanes;
	return 0;
}

void ct_lanes_after_fork_child(void)
{
	/* A lane that did not park at the fork may have been compressing: its compressor's copy is not
	 * to be trusted (left mapped, never touched: copy-on-write costs nothing). */
	for (unsigned k = 0; k < CT_LANES_MAX; k++)
		L.lane[k].zip = (struct ct_lanezip){0};
	L.order_lane.zip = (struct ct_lanezip){0};
}

/* Joins the threads of lanes [0, n). */
static void stop_threads(unsigned n)
{
	atomic_store(&L.stop, 1);
	atomic_store(&L.park, 1);
	futex_wake(&L.park);
	futex_wake(&L.wake);
	for (unsigned k = 0; k < n; k++)
		pthread_join(L.lane[k].thread, NULL);
}

int ct_lanes_start(void)
{
	int rc = 0;
	unsigned started = 0;
	while (started < L.n && (rc = start_one(started)) == 0)
		started++;
	if (rc) /* before any event: the caller goes on with one lane */
		stop_threads(started);
	return rc;
}

void ct_lanes_stop(void)
{
	if (L.n > 1 && !atomic_load(&L.stop))
		stop_threads(L.n);
}

static void release(struct lane *l)
{
	struct ct_rec_buf *b[] = {&l->cur.out, &l->cur.marks};
	for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++) {
		ct_arena_unmap(b[i]->data, b[i]->cap);
		*b[i] = (struct ct_rec_buf){0};
	}
	ct_arena_unmap(l->stack, LANE_STACK);
	l->stack = NULL;
	ct_lanezip_release(&l->zip);
}

void ct_lanes_release(void)
{
	for (unsigned k = 0; k < CT_LANES_MAX; k++)
		release(&L.lane[k]);
	release(&L.order_lane);
	ct_arena_unmap(L.steps, STEPS * sizeof(*L.steps));
	L.steps = NULL;
	L.n = 1;
}

int ct_lanes_is_lane(pid_t tid)
{
	for (unsigned k = 0; k < L.n && L.n > 1; k++)
		if (atomic_load(&L.lane[k].tid) == tid)
			return 1;
	return 0;
}

static size_t lane_bytes(const struct lane *l)
{
	return l->cur.out.cap + l->cur.marks.cap + ct_lanezip_bytes(&l->zip) + (l->stack ? LANE_STACK : 0);
}

size_t ct_lanes_bytes(void)
{
	size_t n = (L.steps ? STEPS * sizeof(*L.steps) : 0) + lane_bytes(&L.order_lane);
	for (unsigned k = 0; k < CT_LANES_MAX; k++)
		n += lane_bytes(&L.lane[k]);
	return n;
}
