/* SPDX-License-Identifier: MIT */
/* Golden bytes of the trace format: every record of include/ctrack/format.h, encoded by
 * include/ctrack/record.h, against bytes written out here by hand from format.h's layouts and
 * examples (the arithmetic is in the comments; none of it came from running the encoder). The
 * goldens are format version 2's: a change of encoding needs a version bump and new goldens, and
 * the `version` test fails until both are done. Also: format.h's own helpers (ct_put_*) give the
 * same bytes and its comments' examples, and a buffer that cannot grow drops whole records and
 * counts them.
 *
 * Usage: test-format [TEST]  runs TEST (header, short, recent, tempfree, time, info, frame, exact,
 * process, module, unmodule, end, exec, thread, sample, note, version, examples, dropped, invalid,
 * aggregate, trailer, file-hash),
 * or all.
 * Prints PASS/FAIL lines; exit status 0 when all pass, 1 otherwise, 2 for an unknown TEST. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/columns.h"
#include "ctrack/format.h"
#include "ctrack/record.h"
#include "ctrack/trailer.h"
#include "rec_heap.h"
#include "../xorshift.h"

static int failed;

static void report(const char *name, int ok)
{
	printf("%s %s\n", ok ? "PASS" : "FAIL", name);
	if (!ok)
		failed = 1;
}

static void print_hex(const char *label, const uint8_t *p, size_t n)
{
	printf("  %s (%zu bytes):", label, n);
	for (size_t i = 0; i < n; i++)
		printf(" %02x", p[i]);
	printf("\n");
}

/* Compares n bytes at got with want; on a difference prints both. */
static int same_bytes(const char *name, const uint8_t *got, size_t got_len, const uint8_t *want,
                      size_t want_len)
{
	int ok = got_len == want_len && (!want_len || memcmp(got, want, want_len) == 0);
	report(name, ok);
	if (!ok) {
		print_hex("got ", got, got_len);
		print_hex("want", want, want_len);
	}
	return ok;
}

/* ---- buffers ---- */

static void buf_init(struct ct_rec_buf *b)
{
	memset(b, 0, sizeof(*b));
	b->grow = ct_rec_grow_heap;
}

/* A literal byte list: its address and its length. */
#define BYTES(...) ((const uint8_t[]){__VA_ARGS__}), sizeof((const uint8_t[]){__VA_ARGS__})

/* Encodes with `stmt` (which names the buffer b) into a fresh buffer and compares with the bytes;
 * nothing may be dropped. */
#define GOLDEN(name, stmt, ...) \
	do { \
		struct ct_rec_buf b; \
		buf_init(&b); \
		stmt; \
		if (same_bytes(name, b.data, b.len, BYTES(__VA_ARGS__)) && b.dropped) \
			report(name ": nothing dropped", 0); \
		free(b.data); \
	} while (0)

/* ---- the file header ---- */

static void test_header(void)
{
	/* magic 89 'C' 'T' 'R' 'A' 'C' 'K' '\n'; version 8, min_version 4 (version 4 added BATCH; a
	 * version 4 reader skips version 5's EXACT; only traces with ZEPOCH records say 7, aggregated
	 * ones 8), header_size 20, all u16 little-endian; pointer_size 8; flags 0; features 0 (u32). */
	GOLDEN("header", ct_rec_header(&b), 0x89, 0x43, 0x54, 0x52, 0x41, 0x43, 0x4b, 0x0a, 0x08, 0x00, 0x04,
	       0x00, 0x14, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00);
	uint8_t h[CT_HEADER_SIZE];
	same_bytes("header: format.h's ct_put_header", h, ct_put_header(h),
	           BYTES(0x89, 0x43, 0x54, 0x52, 0x41, 0x43, 0x4b, 0x0a, 0x08, 0x00, 0x04, 0x00, 0x14, 0x00,
	                 0x08, 0x00, 0x00, 0x00, 0x00, 0x00));
	GOLDEN("header of a trace with ZEPOCH records: min_version 7",
	       ct_rec_header_min(&b, CTRACK_FORMAT_ZEPOCH_MIN), 0x89, 0x43, 0x54, 0x52, 0x41, 0x43, 0x4b,
	       0x0a, 0x08, 0x00, 0x07, 0x00, 0x14, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00);
	GOLDEN("header of an aggregated trace: min_version 8", ct_rec_header_min(&b, CTRACK_FORMAT_AGG_MIN),
	       0x89, 0x43, 0x54, 0x52, 0x41, 0x43, 0x4b, 0x0a, 0x08, 0x00, 0x08, 0x00, 0x14, 0x00, 0x08, 0x00,
	       0x00, 0x00, 0x00, 0x00);
	GOLDEN("header of a trace that starts at an attach: min_version 8",
	       ct_rec_header_min(&b, CTRACK_FORMAT_ATTACH_MIN), 0x89, 0x43, 0x54, 0x52, 0x41, 0x43, 0x4b,
	       0x0a, 0x08, 0x00, 0x08, 0x00, 0x14, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00);
}

/* ---- core events ---- */

/* Short events: | 1 k k c i i i i | [info >> 4 v] |, kk = 1 ALLOC, 2 FREE, 3 TEMP, so the first
 * byte is 0xa0 (ALLOC), 0xc0 (FREE) or 0xe0 (TEMP), | 0x10 when the varint follows, | info & 15.
 *   info 0:    i = 0, no varint                        -> a0 / c0 / e0
 *   info 15:   i = 15, no varint                       -> af / cf / ef
 *   info 16:   16 = 1 * 16 + 0: c, i = 0, varint 1      -> b0 01 / d0 01 / f0 01
 *   info 2047: 2047 = 127 * 16 + 15: varint 127 = 7f    -> bf 7f / df 7f / ff 7f
 *   info 2048: 2048 = 128 * 16 + 0: varint 128 = 80 01  -> b0 80 01 / d0 80 01 / f0 80 01 */
