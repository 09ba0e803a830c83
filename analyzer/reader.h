/* SPDX-License-Identifier: MIT */
/* The trace reader: streams a trace file through zstd and feeds each record to the model.
 * Only the reader (and the shim's writer) know the encoding, through include/ctrack/format.h. */
#ifndef CTRACK_READER_H
#define CTRACK_READER_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* Reads the trace at path into m (initialised by the caller). Returns 0, with m->complete == 0 when
 * the trace is cut short or damaged after its header (everything before the cut or the damage is
 * in m; m->damaged, damaged_at and damage say where and what), or -1 with a one-line reason in err
 * (no program name, no newline), e.g. "'x' is not a ctrack trace". A FIFO or pipe is read as long
 * as its bytes keep coming: 10 s without one is an error. */
int ct_read_trace(const char *path, struct ct_model *m, char *err, size_t errlen);

/* The same, calling progress(bytes of the file read so far, its size or 0, arg) after each read. */
typedef void (*ct_progress_fn)(uint64_t done, uint64_t total, void *arg);
int ct_read_trace_progress(const char *path, struct ct_model *m, char *err, size_t errlen,
                           ct_progress_fn progress, void *arg);

/* The same for the trace open on fd, read from its current offset (a regular file only), named
 * name in the messages: the file a launcher created stays the one it reads, whatever its name
 * meanwhile names. fd stays the caller's, open. */
int ct_read_trace_fd(int fd, const char *name, struct ct_model *m, char *err, size_t errlen);

/* Reads only as far as the trace's PROCESS record (its first): m->proc, who wrote the trace.
 * 0, or -1 with a reason in err (not a trace, cut before the record, no such record). */
int ct_read_process_fd(int fd, const char *name, struct ct_model *m, char *err, size_t errlen);

/* Following a trace that is still being written (follow.c): at the end of the bytes written so far
 * the reader calls tick(arg, 1, ended) and, when it returns 0, reads again (a partial zstd block or
 * record there is no damage: its bytes come later); it also calls tick(arg, 0, 0) after each read
 * that brought bytes. ended: the last record read is END or EXEC and nothing follows it. tick
 * returns 0 to go on, 1 to stop reading there (the trace then reads as cut), or -1 after writing a
 * one-line reason into err. The model is whole between records whenever tick is called. An empty
 * file is waited for rather than refused. */
struct ct_follow_hooks {
	int (*tick)(void *arg, int at_end, int ended, char *err, size_t errlen);
	void *arg;
};
int ct_read_trace_follow(const char *path, struct ct_model *m, char *err, size_t errlen,
                         const struct ct_follow_hooks *follow);

#endif
