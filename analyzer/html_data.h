/* SPDX-License-Identifier: MIT */
/* The HTML report's data (html_data.c): the JSON document analyzer/html/app.js draws its views from,
 * aggregated per site and per time slice, never per event. The schema is the contract the page's
 * modules share (meta, totals, frames, stacks, sites, timeline, marks, histogram, sources, diff);
 * every "</" is written "<\/" and every "<!--" "\u003c!--", so the document can sit in a <script>. */
#ifndef CTRACK_HTML_DATA_H
#define CTRACK_HTML_DATA_H

#include <stdint.h>
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

/* ---- between html_data.c and html_diff.c ---- */
/* The document being written (html_data.c). */
struct ct_html_doc;
/* The index of frame f in the document's frames, added when new; -ENOMEM. */
long ct_html_doc_frame(struct ct_html_doc *d, const struct ct_frame *f);
/* The index of the site of stack node `stack` in the page's report, or -1. */
long ct_html_doc_site(const struct ct_html_doc *d, uint32_t stack);
/* A site's leaks by kind: [[blocks, bytes] x CT_KINDS], or null when the trace is not classified. */
void ct_html_put_kinds(FILE *out, const struct ct_site *s, int classified);
/* The page's report (NEW's, in a diff). */
const struct ct_report *ct_html_doc_report(const struct ct_html_doc *d);
/* html_diff.c: the diff as a JSON value into *buf (malloc'd, the caller's; *len its bytes), its
 * frames interned into d's. 0 or a negative errno. */
int ct_html_diff_json(struct ct_html_doc *d, const struct ct_html_diff *in, char **buf, size_t *len);

#endif
