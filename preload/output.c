/* SPDX-License-Identifier: MIT */
/* The trace file and its zstd stream, for the writer thread: takes the file from the launcher (or
 * the tracker), compresses the writer's records into it, keeps writing to the same file when the
 * program closes the descriptor, and ends the file with a NOTE when it cannot be written. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_createCCtx_advanced, a custom allocator */
#include <zstd.h>

#include "ctrack/columns.h"
#include "ctrack/record.h"
#include "ctrack/trailer.h"
#include "ctrack/zraw.h"
#include "procmaps.h"
#include "text.h"
#include "writer.h"
#include "zmem.h"

/* What the compressor is asked for, best first. Programs repeat the same sequences of allocations
 * (a loop body, a request) far apart in the stream: long-distance matching over a 4 MiB window finds
 * them, for little time and about 5 MiB of memory (the sqlite3 benchmark's trace: 190 KiB -> 79 KiB).
 * Under a memory limit that leaves no room for that, smaller windows (1 MiB of memory, then 120 KiB),
 * then no compressor at all: raw blocks (ctrack/zraw.h), which need no memory. Whichever it gets
 * when the file is opened, it keeps: zstd allocates its whole workspace at the stream's start and
 * reuses it for every later frame, so compression never runs out of memory halfway. */
static const struct rung {
	int window_log, ldm;
} ladder[] = {{22, 1}, {17, 0}, {12, 0}};
#define RUNGS ((int)(sizeof(ladder) / sizeof(ladder[0])))

