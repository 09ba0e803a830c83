/* SPDX-License-Identifier: MIT */
/* Unit tests of the matcher (preload/match.c), driven without LD_PRELOAD: each case feeds streams
 * of address events, as program threads publish them, and compares the records written, decoded
 * into text, and the END totals with what the case states. Built twice: with CT_TEST_COLUMNS the
 * sink has columns (the writer's direct path), joined back into records before each comparison. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/format.h"
#include "match.h"
#include "rec_heap.h"
#include "event.h"
#include "../xorshift.h"

static struct ct_rec_buf out;
static struct ct_match_stream streams[2];
static int failures;

static uint32_t define_stacks(uint32_t upto, void *arg)
{
	(void)arg;
	return upto;
}

/* A backtrace's stack id, made up so that a case can say it: the innermost frame's address / 16
 * (mod 100), plus 100 per frame (a call site alone at 0x50: 105); truncated ones are remembered. */
static int interned_truncated;
static uint32_t intern(const uint64_t *ips, int n, int truncated, void *arg)
{
	(void)arg;
	interned_truncated = truncated;
	return (uint32_t)(ips[0] >> 4) % 100 + 100 * (uint32_t)n;
}

/* Addresses with bit 0x800000 lie in a loaded object, with 0x400000 in the stack; events lost
 * (CT_WHERE_UNSURE) when a case says so. */
static int events_lost;
static int classify(uint64_t p, void *arg)
{
	(void)arg;
	int where = p & 0x800000 ? CT_WHERE_STATIC : p & 0x400000 ? CT_WHERE_STACK : CT_WHERE_HEAP;
	return where | (events_lost ? CT_WHERE_UNSURE : 0);
}

#ifdef CT_TEST_COLUMNS
/* The writer's stage, as output.c keeps it: columns with room to spare, a little room at a time. */
#define COL_BYTES (1u << 20)
static struct ct_columns cols;
static uint8_t col_mem[CT_COLUMNS][COL_BYTES];

static size_t stage(struct ct_rec_buf *b)
{
	for (int i = 0; i < CT_COLUMNS; i++)
		if (cols.len[i] + b->len + 64 * CT_VARINT_MAX > COL_BYTES)
			return cols.room = 0;
	if (ct_columns_split(b->data, b->len, &cols) < 0) {
		fprintf(stderr, "the records in the buffer cannot be split\n");
		exit(1);
	}
	b->len = 0;
	return cols.room = 64;
}

static void empty_stage(void)
{
	for (int i = 0; i < CT_COLUMNS; i++) {
		cols.col[i] = col_mem[i];
		cols.len[i] = cols.pos[i] = 0;
	}
	cols.room = 0;
}

/* Everything staged back into out, in the stream's order, as a reader joins a BATCH. */
static void unstage(void)
{
	struct ct_rec_buf joined = {.grow = ct_rec_grow_heap};
	unsigned long long n;
	stage(&out);
	if (ct_columns_join(&cols, &joined, &n) < 0) {
		fprintf(stderr, "the columns do not join\n");
		exit(1);
	}
	free(out.data);
	out = joined;
	empty_stage();
}
#define SINK_COLS &cols, stage
#else
static void empty_stage(void) {}
static void unstage(void) {}
#define SINK_COLS NULL, NULL
#endif

static void reset(void)
{
	static int added;
	struct ct_match_sink sink = {&out, SINK_COLS, define_stacks, NULL, intern, classify};
	if (!added) {
		ct_match_stream_add(&streams[0], 0);
		ct_match_stream_add(&streams[1], 0);
		added = 1;
	}
	out.len = 0;
	out.grow = ct_rec_grow_heap;
	empty_stage();
	if (ct_match_reset(&sink, 1) < 0) {
		fprintf(stderr, "ct_match_reset failed\n");
		exit(1);
	}
}

/* ---- events, as the tracker makes them ---- */

struct ev {
	uint64_t w[3];
};

