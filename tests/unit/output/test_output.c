/* SPDX-License-Identifier: MIT */
/* The output's busy flush (preload/output.c, ct_output_flush_busy): between() runs once between each
 * two of a BATCH's columns, the batch's records out of the buffer, and what it adds goes out with the next
 * write, after the batch; the file, decompressed and joined, holds every record byte for byte. Then two
 * long streams (48 MiB of records): records chosen at random, and records that repeat 2 MiB apart, as
 * a long-running program's loops do. Both decompress as written, and the second takes less than a
 * tenth of the first (1.6 against 38.3 MB): one frame's 4 MiB window, with long-distance matching,
 * finds the repeats. Ending a frame every 3.5 MiB of input, as f8f10f5 did, made it half the first's:
 * every frame began with no history. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "ctrack/columns.h"
#include "ctrack/record.h"
#include "rec_heap.h"
#include "writer.h"

static int write_failed; /* on_fail was called */

static void on_fail(void)
{
	write_failed = 1;
}

#define ALLOCS 3000 /* short ALLOC records of ids 16..2015: columns TAG, ID0 and ID1 */

static struct ct_rec_buf b = {.grow = ct_rec_grow_heap};
static int calls, unexpected;
static size_t added; /* bytes the calls so far added */

/* Each call finds only what the calls before it added, and adds one record of its own. */
static void between(void)
{
	calls++;
	unexpected += b.len != added;
	ct_rec_free(&b, 7u + (unsigned)calls);
	added = b.len;
}

static int fail(const char *what)
{
	fprintf(stderr, "test-output: %s\n", what);
	return 1;
}

/* The whole file decompressed, in *out. */
static size_t decompress(int fd, uint8_t **out)
{
	size_t cap = 1 << 20, len = 0, n;
	uint8_t in[1 << 16];
	*out = malloc(cap);
	ZSTD_DStream *d = ZSTD_createDStream();
	while ((n = (size_t)read(fd, in, sizeof(in))) > 0 && n != (size_t)-1) {
		ZSTD_inBuffer zi = {in, n, 0};
		while (zi.pos < zi.size) {
			if (cap - len < (1 << 17) && !(*out = realloc(*out, cap *= 2)))
				return 0;
			ZSTD_outBuffer zo = {*out + len, cap - len, 0};
			if (ZSTD_isError(ZSTD_decompressStream(d, &zo, &zi)))
				return 0;
			len += zo.pos;
		}
	}
	ZSTD_freeDStream(d);
	return len;
}

/* The size of the file at fd. */
static off_t file_size(int fd)
{
	struct stat st;
	return fstat(fd, &st) < 0 ? -1 : st.st_size;
}

static uint64_t rng;

static uint32_t next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

#define CHUNK (1u << 20) /* bytes of records a flush writes */
#define CHUNKS 48

/* The records of all's BATCHes, joined, after `header` bytes; their length, or 0 when one is not. */
static size_t join_all(const uint8_t *all, size_t n, size_t header, struct ct_rec_buf *joined)
{
	const uint8_t *p = all + header, *end = all + n;
	while (p < end) {
		uint64_t payload = 0;
		struct ct_columns c;
		unsigned long long k;
		if (*p++ != CT_REC_BATCH)
			return 0;
		p += ct_get_varint(p, end, &payload);
		if (payload > (uint64_t)(end - p) || ct_columns_open(p, p + payload, &c) < 0 ||
		    ct_columns_join(&c, joined, &k) < 0)
			return 0;
		p += payload;
	}
	return joined->len;
}

/* CHUNKS flushes of ALLOC records of random ids: each chunk of its own (repeat 0), or two chunks in
 * turn (repeat 1: the same bytes 2 MiB apart). Returns 0 when the file's BATCHes, decompressed and
 * joined, are every record written; its size in *size. */