static void test_short(void)
{
	GOLDEN("ALLOC 0", ct_rec_alloc(&b, 0), 0xa0);
	GOLDEN("ALLOC 15", ct_rec_alloc(&b, 15), 0xaf);
	GOLDEN("ALLOC 16", ct_rec_alloc(&b, 16), 0xb0, 0x01);
	GOLDEN("ALLOC 2047", ct_rec_alloc(&b, 2047), 0xbf, 0x7f);
	GOLDEN("ALLOC 2048", ct_rec_alloc(&b, 2048), 0xb0, 0x80, 0x01);
	GOLDEN("FREE 0", ct_rec_free(&b, 0), 0xc0);
	GOLDEN("FREE 15", ct_rec_free(&b, 15), 0xcf);
	GOLDEN("FREE 16", ct_rec_free(&b, 16), 0xd0, 0x01);
	GOLDEN("FREE 2047", ct_rec_free(&b, 2047), 0xdf, 0x7f);
	GOLDEN("FREE 2048", ct_rec_free(&b, 2048), 0xd0, 0x80, 0x01);
	GOLDEN("TEMP 0", ct_rec_temp(&b, 0), 0xe0);
	GOLDEN("TEMP 15", ct_rec_temp(&b, 15), 0xef);
	GOLDEN("TEMP 16", ct_rec_temp(&b, 16), 0xf0, 0x01);
	GOLDEN("TEMP 2047", ct_rec_temp(&b, 2047), 0xff, 0x7f);
	GOLDEN("TEMP 2048", ct_rec_temp(&b, 2048), 0xf0, 0x80, 0x01);
	/* Records follow each other with nothing between them. */
	GOLDEN("ALLOC 15, FREE 16, TEMP 2048 in a row",
	       (ct_rec_alloc(&b, 15), ct_rec_free(&b, 16), ct_rec_temp(&b, 2048)), 0xaf, 0xd0, 0x01, 0xf0,
	       0x80, 0x01);

	/* format.h's helper writes the same bytes and its reader reads them back. */
	static const struct {
		unsigned tag;
		uint64_t info;
		uint8_t bytes[3];
		size_t n;
	} cases[] = {
	    {CT_REC_ALLOC, 15, {0xaf}, 1},
	    {CT_REC_ALLOC, 16, {0xb0, 0x01}, 2},
	    {CT_REC_FREE, 2047, {0xdf, 0x7f}, 2},
	    {CT_REC_TEMP, 2048, {0xf0, 0x80, 0x01}, 3},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char name[96];
		uint8_t p[1 + CT_VARINT_MAX];
		snprintf(name, sizeof(name), "short %s %llu: format.h's ct_put_short_event",
		         ct_record_name(cases[i].tag), (unsigned long long)cases[i].info);
		same_bytes(name, p, ct_put_short_event(p, cases[i].tag, cases[i].info), cases[i].bytes,
		           cases[i].n);
		unsigned tag;
		uint64_t info;
		int k = ct_get_short_event(cases[i].bytes, cases[i].bytes + cases[i].n, &tag, &info);
		snprintf(name, sizeof(name), "short %s %llu: read back", ct_record_name(cases[i].tag),
		         (unsigned long long)cases[i].info);
		report(name, k == (int)cases[i].n && tag == cases[i].tag && info == cases[i].info);
	}
}

/* RECENT in one byte: | 1 0 0 a a a a a |, age = aaaaa + 1: age 1 -> 80, age 32 -> 9f. */
static void test_recent(void)
{
	GOLDEN("RECENT 1", ct_rec_recent(&b, 1), 0x80);
	GOLDEN("RECENT 16", ct_rec_recent(&b, 16), 0x8f);
	GOLDEN("RECENT 32", ct_rec_recent(&b, 32), 0x9f);
	uint8_t p[1];
	same_bytes("RECENT 32: format.h's ct_put_recent", p, ct_put_recent(p, CT_RECENT_WINDOW), BYTES(0x9f));
	static const uint8_t first[] = {0x80}, last[] = {0x9f};
	unsigned tag;
	uint64_t age;
	int k = ct_get_short_event(first, first + 1, &tag, &age);
	report("RECENT 80: read back as age 1", k == 1 && tag == CT_REC_RECENT && age == 1);
	k = ct_get_short_event(last, last + 1, &tag, &age);
	report("RECENT 9f: read back as age 32", k == 1 && tag == CT_REC_RECENT && age == 32);
}

/* TEMPFREE | 07 | info v |: info 5 -> 07 05 (format.h's example); 300 = 2 * 128 + 44:
 * 0x2c | 0x80, 0x02 -> 07 ac 02. */
static void test_tempfree(void)
{
	GOLDEN("TEMPFREE 5", ct_rec_tempfree(&b, 5), 0x07, 0x05);
	GOLDEN("TEMPFREE 300", ct_rec_tempfree(&b, 300), 0x07, 0xac, 0x02);
}

/* TIME | 06 | delta_us v |: 0 -> 06 00; 1000 = 7 * 128 + 104: 0x68 | 0x80, 0x07 -> 06 e8 07. */
static void test_time(void)
{
	GOLDEN("TIME 0", ct_rec_time(&b, 0), 0x06, 0x00);
	GOLDEN("TIME 1000", ct_rec_time(&b, 1000), 0x06, 0xe8, 0x07);
}

/* INFO | 04 | size v | stack v |: 128 at node 7 -> 04 80 01 07 (format.h's example); 1 MiB
 * (2^20 = 64 * 128^2: 80 80 40) at node 2 -> 04 80 80 40 02. */
static void test_info(void)
{
	GOLDEN("INFO 128 at 7", ct_rec_info(&b, 128, 7), 0x04, 0x80, 0x01, 0x07);
	GOLDEN("INFO 1 MiB at 2", ct_rec_info(&b, 1 << 20, 2), 0x04, 0x80, 0x80, 0x40, 0x02);
}

/* FRAME | 05 | parent v | ip delta z |, the delta from the previous FRAME's ip (0 at first):
 *   ip 0x401000 from 0: +0x401000, zigzag 0x802000 = 4 * 128^3 + 0 * 128^2 + 0x40 * 128 + 0
 *     -> 80 c0 80 04: 05 00 80 c0 80 04
 *   ip 0x400ff0: -16, zigzag 2 * 16 - 1 = 31 -> 05 02 1f
 *   ip 0x401010: +32, zigzag 64 -> 05 03 40 */
static void test_frame(void)
{
	GOLDEN("FRAME 0x401000 (positive delta), 0x400ff0 (negative), 0x401010",
	       (ct_rec_frame(&b, 0, 0x401000), ct_rec_frame(&b, 2, 0x400ff0), ct_rec_frame(&b, 3, 0x401010)),
	       0x05, 0x00, 0x80, 0xc0, 0x80, 0x04, 0x05, 0x02, 0x1f, 0x05, 0x03, 0x40);
	GOLDEN("FRAME at 0 from 0 (delta 0)", ct_rec_frame(&b, 1, 0), 0x05, 0x01, 0x00);
	struct ct_rec_buf b;
	buf_init(&b);
	ct_rec_frame(&b, 0, 0x401000);
	ct_rec_frame(&b, 2, 0x400ff0);
	report("FRAME: last_ip is the last frame's ip", b.last_ip == 0x400ff0);
	free(b.data);
}

/* EXACT 46, no payload: 46 00. A FRAME given an ip with CT_REC_IP_EXACT is written without the bit,
 * EXACT right after it, and the next delta starts from the ip without the bit: 0x401010 exact after
 * 0x400ff0 -> 05 03 40 46 00 (format.h's example); then 0x401020, +16 -> 05 04 20. */
static void test_exact(void)
{
	GOLDEN("EXACT", ct_rec_exact(&b), 0x46, 0x00);
	GOLDEN("FRAME of an exact ip, then EXACT",
	       (ct_rec_frame(&b, 0, 0x401000), ct_rec_frame(&b, 2, 0x400ff0),
	        ct_rec_frame(&b, 3, 0x401010 | CT_REC_IP_EXACT), ct_rec_frame(&b, 4, 0x401020)),
	       0x05, 0x00, 0x80, 0xc0, 0x80, 0x04, 0x05, 0x02, 0x1f, 0x05, 0x03, 0x40, 0x46, 0x00, 0x05, 0x04,
	       0x20);
	struct ct_rec_buf b;
	buf_init(&b);
	ct_rec_frame(&b, 0, 0x401000 | CT_REC_IP_EXACT);
	report("EXACT: last_ip is the exact frame's ip, without the bit", b.last_ip == 0x401000);
	free(b.data);
	/* A version 4 reader skips it as any optional record: a framed tag of 0x40..0x7f. */
	report("EXACT: an optional framed record",
	       ct_tag_is_optional(CT_REC_EXACT) && !ct_tag_is_core(CT_REC_EXACT));
}