/* A FREE's and an RBEGIN's third word is the call's return address: `size` here. */
static struct ev make(enum ct_event kind, uint64_t p, uint64_t size, uint32_t stack)
{
	struct ev e = {{(uint64_t)kind << CT_EV_SHIFT | p, 0, 0}};
	if (kind == CT_EV_ALLOC) {
		e.w[1] = size;
		e.w[2] = stack | (uint64_t)ct_seq_take(p) << 32;
	} else if (kind != CT_EV_RFREE) {
		e.w[1] = ct_seq_take(p);
		e.w[2] = kind == CT_EV_RFAIL ? 0 : size;
	}
	return e;
}

static int apply(int stream, struct ev e)
{
	return ct_match_event(&streams[stream], e.w, 1);
}

static void alloc(int s, uint64_t p, uint64_t size)
{
	apply(s, make(CT_EV_ALLOC, p, size, 0));
}
static void alloc_at(int s, uint64_t p, uint64_t size, uint32_t stack)
{
	apply(s, make(CT_EV_ALLOC, p, size, stack));
}
static void release(int s, uint64_t p)
{
	apply(s, make(CT_EV_FREE, p, 0, 0));
}
static void rbegin(int s, uint64_t p)
{
	apply(s, make(CT_EV_RBEGIN, p, 0, 0));
}
/* A free and a realloc's start by the call that returns to ra. */
static void release_at(int s, uint64_t p, uint64_t ra)
{
	apply(s, make(CT_EV_FREE, p, ra, 0));
}
static void rbegin_at(int s, uint64_t p, uint64_t ra)
{
	apply(s, make(CT_EV_RBEGIN, p, ra, 0));
}
static void rfail(int s, uint64_t p)
{
	apply(s, make(CT_EV_RFAIL, p, 0, 0));
}
static void rfree(int s, uint64_t p)
{
	apply(s, make(CT_EV_RFREE, p, 0, 0));
}

/* ---- the records, as text ---- */

static void decode(char *text, size_t cap)
{
	unstage();
	size_t n = 0;
	const uint8_t *p = out.data, *end = out.data + out.len;
	text[0] = 0;
	while (p < end && n + 32 < cap) {
		unsigned tag = *p;
		uint64_t a = 0, b = 0;
		int k;
		if (ct_tag_is_short(tag)) {
			k = ct_get_short_event(p, end, &tag, &a);
			n += (size_t)snprintf(text + n, cap - n, "%s%s %llu", n ? " " : "",
			                      ct_record_name(tag), (unsigned long long)a);
			p += k;
			continue;
		}
		p++;
		p += ct_get_varint(p, end, &a);
		if (tag == CT_REC_INVALID) { /* kind/call/stack/freed/block */
			uint64_t v[3] = {0};
			const uint8_t *q = p + 2;
			for (int i = 0; i < 3; i++)
				q += ct_get_varint(q, end, &v[i]);
			n += (size_t)snprintf(text + n, cap - n, "%sINVALID %u/%u/%llu/%llu/%llu",
			                      n ? " " : "", p[0], p[1], (unsigned long long)v[0],
			                      (unsigned long long)v[1], (unsigned long long)v[2]);
			p += a;
			continue;
		}
		if (tag == CT_REC_INFO)
			p += ct_get_varint(p, end, &b);
		if (tag == CT_REC_INFO)
			n += (size_t)snprintf(text + n, cap - n, "%sINFO %llu/%llu", n ? " " : "",
			                      (unsigned long long)a, (unsigned long long)b);
		else
			n += (size_t)snprintf(text + n, cap - n, "%s%s %llu", n ? " " : "",
			                      ct_record_name(tag), (unsigned long long)a);
	}
}

static void expect(const char *name, const char *records, uint64_t frees, uint64_t unmatched, uint64_t lost)
{
	char text[4096];
	struct ct_rec_end e;
	decode(text, sizeof(text));
	ct_match_totals(&e);
	if (strcmp(text, records) || e.frees != frees || e.unmatched_frees != unmatched ||
	    e.lost_allocations != lost) {
		printf("FAIL %s\n  records: %s\n  wanted:  %s\n  frees %llu unmatched %llu lost %llu, wanted "
		       "%llu %llu %llu\n",
		       name, text, records, (unsigned long long)e.frees,
		       (unsigned long long)e.unmatched_frees, (unsigned long long)e.lost_allocations,
		       (unsigned long long)frees, (unsigned long long)unmatched, (unsigned long long)lost);
		failures++;
		return;
	}
	printf("ok   %s\n", name);
}

