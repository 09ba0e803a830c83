/* SPDX-License-Identifier: MIT */
/* Unit tests of the matcher (preload/match.c), driven without LD_PRELOAD: each case feeds streams
 * of address events, as program threads publish them, and compares the records written, decoded
 * into text, and the END totals with what the case states. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/format.h"
#include "match.h"
#include "rec_heap.h"
#include "shim.h"

_Atomic uint32_t ct_seq[CT_SEQ_BUCKETS]; /* the tracker's, in the shim */

static struct ct_rec_buf out;
static struct ct_match_stream streams[2];
static int failures;

static uint32_t define_stacks(uint32_t upto, void *arg)
{
	(void)arg;
	return upto;
}

static void reset(void)
{
	static int added;
	struct ct_match_sink sink = {&out, define_stacks, NULL};
	if (!added) {
		ct_match_stream_add(&streams[0]);
		ct_match_stream_add(&streams[1]);
		added = 1;
	}
	out.len = 0;
	out.grow = ct_rec_grow_heap;
	if (ct_match_reset(&sink) < 0) {
		fprintf(stderr, "ct_match_reset failed\n");
		exit(1);
	}
}

/* ---- events, as the tracker makes them ---- */

struct ev {
	uint64_t w[3];
};

static struct ev make(enum ct_event kind, uint64_t p, uint64_t size, uint32_t stack)
{
	struct ev e = {{(uint64_t)kind << CT_EV_SHIFT | p, 0, 0}};
	if (kind == CT_EV_ALLOC) {
		e.w[1] = size;
		e.w[2] = stack | (uint64_t)ct_seq_take(p) << 32;
	} else if (kind != CT_EV_RFREE) {
		e.w[1] = ct_seq_take(p);
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
	/* R's allocation puts the second P into the live table, where the first still is. */
	expect("an address handed out again without a free",
	       "INFO 16/0 ALLOC 0 ALLOC 0 INFO 24/0 ALLOC 1 RECENT 3", 1, 0, 1);
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

int main(void)
{
	many_infos();
	temporary();
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
	if (failures)
		printf("%d case(s) failed\n", failures);
	return failures ? 1 : 0;
}