/* ---- framed records: | tag | length v | payload | ---- */

/* PROCESS 10: pid 1234 = 9 * 128 + 82 -> d2 09; ppid 1 -> 01; start 1000 ns -> e8 07;
 * exe "/bin/x" -> 06 2f 62 69 6e 2f 78; argc 2 -> 02; "x" -> 01 78; "-v" -> 02 2d 76.
 * Payload 2 + 1 + 2 + 7 + 1 + 2 + 3 = 18 bytes -> length 12. */
static void test_process(void)
{
	const struct ct_rec_process p = {1234, 1, 1000, "/bin/x", 6, "x\0-v", 5};
	GOLDEN("PROCESS", ct_rec_process(&b, &p), 0x10, 0x12, 0xd2, 0x09, 0x01, 0xe8, 0x07, 0x06, 0x2f, 0x62,
	       0x69, 0x6e, 0x2f, 0x78, 0x02, 0x01, 0x78, 0x02, 0x2d, 0x76);
	/* A last argument without its NUL is not an argument (record.h): argc 1, "x" only; payload
	 * 2 + 1 + 2 + 1 (exe "") + 1 + 2 = 9. */
	const struct ct_rec_process q = {1234, 1, 1000, "", 0, "x\0tail", 6};
	GOLDEN("PROCESS, unterminated last argument", ct_rec_process(&b, &q), 0x10, 0x09, 0xd2, 0x09, 0x01,
	       0xe8, 0x07, 0x00, 0x01, 0x01, 0x78);
}

/* MODULE 11: id 3 -> 03; base 0x7f0000 = 3 * 128^3 + 0x7c * 128^2 -> 80 80 fc 03;
 * path "/lib/a.so" -> 09 2f 6c 69 62 2f 61 2e 73 6f; build-id de ad be ef -> 04 de ad be ef;
 * 2 segments -> 02; (0, 0x1000, 0, r-x) -> 00 80 20 00 05; (0x2000, 0x100, 0x1000, rw-)
 * -> 80 40 80 02 80 20 03. Payload 1 + 4 + 10 + 5 + 1 + 5 + 7 = 33 -> length 21. */
static void test_module(void)
{
	static const uint8_t id[] = {0xde, 0xad, 0xbe, 0xef};
	const struct ct_rec_segment segs[] = {
	    {0, 0x1000, 0, CT_SEG_READ | CT_SEG_EXEC},
	    {0x2000, 0x100, 0x1000, CT_SEG_READ | CT_SEG_WRITE},
	};
	const struct ct_rec_module m = {3, 0x7f0000, "/lib/a.so", 9, id, sizeof(id), segs, 2};
	GOLDEN("MODULE with two segments", ct_rec_module(&b, &m), 0x11, 0x21, 0x03, 0x80, 0x80, 0xfc, 0x03,
	       0x09, 0x2f, 0x6c, 0x69, 0x62, 0x2f, 0x61, 0x2e, 0x73, 0x6f, 0x04, 0xde, 0xad, 0xbe, 0xef, 0x02,
	       0x00, 0x80, 0x20, 0x00, 0x05, 0x80, 0x40, 0x80, 0x02, 0x80, 0x20, 0x03);
	/* No build-id, no segment (the vdso's shape at its smallest): id 0, base 0, "x", "", 0. */
	const struct ct_rec_module v = {0, 0, "x", 1, NULL, 0, NULL, 0};
	GOLDEN("MODULE without build-id or segments", ct_rec_module(&b, &v), 0x11, 0x06, 0x00, 0x00, 0x01,
	       0x78, 0x00, 0x00);
}

/* UNMODULE 12: id 3 -> 12 01 03; id 200 = 128 + 72 -> c8 01 -> 12 02 c8 01. */
static void test_unmodule(void)
{
	GOLDEN("UNMODULE 3", ct_rec_unmodule(&b, 3), 0x12, 0x01, 0x03);
	GOLDEN("UNMODULE 200", ct_rec_unmodule(&b, 200), 0x12, 0x02, 0xc8, 0x01);
}

/* END 13: 8 allocations, 7 frees, 1248813 bytes (0x130e2d = 0x4c * 128^2 + 0x1c * 128 + 0x2d
 * -> ad 9c 4c), 0 unmatched, 0 lost, end 2000 us (15 * 128 + 80 -> d0 0f). Payload 9 bytes. */
static void test_end(void)
{
	const struct ct_rec_end e = {8, 7, 1248813, 0, 0, 2000};
	GOLDEN("END", ct_rec_end(&b, &e), 0x13, 0x09, 0x08, 0x07, 0xad, 0x9c, 0x4c, 0x00, 0x00, 0xd0, 0x0f);
}

/* EXEC 14: "/bin/true" -> 09 + 9 bytes, payload 10 -> 14 0a ...; a 200-byte path: its length
 * 200 -> c8 01, payload 202 -> ca 01: the payload moves up behind a two-byte length. */
static void test_exec(void)
{
	GOLDEN("EXEC", ct_rec_exec(&b, "/bin/true", 9), 0x14, 0x0a, 0x09, 0x2f, 0x62, 0x69, 0x6e, 0x2f, 0x74,
	       0x72, 0x75, 0x65);
	char path[200];
	memset(path, 'a', sizeof(path));
	uint8_t want[5 + sizeof(path)] = {0x14, 0xca, 0x01, 0xc8, 0x01};
	memset(want + 5, 'a', sizeof(path));
	struct ct_rec_buf b;
	buf_init(&b);
	ct_rec_exec(&b, path, sizeof(path));
	same_bytes("EXEC of a 200-byte path (two-byte length)", b.data, b.len, want, sizeof(want));
	free(b.data);
}

/* THREAD 40: tid 4321 = 33 * 128 + 97 -> e1 21; exited -> 01. Payload 3. */
static void test_thread(void)
{
	GOLDEN("THREAD exited", ct_rec_thread(&b, 4321, CT_THREAD_EXITED), 0x40, 0x03, 0xe1, 0x21, 0x01);
	GOLDEN("THREAD started", ct_rec_thread(&b, 7, CT_THREAD_STARTED), 0x40, 0x02, 0x07, 0x00);
}

/* SAMPLE 41: 4096000 bytes = 1 * 128^3 + 0x7a * 128^2 -> 80 80 fa 01. Payload 4. */
static void test_sample(void)
{
	GOLDEN("SAMPLE", ct_rec_sample(&b, 4096000), 0x41, 0x04, 0x80, 0x80, 0xfa, 0x01);
}

/* NOTE 42: warning -> 01; "stop" -> 04 73 74 6f 70. Payload 6. */
static void test_note(void)
{
	GOLDEN("NOTE", ct_rec_note(&b, CT_NOTE_WARNING, "stop", 4), 0x42, 0x06, 0x01, 0x04, 0x73, 0x74, 0x6f,
	       0x70);
	GOLDEN("NOTE, empty", ct_rec_note(&b, CT_NOTE_INFO, "", 0), 0x42, 0x02, 0x00, 0x00);
}

