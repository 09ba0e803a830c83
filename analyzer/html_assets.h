/* SPDX-License-Identifier: MIT */
/* The files the HTML report inlines (the vendored libraries, analyzer/html/'s style sheet and
 * scripts), compiled in by analyzer/html_embed.py in the order the page needs them. */
#ifndef CTRACK_HTML_ASSETS_H
#define CTRACK_HTML_ASSETS_H

#include <stddef.h>

struct ct_html_asset {
	const char *name;          /* the file's name ("uPlot.iife.min.js") */
	int css;                   /* 1: a style sheet, 0: a script */
	const unsigned char *data; /* its bytes (never holding "</script" or "</style"), NUL after them */
	size_t len;
};

extern const struct ct_html_asset ct_html_assets[];
extern const size_t ct_html_nassets;

#endif
