/* SPDX-License-Identifier: MIT */
/* ct_trace_summarize(): the launcher's closing line, from the summary trailer at the end of the file
 * when it has one (ctrack/trailer.h), else from the reader and the model, by path or from a
 * descriptor the launcher holds; ct_trace_origin_fd(): who wrote a trace, from its first record.
 * Links without libdw: nothing here symbolizes. */
#include "ctrack/trailer.h"
#include "model.h"
#include "reader.h"
#include "summary.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* text into buf (size n), cut to fit, as one printable line: control bytes (a NUL too) become '?'. */
static void first_line(char *buf, size_t n, const char *text, size_t text_len)
{
	size_t len = text_len < n - 1 ? text_len : n - 1;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];
		buf[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	buf[len] = 0;
}

/* Who wrote the trace, from m's PROCESS record, into *s. */
static void fill_origin(struct ct_trace_summary *s, const struct ct_model *m)
{
	s->pid = m->proc.pid;
	s->ppid = m->proc.ppid;
	s->start_unix_ns = m->proc.start_unix_ns;
	const struct ct_bytes *exe = &m->proc.exe;
	if (exe->data) {
		const char *slash = memrchr(exe->data, '/', exe->len);
		const char *name = slash ? slash + 1 : exe->data;
		first_line(s->program, sizeof(s->program), name, exe->len - (size_t)(name - exe->data));
	}
}

/* The model's figures into *s; m was read whole. */
static void fill(struct ct_trace_summary *s, const struct ct_model *m)
{
	*s = (struct ct_trace_summary){
	    .allocations = m->t.allocations,
	    .frees = m->t.frees,
	    .bytes_allocated = m->t.bytes_allocated,
	    .temporary = m->t.temporary,
	    .peak_heap_bytes = m->t.peak,
	    .leaked_bytes = m->t.current,
	    .leaked_allocations = m->t.live_allocations,
	    .invalid_frees = m->t.invalid_frees,
	    .runtime_ns = ct_model_runtime_us(m) * 1000,
	    .complete = m->complete,
	    .damaged = m->damaged,
	    .damaged_at = m->damaged_at,
	    .warnings = m->warnings,
	    .sample_rate = m->sample_rate,
	};
	fill_origin(s, m);
	for (size_t i = 0; i < m->nnotes && m->warnings; i++)
		if (m->notes[i].warning) {
			first_line(s->first_warning, sizeof(s->first_warning), m->notes[i].text.data,
			           m->notes[i].text.len);
			break;
		}
	const struct ct_invalid *most = NULL;
	for (size_t i = 0; i < m->ninvalid; i++)
		if (!most || m->invalid[i].count > most->count)
			most = &m->invalid[i];
	s->invalid_kind = most ? most->kind : 0;
	_Static_assert(sizeof(s->class_bytes) / sizeof(s->class_bytes[0]) == CT_KINDS, "one per leak kind");
	s->classified = m->classified;
	if (m->classified)
		ct_model_class_totals(m, s->class_blocks, s->class_bytes);
	snprintf(s->damage, sizeof(s->damage), "%s", m->damage);
	if (m->exec_last && m->exec_path.data)
		snprintf(s->exec_path, sizeof(s->exec_path), "%s", m->exec_path.data);
}

/* ---- the summary trailer ---- */

/* Whether the file's first n bytes are those the trailer's file hash was taken of. */
static int as_written(int fd, uint64_t n, uint64_t want)
{
	enum { CHUNK = 1 << 20 };
	uint8_t *buf = malloc(CHUNK);
	struct ct_file_hash h;
	ct_file_hash_init(&h);
	uint64_t at = 0;
	while (buf && at < n) {
		ssize_t k = pread(fd, buf, n - at < CHUNK ? (size_t)(n - at) : CHUNK, (off_t)at);
		if (k <= 0)
			break;
		ct_file_hash_add(&h, buf, (size_t)k);
		at += (uint64_t)k;
	}
	free(buf);
	return at == n && ct_file_hash_end(&h) == want;
}