static void test_classes(void)
{
	/* SUPPRESSIONS: tag 44, length 10 (string length 9 + its varint), "leak:foo\n" (format.h's example)
	 */
	GOLDEN("SUPPRESSIONS", ct_rec_suppressions(&b, "leak:foo\n", 9), 0x44, 0x0a, 0x09, 'l', 'e', 'a', 'k',
	       ':', 'f', 'o', 'o', '\n');
	/* CLASSES: tag 43, length 6, n 1, info 5, definite 2, indirect 0, possible 0, reachable 1 (format.h's
	 * example); then two infos, 300 = ac 02, 128 definite = 80 01: payload 1 + 1+4 + 2+2+1+1+1 = 13. */
	GOLDEN("CLASSES", ct_rec_classes(&b, &(struct ct_rec_classes){5, {2, 0, 0, 1}}, 1), 0x43, 0x06, 0x01,
	       0x05, 0x02, 0x00, 0x00, 0x01);
	GOLDEN("CLASSES, two infos",
	       ct_rec_classes(&b, ((const struct ct_rec_classes[]){{0, {1, 1, 1, 1}}, {300, {128, 0, 0, 0}}}),
	                      2),
	       0x43, 0x0d, 0x02, 0x00, 0x01, 0x01, 0x01, 0x01, 0xac, 0x02, 0x80, 0x01, 0x00, 0x00, 0x00);
	/* HOLDERS: tag 49, length 4, n 1, info 7, holder 5, count 2 (format.h's example); then two pairs,
	 * holder 200 = c8 01: payload 1 + 3 + 1+2+1 = 8. */
	GOLDEN("HOLDERS", ct_rec_holders(&b, &(struct ct_rec_holder){7, 5, 2}, 1), 0x49, 0x04, 0x01, 0x07,
	       0x05, 0x02);
	GOLDEN("HOLDERS, two pairs",
	       ct_rec_holders(&b, ((const struct ct_rec_holder[]){{7, 5, 2}, {8, 200, 1}}), 2), 0x49, 0x08,
	       0x02, 0x07, 0x05, 0x02, 0x08, 0xc8, 0x01, 0x01);
	/* SAMPLING: tag 4a, length 4, rate 512 KiB = 80 80 20, seed 42 (format.h's example) */
	GOLDEN("SAMPLING", ct_rec_sampling(&b, 512 * 1024, 42), 0x4a, 0x04, 0x80, 0x80, 0x20, 0x2a);
	/* ATTACH: tag 4b, length 10, at 1,700,000,000 s (Unix time, ns), the first attach (format.h's) */
	GOLDEN("ATTACH", ct_rec_attach(&b, UINT64_C(1700000000) * 1000000000u, 1), 0x4b, 0x0a, 0x80, 0x80,
	       0xa8, 0xb1, 0xe3, 0x9f, 0xe7, 0xcb, 0x17, 0x01);
	/* MARK: tag 45, length 4 (string length 3 + its varint), "req" (format.h's example) */
	GOLDEN("MARK", ct_rec_mark(&b, "req", 3), 0x45, 0x04, 0x03, 'r', 'e', 'q');
}

/* INVALID 47 (format.h's example): kind 0 (double free), call 0 (free), stack 9, freed at 7, block
 * 3 (info 2 + 1): payload 5 -> 47 05 00 00 09 07 03. A realloc of a static address at node 300
 * (ac 02), nothing known of a block: 47 06 01 01 ac 02 00 00. CRASH 48: SIGABRT 6 at node 12 (0c):
 * 48 02 06 0c; stack 0 (not walked): 48 02 0b 00. */
static void test_invalid(void)
{
	GOLDEN("INVALID, a double free",
	       ct_rec_invalid(&b, &(struct ct_rec_invalid){CT_INVALID_DOUBLE, CT_INVALID_FREE, 9, 7, 3}),
	       0x47, 0x05, 0x00, 0x00, 0x09, 0x07, 0x03);
	GOLDEN("INVALID, a realloc of a static address",
	       ct_rec_invalid(&b, &(struct ct_rec_invalid){CT_INVALID_STATIC, CT_INVALID_REALLOC, 300, 0, 0}),
	       0x47, 0x06, 0x01, 0x01, 0xac, 0x02, 0x00, 0x00);
	GOLDEN("CRASH", ct_rec_crash(&b, 6, 12), 0x48, 0x02, 0x06, 0x0c);
	GOLDEN("CRASH, no stack", ct_rec_crash(&b, 11, 0), 0x48, 0x02, 0x0b, 0x00);
	report("INVALID and CRASH: tags 0x47 and 0x48, optional",
	       CT_REC_INVALID == 0x47 && CT_REC_CRASH == 0x48 && ct_tag_is_optional(CT_REC_INVALID) &&
	           ct_tag_is_optional(CT_REC_CRASH));
	report("INVALID's kinds: double free 0, static 1, stack 2, not allocated 3",
	       CT_INVALID_DOUBLE == 0 && CT_INVALID_STATIC == 1 && CT_INVALID_STACK == 2 &&
	           CT_INVALID_NOT_ALLOCATED == 3 && CT_INVALID_FREE == 0 && CT_INVALID_REALLOC == 1);
}

/* ---- the version, format.h's examples ---- */

static void test_version(void)
{
	report("CTRACK_FORMAT_VERSION is 8, the goldens' version (a changed encoding needs a version bump "
	       "and new goldens here)",
	       CTRACK_FORMAT_VERSION == 8);
	report("a version 5 writer writes min_version 4 (readers older than 4 lack BATCH; EXACT is optional)",
	       CTRACK_FORMAT_READER_MIN == 4);
	report("tags are on-disk numbers",
	       CT_REC_ALLOC == 0x01 && CT_REC_FREE == 0x02 && CT_REC_TEMP == 0x03 && CT_REC_INFO == 0x04 &&
	           CT_REC_FRAME == 0x05 && CT_REC_TIME == 0x06 && CT_REC_TEMPFREE == 0x07 &&
	           CT_REC_RECENT == 0x08 && CT_REC_PROCESS == 0x10 && CT_REC_MODULE == 0x11 &&
	           CT_REC_UNMODULE == 0x12 && CT_REC_END == 0x13 && CT_REC_EXEC == 0x14 &&
	           CT_REC_BATCH == 0x15 && CT_REC_THREAD == 0x40 && CT_REC_SAMPLE == 0x41 &&
	           CT_REC_NOTE == 0x42 && CT_REC_CLASSES == 0x43 && CT_REC_SUPPRESSIONS == 0x44 &&
	           CT_REC_MARK == 0x45 && CT_REC_EXACT == 0x46 && CT_REC_EPOCH == 0x16 &&
	           CT_REC_ZEPOCH == 0x17);
	report("aggregated traces' tags", CT_REC_AGGREGATE == 0x18 && CT_REC_AGG_SNAPSHOT == 0x19);
}

/* ---- aggregated traces ---- */

/* AGGREGATE: | interval_us v |; AGG_SNAPSHOT: | heap_max v | rss v | rss_max v | n v | n x (info
 * delta z, allocations v, temporary v, live delta z) | peak v | [peak_us v | m v | m x (info delta
 * z, at_peak v)] |. */
