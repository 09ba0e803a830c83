/* SPDX-License-Identifier: MIT */
/* The closing message, on stderr: where the trace went, its summary, the commands that analyze it,
 * and with --follow-children the summaries of the children's traces, which are the ctrack.*.zst
 * files that appeared in the trace's directory during the run. */
#ifndef CTRACK_CLOSING_H
#define CTRACK_CLOSING_H

#include <limits.h>
#include <stddef.h>

/* File names in a directory, sorted; the strings and the array are owned. */
struct ct_trace_list {
	char **v;
	size_t n;
};

struct ct_closing {
	int quiet;                   /* -q: print nothing */
	int follow_children;         /* children were traced */
	int children;                /* dir was listed: the children's traces can be told apart */
	char dir[PATH_MAX];          /* the trace's directory, absolute */
	struct ct_trace_list before; /* the traces in dir before the run */
};

/* Prepares the message for a trace named like trace (only its directory counts): with
 * follow_children, lists the traces already in that directory, so it must run before the program
 * can write any. Cannot fail: an unreadable directory only hides the children. */
void ct_closing_init(struct ct_closing *c, const char *trace, int follow_children, int quiet);

/* Prints the message for the trace the program wrote to trace (ct_spawn_result's name). */
void ct_closing_print(const struct ct_closing *c, const char *trace);

/* "ctrack: PROG was killed by SIGSEGV (Segmentation fault)" on stderr, -q or not: the launcher's
 * exit status (128 + sig, as a shell gives) no longer says it. */
void ct_closing_signal(const char *prog, int sig);

/* Frees what ct_closing_init allocated. */
void ct_closing_release(struct ct_closing *c);

#endif
