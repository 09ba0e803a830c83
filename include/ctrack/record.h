/* SPDX-License-Identifier: MIT */
/* The one encoder of format.h's records: the shim's writer, its module records and the tests'
 * trace generator all write through these functions, so the bytes of a record are spelled once.
 *
 * Records go into a growable buffer whose owner says how it grows (the shim maps memory and never
 * calls malloc; the tools use realloc). Every function reserves the record's largest size first,
 * so a buffer that cannot grow drops whole records, never half of one, and remembers it in
 * `dropped`. Header-only and static inline: the writer encodes an event in a few instructions.
 * Nothing here allocates, locks or uses stdio. */
#ifndef CTRACK_RECORD_H
#define CTRACK_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ctrack/format.h"

struct ct_rec_buf;
/* Makes room for at least `need` more bytes after b->len (b->data and b->cap may change):
 * returns 0, or -1 with the buffer unchanged. */
typedef int (*ct_rec_grow_fn)(struct ct_rec_buf *b, size_t need);

struct ct_rec_buf {
	uint8_t *data;
	size_t len, cap;
	ct_rec_grow_fn grow;
	uint64_t last_ip; /* ip of the last FRAME record: FRAME carries a delta */
	uint64_t dropped; /* records that did not fit and were not written */
};

/* Room for n more bytes: 1, or 0 (the record is dropped and counted). */
static inline int ct_rec_room(struct ct_rec_buf *b, size_t n)
{
	if (__builtin_expect(b->len + n <= b->cap, 1))
		return 1;
	if (b->grow && b->grow(b, n) == 0 && b->len + n <= b->cap)
		return 1;
	b->dropped++;
	return 0;
}

/* Unchecked appenders: the caller has reserved the room. */
static inline void ct_rec_u8(struct ct_rec_buf *b, uint8_t v)
{
	b->data[b->len++] = v;
}
static inline void ct_rec_v(struct ct_rec_buf *b, uint64_t v)
{
	b->len += ct_put_varint(b->data + b->len, v);
}
static inline void ct_rec_raw(struct ct_rec_buf *b, const void *p, size_t n)
{
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
}
static inline void ct_rec_s(struct ct_rec_buf *b, const void *p, size_t n)
{
	ct_rec_v(b, n);
	ct_rec_raw(b, p, n);
}

/* Largest encoding of a string of n bytes. */
#define CT_REC_S_MAX(n) (CT_VARINT_MAX + (size_t)(n))

/* A framed record (tag 0x10..0x7f): ct_rec_open reserves `payload_max` bytes of payload after the
 * tag and the largest length field; ct_rec_close writes the length and moves the payload up to
 * it. Returns the position to pass on, or 0 when the record was dropped (nothing is written). */
static inline size_t ct_rec_open(struct ct_rec_buf *b, unsigned tag, size_t payload_max)
{
	if (!ct_rec_room(b, 1 + CT_VARINT_MAX + payload_max))
		return 0;
	ct_rec_u8(b, (uint8_t)tag);
	b->len += CT_VARINT_MAX; /* the payload starts after room for the largest length */
	return b->len;
}

static inline void ct_rec_close(struct ct_rec_buf *b, size_t at)
{
	uint8_t len[CT_VARINT_MAX];
	size_t payload = b->len - at, k = ct_put_varint(len, payload);
	uint8_t *start = b->data + at - CT_VARINT_MAX;
	memcpy(start, len, k);
	memmove(start + k, b->data + at, payload);
	b->len = (size_t)(start + k - b->data) + payload;
}

/* ---- the file header ---- */

static inline void ct_rec_header(struct ct_rec_buf *b)
{
	if (ct_rec_room(b, CT_HEADER_SIZE))
		b->len += ct_put_header(b->data + b->len);
}

/* The header of a trace that only readers of min_version or later may read: one with ZEPOCH
 * records (CTRACK_FORMAT_ZEPOCH_MIN), an aggregated, a sampled or an attached one (format.h). */
static inline void ct_rec_header_min(struct ct_rec_buf *b, uint16_t min_version)
{
	if (ct_rec_room(b, CT_HEADER_SIZE))
		b->len += ct_put_header_min(b->data + b->len, min_version);
}

/* ---- core events ---- */

/* ALLOC, FREE or TEMP of alloc info `info`, in the short form. */
static inline void ct_rec_event(struct ct_rec_buf *b, unsigned tag, uint64_t info)
{
	if (ct_rec_room(b, 1 + CT_VARINT_MAX))
		b->len += ct_put_short_event(b->data + b->len, tag, info);
}