static void test_aggregate(void)
{
	/* 1 s = 1000000 us = 0xf4240: low 7 bits 0x40 | 0x80 = c0, then 7812 = 0x1e84: 0x04 | 0x80 =
	 * 84, then 61 = 3d; length 3 (format.h's example) */
	GOLDEN("AGGREGATE, every 1 s", ct_rec_aggregate(&b, 1000000), 0x18, 0x03, 0xc0, 0x84, 0x3d);
	/* format.h's example: heap_max 128 = 80 01, rss 0, rss_max 0, one entry: info 5 (delta 5,
	 * zigzag 10 = 0a), 2 allocations, 0 temporary, live +1 (zigzag 2); peak 0: 10 bytes */
	const struct ct_rec_agg_entry one[] = {{5, 2, 0, 1}};
	GOLDEN("AGG_SNAPSHOT, format.h's example",
	       ct_rec_agg_snapshot(&b, &(struct ct_rec_agg_snapshot){.heap_max = 128, .e = one, .n = 1}),
	       0x19, 0x0a, 0x80, 0x01, 0x00, 0x00, 0x01, 0x0a, 0x02, 0x00, 0x02, 0x00);
	/* heap_max 300 = ac 02, rss 4096 = 80 20, rss_max 8192 = 80 40, 2 entries: info 2 (zigzag 4),
	 * 3 allocations, 1 temporary, live -1 (zigzag 1); info 7 (delta 5: zigzag 0a), 0, 0, live -2
	 * (zigzag 3); peak 1000 = e8 07 at 1500 us = dc 0b, 1 info: 7 (delta 7: zigzag 0e) had 4 live
	 * there. 22 bytes = 0x16. */
	const struct ct_rec_agg_entry two[] = {{2, 3, 1, -1}, {7, 0, 0, -2}};
	const struct ct_rec_agg_peak at[] = {{7, 4}};
	GOLDEN("AGG_SNAPSHOT with a new peak",
	       ct_rec_agg_snapshot(&b, &(struct ct_rec_agg_snapshot){.heap_max = 300,
	                                                             .rss = 4096,
	                                                             .rss_max = 8192,
	                                                             .e = two,
	                                                             .n = 2,
	                                                             .peak = 1000,
	                                                             .peak_us = 1500,
	                                                             .p = at,
	                                                             .np = 1}),
	       0x19, 0x16, 0xac, 0x02, 0x80, 0x20, 0x80, 0x40, 0x02, 0x04, 0x03, 0x01, 0x01, 0x0a, 0x00, 0x00,
	       0x03, 0xe8, 0x07, 0xdc, 0x0b, 0x01, 0x0e, 0x04);
}

/* EPOCH: | lanes v | len v x lanes | marks_len v x lanes | runs | marks |; a mark is | key delta v |
 * bytes v |. */
static void test_epoch(void)
{
	uint8_t marks0[2 * CT_EPOCH_MARK_MAX], marks1[CT_EPOCH_MARK_MAX];
	size_t n0 = ct_put_epoch_mark(marks0, 0, 1); /* lane 0: key 0, its ALLOC */
	n0 += ct_put_epoch_mark(marks0 + n0, 2, 1);  /* key 2, its RECENT */
	size_t n1 = ct_put_epoch_mark(marks1, 1, 1); /* lane 1: key 1, its ALLOC */
	const uint8_t run0[] = {0xa1, 0x80}, run1[] = {0xa2};
	const uint8_t *run[] = {run0, run1}, *marks[] = {marks0, marks1};
	const size_t len[] = {2, 1}, marks_len[] = {n0, n1};
	GOLDEN("EPOCH: format.h's example", ct_rec_epoch(&b, 2, run, len, marks, marks_len), 0x16, 0x0e, 0x02,
	       0x02, 0x01, 0x04, 0x02, 0xa1, 0x80, 0xa2, 0x00, 0x01, 0x02, 0x01, 0x01, 0x01);
	uint8_t e[CT_EPOCH_MARK_MAX];
	same_bytes("EPOCH mark: key delta 300, 2 bytes", e, ct_put_epoch_mark(e, 300, 2),
	           BYTES(0xac, 0x02, 0x02));
	/* ZEPOCH: | lanes v | zlen << 1 | fresh v x lanes | the lanes' bytes |: lane 0's two bytes start
	 * a new frame, lane 1 made nothing. (What the bytes decode to: test_reader's zepochs.) */
	const uint8_t z0[] = {0xaa, 0xbb};
	const uint8_t *z[] = {z0, z0};
	const size_t zlen[] = {2, 0};
	const int fresh[] = {1, 0};
	GOLDEN("ZEPOCH: two lanes, the first fresh", ct_rec_zepoch(&b, 2, z, zlen, fresh), 0x17, 0x05, 0x02,
	       0x05, 0x00, 0xaa, 0xbb);
	/* A ZEPOCH part's marks: | d d d d d b b b | (delta 4, 2 bytes: 0x22), else 00 and two varints. */
	uint8_t zm[CT_ZMARK_MAX];
	uint64_t d = 0, n = 0;
	same_bytes("ZEPOCH mark: key delta 4, 2 bytes", zm, ct_put_zmark(zm, 4, 2), BYTES(0x22));
	same_bytes("ZEPOCH mark: key delta 31, 7 bytes", zm, ct_put_zmark(zm, 31, 7), BYTES(0xff));
	same_bytes("ZEPOCH mark: key delta 300, 2 bytes", zm, ct_put_zmark(zm, 300, 2),
	           BYTES(0x00, 0xac, 0x02, 0x02));
	same_bytes("ZEPOCH mark: key delta 0, 8 bytes", zm, ct_put_zmark(zm, 0, 8), BYTES(0x00, 0x00, 0x08));
	report("ZEPOCH mark read back", ct_get_zmark(zm, zm + 3, &d, &n) == 3 && d == 0 && n == 8);
	const uint8_t odd[] = {0x20, 0x00, 0x05};
	report("ZEPOCH marks: 0x20 (no bytes) and a cut long one are no marks",
	       ct_get_zmark(odd, odd + 1, &d, &n) == 0 && ct_get_zmark(odd + 1, odd + 3, &d, &n) == 0);
}

/* The examples in format.h's comments, through record.h and format.h's helpers. */
static void test_examples(void)
{
	GOLDEN("example: ALLOC info 5 -> 01 05", ct_rec_core1(&b, CT_REC_ALLOC, 5), 0x01, 0x05);
	GOLDEN("example: TEMP 03 05", ct_rec_core1(&b, CT_REC_TEMP, 5), 0x03, 0x05);
	GOLDEN("example: INFO 04 80 01 07 = size 128 at stack node 7", ct_rec_info(&b, 128, 7), 0x04, 0x80,
	       0x01, 0x07);
	GOLDEN("example: TEMPFREE 07 05", ct_rec_tempfree(&b, 5), 0x07, 0x05);
	GOLDEN("example: RECENT 08 10 = the 16th last ALLOC", ct_rec_core1(&b, CT_REC_RECENT, 16), 0x08,
	       0x10);
	GOLDEN("example: TEMP of info 5 -> e5", ct_rec_temp(&b, 5), 0xe5);
	GOLDEN("example: ALLOC of info 300 -> bc 12", ct_rec_alloc(&b, 300), 0xbc, 0x12);
	GOLDEN("example: RECENT of age 16 -> 8f", ct_rec_recent(&b, 16), 0x8f);
	uint8_t p[1 + CT_VARINT_MAX];
	same_bytes("example: format.h's ct_put_short_event, TEMP 5", p, ct_put_short_event(p, CT_REC_TEMP, 5),
	           BYTES(0xe5));
	same_bytes("example: format.h's ct_put_short_event, ALLOC 300", p,
	           ct_put_short_event(p, CT_REC_ALLOC, 300), BYTES(0xbc, 0x12));
	same_bytes("example: format.h's ct_put_recent, 16", p, ct_put_recent(p, 16), BYTES(0x8f));
	same_bytes("example: format.h's ct_put_varint, 128", p, ct_put_varint(p, 128), BYTES(0x80, 0x01));
	static const uint8_t v128[] = {0x80, 0x01};
	uint64_t v = 0;
	report("example: 80 01 reads back as 128", ct_get_varint(v128, v128 + 2, &v) == 2 && v == 128);
}