/* ---- the cases ---- */

enum { A, B };
#define P 0x1000
#define Q 0x2000
#define R 0x3000

static void temporary(void)
{
	reset();
	alloc(A, P, 16);
	release(A, P);
	expect("freed by the thread's next event: TEMP", "INFO 16/0 TEMP 0", 1, 0, 0);
}

/* Sampling left calls out between the allocation and its free (CT_EV_GAP on the free, or on a
 * realloc's start): no temporary, though nothing came between in the ring. */
static void gap_before_free(void)
{
	reset();
	alloc(A, P, 16);
	struct ev e = make(CT_EV_FREE, P, 0, 0);
	e.w[0] |= CT_EV_GAP;
	apply(A, e);
	expect("freed next in the ring after calls sampling left out: ALLOC, RECENT",
	       "INFO 16/0 ALLOC 0 RECENT 1", 1, 0, 0);
	reset();
	alloc(A, P, 16);
	e = make(CT_EV_RBEGIN, P, 0, 0);
	e.w[0] |= CT_EV_GAP;
	apply(A, e);
	alloc(A, Q, 32);
	expect("realloc'ed next in the ring after calls left out: no TEMP",
	       "INFO 16/0 ALLOC 0 RECENT 1 INFO 32/0", 1, 0, 0);
}

static void live_then_recent(void)
{
	reset();
	alloc(A, P, 16);
	alloc(A, Q, 32);
	release(A, P);
	/* P's ALLOC is written when Q's allocation shows P was not temporary; freeing P flushes Q;
	 * P's ALLOC is then the 2nd last. */
	expect("a live block freed later: RECENT by age", "INFO 16/0 ALLOC 0 INFO 32/0 ALLOC 1 RECENT 2", 1,
	       0, 0);
}

static void cross_thread_held(void)
{
	reset();
	alloc(A, P, 16);
	release(B, P);
	expect("another thread frees a held block: not temporary", "INFO 16/0 ALLOC 0 RECENT 1", 1, 0, 0);
}

static void cross_thread_live(void)
{
	reset();
	alloc(A, P, 16);
	alloc(A, Q, 16);
	release(B, P);
	release(B, Q);
	/* Q is still held by A when B frees it: its ALLOC is written then, just before its free. */
	expect("another thread frees live blocks", "INFO 16/0 ALLOC 0 RECENT 1 ALLOC 0 RECENT 1", 2, 0, 0);
}

static void reuse_unseen(void)
{
	reset();
	alloc(A, P, 16);
	alloc(A, Q, 16);
	alloc(A, P, 24); /* P again, its free never seen: the first block is lost */
	alloc(A, R, 16);
	/* R's allocation puts the second P into the live table, where the first still is: it ends by
	 * its info (FREE), since the last ALLOC written at P is the second block's, not its own. */
	expect("an address handed out again without a free",
	       "INFO 16/0 ALLOC 0 ALLOC 0 INFO 24/0 ALLOC 1 FREE 0", 1, 0, 1);
}

static void unmatched(void)
{
	reset();
	release(B, R);
	expect("a free of a block never seen", "", 0, 1, 0);
}

static void realloc_chain(void)
{
	reset();
	alloc(A, P, 16);
	rbegin(A, P);
	alloc(A, Q, 32);
	rbegin(A, Q);
	alloc(A, R, 64);
	release(A, R);
	/* each realloc frees the block its thread allocated just before: all temporaries */
	expect("realloc chain: each old block temporary",
	       "INFO 16/0 TEMP 0 INFO 32/0 TEMP 1 INFO 64/0 TEMP 2", 3, 0, 0);
}

static void realloc_in_place_of_live(void)
{
	reset();
	alloc(A, P, 16);
	alloc(A, Q, 16);
	rbegin(A, P);
	alloc(A, P, 48);
	ct_match_settle(&streams[A]);
	/* the old block ends when the realloc's new block arrives, before the new block's INFO */
	expect("realloc of a live block", "INFO 16/0 ALLOC 0 ALLOC 0 RECENT 2 INFO 48/0 ALLOC 1", 1, 0, 0);
}

static void realloc_failed(void)
{
	reset();
	alloc(A, P, 16);
	rbegin(A, P);
	rfail(A, P);
	release(A, P);
	expect("failed realloc: the block is as before", "INFO 16/0 TEMP 0", 1, 0, 0);
}

