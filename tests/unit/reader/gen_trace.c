/* SPDX-License-Identifier: MIT */
/* Test-only trace encoder: writes the synthetic traces test_reader.py checks, a big trace for the
 * reader's speed, and prints ct_trace_summarize()'s figures. Encodes only with format.h's helpers. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "summary.h"
#include "ctrack/format.h"

/* ---- the encoder: records into raw, raw into zstd frames into z ---- */

struct enc {
	uint8_t *raw;
	size_t len, cap;
	uint8_t *z;
	size_t zlen, zcap;
	ZSTD_CCtx *cctx;
	uint64_t last_ip;
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

static void need(uint8_t **buf, size_t *cap, size_t len, size_t more)
{
	while (len + more > *cap) {
		*cap = *cap ? *cap * 2 : 1 << 16;
		*buf = xrealloc(*buf, *cap);
	}
}

static void put_bytes(struct enc *e, const void *p, size_t n)
{
	need(&e->raw, &e->cap, e->len, n);
	memcpy(e->raw + e->len, p, n);
	e->len += n;
}

static void put_u8(struct enc *e, uint8_t b) { put_bytes(e, &b, 1); }

static void put_v(struct enc *e, uint64_t v)
{
	uint8_t b[CT_VARINT_MAX];
	put_bytes(e, b, ct_put_varint(b, v));
}

static void put_s(struct enc *e, const char *s, size_t n)
{
	put_v(e, n);
	put_bytes(e, s, n);
}

static void put_str(struct enc *e, const char *s) { put_s(e, s, strlen(s)); }

/* Compresses what is in raw; mode ZSTD_e_flush keeps the frame open, ZSTD_e_end closes it. */
static void compress(struct enc *e, ZSTD_EndDirective mode)
{
	ZSTD_inBuffer in = {e->raw, e->len, 0};
	size_t left;
	do {
		need(&e->z, &e->zcap, e->zlen, ZSTD_CStreamOutSize());
		ZSTD_outBuffer out = {e->z, e->zcap, e->zlen};
		left = ZSTD_compressStream2(e->cctx, &out, &in, mode);
		if (ZSTD_isError(left)) {
			fprintf(stderr, "gen_trace: %s\n", ZSTD_getErrorName(left));
			exit(1);
		}
		e->zlen = out.pos;
	} while (left || in.pos < in.size);
	e->len = 0;
}

static void enc_init(struct enc *e, uint16_t version, uint16_t min_version)
{
	memset(e, 0, sizeof(*e));
	e->cctx = ZSTD_createCCtx();
	uint8_t h[CT_HEADER_SIZE];
	ct_put_header(h);
	ct_put_u16(h + 8, version);
	ct_put_u16(h + 10, min_version);
	put_bytes(e, h, sizeof(h));
}

/* Writes the first `keep` compressed bytes (all if keep == SIZE_MAX) and frees the encoder. */
static void enc_write(struct enc *e, const char *dir, const char *name, size_t keep)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s%s%s", dir ? dir : "", dir ? "/" : "", name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(e->z, 1, keep < e->zlen ? keep : e->zlen, f) != (keep < e->zlen ? keep : e->zlen) ||
	    fclose(f)) {
		perror(path);
		exit(1);
	}
	ZSTD_freeCCtx(e->cctx);
	free(e->raw);
	free(e->z);
}

static void core(struct enc *e, enum ct_record_tag tag, uint64_t v)
{
	put_u8(e, (uint8_t)tag);
	put_v(e, v);
}

static void info(struct enc *e, uint64_t size, uint64_t stack)
{
	put_u8(e, CT_REC_INFO);
	put_v(e, size);
	put_v(e, stack);
}

static void frame(struct enc *e, uint64_t parent, uint64_t ip)
{
	put_u8(e, CT_REC_FRAME);
	put_v(e, parent);
	put_v(e, ct_zigzag((int64_t)(ip - e->last_ip)));
	e->last_ip = ip;
}

/* Framed records: the payload is built in a second encoder's raw buffer, then framed. */
static void framed(struct enc *e, enum ct_record_tag tag, const struct enc *payload)
{
	put_u8(e, (uint8_t)tag);
	put_v(e, payload->len);
	put_bytes(e, payload->raw, payload->len);
}

