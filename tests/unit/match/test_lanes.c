/* SPDX-License-Identifier: MIT */
/* The matcher split into lanes (preload/match.c), against one lane: random streams of events from
 * three threads, as the tracker publishes them (allocations, frees of any thread's blocks,
 * temporaries, reallocs that move, stay, fail or free, frees of addresses never allocated), are
 * applied once by one lane and once by 2, 4 and 8 lanes, each lane given every event of every
 * thread. The totals, the live blocks and the records (RECENT resolved to the block it names, alloc
 * infos to their size and stack) must be the same, as multisets: with each lane run to the end
 * before the next one starts (lanes share nothing but the alloc info ids), and with the lanes
 * given each event in turn, where each event must make the same records in all lanes together as
 * in one (a lane that kept a block held or a realloc waiting past the thread's next event would
 * write its records later). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/format.h"
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

/* ---- a run: lanes lanes, each given every event of every thread ---- */

enum mode { ONE_AFTER_ANOTHER, LOCKSTEP, THREADED };

struct run {
	unsigned lanes;
	struct ct_rec_buf out[CT_MATCH_LANES_MAX];
	uint32_t *made; /* in lockstep: the lanes' output lengths after each event, lanes * event + lane */
	struct ct_match_stream st[THREADS][CT_MATCH_LANES_MAX];
	struct ct_rec_end end;
	uint64_t live_blocks, live_bytes, live_sum;
	uint32_t batches;
	/* THREADED: the batches the other lanes hand over, taken by lane 0 (the main thread) */
	pthread_mutex_t lock;
	struct batch {
		uint8_t *data;
		size_t len;
		uint32_t allocs;
		struct batch *next;
	} * queue, **queue_end;
};

static void count_live(uint64_t p, uint64_t size, uint32_t info, void *arg)
{
	struct run *r = arg;
	(void)info;
	r->live_blocks++;
	r->live_bytes += size;
	r->live_sum += p * 31 + size;
}

/* Lane lane (not 0) closes its batch: its records so far go into the queue. */
static void hand_over(struct run *r, unsigned lane)
{
	struct batch *b = calloc(1, sizeof(*b));
	b->allocs = ct_match_batch_start(lane);
	b->len = r->out[lane].len;
	b->data = malloc(b->len + 1);
	memcpy(b->data, r->out[lane].data, b->len);
	r->out[lane].len = 0;
	pthread_mutex_lock(&r->lock);
	*r->queue_end = b;
	r->queue_end = &b->next;
	pthread_mutex_unlock(&r->lock);
}

/* Lane 0 appends the batches handed over so far to its output, each after the INFO records it may
 * need, as the writer will. */
static void take_batches(struct run *r)
{
	pthread_mutex_lock(&r->lock);
	struct batch *b = r->queue;
	r->queue = NULL;
	r->queue_end = &r->queue;
	pthread_mutex_unlock(&r->lock);
	while (b) {
		struct batch *next = b->next;
		ct_match_define_infos();
		if (!ct_rec_room(&r->out[0], b->len)) {
			printf("FAIL no memory for a batch\n");
			exit(1);
		}
		memcpy(r->out[0].data + r->out[0].len, b->data, b->len);
		r->out[0].len += b->len;
		ct_match_batch_appended(b->allocs);
		r->batches++;
		free(b->data);
		free(b);
		b = next;
	}
}

/* One lane through every ring to their ends: a ring whose next event waits for another ring's is
 * left until that one has been applied. Lanes other than 0 hand a batch over every 700 events, lane
 * 0 takes the batches waiting every 300. */
