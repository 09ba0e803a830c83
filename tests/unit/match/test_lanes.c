/* SPDX-License-Identifier: MIT */
/* The matcher split into lanes (preload/match.c) and their records merged by event (preload/epoch.c),
 * against one lane: random streams of events from three threads, as the tracker publishes them
 * (allocations, frees of any thread's blocks, temporaries, reallocs that move, stay, fail or free,
 * frees of addresses never allocated), are applied once by one lane and once by 2, 4 and 8 lanes:
 * lane 0 orders the events (the writer's way: ring by ring, a ring whose next event waits for
 * another's left for later) and the other lanes apply them in its order, cut into epochs. The
 * totals and the live blocks must be the same, and the records, read as a reader reads the EPOCH
 * records (RECENT per lane, alloc infos resolved to their size and stack), must be one lane's,
 * record by record in the same order: with the lanes run one after another, and on threads of
 * their own following lane 0 as it goes. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/format.h"
#include "epoch.h"
#include "event.h"
#include "match.h"
#include "rec_heap.h"
#include "../xorshift.h"

#define THREADS 3
#define OPS 40000
#define POOL 600 /* heap addresses */
#define MAX_WORDS (OPS * 9)
#define MAX_EVENTS (OPS * 3)

static int failures;

/* ---- the program: a simulated allocator and the events its threads publish ---- */

struct ring {
	uint64_t w[MAX_WORDS];
	size_t n;
};
static struct ring rings[THREADS];
/* Every event in the order the program published them (the sequence numbers' order). */
static struct {
	uint32_t thread, at;
} events[MAX_EVENTS];
static uint32_t n_events;

struct block {
	uint64_t p, size;
	int live;
};
static struct block heap[POOL];
static int last_alloc[THREADS] = {-1, -1, -1};

static void push(int t, enum ct_event kind, uint64_t p, uint64_t a, uint64_t b)
{
	struct ring *r = &rings[t];
	uint64_t ev[3] = {(uint64_t)kind << CT_EV_SHIFT | p, a, b};
	events[n_events].thread = (uint32_t)t;
	events[n_events++].at = (uint32_t)r->n;
	for (unsigned i = 0; i < ct_event_words(ev[0]); i++)
		r->w[r->n++] = ev[i];
}

/* Heap addresses 256 bytes apart, so that they fall into every sequence bucket and lane. */
static uint64_t address(int i)
{
	return 0x7f1000000000ull + 256 * (uint64_t)i;
}

static int free_slot(void)
{
	for (int tries = 0; tries < 64; tries++) {
		int i = (int)(ct_test_random() % POOL);
		if (!heap[i].live)
			return i;
	}
	return -1;
}

static int live_slot(void)
{
	for (int tries = 0; tries < 64; tries++) {
		int i = (int)(ct_test_random() % POOL);
		if (heap[i].live)
			return i;
	}
	return -1;
}

static void do_alloc(int t, int i)
{
	heap[i].live = 1;
	heap[i].size = 16 * (1 + ct_test_random() % 6);
	push(t, CT_EV_ALLOC, address(i), heap[i].size,
	     (ct_test_random() % 5) | (uint64_t)ct_seq_take(address(i)) << 32);
	last_alloc[t] = i;
}

static void do_free(int t, int i)
{
	push(t, CT_EV_FREE, address(i), ct_seq_take(address(i)), 0x40 + (uint64_t)t);
	heap[i].live = 0;
}

/* realloc(old): moves to a free slot, stays in place, fails, or frees (size 0). */
static void do_realloc(int t, int old)
{
	push(t, CT_EV_RBEGIN, address(old), ct_seq_take(address(old)), 0x80 + (uint64_t)t);
	uint64_t how = ct_test_random() % 8;
	if (how == 0) {
		push(t, CT_EV_RFAIL, address(old), ct_seq_take(address(old)), 0);
		return;
	}
	if (how == 1) {
		heap[old].live = 0;
		push(t, CT_EV_RFREE, address(old), 0, 0);
		return;
	}
	int to = how < 4 ? old : free_slot();
	if (to < 0)
		to = old;
	heap[old].live = 0;
	do_alloc(t, to);
}

static void odd_free(int t, uint64_t p, uint64_t ra)
{
	push(t, CT_EV_FREE, p, ct_seq_take(p), ra);
}