/* ---- a buffer that cannot grow ---- */

static int grow_fails(struct ct_rec_buf *b, size_t need)
{
	(void)b, (void)need;
	return -1;
}

/* Claims success without making room: the record must still be dropped. */
static int grow_lies(struct ct_rec_buf *b, size_t need)
{
	(void)b, (void)need;
	return 0;
}

static void test_dropped(void)
{
	uint8_t mem[32];
	memset(mem, 0xee, sizeof(mem));
	struct ct_rec_buf b = {.data = mem, .cap = 12, .grow = grow_fails};
	/* Every record reserves its largest size first: ALLOC 1 + 10 bytes, INFO 1 + 2 * 10, NOTE
	 * 1 + 10 + its payload's 1 + 10 + 4. In 12 bytes: ALLOC (1 byte written, 11 left), INFO and
	 * NOTE dropped, ALLOC 2048 (reserves 11 of the 11 left, writes 3). */
	ct_rec_alloc(&b, 5);
	report("dropped: a record that fits is written", b.len == 1 && mem[0] == 0xa5 && b.dropped == 0);
	ct_rec_info(&b, 128, 7); /* reserves 1 + 2 * 10 */
	ct_rec_note(&b, CT_NOTE_WARNING, "stop", 4);
	ct_rec_alloc(&b, 2048); /* reserves 11 with 11 left: fits */
	report("dropped: INFO and NOTE did not fit, ALLOC 2048 did", b.dropped == 2);
	same_bytes("dropped: only whole records written", b.data, b.len, BYTES(0xa5, 0xb0, 0x80, 0x01));
	int untouched = 1;
	for (size_t i = b.len; i < sizeof(mem); i++)
		untouched &= mem[i] == 0xee;
	report("dropped: nothing half-written past the last whole record", untouched);
	ct_rec_header(&b);
	ct_rec_end(&b, &(struct ct_rec_end){1, 1, 1, 0, 0, 1});
	report("dropped: header and END counted too", b.dropped == 4 && b.len == 4);

	struct ct_rec_buf n = {.data = mem, .cap = 0};
	memset(mem, 0xee, sizeof(mem));
	ct_rec_frame(&n, 0, 0x401000);
	report("dropped: no grow function, no room: FRAME dropped, last_ip unchanged",
	       n.dropped == 1 && n.len == 0 && n.last_ip == 0 && mem[0] == 0xee);

	struct ct_rec_buf l = {.data = mem, .cap = 4, .grow = grow_lies};
	ct_rec_sample(&l, 4096000);
	ct_rec_recent(&l, 1); /* reserves 1: fits */
	report("dropped: a grow that makes no room drops the record",
	       l.dropped == 1 && l.len == 1 && mem[0] == 0x80);

	/* After a failed grow the buffer goes on: a grow that works again takes the next records. */
	struct ct_rec_buf h;
	buf_init(&h);
	h.grow = grow_fails;
	ct_rec_time(&h, 1000);
	h.grow = ct_rec_grow_heap;
	ct_rec_time(&h, 1000);
	same_bytes("dropped: the next record after a failed grow is whole", h.data, h.len,
	           BYTES(0x06, 0xe8, 0x07));
	report("dropped: counted once", h.dropped == 1);
	free(h.data);
}

/* ---- BATCH: columns.h's splitter and joiner ---- */

/* Splits the records of r into a BATCH payload in out (lengths, then the columns); 0 or -1. */
static int batch_payload(const struct ct_rec_buf *r, struct ct_rec_buf *out)
{
	struct ct_columns c;
	uint8_t *mem = malloc(CT_COLUMNS * (r->len + 1));
	for (int i = 0; i < CT_COLUMNS; i++) {
		c.col[i] = mem + (size_t)i * (r->len + 1);
		c.len[i] = 0;
	}
	int rc = ct_columns_split(r->data, r->len, &c);
	if (!rc) {
		for (int i = 0; i < CT_COLUMNS; i++)
			ct_rec_room(out, CT_VARINT_MAX) ? ct_rec_v(out, c.len[i]) : (void)0;
		for (int i = 0; i < CT_COLUMNS; i++)
			ct_rec_room(out, c.len[i]) ? ct_rec_raw(out, c.col[i], c.len[i]) : (void)0;
	}
	free(mem);
	return rc;
}

/* Joins a BATCH payload back into out: the number of records, or -1 when it is corrupt. */
static long batch_join(const struct ct_rec_buf *payload, struct ct_rec_buf *out)
{
	struct ct_columns c;
	if (ct_columns_open(payload->data, payload->data + payload->len, &c) < 0)
		return -1;
	unsigned long long n;
	return ct_columns_join(&c, out, &n) < 0 ? -1 : (long)n;
}

/* Every kind of record a BATCH may hold, with ids of every varint length. */
static void random_records(struct ct_rec_buf *b, int n)
{
	for (int i = 0; i < n; i++) {
		uint64_t v = ct_test_random() >> (ct_test_random() % 64);
		switch (ct_test_random() % 13) {
		case 0:
			ct_rec_alloc(b, v);
			break;
		case 1:
			ct_rec_free(b, v);
			break;
		case 2:
			ct_rec_temp(b, v);
			break;
		case 3:
			ct_rec_recent(b, 1 + (uint32_t)(v % CT_RECENT_WINDOW));
			break;
		case 4:
			ct_rec_info(b, v, ct_test_random() % 1000);
			break;
		case 5:
			ct_rec_frame(b, ct_test_random() % 1000, ct_test_random() & ~CT_REC_IP_EXACT);
			break;
		case 6:
			ct_rec_time(b, v);
			break;
		case 7:
			ct_rec_tempfree(b, v);
			break;
		case 8:
			ct_rec_core1(b, CT_REC_ALLOC, v);
			break;
		case 9:
			ct_rec_sample(b, v);
			break;
		case 10:
			ct_rec_note(b, CT_NOTE_INFO, "a note", 6);
			break;
		case 11:
			ct_rec_exact(b);
			break;
		default:
			ct_rec_thread(b, v, CT_THREAD_STARTED);
			break;
		}
	}
}

