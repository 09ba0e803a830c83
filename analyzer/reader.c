/* SPDX-License-Identifier: MIT */
/* The trace reader: zstd stream (any number of frames) -> header check -> records -> model.
 * Memory is a fixed window of decompressed bytes (grown only for a framed record bigger than it).
 * Damage after the file header (a block zstd cannot decode, a record that cannot be, a frame
 * checksum that does not match) ends the reading as a cut does: the model keeps what came before,
 * and says where and what (damaged, damaged_at, damage). zstd is given one part of a frame per call
 * (a frame header, a block's header, its data, the checksum), so a damaged block costs only its own
 * records, and is named by its offset in the file. */
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_nextInputType: which part of a frame zstd decodes next */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "ctrack/columns.h"
#include "ctrack/format.h"
#include "ctrack/zraw.h"
#include "aggregated.h"
#include "cursor.h"
#include "readahead.h"
#include "reader.h"
#include "rec_heap.h"
#include "regfile.h"
#include "zepoch.h"

#define WINDOW (1u << 20)
#define SMALL_WINDOW (64u << 10)
#define WINDOW_LOG_MAX 25     /* zstd's window: 32 MiB at most (zstd's own default limit is 128 MiB) */
#define MAX_FRAMED (1u << 30) /* a framed record longer than this is corruption, not data */
/* The compressed size from which a thread reads ahead (CTRACK_READ_AHEAD unset). Below it the thread
 * gained nothing measurable in wall time (the model's updates, not the decompression, decide a small
 * trace's reading) and cost CPU and a few MiB of slots: docs/benchmarks.md, "Reading on two cores". */
#define READ_AHEAD_MIN (16u << 20)

/* What a small file may cost. zstd expands a run of equal bytes 30,000-fold, so a few KiB can
 * hold 50 million INFO records (gigabytes of model). Real traces define at most ~1.6 ids (stack
 * nodes, alloc infos) per compressed byte (a million INFOs of increasing sizes, zstd -19) and
 * ~0.3 in practice, a module record takes tens of bytes, and a FRAME's module lookup looks at a
 * few segments: beyond these bounds a file is corrupt or hostile, and reading it stops with an
 * error rather than taking the machine's memory or minutes. */
#define IDS_FLOOR (1u << 18)
#define IDS_PER_BYTE 16
#define MODULES_FLOOR 1024
#define BYTES_PER_MODULE 4
#define WORK_FLOOR (1ull << 28)
#define WORK_PER_BYTE 1024

struct reader {
	const char *path;
	int fd;
	int own_fd;       /* the reader opened fd (by path), so it closes it */
	int process_only; /* stop at the PROCESS record */
	int stop;         /* ... which was read */
	ZSTD_DStream *z;
	uint8_t *in;
	ZSTD_inBuffer zin;
	size_t in_cap;
	int eof;        /* the file has no more bytes */
	int fifo;       /* the file is a FIFO or a pipe: each read waits FIFO_WAIT_MS at most */
	int mid_frame;  /* the last zstd call ended inside a frame */
	int pending;    /* the last zstd call filled the output buffer */
	int zstd_magic; /* the file starts like a zstd frame */
	uint64_t file_off;
	/* The part of a frame zstd decodes next (ZSTD_nextInputType, or -1 before the first) and the
	 * input it wants (its last hint; after a frame, first_hint), and where the file holds it: that
	 * part, the frame and the block it belongs to, and the block whose data were decoded last. */
	int unit;
	size_t hint, first_hint;
	uint64_t unit_at, frame_at, block_at, out_block;
	int damaged;        /* ... damage was found: nothing is read past it */
	uint64_t damage_at; /* the file offset near which decoding failed */
	char damage[200];   /* what was wrong */
	uint8_t *buf;       /* decompressed bytes [pos, len) not decoded yet */
	size_t pos, len, cap;
	uint64_t base; /* stream offset of buf[0] */
	unsigned last_tag;
	struct ct_model *m;
	char *err;
	size_t errlen;
	ct_progress_fn progress; /* called after each read of the file, or NULL */
	void *progress_arg;
	uint64_t file_size;
	unsigned version; /* the file's format version */
	/* For RECENT, per lane (EPOCH; lane 0's are every ALLOC record outside EPOCH records too): the
	 * ALLOC records read and the infos of the last ones; the lane whose records are being read. */
	struct window {
		uint64_t allocs;
		uint64_t recent[CT_RECENT_WINDOW];
	} win[CT_EPOCH_LANES_MAX], *cur;
	struct ct_rec_buf joined; /* the records of the BATCH being decoded */
	struct ct_zlanes zl;      /* the lanes' decoders (ZEPOCH) */
	const uint8_t *zepoch;    /* the ZEPOCH record being decoded (in buf), or NULL */
	const uint8_t *batch;     /* that BATCH record (in buf), or NULL */
	/* Following a trace being written (reader.h), or NULL. */
	const struct ct_follow_hooks *follow;
	/* Reading ahead (readahead.h): the thread, the slot whose bytes were added last, and the reader
	 * the thread fills from (the decompression handed over to it after the header), or NULL. */
	struct ct_readahead *ahead;
	struct ct_ra_slot *slot;
	struct reader *src;
	int framing; /* src's: its records are framed (a record it cannot frame ends the joins ahead) */
};