static void program(void)
{
	for (int op = 0; op < OPS; op++) {
		int t = (int)(ct_test_random() % THREADS);
		uint64_t what = ct_test_random() % 100;
		int i;
		if (what < 40 && (i = free_slot()) >= 0)
			do_alloc(t, i);
		else if (what < 60 && (i = live_slot()) >= 0)
			do_free(t, i); /* any thread's block */
		else if (what < 75 && (i = last_alloc[t]) >= 0 && heap[i].live)
			do_free(t, i); /* often a temporary */
		else if (what < 90 && (i = live_slot()) >= 0)
			do_realloc(t, i);
		else if (what < 93) /* never allocated: counted, not written */
			odd_free(t, 0x7f2000000000ull + 16 * (ct_test_random() % 1000), 0x50);
		else if (what < 94) /* a global's address: an INVALID record */
			odd_free(t, 0x800000 + 16 * (ct_test_random() % 100), 0x60);
	}
}

/* ---- the matcher's sinks ---- */

static uint32_t define_stacks(uint32_t upto, void *arg)
{
	(void)arg;
	return upto;
}

static uint32_t intern(const uint64_t *ips, int n, int truncated, void *arg)
{
	(void)arg, (void)truncated;
	return (uint32_t)(ips[0] & 0xff) + 100 * (uint32_t)n;
}

static int classify(uint64_t p, void *arg)
{
	(void)arg;
	return p < 0x1000000 ? CT_WHERE_STATIC : CT_WHERE_HEAP;
}

/* ---- a run: lane 0 orders, the other lanes follow its steps ---- */

enum mode { ONE_AFTER_ANOTHER, THREADED };
#define EPOCH_EVENTS 700                                       /* lane 0 ends an epoch every 700 events */
#define MAX_STEPS (MAX_EVENTS + MAX_EVENTS / EPOCH_EVENTS + 8) /* at most */
#define MAX_EPOCHS (MAX_EVENTS / EPOCH_EVENTS + 8)

struct step {
	int thread; /* -1: the epoch ends; -2: the end */
	uint32_t n; /* events of the thread's ring */
};

struct run {
	unsigned lanes;
	struct ct_rec_buf trace; /* INFO records and EPOCH records (one lane: every record) */
	struct ct_run cur[CT_MATCH_LANES_MAX];
	struct ct_run done[MAX_EPOCHS][CT_MATCH_LANES_MAX]; /* each lane's runs, epoch by epoch */
	_Atomic uint32_t epochs_done[CT_MATCH_LANES_MAX];
	uint64_t event[CT_MATCH_LANES_MAX];
	size_t at[THREADS][CT_MATCH_LANES_MAX]; /* words of each ring applied by each lane */
	size_t order_at[THREADS];               /* and taken by the orderer (several lanes) */
	uint64_t order_event;                   /* the events it took */
	struct ct_match_stream st[THREADS][CT_MATCH_LANES_MAX];
	struct step steps[MAX_STEPS];
	_Atomic uint32_t published;
	uint32_t epochs;
	struct ct_rec_end end;
	uint64_t live_blocks, live_bytes, live_sum;
};

static void count_live(uint64_t p, uint64_t size, uint32_t info, void *arg)
{
	struct run *r = arg;
	(void)info;
	r->live_blocks++;
	r->live_bytes += size;
	r->live_sum += p * 31 + size;
}

static void publish(struct run *r, int thread, uint32_t n)
{
	uint32_t p = atomic_load(&r->published);
	r->steps[p] = (struct step){thread, n};
	atomic_store(&r->published, p + 1);
}

/* A run for an epoch that starts at event. */
static struct ct_run fresh_run(uint64_t event)
{
	struct ct_run run = {.out = {.grow = ct_rec_grow_heap}, .marks = {.grow = ct_rec_grow_heap}};
	ct_run_clear(&run, event);
	return run;
}

/* Lane lane's run of the epoch ends: kept, and a fresh one begun. */
static void end_epoch(struct run *r, unsigned lane)
{
	uint32_t e = atomic_load(&r->epochs_done[lane]);
	r->done[e][lane] = r->cur[lane];
	r->cur[lane] = fresh_run(r->event[lane]);
	atomic_store(&r->epochs_done[lane], e + 1);
}

/* Up to limit events of thread t's ring in lane lane, each event's records marked; one lane alone
 * stops at one that must wait. Returns the events applied. */