static void process(struct enc *e, const char *exe, int argc, const char *const *argv)
{
	struct enc p = {0};
	put_v(&p, 42);
	put_v(&p, 1);
	put_v(&p, 1700000000000000000ull);
	put_str(&p, exe);
	put_v(&p, (uint64_t)argc);
	for (int i = 0; i < argc; i++)
		put_str(&p, argv[i]);
	framed(e, CT_REC_PROCESS, &p);
	free(p.raw);
}

static void end(struct enc *e, uint64_t unmatched, uint64_t end_us)
{
	struct enc p = {0};
	for (int i = 0; i < 3; i++)
		put_v(&p, 0); /* allocations, frees, bytes: the reader counts them itself */
	put_v(&p, unmatched);
	put_v(&p, 0);
	put_v(&p, end_us);
	framed(e, CT_REC_END, &p);
	free(p.raw);
}

static void one_varint_record(struct enc *e, enum ct_record_tag tag, uint64_t v, const char *extra)
{
	struct enc p = {0};
	put_v(&p, v);
	put_bytes(&p, extra, strlen(extra)); /* trailing bytes a newer writer might append */
	framed(e, tag, &p);
	free(p.raw);
}

/* ---- the cases (expected figures are in test_reader.py) ---- */

static void module(struct enc *e)
{
	struct enc p = {0};
	put_v(&p, 0);
	put_v(&p, 0x400000);
	put_str(&p, "/nonexistent/libfoo.so");
	put_s(&p, "\x01\x02\x03\x04", 4);
	put_v(&p, 1);
	put_v(&p, 0x1000);
	put_v(&p, 0x1000);
	put_v(&p, 0x1000);
	put_u8(&p, CT_SEG_READ | CT_SEG_EXEC);
	framed(e, CT_REC_MODULE, &p);
	free(p.raw);
}

static void basic(const char *dir)
{
	static const char *const argv[] = {"prog", "a b"};
	struct enc e;
	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_MIN_VERSION);
	process(&e, "/bin/prog", 2, argv);
	module(&e);
	frame(&e, CT_STACK_ROOT, 0x401000);      /* 2: main */
	frame(&e, 2, 0x401100);                  /* 3: site A */
	frame(&e, 2, 0x401200);                  /* 4: site B */
	frame(&e, CT_STACK_TRUNCATED, 0x401300); /* 5: site C, deeper frames cut */
	info(&e, 100, 3);
	info(&e, 1000, 4);
	info(&e, 10, 3);
	info(&e, 5000, 5);
	core(&e, CT_REC_TIME, 10);
	for (int i = 0; i < 3; i++)
		core(&e, CT_REC_ALLOC, 0);
	compress(&e, ZSTD_e_flush);
	core(&e, CT_REC_ALLOC, 2);
	core(&e, CT_REC_ALLOC, 2);
	core(&e, CT_REC_ALLOC, 1);
	compress(&e, ZSTD_e_end); /* several frames, as a writer with late events makes */
	core(&e, CT_REC_TIME, 5);
	core(&e, CT_REC_FREE, 1);
	core(&e, CT_REC_TEMP, 3); /* the new peak: 320 + 5000 */
	core(&e, CT_REC_FREE, 0);
	one_varint_record(&e, 0x7e, 99, "unknown optional record");
	put_u8(&e, CT_REC_NOTE);
	put_v(&e, 4);
	put_bytes(&e, "\x01\x02hi", 4);
	core(&e, CT_REC_TIME, 5);
	core(&e, CT_REC_ALLOC, 1);
	core(&e, CT_REC_ALLOC, 1);
	one_varint_record(&e, CT_REC_SAMPLE, 123456, "newer fields");
	one_varint_record(&e, CT_REC_SAMPLE, 100000, "");
	core(&e, CT_REC_TEMP, 2);
	end(&e, 3, 25);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "basic.zst", SIZE_MAX);
}

/* Written as version 1 (before RECENT), which this reader still reads. */
static void peak(const char *dir)
{
	struct enc e;
	enc_init(&e, 1, 1);
	frame(&e, CT_STACK_ROOT, 0x1000);
	frame(&e, CT_STACK_ROOT, 0x2000);
	info(&e, 10, 2);
	info(&e, 1, 3);
	core(&e, CT_REC_ALLOC, 0);
	core(&e, CT_REC_ALLOC, 0);
	core(&e, CT_REC_TIME, 7);
	core(&e, CT_REC_TEMP, 0); /* 30 bytes at the peak, 3 allocations of info 0 */
	for (int i = 0; i < 5; i++)
		core(&e, CT_REC_ALLOC, 1);
	core(&e, CT_REC_FREE, 0);
	core(&e, CT_REC_FREE, 0);
	end(&e, 0, 9);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "peak.zst", SIZE_MAX);
}