static inline void ct_rec_alloc(struct ct_rec_buf *b, uint64_t info)
{
	ct_rec_event(b, CT_REC_ALLOC, info);
}
static inline void ct_rec_free(struct ct_rec_buf *b, uint64_t info)
{
	ct_rec_event(b, CT_REC_FREE, info);
}
static inline void ct_rec_temp(struct ct_rec_buf *b, uint64_t info)
{
	ct_rec_event(b, CT_REC_TEMP, info);
}

/* RECENT: the block of the age-th last ALLOC record, 1 <= age <= CT_RECENT_WINDOW. */
static inline void ct_rec_recent(struct ct_rec_buf *b, uint32_t age)
{
	if (ct_rec_room(b, 1))
		b->len += ct_put_recent(b->data + b->len, age);
}

/* A core record with one varint: TEMPFREE (info), TIME (delta_us). */
static inline void ct_rec_core1(struct ct_rec_buf *b, unsigned tag, uint64_t v)
{
	if (!ct_rec_room(b, 1 + CT_VARINT_MAX))
		return;
	ct_rec_u8(b, (uint8_t)tag);
	ct_rec_v(b, v);
}

static inline void ct_rec_tempfree(struct ct_rec_buf *b, uint64_t info)
{
	ct_rec_core1(b, CT_REC_TEMPFREE, info);
}
static inline void ct_rec_time(struct ct_rec_buf *b, uint64_t delta_us)
{
	ct_rec_core1(b, CT_REC_TIME, delta_us);
}

static inline void ct_rec_info(struct ct_rec_buf *b, uint64_t size, uint64_t stack)
{
	if (!ct_rec_room(b, 1 + 2 * CT_VARINT_MAX))
		return;
	ct_rec_u8(b, CT_REC_INFO);
	ct_rec_v(b, size);
	ct_rec_v(b, stack);
}

/* An ip given to ct_rec_frame with this bit set is exact (format.h's EXACT): the instruction a signal
 * interrupted. Bit 63 is never set in a user-space address. */
#define CT_REC_IP_EXACT (UINT64_C(1) << 63)

/* EXACT: the node the last FRAME record defined has an exact ip. */
static inline void ct_rec_exact(struct ct_rec_buf *b)
{
	size_t at = ct_rec_open(b, CT_REC_EXACT, 0);
	if (at)
		ct_rec_close(b, at);
}

/* The next stack node: return address ip called from node `parent`; with CT_REC_IP_EXACT, the exact
 * ip (without the bit), followed by its EXACT record. */
static inline void ct_rec_frame(struct ct_rec_buf *b, uint64_t parent, uint64_t ip)
{
	uint64_t at = ip & ~CT_REC_IP_EXACT;
	if (!ct_rec_room(b, 1 + 2 * CT_VARINT_MAX))
		return;
	ct_rec_u8(b, CT_REC_FRAME);
	ct_rec_v(b, parent);
	ct_rec_v(b, ct_zigzag((int64_t)(at - b->last_ip)));
	b->last_ip = at;
	if (ip & CT_REC_IP_EXACT)
		ct_rec_exact(b);
}

/* ---- framed records ---- */

/* args: the arguments as /proc/self/cmdline holds them, each followed by a NUL. */
struct ct_rec_process {
	uint64_t pid, ppid, start_unix_ns;
	const char *exe;
	size_t exe_len;
	const char *args;
	size_t args_len;
};

static inline void ct_rec_process(struct ct_rec_buf *b, const struct ct_rec_process *p)
{
	uint64_t argc = 0;
	for (size_t i = 0; i < p->args_len; i++)
		argc += p->args[i] == 0;
	size_t at = ct_rec_open(b, CT_REC_PROCESS,
	                        5 * CT_VARINT_MAX + p->exe_len + argc * CT_VARINT_MAX + p->args_len);
	if (!at)
		return;
	ct_rec_v(b, p->pid);
	ct_rec_v(b, p->ppid);
	ct_rec_v(b, p->start_unix_ns);
	ct_rec_s(b, p->exe, p->exe_len);
	ct_rec_v(b, argc);
	for (size_t i = 0; i < p->args_len;) {
		size_t n = strnlen(p->args + i, p->args_len - i);
		if (i + n == p->args_len) /* a last argument without its NUL is not counted in argc */
			break;
		ct_rec_s(b, p->args + i, n);
		i += n + 1;
	}
	ct_rec_close(b, at);
}

