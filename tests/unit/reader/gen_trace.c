/* SPDX-License-Identifier: MIT */
/* Test-only trace generator: writes the synthetic traces test_reader.py checks, a big trace for the
 * reader's speed, and prints ct_trace_summarize()'s figures. Records are encoded by the writer's own
 * encoder (ctrack/record.h); only bytes that are no valid record are written by hand. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "summary.h"
#include "ctrack/columns.h"
#include "ctrack/record.h"
#include "rec_heap.h"

/* ---- records into a ct_rec_buf (record.h, the writer's encoder), then into zstd frames in z ---- */

struct enc {
	struct ct_rec_buf b;
	uint8_t *z;
	size_t zlen, zcap;
	ZSTD_CCtx *cctx;
};

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p) {
		perror("gen_trace");
		exit(1);
	}
	return p;
}

/* Bytes no encoder writes on purpose: invalid records and data that is no trace. */
static void put_raw(struct enc *e, const void *p, size_t n)
{
	if (ct_rec_room(&e->b, n))
		ct_rec_raw(&e->b, p, n);
}

/* Compresses what is in the record buffer; mode ZSTD_e_flush keeps the frame open, ZSTD_e_end
 * closes it. */
static void compress(struct enc *e, ZSTD_EndDirective mode)
{
	ZSTD_inBuffer in = {e->b.data, e->b.len, 0};
	size_t left;
	do {
		if (e->zlen + ZSTD_CStreamOutSize() > e->zcap) {
			e->zcap = (e->zlen + ZSTD_CStreamOutSize()) * 2;
			e->z = xrealloc(e->z, e->zcap);
		}
		ZSTD_outBuffer out = {e->z, e->zcap, e->zlen};
		left = ZSTD_compressStream2(e->cctx, &out, &in, mode);
		if (ZSTD_isError(left)) {
			fprintf(stderr, "gen_trace: %s\n", ZSTD_getErrorName(left));
			exit(1);
		}
		e->zlen = out.pos;
	} while (left || in.pos < in.size);
	e->b.len = 0;
}

/* A file header naming `version` and `min_version` (the encoder's own header patched: other
 * versions than this ctrack writes), or no header at all when version is 0. */
static void enc_init(struct enc *e, uint16_t version, uint16_t min_version)
{
	memset(e, 0, sizeof(*e));
	e->b.grow = ct_rec_grow_heap;
	e->cctx = ZSTD_createCCtx();
	if (!version)
		return;
	ct_rec_header(&e->b);
	ct_put_u16(e->b.data + 8, version);
	ct_put_u16(e->b.data + 10, min_version);
}

/* Writes the first `keep` compressed bytes (all if keep == SIZE_MAX) and frees the encoder. */
static void enc_write(struct enc *e, const char *dir, const char *name, size_t keep)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s%s%s", dir ? dir : "", dir ? "/" : "", name);
	size_t n = keep < e->zlen ? keep : e->zlen;
	FILE *f = fopen(path, "wb");
	if (e->b.dropped || !f || fwrite(e->z, 1, n, f) != n || fclose(f)) {
		perror(path);
		exit(1);
	}
	ZSTD_freeCCtx(e->cctx);
	free(e->b.data);
	free(e->z);
}

/* PROCESS of pid 42, ppid 1, started at 1700000000 s. */
static void process(struct enc *e, const char *exe, int argc, const char *const *argv)
{
	size_t n = 0;
	for (int i = 0; i < argc; i++)
		n += strlen(argv[i]) + 1;
	char *args = xrealloc(NULL, n ? n : 1), *p = args;
	for (int i = 0; i < argc; i++) {
		size_t k = strlen(argv[i]) + 1; /* /proc/self/cmdline's layout: each argument and its NUL */
		memcpy(p, argv[i], k);
		p += k;
	}
	struct ct_rec_process r = {.pid = 42,
	                           .ppid = 1,
	                           .start_unix_ns = 1700000000000000000ull,
	                           .exe = exe,
	                           .exe_len = strlen(exe),
	                           .args = args,
	                           .args_len = n};
	ct_rec_process(&e->b, &r);
	free(args);
}

static void end(struct enc *e, uint64_t unmatched, uint64_t end_us)
{
	/* allocations, frees, bytes: 0, the reader counts them itself */
	struct ct_rec_end r = {.unmatched_frees = unmatched, .end_us = end_us};
	ct_rec_end(&e->b, &r);
}

/* A framed record of one varint followed by bytes a newer writer might append. */
static void one_varint_record(struct enc *e, unsigned tag, uint64_t v, const char *extra)
{
	size_t at = ct_rec_open(&e->b, tag, CT_VARINT_MAX + strlen(extra));
	if (!at)
		return;
	ct_rec_v(&e->b, v);
	ct_rec_raw(&e->b, extra, strlen(extra));
	ct_rec_close(&e->b, at);
}

/* ---- the cases (expected figures are in test_reader.py) ---- */

static void module(struct enc *e)
{
	static const struct ct_rec_segment seg = {0x1000, 0x1000, 0x1000, CT_SEG_READ | CT_SEG_EXEC};
	static const char path[] = "/nonexistent/libfoo.so";
	struct ct_rec_module m = {.id = 0,
	                          .base = 0x400000,
	                          .path = path,
	                          .path_len = strlen(path),
	                          .build_id = (const uint8_t *)"\x01\x02\x03\x04",
	                          .build_id_len = 4,
	                          .segs = &seg,
	                          .nseg = 1};
	ct_rec_module(&e->b, &m);
}

static void basic(const char *dir)
{
	static const char *const argv[] = {"prog", "a b"};
	struct enc e;
	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_MIN_VERSION);
	struct ct_rec_buf *b = &e.b;
	process(&e, "/bin/prog", 2, argv);
	module(&e);
	ct_rec_frame(b, CT_STACK_ROOT, 0x401010);      /* 2: main (its call, ip - 1, in the module) */
	ct_rec_frame(b, 2, 0x401100);                  /* 3: site A */
	ct_rec_frame(b, 2, 0x401200);                  /* 4: site B */
	ct_rec_frame(b, CT_STACK_TRUNCATED, 0x401300); /* 5: site C, deeper frames cut */
	ct_rec_info(b, 100, 3);
	ct_rec_info(b, 1000, 4);
	ct_rec_info(b, 10, 3);
	ct_rec_info(b, 5000, 5);
	ct_rec_time(b, 10);
	for (int i = 0; i < 3; i++)
		ct_rec_alloc(b, 0);
	compress(&e, ZSTD_e_flush);
	ct_rec_alloc(b, 2);
	ct_rec_alloc(b, 2);
	ct_rec_alloc(b, 1);
	compress(&e, ZSTD_e_end); /* several frames, as a writer with late events makes */
	ct_rec_time(b, 5);
	ct_rec_free(b, 1);
	ct_rec_temp(b, 3); /* the new peak: 320 + 5000 */
	ct_rec_free(b, 0);
	one_varint_record(&e, 0x7e, 99, "unknown optional record");
	ct_rec_thread(b, 43, CT_THREAD_STARTED);
	ct_rec_time(b, 5);
	ct_rec_alloc(b, 1);
	ct_rec_alloc(b, 1);
	one_varint_record(&e, CT_REC_SAMPLE, 123456, "newer fields");
	ct_rec_sample(b, 100000);
	ct_rec_temp(b, 2);
	end(&e, 3, 25);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "basic.zst", SIZE_MAX);
}