/* The trailer that ends the file open on fd, into *t: 0, or -1 when there is none a reader may use
 * (none, another's, or the file is no longer as its writer wrote it). */
static int read_trailer(int fd, struct ct_trailer *t)
{
	struct stat st;
	uint8_t foot[CT_TRAILER_FOOT], buf[CT_TRAILER_MAX];
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < CT_TRAILER_HEAD + CT_TRAILER_FOOT)
		return -1;
	uint64_t size = (uint64_t)st.st_size;
	if (pread(fd, foot, sizeof(foot), (off_t)(size - sizeof(foot))) != (ssize_t)sizeof(foot))
		return -1;
	size_t n = ct_trailer_length(foot);
	if (!n || n > size || pread(fd, buf, n, (off_t)(size - n)) != (ssize_t)n ||
	    ct_trailer_decode(buf, n, size - n, t) < 0)
		return -1;
	return as_written(fd, size - n, t->file_hash) ? 0 : -1;
}

/* The trailer's figures into *s (who wrote the trace aside: its PROCESS record's). */
static void fill_trailer(struct ct_trace_summary *s, const struct ct_trailer *t)
{
	*s = (struct ct_trace_summary){
	    .allocations = t->allocations,
	    .frees = t->frees,
	    .bytes_allocated = t->bytes_allocated,
	    .temporary = t->temporary,
	    .peak_heap_bytes = t->peak,
	    .leaked_bytes = t->live_bytes,
	    .leaked_allocations = t->live_blocks,
	    .classified = t->classified,
	    .runtime_ns = t->runtime_us * 1000,
	    .complete = 1,
	};
	if (!t->classified)
		return;
	/* the live blocks of no class: allocated after the scan (none, as nothing followed it) */
	uint64_t blocks = 0, bytes = 0;
	for (int k = 0; k < CT_CLASSES; k++) {
		s->class_blocks[k] = t->class_blocks[k], s->class_bytes[k] = t->class_bytes[k];
		blocks += t->class_blocks[k], bytes += t->class_bytes[k];
	}
	s->class_blocks[CT_CLASSES] = t->live_blocks > blocks ? t->live_blocks - blocks : 0;
	s->class_bytes[CT_CLASSES] = t->live_bytes > bytes ? t->live_bytes - bytes : 0;
}

/* Who wrote the trace open on fd (read from its current offset), from its PROCESS record alone, into
 * *s: 0, or -1 with the reason in err. */
