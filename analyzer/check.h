/* SPDX-License-Identifier: MIT */
/* The leak and peak rules a CI check applies (ctrack-analyze --fail-on, --max-leaked, --max-peak):
 * which leak classes count, how many bytes of them are allowed, how high the heap may peak. */
#ifndef CTRACK_CHECK_H
#define CTRACK_CHECK_H

#include <stdint.h>
#include <stdio.h>

#include "opttab.h"
#include "report.h"

/* The exit status of a broken rule: LeakSanitizer's. */
#define CT_CHECK_EXIT 23

/* The leak classes that count, each level adding to the one before: definitely and indirectly lost,
 * then possibly lost, then still reachable (all leaked bytes). */
enum ct_fail_on { CT_FAIL_NONE, CT_FAIL_DEFINITE, CT_FAIL_POSSIBLE, CT_FAIL_REACHABLE };

struct ct_suppressions;

struct ct_check {
	enum ct_fail_on fail_on;      /* CT_FAIL_NONE: no leak rule */
	struct ct_suppressions *supp; /* leaks they match count for no rule (NULL: none) */
	int supp_files;               /* --suppressions given: a trace without classes is an error */
	int builtin;                  /* apply the built-in suppressions too (suppress.c) */
	int report_only;              /* no rule, a plain report: suppressions name what they match, the
	                               * classes stay memcheck's (ct_check_suppress) */
	uint64_t max_leaked;          /* bytes of the counted classes allowed */
	int peak_rule;                /* --max-peak was given */
	uint64_t max_peak;
};

/* Whether a leak entry of kind (CT_CLASS_* + 1, CT_KIND_UNSCANNED + 1, or 0 in a trace without
 * classes) counts at level: a trace without classes counts only at reachable, unscanned blocks too. */
int ct_check_counts(enum ct_fail_on level, int kind);
/* The leaks that count at level, in words: "definitely or indirectly lost", ...; "leaked" for all
 * of an unclassified trace. */
const char *ct_check_level_words(enum ct_fail_on level, int classified);

/* The level named s ("definite", "possible", "reachable" or "any"), or -1. */
int ct_check_parse_level(const char *s);

/* 1 when the rules need leak classes that m lacks (a CLASSES record), else 0. */
int ct_check_needs_classes(const struct ct_check *c, const struct ct_model *m);

/* Applies the rules to r's trace: one line on out when they hold; else, per broken rule, a one-line
 * verdict and the entries that break it (as the text report prints them, to out). Returns 0 when
 * every rule holds, 1 when one is broken, or -ENOMEM. */
int ct_check_run(const struct ct_report *r, const struct ct_check *c, FILE *out);

/* Adds the suppressions of file path to c (made on first use). Returns 0, or -1 with a one-line
 * reason in err (unreadable file, a line that is not leak:PATTERN, no memory). */
int ct_check_add_suppressions(struct ct_check *c, const char *path, char *err, size_t errlen);
void ct_check_release(struct ct_check *c);
/* Adds the suppressions the traced program carries (its __lsan_default_suppressions(), recorded in
 * the trace) to c's, as LeakSanitizer applies them, and takes the leaks they all match out of m's
 * leak classes (ct_supp_apply), with a symbolizer of its own; with c->report_only, only counts what
 * each matches, for the report to say (c->supp). Returns 0, or -1 with a reason in err (a bad line,
 * --suppressions on a trace without classes, no memory). */
int ct_check_suppress(struct ct_check *c, struct ct_model *m, char *err, size_t errlen);

/* The whole check of the trace at path, as `ctrack --check` runs it after the program: read, the
 * default report (built-in folding, wrappers, by site), then the rules, printed to out. Returns 0
 * when every rule holds, 1 when one is broken, or -1 with a one-line reason in err (an unreadable
 * trace, one without the leak classes the rules need, no memory). */
int ct_check_trace(const char *path, struct ct_check *c, FILE *out, char *err, size_t errlen);

/* What the check options set, parsed alike for ctrack and ctrack-analyze (ct_check_options). */
struct ct_check_args {
	struct ct_check check;   /* the rules and the suppressions read; check.builtin is the caller's */
	const char **supp_files; /* the --suppressions files in order: the caller gives room for each
	                          * argument */
	size_t nsupp;
	int rules;      /* --fail-on, --max-leaked or --max-peak was given */
	int max_leaked; /* --max-leaked was given */
	int no_builtin; /* --no-builtin-suppressions */
};

/* The check options' heading in --help and the man pages. */
#define CT_CHECK_GROUP "Leak checks (CI)"

/* The check options' table rows (opttab.h), their context a struct ct_check_args: --fail-on,
 * --max-leaked, --max-peak, --suppressions, --no-builtin-suppressions. */
extern const struct ct_opt ct_check_options[];
extern const size_t ct_check_noptions;

#endif
