/* SPDX-License-Identifier: MIT */
/* The live view of a trace being written (ctrack-analyze --follow, ctrack --live): on a terminal, a
 * screen redrawn about once a second (heap in use, its peak, allocations and frees per second, RSS,
 * the top sites by a cost, a site's backtrace) with keys to select, sort and quit; without one, a
 * plain line per refresh. It takes a trace path and, when known, the writer's pid: whatever writes
 * the trace (a program ctrack runs, one it attached to) is none of its business. */
#ifndef CTRACK_LIVEVIEW_H
#define CTRACK_LIVEVIEW_H

#include <stdint.h>
#include <stdio.h>

#include "follow.h"
#include "model.h"

struct ct_liveview_opts {
	const char *trace;  /* the trace being written */
	uint64_t writer;    /* its writer's pid, or 0: the trace's PROCESS record says */
	const char *output; /* where the traced program's output goes (shown), or NULL */
	FILE *plain;        /* the plain lines without a terminal; the screen needs this one to be a
	                     * terminal, and draws on the controlling terminal (/dev/tty) */
	int own_signals;    /* SIGINT, SIGTERM and SIGHUP stop the view (else the caller's handlers stay) */
	int linger;         /* on a terminal, the view stays after the trace ended, until q */
};

/* How the view ended. */
struct ct_liveview_end {
	enum ct_follow_state state; /* ENDED, GONE (cut, writer gone), STOPPED (q or a signal), DAMAGED */
	int signal;                 /* the signal that stopped it (own_signals), or 0 */
	int terminal;               /* it drew on a terminal (restored since) */
	uint64_t writer;            /* the writer's pid, 0 if never known */
};

/* Follows o->trace into m (initialised by the caller; destroyed by it) and shows it until the trace
 * ends (and, lingering, until q) or the user quits. The terminal is restored on every way out,
 * fatal signals included. Returns 0, or -1 with a one-line reason in err. */
int ct_liveview_run(const struct ct_liveview_opts *o, struct ct_model *m, struct ct_liveview_end *end,
                    char *err, size_t errlen);

#endif
