/* SPDX-License-Identifier: MIT */
/* The leak classes at exit (leakscan.c): the exiting thread hands over its roots, the writer scans
 * the program's memory after its last drain and writes the CLASSES record before END. */
#ifndef CTRACK_LEAKSCAN_H
#define CTRACK_LEAKSCAN_H

#include <stdint.h>

#include "ctrack/record.h"

/* At start-up, outside any hook: looks up what the scan needs from libc and ld.so (dlsym). */
void ct_leakscan_init(void);
/* On the exiting thread, before it asks the writer to finish: sp is the lowest address of its
 * stack that holds the program's data (everything above it, up to the stack's top, is a root; the
 * caller spills its registers below its own frame first, e.g. with setjmp). */
void ct_leakscan_prepare(const void *sp);
/* On the writer, every event drained and every held block settled: classifies the live blocks and
 * writes a CLASSES record to out. 0, or -1 when nothing was prepared or memory ran out. */
int ct_leakscan(struct ct_rec_buf *out);
/* Threads other than the exiting one that were still alive at the scan: their stacks were not
 * scanned (this version does not stop them). */
uint64_t ct_leakscan_threads_not_scanned(void);

#endif