/* Leak classes (a CLASSES record, as the shim's scan at exit writes it) over four sites:
 *   site A (0x401100): info 0, 100 bytes x 3: 2 definitely lost, 1 still reachable;
 *                      info 3, 24 bytes x 1: definitely lost (A: two kinds, definite from two infos)
 *   site B (0x401200): info 1, 1000 bytes x 1: indirectly lost
 *   site C (0x401300): info 2, 10 bytes x 4: possibly lost; info 4, 5000 bytes, freed after the peak
 * Per class: definite 224 bytes in 3 blocks, indirect 1000 in 1, possible 40 in 4, reachable 100 in 1;
 * leaked 1364 bytes in 9 blocks; the peak heap 1364 + 5000 = 6364 bytes. */
static void classes(const char *dir)
{
	static const char *const argv[] = {"prog"};
	static const struct ct_rec_classes cls[] = {
	    {0, {2, 0, 0, 1}},
	    {1, {0, 1, 0, 0}},
	    {2, {0, 0, 4, 0}},
	    {3, {1, 0, 0, 0}},
	};
	struct enc e;
	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_READER_MIN);
	struct ct_rec_buf *b = &e.b;
	process(&e, "/bin/prog", 1, argv);
	module(&e);
	ct_rec_frame(b, CT_STACK_ROOT, 0x401010); /* 2: main */
	ct_rec_frame(b, 2, 0x401100);             /* 3: site A */
	ct_rec_frame(b, 2, 0x401200);             /* 4: site B */
	ct_rec_frame(b, 2, 0x401300);             /* 5: site C */
	ct_rec_info(b, 100, 3);
	ct_rec_info(b, 1000, 4);
	ct_rec_info(b, 10, 5);
	ct_rec_info(b, 24, 3);
	ct_rec_info(b, 5000, 5);
	ct_rec_time(b, 10);
	for (int i = 0; i < 3; i++)
		ct_rec_alloc(b, 0);
	ct_rec_alloc(b, 1);
	for (int i = 0; i < 4; i++)
		ct_rec_alloc(b, 2);
	ct_rec_alloc(b, 3);
	ct_rec_alloc(b, 4); /* the peak */
	ct_rec_time(b, 10);
	ct_rec_free(b, 4);
	ct_rec_classes(b, cls, sizeof(cls) / sizeof(cls[0]));
	end(&e, 0, 30);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "classes.zst", SIZE_MAX);
}

/* Written as version 1 (before RECENT), which this reader still reads, with ALLOC, FREE and TEMP
 * in their long forms (| tag | info v |, not the writer's one-byte forms). */
static void peak(const char *dir)
{
	struct enc e;
	enc_init(&e, 1, 1);
	struct ct_rec_buf *b = &e.b;
	ct_rec_frame(b, CT_STACK_ROOT, 0x1000);
	ct_rec_frame(b, CT_STACK_ROOT, 0x2000);
	ct_rec_info(b, 10, 2);
	ct_rec_info(b, 1, 3);
	ct_rec_core1(b, CT_REC_ALLOC, 0);
	ct_rec_core1(b, CT_REC_ALLOC, 0);
	ct_rec_time(b, 7);
	ct_rec_core1(b, CT_REC_TEMP, 0); /* 30 bytes at the peak, 3 allocations of info 0 */
	for (int i = 0; i < 5; i++)
		ct_rec_core1(b, CT_REC_ALLOC, 1);
	ct_rec_core1(b, CT_REC_FREE, 0);
	ct_rec_core1(b, CT_REC_FREE, 0);
	end(&e, 0, 9);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "peak.zst", SIZE_MAX);
}

/* A version 1 file holding a record of version 2. */
static void recent_in_v1(const char *dir)
{
	struct enc e;
	enc_init(&e, 1, 1);
	ct_rec_frame(&e.b, CT_STACK_ROOT, 0x1000);
	ct_rec_info(&e.b, 10, 2);
	ct_rec_alloc(&e.b, 0);
	ct_rec_recent(&e.b, 1);
	end(&e, 0, 9);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "recent_v1.zst", SIZE_MAX);
}

/* Events in the short form the writer uses (format.h), TEMPFREE and RECENT. Infos 0..39: sizes
 * 1..40. */
static void short_events(const char *dir, int bad)
{
	struct enc e;
	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_MIN_VERSION);
	struct ct_rec_buf *b = &e.b;
	ct_rec_frame(b, CT_STACK_ROOT, 0x1000);
	for (int i = 0; i < 40; i++)
		ct_rec_info(b, (uint64_t)i + 1, 2);
	ct_rec_alloc(b, 3);  /* one byte */
	ct_rec_alloc(b, 33); /* two */
	ct_rec_temp(b, 20);
	ct_rec_free(b, 3);
	ct_rec_alloc(b, 5);
	ct_rec_tempfree(b, 5);
	for (int i = 9; i <= 11; i++) /* ALLOC records 4, 5, 6: 10, 11, 12 bytes */
		ct_rec_alloc(b, (uint64_t)i);
	ct_rec_recent(b, 2);               /* the 11 bytes */
	ct_rec_core1(b, CT_REC_RECENT, 1); /* the 12 bytes, in the long form */
	ct_rec_recent(b, 3);               /* the 10 bytes */
	if (bad)
		ct_rec_recent(b, CT_RECENT_WINDOW); /* only 6 ALLOC records so far */
	end(&e, 0, 9);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, bad ? "short_bad.zst" : "short.zst", SIZE_MAX);
}

