/* SPDX-License-Identifier: MIT */
/* ct_trace_summarize(): the launcher's closing line, from the reader and the model alone, by path
 * or from a descriptor the launcher holds; ct_trace_origin_fd(): who wrote a trace, from its first
 * record.
 * Links without libdw: nothing here symbolizes. */
#include "model.h"
#include "reader.h"
#include "summary.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

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
	    .pid = m->proc.pid,
	    .ppid = m->proc.ppid,
	    .start_unix_ns = m->proc.start_unix_ns,
	    .sample_rate = m->sample_rate,
	};
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
	const struct ct_bytes *exe = &m->proc.exe;
	if (exe->data) {
		const char *slash = memrchr(exe->data, '/', exe->len);
		const char *name = slash ? slash + 1 : exe->data;
		first_line(s->program, sizeof(s->program), name, exe->len - (size_t)(name - exe->data));
	}
}

/* Reads the trace (by path when fd is -1) and sums it up. */
static int summarize(const char *path, int fd, struct ct_trace_summary *s, char *err, size_t errlen)
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
	struct ct_model m;
	*o = (struct ct_trace_origin){0};
	if (ct_model_init(&m) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	int rc = ct_read_process_fd(fd, name, &m, err, errlen);
	if (rc == 0)
		*o = (struct ct_trace_origin){m.proc.pid, m.proc.ppid, m.proc.start_unix_ns};
	ct_model_destroy(&m);
	return rc;
}
