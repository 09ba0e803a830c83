/* SPDX-License-Identifier: MIT */
/* The writer's side of the shim: the background thread that owns the trace file (writer.c), and
 * the module records it writes (modules.c). Program threads call only the ct_writer_* requests;
 * the rest runs on the writer thread (or on the late path, under the writer's lock). */
#ifndef CTRACK_WRITER_H
#define CTRACK_WRITER_H

#include <stdint.h>

#include "ctrack/record.h"
#include "shim.h"

/* ---- writer.c: the thread, the zstd stream, the file ---- */
int ct_writer_start(int fd) CT_HIDDEN;           /* 0 or -errno */
void ct_writer_wake(void) CT_HIDDEN;             /* a ring is filling up */
void ct_writer_sync(void) CT_HIDDEN;             /* wait until all published events are written */
void ct_writer_exec(const char *path) CT_HIDDEN; /* sync, EXEC record, flush to the file */
void ct_writer_finish(void) CT_HIDDEN;           /* drain, END record, stop the thread */
/* After finish: the event is written at once, followed by a new END, as a frame of its own. */
void ct_writer_late(const uint64_t *ev) CT_HIDDEN;
void ct_writer_after_fork_child(int fd) CT_HIDDEN; /* fd < 0: the child is not traced */

/* ---- modules.c: the loaded ELF objects, as MODULE/UNMODULE records ---- */
void ct_modules_mark_dirty(void) CT_HIDDEN;                /* a library was unloaded */
int ct_modules_dirty(void) CT_HIDDEN;
void ct_modules_sync(struct ct_rec_buf *o) CT_HIDDEN;      /* writes records for what changed */
int ct_modules_covers(uintptr_t ip) CT_HIDDEN;             /* ip inside a module already written */
void ct_modules_reset(void) CT_HIDDEN;                     /* new trace file: all modules unwritten */

#endif