/* What the EPOCH and ZEPOCH traces' records name: infos 0, 1, 2 (10, 100, 1000 bytes) and the time 5 us. */
static void epoch_defs(struct ct_rec_buf *b)
{
	ct_rec_frame(b, CT_STACK_ROOT, 0x1000);
	ct_rec_info(b, 10, 2);
	ct_rec_info(b, 100, 2);
	ct_rec_info(b, 1000, 2);
	ct_rec_time(b, 5);
}

/* EPOCH records (format.h): two lanes' runs and their marks. Infos 0, 1, 2: 10, 100, 1000 bytes.
 * Epoch 1: lane 0 ALLOC 0 (key 0), lane 1 ALLOC 2 (key 1), lane 0 ALLOC 1 (key 2: the peak, 1110
 * bytes at 5 us), lane 0 RECENT 1 (key 3: lane 0's last ALLOC, the 100). Epoch 2: lane 1 RECENT 1
 * (lane 1's last ALLOC, of epoch 1: the 1000). Epoch 3: lane 0's 40 ALLOCs of info 0 under one
 * mark. Leaked: 41 x 10 bytes. Read lane by lane the peak would be 1010; with one RECENT window for
 * both lanes, lane 1's RECENT would free the 100 again. bad: 1 lane 0's last mark names 2 bytes of
 * its 1 left; 2 lane 1's marks end inside a mark; 3 lane 1's RECENT of age 2 after its one ALLOC;
 * 4 a version 5 file. */
static void epochs(const char *dir, int bad)
{
	static const char *const names[] = {"epochs.zst", "epochs_bytes.zst", "epochs_marks.zst",
	                                    "epochs_recent.zst", "epochs_v5.zst"};
	struct enc e;
	enc_init(&e, bad == 4 ? 5 : CTRACK_FORMAT_VERSION, CTRACK_FORMAT_EPOCH_MIN - (bad == 4));
	struct ct_rec_buf *b = &e.b;
	epoch_defs(b);
	const uint8_t run0[] = {0xa0, 0xa1, 0x80}, run1[] = {0xa2}, recent1[] = {0x80}, recent2[] = {0x81};
	uint8_t marks0[3 * CT_EPOCH_MARK_MAX], marks1[CT_EPOCH_MARK_MAX];
	size_t n0 = ct_put_epoch_mark(marks0, 0, 1);
	n0 += ct_put_epoch_mark(marks0 + n0, 2, 1);
	n0 += ct_put_epoch_mark(marks0 + n0, 1, 1 + (bad == 1));
	size_t n1 = ct_put_epoch_mark(marks1, 1, 1) - (bad == 2);
	const uint8_t *run[] = {run0, run1}, *marks[] = {marks0, marks1};
	size_t len[] = {sizeof(run0), sizeof(run1)}, marks_len[] = {n0, n1};
	ct_rec_epoch(b, 2, run, len, marks, marks_len);
	n1 = ct_put_epoch_mark(marks1, 0, 1);
	const uint8_t *run2[] = {run0, bad == 3 ? recent2 : recent1};
	size_t len2[] = {0, 1}, marks_len2[] = {0, n1};
	ct_rec_epoch(b, 2, run2, len2, marks, marks_len2);
	uint8_t allocs[40];
	memset(allocs, 0xa0, sizeof(allocs));
	n0 = ct_put_epoch_mark(marks0, 0, sizeof(allocs));
	const uint8_t *run3[] = {allocs, run1};
	size_t len3[] = {sizeof(allocs), 0}, marks_len3[] = {n0, 0};
	ct_rec_epoch(b, 2, run3, len3, marks, marks_len3);
	end(&e, 0, 9);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, names[bad], SIZE_MAX);
}

/* A lane's part of a ZEPOCH (format.h): the run by columns, then the marks, compressed by the lane's
 * stream c and flushed; its bytes into z[*zlen...]. lie: the first column said 100 bytes longer. */
static void zpart(ZSTD_CCtx *c, const uint8_t *run, size_t len, const uint8_t *marks, size_t mlen, int lie,
                  uint8_t *z, size_t *zlen)
{
	uint8_t cols[CT_COLUMNS][64], part[1024];
	struct ct_columns cs = {{0}, {0}, {0}, 0};
	for (int i = 0; i < CT_COLUMNS; i++)
		cs.col[i] = cols[i];
	if (len > sizeof(cols[0]) || ct_columns_split(run, len, &cs) < 0) {
		fprintf(stderr, "gen_trace: bad run\n");
		exit(1);
	}
	size_t n = 0;
	for (int i = 0; i < CT_COLUMNS; i++)
		n += ct_put_varint(part + n, cs.len[i] + (i == 0 && lie ? 100 : 0));
	for (int i = 0; i < CT_COLUMNS; i++, n += cs.len[i - 1])
		memcpy(part + n, cols[i], cs.len[i]);
	memcpy(part + n, marks, mlen);
	n += mlen;
	ZSTD_inBuffer in = {part, n, 0};
	ZSTD_outBuffer out = {z, 4096, 0};
	if (ZSTD_isError(ZSTD_compressStream2(c, &out, &in, ZSTD_e_flush)) || in.pos < n) {
		fprintf(stderr, "gen_trace: zpart\n");
		exit(1);
	}
	*zlen = out.pos;
}

/* ZEPOCH records (format.h): epochs()'s three epochs, each lane's part compressed by a stream of its
 * own, figures and all the same; lane 0's part of epoch 3 starts a new frame (fresh). bad: 1 lane 1's
 * part of epoch 2 says fresh, but continues its frame; 2 lane 0's first column said longer than its
 * part holds; 3 a version 6 file; 4 lane 1's marks end inside a mark.
 * The marks are one byte each (ct_put_zmark) but the 40 ALLOCs'. */