static void run_lane(struct run *r, unsigned lane)
{
	size_t at[THREADS] = {0};
	int left = THREADS;
	uint32_t n = 0;
	while (left) {
		int progress = 0;
		left = 0;
		for (int t = 0; t < THREADS; t++) {
			while (at[t] < rings[t].n) {
				const uint64_t *ev = &rings[t].w[at[t]];
				if (ct_match_event(&r->st[t][lane], ev, 1) == CT_MATCH_BLOCKED)
					break;
				at[t] += ct_event_words(ev[0]);
				progress = 1;
				if (lane && ++n % 700 == 0)
					hand_over(r, lane);
				else if (!lane && ++n % 300 == 0)
					take_batches(r);
			}
			left += at[t] < rings[t].n;
		}
		if (left && !progress) {
			printf("FAIL lane %u waits for a sequence number that never comes\n", lane);
			failures++;
			return;
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
	run_lane(j->r, j->lane);
	return NULL;
}

/* The lanes given each event in turn, in the program's order (never a wait). */
static void run_lockstep(struct run *r)
{
	r->made = malloc((size_t)n_events * r->lanes * sizeof(*r->made));
	for (uint32_t k = 0; k < n_events; k++) {
		const uint64_t *ev = &rings[events[k].thread].w[events[k].at];
		for (unsigned i = 0; i < r->lanes; i++) {
			if (ct_match_event(&r->st[events[k].thread][i], ev, 1) == CT_MATCH_BLOCKED) {
				printf("FAIL an event in the program's order waits for its turn\n");
				exit(1);
			}
			r->made[k * r->lanes + i] = (uint32_t)r->out[i].len;
		}
	}
}

/* Lanes other than 0 on threads of their own while the main thread runs lane 0. */
static void run_threaded(struct run *r)
{
	pthread_t th[CT_MATCH_LANES_MAX];
	struct lane_job job[CT_MATCH_LANES_MAX];
	for (unsigned i = 1; i < r->lanes; i++) {
		job[i] = (struct lane_job){r, i};
		pthread_create(&th[i], NULL, lane_thread, &job[i]);
	}
	run_lane(r, 0);
	for (unsigned i = 1; i < r->lanes; i++)
		pthread_join(th[i], NULL);
}

static void start(struct run *r, unsigned lanes, const uint32_t *counters_before)
{
	struct ct_match_sink sinks[CT_MATCH_LANES_MAX];
	r->lanes = lanes;
	pthread_mutex_init(&r->lock, NULL);
	r->queue_end = &r->queue;
	for (unsigned i = 0; i < lanes; i++) {
		r->out[i] = (struct ct_rec_buf){.grow = ct_rec_grow_heap};
		sinks[i] =
		    (struct ct_match_sink){&r->out[i], NULL, NULL, define_stacks, NULL, intern, classify};
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

static void run(struct run *r, unsigned lanes, const uint32_t *counters_before, enum mode mode)
{
	start(r, lanes, counters_before);
	if (mode == LOCKSTEP)
		run_lockstep(r);
	else if (mode == THREADED)
		run_threaded(r);
	else
		for (unsigned i = lanes; i-- > 0;) /* lane 0 last: it takes every batch */
			run_lane(r, i);
	ct_match_settle_all();
	for (unsigned i = 0; i < lanes; i++)
		for (int t = 0; t < THREADS; t++)
			ct_match_write_held(&r->st[t][i]);
	if (mode != LOCKSTEP) { /* the lanes' last batches, then every INFO record */
		for (unsigned i = 1; i < lanes; i++)
			hand_over(r, i);
		take_batches(r);
		ct_match_define_infos();
	}
	ct_match_totals(&r->end);
	ct_match_live(count_live, r);
}

/* ---- the records, as a multiset of lines ---- */

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

static int by_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The event that made the record at offset at of lane lane's output (n_events: after the last). */
static uint32_t maker(const struct run *r, unsigned lane, size_t at, uint32_t *k)
{
	while (*k < n_events && r->made[*k * r->lanes + lane] <= at)
		(*k)++;
	return *k;
}

/* Lane lane's output, as a reader reads a trace: INFO records define ids in order (kept in infos),
 * RECENT names the age-th last ALLOC; every other record into l by its size and stack. In lockstep
 * (r->made) the lanes' outputs are read apart, each line marked with the event that made it, and
 * ids resolved with one lane's infos (given: ids are assigned in the same order then). */
static void decode_lane(const struct run *r, unsigned lane, struct info *infos, int define, struct lines *l)
{
	uint32_t recent[CT_RECENT_WINDOW] = {0};
	uint32_t allocs = 0, k = 0, n_infos = 0;
	char s[96];
	const uint8_t *p = r->out[lane].data, *end = p + r->out[lane].len;
	while (p < end) {
		uint32_t by = r->made ? maker(r, lane, (size_t)(p - r->out[lane].data), &k) : 0;
		unsigned tag = *p;
		uint64_t a = 0, b = 0;
		if (ct_tag_is_short(tag)) {
			p += ct_get_short_event(p, end, &tag, &a);
		} else {
			p++;
			p += ct_get_varint(p, end, &a);
			if (tag == CT_REC_INFO) {
				p += ct_get_varint(p, end, &b);
				if (define)
					infos[n_infos++] = (struct info){a, b};
				continue;
			}
			if (tag == CT_REC_INVALID) {
				snprintf(s, sizeof(s), "%06u INVALID %u/%u", by, p[0], p[1]);
				add_line(l, s);
				p += a;
				continue;
			}
		}
		if (tag == CT_REC_RECENT) {
			a = recent[(allocs - (uint32_t)a) % CT_RECENT_WINDOW];
			tag = CT_REC_FREE;
		}
		if (tag == CT_REC_TEMPFREE)
			tag = CT_REC_FREE;
		if (tag == CT_REC_ALLOC)
			recent[allocs++ % CT_RECENT_WINDOW] = (uint32_t)a;
		if (define && a >= n_infos) {
			printf("FAIL a record names alloc info %llu before its INFO record\n",
			       (unsigned long long)a);
			failures++;
		}
		snprintf(s, sizeof(s), "%06u %s %" PRIu64 "/%" PRIu64, by, ct_record_name(tag), infos[a].size,
		         infos[a].stack);
		add_line(l, s);
	}
}

static struct info one_infos[1 << 16];

/* A run's records: the trace lane 0 assembled, or in lockstep every lane's output. */
static void decode(const struct run *r, struct lines *l)
{
	static struct info infos[1 << 16];
	if (!r->made)
		decode_lane(r, 0, r->lanes == 1 ? one_infos : infos, 1, l);
	else
		for (unsigned i = 0; i < r->lanes; i++)
			decode_lane(r, i, one_infos, r->lanes == 1, l);
	qsort(l->line, l->n, sizeof(*l->line), by_text);
}

static void free_lines(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->line[i]);
	free(l->line);
	*l = (struct lines){0};
}

static int same_lines(const struct lines *a, const struct lines *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->line[i], b->line[i])) {
			if (getenv("SHOW"))
				for (size_t j = i; j < i + 8 && j < a->n; j++)
					printf("  one: %s   lanes: %s\n", a->line[j], b->line[j]);
			return 0;
		}
	return 1;
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
	int records = same_lines(&a, &b);
	size_t n_one = a.n, n_many = b.n;
	free_lines(&a);
	free_lines(&b);
	if (!totals || !live || !records) {
		printf("FAIL %s: totals %s, live blocks %s, records %s (%zu against %zu)\n", name,
		       totals ? "equal" : "differ", live ? "equal" : "differ", records ? "equal" : "differ",
		       n_many, n_one);
		failures++;
		return;
	}
	printf("ok   %s (%zu records, %u batches, %" PRIu64 " frees, %" PRIu64 " unmatched, %" PRIu64
	       " live)\n",
	       name, n_one, many->batches, x->frees, x->unmatched_frees, one->live_blocks);
}

/* A run's memory back (the sanitizer build checks for leaks). */
static void finish(struct run *r)
{
	for (unsigned i = 0; i < r->lanes; i++)
		free(r->out[i].data);
	free(r->made);
	pthread_mutex_destroy(&r->lock);
}

int main(void)
{
	static uint32_t before[CT_SEQ_BUCKETS];
	static struct run one, one_lockstep, many[3][3];
	static const char *const how[] = {
	    "one after another, batches appended by lane 0: one lane's figures and records",
	    "given each event in turn: each event makes one lane's records",
	    "on threads of their own, batches appended by lane 0: one lane's figures and records"};
	for (uint32_t b = 0; b < CT_SEQ_BUCKETS; b++)
		before[b] = atomic_load(&ct_seq[b]);
	ct_test_rng = 0x2545F4914F6CDD1Dull;
	program();
	run(&one, 1, before, ONE_AFTER_ANOTHER);
	run(&one_lockstep, 1, before, LOCKSTEP);
	struct lines ignored = {0};
	decode(&one, &ignored); /* one lane's INFO records, for the lockstep runs */
	free_lines(&ignored);
	if (one.end.frees == 0 || one.end.unmatched_frees == 0 || one.live_blocks == 0) {
		printf("FAIL the program makes no frees, odd frees or live blocks: nothing is compared\n");
		return 1;
	}
	const unsigned lanes[] = {2, 4, 8};
	for (int k = 0; k < 3; k++)
		for (int mode = 0; mode < 3; mode++) {
			char name[160];
			snprintf(name, sizeof(name), "%u lanes %s", lanes[k], how[mode]);
			run(&many[k][mode], lanes[k], before, (enum mode)mode);
			compare(name, mode == LOCKSTEP ? &one_lockstep : &one, &many[k][mode]);
			finish(&many[k][mode]);
		}
	finish(&one);
	finish(&one_lockstep);
	return failures ? 1 : 0;
}