static void test_batch(void)
{
	/* format.h's example: ALLOC of info 1 then RECENT of age 1. TAG a0 80, ID0 01: lengths 2 1 0 0
	 * 0 0 0, then the columns. */
	struct ct_rec_buf r, p, j;
	buf_init(&r), buf_init(&p), buf_init(&j);
	ct_rec_alloc(&r, 1);
	ct_rec_recent(&r, 1);
	report("batch: the example splits", batch_payload(&r, &p) == 0);
	same_bytes("batch: example payload", p.data, p.len,
	           BYTES(0x02, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0xa0, 0x80, 0x01));
	report("batch: the example joins to 2 records", batch_join(&p, &j) == 2);
	same_bytes("batch: the example joins back", j.data, j.len, BYTES(0xa1, 0x80));

	/* Every column, pinned: INFO 128 at node 7 (04 80 01 07), FRAME ip 0x10 from the root (05 00 20),
	 * TIME 5 (06 05), SAMPLE 4096 (41 02 80 20), ALLOC 300 (bc 12). TAG 04 05 06 41 a0; ID0 1c (the
	 * short tag's low bits); ID1 12; ID2 empty; DEFS 80 01 07 00 20; CORE 05; FRAMED 02 80 20. */
	r.len = p.len = j.len = 0;
	r.last_ip = 0;
	ct_rec_info(&r, 128, 7);
	ct_rec_frame(&r, 0, 0x10);
	ct_rec_time(&r, 5);
	ct_rec_sample(&r, 4096);
	ct_rec_alloc(&r, 300);
	report("batch: every column splits", batch_payload(&r, &p) == 0);
	same_bytes("batch: every column's bytes", p.data, p.len,
	           BYTES(0x05, 0x01, 0x01, 0x00, 0x05, 0x01, 0x03, 0x04, 0x05, 0x06, 0x41, 0xa0, 0x1c, 0x12,
	                 0x80, 0x01, 0x07, 0x00, 0x20, 0x05, 0x02, 0x80, 0x20));
	report("batch: every column joins back",
	       batch_join(&p, &j) == 5 && j.len == r.len && !memcmp(j.data, r.data, r.len));

	/* A long random stream, byte for byte through split and join. */
	r.len = p.len = j.len = 0;
	random_records(&r, 20000);
	report("batch: 20000 random records split", batch_payload(&r, &p) == 0);
	report("batch: ... and join to as many", batch_join(&p, &j) == 20000);
	report("batch: ... byte for byte", j.len == r.len && !memcmp(j.data, r.data, r.len));

	/* Corruption anywhere in the payload: an error or other records, never a crash or an overrun
	 * (valgrind/ASan builds check the latter); lengths that do not add up are refused. */
	int refused = 0, bounded = 1;
	for (size_t i = 0; i < 2000; i++) {
		struct ct_rec_buf c;
		buf_init(&c);
		if (ct_rec_room(&c, p.len))
			ct_rec_raw(&c, p.data, p.len);
		c.data[ct_test_random() % c.len] ^= (uint8_t)(1 + ct_test_random() % 255);
		j.len = 0;
		refused += batch_join(&c, &j) < 0;
		bounded &= j.len <= 2 * c.len;
		free(c.data);
	}
	report("batch: a corrupted payload joins to at most twice its bytes, or is refused", bounded);
	report("batch: some corrupted payloads are refused", refused > 0);
	p.len--;
	report("batch: a payload one byte short is refused", batch_join(&p, &j) < 0);

	/* What a BATCH cannot hold: the splitter says so (the writer then writes the records as such). */
	r.len = p.len = 0;
	ct_rec_alloc(&r, 300);
	r.len--;
	report("batch: a cut record is not split", batch_payload(&r, &p) < 0);
	r.len = 0;
	ct_rec_u8(&r, CT_REC_BATCH), ct_rec_u8(&r, 0);
	report("batch: a BATCH inside a BATCH is not split", batch_payload(&r, &p) < 0);
	free(r.data), free(p.data), free(j.data);
}

/* The writer's direct path puts each record's bytes where the splitter would: ALLOC, FREE and
 * TEMP of ids around every varint length, RECENT of every age, TEMPFREE, interleaved. */
static void test_direct(void)
{
	static const uint64_t ids[] = {0,      1,      15,       16,       17,         2047,           2048,
	                               262143, 262144, 33554431, 33554432, UINT32_MAX, UINT64_MAX >> 1};
	struct ct_rec_buf r;
	struct ct_columns split, direct;
	buf_init(&r);
	size_t cap = 64 * 1024;
	uint8_t *mem = calloc(2 * CT_COLUMNS, cap);
	for (int i = 0; i < CT_COLUMNS; i++) {
		split.col[i] = mem + (size_t)i * cap, direct.col[i] = mem + (size_t)(CT_COLUMNS + i) * cap;
		split.len[i] = direct.len[i] = 0;
	}
	for (size_t k = 0; k < sizeof(ids) / sizeof(ids[0]); k++)
		for (unsigned tag = CT_REC_ALLOC; tag <= CT_REC_TEMP; tag++) {
			ct_rec_event(&r, tag, ids[k]);
			ct_col_short_event(&direct, tag, ids[k]);
			ct_rec_recent(&r, 1 + (uint32_t)(k * 3 + tag) % CT_RECENT_WINDOW);
			ct_col_recent(&direct, 1 + (uint32_t)(k * 3 + tag) % CT_RECENT_WINDOW);
			ct_rec_tempfree(&r, ids[k]);
			ct_col_core1(&direct, CT_REC_TEMPFREE, ids[k]);
		}
	report("direct: the records split", ct_columns_split(r.data, r.len, &split) == 0);
	for (int i = 0; i < CT_COLUMNS; i++) {
		char name[64];
		snprintf(name, sizeof(name), "direct: column %d as split", i);
		same_bytes(name, direct.col[i], direct.len[i], split.col[i], split.len[i]);
	}
	free(mem), free(r.data);
}

/* ---- the summary trailer (format.h; ctrack/trailer.h) ---- */

static int same_trailer(const struct ct_trailer *a, const struct ct_trailer *b)
{
	int same = a->file_hash == b->file_hash && a->allocations == b->allocations && a->frees == b->frees &&
	           a->bytes_allocated == b->bytes_allocated && a->temporary == b->temporary &&
	           a->peak == b->peak && a->live_bytes == b->live_bytes && a->live_blocks == b->live_blocks &&
	           a->runtime_us == b->runtime_us && a->classified == b->classified;
	for (int k = 0; same && k < CT_CLASSES; k++)
		same = a->class_blocks[k] == b->class_blocks[k] && a->class_bytes[k] == b->class_bytes[k];
	return same;
}

/* A trailer [p, p + n) with its sizes and check made right again after a change (n: its new whole
 * length, its file hash at p + n - 24), as a writer of another version would write it. */
static size_t reseal(uint8_t *p, size_t n)
{
	ct_put_u32(p + 4, (uint32_t)(n - CT_TRAILER_HEAD));
	ct_put_u64(p + n - 16, ct_trailer_check(p, n - 16));
	ct_put_u32(p + n - 8, (uint32_t)n);
	ct_put_u32(p + n - 4, CT_TRAILER_TAIL);
	return n;
}