static int read_origin(int fd, const char *name, struct ct_trace_summary *s, char *err, size_t errlen)
{
	struct ct_model m;
	if (ct_model_init(&m) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	int rc = ct_read_process_fd(fd, name, &m, err, errlen);
	if (rc == 0)
		fill_origin(s, &m);
	ct_model_destroy(&m);
	return rc;
}

/* The summary of the trace open on fd from its trailer, and who wrote it from its PROCESS record:
 * 0, or -1 when it has no trailer (or its first record cannot be read: the records will say why). */
static int from_trailer(int fd, const char *name, struct ct_trace_summary *s)
{
	struct ct_trailer t;
	char err[256];
	if (read_trailer(fd, &t) < 0)
		return -1;
	fill_trailer(s, &t);
	return read_origin(fd, name, s, err, sizeof(err));
}

/* CTRACK_SUMMARY_VERIFY set: a trailer's summary against the records' (the test suite runs so). A
 * difference is a bug of the writer's: named, and the process aborts, so that no test passes it. */
#define SAME(field) \
	(a->field != b->field ? differ(name, #field, (uint64_t)a->field, (uint64_t)b->field) : (void)0)

static _Noreturn void differ(const char *name, const char *field, uint64_t trailer, uint64_t records)
{
	fprintf(stderr, "ctrack: the summary trailer of '%s' says %s %" PRIu64 ", its records %" PRIu64 "\n",
	        name, field, trailer, records);
	abort();
}

static void verify(const char *name, const struct ct_trace_summary *a, const struct ct_trace_summary *b)
{
	SAME(allocations), SAME(frees), SAME(bytes_allocated), SAME(temporary), SAME(peak_heap_bytes);
	SAME(leaked_bytes), SAME(leaked_allocations), SAME(classified), SAME(invalid_frees), SAME(runtime_ns);
	SAME(complete), SAME(damaged), SAME(warnings), SAME(pid), SAME(ppid), SAME(start_unix_ns);
	SAME(sample_rate);
	for (int k = 0; k <= CT_CLASSES; k++)
		SAME(class_blocks[k]), SAME(class_bytes[k]);
	if (strcmp(a->program, b->program) || a->exec_path[0] || b->exec_path[0] || a->first_warning[0])
		differ(name, "program, exec or warning text", 0, 1);
}
#undef SAME

void ct_trace_trailer_verify(const char *path, const struct ct_model *m)
{
	struct ct_trailer t;
	if (!getenv(CT_ENV_SUMMARY_VERIFY))
		return;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	int has = fd >= 0 && read_trailer(fd, &t) == 0;
	if (fd >= 0)
		close(fd);
	if (!has)
		return;
	struct ct_trace_summary quick, whole;
	fill_trailer(&quick, &t);
	fill_origin(&quick, m);
	fill(&whole, m);
	verify(path, &quick, &whole);
}

/* Reads the trace (by path when fd is -1) and sums it up. */
static int from_records(const char *path, int fd, struct ct_trace_summary *s, char *err, size_t errlen)
{
	struct ct_model m;
	memset(s, 0, sizeof(*s));
	if (ct_model_init(&m) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	int rc = fd < 0 ? ct_read_trace(path, &m, err, errlen) : ct_read_trace_fd(fd, path, &m, err, errlen);
	if (rc == 0)
		fill(s, &m);
	ct_model_destroy(&m);
	return rc;
}

/* From the trailer when the file has one, else from its records (by path when fd is -1). */
static int summarize(const char *path, int fd, struct ct_trace_summary *s, char *err, size_t errlen)
{
	int own = fd < 0 ? open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) : -1, at = fd < 0 ? own : fd;
	off_t start = at >= 0 ? lseek(at, 0, SEEK_CUR) : -1;
	int quick = start >= 0 && from_trailer(at, path, s) == 0;
	if (own >= 0)
		close(own);
	if (quick && !getenv(CT_ENV_SUMMARY_VERIFY))
		return 0;
	if (quick && fd >= 0 && lseek(fd, start, SEEK_SET) != start)
		return 0; /* the records cannot be read again: the trailer's summary stands */
	struct ct_trace_summary fast = *s;
	int rc = from_records(path, fd, s, err, errlen);
	if (quick && rc == 0)
		verify(path, &fast, s);
	return rc;
}

int ct_trace_summarize(const char *path, struct ct_trace_summary *s, char *err, size_t errlen)
{
	return summarize(path, -1, s, err, errlen);
}

int ct_trace_summarize_fd(int fd, const char *name, struct ct_trace_summary *s, char *err, size_t errlen)
{
	if (fd < 0) {
		memset(s, 0, sizeof(*s));
		snprintf(err, errlen, "cannot read '%s': %s", name, strerror(EBADF));
		return -1;
	}
	return summarize(name, fd, s, err, errlen);
}

int ct_trace_origin_fd(int fd, const char *name, struct ct_trace_origin *o, char *err, size_t errlen)
{
	struct ct_trace_summary s = {0};
	int rc = read_origin(fd, name, &s, err, errlen);
	*o = (struct ct_trace_origin){s.pid, s.ppid, s.start_unix_ns};
	return rc;
}
