/* SPDX-License-Identifier: MIT */
/* The trace file and its zstd stream, for the writer thread: takes the file from the launcher (or
 * the tracker), compresses the writer's records into it, keeps writing to the same file when the
 * program closes the descriptor, and ends the file with a NOTE when it cannot be written. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_createCCtx_advanced, a custom allocator */
#include <zstd.h>

#include "ctrack/columns.h"
#include "ctrack/record.h"
#include "text.h"
#include "writer.h"

static struct {
	int fd;
	int failed; /* the file cannot be written: tracing stopped, nothing more is written */
	ZSTD_CCtx *zc;
	uint8_t *zbuf;
	size_t zcap;
	dev_t dev; /* the trace file's identity */
	ino_t ino;
	char path[4096]; /* ... and its path, to open it again (reopen) */
	uint64_t reopened;
	uint64_t written;    /* bytes in the file */
	uint64_t flushed_at; /* bytes in the file at the last flush: whole records, whole blocks */
	int frame_open;      /* that flush left the zstd frame open (ZSTD_e_flush, not _e_end) */
	uint64_t start_ns;
} o = {.fd = -1};

/* Programs close descriptors they did not open (daemons close them all) and may get the number
 * back for a file of their own: write only while the descriptor is still the trace file. */
static int still_ours(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && st.st_dev == o.dev && st.st_ino == o.ino;
}

/* Moves fd to a high number, out of the way of programs that expect the lowest free numbers. */
static int move_high(int fd)
{
	int high = fcntl(fd, F_DUPFD_CLOEXEC, 512);
	if (high < 0)
		return fd;
	close(fd);
	return high;
}

/* The program took our descriptor (a daemon closes them all): open the file again by the path it
 * had, if that is still the same file. The old number is the program's now: never closed. */