/* A version 1 file holding a record of version 2. */
static void recent_in_v1(const char *dir)
{
	struct enc e;
	uint8_t b[1];
	enc_init(&e, 1, 1);
	frame(&e, CT_STACK_ROOT, 0x1000);
	info(&e, 10, 2);
	core(&e, CT_REC_ALLOC, 0);
	put_bytes(&e, b, ct_put_recent(b, 1));
	end(&e, 0, 9);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "recent_v1.zst", SIZE_MAX);
}

/* Events in the short form the writer uses (format.h), TEMPFREE and RECENT. Infos 0..39: sizes
 * 1..40. */
static void short_events(const char *dir, int bad)
{
	struct enc e;
	uint8_t b[1 + CT_VARINT_MAX];
	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_MIN_VERSION);
	frame(&e, CT_STACK_ROOT, 0x1000);
	for (int i = 0; i < 40; i++)
		info(&e, (uint64_t)i + 1, 2);
	put_bytes(&e, b, ct_put_short_event(b, CT_REC_ALLOC, 3));  /* one byte */
	put_bytes(&e, b, ct_put_short_event(b, CT_REC_ALLOC, 33)); /* two */
	put_bytes(&e, b, ct_put_short_event(b, CT_REC_TEMP, 20));
	put_bytes(&e, b, ct_put_short_event(b, CT_REC_FREE, 3));
	put_bytes(&e, b, ct_put_short_event(b, CT_REC_ALLOC, 5));
	core(&e, CT_REC_TEMPFREE, 5);
	for (int i = 9; i <= 11; i++) /* ALLOC records 4, 5, 6: 10, 11, 12 bytes */
		put_bytes(&e, b, ct_put_short_event(b, CT_REC_ALLOC, (uint64_t)i));
	put_bytes(&e, b, ct_put_recent(b, 2)); /* the 11 bytes */
	core(&e, CT_REC_RECENT, 1);            /* the 12 bytes, in the long form */
	put_bytes(&e, b, ct_put_recent(b, 3)); /* the 10 bytes */
	if (bad)
		put_bytes(&e, b, ct_put_recent(b, CT_RECENT_WINDOW)); /* only 6 ALLOC records so far */
	end(&e, 0, 9);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, bad ? "short_bad.zst" : "short.zst", SIZE_MAX);
}

/* Ties in leaked bytes break on allocations, then on the stack id. */
static void ties(const char *dir)
{
	struct enc e;
	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_MIN_VERSION);
	for (int i = 0; i < 4; i++)
		frame(&e, CT_STACK_ROOT, 0x1000 + 0x10 * (uint64_t)i); /* stacks 2..5 */
	info(&e, 8, 5); /* 0: stack 5, 1 x 8 */
	info(&e, 4, 4); /* 1: stack 4, 2 x 4 */
	info(&e, 8, 3); /* 2: stack 3, 1 x 8 */
	info(&e, 100, 2); /* 3: stack 2, 1 x 100 */
	core(&e, CT_REC_ALLOC, 0);
	core(&e, CT_REC_ALLOC, 1);
	core(&e, CT_REC_ALLOC, 1);
	core(&e, CT_REC_ALLOC, 2);
	core(&e, CT_REC_ALLOC, 3);
	end(&e, 0, 1);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "ties.zst", SIZE_MAX);
}

static void argv_case(const char *dir)
{
	static const char *const argv[] = {"prog", "line1\nline2", "\xff\xfe bad", "tab\there",
	                                   "quote\"back\\", "caf\xc3\xa9", "\x01" "ctl", "it's", "\xed\xa0\x80"};
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
	frame(&e, CT_STACK_ROOT, 0x1000);
	info(&e, 64, 2);
	core(&e, CT_REC_TIME, 1000);
	for (int i = 0; i < 10; i++)
		core(&e, CT_REC_ALLOC, 0);
	core(&e, CT_REC_FREE, 0);
	compress(&e, ZSTD_e_flush);
	size_t keep = e.zlen;
	/* Incompressible-ish noise so the cut lands inside a block. */
	for (uint64_t i = 0; i < 20000; i++)
		info(&e, (i * 2654435761u) & 0xffffff, 2);
	core(&e, CT_REC_TIME, 500);
	for (int i = 0; i < 100; i++)
		core(&e, CT_REC_ALLOC, 0);
	end(&e, 0, 2000);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "truncated.zst", keep + (e.zlen - keep) / 2);
}

