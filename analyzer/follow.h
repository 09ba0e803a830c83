/* SPDX-License-Identifier: MIT */
/* Following a trace while its writer still writes it (ctrack-analyze --follow, ctrack --live): the
 * reader reads to the end of the bytes flushed so far, waits there and reads again, until the trace
 * ends (END or EXEC), its writer is gone or the view asks to stop, and the model is updated record by
 * record meanwhile. Between two reads it asks the view to draw (about once a second) and to read
 * its keys. Knows nothing of terminals: liveview.c is the view. */
#ifndef CTRACK_FOLLOW_H
#define CTRACK_FOLLOW_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* How far the following got. */
enum ct_follow_state {
	CT_FOLLOW_LIVE,    /* reading as the writer writes */
	CT_FOLLOW_ENDED,   /* the trace ended (END, or EXEC: the process became another program) */
	CT_FOLLOW_GONE,    /* the writer is gone and the trace ends without END (killed, cut) */
	CT_FOLLOW_STOPPED, /* the view asked to stop (q, a signal) */
	CT_FOLLOW_DAMAGED, /* the trace is damaged after its header: read up to the damage */
};

/* What the view is shown with the model at each draw. */
struct ct_follow_status {
	const char *path;           /* the trace */
	enum ct_follow_state state; /* LIVE while reading; the outcome once ct_follow_run returned */
	int caught_up;              /* the reader has reached the end of the bytes written so far */
	uint64_t writer;     /* the writer's pid (the hint, or the PROCESS record's), 0: not known yet */
	uint64_t elapsed_us; /* since the traced process started (its wall clock while it runs) */
	/* allocations and frees per second since the previous draw (by the wall clock once the reader has
	 * caught up, by the trace's clock while it reads what was written before), or over the whole run
	 * once the trace ended */
	double alloc_rate, free_rate;
};

/* The view's part. */
struct ct_follow_view {
	int key_fd; /* waited on with the file's end (poll), or -1: no keys */
	/* Draws m as st says (about once a second, and whenever keys asked for it). */
	void (*draw)(void *arg, const struct ct_model *m, const struct ct_follow_status *st);
	/* Reads the keys waiting on key_fd: 1 to stop following, 2 to draw now, else 0. */
	int (*keys)(void *arg);
	/* Set by a signal handler to stop following, and to draw again now (SIGWINCH) (NULL: none). */
	volatile sig_atomic_t *stop, *redraw;
	void *arg;
};

/* Reads the trace at path into m (initialised by the caller) while it is written, as the file
 * comment says. writer: the writing process's pid when the caller knows it (the launcher's child;
 * its zombie counts as gone), else 0 for the trace's PROCESS record. st is the final status. Returns 0,
 * or -1 with a one-line reason in err (a missing file, not a trace, nothing written for 10 s by a
 * writer not known). */
int ct_follow_run(const char *path, uint64_t writer, struct ct_model *m, const struct ct_follow_view *v,
                  struct ct_follow_status *st, char *err, size_t errlen);

#endif