static void zepochs(const char *dir, int bad)
{
	static const char *const names[] = {"zepochs.zst", "zepochs_fresh.zst", "zepochs_cols.zst",
	                                    "zepochs_v6.zst", "zepochs_marks.zst"};
	struct enc e;
	enc_init(&e, bad == 3 ? 6 : CTRACK_FORMAT_VERSION, CTRACK_FORMAT_ZEPOCH_MIN - (bad == 3));
	struct ct_rec_buf *b = &e.b;
	epoch_defs(b);
	ZSTD_CCtx *lane[2] = {ZSTD_createCCtx(), ZSTD_createCCtx()};
	static uint8_t z0[4096], z1[4096];
	const uint8_t *z[] = {z0, z1};
	size_t zlen[2];
	const uint8_t run0[] = {0xa0, 0xa1, 0x80}, run1[] = {0xa2}, recent1[] = {0x80};
	uint8_t marks0[3 * CT_ZMARK_MAX], marks1[CT_ZMARK_MAX] = {0};
	size_t n0 = ct_put_zmark(marks0, 0, 1);
	n0 += ct_put_zmark(marks0 + n0, 2, 1);
	n0 += ct_put_zmark(marks0 + n0, 1, 1);
	size_t n1 = bad == 4 ? 1 : ct_put_zmark(marks1, 1, 1); /* 00: a long mark's first byte alone */
	zpart(lane[0], run0, sizeof(run0), marks0, n0, bad == 2, z0, &zlen[0]);
	zpart(lane[1], run1, sizeof(run1), marks1, n1, 0, z1, &zlen[1]);
	int fresh[] = {1, 1};
	ct_rec_zepoch(b, 2, z, zlen, fresh);
	n1 = ct_put_zmark(marks1, 0, 1);
	zlen[0] = 0;
	zpart(lane[1], recent1, sizeof(recent1), marks1, n1, 0, z1, &zlen[1]);
	int fresh2[] = {0, bad == 1};
	ct_rec_zepoch(b, 2, z, zlen, fresh2);
	uint8_t allocs[40];
	memset(allocs, 0xa0, sizeof(allocs));
	n0 = ct_put_zmark(marks0, 0, sizeof(allocs)); /* 40 bytes: a long mark */
	ZSTD_CCtx_reset(lane[0], ZSTD_reset_session_only);
	zpart(lane[0], allocs, sizeof(allocs), marks0, n0, 0, z0, &zlen[0]);
	zlen[1] = 0;
	int fresh3[] = {1, 0};
	ct_rec_zepoch(b, 2, z, zlen, fresh3);
	ZSTD_freeCCtx(lane[0]);
	ZSTD_freeCCtx(lane[1]);
	end(&e, 0, 9);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, names[bad], SIZE_MAX);
}

/* Ties in leaked bytes break on allocations, then on the stack id. */
static void ties(const char *dir)
{
	struct enc e;
	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_MIN_VERSION);
	struct ct_rec_buf *b = &e.b;
	for (int i = 0; i < 4; i++)
		ct_rec_frame(b, CT_STACK_ROOT, 0x1000 + 0x10 * (uint64_t)i); /* stacks 2..5 */
	ct_rec_info(b, 8, 5);                                                /* 0: stack 5, 1 x 8 */
	ct_rec_info(b, 4, 4);                                                /* 1: stack 4, 2 x 4 */
	ct_rec_info(b, 8, 3);                                                /* 2: stack 3, 1 x 8 */
	ct_rec_info(b, 100, 2);                                              /* 3: stack 2, 1 x 100 */
	ct_rec_alloc(b, 0);
	ct_rec_alloc(b, 1);
	ct_rec_alloc(b, 1);
	ct_rec_alloc(b, 2);
	ct_rec_alloc(b, 3);
	end(&e, 0, 1);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "ties.zst", SIZE_MAX);
}

static void argv_case(const char *dir)
{
	static const char *const argv[] = {"prog",
	                                   "line1\nline2",
	                                   "\xff\xfe bad",
	                                   "tab\there",
	                                   "quote\"back\\",
	                                   "caf\xc3\xa9",
	                                   "\x01"
	                                   "ctl",
	                                   "it's",
	                                   "\xed\xa0\x80"};
	struct enc e;
	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_MIN_VERSION);
	process(&e, "/bin/pr\xf8g", 9, argv);
	end(&e, 0, 1);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "argv.zst", SIZE_MAX);
}

/* A PROCESS record larger than the reader's window. */
static void big_record(const char *dir)
{
	size_t n = 3u << 20;
	char *arg = malloc(n + 1);
	memset(arg, 'x', n);
	arg[n] = 0;
	const char *argv[] = {"prog", arg};
	struct enc e;
	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_MIN_VERSION);
	process(&e, "/bin/prog", 2, argv);
	end(&e, 0, 1);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "big.zst", SIZE_MAX);
	free(arg);
}

/* Flushed up to the first part; the second part's frame is cut in the middle. */
static void truncated(const char *dir)
{
	struct enc e;
	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_MIN_VERSION);
	struct ct_rec_buf *b = &e.b;
	ct_rec_frame(b, CT_STACK_ROOT, 0x1000);
	ct_rec_info(b, 64, 2);
	ct_rec_time(b, 1000);
	for (int i = 0; i < 10; i++)
		ct_rec_alloc(b, 0);
	ct_rec_free(b, 0);
	compress(&e, ZSTD_e_flush);
	size_t keep = e.zlen;
	/* Incompressible-ish noise so the cut lands inside a block. */
	for (uint64_t i = 0; i < 20000; i++)
		ct_rec_info(b, (i * 2654435761u) & 0xffffff, 2);
	ct_rec_time(b, 500);
	for (int i = 0; i < 100; i++)
		ct_rec_alloc(b, 0);
	end(&e, 0, 2000);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "truncated.zst", keep + (e.zlen - keep) / 2);
}

/* The figures a reader must show for the records up to a flush point of cuts(). */
struct cut_point {
	size_t offset; /* bytes of the file up to the flush */
	uint64_t allocations, frees, bytes, leaked, runtime_us;
};

/* A trace written the way the shim writes one, for test_reader.py to cut anywhere: eight batches
 * of events, each flushed (a reader gets every record up to a flush), then END in the last block.
 * With `checksum` (as the shim) the frame ends with its 4-byte checksum; without, END is flushed
 * too and the frame ends with an empty last block: either way the last bytes of the file hold no
 * record, and a cut there leaves every record readable but the frame unfinished. NAME.json lists
 * the flush points and the figures up to each. */