/* Whole frames, but the writer never wrote END: killed after a flush. */
static void no_end(const char *dir)
{
	struct enc e;
	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_MIN_VERSION);
	frame(&e, CT_STACK_ROOT, 0x1000);
	info(&e, 8, 2);
	core(&e, CT_REC_ALLOC, 0);
	core(&e, CT_REC_TIME, 3);
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
	frame(&e, CT_STACK_ROOT, 0x1000); /* offset 20, 4 bytes */
	info(&e, 8, 2);                   /* offset 24, 3 bytes */
	core(&e, CT_REC_ALLOC, 5);        /* offset 27: info 5 is not defined */
	end(&e, 0, 1);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "corrupt.zst", SIZE_MAX);

	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_MIN_VERSION);
	core(&e, CT_REC_TIME, 1);
	put_u8(&e, 0x00); /* offset 22: invalid tag */
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "badtag.zst", SIZE_MAX);
}

/* zstd, but not a trace. */
static void other(const char *dir)
{
	struct enc e;
	memset(&e, 0, sizeof(e));
	e.cctx = ZSTD_createCCtx();
	put_bytes(&e, "just some text, compressed\n", 27);
	compress(&e, ZSTD_e_end);
	enc_write(&e, dir, "other.zst", SIZE_MAX);
}

/* ---- the speed trace: prints its expected figures as JSON ---- */

static void bench(const char *path, uint64_t events)
{
	enum { NINFO = 10000, NSTACK = 1000 };
	struct enc e;
	uint64_t allocs = 0, frees = 0, bytes = 0, temps = 0, cur = 0, peak = 0, live = 0;
	enc_init(&e, CTRACK_FORMAT_VERSION, CTRACK_FORMAT_MIN_VERSION);
	for (uint64_t s = 0; s < NSTACK; s++)
		frame(&e, s % 20 ? CT_STACK_FIRST + s - 1 : CT_STACK_ROOT, 0x400000 + 0x40 * s); /* depth <= 20 */
	for (uint64_t i = 0; i < NINFO; i++)
		info(&e, 16 + i, CT_STACK_FIRST + i % NSTACK);
	/* Groups of four events: ALLOC a, ALLOC b, FREE a, TEMP c with scattered infos (so the trace
	 * compresses like a real one, not to nothing); a TIME every 1024 groups. */
	for (uint64_t g = 0; 4 * g + 4 <= events; g++) {
		uint64_t h = (g + 1) * 0x9e3779b97f4a7c15ull;
		uint64_t a = (h >> 10) % NINFO, b = (h >> 30) % NINFO, c = (h >> 50) % NINFO;
		core(&e, CT_REC_ALLOC, a);
		core(&e, CT_REC_ALLOC, b);
		core(&e, CT_REC_FREE, a);
		core(&e, CT_REC_TEMP, c);
		cur += 16 + a;
		peak = cur > peak ? cur : peak;
		cur += 16 + b;
		peak = cur > peak ? cur : peak;
		cur -= 16 + a;
		peak = cur + 16 + c > peak ? cur + 16 + c : peak;
		allocs += 3, frees += 2, temps++, live++;
		bytes += 48 + a + b + c;
		if (g % 1024 == 1023)
			core(&e, CT_REC_TIME, 1);
		if (e.len >= 1 << 20)
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
	       ", \"leaked_bytes\": %" PRIu64 ", \"leaked_allocations\": %" PRIu64 ", \"runtime_ns\": %" PRIu64
	       ", \"complete\": %s}\n",
	       s.allocations, s.frees, s.bytes_allocated, s.temporary, s.peak_heap_bytes, s.leaked_bytes,
	       s.leaked_allocations, s.runtime_ns, s.complete ? "true" : "false");
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
	if (argc != 2) {
		fprintf(stderr, "usage: gen_trace DIR | --bench EVENTS FILE | --summary TRACE\n");
		return 2;
	}
	const char *dir = argv[1];
	basic(dir);
	peak(dir);
	ties(dir);
	short_events(dir, 0);
	short_events(dir, 1);
	recent_in_v1(dir);
	argv_case(dir);
	big_record(dir);
	truncated(dir);
	no_end(dir);
	newer(dir);
	corrupt(dir);
	other(dir);
	return 0;
}