static uint32_t apply(struct run *r, unsigned lane, int t, uint32_t limit)
{
	uint32_t n = 0;
	while (n < limit && r->at[t][lane] < rings[t].n) {
		const uint64_t *ev = &rings[t].w[r->at[t][lane]];
		int rc = ct_match_event(&r->st[t][lane], ev, r->lanes == 1);
		if (rc == CT_MATCH_BLOCKED)
			break;
		if (r->lanes > 1)
			ct_run_mark(&r->cur[lane], r->event[lane]++, rc == CT_MATCH_DONE);
		r->at[t][lane] += ct_event_words(ev[0]);
		n++;
	}
	return n;
}

/* The orderer: the events of thread t's ring whose turn it is (ct_match_turn), up to one that must
 * wait; returns how many. */
static uint32_t order(struct run *r, int t)
{
	uint32_t n = 0;
	for (; r->order_at[t] < rings[t].n; n++) {
		const uint64_t *ev = &rings[t].w[r->order_at[t]];
		if (ct_match_turn(ev, 1) == CT_MATCH_BLOCKED)
			break;
		r->order_at[t] += ct_event_words(ev[0]);
	}
	r->order_event += n;
	return n;
}

/* The writer's way: every ring to its end, ring by ring, a ring whose next event waits for another
 * ring's left until that one has been applied: one lane applies them itself; with several, the
 * orderer publishes its steps for the lanes and ends an epoch every EPOCH_EVENTS events. */
static void lead(struct run *r)
{
	int left = THREADS;
	uint32_t since = 0;
	while (left) {
		int progress = 0;
		left = 0;
		for (int t = 0; t < THREADS; t++) {
			uint32_t n = r->lanes == 1 ? apply(r, 0, t, UINT32_MAX) : order(r, t);
			if (n && r->lanes > 1)
				publish(r, t, n);
			progress |= n > 0;
			since += n;
			left += (r->lanes == 1 ? r->at[t][0] : r->order_at[t]) < rings[t].n;
			if (since >= EPOCH_EVENTS && r->lanes > 1) {
				publish(r, -1, 0);
				since = 0;
			}
		}
		if (left && !progress) {
			printf("FAIL the writer waits for a sequence number that never comes\n");
			failures++;
			return;
		}
	}
}

/* Lane lane applies the orderer's steps, as they are published, up to the end. */
static void follow(struct run *r, unsigned lane, uint32_t steps)
{
	for (uint32_t i = 0; i < steps;) {
		if (i == atomic_load(&r->published)) {
			sched_yield();
			continue;
		}
		const struct step *s = &r->steps[i++];
		if (s->thread == -2)
			return;
		if (s->thread < 0) {
			end_epoch(r, lane);
			continue;
		}
		if (apply(r, lane, s->thread, s->n) != s->n) {
			printf("FAIL lane %u could not apply a step of the orderer\n", lane);
			exit(1);
		}
	}
}

struct lane_job {
	struct run *r;
	unsigned lane;
};

static void *lane_thread(void *arg)
{
	struct lane_job *j = arg;
	follow(j->r, j->lane, MAX_STEPS); /* up to the end */
	return NULL;
}

/* The lanes on threads of their own while the main thread orders (its last steps an epoch end and
 * the end). */
static void run_threaded(struct run *r)
{
	pthread_t th[CT_MATCH_LANES_MAX];
	struct lane_job job[CT_MATCH_LANES_MAX];
	for (unsigned i = 0; i < r->lanes; i++) {
		job[i] = (struct lane_job){r, i};
		pthread_create(&th[i], NULL, lane_thread, &job[i]);
	}
	lead(r);
	publish(r, -1, 0);
	publish(r, -2, 0);
	for (unsigned i = 0; i < r->lanes; i++)
		pthread_join(th[i], NULL);
}