static int fail(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct reader *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->err, r->errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Damage near byte `at` of the file: the reading stops there. Returns -1. */
static int damaged(struct reader *r, uint64_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int damaged(struct reader *r, uint64_t at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->damage, sizeof(r->damage), fmt, ap);
	va_end(ap);
	r->damaged = 1;
	r->damage_at = at;
	return -1;
}

/* A corrupt record at p (inside buf, or inside the BATCH being decoded): damage in the zstd block
 * whose data showed it. Returns -1. */
static int corrupt(struct reader *r, const uint8_t *p, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int corrupt(struct reader *r, const uint8_t *p, const char *fmt, ...)
{
	char why[128];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	const struct ct_rec_buf *j = &r->joined;
	int lane = r->zepoch ? ct_zlanes_holding(&r->zl, p) : -1;
	if (lane >= 0)
		return damaged(
		    r, r->out_block,
		    "%s, byte %zu of lane %d's records of the ZEPOCH at byte %llu of the decompressed trace",
		    why, (size_t)(p - r->zl.lane[lane].rows.data), lane,
		    (unsigned long long)(r->base + (uint64_t)(r->zepoch - r->buf)));
	if (r->batch && p >= j->data && p < j->data + j->len)
		return damaged(
		    r, r->out_block,
		    "%s, byte %zu of the records of the BATCH at byte %llu of the decompressed trace", why,
		    (size_t)(p - j->data), (unsigned long long)(r->base + (uint64_t)(r->batch - r->buf)));
	return damaged(r, r->out_block, "%s, in the record at byte %llu of the decompressed trace", why,
	               (unsigned long long)(r->base + (uint64_t)(p - r->buf)));
}

/* ---- decompression ---- */

static int starts_like_zstd(const uint8_t *p, size_t n)
{
	if (n < 4)
		return 0;
	uint32_t magic = ct_get_u32(p);
	return magic == ZSTD_MAGICNUMBER || (magic & ZSTD_MAGIC_SKIPPABLE_MASK) == ZSTD_MAGIC_SKIPPABLE_START;
}

/* The bytes of the file read so far. */
static uint64_t bytes_read(const struct reader *r)
{
	return r->file_off + r->zin.size;
}

/* How long a FIFO may stay silent (before its first byte, or between two) before the reader gives
 * up on it: a steady writer, however slow, is read; one that stalls is an error, not a hang. */
#define FIFO_WAIT_MS 10000

/* A FIFO's next bytes, FIFO_WAIT_MS at most: 0 when there are (or its writer is gone), else -1
 * after the error. */
static int wait_fifo(struct reader *r)
{
	struct pollfd pfd = {.fd = r->fd, .events = POLLIN};
	int n;
	while ((n = poll(&pfd, 1, FIFO_WAIT_MS)) < 0 && errno == EINTR)
		;
	if (n < 0)
		return fail(r, "cannot read '%s': %s", r->path, strerror(errno));
	if (n > 0)
		return 0;
	if (!bytes_read(r))
		return fail(r, "cannot read '%s': it is a FIFO that nothing wrote to in %d s", r->path,
		            FIFO_WAIT_MS / 1000);
	return fail(r, "cannot read '%s': its writer sent nothing for %d s (after %llu bytes)", r->path,
	            FIFO_WAIT_MS / 1000, (unsigned long long)bytes_read(r));
}

/* Following: asks the hook whether to read again at the end of the bytes so far (at_end) or after
 * a read that brought some. 0 to go on, 1 to stop there, -1 after the error. */
static int follow_tick(struct reader *r, int at_end)
{
	int ended = at_end && (r->last_tag == CT_REC_END || r->last_tag == CT_REC_EXEC) && r->pos == r->len;
	int rc = r->follow->tick(r->follow->arg, at_end, ended, r->err, r->errlen);
	return rc < 0 ? -1 : rc > 0;
}

/* One read of the file into r->in: its byte count, or -1 after the error. While following, the end
 * of the bytes written so far is waited at (follow_tick), and a stop reads as the end of the file. */
static ssize_t read_some(struct reader *r)
{
	for (;;) {
		ssize_t n;
		do {
			if (r->fifo && wait_fifo(r) < 0)
				return -1;
			n = read(r->fd, r->in, r->in_cap);
		} while (n < 0 && errno == EINTR);
		if (n < 0)
			return fail(r, "cannot read '%s': %s", r->path, strerror(errno));
		if (!r->follow || r->fifo)
			return n;
		int rc = follow_tick(r, n == 0);
		if (rc)
			return rc < 0 ? -1 : 0;
		if (n > 0)
			return n;
	}
}

/* The next bytes of the file into r->in. 0, or -1 after the error. */
static int read_more(struct reader *r)
{
	ssize_t n = read_some(r);
	if (n < 0)
		return -1;
	if (!r->file_off && !r->zin.size)
		r->zstd_magic = starts_like_zstd(r->in, (size_t)n);
	r->file_off += r->zin.size;
	r->zin = (ZSTD_inBuffer){r->in, (size_t)n, 0};
	r->eof = n == 0;
	if (r->progress)
		r->progress(bytes_read(r), r->file_size, r->progress_arg);
	return 0;
}

/* The input of zstd's next call: the rest of the part of a frame it decodes next, no more (its
 * hint adds the next block's header to a block's data: a damaged header would cost the block's
 * output too), and none while its output waits to be flushed. Notes where that part starts. */
static ZSTD_inBuffer next_unit(struct reader *r)
{
	uint64_t at = r->file_off + r->zin.pos;
	int unit = ZSTD_nextInputType(r->z);
	if (unit != r->unit) { /* a block's data follow its header, which zstd may take with the frame's */
		int data = unit == ZSTDnit_block || unit == ZSTDnit_lastBlock;
		r->unit = unit;
		r->unit_at = at;
		r->frame_at = unit == ZSTDnit_frameHeader ? at : r->frame_at;
		r->block_at = unit == ZSTDnit_blockHeader ? at
		              : data                      ? at - CT_ZRAW_BLOCK_HEADER
		                                          : r->block_at;
	}
	size_t want = r->hint ? r->hint : r->first_hint;
	if (unit == ZSTDnit_block && want > CT_ZRAW_BLOCK_HEADER)
		want -= CT_ZRAW_BLOCK_HEADER;
	size_t left = r->zin.size - r->zin.pos;
	return (ZSTD_inBuffer){r->in, r->zin.pos + (r->pending ? 0 : want < left ? want : left), r->zin.pos};
}

/* zstd found the part of a frame it was given damaged. Returns -1. */
static int zstd_damaged(struct reader *r, size_t err)
{
	const char *why = ZSTD_getErrorName(err);
	if (r->unit == ZSTDnit_checksum)
		return damaged(
		    r, r->unit_at,
		    "the checksum of the zstd frame at byte %llu does not match: a byte of the frame "
		    "is damaged, and records read from it may be wrong",
		    (unsigned long long)r->frame_at);
	if (r->unit == ZSTDnit_frameHeader || r->unit == ZSTDnit_skippableFrame)
		return damaged(r, r->unit_at, "a damaged zstd frame header: %s", why);
	return damaged(r, r->block_at, "a damaged zstd block: %s", why);
}

/* Moves the undecoded tail of buf to its front. */
static void compact(struct reader *r)
{
	if (!r->pos)
		return;
	memmove(r->buf, r->buf + r->pos, r->len - r->pos);
	r->base += r->pos;
	r->len -= r->pos;
	r->pos = 0;
}

static int take_ahead(struct reader *r);

/* Appends decompressed bytes to buf, moving the undecoded tail to the front first.
 * Returns 1 if bytes were added, 0 at the end of the file or at damage (r->damaged), -1 on error. */
static int fill(struct reader *r)
{
	if (r->ahead)
		return take_ahead(r);
	compact(r);
	if (r->len == r->cap) {
		uint8_t *b = realloc(r->buf, r->cap * 2);
		if (!b)
			return fail(r, "out of memory");
		r->buf = b;
		r->cap *= 2;
	}
	for (;;) {
		if (r->zin.pos == r->zin.size && !r->pending) {
			if (r->eof)
				return 0;
			if (read_more(r) < 0)
				return -1;
			continue;
		}
		ZSTD_outBuffer out = {r->buf, r->cap, r->len};
		ZSTD_inBuffer in = next_unit(r);
		size_t ret = ZSTD_decompressStream(r->z, &out, &in);
		if (ZSTD_isError(ret) && ZSTD_getErrorCode(ret) == ZSTD_error_memory_allocation)
			return fail(r, "out of memory");
		if (ZSTD_isError(ret)) {
			zstd_damaged(r, ret);
			return 0;
		}
		r->zin.pos = in.pos;
		r->hint = ret;
		/* A full output buffer may leave decompressed bytes inside zstd: ask again before reading. */
		r->pending = out.pos == out.size;
		r->mid_frame = ret != 0;
		int added = out.pos > r->len;
		r->len = out.pos;
		if (added) {
			r->out_block = r->block_at;
			return 1;
		}
	}
}

/* ---- the header ---- */

/* The file ends, or is damaged, before the end of its header: nothing can be read. -1. */
static int cut_in_header(struct reader *r)
{
	if (r->damaged)
		return fail(r, "corrupt trace near byte %llu of '%s', before the end of its header: %s",
		            (unsigned long long)r->damage_at, r->path, r->damage);
	return fail(r, "'%s' is cut before the end of its header (the process was killed at once?)", r->path);
}

static int read_header(struct reader *r)
{
	int rc = 0;
	while (r->len < CT_HEADER_SIZE && (rc = fill(r)) > 0)
		;
	if (rc < 0)
		return -1;
	size_t magic = r->len < CT_MAGIC_SIZE ? r->len : CT_MAGIC_SIZE;
	/* Nothing but zstd's first frame header failed: a foreign file, as one that is not zstd. */
	int foreign = !r->len && r->damaged && !r->unit_at && r->unit == ZSTDnit_frameHeader;
	if (memcmp(r->buf, CTRACK_MAGIC, magic) || (!r->len && !r->zstd_magic) || foreign)
		return fail(r, "'%s' is not a ctrack trace", r->path);
	if (r->len < CT_HEADER_SIZE)
		return cut_in_header(r);
	const uint8_t *h = r->buf;
	unsigned version = ct_get_u16(h + 8), min_version = ct_get_u16(h + 10), size = ct_get_u16(h + 12);
	if (min_version > CTRACK_FORMAT_VERSION)
		return fail(r,
		            "'%s' has trace format version %u (readable from version %u on); this "
		            "ctrack-analyze reads version %u: upgrade ctrack",
		            r->path, version, min_version, CTRACK_FORMAT_VERSION);
	if (version < CTRACK_FORMAT_MIN_VERSION)
		return fail(r,
		            "'%s' has trace format version %u; this ctrack-analyze reads versions %u to %u",
		            r->path, version, CTRACK_FORMAT_MIN_VERSION, CTRACK_FORMAT_VERSION);
	if (size < CT_HEADER_SIZE)
		return fail(r, "corrupt trace: the header of '%s' gives its size as %u bytes, below %u",
		            r->path, size, CT_HEADER_SIZE);
	r->version = version;
	if (h[14] != 8)
		return fail(r, "'%s' was recorded with %u-byte pointers; only 8 is supported", r->path,
		            h[14]);
	while (r->len < size && (rc = fill(r)) > 0)
		;
	if (rc < 0)
		return -1;
	if (r->len < size)
		return cut_in_header(r);
	r->pos = size;
	return 0;
}

/* ---- framed records ---- */

/* A NUL-terminated heap copy of a byte string. */
static struct ct_bytes cur_s(struct ct_cursor *c)
{
	uint64_t n = ct_cur_v(c);
	if (c->shorted || n > (uint64_t)(c->end - c->p)) {
		c->shorted = 1;
		c->p = c->end;
		return (struct ct_bytes){NULL, 0};
	}
	char *s = malloc(n + 1);
	if (!s) {
		c->nomem = 1;
		return (struct ct_bytes){NULL, 0};
	}
	memcpy(s, c->p, n);
	s[n] = 0;
	c->p += n;
	return (struct ct_bytes){s, n};
}

static void free_argv(struct ct_bytes *argv, size_t argc)
{
	for (size_t i = 0; i < argc; i++)
		free(argv[i].data);
	free(argv);
}

static int rec_process(struct reader *r, struct ct_cursor *c)
{
	uint64_t pid = ct_cur_v(c), ppid = ct_cur_v(c), start = ct_cur_v(c);
	struct ct_bytes exe = cur_s(c);
	uint64_t argc = ct_cur_v(c);
	/* Each argument takes at least one byte: a count beyond the payload is corruption. */
	if (c->shorted || argc > (uint64_t)(c->end - c->p)) {
		free(exe.data);
		c->shorted = 1;
		return 0;
	}
	struct ct_bytes *argv = calloc(argc ? argc : 1, sizeof(*argv));
	if (!argv)
		c->nomem = 1;
	for (uint64_t i = 0; argv && i < argc; i++)
		argv[i] = cur_s(c);
	if (c->shorted || c->nomem) {
		free(exe.data);
		free_argv(argv, argv ? argc : 0);
		return 0;
	}
	ct_model_process(r->m, pid, ppid, start, exe, argv, argc);
	r->stop = r->process_only;
	return 0;
}

static int rec_module(struct reader *r, struct ct_cursor *c)
{
	struct ct_module mod = {0};
	uint64_t id = ct_cur_v(c);
	mod.id = (uint32_t)id;
	if (r->m->proc.seen) /* whether its file changed since, without a build-id to tell (symbolize.c) */
		mod.loaded_unix_ns = r->m->proc.start_unix_ns + r->m->t.now_us * 1000;
	mod.base = ct_cur_v(c);
	struct ct_bytes path = cur_s(c), build_id = cur_s(c);
	mod.path = path.data;
	mod.build_id = (uint8_t *)build_id.data;
	mod.build_id_len = build_id.len;
	uint64_t nseg = ct_cur_v(c);
	if (!c->shorted && nseg <= (uint64_t)(c->end - c->p) / 4) /* a segment takes at least 4 bytes */
		mod.segs = calloc(nseg ? nseg : 1, sizeof(*mod.segs));
	else
		c->shorted = 1;
	for (uint64_t i = 0; mod.segs && i < nseg; i++) {
		mod.segs[i].vaddr = ct_cur_v(c);
		mod.segs[i].memsz = ct_cur_v(c);
		mod.segs[i].offset = ct_cur_v(c);
		mod.segs[i].prot = ct_cur_u8(c);
	}
	mod.nseg = nseg;
	if (!c->shorted && !mod.segs)
		c->nomem = 1;
	if (c->shorted || c->nomem || id >= UINT32_MAX) {
		free(mod.path);
		free(mod.build_id);
		free(mod.segs);
		c->shorted |= id >= UINT32_MAX;
		return 0;
	}
	return ct_model_module(r->m, &mod);
}

static int rec_end(struct reader *r, struct ct_cursor *c)
{
	ct_cur_v(c); /* allocations, frees, bytes_allocated: the model counts them itself */
	ct_cur_v(c);
	ct_cur_v(c);
	uint64_t unmatched = ct_cur_v(c), lost = ct_cur_v(c), end_us = ct_cur_v(c);
	if (!c->shorted)
		ct_model_end(r->m, unmatched, lost, end_us);
	return 0;
}

/* The text is used where it lies: a long one is not copied whole, only the part the model keeps. */
static int rec_note(struct reader *r, struct ct_cursor *c)
{
	unsigned level = ct_cur_u8(c);
	uint64_t n = ct_cur_v(c);
	if (c->shorted || n > (uint64_t)(c->end - c->p)) {
		c->shorted = 1;
		return 0;
	}
	int rc = ct_model_note(r->m, level, (const char *)c->p, (size_t)n);
	c->p += n;
	return rc;
}

/* CLASSES: | n v | n x (info v, 4 counts v) |. A count that exceeds what a payload can hold stops at
 * the shortened cursor, so a hostile n costs nothing. */
static int rec_classes(struct reader *r, struct ct_cursor *c)
{
	uint64_t n = ct_cur_v(c);
	ct_model_classes_begin(r->m);
	for (uint64_t i = 0; i < n && !c->shorted; i++) {
		uint64_t id = ct_cur_v(c), count[CT_CLASSES];
		for (int k = 0; k < CT_CLASSES; k++)
			count[k] = ct_cur_v(c);
		if (!c->shorted && ct_model_classes(r->m, id, count) < 0)
			return -EINVAL;
	}
	return 0;
}

/* SAMPLING: | rate v | seed v |, before any INFO record (format.h). */
static int rec_sampling(struct reader *r, const uint8_t *rec, struct ct_cursor *c)
{
	uint64_t rate = ct_cur_v(c), seed = ct_cur_v(c);
	if (c->shorted || ct_model_sampling(r->m, rate, seed) == 0)
		return 0;
	if (!rate || rate > CT_SAMPLING_RATE_MAX)
		return corrupt(r, rec, "SAMPLING record's rate %llu is not from 1 to %llu bytes",
		               (unsigned long long)rate, (unsigned long long)CT_SAMPLING_RATE_MAX);
	return corrupt(r, rec, "SAMPLING record comes after allocations, or says another rate");
}

/* ATTACH: | unix_ns v | ordinal v |, once, before any event. */
static int rec_attach(struct reader *r, const uint8_t *rec, struct ct_cursor *c)
{
	uint64_t unix_ns = ct_cur_v(c), ordinal = ct_cur_v(c);
	if (c->shorted) /* said by the caller */
		return 0;
	int rc = ct_model_attach(r->m, unix_ns, ordinal);
	if (rc == -ENOMEM)
		return fail(r, "out of memory");
	if (rc < 0)
		return corrupt(r, rec,
		               "ATTACH record comes twice, after allocations, or with attach number 0");
	return 0;
}

/* HOLDERS: | n v | n x (info v, holder v, count v) |, after a CLASSES record. */
static int rec_holders(struct reader *r, struct ct_cursor *c)
{
	uint64_t n = ct_cur_v(c);
	if (!r->m->classified)
		return -EINVAL;
	r->m->has_holders = 1;
	for (uint64_t i = 0; i < n && !c->shorted; i++) {
		uint64_t info = ct_cur_v(c), holder = ct_cur_v(c), count = ct_cur_v(c);
		int rc = c->shorted ? 0 : ct_model_holder(r->m, info, holder, count);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* AGGREGATE and AGG_SNAPSHOT (aggregated.c): an aggregated trace. A snapshot that does not check
 * changes nothing, and the reading stops there as at any damage. */
static int rec_aggregated(struct reader *r, const uint8_t *rec, unsigned tag, const uint8_t *p,
                          const uint8_t *end)
{
	char why[160];
	if (r->version < 8)
		return corrupt(r, rec, "%s record in a version %u file", ct_record_name(tag), r->version);
	if (tag == CT_REC_AGGREGATE) {
		struct ct_cursor c = {p, end, 0, 0};
		uint64_t us = ct_cur_v(&c);
		if (c.shorted || ct_model_aggregate(r->m, us) < 0)
			return corrupt(r, rec, "AGGREGATE record of %llu us, short, repeated or after events",
			               (unsigned long long)us);
		return 0;
	}
	int rc = ct_model_agg_snapshot(r->m, p, end, why, sizeof(why));
	if (rc == -ENOMEM)
		return fail(r, "out of memory");
	return rc < 0 ? corrupt(r, rec, "%s", why) : 0;
}

static long record(struct reader *r, const uint8_t *p, const uint8_t *end);
static int within_bounds(struct reader *r, const uint8_t *p);

/* Whether a record of tag may add to what within_bounds counts. An event (ALLOC, FREE, TEMP, TEMPFREE,
 * RECENT, TIME: nearly every record) adds no id, module or work, and the bytes read only grow: the
 * bounds hold after it if they held before, and are not asked again. */
static inline int may_grow(unsigned tag)
{
	return !ct_tag_is_short(tag) && (!ct_tag_is_core(tag) || tag == CT_REC_INFO || tag == CT_REC_FRAME);
}

#define JOIN_LENGTHS (-1) /* the columns' lengths do not add up to the payload's */
#define JOIN_CORRUPT (-2) /* the columns are corrupt at record n */

/* Joins the records of the BATCH payload [p, end) into j (emptied first), counting them in *n.
 * 0, JOIN_LENGTHS, JOIN_CORRUPT or -ENOMEM. On the reader's thread, or on the read-ahead's. */
static int join_batch(const uint8_t *p, const uint8_t *end, struct ct_rec_buf *j, unsigned long long *n)
{
	struct ct_columns c;
	*n = 0;
	if (ct_columns_open(p, end, &c) < 0)
		return JOIN_LENGTHS;
	j->len = 0;
	j->grow = ct_rec_grow_heap;
	j->dropped = 0;
	if (ct_columns_join(&c, j, n) < 0)
		return j->dropped ? -ENOMEM : JOIN_CORRUPT;
	return 0;
}

/* The BATCH at rec, payload [p, end), joined into r->joined: by the read-ahead's thread when it did
 * (its buffer and the reader's change hands), else here. join_batch's value. */
static int joined_batch(struct reader *r, const uint8_t *rec, const uint8_t *p, const uint8_t *end,
                        unsigned long long *n)
{
	struct ct_ra_join *ahead =
	    r->slot ? ct_ra_slot_join_at(r->slot, r->base + (uint64_t)(rec - r->buf)) : NULL;
	if (!ahead)
		return join_batch(p, end, &r->joined, n);
	struct ct_rec_buf mine = r->joined;
	r->joined = ahead->rows;
	ahead->rows = mine;
	*n = ahead->n;
	return ahead->rc;
}

static long record_len(const uint8_t *p, const uint8_t *end);

/* A cursor PREFETCH records ahead of the decoding in a BATCH's records, asking the cache for the alloc
 * info of each event it passes and, PREFETCH / 2 records later, for that info's timeline entry (model.h):
 * on a trace of many stacks, those reads were most of the reading's time, waiting. With fewer than
 * PREFETCH_INFOS infos (1 MiB of them: a core's cache) they hit the cache anyway, and in a file below
 * PREFETCH_FILE the events are too few for the misses to add up to the cursor's parsing (a tenth more
 * instructions): docs/benchmarks.md, "Reading on two cores". */
#define PREFETCH 16
#define PREFETCH_INFOS 8192
#define PREFETCH_FILE (2u << 20)
struct prefetcher {
	const uint8_t *p, *end;
	uint64_t info[PREFETCH]; /* of the records passed, by their count modulo PREFETCH */
	unsigned n;
};

static void prefetch_start(struct prefetcher *f, const uint8_t *p, const uint8_t *end)
{
	f->p = p;
	f->end = end;
	f->n = 0;
	memset(f->info, 0xff, sizeof(f->info));
}

/* Moves f one record on. */
static void prefetch_step(const struct ct_model *m, struct prefetcher *f)
{
	uint64_t info = UINT64_MAX;
	unsigned tag = 0;
	long n = f->p == f->end           ? 0
	         : ct_tag_is_short(*f->p) ? ct_get_short_event(f->p, f->end, &tag, &info)
	                                  : record_len(f->p, f->end);
	if (n <= 0 || tag == CT_REC_RECENT) /* a RECENT's is an age */
		info = UINT64_MAX;
	ct_model_prefetch_info(m, info);
	f->p = n > 0 ? f->p + n : f->end;
	ct_model_prefetch_entry(m, f->info[(f->n + PREFETCH / 2) % PREFETCH]);
	f->info[f->n++ % PREFETCH] = info;
}

/* A BATCH record at rec, payload [p, end): its records joined back from the columns, then decoded
 * like any others. Returns 0, or -1 after setting the error. */
static int batch(struct reader *r, const uint8_t *rec, const uint8_t *p, const uint8_t *end)
{
	if (r->version < 4)
		return corrupt(r, rec, "BATCH record in a version %u file", r->version);
	unsigned long long n;
	int rc = joined_batch(r, rec, p, end, &n);
	if (rc == JOIN_LENGTHS)
		return corrupt(r, rec, "BATCH column lengths do not add up to its length");
	if (rc == -ENOMEM)
		return fail(r, "out of memory");
	if (rc < 0)
		return corrupt(r, rec, "BATCH columns are corrupt at its record %llu", n);
	struct ct_rec_buf *j = &r->joined;
	if (!j->len) /* an empty BATCH: nothing joined, and maybe no buffer yet */
		return 0;
	r->batch = rec;
	const uint8_t *q = j->data, *qend = j->data + j->len;
	struct prefetcher f;
	int ahead = r->m->ninfos >= PREFETCH_INFOS && r->file_size >= PREFETCH_FILE;
	prefetch_start(&f, q, ahead ? qend : q);
	for (int i = 0; i < PREFETCH && ahead; i++)
		prefetch_step(r->m, &f);
	while (q < qend && !r->stop) {
		if (ahead)
			prefetch_step(r->m, &f);
		long m = record(r, q, qend);
		if (m < 0 || (may_grow(*q) && within_bounds(r, q) < 0))
			return -1;
		if (!m)
			return corrupt(r, q, "record cut short at the end of its BATCH");
		r->last_tag = *q;
		q += m;
	}
	r->batch = NULL;
	return 0;
}

/* The next n bytes of an EPOCH's run at *q (up to end) as records of lane's; *q moves past them.
 * Returns 0, or -1 after setting the error. */
static int epoch_bytes(struct reader *r, unsigned lane, const uint8_t **q, const uint8_t *end, uint64_t n)
{
	if (n > (uint64_t)(end - *q))
		return corrupt(r, *q, "EPOCH mark names more of lane %u's records than it holds", lane);
	const uint8_t *lim = *q + n;
	r->cur = &r->win[lane];
	while (*q < lim && !r->stop) {
		if (**q == CT_REC_BATCH || **q == CT_REC_EPOCH || **q == CT_REC_ZEPOCH)
			return corrupt(r, *q, "%s record inside an EPOCH", ct_record_name(**q));
		long m = record(r, *q, lim);
		if (m < 0 || (may_grow(**q) && within_bounds(r, *q) < 0))
			return -1;
		if (!m)
			return corrupt(r, *q, "record cut short at the end of its EPOCH mark");
		r->last_tag = **q;
		*q += m;
	}
	r->cur = &r->win[0];
	return 0;
}

/* One lane of an EPOCH as it is read: its run, its marks and the next mark's key and bytes. */
struct lane_read {
	const uint8_t *run, *run_end, *mark, *mark_end;
	uint64_t key, bytes;
	int more; /* a mark is pending (key, bytes) */
	int z;    /* the marks are a ZEPOCH part's (ct_get_zmark), not an EPOCH's pairs */
};

/* Takes l's next mark, if any; -1 when it is cut short. */
static int next_mark(struct lane_read *l)
{
	uint64_t delta;
	l->more = 0;
	if (l->mark == l->mark_end)
		return 0;
	int k = (l->z ? ct_get_zmark : ct_get_epoch_mark)(l->mark, l->mark_end, &delta, &l->bytes);
	if (k <= 0)
		return -1;
	l->mark += k;
	l->key += delta;
	l->more = 1;
	return 0;
}

/* The lanes' records of an EPOCH or ZEPOCH record at rec, mark by mark in key order (ties: the
 * lower lane), then what follows each run's last mark. Returns 0, or -1 after setting the error. */
static int merge_lanes(struct reader *r, const uint8_t *rec, struct lane_read *l, unsigned lanes)
{
	const char *name = ct_record_name(*rec);
	for (unsigned i = 0; i < lanes; i++)
		if (next_mark(&l[i]) < 0)
			return corrupt(r, rec, "%s marks of lane %u cut short", name, i);
	for (;;) {
		int best = -1;
		for (unsigned i = 0; i < lanes; i++)
			if (l[i].more && (best < 0 || l[i].key < l[best].key))
				best = (int)i;
		if (best < 0 || r->stop)
			break;
		struct lane_read *b = &l[best];
		if (epoch_bytes(r, (unsigned)best, &b->run, b->run_end, b->bytes) < 0)
			return -1;
		if (next_mark(b) < 0)
			return corrupt(r, rec, "%s marks of lane %d cut short", name, best);
	}
	for (unsigned i = 0; i < lanes && !r->stop; i++) /* after each run's last mark */
		if (epoch_bytes(r, i, &l[i].run, l[i].run_end, (uint64_t)(l[i].run_end - l[i].run)) < 0)
			return -1;
	return 0;
}

/* The lanes and the fields after them at the start of an EPOCH or ZEPOCH payload [*p, end): n fields
 * per lane, each at most what is left, into f. Returns the lanes, or -1 after setting the error. */
static int lane_fields(struct reader *r, const uint8_t *rec, const uint8_t **p, const uint8_t *end,
                       unsigned n, uint64_t *f)
{
	const char *name = ct_record_name(*rec);
	uint64_t lanes;
	int k = ct_get_varint(*p, end, &lanes);
	if (k <= 0 || lanes < 1 || lanes > CT_EPOCH_LANES_MAX)
		return corrupt(r, rec, "%s of a number of lanes that is not 1 to %d", name,
		               CT_EPOCH_LANES_MAX);
	*p += k;
	for (unsigned i = 0; i < n * lanes; i++, *p += k)
		if ((k = ct_get_varint(*p, end, &f[i])) <= 0 || f[i] >> (n == 1) > (uint64_t)(end - *p))
			return corrupt(r, rec, "%s record is shorter than its fields", name);
	return (int)lanes;
}

/* An EPOCH record at rec, payload [p, end). Returns 0, or -1 after setting the error. */
static int epoch(struct reader *r, const uint8_t *rec, const uint8_t *p, const uint8_t *end)
{
	if (r->version < 6)
		return corrupt(r, rec, "EPOCH record in a version %u file", r->version);
	uint64_t lens[2 * CT_EPOCH_LANES_MAX], total = 0;
	int lanes = lane_fields(r, rec, &p, end, 2, lens);
	if (lanes < 0)
		return -1;
	for (int i = 0; i < 2 * lanes; i++)
		total += lens[i];
	if (total != (uint64_t)(end - p))
		return corrupt(r, rec, "EPOCH lengths do not add up to its length");
	struct lane_read l[CT_EPOCH_LANES_MAX];
	for (int i = 0; i < 2 * lanes; p += lens[i], i++) {
		if (i < lanes)
			l[i] = (struct lane_read){.run = p, .run_end = p + lens[i]};
		else
			l[i - lanes].mark = p, l[i - lanes].mark_end = p + lens[i];
	}
	return merge_lanes(r, rec, l, (unsigned)lanes);
}

/* A ZEPOCH record at rec, payload [p, end): each lane's part decoded by its own stream, then merged
 * as an EPOCH's. Returns 0, or -1 after setting the error. */
static int zepoch(struct reader *r, const uint8_t *rec, const uint8_t *p, const uint8_t *end)
{
	if (r->version < 7)
		return corrupt(r, rec, "ZEPOCH record in a version %u file", r->version);
	uint64_t f[CT_EPOCH_LANES_MAX], total = 0;
	int lanes = lane_fields(r, rec, &p, end, 1, f);
	if (lanes < 0)
		return -1;
	for (int i = 0; i < lanes; i++)
		total += f[i] >> 1;
	if (total != (uint64_t)(end - p))
		return corrupt(r, rec, "ZEPOCH lengths do not add up to its length");
	struct lane_read l[CT_EPOCH_LANES_MAX];
	for (int i = 0; i < lanes; p += f[i] >> 1, i++) {
		struct ct_zpart part;
		char why[120];
		int rc = ct_zlanes_part(&r->zl, (unsigned)i, p, f[i] >> 1, (int)(f[i] & 1), &part, why,
		                        sizeof(why));
		if (rc == -ENOMEM)
			return fail(r, "out of memory");
		if (rc < 0)
			return corrupt(r, rec, "ZEPOCH lane %d's part is corrupt: %s", i, why);
		l[i] = (struct lane_read){
		    part.run, part.run + part.run_len, part.marks, part.marks + part.marks_len, 0, 0, 0, 1};
	}
	r->zepoch = rec;
	int rc = merge_lanes(r, rec, l, (unsigned)lanes);
	r->zepoch = NULL;
	return rc;
}

/* Applies one framed record's payload. Returns 0, or -1 after setting the error. */
static int framed(struct reader *r, const uint8_t *rec, unsigned tag, const uint8_t *p, const uint8_t *end)
{
	struct ct_cursor c = {p, end, 0, 0};
	int rc = 0;
	switch (tag) {
	case CT_REC_PROCESS:
		rc = rec_process(r, &c);
		break;
	case CT_REC_MODULE:
		rc = rec_module(r, &c);
		break;
	case CT_REC_UNMODULE: {
		uint64_t id = ct_cur_v(&c);
		if (!c.shorted && ct_model_unmodule(r->m, id) < 0)
			return corrupt(r, rec, "UNMODULE of undefined module %llu", (unsigned long long)id);
		break;
	}
	case CT_REC_END:
		rc = rec_end(r, &c);
		break;
	case CT_REC_EXEC: {
		struct ct_bytes path = cur_s(&c);
		free(r->m->exec_path.data);
		r->m->exec_path = path;
		break;
	}
	case CT_REC_SAMPLE: {
		uint64_t rss = ct_cur_v(&c);
		if (!c.shorted)
			ct_model_sample(r->m, rss);
		break;
	}
	case CT_REC_NOTE:
		rc = rec_note(r, &c);
		break;
	case CT_REC_CLASSES:
		rc = rec_classes(r, &c);
		break;
	case CT_REC_SUPPRESSIONS: {
		struct ct_bytes text = cur_s(&c);
		free(r->m->suppressions.data);
		r->m->suppressions = text;
		break;
	}
	case CT_REC_MARK: {
		struct ct_bytes name = cur_s(&c);
		if (!c.shorted && !c.nomem)
			rc = ct_model_mark(r->m, name);
		break;
	}
	case CT_REC_EXACT:
		rc = ct_model_exact(r->m);
		break;
	case CT_REC_INVALID: {
		unsigned kind = ct_cur_u8(&c), call = ct_cur_u8(&c);
		uint64_t stack = ct_cur_v(&c), freed = ct_cur_v(&c), block = ct_cur_v(&c);
		rc = c.shorted ? 0 : ct_model_invalid(r->m, kind, call, stack, freed, block);
		break;
	}
	case CT_REC_CRASH: {
		uint64_t sig = ct_cur_v(&c), stack = ct_cur_v(&c);
		rc = c.shorted ? 0 : ct_model_crash(r->m, sig, stack);
		break;
	}
	case CT_REC_HOLDERS:
		rc = rec_holders(r, &c);
		break;
	case CT_REC_SAMPLING:
		if (rec_sampling(r, rec, &c) < 0)
			return -1;
		break;
	case CT_REC_ATTACH:
		if (rec_attach(r, rec, &c) < 0)
			return -1;
		break;
	case CT_REC_THREAD:
		break;
	case CT_REC_BATCH:
		return batch(r, rec, p, end);
	case CT_REC_EPOCH:
		return epoch(r, rec, p, end);
	case CT_REC_ZEPOCH:
		return zepoch(r, rec, p, end);
	case CT_REC_AGGREGATE:
	case CT_REC_AGG_SNAPSHOT:
		return rec_aggregated(r, rec, tag, p, end);
	default:
		if (!ct_tag_is_optional(tag))
			return corrupt(
			    r, rec, "unknown required record tag 0x%02x (written by a newer ctrack?)", tag);
		break;
	}
	if (c.nomem || rc == -ENOMEM)
		return fail(r, "out of memory");
	if (c.shorted)
		return corrupt(r, rec, "%s record is shorter than its fields", ct_record_name(tag));
	if (rc < 0)
		return corrupt(r, rec, "%s record refers to an undefined or reused id", ct_record_name(tag));
	return 0;
}

/* ---- the record loop ---- */

/* Decodes one record at p. Returns the bytes consumed, 0 if the record continues past end, or -1
 * after setting the error. */
static long record(struct reader *r, const uint8_t *p, const uint8_t *end)
{
	unsigned tag = *p;
	uint64_t a, b;
	int k, l;
	if (ct_tag_is_short(tag)) {
		k = ct_get_short_event(p, end, &tag, &a);
		if (k <= 0)
			return k ? corrupt(r, p, "invalid short event 0x%02x", *p) : 0;
		k--; /* as for a core record: the bytes after the tag */
	} else if (ct_tag_is_core(tag)) {
		k = ct_get_varint(p + 1, end, &a);
		if (k <= 0)
			return k ? corrupt(r, p, "varint longer than 64 bits in %s", ct_record_name(tag)) : 0;
	}
	if (ct_tag_is_core(tag)) {
		int rc = 0;
		switch (tag) {
		case CT_REC_ALLOC:
			rc = ct_model_alloc(r->m, a);
			r->cur->recent[r->cur->allocs++ % CT_RECENT_WINDOW] = a;
			break;
		case CT_REC_RECENT:
			if (r->version < 2)
				return corrupt(r, p, "RECENT record in a version %u file", r->version);
			if (a < 1 || a > CT_RECENT_WINDOW || a > r->cur->allocs)
				return corrupt(r, p, "RECENT of age %llu, after %llu ALLOC records",
				               (unsigned long long)a, (unsigned long long)r->cur->allocs);
			a = r->cur->recent[(r->cur->allocs - a) % CT_RECENT_WINDOW];
			tag = CT_REC_FREE;
			/* fall through */
		case CT_REC_FREE:
		case CT_REC_TEMPFREE:
			rc = tag == CT_REC_FREE ? ct_model_free(r->m, a) : ct_model_free_temp(r->m, a);
			if (rc < 0 && a < r->m->ninfos)
				return corrupt(r, p, "%s of alloc info %llu, which has no live allocation",
				               ct_record_name(tag), (unsigned long long)a);
			break;
		case CT_REC_TEMP:
			rc = ct_model_temp(r->m, a);
			break;
		case CT_REC_TIME:
			ct_model_time(r->m, a);
			break;
		case CT_REC_INFO:
		case CT_REC_FRAME:
			l = ct_get_varint(p + 1 + k, end, &b);
			if (l <= 0)
				return l ? corrupt(r, p, "varint longer than 64 bits in %s",
				                   ct_record_name(tag))
				         : 0;
			if (tag == CT_REC_INFO)
				rc = ct_model_info(r->m, a, b);
			else
				rc = ct_model_frame(r->m, a, ct_unzigzag(b));
			if (rc == -EINVAL)
				return corrupt(r, p, "%s refers to undefined stack node %llu",
				               ct_record_name(tag),
				               (unsigned long long)(tag == CT_REC_INFO ? b : a));
			k += l;
			break;
		default:
			return corrupt(r, p, "unknown core record tag 0x%02x", tag);
		}
		if (rc == -ENOMEM)
			return fail(r, "out of memory");
		if (rc < 0)
			return corrupt(r, p, "%s refers to undefined alloc info %llu", ct_record_name(tag),
			               (unsigned long long)a);
		return 1 + k;
	}
	if (!ct_tag_is_framed(tag))
		return corrupt(r, p, "invalid record tag 0x%02x", tag);
	k = ct_get_varint(p + 1, end, &a);
	if (k <= 0)
		return k ? corrupt(r, p, "varint longer than 64 bits in a record length") : 0;
	if (a > MAX_FRAMED)
		return corrupt(r, p, "%s record claims %llu bytes",
		               ct_record_name(tag) ? ct_record_name(tag) : "a", (unsigned long long)a);
	if ((uint64_t)(end - p) < 1 + k + a)
		return 0;
	const uint8_t *payload = p + 1 + k;
	if (framed(r, p, tag, payload, payload + a) < 0)
		return -1;
	return (long)(1 + k + a);
}

/* 0 while the model is within what the compressed bytes read so far can ask for, else -1 after
 * setting the error (p: the record that went past). */
static int within_bounds(struct reader *r, const uint8_t *p)
{
	const struct ct_model *m = r->m;
	uint64_t in = bytes_read(r), ids = m->ninfos + m->nnodes;
	if (ids > IDS_FLOOR + IDS_PER_BYTE * in)
		return corrupt(r, p,
		               "%llu stack nodes and alloc infos from %llu compressed bytes, more than a "
		               "trace can hold (%u per byte)",
		               (unsigned long long)ids, (unsigned long long)in, IDS_PER_BYTE);
	if (m->nmodules > MODULES_FLOOR + in / BYTES_PER_MODULE)
		return corrupt(r, p, "%zu modules from %llu compressed bytes, more than a trace can hold",
		               m->nmodules, (unsigned long long)in);
	if (m->work > WORK_FLOOR + WORK_PER_BYTE * in)
		return corrupt(r, p,
		               "its module lookups and leak classes ask for more work than %llu compressed "
		               "bytes of a trace can",
		               (unsigned long long)in);
	return 0;
}

/* Decodes everything in buf; returns 0 or -1. Stops at a record that continues past the data. */
static int decode(struct reader *r)
{
	const uint8_t *p = r->buf + r->pos, *end = r->buf + r->len;
	while (p < end && !r->stop) {
		long n = record(r, p, end);
		if (n < 0 || (may_grow(*p) && within_bounds(r, p) < 0))
			return -1;
		if (!n)
			break;
		if (*p != CT_REC_BATCH) /* a BATCH set it to its last record's */
			r->last_tag = *p;
		p += n;
	}
	r->pos = (size_t)(p - r->buf);
	return 0;
}

/* ---- reading ahead ----
 * After the header, a thread may take over the decompression (readahead.h): it runs fill() on a reader
 * of its own, src, whose state the reader's was until then, and hands each call's new bytes over with
 * what fill() left behind (bytes read, the block, whether inside a frame; at the end the damage or
 * the error): the reader then decodes exactly the bytes it would have, at the same points, and its
 * bounds and messages say what they would have said. The thread also frames the records and joins
 * each BATCH's columns; the reader takes those joins by their offset, and joins itself any other. */

/* The length of the record at p as record() would take it, without decoding it: 0 when it continues
 * past end, -1 when it is no record. */
static long record_len(const uint8_t *p, const uint8_t *end)
{
	unsigned tag = *p;
	uint64_t v;
	int k;
	if (ct_tag_is_short(tag))
		return ct_get_short_event(p, end, &tag, &v);
	if (ct_tag_is_core(tag)) {
		const uint8_t *q = p + 1;
		int fields = ct_core_fields(tag);
		for (int f = 0; f < fields; f++, q += k)
			if ((k = ct_get_varint(q, end, &v)) <= 0)
				return k;
		return fields ? q - p : -1;
	}
	if (!ct_tag_is_framed(tag))
		return -1;
	if ((k = ct_get_varint(p + 1, end, &v)) <= 0)
		return k;
	if (v > MAX_FRAMED)
		return -1;
	return (uint64_t)(end - p) < 1 + k + v ? 0 : (long)(1 + k + v);
}

/* The read-ahead's: the BATCH record [rec, end) of src's window joined into a new join of slot (none
 * when out of memory: the reader then joins it itself). */
static void join_ahead(const struct reader *s, struct ct_ra_slot *slot, const uint8_t *rec,
                       const uint8_t *end)
{
	uint64_t len;
	int k = ct_get_varint(rec + 1, end, &len); /* framed already: it is whole */
	struct ct_ra_join *j = ct_ra_slot_add_join(slot, s->base + (uint64_t)(rec - s->buf));
	if (j)
		j->rc = join_batch(rec + 1 + k, end, &j->rows, &j->n);
}

/* The read-ahead's: frames the whole records in src's window, joining each BATCH into slot. */
static void frame_ahead(struct reader *s, struct ct_ra_slot *slot)
{
	const uint8_t *p = s->buf + s->pos, *end = s->buf + s->len;
	long n = 0;
	while (s->framing && p < end && (n = record_len(p, end)) > 0) {
		if (*p == CT_REC_BATCH)
			join_ahead(s, slot, p, p + n);
		p += n;
	}
	s->framing = s->framing && n >= 0;
	s->pos = s->framing ? (size_t)(p - s->buf) : s->len; /* bytes it cannot frame are only passed on */
}

/* The read-ahead thread's producer (readahead.h): src's next fill into slot. */
static int produce_ahead(void *arg, struct ct_ra_slot *slot)
{
	struct reader *s = arg;
	uint64_t before = s->base + s->len; /* the stream offset of the first new byte */
	int rc = fill(s);
	slot->rc = rc;
	slot->bytes_read = bytes_read(s);
	slot->out_block = s->out_block;
	slot->mid_frame = s->mid_frame;
	if (rc <= 0)
		return rc;
	size_t n = (size_t)(s->base + s->len - before);
	if (!ct_rec_room(&slot->bytes, n))
		return slot->rc = fail(s, "out of memory");
	memcpy(slot->bytes.data, s->buf + (before - s->base), n);
	slot->bytes.len = n;
	frame_ahead(s, slot);
	return rc;
}

/* fill() while a thread reads ahead: the next slot's bytes and the state they leave. */
static int take_ahead(struct reader *r)
{
	const struct reader *s = r->src;
	if (r->slot && r->slot->rc <= 0) /* the end, already taken */
		return r->slot->rc;
	compact(r);
	struct ct_ra_slot *slot = r->slot = ct_readahead_next(r->ahead);
	uint64_t was = bytes_read(r);
	r->file_off = slot->bytes_read;
	r->out_block = slot->out_block;
	r->mid_frame = slot->mid_frame;
	if (r->progress && bytes_read(r) != was)
		r->progress(bytes_read(r), r->file_size, r->progress_arg);
	if (slot->rc < 0)
		return fail(r, "%s", s->err);
	if (!slot->rc) {
		if (s->damaged)
			damaged(r, s->damage_at, "%s", s->damage);
		return 0;
	}
	size_t cap = r->cap;
	while (cap - r->len < slot->bytes.len)
		cap *= 2;
	uint8_t *b = cap == r->cap ? r->buf : realloc(r->buf, cap);
	if (!b)
		return fail(r, "out of memory");
	r->buf = b;
	r->cap = cap;
	memcpy(r->buf + r->len, slot->bytes.data, slot->bytes.len);
	r->len += slot->bytes.len;
	return 1;
}

/* Whether to read ahead: CTRACK_READ_AHEAD=0 never, =1 always (after the header, for a regular file
 * read to its end), else from READ_AHEAD_MIN compressed bytes on. */
static int wants_ahead(const struct reader *r)
{
	const char *env = getenv("CTRACK_READ_AHEAD");
	if (r->follow || r->fifo || r->process_only || r->damaged || (env && !strcmp(env, "0")))
		return 0;
	return (env && !strcmp(env, "1")) || r->file_size >= READ_AHEAD_MIN;
}

/* Hands the decompression over to a read-ahead thread, if it pays. Nothing changes when it cannot start. */
static void start_ahead(struct reader *r)
{
	if (!wants_ahead(r))
		return;
	struct reader *s = malloc(sizeof(*s));
	char *err = malloc(r->errlen);
	uint8_t *buf = malloc(r->cap);
	if (!s || !err || !buf)
		goto fail;
	*s = *r;
	s->err = err;
	s->buf = buf;
	s->len = r->len - r->pos; /* the records not decoded yet, to frame from */
	memcpy(s->buf, r->buf + r->pos, s->len);
	s->pos = 0;
	s->base = r->base + r->pos;
	s->m = NULL;
	s->progress = NULL;
	s->joined = (struct ct_rec_buf){0};
	s->zl = (struct ct_zlanes){0};
	s->framing = 1;
	r->file_off = bytes_read(r); /* what the records still in buf were read with, then the slots' */
	r->zin = (ZSTD_inBuffer){0};
	r->src = s;
	r->ahead = ct_readahead_start(produce_ahead, s);
	if (r->ahead)
		return;
	r->src = NULL;
fail:
	free(buf);
	free(err);
	free(s);
}

/* Stops the read-ahead thread and takes the decompression back, to be freed. */
static void stop_ahead(struct reader *r)
{
	if (!r->ahead)
		return;
	ct_readahead_stop(r->ahead);
	r->ahead = NULL;
	r->slot = NULL;
	free(r->src->buf);
	free(r->src->err);
	free(r->src);
	r->src = NULL;
}

/* Decodes the records up to the end of the file, the PROCESS record (process_only) or damage.
 * 0, or -1 after an error. */
static int read_records(struct reader *r)
{
	int rc = 1;
	while (rc > 0 && !r->stop && !r->damaged) {
		if (decode(r) < 0 && !r->damaged)
			return -1;
		if (!r->stop && !r->damaged)
			rc = fill(r);
	}
	return rc < 0 ? -1 : 0;
}

static int read_all(struct reader *r)
{
	if (read_header(r) < 0)
		return -1;
	start_ahead(r);
	if (read_records(r) < 0)
		return -1;
	if (r->stop)
		return 0;
	if (r->process_only && r->damaged)
		return fail(r, "corrupt trace near byte %llu of '%s', before its PROCESS record: %s",
		            (unsigned long long)r->damage_at, r->path, r->damage);
	if (r->process_only)
		return fail(r, "'%s' has no PROCESS record", r->path);
	struct ct_model *m = r->m;
	if (r->damaged) {
		m->damaged = 1;
		m->damaged_at = r->damage_at;
		snprintf(m->damage, sizeof(m->damage), "%s", r->damage);
	}
	int ended = r->last_tag == CT_REC_END || r->last_tag == CT_REC_EXEC;
	m->complete = ended && !r->mid_frame && r->pos == r->len && !r->damaged;
	m->exec_last = m->complete && r->last_tag == CT_REC_EXEC;
	return 0;
}

/* The decompression of r->fd, open. 0 or -1. */
static int open_stream(struct reader *r)
{
	r->z = ZSTD_createDStream();
	r->in_cap = ZSTD_DStreamInSize();
	r->in = malloc(r->in_cap);
	/* A small file starts with a small window (it grows for a long record): a megabyte per read
	 * of a tiny trace is what slowed the fuzzer most. */
	r->cap = r->file_size && r->file_size < SMALL_WINDOW ? SMALL_WINDOW : WINDOW;
	r->buf = malloc(r->cap);
	if (!r->z || !r->in || !r->buf)
		return fail(r, "out of memory");
	r->first_hint = ZSTD_initDStream(r->z);
	r->unit = -1;
	r->cur = &r->win[0];
	/* A frame may ask for a window of up to 2 GiB; the shim's is 4 MiB (windowLog 22). */
	ZSTD_DCtx_setParameter(r->z, ZSTD_d_windowLogMax, WINDOW_LOG_MAX);
	return 0;
}

/* A FIFO (a named pipe, a shell's <(...), /dev/stdin from a pipe) is read as a stream. Its open
 * would wait for a writer that may never come: opened without blocking, then made blocking again
 * for reads that wait_fifo bounds. 0 with r->fd open, or -1 after the error. */
static int open_fifo(struct reader *r)
{
	struct stat st;
	r->fd = open(r->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (r->fd < 0)
		return fail(r, "cannot open '%s': %s", r->path, strerror(errno));
	if (fstat(r->fd, &st) < 0 || !S_ISFIFO(st.st_mode))
		return fail(r, "cannot read '%s': it changed while it was opened", r->path);
	if (fcntl(r->fd, F_SETFL, fcntl(r->fd, F_GETFL) & ~O_NONBLOCK) < 0)
		return fail(r, "cannot read '%s': %s", r->path, strerror(errno));
	r->fifo = 1;
	return 0;
}

/* r->fd, open on a regular file (checked here too, for a descriptor the caller opened). */
static int open_regular(struct reader *r)
{
	struct stat st;
	if (fstat(r->fd, &st) < 0)
		return fail(r, "cannot read '%s': %s", r->path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return fail(r, "cannot read '%s': it is %s, not a trace file", r->path,
		            ct_file_kind(st.st_mode));
	if (st.st_size == 0 && !r->follow) /* followed: its writer has not started yet */
		return fail(r, "'%s' is empty (the traced process wrote nothing)", r->path);
	r->file_size = (uint64_t)st.st_size;
	return open_stream(r);
}

static int open_trace(struct reader *r)
{
	const char *kind = NULL;
	r->own_fd = 1; /* whatever it opens */
	r->fd = ct_regfile_open(r->path, &kind);
	if (r->fd == -EINVAL && !strcmp(kind, "a FIFO"))
		return open_fifo(r) < 0 ? -1 : open_stream(r);
	if (r->fd == -EINVAL)
		return fail(r, "cannot read '%s': it is %s, not a trace file", r->path, kind);
	if (r->fd == -EISDIR)
		return fail(r, "cannot read '%s': %s", r->path, strerror(EISDIR));
	if (r->fd < 0)
		return fail(r, "cannot open '%s': %s", r->path, strerror(-r->fd));
	return open_regular(r);
}

int ct_read_trace(const char *path, struct ct_model *m, char *err, size_t errlen)
{
	return ct_read_trace_progress(path, m, err, errlen, NULL, NULL);
}

/* Reads r's trace: opened by path when r->fd is -1, else from r->fd, which stays the caller's. */
static int read_trace(struct reader *r)
{
	int rc = r->fd < 0 ? open_trace(r) : open_regular(r);
	if (!rc)
		rc = read_all(r);
	stop_ahead(r);
	if (r->own_fd && r->fd >= 0)
		close(r->fd);
	ZSTD_freeDStream(r->z);
	free(r->in);
	free(r->buf);
	free(r->joined.data);
	ct_zlanes_free(&r->zl);
	return rc;
}

int ct_read_trace_progress(const char *path, struct ct_model *m, char *err, size_t errlen,
                           ct_progress_fn progress, void *arg)
{
	struct reader r = {.path = path,
	                   .fd = -1,
	                   .m = m,
	                   .err = err,
	                   .errlen = errlen,
	                   .progress = progress,
	                   .progress_arg = arg};
	return read_trace(&r);
}

int ct_read_trace_follow(const char *path, struct ct_model *m, char *err, size_t errlen,
                         const struct ct_follow_hooks *follow)
{
	struct reader r = {.path = path, .fd = -1, .m = m, .err = err, .errlen = errlen, .follow = follow};
	return read_trace(&r);
}

int ct_read_trace_fd(int fd, const char *name, struct ct_model *m, char *err, size_t errlen)
{
	if (fd < 0) {
		snprintf(err, errlen, "cannot read '%s': %s", name, strerror(EBADF));
		return -1;
	}
	struct reader r = {.path = name, .fd = fd, .m = m, .err = err, .errlen = errlen};
	return read_trace(&r);
}

int ct_read_process_fd(int fd, const char *name, struct ct_model *m, char *err, size_t errlen)
{
	if (fd < 0) {
		snprintf(err, errlen, "cannot read '%s': %s", name, strerror(EBADF));
		return -1;
	}
	struct reader r = {.path = name, .fd = fd, .process_only = 1, .m = m, .err = err, .errlen = errlen};
	return read_trace(&r);
}
