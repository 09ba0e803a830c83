/* SPDX-License-Identifier: MIT */
/* The files ctrack-analyze writes for people and other tools: flame graphs (SVG, folded stacks), the
 * HTML report, pprof, speedscope and massif, and the diff of two traces. Each shows report.c's frames. */
#ifndef CTRACK_EXPORT_H
#define CTRACK_EXPORT_H

#include <stdio.h>

#include "baseline.h"
#include "report.h"
#include "tree.h"

/* ---- export_folded.c ---- */

/* The folded-stack format of flamegraph.pl and inferno: "main;parse;xmalloc 1234", root first, one
 * line per stack that reads the same, with a non-zero self cost, sorted. Inlined frames are frames of
 * their own ("pick_[i]"). A tree keyed by line (t->by_function 0, --by-line) names each frame's line
 * as py-spy does, "main (prog.c:12)", unless the frame has no source line. Returns 0 or a negative
 * errno. */
int ct_write_folded(FILE *out, const struct ct_tree *t, enum ct_cost cost);

/* ---- flame_svg.c ---- */

struct ct_flame_opts {
	enum ct_cost cost;
	int diff;          /* widths from set 1 and set 0 together, colour from set 1 - set 0 (--diff) */
	int embedded;      /* an <svg> element for the HTML report: no XML prolog, no script of its own */
	const char *title; /* NULL: a title naming the cost */
	const char *id;    /* prefix of element ids, unique within an HTML page ("fg-leaked") */
	double width;      /* in pixels; 0: 1200 */
	double min_width;  /* frames narrower than this (pixels) are not drawn; 0: 0.1 */
	size_t max_frames; /* 0, or at most this many frames: the narrowest go first (a bounded page) */
	int icicle;        /* roots at the top (--icicle); else at the bottom, flamegraph.pl's flame. The
	                    * graph's "Icicle"/"Flame" button turns it over either way. */
	int full_names;    /* labels with the whole name (--full-names); else C++ names in short */
};

/* A self-contained interactive SVG flame graph of t (rooted at the allocation sites when t is
 * reversed). A frame's width is its total cost; its tooltip gives every figure (bytes and counts) and
 * the full name. Returns 0 or a negative errno. */
int ct_write_flamegraph(FILE *out, const struct ct_tree *t, const struct ct_flame_opts *o);

/* ---- report_html.c ---- */

/* One self-contained HTML page (the vendored libraries inlined, no URL): the figures, the leaks
 * (severity first, with source lines), invalid frees and symbol checks as HTML, and the data of the
 * views app.js draws (html_data.h: charts over time, a time window, top sites, trees, flame graph,
 * histogram). Returns 0 or a negative errno. */
int ct_write_html(FILE *out, const struct ct_report *r);

/* --diff BASE NEW --html: NEW's page (r) with the Diff view of html_data.h's struct ct_html_diff (BASE
 * a trace or a saved JSON report, matched as --baseline matches). Returns 0 or a negative errno. */
struct ct_html_diff;
int ct_write_html_diff(FILE *out, const struct ct_report *r, const struct ct_html_diff *diff);

/* ---- export_pprof.c ---- */

/* pprof's profile.proto, gzip-compressed: samples alloc_objects/count, alloc_space/bytes,
 * inuse_objects/count, inuse_space/bytes (in use: at exit, or at the peak when at_peak). Returns 0
 * or a negative errno. */
int ct_write_pprof(FILE *out, const struct ct_report *r, int at_peak);

/* ---- export_speedscope.c ---- */

/* speedscope's file format: one sampled profile per cost, weights in bytes or allocations. */
int ct_write_speedscope(FILE *out, const struct ct_report *r);

/* ---- export_massif.c ---- */

/* valgrind massif's out file: snapshots of the heap over time, every detailed_freq-th one (0: none)
 * detailed with the tree of what was live then, the peak and the exit detailed. */
int ct_write_massif(FILE *out, const struct ct_report *r, unsigned detailed_freq);

/* ---- export_ci.c ---- */

/* What a check fails on, for CI servers (docs: README's CI section): the leak sites, each invalid
 * free, a damaged or incomplete trace, and the shim's warnings. JUnit XML (a failing testcase per leak
 * site and invalid free, a testcase "trace" in error, the warnings in system-err, a passing one when
 * there is nothing else), SARIF 2.1.0 (a result each, with the backtraces as code flow and stacks; the
 * trace's state and the warnings as the invocation's notifications) and GitHub workflow commands (an
 * ::error line each, a ::warning per warning). Source paths under the current directory are written
 * relative to it. Only the leaks whose kind counts at level (check.h's enum ct_fail_on: definitely and
 * indirectly lost for CT_FAIL_DEFINITE, ...) are listed; every invalid free is. Each returns 0 or a
 * negative errno. */
int ct_write_junit(FILE *out, const struct ct_report *r, int level);
int ct_write_sarif(FILE *out, const struct ct_report *r, int level);
int ct_write_github(FILE *out, const struct ct_report *r, int level);

/* ---- diff.c ---- */

/* Per site, matched as --baseline matches them (ct_baseline_pairs): the change from base to new in
 * leaked bytes, peak contribution and allocations, largest first, as text or JSON. Baselines made
 * at CT_FAIL_REACHABLE (every leaked byte), base's of a report or of a saved JSON report; the
 * reports they were made of still open. Returns 0 or a negative errno. */
int ct_write_diff(FILE *out, const struct ct_baseline *base, const struct ct_baseline *new, int json);

#endif
