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
	/* The live blocks by leak kind when the trace has a CLASSES record (classified; else zeros):
	 * definitely, indirectly, possibly lost, still reachable (CT_CLASS_*), then never scanned. */
	int classified;
	uint64_t class_bytes[5], class_blocks[5];
	uint64_t invalid_frees; /* memcheck's "Invalid free()": double frees, frees of no heap block */
	unsigned invalid_kind;  /* the most frequent one's kind (CT_INVALID_* of ctrack/record.h) */
	uint64_t runtime_ns;
	int complete;         /* 1: the trace ends with END or EXEC; 0: it was cut (killed process) */
	int damaged;          /* ... or damaged after its header (complete is 0): read up to there */
	uint64_t damaged_at;  /* the file offset near which it is (model.h) */
	char damage[200];     /* what was wrong, one line */
	char exec_path[4096]; /* when the trace ends with EXEC: the program the process became */
	uint64_t warnings;    /* NOTE records of level warning: the shim saw trouble (dropped events, ...) */
	/* The first warning's text, cut to fit, control bytes as '?' (one printable line); "" if none. */
	char first_warning[1024];
	/* Who wrote it (its PROCESS record; all 0 without one): the process, its parent, when its trace
	 * started (Unix time), and its program's file name, cut to fit, as the trace's name has it. */
	uint64_t pid, ppid, start_unix_ns;
	char program[256];
	uint64_t sample_rate; /* a sampled trace's (SAMPLING): every figure above is an estimate; 0: none */
};

/* Set (to anything): a summary taken from the file's trailer (ctrack/trailer.h) is checked against
 * the one its records give, and a difference aborts the process, naming the figure. The test suite
 * runs so; a summary of the records alone costs a read of every record. */
#define CT_ENV_SUMMARY_VERIFY "CTRACK_SUMMARY_VERIFY"

/* Reads the trace at path and fills *s. Returns 0 on success, or -1 with a one-line reason in
 * err (no program name, no newline), e.g. "not a ctrack trace". A trace that is cut short, or
 * damaged after its header, is a success with s->complete == 0 (s->damaged for the latter). */
int ct_trace_summarize(const char *path, struct ct_trace_summary *s, char *err, size_t errlen);

/* The same for the trace open on fd (read from its current offset; fd stays open), named name in
 * the messages: the launcher reads the file it created, whatever the name names by then. */
int ct_trace_summarize_fd(int fd, const char *name, struct ct_trace_summary *s, char *err, size_t errlen);

/* With CT_ENV_SUMMARY_VERIFY set, the same check of a model read whole from path, in full (no window
 * of time, no marks): ctrack-analyze's, so that the suite checks the trailer of every trace it reads. */
struct ct_model;
void ct_trace_trailer_verify(const char *path, const struct ct_model *m);

/* Who wrote a trace, from its first record alone (cheap, whatever the trace's size). */
struct ct_trace_origin {
	uint64_t pid, ppid, start_unix_ns;
};

/* Reads the PROCESS record of the trace open on fd (from its current offset; fd stays open) into
 * *o. Returns 0, or -1 with a one-line reason in err (an empty file, not a trace, no such record). */
int ct_trace_origin_fd(int fd, const char *name, struct ct_trace_origin *o, char *err, size_t errlen);

#endif