static void realloc_to_zero(void)
{
	reset();
	alloc(A, P, 16);
	alloc(A, Q, 16);
	rbegin(A, P);
	rfree(A, P);
	expect("realloc(p, 0) frees p", "INFO 16/0 ALLOC 0 ALLOC 0 RECENT 2", 1, 0, 0);
}

static void realloc_starts_in_a_row(void)
{
	reset();
	alloc(A, P, 16);
	alloc(A, Q, 32);
	rbegin(A, P);
	rbegin(A, Q); /* a signal handler's realloc, interleaved with the thread's own */
	alloc(A, R, 64);
	ct_match_settle(&streams[A]);
	/* the first realloc's old block ends when the second starts, not never */
	expect("two realloc starts in a row: both old blocks end",
	       "INFO 16/0 ALLOC 0 INFO 32/0 ALLOC 1 RECENT 2 RECENT 1 INFO 64/0 ALLOC 2", 2, 0, 0);
}

static void recent_window(void)
{
	reset();
	for (uint64_t i = 0; i <= CT_RECENT_WINDOW + 1; i++)
		alloc(A, P + 16 * i, 16);
	alloc(A, R, 32); /* flushes the last one: 34 ALLOC records, block i in the (i+1)-th */
	out.len = 0;
	empty_stage();
	/* The first free flushes R: the 35th ALLOC. Block 2 is then 33 back, block 3 32 back. */
	release(A, P + 16 * 2);
	release(A, P + 16 * 3);
	expect("RECENT up to age 32, FREE beyond", "ALLOC 1 FREE 0 RECENT 32", 2, 0, 0);
}

static void tempfree(void)
{
	reset();
	alloc(A, P, 16);
	ct_match_write_held(&streams[A]); /* the writer flushes to the file */
	release(A, P);
	expect("held block written at a flush, then freed: TEMPFREE", "INFO 16/0 ALLOC 0 TEMPFREE 0", 1, 0,
	       0);
}

static void ordering(void)
{
	reset();
	struct ev a1 = make(CT_EV_ALLOC, P, 16, 0), a2 = make(CT_EV_FREE, P, 0, 0);
	struct ev b1 = make(CT_EV_ALLOC, P, 32, 0); /* the allocator gave P to B after A freed it */
	int blocked = apply(B, b1) == CT_MATCH_BLOCKED;
	apply(A, a1);
	apply(A, a2);
	int done = apply(B, b1) == CT_MATCH_DONE;
	ct_match_settle(&streams[B]);
	if (!blocked || !done) {
		printf("FAIL ordering: B's allocation of P %s before A's free\n",
		       blocked ? "ran" : "was not held back");
		failures++;
	}
	expect("cross-thread reuse of an address in sequence order", "INFO 16/0 TEMP 0 INFO 32/0 ALLOC 1", 1,
	       0, 0);
}

static void stacks_defined_first(void)
{
	reset();
	alloc_at(A, P, 16, 7);
	alloc_at(A, Q, 16, 7);
	alloc_at(A, R, 16, 9);
	expect("one INFO per (size, stack)", "INFO 16/7 ALLOC 0 ALLOC 0 INFO 16/9", 0, 0, 0);
}

/* Past the alloc info table's first growth (16384 slots hold 8192 ids): ids stay dense, in
 * order of first sight, and a pair seen before the growth is found after it. */
static void many_infos(void)
{
	enum { N = 20000 };
	reset();
	for (uint64_t i = 0; i < N; i++)
		alloc_at(A, P + 16 * i, 16 + i, 3);
	alloc_at(A, 0x7f0000, 16, 3); /* the first pair again, at a fresh address: info 0 */
	ct_match_settle(&streams[A]);
	char *text = malloc(1 << 20);
	decode(text, 1 << 20);
	size_t infos = 0;
	for (const char *t = text; (t = strstr(t, "INFO")); t++)
		infos++;
	const char *tail = strrchr(text, 'A'); /* the last record: "ALLOC 0" */
	if (infos != N || !tail || strcmp(tail, "ALLOC 0") || !strstr(text, "ALLOC 19999")) {
		printf("FAIL many infos: %zu INFO records, last record %s\n", infos, tail ? tail : "none");
		failures++;
	} else {
		printf("ok   many infos: %d INFO records, ids dense across the table's growth\n", N);
	}
	free(text);
}