static void cuts(const char *dir, const char *name, int checksum)
{
	struct cut_point pt[8], now = {0};
	struct enc e;
	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_MIN_VERSION);
	ZSTD_CCtx_setParameter(e.cctx, ZSTD_c_checksumFlag, checksum);
	struct ct_rec_buf *b = &e.b;
	ct_rec_frame(b, CT_STACK_ROOT, 0x1000);
	ct_rec_info(b, 64, 2);  /* info 0 */
	ct_rec_info(b, 100, 2); /* info 1 */
	for (unsigned k = 0; k < 8; k++) {
		/* INFO records of scattered sizes, never used: a batch fills a compressed block of some
		 * hundred bytes, so a cut can land inside one. */
		for (uint64_t i = 0; i < 100; i++)
			ct_rec_info(b, ((k * 100 + i) * 2654435761u) & 0xffff, 2);
		ct_rec_time(b, 1000);
		now.runtime_us += 1000;
		for (unsigned i = 0; i <= k; i++)
			ct_rec_alloc(b, 0);
		ct_rec_free(b, 0);
		ct_rec_alloc(b, 1);
		now.allocations += k + 2;
		now.frees++;
		now.bytes += 64 * (k + 1) + 100;
		now.leaked += 64 * k + 100;
		compress(&e, ZSTD_e_flush);
		now.offset = e.zlen;
		pt[k] = now;
	}
	end(&e, 0, now.runtime_us + 500);
	if (!checksum)
		compress(&e, ZSTD_e_flush);
	compress(&e, ZSTD_e_end);
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s.json", dir, name);
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fprintf(f, "[");
	for (unsigned k = 0; k < 8; k++)
		fprintf(f,
		        "%s{\"offset\": %zu, \"allocations\": %" PRIu64 ", \"frees\": %" PRIu64
		        ", \"bytes_allocated\": %" PRIu64 ", \"leaked_bytes\": %" PRIu64
		        ", \"runtime_ns\": %" PRIu64 "}",
		        k ? ", " : "", pt[k].offset, pt[k].allocations, pt[k].frees, pt[k].bytes,
		        pt[k].leaked, pt[k].runtime_us * 1000);
	fprintf(f, "]\n");
	if (fclose(f)) {
		perror(path);
		exit(1);
	}
	enc_write(&e, dir, name, SIZE_MAX);
}

/* Whole frames, but the writer never wrote END: killed after a flush. */
static void no_end(const char *dir)
{
	struct enc e;
	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_MIN_VERSION);
	ct_rec_frame(&e.b, CT_STACK_ROOT, 0x1000);
	ct_rec_info(&e.b, 8, 2);
	ct_rec_alloc(&e.b, 0);
	ct_rec_time(&e.b, 3);
	compress(&e, ZSTD_e_flush);
	enc_write(&e, dir, "noend.zst", SIZE_MAX);
}

static void newer(const char *dir)
{
	struct enc e;
	enc_init(&e, CTRACK_FORMAT_VERSION + 1, CTRACK_FORMAT_VERSION + 1);
	end(&e, 0, 1);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "newer.zst", SIZE_MAX);
}

static void corrupt(const char *dir)
{
	struct enc e;
	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_MIN_VERSION);
	ct_rec_frame(&e.b, CT_STACK_ROOT, 0x1000); /* offset 20, 4 bytes */
	ct_rec_info(&e.b, 8, 2);                   /* offset 24, 3 bytes */
	ct_rec_alloc(&e.b, 5);                     /* offset 27: info 5 is not defined */
	end(&e, 0, 1);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "corrupt.zst", SIZE_MAX);

	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_MIN_VERSION);
	ct_rec_time(&e.b, 1);
	put_raw(&e, "", 1); /* offset 22: the invalid tag 0x00 */
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "badtag.zst", SIZE_MAX);
}

/* Exact frames (EXACT records) in module()'s segment [0x401000, 0x402000): its first byte as an
 * exact ip is inside it; as a return address it is not (its call, 0x400fff, would be outside):
 *   site A: 100 bytes at node 3, 0x401000 exact, under main (node 2, 0x401010);
 *   site B: 200 bytes at node 4, 0x401000 a return address, under main.
 * exact_first.zst: an EXACT before any FRAME, which names no node: corrupt. */
static void exact(const char *dir)
{
	struct enc e;
	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_READER_MIN);
	process(&e, "/bin/prog", 0, NULL);
	module(&e);
	ct_rec_frame(&e.b, CT_STACK_ROOT, 0x401010);       /* 2: main */
	ct_rec_frame(&e.b, 2, 0x401000 | CT_REC_IP_EXACT); /* 3: site A, EXACT follows */
	ct_rec_frame(&e.b, 2, 0x401000);                   /* 4: site B */
	ct_rec_info(&e.b, 100, 3);
	ct_rec_info(&e.b, 200, 4);
	ct_rec_alloc(&e.b, 0);
	ct_rec_alloc(&e.b, 1);
	end(&e, 0, 1);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "exact.zst", SIZE_MAX);

	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_READER_MIN);
	ct_rec_exact(&e.b); /* offset 20 */
	end(&e, 0, 1);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "exact_first.zst", SIZE_MAX);
}

/* Invalid frees (INVALID) and the fatal signal (CRASH), as the shim writes them for a program that
 * frees a block twice, then dies in a free of a global's address (sites: libfoo.so at 0x401100 and
 * 0x401200 under main, 0x401010):
 *   info 0, 32 bytes at node 3 (0x401100): allocated, freed (TEMP), freed again at 0x401100 alone
 *   (node 5, under the truncated root) after the first free there too: a double free, twice;
 *   a free of a global's address, in which the program died: its backtrace node 4, and CRASH
 *   SIGSEGV (11) at node 6 (an exact frame under node 4).
 * END says 4 unmatched frees: 3 invalid, so 1 of a block allocated before tracing.
 * invalid_bad.zst: an INVALID naming an undefined stack node (offset 20): corrupt. */
static void invalid(const char *dir)
{
	struct enc e;
	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_READER_MIN);
	process(&e, "/bin/prog", 0, NULL);
	module(&e);
	ct_rec_frame(&e.b, CT_STACK_ROOT, 0x401010);       /* 2: main */
	ct_rec_frame(&e.b, 2, 0x401100);                   /* 3: site A */
	ct_rec_frame(&e.b, 2, 0x401200);                   /* 4: site B */
	ct_rec_frame(&e.b, CT_STACK_TRUNCATED, 0x401100);  /* 5: site A alone */
	ct_rec_frame(&e.b, 4, 0x401300 | CT_REC_IP_EXACT); /* 6: where the signal came */
	ct_rec_info(&e.b, 32, 3);
	ct_rec_temp(&e.b, 0);
	for (int i = 0; i < 2; i++)
		ct_rec_invalid(&e.b, &(struct ct_rec_invalid){CT_INVALID_DOUBLE, CT_INVALID_FREE, 5, 5, 1});
	ct_rec_invalid(&e.b, &(struct ct_rec_invalid){CT_INVALID_STATIC, CT_INVALID_FREE, 4, 0, 0});
	ct_rec_crash(&e.b, 11, 6);
	end(&e, 4, 1);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "invalid.zst", SIZE_MAX);

	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_READER_MIN);
	ct_rec_invalid(&e.b, &(struct ct_rec_invalid){CT_INVALID_DOUBLE, CT_INVALID_FREE, 7, 0, 0});
	end(&e, 1, 1);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "invalid_bad.zst", SIZE_MAX);
}

