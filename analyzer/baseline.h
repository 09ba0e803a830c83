/* SPDX-License-Identifier: MIT */
/* Baselines (ctrack-analyze --baseline BASE NEW, and --diff with --fail-on or --max-growth): a run's
 * leaked and peak bytes per site compared with an earlier run's, a trace or a saved JSON report. */
#ifndef CTRACK_BASELINE_H
#define CTRACK_BASELINE_H

#include <stdint.h>
#include <stdio.h>

#include "check.h"
#include "report.h"

/* How much a figure may grow: a share of the base's figure (5%), or bytes (10KiB). A share is kept
 * as the decimal it was written in, share / 10^scale percent, so its allowance is exact. */
struct ct_growth {
	int relative;   /* the share is the allowance, else bytes */
	uint64_t share; /* below 10^18 */
	unsigned scale; /* digits after the point, at most 18 */
	uint64_t bytes;
};

/* Parses "5%", "2.5%" (digits, maybe a point and digits, 18 digits at most) or a size
 * (ct_parse_size). Returns 0, or -1 on anything else. */
int ct_growth_parse(const char *s, struct ct_growth *g);

/* The most a figure of base may become under g: a share's fraction of a byte counts as a byte, so
 * the allowance is never smaller than the share says (UINT64_MAX when that is more). */
uint64_t ct_growth_allowed(uint64_t base, const struct ct_growth *g);

/* A run's figures per site. A site is the first frame a report shows of an entry: its function and
 * source file, not its line (lines move when code above is edited) and never its address. */
struct ct_baseline;

/* The baseline of r's run: the leaks of the kinds that count at level (check.c), and the peak. 0 or
 * -ENOMEM; *out is the caller's to free either way. */
int ct_baseline_of_report(const struct ct_report *r, enum ct_fail_on level, struct ct_baseline **out);

/* The baseline of a saved JSON report (ctrack-analyze --json). Returns 0, or -1 with a one-line
 * reason in err (unreadable, not a ctrack JSON report, no leak kinds though level needs them). */
int ct_baseline_of_json(const char *path, enum ct_fail_on level, struct ct_baseline **out, char *err,
                        size_t errlen);

/* 1 when the file at path is a JSON report (its first non-blank byte is '{'), 0 when it is not, or
 * -errno when it cannot be read. */
int ct_baseline_is_json(const char *path);

/* Compares new's run (a report) with base at level, allowing growth g per site, for the total
 * leaked and for the peak: prints what grew past the allowance and what is new, with backtraces,
 * then a verdict line, to out. Returns 0 when nothing grew past the allowance, 1 when something
 * did, or -ENOMEM. */
int ct_baseline_check(const struct ct_baseline *base, const struct ct_report *new, enum ct_fail_on level,
                      const struct ct_growth *g, FILE *out);

void ct_baseline_free(struct ct_baseline *b);

/* The trace or JSON report a baseline was made of, and its run's totals (allocations, frees,
 * bytes_allocated, temporary, peak, current, live_allocations; the rest 0 for a JSON report). */
const char *ct_baseline_path(const struct ct_baseline *b);
const struct ct_totals *ct_baseline_totals(const struct ct_baseline *b);

/* One site's figures in one run. A JSON report lists all its leaks but only its top sites at the
 * peak and by allocations: a figure it does not list is unknown, not 0. */
struct ct_site_figures {
	uint64_t leaked_bytes, leaked_blocks, peak_bytes, allocations, bytes_allocated;
	int peak_known, allocations_known;
};

/* A site of either run, matched across them as --baseline matches (by its first shown frame's
 * function and source file's base name; never its line nor its address), with both runs' figures:
 * in_base and in_new say where it was found (only in new: a new site; only in base: gone). */
struct ct_site_pair {
	const char *function,
	    *file;     /* the key (file: the base name, NULL when unknown); owned by the baselines */
	unsigned line; /* its line in new, else in base (shown, never compared) */
	int in_base, in_new;
	struct ct_site_figures base, new;
	/* The run's largest entry of the site in a report's ranking `*_by` (for its backtrace, with the
	 * report ct_baseline_report gives), or NULL (not in that run, or a JSON report). */
	const struct ct_site *base_entry, *new_entry;
	enum ct_rank base_by, new_by;
};

/* Every site of base and new, matched, in key order (function, then file), into a malloc'd array
 * (*out, the caller's to free; NULL when there are none); baselines made at CT_FAIL_REACHABLE hold
 * every leaked byte. Valid as long as both baselines are. Returns the count or -ENOMEM. */
long ct_baseline_pairs(const struct ct_baseline *base, const struct ct_baseline *new,
                       struct ct_site_pair **out);

/* The report a baseline was made of (whose stacks a pair's entries name), or NULL for a JSON report.
 * It must still be open. */
const struct ct_report *ct_baseline_report(const struct ct_baseline *b);

#endif