static void start(struct run *r, unsigned lanes, const uint32_t *counters_before)
{
	struct ct_match_sink sinks[CT_MATCH_LANES_MAX];
	r->lanes = lanes;
	r->trace = (struct ct_rec_buf){.grow = ct_rec_grow_heap};
	for (unsigned i = 0; i < lanes; i++) {
		r->cur[i] = fresh_run(0);
		sinks[i] = (struct ct_match_sink){lanes == 1 ? &r->trace : &r->cur[i].out,
		                                  NULL,
		                                  NULL,
		                                  define_stacks,
		                                  NULL,
		                                  intern,
		                                  classify};
	}
	for (int t = 0; t < THREADS; t++) /* each run its own streams (the matcher keeps them all) */
		for (unsigned i = 0; i < lanes; i++)
			ct_match_stream_add(&r->st[t][i], i);
	/* The expectations start where the counters stood before the program took its numbers. */
	uint32_t after[CT_SEQ_BUCKETS];
	for (uint32_t b = 0; b < CT_SEQ_BUCKETS; b++) {
		after[b] = atomic_load(&ct_seq[b]);
		atomic_store(&ct_seq[b], counters_before[b]);
	}
	if (ct_match_reset(sinks, lanes) < 0) {
		printf("FAIL ct_match_reset with %u lanes\n", lanes);
		exit(1);
	}
	for (uint32_t b = 0; b < CT_SEQ_BUCKETS; b++)
		atomic_store(&ct_seq[b], after[b]);
}

/* Appends to out the runs[0 .. lanes) and their marks as they are, in an EPOCH record's layout but
 * with the lanes' one-byte marks (ct_put_zmark), which decode_epoch reads: the shim's lanes compress
 * the same into a ZEPOCH's parts, which readers merge the same way. */
static void epoch_write(struct ct_rec_buf *out, struct ct_run *const *runs, unsigned lanes)
{
	const uint8_t *run[CT_EPOCH_LANES_MAX], *marks[CT_EPOCH_LANES_MAX];
	size_t len[CT_EPOCH_LANES_MAX], marks_len[CT_EPOCH_LANES_MAX], any = 0;
	for (unsigned l = 0; l < lanes; l++) {
		run[l] = runs[l]->out.data, len[l] = runs[l]->out.len;
		marks[l] = runs[l]->marks.data, marks_len[l] = runs[l]->marks.len;
		any |= len[l];
	}
	if (any)
		ct_rec_epoch(out, lanes, run, len, marks, marks_len);
}

/* The trace: for each epoch, the INFO records its runs may name, then its EPOCH record (the lanes'
 * runs only: the writer's has its TIME and SAMPLE records, which the test has none of). */
static void assemble(struct run *r)
{
	struct ct_match_sink defs = {&r->trace, NULL, NULL, define_stacks, NULL, intern, classify};
	r->epochs = atomic_load(&r->epochs_done[0]);
	for (uint32_t e = 0; e < r->epochs; e++) {
		struct ct_run *runs[CT_MATCH_LANES_MAX];
		for (unsigned i = 0; i < r->lanes; i++)
			runs[i] = &r->done[e][i];
		ct_match_define_infos(&defs);
		epoch_write(&r->trace, runs, r->lanes);
		if (r->trace.dropped) {
			printf("FAIL no memory for an EPOCH\n");
			exit(1);
		}
		for (unsigned i = 0; i < r->lanes; i++) {
			free(r->done[e][i].out.data);
			free(r->done[e][i].marks.data);
		}
	}
}

static void run(struct run *r, unsigned lanes, const uint32_t *counters_before, enum mode mode)
{
	start(r, lanes, counters_before);
	if (mode == THREADED && lanes > 1) {
		run_threaded(r);
	} else {
		lead(r);
		if (lanes > 1)
			publish(r, -1, 0);
		for (unsigned i = 0; i < lanes && lanes > 1; i++)
			follow(r, i, atomic_load(&r->published));
	}
	/* The end: each thread's stream settled in every lane, thread by thread (as one lane's are,
	 * in the order of its list: the last registered first). */
	for (int t = THREADS; t-- > 0;)
		for (unsigned i = 0; i < lanes; i++) {
			ct_match_settle(&r->st[t][i]);
			if (lanes > 1)
				ct_run_mark(&r->cur[i], r->order_event + (uint64_t)(THREADS - t), 0);
		}
	for (unsigned i = 0; lanes > 1 && i < lanes; i++)
		end_epoch(r, i);
	ct_match_totals(&r->end);
	ct_match_live(count_live, r);
	if (lanes > 1)
		assemble(r);
}

/* ---- the records, as lines, in order ---- */

struct info {
	uint64_t size, stack;
};

struct lines {
	char **line;
	size_t n, cap;
};

static void add_line(struct lines *l, const char *s)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 1024;
		l->line = realloc(l->line, l->cap * sizeof(*l->line));
	}
	l->line[l->n++] = strdup(s);
}

