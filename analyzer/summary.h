/* SPDX-License-Identifier: MIT */
/* The one-call summary of a trace, for the launcher's closing line.
 * Implemented on top of the analyzer's reader and model; needs no symbolization. */
#ifndef CTRACK_SUMMARY_H
#define CTRACK_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

struct ct_trace_summary {
	uint64_t allocations;     /* successful calls that returned a block (valgrind's "allocs") */
	uint64_t frees;           /* frees of blocks seen allocated */
	uint64_t bytes_allocated; /* sum of the sizes of all allocations */
	uint64_t temporary;       /* allocations freed by the same thread's next allocation event */
	uint64_t peak_heap_bytes; /* highest sum of live bytes */
	uint64_t leaked_bytes;    /* live at the end of the trace */
	uint64_t leaked_allocations;
	uint64_t runtime_ns;
	int complete;         /* 1: the trace ends with END or EXEC; 0: it was cut (killed process) */
	char exec_path[4096]; /* when the trace ends with EXEC: the program the process became */
	uint64_t warnings;    /* NOTE records of level warning: the shim saw trouble (dropped events, ...) */
	/* The first warning's text, cut to fit, control bytes as '?' (one printable line); "" if none. */
	char first_warning[1024];
};

/* Reads the trace at path and fills *s. Returns 0 on success, or -1 with a one-line reason in
 * err (no program name, no newline), e.g. "not a ctrack trace". A trace that is cut short is a
 * success with s->complete == 0. */
int ct_trace_summarize(const char *path, struct ct_trace_summary *s, char *err, size_t errlen);

#endif
