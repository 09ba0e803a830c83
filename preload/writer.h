/* SPDX-License-Identifier: MIT */
/* The writer's side of the shim: the background thread that owns the trace file (writer.c), the
 * file and its zstd stream (output.c), and the module records it writes (modules.c). Program threads call
 * only the ct_writer_* requests; the rest runs on the writer thread (or on the late path, under the writer's
 * lock). */
#ifndef CTRACK_WRITER_H
#define CTRACK_WRITER_H

#include <stdint.h>

#include "ctrack/record.h"
#include "match.h"
#include "shim.h"

/* ---- writer.c: the thread, the zstd stream, the file ---- */
int ct_writer_start(int fd) CT_HIDDEN; /* 0 or -errno */
void ct_writer_wake(void) CT_HIDDEN;   /* a ring is filling up */
void ct_writer_sync(void) CT_HIDDEN;   /* wait until all published events are written */
/* Before the program's exec: sync, EXEC record, flush to the file. 1 when it holds the request lock
 * from then on, so that no leak scan stops the threads while the exec runs (a stop then, refused by
 * ptrace, fell back to the signal, which stayed pending across the exec and killed the new program):
 * the caller hands it back with ct_writer_exec_failed once the exec returned. */
int ct_writer_exec(const char *path) CT_HIDDEN;
void ct_writer_exec_failed(void) CT_HIDDEN;
/* The calls below that scan for leaks take the caller's stack from sp up as roots: sp must lie below
 * every frame of the program's, with the caller's registers spilled above it (e.g. a jmp_buf). */
/* Drain, the leak scan, END record, stop the thread. */
void ct_writer_finish(const void *sp) CT_HIDDEN;
#define CT_MARK_MAX 255                          /* bytes of a mark's name kept */
void ct_writer_mark(const char *name) CT_HIDDEN; /* sync, MARK record, flush to the file */
/* Sync, the leak scan, CLASSES, flush: 0 with the bytes and blocks by leak class in lost and blocks,
 * or -1 when the scan could not run (no writer, no memory, no roots). */
int ct_writer_check(const void *sp, uint64_t lost[CT_CLASSES], uint64_t blocks[CT_CLASSES]) CT_HIDDEN;
/* On the writer, in a leak scan with the program's threads stopped, for the events the matcher has
 * not seen: a thread's published after the writer's last drain, or one a stopped thread waits to
 * publish. end(p, arg) for each that ends block p (a FREE, a realloc's start or free of the old
 * block), and for each a signal handler left for the report it interrupted: no leak, the scan takes
 * it as reachable. start(p, size, arg) for each that starts one (an allocation of size bytes, a
 * realloc that failed, whose old block is live again: size 0): its words are roots. Either NULL. */
void ct_writer_each_unmatched(void (*end)(uint64_t p, void *arg),
                              void (*start)(uint64_t p, uint64_t size, void *arg), void *arg) CT_HIDDEN;
/* The bytes the writer holds that give_back returns to the system (compressor, buffers, tables,
 * its stack); an estimate, read without the writer's lock. */
size_t ct_writer_releasable(void) CT_HIDDEN;
/* The program's allocation of size bytes failed: the trace ends with a NOTE saying so, the writer
 * stops and its memory goes back to the system. 0 when that is done (by this call or an earlier
 * one), -1 when it could not be (no answer from the writer, or called on the writer). */
int ct_writer_give_back(uint64_t size) CT_HIDDEN;
/* After finish: the event is written at once, followed by a new END, as a frame of its own. */
void ct_writer_late(const uint64_t *ev) CT_HIDDEN;
/* fd < 0: the child is not traced; with --follow-children (the launcher's status page), it could
 * not create its trace, and errno, as the failed open left it, says why. */
void ct_writer_after_fork_child(int fd) CT_HIDDEN;
/* Attach mode (attach.c): the writer starts on the empty trace file fd, again after a detach, which
 * it makes itself when the launcher asks (attach.h). 0 or -errno. */
int ct_writer_attach(int fd) CT_HIDDEN;
/* The main thread called pthread_exit: once every other program thread is gone, the writer exits
 * the process as glibc's last thread would (exit(0)). */
void ct_writer_main_exited(void) CT_HIDDEN;
/* From a fatal signal's handler (async-signal-safe): writes every published event, the backtrace
 * of the calling thread (CRASH; ring: its ring, NULL when it has none: an odd free it made last may
 * be the call it dies in, see ct_match_crash), a NOTE naming sig and END, stops tracing, and returns
 * when that is in the file (or after 5 s). */
