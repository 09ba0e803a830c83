/* SPDX-License-Identifier: MIT */
/* The leak classes (leakscan.c), at exit and when the program asks: the asking or exiting thread
 * hands over its roots, the writer scans the program's memory after a drain and writes CLASSES. */
#ifndef CTRACK_LEAKSCAN_H
#define CTRACK_LEAKSCAN_H

#include <stdint.h>

#include "ctrack/record.h"

/* At start-up, outside any hook: looks up what the scan needs from libc and ld.so (dlsym). */
void ct_leakscan_init(void);
/* Attach mode: a live block may have been freed past the hooks (through a pointer to free the program
 * took before the attach), its chunk given back to the system: no chunk header is read (a block's
 * last word is scanned as the block's own, not as the next chunk's header). */
void ct_leakscan_untrusted(void);
/* On the exiting or asking thread, before it asks the writer to scan: sp is the lowest address of
 * its stack that holds the program's data (everything above it, up to the stack's top, is a root;
 * the caller spills its registers below its own frame first, e.g. with setjmp). at_exit: the frames
 * of the exit machinery above sp are no roots either (see leakscan.c). */
void ct_leakscan_prepare(const void *sp, int at_exit);
/* The same in a handler of a signal that ends the program (SIGTERM): sp is the handler's frame, and
 * the interrupted registers and stack, in the ucontext_t the kernel saved, are roots too (the
 * handler may run on an alternate stack). Async-signal-safe. */
void ct_leakscan_prepare_signal(const void *sp, const void *ucontext);
/* On the writer, every event drained and every held block settled: classifies the live blocks,
 * writes a CLASSES record to out and the bytes and blocks of each class (CT_CLASS_*) to lost and
 * blocks. 0; 1 when the program's last scan has been made already (ct_leakscan_last): nothing done;
 * -1 when nothing was prepared or the roots could not be read (ct_leakscan_failure). */
int ct_leakscan(struct ct_rec_buf *out, uint64_t lost[CT_CLASSES], uint64_t blocks[CT_CLASSES]);
/* On the thread that asked for a scan, while it waits for the writer: helps mark the blocks when
 * the scan is open to it, else returns at once. Blocks the program's signals while it helps. */
void ct_leakscan_help(void);
/* The scan just made is the program's last (__lsan_do_leak_check): none at exit. */
void ct_leakscan_last(void);
/* The blocks the last scan found ignored by the program (LeakSanitizer's interface), and their bytes. */
void ct_leakscan_ignored(uint64_t *blocks, uint64_t *bytes);
/* Why the last ct_leakscan() gave no classes (the errno behind it in *err, 0 when none), or NULL. */
const char *ct_leakscan_failure(int *err);
/* Threads other than the exiting one that were alive at the scan and could not be stopped (ptrace
 * refused, and they block the signal that stops them then): their stacks were read whole as they
 * ran, their registers not at all. */
uint64_t ct_leakscan_threads_not_scanned(void);

#endif