static int long_stream(int repeat, off_t *size)
{
	char path[] = "/tmp/ctrack-test-output-XXXXXX";
	int fd = mkstemp(path);
	struct ct_rec_buf r = {.grow = ct_rec_grow_heap};
	uint8_t *expect = malloc((size_t)CHUNKS * CHUNK + 4096), *all = NULL;
	size_t len = 0;
	if (fd < 0 || !expect || ct_output_open(fd, on_fail) < 0)
		return -1;
	ct_output_compress(1 << 20, 1);
	ct_rec_header(&r);
	size_t header = r.len;
	for (int k = 0; k <= CHUNKS; k++) {
		rng = ((uint64_t)(repeat ? k % 2 : k) + 1) * 0x9E3779B97F4A7C15ull;
		while (k && r.len < CHUNK)
			ct_rec_alloc(&r, next_random() % 4000000);
		if (k) {
			memcpy(expect + len, r.data, r.len);
			len += r.len;
		}
		ct_output_write(&r, k == CHUNKS ? CT_OUT_END : CT_OUT_FLUSH); /* k 0: the header alone */
	}
	int in = open(path, O_RDONLY); /* the output moved its descriptor to a number of its own */
	unlink(path);
	*size = in < 0 ? -1 : file_size(in);
	size_t n = in < 0 ? 0 : decompress(in, &all);
	struct ct_rec_buf joined = {.grow = ct_rec_grow_heap};
	int same =
	    n > header && join_all(all, n, header, &joined) == len && !memcmp(joined.data, expect, len);
	free(joined.data);
	free(all);
	free(expect);
	free(r.data);
	if (in >= 0)
		close(in);
	ct_output_release(); /* the compressor: each stream opens its own */
	return same ? 0 : -1;
}

int main(void)
{
	char path[] = "/tmp/ctrack-test-output-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || ct_output_open(fd, on_fail) < 0)
		return fail("cannot open the file");
	ct_output_compress(1 << 20, 1);
	ct_rec_header(&b);
	size_t header = b.len;
	ct_output_write(&b, CT_OUT_FLUSH); /* the first write goes as it is, never as a BATCH */

	for (unsigned i = 0; i < ALLOCS; i++)
		ct_rec_alloc(&b, 16 + i % 2000);
	size_t records = b.len; /* two bytes each, format.h's short ALLOC with its varint */
	if (records != 2 * ALLOCS)
		return fail("the ALLOC records are not two bytes each");
	uint8_t *expect = malloc(records);
	memcpy(expect, b.data, records);
	ct_output_flush_busy(&b, between);
	if (calls != 2 || unexpected)
		return fail("between() is not called once between each two columns, the batch's records out");
	/* format.h's short FREE: 1 1 0 c iiii, one byte for ids below 16 */
	static const uint8_t frees[] = {0xc0 | 8, 0xc0 | 9};
	if (b.len != sizeof(frees) || memcmp(b.data, frees, sizeof(frees)))
		return fail("the buffer does not hold the two FREE records between() added after the flush");
	uint8_t *late = malloc(b.len);
	size_t nlate = b.len;
	memcpy(late, b.data, nlate);
	ct_output_write(&b, CT_OUT_END);

	uint8_t *all;
	int in = open(path, O_RDONLY); /* the output moved its descriptor to a number of its own */
	unlink(path);
	size_t n = in < 0 ? 0 : decompress(in, &all);
	const uint8_t *p = all + header, *end = all + n;
	uint64_t payload = 0;
	if (!n)
		return fail("the file does not decompress");
	if (n <= header || *p++ != CT_REC_BATCH)
		return fail("the flush is not a BATCH");
	p += ct_get_varint(p, end, &payload);
	struct ct_columns c;
	if (payload > (uint64_t)(end - p) || ct_columns_open(p, p + payload, &c) < 0)
		return fail("the BATCH's columns do not open");
	struct ct_rec_buf joined = {.grow = ct_rec_grow_heap};
	unsigned long long joined_n;
	int k = ct_columns_join(&c, &joined, &joined_n);
	if (k < 0 || joined.len != records || memcmp(joined.data, expect, records))
		return fail("the BATCH does not hold the records flushed");
	p += payload;
	if ((size_t)(end - p) != nlate || memcmp(p, late, nlate))
		return fail("the records between() added do not follow the BATCH");
	if (write_failed)
		return fail("writing failed");
	free(all);
	free(joined.data);
	free(expect);
	free(late);
	free(b.data);
	printf("ok: %d calls, %zu record bytes in the batch, %zu after it\n", calls, records, nlate);

	off_t size[2];
	for (int repeat = 0; repeat < 2; repeat++)
		if (long_stream(repeat, &size[repeat]) < 0)
			return fail("a long stream does not decompress to the records written");
	if (size[0] <= 0 || size[1] * 10 > size[0])
		return fail("records repeated 2 MiB apart take a tenth of random ones' bytes or more");
	printf("ok: 48 MiB of records, %lld bytes at random, %lld repeated 2 MiB apart\n", (long long)size[0],
	       (long long)size[1]);
	return 0;
}
