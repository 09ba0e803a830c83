/* SPDX-License-Identifier: MIT */
/* The closing message, on stderr: where the trace went, its summary, the commands that analyze it,
 * and with --follow-children the summaries of the descendants' traces, which of them still run, and
 * the children that could not be traced (family.h finds them all). */
#ifndef CTRACK_CLOSING_H
#define CTRACK_CLOSING_H

#include "family.h"

/* Prints the message for the run f (collected). With quiet, only a trace file that someone else
 * replaced or removed during the run is said: the trace is lost. */
void ct_closing_print(const struct ct_family *f, int quiet);

/* "ctrack: PROG was killed by SIGSEGV (Segmentation fault)" on stderr, -q or not: the launcher's
 * exit status (128 + sig, as a shell gives) no longer says it. */
void ct_closing_signal(const char *prog, int sig);

#endif