/* The drain's path on large tables (ct_match_prefetch's hint, then ct_match_event_hinted) writes
 * the records ct_match_event does, on a random stream of one thread's events: allocations of 64
 * sizes at 512 addresses, each freed, realloc'ed or left live at random. */
static void hinted_run(int hinted, char *text, size_t cap)
{
	uint8_t live[512] = {0};
	ct_test_rng = 0x5eed;
	reset();
	for (int i = 0; i < 20000; i++) {
		uint64_t r = ct_test_random(), slot = r % 512, p = 0x10000 + 64 * slot;
		unsigned kind = !live[slot] ? CT_EV_ALLOC : (r >> 20) % 4 == 0 ? CT_EV_RBEGIN : CT_EV_FREE;
		struct ev e = make(kind, p, 16 * ((r >> 9) % 64 + 1), (uint32_t)(r >> 32) % 3);
		struct ct_match_hint hint = {0};
		if (hinted)
			ct_match_prefetch(&streams[A], e.w, CT_PREFETCH_LIVE | CT_PREFETCH_INFO, &hint);
		if (hinted)
			ct_match_event_hinted(&streams[A], e.w, &hint, 1);
		else
			apply(A, e);
		live[slot] = kind == CT_EV_ALLOC;
		if (kind == CT_EV_RBEGIN) { /* the realloc moves the block: its old address is freed */
			apply(A, make(CT_EV_ALLOC, p + 32, 24, 1));
			live[slot] = 0;
			release(A, p + 32);
		}
	}
	ct_match_settle_all();
	decode(text, cap);
}

static void hinted(void)
{
	enum { CAP = 1 << 20 };
	char *plain = malloc(CAP), *with = malloc(CAP);
	hinted_run(0, plain, CAP);
	hinted_run(1, with, CAP);
	if (strcmp(plain, with) || strlen(plain) < 100000) {
		printf("FAIL hinted: the records differ from ct_match_event's (%zu and %zu bytes of text)\n",
		       strlen(plain), strlen(with));
		failures++;
	} else {
		printf("ok   hinted: %zu bytes of records' text, as ct_match_event's\n", strlen(plain));
	}
	free(plain);
	free(with);
}

/* ---- frees of addresses that are no live block ---- */

static void double_free(void)
{
	reset();
	alloc(A, P, 16);
	release_at(A, P, 0x50);
	release_at(A, P, 0x60);
	alloc(A, Q, 8); /* the thread went on: the verdict */
	/* kind 0 (double), call 0 (free), at 0x60 alone (106), freed before at 0x50 (105), info 0 + 1 */
	expect("double free: judged at the thread's next event",
	       "INFO 16/0 TEMP 0 INVALID 0/0/106/105/1 INFO 8/0", 1, 1, 0);
	reset();
	alloc(A, P, 16);
	alloc(A, Q, 16);
	release_at(B, P, 0x50); /* another thread's, a live block */
	release_at(A, P, 0x70);
	ct_match_settle_all();
	expect("double free of a live block freed by another thread, judged when settled",
	       "INFO 16/0 ALLOC 0 RECENT 1 ALLOC 0 INVALID 0/0/107/105/1", 1, 1, 0);
}

static void not_allocated(void)
{
	reset();
	release_at(A, R, 0x50);
	alloc(A, Q, 8);
	expect("an address never seen: a block allocated before tracing, no INVALID", "INFO 8/0", 0, 1, 0);
	reset();
	release_at(A, R, 0x50);
	release_at(A, R, 0x60);
	ct_match_settle_all();
	expect("... freed twice: the second is a double free, nothing known of the block",
	       "INVALID 0/0/106/105/0", 0, 2, 0);
}

static void static_and_stack(void)
{
	reset();
	release_at(A, 0x800010, 0x70);
	release_at(A, 0x400010, 0x80);
	ct_match_settle_all();
	expect("frees of a global's and a stack address", "INVALID 1/0/107/0/0 INVALID 2/0/108/0/0", 0, 2, 0);
}

