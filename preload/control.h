/* SPDX-License-Identifier: MIT */
/* The leak scan on demand (control.c), for include/ctrack/ctrack.h's check and LeakSanitizer's
 * (lsan.c). Called by the program outside any hook. */
#ifndef CTRACK_CONTROL_H
#define CTRACK_CONTROL_H

#include <stdint.h>

#include "ctrack/record.h"

/* Scans now, with the caller's frames and registers as the asking thread's roots: the bytes and
 * blocks of each class (CT_CLASS_*) in lost and blocks. 0, or -1 when the trace is not this
 * process's or the scan could not run. */
int ct_control_check(uint64_t lost[CT_CLASSES], uint64_t blocks[CT_CLASSES]);

#endif