static int reopen(void)
{
	if (!o.path[0])
		return -1;
	int fd = open(o.path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	fd = move_high(fd);
	if (!still_ours(fd)) {
		close(fd);
		return -1;
	}
	o.fd = fd;
	o.reopened++;
	return 0;
}

/* The path of the trace file, from /proc (no stdio here): "" when it cannot be known. */
static void remember_path(int fd)
{
	char link[40];
	struct ct_text t = ct_text_in(link, sizeof(link));
	ct_text_add(&t, "/proc/self/fd/");
	ct_text_add_uint(&t, (uint64_t)fd);
	ssize_t k = readlink(link, o.path, sizeof(o.path) - 1);
	o.path[k > 0 && o.path[0] == '/' ? k : 0] = 0;
}

/* 0, or the errno of the failure (EBADF: the descriptor is no longer the trace file). */
static int write_all(const uint8_t *p, size_t n)
{
	if (n && !still_ours(o.fd) && reopen() < 0)
		return EBADF;
	while (n) {
		ssize_t k = write(o.fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? errno : ENOSPC;
		p += k;
		n -= (size_t)k;
		o.written += (uint64_t)k;
	}
	return 0;
}

/* ---- when the file cannot be written ----
 * A write fails (a full disk, a file size limit, an I/O error): the trace must say so where it
 * stops. The file is cut back to the last flush point, which ends a zstd block on a record
 * boundary, and a NOTE is appended there in a raw zstd block written by hand (zstd's format, RFC
 * 8878: a 3-byte block header, then the bytes as they are). The frame is left open, so readers
 * decode everything up to the cut, then the NOTE, then report the trace as truncated. After each
 * flush a little space is reserved past the end of the file for that block (fallocate). */

#define NOTE_ROOM 4096

static void reserve_note_room(void)
{
	if (fallocate(o.fd, FALLOC_FL_KEEP_SIZE, (off_t)o.written, NOTE_ROOM) < 0)
		return; /* not supported here: the cut back to the flush point frees room enough, mostly */
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void note_write_error(int err)
{
	char buf[320];
	struct ct_text t = ct_text_in(buf, sizeof(buf));
	const char *why = strerrordesc_np(err);
	ct_text_add(&t, "the trace stops here: writing it failed after ");
	ct_text_add_uint(&t, o.flushed_at);
	ct_text_add(&t, " bytes (");
	ct_text_add(&t, why ? why : "unknown error");
	ct_text_add(&t, ") at ");
	ct_text_add_uint(&t, (ct_now_ns() - o.start_ns) / 1000000);
	ct_text_add(&t, " ms; up to the last 100 ms of events before it are lost, and tracing stopped");
	uint8_t rec[sizeof(buf) + 16], blk[sizeof(rec) + 16];
	struct ct_rec_buf b = {.data = rec, .cap = sizeof(rec)};
	ct_rec_note(&b, CT_NOTE_WARNING, t.s, t.len);
	size_t n = 0;
	if (!o.frame_open) { /* the last frame ended: a new one, 1 KiB window, no checksum */
		put_le(blk, ZSTD_MAGICNUMBER, 4);
		blk[4] = 0; /* frame header descriptor: no content size, no checksum, no dictionary */
		blk[5] = 0; /* window descriptor: 2^10 bytes, more than the block */
		n = 6;
	}
	put_le(blk + n, (uint64_t)b.len << 3, 3); /* not the last block, raw, b.len bytes */
	memcpy(blk + n + 3, rec, b.len);
	n += 3 + b.len;
	if (ftruncate(o.fd, (off_t)o.flushed_at) < 0 ||
	    pwrite(o.fd, blk, n, (off_t)o.flushed_at) != (ssize_t)n)
		return; /* the file ends at the flush point: readers see a cut trace */
}

/* Tracing stops: the program runs on untouched. */
static void fail(int err)
{
	o.failed = 1;
	atomic_store(&ct_state, CT_OFF);
	if (err != EBADF && still_ours(o.fd))
		note_write_error(err);
}

/* Compresses [p, p + n) with the given end directive and writes what zstd gives back. 0, or -1
 * when tracing failed. */
static int compress(const void *p, size_t n, ZSTD_EndDirective mode)
{
	ZSTD_inBuffer in = {p, n, 0};
	while (!o.failed) {
		ZSTD_outBuffer out = {o.zbuf, o.zcap, 0};
		size_t left = ZSTD_compressStream2(o.zc, &out, &in, mode);
		int err = ZSTD_isError(left) ? EIO : write_all(o.zbuf, out.pos);
		if (err) {
			fail(err);
			break;
		}
		if (mode == ZSTD_e_continue ? in.pos == in.size : left == 0)
			break;
	}
	return o.failed ? -1 : 0;
}

/* ---- BATCH records ----
 * A flush of more than a few KiB of records goes out as one BATCH (format.h, columns.h): the same
 * records by columns, each column ended by a zstd flush so that its bytes get a block, and a
 * Huffman table, of their own. The first write (the file header) and small ones go as they are. */

#define BATCH_MIN 4096

static struct ct_columns cols;
static uint8_t *cols_mem;
static size_t cols_cap; /* bytes per column */

/* Splits b into cols: 0, or -1 (no memory, or bytes a BATCH cannot hold: written as they are). */
static int split(const struct ct_rec_buf *b)
{
	if (b->len > cols_cap) {
		size_t cap = cols_cap ? cols_cap : 1u << 18;
		while (cap < b->len)
			cap *= 2;
		if (ct_arena_grow((void **)&cols_mem, CT_COLUMNS * cols_cap, CT_COLUMNS * cap) < 0)
			return -1;
		cols_cap = cap;
	}
	for (int i = 0; i < CT_COLUMNS; i++) {
		cols.col[i] = cols_mem + (size_t)i * cols_cap;
		cols.len[i] = 0;
	}
	return ct_columns_split(b->data, b->len, &cols);
}

static int write_batch(ZSTD_EndDirective mode)
{
	uint8_t head[1 + CT_VARINT_MAX * (1 + CT_COLUMNS)], lens[CT_VARINT_MAX * CT_COLUMNS];
	size_t nlens = 0, payload = 0, nhead = 0;
	for (int i = 0; i < CT_COLUMNS; i++) {
		nlens += ct_put_varint(lens + nlens, cols.len[i]);
		payload += cols.len[i];
	}
	head[nhead++] = CT_REC_BATCH;
	nhead += ct_put_varint(head + nhead, payload + nlens);
	memcpy(head + nhead, lens, nlens);
	if (compress(head, nhead + nlens, ZSTD_e_continue) < 0)
		return -1;
	int last = CT_COLUMNS - 1;
	while (last > 0 && !cols.len[last])
		last--;
	for (int i = 0; i <= last; i++)
		if (compress(cols.col[i], cols.len[i], i == last ? mode : ZSTD_e_flush) < 0)
			return -1;
	return 0;
}

void ct_output_write(struct ct_rec_buf *b, enum ct_out_mode how)
{
	ZSTD_EndDirective mode = how == CT_OUT_END ? ZSTD_e_end : ZSTD_e_flush;
	if (o.written && b->len >= BATCH_MIN && split(b) == 0)
		write_batch(mode);
	else
		compress(b->data, b->len, mode);
	b->len = 0;
	if (o.failed)
		return;
	o.flushed_at = o.written; /* a block boundary, after whole records */
	o.frame_open = mode == ZSTD_e_flush;
	reserve_note_room();
}

/* zstd's memory comes from the arena, like the rest of the shim's: off the program's heap, and known
 * to the leak scan as the shim's (its window holds the trace's bytes, not the program's pointers).
 * A block keeps its mapping's size in front. */
static void *zstd_alloc(void *opaque, size_t size)
{
	(void)opaque;
	size_t *p = ct_arena_map(size + 16);
	if (!p)
		return NULL;
	p[0] = size + 16;
	return (char *)p + 16;
}

static void zstd_free(void *opaque, void *address)
{
	(void)opaque;
	if (address) {
		size_t *p = (size_t *)((char *)address - 16);
		ct_arena_unmap(p, p[0]);
	}
}

int ct_output_open(int fd)
{
	struct stat st;
	fd = move_high(fd);
	if (fstat(fd, &st) < 0)
		return -errno;
	o.dev = st.st_dev;
	o.ino = st.st_ino;
	o.fd = fd;
	o.failed = o.frame_open = 0;
	o.reopened = o.written = o.flushed_at = 0;
	o.start_ns = ct_now_ns();
	remember_path(fd);
	o.zc = ZSTD_createCCtx_advanced((ZSTD_customMem){zstd_alloc, zstd_free, NULL});
	o.zcap = ZSTD_CStreamOutSize();
	if (!o.zbuf)
		o.zbuf = ct_arena_map(o.zcap);
	if (!o.zc || !o.zbuf)
		return -ENOMEM;
	/* Programs repeat the same sequences of allocations (a loop body, a request) far apart in the
	 * stream: long-distance matching over a 4 MiB window finds them, for little time and memory
	 * (the sqlite3 benchmark's trace: 190 KiB -> 79 KiB). Level 1, not 3: the writer shares the
	 * machine with the program, and level 3 cost the churn benchmark 0.27 -> 0.32 s for traces
	 * at most 6% smaller. */
	ZSTD_CCtx_setParameter(o.zc, ZSTD_c_compressionLevel, 1);
	ZSTD_CCtx_setParameter(o.zc, ZSTD_c_windowLog, 22);
	ZSTD_CCtx_setParameter(o.zc, ZSTD_c_enableLongDistanceMatching, 1);
	ZSTD_CCtx_setParameter(o.zc, ZSTD_c_checksumFlag, 1); /* readers detect damage */
	return 0;
}

int ct_output_ok(void)
{
	return o.fd >= 0 && !o.failed && o.zc && o.zbuf;
}
uint64_t ct_output_reopened(void)
{
	return o.reopened;
}

void ct_output_drop(void)
{
	if (o.fd >= 0)
		close(o.fd);
	o.fd = -1;
}
