/* SPDX-License-Identifier: MIT */
/* The HTML report's data (html_data.c): the JSON document analyzer/html/app.js draws its views from,
 * aggregated per site and per time slice, never per event. The schema is the contract the page's
 * modules share (meta, totals, frames, stacks, sites, timeline, marks, histogram, sources, diff);
 * every "</" is written "<\/" and every "<!--" "\u003c!--", so the document can sit in a <script>. */
#ifndef CTRACK_HTML_DATA_H
#define CTRACK_HTML_DATA_H

#include <stdio.h>

#include "baseline.h"
#include "report.h"

/* Writes r's data as one JSON document on out. Returns 0 or a negative errno (-ENOMEM). */
int ct_html_data(FILE *out, const struct ct_report *r);

/* What the diff view compares (--diff BASE NEW --html): the page is NEW's (r below). The baselines are
 * made at CT_FAIL_REACHABLE (every leaked byte), new's of r; base_report is BASE's report when BASE is
 * a trace (its stacks give the gone sites' frames and the flame graph of the change), NULL when it is a
 * saved JSON report. All are the caller's and stay open while the page is written. */
struct ct_html_diff {
	const struct ct_baseline *base, *new;
	const struct ct_report *base_report;
};

/* As ct_html_data, with "diff" filled from d (NULL: "diff": null; docs/json-schema.md, "Diff"). */
int ct_html_data_diff(FILE *out, const struct ct_report *r, const struct ct_html_diff *d);

#endif
