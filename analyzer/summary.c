/* SPDX-License-Identifier: MIT */
/* ct_trace_summarize(): the launcher's closing line, from the reader and the model alone.
 * Links without libdw: nothing here symbolizes. */
#include "model.h"
#include "reader.h"
#include "summary.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

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
	};
	if (m.exec_last && m.exec_path.data)
		snprintf(s->exec_path, sizeof(s->exec_path), "%s", m.exec_path.data);
	ct_model_destroy(&m);
	return 0;
}