static struct {
	int fd;
	int failed; /* the file cannot be written: tracing stopped, nothing more is written */
	int rung;   /* the ladder's rung the compressor got; RUNGS: none, raw blocks */
	int first;  /* the rung it asked for first */
	ZSTD_CCtx *zc;
	uint8_t *zbuf;
	size_t zcap;
	dev_t dev; /* the trace file's identity */
	ino_t ino;
	char path[4096]; /* ... and its path, to open it again (reopen) */
	uint64_t reopened;
	uint64_t written;    /* bytes in the file */
	uint64_t flushed_at; /* bytes in the file at the last flush: whole records, whole blocks */
	int frame_open;      /* that flush left the frame open (ZSTD_e_flush, not _e_end) */
	/* the file's bytes as written, for the summary trailer; lost: the file is no longer what the
	 * hash says (its end was cut back), so no trailer can vouch for it */
	struct ct_file_hash hash;
	int hash_lost;
	uint64_t start_ns;
	uint64_t size_limit; /* where writes stop: RLIMIT_FSIZE less room for the last words */
	void (*on_fail)(void);
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

/* 0, or the errno of the failure (EBADF: the descriptor is no longer the trace file). A write that
 * would pass the file size limit fails with EFBIG before it is made: the kernel would write part of
 * it and then raise SIGXFSZ at the writing thread (the program's, on its exit path), and the note
 * that says why the trace stops must still fit (o.size_limit keeps room for it). */
static int write_all(const uint8_t *p, size_t n)
{
	if (n && o.written + n > o.size_limit)
		return EFBIG;
	if (n && !still_ours(o.fd) && reopen() < 0)
		return EBADF;
	while (n) {
		ssize_t k = write(o.fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? errno : ENOSPC;
		ct_file_hash_add(&o.hash, p, (size_t)k);
		p += k;
		n -= (size_t)k;
		o.written += (uint64_t)k;
	}
	return 0;
}

/* ---- the last words of a file ----
 * A write fails (a full disk, a file size limit, an I/O error), or tracing cannot go on: the trace
 * must say so where it stops. What was written since the last flush point, which ends a block on a
 * record boundary, is cut off, and records are put there in a raw block (ctrack/zraw.h), after a
 * frame header when the last frame ended, and after the file header when the file has none yet. A
 * frame the compressor opened is left open (its checksum, which only zstd could write, would have
 * to follow the last block): readers decode everything up to the cut, then the block, then report
 * the trace as truncated. After each flush a little space is reserved past the end of the file for
 * that block (fallocate). */

#define NOTE_ROOM 4096

static void reserve_note_room(void)
{
	if (fallocate(o.fd, FALLOC_FL_KEEP_SIZE, (off_t)o.written, NOTE_ROOM) < 0)
		return; /* not supported here: the cut back to the flush point frees room enough, mostly */
}

/* Records of at most TAIL_MAX bytes, end_frame: close the frame when it is a new one. */
#define TAIL_MAX 640
#define TAIL_ROOM (CT_ZRAW_FRAME_HEADER + CT_ZRAW_BLOCK_HEADER + CT_HEADER_SIZE + TAIL_MAX)

/* The bytes the trace may take under RLIMIT_FSIZE, less the room of its last words (put_tail). */
static uint64_t size_limit(void)
{
	struct rlimit lim;
	if (getrlimit(RLIMIT_FSIZE, &lim) < 0 || lim.rlim_cur == RLIM_INFINITY)
		return UINT64_MAX;
	return lim.rlim_cur > TAIL_ROOM ? lim.rlim_cur - TAIL_ROOM : 0;
}

static void put_tail(const uint8_t *rec, size_t n, int end_frame)
{
	uint8_t blk[TAIL_ROOM];
	size_t k = 0, head = o.flushed_at ? 0 : CT_HEADER_SIZE;
	int new_frame = !o.frame_open;
	if (n > TAIL_MAX)
		return;
	if (new_frame)
		k += ct_zraw_frame(blk);
	k += ct_zraw_block(blk + k, head + n, new_frame && end_frame);
	if (head)
		k += ct_put_header(blk + k);
	memcpy(blk + k, rec, n);
	k += n;
	o.hash_lost = 1;
	if (ftruncate(o.fd, (off_t)o.flushed_at) < 0 ||
	    pwrite(o.fd, blk, k, (off_t)o.flushed_at) != (ssize_t)k)
		return; /* the file ends at the flush point: readers see a cut trace */
	o.written = o.flushed_at += k;
	o.frame_open = !(new_frame && end_frame);
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
	uint8_t rec[TAIL_MAX];
	struct ct_rec_buf b = {.data = rec, .cap = sizeof(rec)};
	ct_rec_note(&b, CT_NOTE_WARNING, t.s, t.len);
	put_tail(rec, b.len, 0);
}

/* Tracing stops: the program runs on untouched. */
static void fail(int err)
{
	o.failed = 1;
	if (o.on_fail)
		o.on_fail();
	if (err != EBADF && still_ours(o.fd))
		note_write_error(err);
}

/* ---- writing ---- */

/* [p, p + n) through the compressor. 0 or an errno. */
static int write_zstd(const void *p, size_t n, ZSTD_EndDirective mode)
{
	ZSTD_inBuffer in = {p, n, 0};
	for (;;) {
		ZSTD_outBuffer out = {o.zbuf, o.zcap, 0};
		size_t left = ZSTD_compressStream2(o.zc, &out, &in, mode);
		int err = ZSTD_isError(left) ? EIO : write_all(o.zbuf, out.pos);
		if (err || (mode == ZSTD_e_continue ? in.pos == in.size : left == 0))
			return err;
	}
}

/* b's bytes as raw blocks, after a frame header when no frame is open; end: the last block of the
 * frame. 0 or an errno. */
static int write_raw(const struct ct_rec_buf *b, int end)
{
	const uint8_t *p = b->data;
	size_t n = b->len;
	if (!n && !end)
		return 0;
	uint8_t h[CT_ZRAW_FRAME_HEADER + CT_ZRAW_BLOCK_HEADER];
	size_t k = o.frame_open ? 0 : ct_zraw_frame(h);
	int err;
	do {
		size_t len = n < CT_ZRAW_BLOCK_MAX ? n : CT_ZRAW_BLOCK_MAX;
		k += ct_zraw_block(h + k, len, end && len == n);
		err = write_all(h, k);
		if (!err)
			err = write_all(p, len);
		p += len;
		n -= len;
		k = 0;
	} while (!err && n);
	return err;
}

/* ---- BATCH records ----
 * A compressed flush of more than a few KiB of records goes out as one BATCH (format.h,
 * columns.h): the same records by columns, each column ended by a zstd flush so that its bytes get
 * a block, and a Huffman table, of their own. The first write (the file header), small ones and
 * raw blocks (no compressor to help) go as they are.
 *
 * The columns are also the stage of the writer's matcher (ct_output_stage): it appends its most
 * frequent records to them directly, the records before each moved there first, so a flush finds
 * most of its records split already. While a BATCH is being compressed (between() runs then), the
 * stage is a second set of columns, and what between() drains is staged there for the next write. */

#define BATCH_MIN 4096
#define STAGE_RESERVE 1024 /* records the matcher may append between two calls of ct_output_stage */

/* Columns and their memory, cap bytes per column. The stage's struct stays where the matcher
 * points (ct_output_columns); while a BATCH is compressed, its columns are the sent set's and the
 * stage gets the spare memory, so between() can go on staging. */
struct colset {
	struct ct_columns c;
	uint8_t *mem;
	size_t cap;
};
static struct colset stage, sent;

static size_t col_bytes(const struct ct_columns *c)
{
	size_t n = 0;
	for (int i = 0; i < CT_COLUMNS; i++)
		n += c->len[i];
	return n;
}

static void cols_empty(struct colset *s)
{
	for (int i = 0; i < CT_COLUMNS; i++) {
		s->c.col[i] = s->mem ? s->mem + (size_t)i * s->cap : NULL;
		s->c.len[i] = s->c.pos[i] = 0;
	}
	s->c.room = 0;
}

/* Room for need more bytes in every column of the stage, its contents kept: 0, or -1. */
static int cols_room(size_t need)
{
	size_t most = 0;
	for (int i = 0; i < CT_COLUMNS; i++)
		most = stage.c.len[i] > most ? stage.c.len[i] : most;
	if (stage.mem && most + need <= stage.cap)
		return 0;
	size_t cap = stage.cap ? stage.cap : 1u << 18;
	while (cap < most + need)
		cap *= 2;
	uint8_t *mem = ct_arena_map(CT_COLUMNS * cap);
	if (!mem)
		return -1;
	for (int i = 0; i < CT_COLUMNS; i++) {
		if (stage.c.len[i])
			memcpy(mem + (size_t)i * cap, stage.c.col[i], stage.c.len[i]);
		stage.c.col[i] = mem + (size_t)i * cap;
	}
	ct_arena_unmap(stage.mem, CT_COLUMNS * stage.cap);
	stage.mem = mem;
	stage.cap = cap;
	return 0;
}

/* Appends b's records to the stage and empties b: 0, or -1 (no memory, or bytes a BATCH cannot
 * hold), with the stage and b as they were. */
static int stage_rows(struct ct_rec_buf *b)
{
	size_t len[CT_COLUMNS];
	if (cols_room(b->len) < 0)
		return -1;
	memcpy(len, stage.c.len, sizeof(len));
	if (ct_columns_split(b->data, b->len, &stage.c) < 0) {
		memcpy(stage.c.len, len, sizeof(len));
		return -1;
	}
	b->len = 0;
	return 0;
}

struct ct_columns *ct_output_columns(void)
{
	return &stage.c;
}

size_t ct_output_stage(struct ct_rec_buf *b)
{
	stage.c.room = 0;
	if (o.failed || o.rung >= RUNGS || !o.written || stage_rows(b) < 0 ||
	    cols_room(STAGE_RESERVE * CT_VARINT_MAX) < 0)
		return 0;
	return stage.c.room = STAGE_RESERVE;
}

size_t ct_output_staged(void)
{
	return col_bytes(&stage.c);
}

/* c as one BATCH record through the compressor, between() (if any) run between two columns.
 * 0 or an errno. */
static int write_batch(const struct ct_columns *c, ZSTD_EndDirective mode, void (*between)(void))
{
	uint8_t head[1 + CT_VARINT_MAX * (1 + CT_COLUMNS)], lens[CT_VARINT_MAX * CT_COLUMNS];
	size_t nlens = 0, payload = 0, nhead = 0;
	for (int i = 0; i < CT_COLUMNS; i++) {
		nlens += ct_put_varint(lens + nlens, c->len[i]);
		payload += c->len[i];
	}
	head[nhead++] = CT_REC_BATCH;
	nhead += ct_put_varint(head + nhead, payload + nlens);
	memcpy(head + nhead, lens, nlens);
	int err = write_zstd(head, nhead + nlens, ZSTD_e_continue);
	int last = CT_COLUMNS - 1;
	while (last > 0 && !c->len[last])
		last--;
	for (int i = 0; i <= last && !err; i++) {
		if (i && between)
			between();
		err = write_zstd(c->col[i], c->len[i], i == last ? mode : ZSTD_e_flush);
	}
	return err;
}

/* The staged columns, fewer than BATCH_MIN bytes, back as records (their own order) through the
 * compressor: a BATCH's seven blocks would cost more than its columns gain. 0 or an errno. */
static int write_joined(ZSTD_EndDirective mode)
{
	static uint8_t rows[BATCH_MIN + 16 * CT_VARINT_MAX];
	struct ct_rec_buf r = {.data = rows, .cap = sizeof(rows)};
	unsigned long long n;
	return ct_columns_join(&stage.c, &r, &n) < 0 ? EIO : write_zstd(r.data, r.len, mode);
}

/* The staged columns and then b's records, compressed; what between() stages or adds to b
 * meanwhile waits for the next write. 0 or an errno. */
static int write_staged(struct ct_rec_buf *b, ZSTD_EndDirective mode, void (*between)(void))
{
	int err;
	if (b->len && stage_rows(b) < 0) { /* b's records go after the columns, as they are */
		err = col_bytes(&stage.c) < BATCH_MIN ? write_joined(ZSTD_e_continue)
		                                      : write_batch(&stage.c, ZSTD_e_continue, NULL);
		if (!err)
			err = write_zstd(b->data, b->len, mode);
		b->len = 0;
	} else if (col_bytes(&stage.c) < BATCH_MIN) {
		err = write_joined(mode);
	} else {
		struct colset full = stage;
		stage = sent;
		cols_empty(&stage);
		err = write_batch(&full.c, mode, between);
		sent = full;
		cols_empty(&sent);
		return err;
	}
	cols_empty(&stage);
	return err;
}

/* b's records into the file (ct_output_write), after the staged columns. */
static void output(struct ct_rec_buf *b, enum ct_out_mode how, void (*between)(void))
{
	int end = how == CT_OUT_END, had = b->len != 0 || col_bytes(&stage.c) != 0, err = 0;
	ZSTD_EndDirective mode = end ? ZSTD_e_end : ZSTD_e_flush;
	if (o.failed) {
		b->len = 0;
		cols_empty(&stage);
	} else if (o.rung < RUNGS && o.written && (col_bytes(&stage.c) || b->len >= BATCH_MIN)) {
		err = write_staged(b, mode, between);
	} else {
		err = o.rung >= RUNGS ? write_raw(b, end) : write_zstd(b->data, b->len, mode);
		b->len = 0;
	}
	if (err)
		fail(err);
	if (!o.failed && (had || end || o.rung < RUNGS)) {
		o.flushed_at = o.written; /* a block boundary, after whole records */
		o.frame_open = !end;
		reserve_note_room();
	}
}

void ct_output_write(struct ct_rec_buf *b, enum ct_out_mode how)
{
	output(b, how, NULL);
}

void ct_output_flush_busy(struct ct_rec_buf *b, void (*between)(void))
{
	output(b, CT_OUT_FLUSH, between);
}

/* ---- the compressor ---- */

/* libzstd.a calls these hooks when something defines them (weak references, else resolved by the
 * loader among the program's symbols): defined here, they stay the shim's own, and do nothing. */
struct ZSTD_Trace;
unsigned long long ZSTD_trace_compress_begin(const ZSTD_CCtx *cctx);
void ZSTD_trace_compress_end(unsigned long long ctx, const struct ZSTD_Trace *trace);

unsigned long long ZSTD_trace_compress_begin(const ZSTD_CCtx *cctx)
{
	(void)cctx;
	return 0; /* no tracing: the end hook is never called */
}

void ZSTD_trace_compress_end(unsigned long long ctx, const struct ZSTD_Trace *trace)
{
	(void)ctx;
	(void)trace;
}

/* Sets the rung's parameters and starts a frame with no input, which makes zstd allocate its whole
 * workspace now (with ZSTD_e_continue nothing is written yet). 0, or -1 when that memory is not to
 * be had (zstd keeps none of it). Level 1, not 3: the writer shares the machine with the program,
 * and level 3 cost the churn benchmark 0.27 -> 0.32 s for traces at most 6% smaller. */
static int start_stream(const struct rung *r)
{
	ZSTD_CCtx_reset(o.zc, ZSTD_reset_session_and_parameters);
	ZSTD_CCtx_setParameter(o.zc, ZSTD_c_compressionLevel, 1);
	ZSTD_CCtx_setParameter(o.zc, ZSTD_c_windowLog, r->window_log);
	ZSTD_CCtx_setParameter(o.zc, ZSTD_c_enableLongDistanceMatching, r->ldm);
	ZSTD_CCtx_setParameter(o.zc, ZSTD_c_checksumFlag, 1); /* readers detect damage */
	ZSTD_outBuffer out = {o.zbuf, o.zcap, 0};
	ZSTD_inBuffer in = {NULL, 0, 0};
	return ZSTD_isError(ZSTD_compressStream2(o.zc, &out, &in, ZSTD_e_continue)) || out.pos ? -1 : 0;
}

/* Under a memory limit the compressor, a convenience, takes at most a quarter of what the limit
 * leaves: give_back returns the shim's memory to a program whose malloc fails, but memory a program
 * maps otherwise (dlopen's segments, an interpreter's arenas) cannot be answered that way. */
#define COMPRESSOR_SHARE 4

/* The compressor holds its rung's memory: 1 when that is within its share of what the limits leave. */
static int within_share(void)
{
	uint64_t room = ct_headroom(), took = ZSTD_sizeof_CCtx(o.zc);
	return room == UINT64_MAX || (COMPRESSOR_SHARE - 1) * took <= room;
}

/* The highest rung whose memory the compressor gets within its share, with spare bytes left over;
 * RUNGS when none (raw blocks). */
static int pick_rung(size_t spare, int first)
{
	o.zcap = ZSTD_CStreamOutSize();
	if (!o.zbuf)
		o.zbuf = ct_arena_map(o.zcap);
	void *keep = ct_arena_map(spare); /* held while the compressor takes its share */
	int i = first;
	for (; keep && o.zbuf && i < RUNGS; i++) {
		if (!o.zc)
			o.zc = ZSTD_createCCtx_advanced(ct_zmem());
		if (!o.zc)
			break;
		if (start_stream(&ladder[i]) < 0)
			continue;
		if (within_share())
			break;
		ZSTD_freeCCtx(
		    o.zc); /* a smaller rung in a new context: zstd would keep the larger workspace */
		o.zc = NULL;
	}
	ct_arena_unmap(keep, spare);
	if (!o.zc || i >= RUNGS) {
		ct_output_release();
		return RUNGS;
	}
	return i;
}

int ct_output_open(int fd, void (*on_fail)(void))
{
	struct stat st;
	fd = move_high(fd);
	if (fstat(fd, &st) < 0)
		return -errno;
	o.dev = st.st_dev;
	o.ino = st.st_ino;
	o.fd = fd;
	o.on_fail = on_fail;
	cols_empty(&stage); /* a parent's, before a fork, are not this file's */
	o.failed = o.frame_open = o.hash_lost = 0;
	o.reopened = o.written = o.flushed_at = 0;
	ct_file_hash_init(&o.hash);
	o.start_ns = ct_now_ns();
	o.size_limit = size_limit();
	remember_path(fd);
	o.rung = RUNGS;
	o.zc = NULL; /* a forked child's writer never touches the parent's context */
	return 0;
}

void ct_output_compress(size_t spare, int lanes)
{
	/* With lanes, the lanes compressed the events' records (lanezip.c): what the writer's stream gets
	 * is the rest (definitions, modules, notes) and their parts, which no window would shrink. */
	o.first = lanes > 1 ? 1 : 0;
	o.rung = pick_rung(spare, o.first);
}

size_t ct_output_rung_note(char *buf, size_t cap)
{
	struct ct_text t = ct_text_in(buf, cap);
	if (o.rung == o.first)
		return 0;
	if (o.rung < RUNGS) {
		ct_text_add(&t, "the trace is compressed with a ");
		ct_text_add_uint(&t, (1u << ladder[o.rung].window_log) >> 10);
		ct_text_add(&t, o.first ? " KiB window, not 128 KiB," : " KiB window, not 4 MiB,");
	} else {
		ct_text_add(&t, "the trace is not compressed,");
	}
	ct_text_add(&t, " as the memory the compressor asks for was not to be had, or not within its "
	                "share under the program's memory limit (ulimit -v or -d): the file is larger, "
	                "nothing is missing");
	return t.len;
}

void ct_output_end_with_note(const char *text, size_t len)
{
	uint8_t rec[TAIL_MAX];
	struct ct_rec_buf b = {.data = rec, .cap = sizeof(rec)};
	const struct ct_rec_end e = {0};
	if (o.fd < 0 || o.failed)
		return;
	ct_rec_note(&b, CT_NOTE_WARNING, text, len);
	ct_rec_end(&b, &e);
	if (o.flushed_at) /* through the stream, which closes its frame (a zstd frame with its checksum) */
		ct_output_write(&b, CT_OUT_END);
	else /* nothing in the file yet: the file header and these records, in a frame of their own */
		put_tail(rec, b.len, 1);
	o.failed = 1;
}

void ct_output_trailer(const struct ct_trailer *t)
{
	uint8_t buf[CT_TRAILER_MAX];
	uint64_t at = o.written;
	if (!ct_output_ok() || o.frame_open || !at || o.hash_lost)
		return;
	struct ct_trailer mine = *t;
	mine.file_hash = ct_file_hash_end(&o.hash);
	size_t n = ct_trailer_encode(buf, &mine, at);
	int err = write_all(buf, n);
	if (!err) {
		o.flushed_at = o.written; /* a frame boundary: what follows (late records) goes after it */
		return;
	}
	/* Not a failure of the trace: a part of a skippable frame would be a damaged end, so it goes
	 * (and with it any later trailer: the hash took its bytes). EBADF: the descriptor is no longer
	 * the trace file, and nothing was written. */
	o.hash_lost = 1;
	if (err == EBADF || o.written == at || !still_ours(o.fd))
		return;
	if (ftruncate(o.fd, (off_t)at) == 0 && lseek(o.fd, (off_t)at, SEEK_SET) == (off_t)at)
		o.written = o.flushed_at = at;
	else
		fail(EIO);
}

void ct_output_release(void)
{
	ZSTD_freeCCtx(o.zc); /* its workspace goes back through zstd_free */
	ct_arena_unmap(o.zbuf, o.zcap);
	ct_arena_unmap(stage.mem, CT_COLUMNS * stage.cap);
	ct_arena_unmap(sent.mem, CT_COLUMNS * sent.cap);
	o.zc = NULL;
	o.zbuf = NULL;
	stage = sent = (struct colset){0};
}

size_t ct_output_bytes(void)
{
	return (o.zc ? ZSTD_sizeof_CCtx(o.zc) : 0) + (o.zbuf ? o.zcap : 0) +
	       CT_COLUMNS * (stage.cap + sent.cap);
}

int ct_output_ok(void)
{
	return o.fd >= 0 && !o.failed && (o.rung == RUNGS || (o.zc && o.zbuf));
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
	cols_empty(&stage);
}