void ct_writer_crash(int sig, const void *ucontext, struct ct_ring *ring) CT_HIDDEN;

/* The grow function of a record buffer in the shim's arena (ct_rec_grow_fn): its first size first,
 * then doubled until need more bytes fit. */
static inline int ct_rec_grow_arena(struct ct_rec_buf *b, size_t need, size_t first)
{
	size_t cap = b->cap ? b->cap : first;
	while (cap < b->len + need)
		cap *= 2;
	if (ct_arena_grow((void **)&b->data, b->cap, cap) < 0)
		return -1;
	b->cap = cap;
	return 0;
}

/* A thread of the shim's on stack [stack, stack + size) running fn(arg), named name, with every
 * signal blocked. With cells, glibc's calloc of its thread vector is served from the shim's cells
 * (tracker.c), not the program's heap: the lanes' threads, so that the program's blocks lie where
 * they lie with one lane (a block's address decides what points into it, and so its leak class);
 * the writer's stays in the heap, where it always was (the pool is a megabyte more under a memory
 * limit). 0 or -errno. */
int ct_shim_thread(pthread_t *t, void *stack, size_t size, void *(*fn)(void *), void *arg, const char *name,
                   int cells) CT_HIDDEN;

/* ---- lanes.c: the matcher's lanes on threads of their own (match.h, ARCHITECTURE.md) ---- */
struct ct_drain;
/* Sets up lanes lanes (before the matcher's reset: ct_lanes_sink), then starts their threads when
 * there are several (after it); 0, or -errno (the caller goes on with one lane). */
int ct_lanes_prepare(unsigned lanes) CT_HIDDEN;
int ct_lanes_start(void) CT_HIDDEN;
unsigned ct_lanes(void) CT_HIDDEN;                                       /* 1: the writer is the one lane */
void ct_lanes_sink(unsigned lane, struct ct_match_sink *sink) CT_HIDDEN; /* its run's buffer */
/* The orderer takes r's events whose turn it is (ct_drain_order) and tells the lanes to apply them. */
int ct_lanes_order(struct ct_ring *r, struct ct_drain *d, int ordered) CT_HIDDEN;
/* The orderer's run, where TIME and SAMPLE go; ct_lanes_mark0 after writing there. */
struct ct_rec_buf *ct_lanes_timeline(void) CT_HIDDEN;
void ct_lanes_mark0(void) CT_HIDDEN;
/* r's thread is gone and the orderer read its every event (d: its drain): every lane settles its
 * stream; ct_lanes_settled says when all have. */
void ct_lanes_settle(struct ct_ring *r, struct ct_drain *d) CT_HIDDEN;
int ct_lanes_settled(struct ct_ring *r) CT_HIDDEN;
/* A flush: every lane writes its streams' held ALLOCs at this point. */
void ct_lanes_held(void) CT_HIDDEN;
/* After a pass: the epoch ends after enough events or time (or now, with flush), if the one
 * before is merged; idle lanes are woken. */
void ct_lanes_tick(int flush) CT_HIDDEN;
/* Appends to out the EPOCH of the last epoch, once every lane has it; define() first. Returns 1
 * if it did. */
int ct_lanes_merge(struct ct_rec_buf *out, void (*define)(void)) CT_HIDDEN;
/* Lanes 1.. stop between two steps (at most wait_ms for them: 0, or -1 when one did not answer,
 * whose state the orderer then leaves alone), until ct_lanes_resume or ct_lanes_stop (threads joined). */
int ct_lanes_park(int wait_ms) CT_HIDDEN;
void ct_lanes_resume(void) CT_HIDDEN;
void ct_lanes_stop(void) CT_HIDDEN;
/* Lanes parked: the orderer applies the steps they had left (returns how many). */
int ct_lanes_absorb(void) CT_HIDDEN;
/* Lanes parked or stopped: every record they and the orderer hold goes to out, in EPOCH records. */
void ct_lanes_collect(struct ct_rec_buf *out, void (*define)(void)) CT_HIDDEN;
/* Lanes stopped: a late event applied to late[lane] of every lane (ct_lanes_collect next). */
void ct_lanes_late(struct ct_match_stream *late, const uint64_t *ev) CT_HIDDEN;
int ct_lanes_is_lane(pid_t tid) CT_HIDDEN;      /* a lane's thread: the shim's, no program's */
size_t ct_lanes_bytes(void) CT_HIDDEN;          /* their buffers and stacks */
void ct_lanes_after_fork_child(void) CT_HIDDEN; /* in a forked child: the parent's compressors forgotten */
void ct_lanes_release(void) CT_HIDDEN;          /* after ct_lanes_stop: their memory back to the system */