/* A sampled trace (SAMPLING, one allocation per 4096 bytes, seed 7): info 0, 4096 bytes at node 2,
 * allocated twice and freed once; info 1, 100 bytes, allocated once as TEMP. The figures are the
 * weighted ones test_reader.py computes from the rate alone.
 * sampling_zero.zst: a SAMPLING of rate 0 (offset 20): corrupt. sampling_late.zst: a SAMPLING after an
 * INFO record (offset 27), whose events would have counted unweighted: corrupt. sampling_cut.zst: a
 * SAMPLING whose payload ends inside its seed: corrupt. */
static void sampled(const char *dir)
{
	struct enc e;
	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_SAMPLING_MIN);
	process(&e, "/bin/prog", 0, NULL);
	ct_rec_sampling(&e.b, 4096, 7);
	ct_rec_frame(&e.b, CT_STACK_ROOT, 0x401010);
	ct_rec_info(&e.b, 4096, 2);
	ct_rec_info(&e.b, 100, 2);
	ct_rec_alloc(&e.b, 0);
	ct_rec_alloc(&e.b, 0);
	ct_rec_free(&e.b, 0);
	ct_rec_temp(&e.b, 1);
	end(&e, 0, 1);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "sampled.zst", SIZE_MAX);

	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_SAMPLING_MIN);
	ct_rec_sampling(&e.b, 0, 7); /* offset 20 */
	end(&e, 0, 1);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "sampling_zero.zst", SIZE_MAX);

	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_SAMPLING_MIN);
	ct_rec_frame(&e.b, CT_STACK_ROOT, 0x1000); /* offset 20, 4 bytes */
	ct_rec_info(&e.b, 8, 2);                   /* offset 24, 3 bytes */
	ct_rec_sampling(&e.b, 4096, 7);            /* offset 27 */
	end(&e, 0, 1);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "sampling_late.zst", SIZE_MAX);

	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_SAMPLING_MIN);
	put_raw(&e, "\x4a\x03\x80\x20\x80", 5); /* offset 20: rate 4096, a seed cut short */
	end(&e, 0, 1);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "sampling_cut.zst", SIZE_MAX);
}

/* A trace that starts at an attach (ATTACH at 1,700,000,000 s, the process's second attach): info 0,
 * 64 bytes at node 2, allocated twice, one freed; two frees of blocks allocated before the attach
 * (END's unmatched_frees). attach_twice.zst: a second ATTACH (offset 32): corrupt. attach_late.zst: an
 * ATTACH after an INFO record (offset 27): corrupt. attach_cut.zst: an ATTACH whose payload ends inside
 * its time (offset 20): corrupt. attach_zero.zst: attach number 0 (offset 20): corrupt. */
static void attached(const char *dir)
{
	struct enc e;
	const uint64_t at = UINT64_C(1700000000) * 1000000000u;
	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_ATTACH_MIN);
	process(&e, "/bin/prog", 0, NULL);
	ct_rec_attach(&e.b, at, 2);
	ct_rec_frame(&e.b, CT_STACK_ROOT, 0x401010);
	ct_rec_info(&e.b, 64, 2);
	ct_rec_alloc(&e.b, 0);
	ct_rec_alloc(&e.b, 0);
	ct_rec_free(&e.b, 0);
	end(&e, 2, 1);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "attached.zst", SIZE_MAX);

	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_ATTACH_MIN);
	ct_rec_attach(&e.b, at, 1); /* offset 20, 12 bytes */
	ct_rec_attach(&e.b, at, 2); /* offset 32 */
	end(&e, 0, 1);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "attach_twice.zst", SIZE_MAX);

	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_ATTACH_MIN);
	ct_rec_frame(&e.b, CT_STACK_ROOT, 0x1000); /* offset 20, 4 bytes */
	ct_rec_info(&e.b, 8, 2);                   /* offset 24, 3 bytes */
	ct_rec_attach(&e.b, at, 1);                /* offset 27 */
	end(&e, 0, 1);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "attach_late.zst", SIZE_MAX);

	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_ATTACH_MIN);
	put_raw(&e, "\x4b\x03\x80\x80\x80", 5); /* offset 20: a time cut short, no number */
	end(&e, 0, 1);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "attach_cut.zst", SIZE_MAX);

	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_ATTACH_MIN);
	ct_rec_attach(&e.b, at, 0); /* offset 20 */
	end(&e, 0, 1);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "attach_zero.zst", SIZE_MAX);
}

/* An aggregated trace (AGGREGATE, every 1 s; AGG_SNAPSHOT): info 0, 100 bytes at node 2, and info 1,
 * 1000 bytes at node 3. At 1000 us: info 0 allocated 5 times (2 of them temporary, 1 more freed),
 * info 1 twice, all kept; the heap rose to its peak of 2300 bytes at 800 us with 3 blocks of info 0
 * live, and stands at 2200; RSS 4096, at most 8192. At 2000 us: one block of info 1 freed. END at
 * 3000 us. Expected in test_reader.py. The same first snapshot, then a bad one (agg_BAD.zst): an
 * undefined info, more frees than live blocks, infos out of order, a peak that does not rise, a
 * snapshot without AGGREGATE (agg_none.zst), and the trace cut inside its second snapshot's part
 * (agg_cut.zst). */
static void agg_first(struct enc *e, int with_aggregate)
{
	static const struct ct_rec_agg_entry first[] = {{0, 5, 2, 2}, {1, 2, 0, 2}};
	static const struct ct_rec_agg_peak at[] = {{0, 3}};
	enc_init(e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_AGG_MIN);
	process(e, "/bin/prog", 0, NULL);
	if (with_aggregate)
		ct_rec_aggregate(&e->b, 1000000);
	ct_rec_frame(&e->b, CT_STACK_ROOT, 0x401010);
	ct_rec_frame(&e->b, 2, 0x401100);
	ct_rec_info(&e->b, 100, 2);
	ct_rec_info(&e->b, 1000, 3);
	ct_rec_time(&e->b, 1000);
	ct_rec_agg_snapshot(&e->b, &(struct ct_rec_agg_snapshot){.heap_max = 2300,
	                                                         .rss = 4096,
	                                                         .rss_max = 8192,
	                                                         .e = first,
	                                                         .n = 2,
	                                                         .peak = 2300,
	                                                         .peak_us = 800,
	                                                         .p = at,
	                                                         .np = 1});
	compress(e, ZSTD_e_flush);
}

