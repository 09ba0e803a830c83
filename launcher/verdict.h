/* SPDX-License-Identifier: MIT */
/* ctrack --check after the run: the rules (analyzer/check.h) applied to the program's trace, and
 * with --follow-children to every traced process's, as LeakSanitizer checks every process. */
#ifndef CTRACK_VERDICT_H
#define CTRACK_VERDICT_H

#include <stddef.h>

#include "check.h"
#include "family.h"

/* Checks f's traces against rules (whose --suppressions files are files[0..nfiles): each trace gets
 * them afresh, with its own program's suppressions) and prints the verdicts on stderr. Returns
 * ctrack's exit status: status, the program's own, when it failed; else CT_CHECK_EXIT when a
 * process broke a rule, 1 when a trace could not be checked, 0 when all passed. */
int ct_verdict(const struct ct_family *f, const struct ct_check *rules, const char *const *files,
               size_t nfiles, int status);

#endif