static void unsure(void)
{
	reset();
	alloc(A, P, 16);
	release_at(A, P, 0x50);
	events_lost = 1; /* an allocation at P may have gone unseen */
	release_at(A, P, 0x60);
	ct_match_settle_all();
	events_lost = 0;
	expect("events lost: a free of an address freed before is no proof", "INFO 16/0 TEMP 0", 1, 1, 0);
}

static void realloc_invalid(void)
{
	reset();
	alloc(A, P, 16);
	alloc(A, Q, 16);
	rbegin_at(A, P, 0x50);
	alloc(A, R, 32); /* the realloc's new block: P is freed */
	release_at(A, P, 0x60);
	rbegin_at(A, Q + 0x800000, 0x90); /* a realloc of a global's address */
	rfail(A, Q + 0x800000);
	expect(
	    "a free of a block a realloc freed; a realloc of a global's address",
	    "INFO 16/0 ALLOC 0 ALLOC 0 RECENT 2 INFO 32/0 ALLOC 1 INVALID 0/0/106/105/1 INVALID 1/1/109/0/0",
	    1, 2, 0);
}

static void judged_at_flush(void)
{
	reset();
	alloc(A, P, 16);
	release_at(A, P, 0x50);
	release_at(A, P, 0x60);
	ct_match_write_held(&streams[A]); /* the flush right after the free: the call may not be over */
	expect("an odd free waits through one flush", "INFO 16/0 TEMP 0", 1, 1, 0);
	ct_match_write_held(&streams[A]);
	expect("... and is judged at the next", "INFO 16/0 TEMP 0 INVALID 0/0/106/105/1", 1, 1, 0);
}

static void crash(void)
{
	const uint64_t ips[] = {0x11 | CT_REC_IP_EXACT, 0x22, 0x50, 0x90, 0xa0};
	reset();
	release_at(A, R, 0x50);
	int died = ct_match_crash(&streams[A], ips, 5, 1);
	ct_match_settle_all();
	/* kind 3 (never allocated), the backtrace from the call site out: 3 frames at 0x50, cut */
	expect("the program dies in a free of an address never seen: invalid", "INVALID 3/0/305/0/0", 0, 1,
	       0);
	if (!died || !interned_truncated) {
		printf("FAIL crash: ct_match_crash gave %d, the backtrace %s cut\n", died,
		       interned_truncated ? "was" : "was not");
		failures++;
	}
	reset();
	alloc(A, P, 16);
	release_at(A, P, 0x40);
	release_at(A, P, 0x50);
	died = ct_match_crash(&streams[A], ips, 5, 0);
	expect("the program dies in a double free: its backtrace", "INFO 16/0 TEMP 0 INVALID 0/0/305/104/1",
	       1, 1, 0);
	reset();
	release_at(A, R, 0x60); /* the crash is elsewhere: a block allocated before tracing */
	died = ct_match_crash(&streams[A], ips, 5, 0) || ct_match_crash(NULL, ips, 5, 0);
	ct_match_settle_all();
	expect("the program dies elsewhere: the free stays a block allocated before tracing", "", 0, 1, 0);
	if (died) {
		printf("FAIL crash: a backtrace without the free's call site took it\n");
		failures++;
	}
}

static void forgotten_at_reset(void)
{
	reset();
	alloc(A, P, 16);
	release_at(A, P, 0x50);
	reset(); /* a forked child's trace: the parent's frees are not its own */
	release_at(A, P, 0x60);
	ct_match_settle_all();
	expect("a new trace forgets the frees before it", "", 0, 1, 0);
}

int main(void)
{
	double_free();
	not_allocated();
	static_and_stack();
	unsure();
	realloc_invalid();
	judged_at_flush();
	crash();
	forgotten_at_reset();
	many_infos();
	temporary();
	gap_before_free();
	live_then_recent();
	cross_thread_held();
	cross_thread_live();
	reuse_unseen();
	unmatched();
	realloc_chain();
	realloc_in_place_of_live();
	realloc_failed();
	realloc_to_zero();
	realloc_starts_in_a_row();
	recent_window();
	tempfree();
	ordering();
	stacks_defined_first();
	hinted();
	if (failures)
		printf("%d case(s) failed\n", failures);
	return failures ? 1 : 0;
}