static void test_trailer(void)
{
	/* FNV-1a 64's published vectors: "" cbf29ce484222325, "a" af63dc4c8601ec8c, "foobar"
	 * 85944171f73967e8 */
	report("trailer: FNV-1a of \"\"", ct_trailer_check((const uint8_t *)"", 0) == 0xcbf29ce484222325ull);
	report("trailer: FNV-1a of \"a\"",
	       ct_trailer_check((const uint8_t *)"a", 1) == 0xaf63dc4c8601ec8cull);
	report("trailer: FNV-1a of \"foobar\"",
	       ct_trailer_check((const uint8_t *)"foobar", 6) == 0x85944171f73967e8ull);
	/* At offset 10: 3 allocations, 2 frees, 300 bytes (ac 02), 1 temporary, peak 200 (c8 01), 100
	 * bytes (64) in 1 block live, 5 us, not classified. Payload 01 0a 03 02 ac 02 01 c8 01 64 01 05 00:
	 * 13 bytes after the 8 of the head, 21 before the file hash (0123456789abcdef: ef cd ab 89 67 45
	 * 23 01), 29 before the check, 45 (0x2d) in all; the size field 45 - 8 = 37 (0x25); then the
	 * check, 2d 00 00 00 and "CSM1". */
	const struct ct_trailer t = {0x0123456789abcdefull, 3, 2, 300, 1, 200, 100, 1, 5, 0, {0}, {0}};
	uint8_t p[CT_TRAILER_MAX], q[CT_TRAILER_MAX];
	size_t n = ct_trailer_encode(p, &t, 10);
	if (!same_bytes("trailer: bytes before the check", p, n < 29 ? n : 29,
	                BYTES(0x5c, 0x2a, 0x4d, 0x18, 0x25, 0x00, 0x00, 0x00, 0x01, 0x0a, 0x03, 0x02, 0xac,
	                      0x02, 0x01, 0xc8, 0x01, 0x64, 0x01, 0x05, 0x00, 0xef, 0xcd, 0xab, 0x89, 0x67,
	                      0x45, 0x23, 0x01)) ||
	    n != 45) {
		report("trailer: 45 bytes", 0);
		return;
	}
	report("trailer: the check is FNV-1a of the 29 bytes before it",
	       ct_get_u64(p + 29) == ct_trailer_check(p, 29));
	same_bytes("trailer: length and tail", p + 37, 8,
	           BYTES(0x2d, 0x00, 0x00, 0x00, 0x43, 0x53, 0x4d, 0x31));
	report("trailer: its length from the file's last 24 bytes", ct_trailer_length(p + n - 24) == 45);
	struct ct_trailer got;
	report("trailer: decoded", ct_trailer_decode(p, n, 10, &got) == 0 && same_trailer(&got, &t));
	report("trailer: at another offset (a file cut, or joined to another), none",
	       ct_trailer_decode(p, n, 11, &got) < 0);
	int caught = 1;
	for (size_t i = 0; i < n; i++) { /* any byte changed: no trailer */
		memcpy(q, p, n);
		q[i] ^= 0x20;
		caught &= ct_trailer_decode(q, n, 10, &got) < 0;
	}
	report("trailer: every byte changed is caught", caught);
	report("trailer: a cut one is none",
	       ct_trailer_length(p + n - 25) == 0 && ct_trailer_decode(p + 1, n - 1, 11, &got) < 0);
	/* a later version: no trailer to this reader; a later writer's added field: ignored */
	memcpy(q, p, n);
	q[8] = 2;
	report("trailer: version 2 is none", ct_trailer_decode(q, reseal(q, n), 10, &got) < 0);
	memcpy(q, p, 21);
	q[21] = 0x7f; /* a new varint field after `classified` */
	memcpy(q + 22, p + 21, 8);
	report("trailer: a field added later is skipped",
	       ct_trailer_decode(q, reseal(q, 22 + CT_TRAILER_FOOT), 10, &got) == 0 &&
	           same_trailer(&got, &t));
	/* classified: 4 x (blocks, bytes) follow */
	const struct ct_trailer c = {7,       4000002, 4000001,      574095360,     2, 638960, 272, 1,
	                             1029000, 1,       {0, 0, 1, 0}, {0, 0, 272, 0}};
	n = ct_trailer_encode(p, &c, 13939776);
	report("trailer: classified, decoded",
	       ct_trailer_decode(p, n, 13939776, &got) == 0 && same_trailer(&got, &c));
	memcpy(q, p, n);
	q[n - CT_TRAILER_FOOT - 1] = 0x80; /* the last field runs on past the payload's end */
	report("trailer: a varint cut short is none", ct_trailer_decode(q, reseal(q, n), 13939776, &got) < 0);
}

/* The file hash: the same whatever the pieces the bytes come in, and every byte counts. */
static void test_file_hash(void)
{
	uint8_t data[1000];
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)ct_test_random();
	struct ct_file_hash a, b;
	ct_file_hash_init(&a);
	ct_file_hash_add(&a, data, sizeof(data));
	uint64_t whole = ct_file_hash_end(&a);
	int same = 1;
	for (size_t piece = 1; piece < 70; piece += 3) {
		ct_file_hash_init(&b);
		for (size_t i = 0; i < sizeof(data); i += piece)
			ct_file_hash_add(&b, data + i, sizeof(data) - i < piece ? sizeof(data) - i : piece);
		same &= ct_file_hash_end(&b) == whole;
	}
	report("file hash: the same in pieces of 1 to 67 bytes", same);
	int differs = 1;
	for (size_t i = 0; i < sizeof(data); i++) {
		data[i] ^= 1;
		ct_file_hash_init(&b);
		ct_file_hash_add(&b, data, sizeof(data));
		differs &= ct_file_hash_end(&b) != whole;
		data[i] ^= 1;
	}
	report("file hash: any byte changed changes it", differs);
	ct_file_hash_init(&b);
	ct_file_hash_add(&b, data, sizeof(data) - 1);
	report("file hash: a byte fewer changes it", ct_file_hash_end(&b) != whole);
}

/* Three a row, as they were before the aggregated traces' test (issue 26) came on a row of its own. */
/* clang-format off */
static const struct {
	const char *name;
	void (*run)(void);
} tests[] = {
    {"batch", test_batch},     {"direct", test_direct},   {"header", test_header},
    {"short", test_short},     {"recent", test_recent},   {"tempfree", test_tempfree},
    {"time", test_time},       {"info", test_info},       {"frame", test_frame},
    {"process", test_process}, {"module", test_module},   {"unmodule", test_unmodule},
    {"end", test_end},         {"exec", test_exec},       {"thread", test_thread},
    {"sample", test_sample},   {"note", test_note},       {"classes", test_classes},
    {"version", test_version}, {"exact", test_exact},     {"examples", test_examples},
    {"dropped", test_dropped}, {"invalid", test_invalid}, {"epoch", test_epoch},
    {"aggregate", test_aggregate}, {"trailer", test_trailer},
    {"file-hash", test_file_hash},
};
/* clang-format on */

int main(int argc, char **argv)
{
	int ran = 0;
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		if (argc < 2 || !strcmp(argv[1], tests[i].name)) {
			tests[i].run();
			ran++;
		}
	if (!ran) {
		fprintf(stderr, "test-format: no test '%s'\n", argv[1]);
		return 2;
	}
	return failed;
}