/* The second snapshot: entries e[0 .. n), a peak when peak. */
static void agg_second(struct enc *e, const struct ct_rec_agg_entry *v, size_t n, uint64_t peak)
{
	ct_rec_time(&e->b, 1000);
	ct_rec_agg_snapshot(&e->b, &(struct ct_rec_agg_snapshot){.heap_max = 2200,
	                                                         .rss = 4096,
	                                                         .rss_max = 4096,
	                                                         .e = v,
	                                                         .n = n,
	                                                         .peak = peak,
	                                                         .peak_us = 1900});
}

static void aggregated(const char *dir)
{
	static const struct ct_rec_agg_entry second[] = {{1, 0, 0, -1}};
	static const struct ct_rec_agg_entry undefined[] = {{9, 1, 0, 1}};
	static const struct ct_rec_agg_entry overfree[] = {{1, 0, 0, -3}};
	static const struct ct_rec_agg_entry unordered[] = {{1, 1, 0, 1}, {0, 1, 0, 1}};
	static const struct {
		const char *name;
		const struct ct_rec_agg_entry *v;
		size_t n;
		uint64_t peak;
	} bad[] = {{"agg_undefined.zst", undefined, 1, 0},
	           {"agg_overfree.zst", overfree, 1, 0},
	           {"agg_unordered.zst", unordered, 2, 0},
	           {"agg_lowpeak.zst", second, 1, 2300}};
	struct enc e;
	agg_first(&e, 1);
	agg_second(&e, second, 1, 0);
	end(&e, 0, 3000);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "aggregated.zst", SIZE_MAX);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		agg_first(&e, 1);
		agg_second(&e, bad[i].v, bad[i].n, bad[i].peak);
		end(&e, 0, 3000);
		compress(&e, ZSTD_e_end);
		enc_write(&e, dir, bad[i].name, SIZE_MAX);
	}
	agg_first(&e, 0);
	end(&e, 0, 3000);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "agg_none.zst", SIZE_MAX);
	/* A second snapshot of 20000 infos of sizes zstd cannot guess, cut in the middle of its part. */
	agg_first(&e, 1);
	size_t keep = e.zlen;
	struct ct_rec_agg_entry *many = xrealloc(NULL, 20000 * sizeof(*many));
	for (uint32_t i = 0; i < 20000; i++) {
		ct_rec_info(&e.b, (i * 2654435761u) & 0xffffff, 2);
		many[i] = (struct ct_rec_agg_entry){2 + i, 1 + (i * 40503u) % 97, 0, 1};
	}
	agg_second(&e, many, 20000, 0);
	free(many);
	end(&e, 0, 3000);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "agg_cut.zst", keep + (e.zlen - keep) / 2);
}

static void note(struct enc *e, unsigned level, const char *text)
{
	ct_rec_note(&e->b, level, text, strlen(text));
}

/* NOTE records as the shim writes them (texts and counts are checked in test_reader.py): a warning
 * three times, an info, a warning holding a newline, an info of 2000 bytes. */
static void notes(const char *dir)
{
	static const char w1[] = "dropped 5 events: the stack table is full";
	char *long_text = malloc(2001);
	memset(long_text, 'x', 2000);
	long_text[2000] = 0;
	struct enc e;
	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_MIN_VERSION);
	ct_rec_frame(&e.b, CT_STACK_ROOT, 0x1000);
	ct_rec_info(&e.b, 8, 2);
	note(&e, CT_NOTE_WARNING, w1);
	ct_rec_alloc(&e.b, 0);
	note(&e, CT_NOTE_INFO, "CTRACK_DEPTH=1000 clamped to 256");
	note(&e, CT_NOTE_WARNING, w1);
	compress(&e, ZSTD_e_flush);
	note(&e, CT_NOTE_WARNING, "write error: No space left on device\nretrying");
	note(&e, CT_NOTE_WARNING, w1);
	note(&e, CT_NOTE_INFO, long_text);
	end(&e, 0, 5);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "notes.zst", SIZE_MAX);
	free(long_text);

	/* More distinct texts than the reader keeps: 70 warnings, "note 0" to "note 69". */
	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_MIN_VERSION);
	for (int i = 0; i < 70; i++) {
		char text[32];
		snprintf(text, sizeof(text), "note %d", i);
		note(&e, CT_NOTE_WARNING, text);
	}
	end(&e, 0, 1);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "notes_many.zst", SIZE_MAX);
}

/* zstd, but not a trace. */
static void other(const char *dir)
{
	struct enc e;
	enc_init(&e, 0, 0);
	put_raw(&e, "just some text, compressed\n", 27);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "other.zst", SIZE_MAX);
}

/* ---- bombs: small files that ask for much memory or work (test_reader.py's test_bombs) ---- */

/* Flushes the record buffer into zstd when it holds a MiB, so a bomb is written in little memory. */
static void spill(struct enc *e)
{
	if (e->b.len >= 1 << 20)
		compress(e, ZSTD_e_continue);
}

/* 50 million INFO records of one (size, stack): 150 MB of records in a few KiB of file. */
static void info_bomb(const char *dir)
{
	struct enc e;
	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_MIN_VERSION);
	ct_rec_frame(&e.b, CT_STACK_ROOT, 0x1000);
	for (uint64_t i = 0; i < 50000000; i++) {
		ct_rec_info(&e.b, 1, CT_STACK_FIRST);
		spill(&e);
	}
	end(&e, 0, 1);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "bomb_info.zst", SIZE_MAX);
}

/* 100,000 modules, each one record with the next id, the same path. */
static void module_bomb(const char *dir)
{
	static const struct ct_rec_segment seg = {0, 0x1000, 0, CT_SEG_READ | CT_SEG_EXEC};
	struct enc e;
	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_MIN_VERSION);
	for (uint64_t i = 0; i < 100000; i++) {
		struct ct_rec_module m = {
		    .id = i, .base = 0x10000000, .path = "/x", .path_len = 2, .segs = &seg, .nseg = 1};
		ct_rec_module(&e.b, &m);
		spill(&e);
	}
	end(&e, 0, 1);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "bomb_modules.zst", SIZE_MAX);
}

/* 1000 modules of 1000 segments each, none holding the FRAME records' ips: every FRAME looks at a
 * million segments. */
