/* SPDX-License-Identifier: MIT */
/* ctrack --live: the program runs traced as ctrack runs it, and the launcher shows its trace as it is
 * written (analyzer/liveview.h) until the program ends or the user quits the view (q: the program
 * runs on, traced, to its end, and ctrack waits for it). The view needs the terminal: whichever of
 * the program's stdin, stdout and stderr is a terminal is taken from it, stdin from /dev/null and
 * the output to a file beside the trace (ctrack.NAME.PID.out for ctrack.NAME.PID.zst), which the
 * view names. What the user redirected stays as it was. The hooks are spawn.h's. */
#ifndef CTRACK_LIVE_H
#define CTRACK_LIVE_H

#include <limits.h>

#include "spawn.h"

struct ct_live {
	const char *prog; /* the program as typed, for messages */
	int force;        /* --force: an existing output file is replaced, as the trace is */
};

/* spawn.h's before_exec: the program's terminal descriptors to /dev/null and the output file. */
int ct_live_before_exec(const char *trace, void *arg);

/* After ct_spawn_run failed: the output file before_exec made, if it did (the exec failed), removed
 * as the trace was. */
void ct_live_failed(const struct ct_spawn_result *r);

/* spawn.h's running: the view, until the trace ends or the user quits it. */
void ct_live_running(const struct ct_spawn_result *r, void *arg);

#endif
