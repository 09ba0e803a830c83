/* SPDX-License-Identifier: MIT */
/* The HTML report's data (html_data.c): the JSON document analyzer/html/app.js draws its views from,
 * aggregated per site and per time slice, never per event. The schema is the contract the page's
 * modules share (meta, totals, frames, stacks, sites, timeline, marks, histogram, sources, diff);
 * every "</" is written "<\/" and every "<!--" "\u003c!--", so the document can sit in a <script>. */
#ifndef CTRACK_HTML_DATA_H
#define CTRACK_HTML_DATA_H

#include <stdio.h>

#include "report.h"

/* Writes r's data as one JSON document on out. Returns 0 or a negative errno (-ENOMEM). */
int ct_html_data(FILE *out, const struct ct_report *r);

#endif