struct ct_rec_segment {
	uint64_t vaddr, memsz, offset;
	uint8_t prot; /* CT_SEG_READ | CT_SEG_WRITE | CT_SEG_EXEC */
};

struct ct_rec_module {
	uint64_t id, base;
	const char *path;
	size_t path_len;
	const uint8_t *build_id;
	size_t build_id_len;
	const struct ct_rec_segment *segs;
	size_t nseg;
};

static inline void ct_rec_module(struct ct_rec_buf *b, const struct ct_rec_module *m)
{
	size_t at = ct_rec_open(b, CT_REC_MODULE,
	                        5 * CT_VARINT_MAX + m->path_len + m->build_id_len +
	                            m->nseg * (3 * CT_VARINT_MAX + 1));
	if (!at)
		return;
	ct_rec_v(b, m->id);
	ct_rec_v(b, m->base);
	ct_rec_s(b, m->path, m->path_len);
	ct_rec_s(b, m->build_id, m->build_id_len);
	ct_rec_v(b, m->nseg);
	for (size_t i = 0; i < m->nseg; i++) {
		ct_rec_v(b, m->segs[i].vaddr);
		ct_rec_v(b, m->segs[i].memsz);
		ct_rec_v(b, m->segs[i].offset);
		ct_rec_u8(b, m->segs[i].prot);
	}
	ct_rec_close(b, at);
}

/* A framed record whose payload is one varint: UNMODULE (module id), SAMPLE (rss bytes). */
static inline void ct_rec_framed1(struct ct_rec_buf *b, unsigned tag, uint64_t v)
{
	size_t at = ct_rec_open(b, tag, CT_VARINT_MAX);
	if (!at)
		return;
	ct_rec_v(b, v);
	ct_rec_close(b, at);
}

static inline void ct_rec_unmodule(struct ct_rec_buf *b, uint64_t id)
{
	ct_rec_framed1(b, CT_REC_UNMODULE, id);
}
static inline void ct_rec_sample(struct ct_rec_buf *b, uint64_t rss)
{
	ct_rec_framed1(b, CT_REC_SAMPLE, rss);
}

/* The writer's totals, as END carries them (see format.h). */
struct ct_rec_end {
	uint64_t allocations, frees, bytes_allocated, unmatched_frees, lost_allocations, end_us;
};

static inline void ct_rec_end(struct ct_rec_buf *b, const struct ct_rec_end *e)
{
	size_t at = ct_rec_open(b, CT_REC_END, 6 * CT_VARINT_MAX);
	if (!at)
		return;
	ct_rec_v(b, e->allocations);
	ct_rec_v(b, e->frees);
	ct_rec_v(b, e->bytes_allocated);
	ct_rec_v(b, e->unmatched_frees);
	ct_rec_v(b, e->lost_allocations);
	ct_rec_v(b, e->end_us);
	ct_rec_close(b, at);
}

/* A framed record whose payload is one string: EXEC (path), SUPPRESSIONS (the program's own). */
static inline void ct_rec_framed_s(struct ct_rec_buf *b, unsigned tag, const char *text, size_t len)
{
	size_t at = ct_rec_open(b, tag, CT_REC_S_MAX(len));
	if (!at)
		return;
	ct_rec_s(b, text, len);
	ct_rec_close(b, at);
}

static inline void ct_rec_exec(struct ct_rec_buf *b, const char *path, size_t len)
{
	ct_rec_framed_s(b, CT_REC_EXEC, path, len);
}

static inline void ct_rec_thread(struct ct_rec_buf *b, uint64_t tid, unsigned state)
{
	size_t at = ct_rec_open(b, CT_REC_THREAD, CT_VARINT_MAX + 1);
	if (!at)
		return;
	ct_rec_v(b, tid);
	ct_rec_u8(b, (uint8_t)state);
	ct_rec_close(b, at);
}

static inline void ct_rec_note(struct ct_rec_buf *b, unsigned level, const char *text, size_t len)
{
	size_t at = ct_rec_open(b, CT_REC_NOTE, 1 + CT_REC_S_MAX(len));
	if (!at)
		return;
	ct_rec_u8(b, (uint8_t)level);
	ct_rec_s(b, text, len);
	ct_rec_close(b, at);
}

static inline void ct_rec_suppressions(struct ct_rec_buf *b, const char *text, size_t len)
{
	ct_rec_framed_s(b, CT_REC_SUPPRESSIONS, text, len);
}

static inline void ct_rec_mark(struct ct_rec_buf *b, const char *name, size_t len)
{
	ct_rec_framed_s(b, CT_REC_MARK, name, len);
}