/* ---- output.c: the trace file and its zstd stream (writer thread, or the late path) ---- */
/* Takes fd as the trace file (moved to a high number, remembered by identity and path), written in
 * raw blocks until ct_output_compress; on_fail() runs when writing fails (tracing must stop). 0 or
 * -errno. */
int ct_output_open(int fd, void (*on_fail)(void)) CT_HIDDEN;
/* Starts a zstd stream with as much memory as the compressor can get while spare bytes remain to be
 * had (the shim's first needs after it: a thread's ring, the stack table), or none (raw blocks); with
 * several lanes, which compress the events' records, a 128 KiB window without long-distance matching
 * at most. */
void ct_output_compress(size_t spare, int lanes) CT_HIDDEN;
/* The text of an info NOTE when the compressor got less memory than it asks for (a smaller window,
 * or none), in buf (cap bytes); returns its length, 0 when it got all. */
size_t ct_output_rung_note(char *buf, size_t cap) CT_HIDDEN;
enum ct_out_mode { CT_OUT_FLUSH, CT_OUT_END };
/* Compresses b's records into the file, all of them, and empties b: FLUSH leaves the zstd frame
 * open (a flush point: a reader of a cut file gets everything before it), END closes the frame.
 * On a write failure tracing stops (ct_state = CT_OFF) and the file ends with a NOTE saying why. */
void ct_output_write(struct ct_rec_buf *b, enum ct_out_mode mode) CT_HIDDEN;
/* A FLUSH while the program runs: compressing a BATCH takes about a millisecond, longer than a
 * thread's ring lasts at full speed, so between() runs between its columns to keep the rings
 * draining. b is empty when between() runs; the records it adds go out with the next write. */
void ct_output_flush_busy(struct ct_rec_buf *b, void (*between)(void)) CT_HIDDEN;
/* The columns the matcher appends its most frequent records to (ct_match_sink.cols), and its
 * stage(): b's records moved to them and room made; returns the records it may now append (0:
 * none, when there is no compressor, writing failed or there is no memory). */
struct ct_columns *ct_output_columns(void) CT_HIDDEN;
size_t ct_output_stage(struct ct_rec_buf *b) CT_HIDDEN;
size_t ct_output_staged(void) CT_HIDDEN;     /* bytes in the columns, waiting for the next write */
int ct_output_ok(void) CT_HIDDEN;            /* open, and writing has not failed */
uint64_t ct_output_reopened(void) CT_HIDDEN; /* times the file was opened again by its path */
void ct_output_drop(void) CT_HIDDEN;         /* after fork: the parent's file, closed unwritten */
/* Tracing ends early: a warning NOTE with text, then END, in the stream or, when nothing is in the file
 * yet, in a frame of raw blocks with the file header (no memory needed). Nothing is written after. */
void ct_output_end_with_note(const char *text, size_t len) CT_HIDDEN;
/* Ends the file with the summary trailer of t (ctrack/trailer.h; its file hash is the output's own),
 * right after END's frame; a trailer that cannot be written whole is taken back, and the file ends
 * with END as before. */
struct ct_trailer;
void ct_output_trailer(const struct ct_trailer *t) CT_HIDDEN;
void ct_output_release(void) CT_HIDDEN; /* the compressor's memory goes back to the system */
size_t ct_output_bytes(void) CT_HIDDEN; /* what the compressor holds now */

/* ---- modules.c: the loaded ELF objects, as MODULE/UNMODULE records ---- */
void ct_modules_mark_dirty(void) CT_HIDDEN; /* a library was unloaded */
int ct_modules_dirty(void) CT_HIDDEN;
void ct_modules_sync(struct ct_rec_buf *o) CT_HIDDEN; /* writes records for what changed */
int ct_modules_covers(uintptr_t ip) CT_HIDDEN;        /* ip inside a module already written */
void ct_modules_reset(void) CT_HIDDEN;                /* new trace file: all modules unwritten */

#endif