/* What a reader keeps: the infos defined so far, and per lane the last ALLOC records' infos. */
struct reading {
	struct info infos[1 << 16];
	uint32_t n_infos;
	uint32_t recent[CT_EPOCH_LANES_MAX][CT_RECENT_WINDOW];
	uint32_t allocs[CT_EPOCH_LANES_MAX];
};

/* One record at p (of lane's), into l; returns its length (0: corrupt). */
static size_t decode_one(struct reading *g, unsigned lane, const uint8_t *p, const uint8_t *end,
                         struct lines *l)
{
	const uint8_t *start = p;
	unsigned tag = *p;
	uint64_t a = 0, b = 0;
	char s[96];
	if (ct_tag_is_short(tag)) {
		p += ct_get_short_event(p, end, &tag, &a);
	} else {
		p++;
		p += ct_get_varint(p, end, &a);
		if (tag == CT_REC_INFO) {
			p += ct_get_varint(p, end, &b);
			g->infos[g->n_infos++] = (struct info){a, b};
			return (size_t)(p - start);
		}
		if (tag == CT_REC_INVALID) {
			snprintf(s, sizeof(s), "INVALID %u/%u", p[0], p[1]);
			add_line(l, s);
			return (size_t)(p + a - start);
		}
	}
	if (tag == CT_REC_RECENT) {
		a = g->recent[lane][(g->allocs[lane] - (uint32_t)a) % CT_RECENT_WINDOW];
		tag = CT_REC_FREE;
	}
	if (tag == CT_REC_TEMPFREE)
		tag = CT_REC_FREE;
	if (tag == CT_REC_ALLOC)
		g->recent[lane][g->allocs[lane]++ % CT_RECENT_WINDOW] = (uint32_t)a;
	if (a >= g->n_infos) {
		printf("FAIL a record names alloc info %llu before its INFO record\n", (unsigned long long)a);
		failures++;
		return 0;
	}
	snprintf(s, sizeof(s), "%s %" PRIu64 "/%" PRIu64, ct_record_name(tag), g->infos[a].size,
	         g->infos[a].stack);
	add_line(l, s);
	return (size_t)(p - start);
}

/* epoch_write's record's payload [p, end): the lanes' records mark by mark, the lowest key first (the
 * lower lane's between equal keys), then each run's bytes after its last mark. */
static void decode_epoch(struct reading *g, const uint8_t *p, const uint8_t *end, struct lines *l)
{
	uint64_t lanes = 0, len[2 * CT_EPOCH_LANES_MAX] = {0}, key[CT_EPOCH_LANES_MAX] = {0};
	uint64_t bytes[CT_EPOCH_LANES_MAX] = {0};
	const uint8_t *run[CT_EPOCH_LANES_MAX], *run_end[CT_EPOCH_LANES_MAX], *mark[CT_EPOCH_LANES_MAX];
	const uint8_t *mark_end[CT_EPOCH_LANES_MAX];
	p += ct_get_varint(p, end, &lanes);
	for (unsigned i = 0; i < 2 * lanes; i++)
		p += ct_get_varint(p, end, &len[i]);
	for (unsigned i = 0; i < lanes; i++, p += len[i - 1]) {
		run[i] = p;
		run_end[i] = p + len[i];
	}
	for (unsigned i = 0; i < lanes; i++, p += len[lanes + i - 1]) {
		mark[i] = p;
		mark_end[i] = p + len[lanes + i];
	}
	for (;;) {
		int best = -1;
		uint64_t best_key = 0;
		for (unsigned i = 0; i < lanes; i++) {
			if (mark[i] == mark_end[i])
				continue;
			uint64_t delta = 0, b = 0;
			ct_get_zmark(mark[i], mark_end[i], &delta, &b);
			if (best < 0 || key[i] + delta < best_key)
				best = (int)i, best_key = key[i] + delta;
		}
		if (best < 0)
			break;
		uint64_t delta = 0;
		int k = ct_get_zmark(mark[best], mark_end[best], &delta, &bytes[best]);
		if (k <= 0) {
			printf("FAIL a mark cut short\n");
			failures++;
			return;
		}
		mark[best] += k;
		key[best] += delta;
		for (const uint8_t *lim = run[best] + bytes[best]; run[best] < lim;) {
			size_t k = decode_one(g, (unsigned)best, run[best], lim, l);
			if (!k)
				return;
			run[best] += k;
		}
	}
	for (unsigned i = 0; i < lanes; i++) /* after the last mark */
		for (size_t k; run[i] < run_end[i]; run[i] += k)
			if (!(k = decode_one(g, i, run[i], run_end[i], l)))
				return;
}