static void lookup_bomb(const char *dir)
{
	static struct ct_rec_segment segs[1000];
	for (size_t i = 0; i < 1000; i++)
		segs[i] = (struct ct_rec_segment){i * 0x1000, 0x1000, 0, CT_SEG_READ};
	struct enc e;
	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_MIN_VERSION);
	for (uint64_t i = 0; i < 1000; i++) {
		struct ct_rec_module m = {
		    .id = i, .base = (i + 1) << 32, .path = "/x", .path_len = 2, .segs = segs, .nseg = 1000};
		ct_rec_module(&e.b, &m);
		spill(&e);
	}
	for (uint64_t i = 0; i < 1000000; i++) {
		ct_rec_frame(&e.b, CT_STACK_ROOT, 0x10);
		spill(&e);
	}
	end(&e, 0, 1);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "bomb_lookups.zst", SIZE_MAX);
}

/* 100,000 infos, then ten million empty CLASSES records: each clears every info's classes. */
static void classes_bomb(const char *dir)
{
	struct enc e;
	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_MIN_VERSION);
	ct_rec_frame(&e.b, CT_STACK_ROOT, 0x1000);
	for (uint64_t i = 0; i < 100000; i++)
		ct_rec_info(&e.b, i, CT_STACK_FIRST);
	for (uint64_t i = 0; i < 10000000; i++) {
		ct_rec_classes(&e.b, NULL, 0);
		spill(&e);
	}
	end(&e, 0, 1);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "bomb_classes.zst", SIZE_MAX);
}

/* ---- the speed trace: prints its expected figures as JSON ---- */

static void bench(const char *path, uint64_t events)
{
	enum { NINFO = 10000, NSTACK = 1000 };
	struct enc e;
	uint64_t allocs = 0, frees = 0, bytes = 0, temps = 0, cur = 0, peak = 0, live = 0;
	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_MIN_VERSION);
	for (uint64_t s = 0; s < NSTACK; s++)
		ct_rec_frame(&e.b, s % 20 ? CT_STACK_FIRST + s - 1 : CT_STACK_ROOT,
		             0x400000 + 0x40 * s); /* depth <= 20 */
	for (uint64_t i = 0; i < NINFO; i++)
		ct_rec_info(&e.b, 16 + i, CT_STACK_FIRST + i % NSTACK);
	/* Groups of four events: ALLOC a, ALLOC b, FREE a, TEMP c with scattered infos (so the trace
	 * compresses like a real one, not to nothing); a TIME every 1024 groups. */
	for (uint64_t g = 0; 4 * g + 4 <= events; g++) {
		uint64_t h = (g + 1) * 0x9e3779b97f4a7c15ull;
		uint64_t a = (h >> 10) % NINFO, b = (h >> 30) % NINFO, c = (h >> 50) % NINFO;
		ct_rec_alloc(&e.b, a);
		ct_rec_alloc(&e.b, b);
		ct_rec_free(&e.b, a);
		ct_rec_temp(&e.b, c);
		cur += 16 + a;
		peak = cur > peak ? cur : peak;
		cur += 16 + b;
		peak = cur > peak ? cur : peak;
		cur -= 16 + a;
		peak = cur + 16 + c > peak ? cur + 16 + c : peak;
		allocs += 3, frees += 2, temps++, live++;
		bytes += 48 + a + b + c;
		if (g % 1024 == 1023)
			ct_rec_time(&e.b, 1);
		if (e.b.len >= 1 << 20)
			compress(&e, ZSTD_e_continue);
	}
	end(&e, 0, events / 4096);
	compress(&e, ZSTD_e_end);
	enc_write(&e, NULL, path, SIZE_MAX);
	printf("{\"allocations\": %" PRIu64 ", \"frees\": %" PRIu64 ", \"bytes_allocated\": %" PRIu64
	       ", \"temporary_allocations\": %" PRIu64 ", \"peak_heap_bytes\": %" PRIu64
	       ", \"leaked_bytes\": %" PRIu64 ", \"leaked_allocations\": %" PRIu64 "}\n",
	       allocs, frees, bytes, temps, peak, cur, live);
}

static int summary(const char *path)
{
	struct ct_trace_summary s;
	char err[512];
	if (ct_trace_summarize(path, &s, err, sizeof(err)) < 0) {
		printf("{\"error\": \"%s\"}\n", err); /* the tests' messages hold no quotes */
		return 0;
	}
	printf("{\"allocations\": %" PRIu64 ", \"frees\": %" PRIu64 ", \"bytes_allocated\": %" PRIu64
	       ", \"temporary_allocations\": %" PRIu64 ", \"peak_heap_bytes\": %" PRIu64
	       ", \"leaked_bytes\": %" PRIu64 ", \"leaked_allocations\": %" PRIu64
	       ", \"runtime_ns\": %" PRIu64 ", \"complete\": %s, \"warnings\": %" PRIu64
	       ", \"first_warning\": \"",
	       s.allocations, s.frees, s.bytes_allocated, s.temporary, s.peak_heap_bytes, s.leaked_bytes,
	       s.leaked_allocations, s.runtime_ns, s.complete ? "true" : "false", s.warnings);
	for (const char *p = s.first_warning; *p; p++) /* one line, no control bytes: quote " and \ */
		printf("%s%c", *p == '"' || *p == '\\' ? "\\" : "", *p);
	printf("\"}\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--bench")) {
		bench(argv[3], strtoull(argv[2], NULL, 10));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "--summary"))
		return summary(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "--bombs")) {
		info_bomb(argv[2]);
		module_bomb(argv[2]);
		lookup_bomb(argv[2]);
		classes_bomb(argv[2]);
		return 0;
	}
	if (argc != 2) {
		fprintf(stderr,
		        "usage: gen_trace DIR | --bombs DIR | --bench EVENTS FILE | --summary TRACE\n");
		return 2;
	}
	const char *dir = argv[1];
	basic(dir);
	classes(dir);
	peak(dir);
	ties(dir);
	short_events(dir, 0);
	short_events(dir, 1);
	for (int bad = 0; bad <= 4; bad++) {
		epochs(dir, bad);
		zepochs(dir, bad);
	}
	recent_in_v1(dir);
	argv_case(dir);
	big_record(dir);
	truncated(dir);
	no_end(dir);
	notes(dir);
	cuts(dir, "cuts.zst", 1);
	cuts(dir, "cuts_nocheck.zst", 0);
	newer(dir);
	corrupt(dir);
	exact(dir);
	invalid(dir);
	sampled(dir);
	attached(dir);
	aggregated(dir);
	other(dir);
	return 0;
}