/* An invalid free (INVALID; its kind and call are format.h's): what it was, the call, its backtrace
 * and what is known of the block. */
struct ct_rec_invalid {
	uint8_t kind, call;
	uint64_t stack, freed; /* stack node ids; freed 0: unknown */
	uint64_t block;        /* alloc info + 1; 0: unknown */
};

static inline void ct_rec_invalid(struct ct_rec_buf *b, const struct ct_rec_invalid *v)
{
	size_t at = ct_rec_open(b, CT_REC_INVALID, 2 + 3 * CT_VARINT_MAX);
	if (!at)
		return;
	ct_rec_u8(b, v->kind);
	ct_rec_u8(b, v->call);
	ct_rec_v(b, v->stack);
	ct_rec_v(b, v->freed);
	ct_rec_v(b, v->block);
	ct_rec_close(b, at);
}

/* A framed record of two varints: CRASH, SAMPLING, ATTACH. */
static inline void ct_rec_two(struct ct_rec_buf *b, unsigned tag, uint64_t x, uint64_t y)
{
	size_t at = ct_rec_open(b, tag, 2 * CT_VARINT_MAX);
	if (!at)
		return;
	ct_rec_v(b, x);
	ct_rec_v(b, y);
	ct_rec_close(b, at);
}

/* CRASH: the signal the program died of, and the backtrace of the thread that took it. */
static inline void ct_rec_crash(struct ct_rec_buf *b, uint64_t signal, uint64_t stack)
{
	ct_rec_two(b, CT_REC_CRASH, signal, stack);
}

/* The leak classes of one alloc info's live blocks (CLASSES; the classes are format.h's). */
struct ct_rec_classes {
	uint64_t info;
	uint64_t count[CT_CLASSES];
};

static inline void ct_rec_classes(struct ct_rec_buf *b, const struct ct_rec_classes *v, size_t n)
{
	size_t at = ct_rec_open(b, CT_REC_CLASSES, CT_VARINT_MAX + n * (1 + CT_CLASSES) * CT_VARINT_MAX);
	if (!at)
		return;
	ct_rec_v(b, n);
	for (size_t i = 0; i < n; i++) {
		ct_rec_v(b, v[i].info);
		for (int k = 0; k < CT_CLASSES; k++)
			ct_rec_v(b, v[i].count[k]);
	}
	ct_rec_close(b, at);
}

/* Indirectly lost blocks of one alloc info held by definitely lost blocks of another (HOLDERS). */
struct ct_rec_holder {
	uint64_t info, holder, count;
};

static inline void ct_rec_holders(struct ct_rec_buf *b, const struct ct_rec_holder *v, size_t n)
{
	size_t at = ct_rec_open(b, CT_REC_HOLDERS, CT_VARINT_MAX + n * 3 * CT_VARINT_MAX);
	if (!at)
		return;
	ct_rec_v(b, n);
	for (size_t i = 0; i < n; i++) {
		ct_rec_v(b, v[i].info);
		ct_rec_v(b, v[i].holder);
		ct_rec_v(b, v[i].count);
	}
	ct_rec_close(b, at);
}

/* ---- aggregated traces (AGGREGATE, AGG_SNAPSHOT) ---- */

static inline void ct_rec_aggregate(struct ct_rec_buf *b, uint64_t interval_us)
{
	ct_rec_framed1(b, CT_REC_AGGREGATE, interval_us);
}

/* One alloc info's changes in an AGG_SNAPSHOT, and one info's blocks live at a new peak. */
struct ct_rec_agg_entry {
	uint64_t info, allocations, temporary;
	int64_t live_delta;
};
struct ct_rec_agg_peak {
	uint64_t info, at_peak;
};
struct ct_rec_agg_snapshot {
	uint64_t heap_max, rss, rss_max;
	const struct ct_rec_agg_entry *e;
	size_t n;
	uint64_t peak, peak_us; /* peak 0: it did not rise (np must be 0) */
	const struct ct_rec_agg_peak *p;
	size_t np;
};

/* An info id as the delta from the previous one of its list (format.h). */
static inline void ct_rec_agg_id(struct ct_rec_buf *b, uint64_t id, uint64_t *prev)
{
	ct_rec_v(b, ct_zigzag((int64_t)(id - *prev)));
	*prev = id;
}