/* A run's trace, as a reader reads it. */
static void decode(const struct run *r, struct lines *l)
{
	static struct reading g;
	memset(&g, 0, sizeof(g));
	const uint8_t *p = r->trace.data, *end = p + r->trace.len;
	while (p < end) {
		if (*p == CT_REC_EPOCH) {
			uint64_t n = 0;
			p++;
			p += ct_get_varint(p, end, &n);
			decode_epoch(&g, p, p + n, l);
			p += n;
			continue;
		}
		size_t k = decode_one(&g, 0, p, end, l);
		if (!k)
			return;
		p += k;
	}
}

static void free_lines(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->line[i]);
	free(l->line);
	*l = (struct lines){0};
}

/* The first line where a and b differ, or -1. */
static long first_difference(const struct lines *a, const struct lines *b)
{
	size_t n = a->n < b->n ? a->n : b->n;
	for (size_t i = 0; i < n; i++)
		if (strcmp(a->line[i], b->line[i]))
			return (long)i;
	return a->n == b->n ? -1 : (long)n;
}

static void compare(const char *name, const struct run *one, const struct run *many)
{
	struct lines a = {0}, b = {0};
	decode(one, &a);
	decode(many, &b);
	const struct ct_rec_end *x = &one->end, *y = &many->end;
	int totals = x->allocations == y->allocations && x->frees == y->frees &&
	             x->bytes_allocated == y->bytes_allocated && x->unmatched_frees == y->unmatched_frees &&
	             x->lost_allocations == y->lost_allocations;
	int live = one->live_blocks == many->live_blocks && one->live_bytes == many->live_bytes &&
	           one->live_sum == many->live_sum;
	long diff = first_difference(&a, &b);
	if (diff >= 0 && getenv("SHOW"))
		for (size_t j = (size_t)diff; j < (size_t)diff + 8 && j < a.n && j < b.n; j++)
			printf("  one: %s   lanes: %s\n", a.line[j], b.line[j]);
	size_t n_one = a.n, n_many = b.n;
	free_lines(&a);
	free_lines(&b);
	if (!totals || !live || diff >= 0) {
		printf("FAIL %s: totals %s, live blocks %s, records %s (%zu against %zu, first difference at "
		       "%ld)\n",
		       name, totals ? "equal" : "differ", live ? "equal" : "differ",
		       diff < 0 ? "equal" : "differ", n_many, n_one, diff);
		failures++;
		return;
	}
	printf("ok   %s (%zu records, %u epochs, %" PRIu64 " frees, %" PRIu64 " unmatched, %" PRIu64
	       " live)\n",
	       name, n_one, many->epochs, x->frees, x->unmatched_frees, one->live_blocks);
}

/* A run's memory back (the sanitizer build checks for leaks). */
static void finish(struct run *r)
{
	free(r->trace.data);
	for (unsigned i = 0; i < r->lanes; i++)
		free(r->cur[i].out.data);
}

int main(void)
{
	static uint32_t before[CT_SEQ_BUCKETS];
	static struct run one, many[3][2];
	static const char *const how[] = {"one after another", "on threads of their own"};
	for (uint32_t b = 0; b < CT_SEQ_BUCKETS; b++)
		before[b] = atomic_load(&ct_seq[b]);
	ct_test_rng = 0x2545F4914F6CDD1Dull;
	program();
	run(&one, 1, before, ONE_AFTER_ANOTHER);
	if (one.end.frees == 0 || one.end.unmatched_frees == 0 || one.live_blocks == 0) {
		printf("FAIL the program makes no frees, odd frees or live blocks: nothing is compared\n");
		return 1;
	}
	const unsigned lanes[] = {2, 4, 8};
	for (int k = 0; k < 3; k++)
		for (int mode = 0; mode < 2; mode++) {
			char name[160];
			snprintf(name, sizeof(name), "%u lanes %s: one lane's figures and records, in order",
			         lanes[k], how[mode]);
			run(&many[k][mode], lanes[k], before, (enum mode)mode);
			compare(name, &one, &many[k][mode]);
			finish(&many[k][mode]);
		}
	finish(&one);
	return failures ? 1 : 0;
}
