/* SPDX-License-Identifier: MIT */
/* ct_trace_summarize(): the launcher's closing line, from the reader and the model alone.
 * Links without libdw: nothing here symbolizes. */
#include "model.h"
#include "reader.h"
#include "summary.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* text into buf (size n), cut to fit, as one printable line: control bytes (a NUL too) become '?'. */
static void first_line(char *buf, size_t n, const struct ct_bytes *text)
{
	size_t len = text->len < n - 1 ? text->len : n - 1;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text->data[i];
		buf[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	buf[len] = 0;
}

int ct_trace_summarize(const char *path, struct ct_trace_summary *s, char *err, size_t errlen)
{
	struct ct_model m;
	memset(s, 0, sizeof(*s));
	if (ct_model_init(&m) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (ct_read_trace(path, &m, err, errlen) < 0) {
		ct_model_destroy(&m);
		return -1;
	}
	*s = (struct ct_trace_summary){
	    .allocations = m.t.allocations,
	    .frees = m.t.frees,
	    .bytes_allocated = m.t.bytes_allocated,
	    .temporary = m.t.temporary,
	    .peak_heap_bytes = m.t.peak,
	    .leaked_bytes = m.t.current,
	    .leaked_allocations = m.t.live_allocations,
	    .runtime_ns = ct_model_runtime_us(&m) * 1000,
	    .complete = m.complete,
	    .warnings = m.warnings,
	};
	for (size_t i = 0; i < m.nnotes && m.warnings; i++)
		if (m.notes[i].warning) {
			first_line(s->first_warning, sizeof(s->first_warning), &m.notes[i].text);
			break;
		}
	if (m.exec_last && m.exec_path.data)
		snprintf(s->exec_path, sizeof(s->exec_path), "%s", m.exec_path.data);
	ct_model_destroy(&m);
	return 0;
}