static inline void ct_rec_agg_snapshot(struct ct_rec_buf *b, const struct ct_rec_agg_snapshot *s)
{
	size_t at = ct_rec_open(b, CT_REC_AGG_SNAPSHOT, (7 + 4 * s->n + 2 * s->np) * (size_t)CT_VARINT_MAX);
	if (!at)
		return;
	uint64_t prev = 0;
	ct_rec_v(b, s->heap_max);
	ct_rec_v(b, s->rss);
	ct_rec_v(b, s->rss_max);
	ct_rec_v(b, s->n);
	for (size_t i = 0; i < s->n; i++) {
		ct_rec_agg_id(b, s->e[i].info, &prev);
		ct_rec_v(b, s->e[i].allocations);
		ct_rec_v(b, s->e[i].temporary);
		ct_rec_v(b, ct_zigzag(s->e[i].live_delta));
	}
	ct_rec_v(b, s->peak);
	if (s->peak) {
		ct_rec_v(b, s->peak_us);
		ct_rec_v(b, s->np);
		prev = 0;
		for (size_t i = 0; i < s->np; i++) {
			ct_rec_agg_id(b, s->p[i].info, &prev);
			ct_rec_v(b, s->p[i].at_peak);
		}
	}
	ct_rec_close(b, at);
}

/* ---- EPOCH (several lanes' records and their marks) ---- */

#define CT_EPOCH_LANES_MAX 8
#define CT_EPOCH_MARK_MAX (2 * CT_VARINT_MAX) /* the largest encoding of one mark */

/* Writes at p the mark "the next bytes bytes have the key of the last mark + delta"; returns its
 * length. */
static inline size_t ct_put_epoch_mark(uint8_t *p, uint64_t delta, uint64_t bytes)
{
	size_t n = ct_put_varint(p, delta);
	return n + ct_put_varint(p + n, bytes);
}

/* An EPOCH record of lanes runs: run l the len[l] bytes at run[l], its marks the marks_len[l] bytes
 * at marks[l] (ct_put_epoch_mark). */
static inline void ct_rec_epoch(struct ct_rec_buf *b, unsigned lanes, const uint8_t *const *run,
                                const size_t *len, const uint8_t *const *marks, const size_t *marks_len)
{
	size_t payload = CT_VARINT_MAX;
	for (unsigned l = 0; l < lanes; l++)
		payload += 2 * CT_VARINT_MAX + len[l] + marks_len[l];
	size_t at = ct_rec_open(b, CT_REC_EPOCH, payload);
	if (!at)
		return;
	ct_rec_v(b, lanes);
	for (unsigned l = 0; l < lanes; l++)
		ct_rec_v(b, len[l]);
	for (unsigned l = 0; l < lanes; l++)
		ct_rec_v(b, marks_len[l]);
	for (unsigned l = 0; l < lanes; l++)
		ct_rec_raw(b, run[l], len[l]);
	for (unsigned l = 0; l < lanes; l++)
		ct_rec_raw(b, marks[l], marks_len[l]);
	ct_rec_close(b, at);
}

/* A ZEPOCH record of lanes parts: lane l's the zlen[l] compressed bytes at z[l], which start a new
 * frame of its stream when fresh[l]. Returns 1, or 0 when it did not fit (dropped and counted). */
static inline int ct_rec_zepoch(struct ct_rec_buf *b, unsigned lanes, const uint8_t *const *z,
                                const size_t *zlen, const int *fresh)
{
	size_t payload = CT_VARINT_MAX;
	for (unsigned l = 0; l < lanes; l++)
		payload += CT_VARINT_MAX + zlen[l];
	size_t at = ct_rec_open(b, CT_REC_ZEPOCH, payload);
	if (!at)
		return 0;
	ct_rec_v(b, lanes);
	for (unsigned l = 0; l < lanes; l++)
		ct_rec_v(b, (uint64_t)zlen[l] << 1 | (uint64_t)(fresh[l] != 0));
	for (unsigned l = 0; l < lanes; l++)
		ct_rec_raw(b, z[l], zlen[l]);
	ct_rec_close(b, at);
	return 1;
}

/* ---- sampled traces (SAMPLING) ---- */

static inline void ct_rec_sampling(struct ct_rec_buf *b, uint64_t rate, uint64_t seed)
{
	ct_rec_two(b, CT_REC_SAMPLING, rate, seed);
}

/* ---- traces that start at an attach (ATTACH) ---- */

static inline void ct_rec_attach(struct ct_rec_buf *b, uint64_t unix_ns, uint64_t ordinal)
{
	ct_rec_two(b, CT_REC_ATTACH, unix_ns, ordinal);
}

#endif /* CTRACK_RECORD_H */
