/* SPDX-License-Identifier: MIT */
/* The output's busy flush (preload/output.c, ct_output_flush_busy): between() runs once between each
 * two of a BATCH's columns, the batch's records out of the buffer, and what it adds goes out with the next
 * write, after the batch; the file, decompressed and joined, holds every record byte for byte. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
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
			ZSTD_outBuffer zo = {*out + len, cap - len, 0};
			if (ZSTD_isError(ZSTD_decompressStream(d, &zo, &zi)))
				return 0;
			len += zo.pos;
		}
	}
	ZSTD_freeDStream(d);
	return len;
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
	return 0;
}
