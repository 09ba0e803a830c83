/* SPDX-License-Identifier: MIT */
/* The HTML report: one self-contained page. The analyzer writes the figures, the leaks, the invalid
 * frees and the symbol checks as HTML, and the data of the interactive views as one JSON document
 * (html_data.h); analyzer/html/app.js draws the views from it with the vendored libraries, which
 * html_assets.c inlines, so the page names no URL and loads nothing. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose.h"
#include "export.h"
#include "html_assets.h"
#include "html_data.h"
#include "markup.h"
#include "rules.h"
#include "aggregated.h"
#include "sampling.h"
#include "shortname.h"

/* Leaks listed with their backtraces: a few kilobytes each, so a program leaking from a million
 * places still gives a page a browser opens; the rest are summed up in one line. */
#define MAX_LEAKS 1000

/* Records uncaught errors on <html data-errors>, so a headless browser's DOM dump shows them. */
static const char error_script[] =
    "window.addEventListener('error',function(e){var d=document.documentElement;"
    "d.setAttribute('data-errors',(d.getAttribute('data-errors')||'')+(e.message||'error')+'\\n');});\n";

static double seconds(uint64_t us)
{
	return (double)us / 1e6;
}

static double percent(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* ---- the inlined files ---- */

static void put_assets(FILE *out, int css)
{
	for (size_t i = 0; i < ct_html_nassets; i++) {
		const struct ct_html_asset *a = &ct_html_assets[i];
		if (a->css != css)
			continue;
		fprintf(out, css ? "<style data-file=\"%s\">\n" : "<script data-file=\"%s\">\n", a->name);
		fwrite(a->data, 1, a->len, out);
		fputs(css ? "\n</style>\n" : "\n</script>\n", out);
	}
}

/* ---- header and summary ---- */

static int put_head(FILE *out, const struct ct_report *r, const struct ct_html_diff *diff)
{
	const struct ct_process *p = &r->m->proc;
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>ctrack: ",
	      out);
	ct_xml_text(out, p->seen && p->argc ? ct_basename(p->argv[0].data) : ct_basename(r->path));
	fprintf(out, "</title>\n<script>\n%s</script>\n", error_script);
	put_assets(out, 1);
	/* The data and the scripts before the body (app.js draws once the document is parsed): what
	 * follows a section of the page is page, never script. */
	fputs("<script type=\"application/json\" id=\"ct-data\">", out);
	int rc = ct_html_data_diff(out, r, diff);
	fputs("</script>\n", out);
	put_assets(out, 0);
	fputs("</head>\n<body>\n<header id=\"top\">\n<h1>ctrack heap report</h1>\n<p class=\"meta\">trace "
	      "<code "
	      "id=\"trace\">",
	      out);
	ct_xml_text(out, r->path);
	if (r->m->damaged)
		fprintf(out, "</code> (damaged near byte %" PRIu64 ": read up to there)", r->m->damaged_at);
	else
		fprintf(out, "</code>%s", r->m->complete ? "" : " (truncated)");
	if (p->seen) {
		/* One <code> per argument: unambiguous without shell quoting. */
		fprintf(out, ", pid %" PRIu64 ", command <span id=\"command\">", p->pid);
		for (size_t i = 0; i < p->argc; i++) {
			fputs("<code>", out);
			ct_xml_text(out, p->argv[i].data);
			fputs("</code>", out);
		}
		fputs("</span>", out);
	}
	fputs("</p>\n", out);
	return rc;
}

static void put_note(FILE *out, const struct ct_note *n)
{
	fprintf(out, "<li class=\"note %s\" data-count=\"%" PRIu64 "\"><b>%s:</b> ",
	        n->warning ? "warning" : "info", n->count, n->warning ? "warning" : "note");
	ct_xml_text(out, n->text.data);
	if (n->count > 1)
		fprintf(out, " (%" PRIu64 " times)", n->count);
	fputs("</li>\n", out);
}

/* The shim's notes (a dropped event, a write error, a clamped setting), warnings first, above the
 * figures they qualify; nothing when there are none. */
static void put_notes(FILE *out, const struct ct_model *m)
{
	if (!m->nnotes)
		return;
	fputs("<ul class=\"notes\" id=\"notes\">\n", out);
	for (int warning = 1; warning >= 0; warning--)
		for (size_t i = 0; i < m->nnotes; i++)
			if (!m->notes[i].warning == !warning)
				put_note(out, &m->notes[i]);
	fputs("</ul>\n", out);
}

/* One line that qualifies every figure below it, id naming it for the page and its tests. */
static void put_qualifier(FILE *out, const char *id, const char *line)
{
	fprintf(out, "<p class=\"note info\" id=\"%s\" data-test=\"%s\"><b>note:</b> ", id, id);
	ct_xml_text(out, line);
	fputs("</p>\n", out);
}

/* A sampled trace's line saying its figures are estimates, an aggregated trace's saying its charts
 * have the snapshots' resolution: above the figures. */
static void put_qualifiers(FILE *out, const struct ct_model *m)
{
	char line[160];
	if (m->sample_rate) {
		ct_sampling_note(line, sizeof(line), m->sample_rate);
		put_qualifier(out, "sampled", line);
	}
	if (m->aggregate_us) {
		ct_aggregated_note(line, sizeof(line), m->aggregate_us);
		put_qualifier(out, "aggregated", line);
	}
}

/* One figure: its exact value in data-value, its text as the text report words it. */
static void put_figure(FILE *out, const char *id, const char *label, uint64_t value, const char *text)
{
	fprintf(
	    out,
	    "<div class=\"fig\"><div class=\"label\">%s</div><div class=\"value\" id=\"%s\" data-test=\"%s\" "
	    "data-value=\"%" PRIu64 "\">",
	    label, id, id, value);
	ct_xml_text(out, text);
	fputs("</div></div>\n", out);
}

static void put_kind_figures(FILE *out, const struct ct_report *r)
{
	static const char *const ids[CT_KINDS] = {"definitely-lost", "indirectly-lost", "possibly-lost",
	                                          "still-reachable", "unscanned"};
	uint64_t blocks[CT_KINDS], bytes[CT_KINDS];
	char b[64], s[160];
	ct_model_class_totals(r->m, blocks, bytes);
	for (int k = 0; k < CT_KINDS; k++) {
		if (k == CT_KIND_UNSCANNED && !blocks[k])
			continue;
		snprintf(s, sizeof(s), "%s in %" PRIu64 " block%s", ct_fmt_bytes(b, sizeof(b), bytes[k]),
		         blocks[k], blocks[k] == 1 ? "" : "s");
		put_figure(out, ids[k], ct_kind_label(k + 1), bytes[k], s);
	}
}

static void put_summary(FILE *out, const struct ct_report *r)
{
	const struct ct_totals *t = &r->m->t;
	uint64_t run = ct_model_runtime_us(r->m);
	char b[64], s[160];
	fputs("<div class=\"figures\" id=\"summary\">\n", out);
	if (r->m->classified) /* severity first: what was lost leads */
		put_kind_figures(out, r);
	snprintf(s, sizeof(s), "%.3f s", seconds(run));
	put_figure(out, "runtime", "runtime", run, s);
	snprintf(s, sizeof(s), "%" PRIu64, t->allocations);
	if (run)
		snprintf(s, sizeof(s), "%" PRIu64 " (%.0f/s)", t->allocations,
		         (double)t->allocations / seconds(run));
	put_figure(out, "allocations", "calls to allocation functions", t->allocations, s);
	snprintf(s, sizeof(s), "%" PRIu64, t->frees);
	put_figure(out, "frees", "frees", t->frees, s);
	put_figure(out, "bytes-allocated", "bytes allocated", t->bytes_allocated,
	           ct_fmt_bytes(b, sizeof(b), t->bytes_allocated));
	snprintf(s, sizeof(s), "%" PRIu64 " (%.1f%% of allocations)", t->temporary,
	         percent(t->temporary, t->allocations));
	put_figure(out, "temporary", "temporary allocations", t->temporary, s);
	snprintf(s, sizeof(s), "%s at %.3f s", ct_fmt_bytes(b, sizeof(b), t->peak), seconds(t->peak_time_us));
	put_figure(out, "peak-heap", "peak heap", t->peak, s);
	put_figure(out, "peak-rss", "peak RSS", t->peak_rss,
	           t->peak_rss ? ct_fmt_bytes(b, sizeof(b), t->peak_rss) : "not sampled");
	put_figure(out, "leaked-bytes", "live at exit", t->current, ct_fmt_bytes(b, sizeof(b), t->current));
	snprintf(s, sizeof(s), "%" PRIu64, t->live_allocations);
	put_figure(out, "leaked-allocations", "blocks live at exit", t->live_allocations, s);
	if (t->invalid_frees) {
		snprintf(s, sizeof(s), "%" PRIu64, t->invalid_frees);
		put_figure(out, "invalid-frees-count", "invalid frees", t->invalid_frees, s);
	}
	uint64_t before = ct_model_frees_before_tracing(r->m);
	if (before) {
		snprintf(s, sizeof(s), "%" PRIu64, before);
		put_figure(out, "unmatched-frees", "frees of blocks allocated before tracing", before, s);
	}
	fputs("</div>\n", out);
}

static void put_wrappers(FILE *out, const struct ct_report *r)
{
	if (!r->nwrappers)
		return;
	fprintf(out,
	        "<p id=\"wrappers\" data-count=\"%zu\">allocator wrappers folded (their callers are the "
	        "sites; <code>--no-auto-fold</code> shows them):",
	        r->nwrappers);
	for (size_t i = 0; i < r->nwrappers; i++) {
		/* Named as the text report names them (shortened unless --full-names); the full name and
		 * module on hover. */
		char name[512];
		const struct ct_frame f = {.function = r->wrappers[i].function};
		fputs(i ? ", <code title=\"" : " <code title=\"", out);
		ct_xml_text(out, r->wrappers[i].function);
		if (r->wrappers[i].module) {
			fputs(" (", out);
			ct_xml_text(out, r->wrappers[i].module);
			fputc(')', out);
		}
		fputs("\">", out);
		ct_xml_text(out, ct_frame_display_name(r, &f, name, sizeof(name)));
		fputs("</code>", out);
	}
	fputs("</p>\n", out);
}

/* ---- leaks ---- */

struct frame_list {
	FILE *out;
	const char *module; /* of the previous frame: a run of frames in one module names it once */
	unsigned from, to;  /* the frames listed: from <= index < to */
};

/* A frame of a backtrace; app.js finds its source lines by data-file and data-line. */
static int put_frame(void *ctx, const struct ct_frame *f, unsigned index)
{
	struct frame_list *l = ctx;
	FILE *out = l->out;
	char shortened[512];
	if (index < l->from || index >= l->to)
		return 0;
	const char *name =
	    strchr(f->function, '(') ? ct_short_name(f->function, shortened, sizeof(shortened)) : f->function;
	fprintf(out, "<li value=\"%u\" data-function=\"", index);
	ct_xml_text(out, f->function);
	fputs("\" data-file=\"", out);
	ct_xml_text(out, f->file);
	fprintf(out,
	        "\" data-line=\"%u\" data-inlined=\"%d\"><span class=\"addr\">0x%" PRIx64
	        "</span> <b title=\"",
	        f->line, f->inlined, f->address);
	ct_xml_text(out, f->function);
	fputs("\">", out);
	ct_xml_text(out, name);
	fputs("</b>", out);
	if (f->file) {
		fputs(" at <span class=\"loc\">", out);
		ct_xml_text(out, f->file);
		fprintf(out, ":%u</span>", f->line);
	}
	if (f->module && (!l->module || strcmp(l->module, f->module))) {
		fputs(" <span class=\"mod\" title=\"", out);
		ct_xml_text(out, f->module);
		fputs("\">(", out);
		ct_xml_text(out, ct_basename(f->module));
		fputs(")</span>", out);
	}
	l->module = f->module;
	fputs(f->inlined ? " <span class=\"inl\">[inlined]</span></li>\n" : "</li>\n", out);
	return 0;
}

/* "144 bytes in 3 allocations (50.0%)": a part of a leak. */
static void put_part(FILE *out, const char *what, const struct ct_site *part, const struct ct_site *whole)
{
	char b[64];
	fprintf(out,
	        "<p class=\"caller\" data-bytes=\"%" PRIu64 "\" data-allocations=\"%" PRIu64
	        "\">%s%s in %" PRIu64 " allocation%s (%.1f%%)%s</p>\n",
	        part->leaked_bytes, part->leaked_allocations, what,
	        ct_fmt_bytes(b, sizeof(b), part->leaked_bytes), part->leaked_allocations,
	        part->leaked_allocations == 1 ? "" : "s", percent(part->leaked_bytes, whole->leaked_bytes),
	        *what ? "" : ":");
}

/* The backtraces of a leak of several after the frames they share, each under its figures. */
static int put_leak_callers(FILE *out, const struct ct_report *r, const struct ct_site *s,
                            const struct ct_callers *c, const char *module)
{
	int truncated = 0, rc = 0;
	fprintf(out, "<p class=\"callers\">from %zu backtraces:</p>\n", c->n);
	for (size_t i = 0; i < c->n && i < r->callers && !rc; i++) {
		struct frame_list l = {out, module, (unsigned)c->common, UINT_MAX};
		put_part(out, "", &c->v[i], s);
		fputs("<ol class=\"bt\">\n", out);
		rc = ct_report_frames(r, c->v[i].stack, put_frame, &l, &truncated);
		if (truncated)
			fputs("<li class=\"cut\">... (deeper frames were not captured)</li>\n", out);
		fputs("</ol>\n", out);
	}
	if (c->n > r->callers) {
		struct ct_site rest;
		char what[64];
		ct_callers_rest(c, r->callers, &rest);
		snprintf(what, sizeof(what), "and %zu other backtrace%s: ", c->n - r->callers,
		         c->n - r->callers == 1 ? "" : "s");
		put_part(out, what, &rest, s);
	}
	return rc;
}

/* The first r->top leaks open, the others folded: long lists stay readable, none is left out. A
 * leak of several backtraces lists the frames they share, then the largest under their figures. */
static int put_leak(FILE *out, const struct ct_report *r, const struct ct_site *s, size_t rank)
{
	struct ct_callers c;
	char b[64];
	int truncated = 0, rc = ct_report_callers(r, CT_BY_LEAKED, s, &c);
	if (rc < 0)
		return rc;
	struct frame_list l = {out, NULL, 0, (unsigned)c.common};
	fprintf(out,
	        "<details class=\"leak\" data-test=\"leak\" data-bytes=\"%" PRIu64
	        "\" data-allocations=\"%" PRIu64 "\"",
	        s->leaked_bytes, s->leaked_allocations);
	if (s->kind) /* a classified trace's leaks */
		fprintf(out, " data-kind=\"%s\"", ct_kind_name(s->kind));
	fprintf(out, "%s><summary>#%zu: %s %s in %" PRIu64 " allocation%s</summary>\n<ol class=\"bt\">\n",
	        rank < r->top ? " open" : "", rank + 1, ct_fmt_bytes(b, sizeof(b), s->leaked_bytes),
	        ct_kind_label(s->kind), s->leaked_allocations, s->leaked_allocations == 1 ? "" : "s");
	rc = ct_report_frames(r, c.v[0].stack, put_frame, &l, &truncated);
	if (c.n == 1 && truncated)
		fputs("<li class=\"cut\">... (deeper frames were not captured)</li>\n", out);
	fputs("</ol>\n", out);
	if (c.n > 1 && !rc)
		rc = put_leak_callers(out, r, s, &c, l.module);
	fputs("</details>\n", out);
	free(c.v);
	return rc < 0 ? rc : 0;
}

static void put_rest(FILE *out, const struct ct_site *const *v, size_t n)
{
	uint64_t bytes = 0, allocations = 0;
	char b[64];
	for (size_t i = 0; i < n; i++)
		bytes += v[i]->leaked_bytes, allocations += v[i]->leaked_allocations;
	fprintf(out,
	        "<p id=\"leak-rest\">%zu more leaks: %s in %" PRIu64
	        " allocations (ctrack-analyze --json lists them all).</p>\n",
	        n, ct_fmt_bytes(b, sizeof(b), bytes), allocations);
}

/* Where a leak kind comes in the page: memcheck's order, lost before reachable, and the blocks no
 * scan saw before those a scan found reachable (kind: CT_CLASS_* + 1, 0 unclassified). */
static int severity(int kind)
{
	static const int order[CT_KINDS + 1] = {0, 0, 1, 2, 4, 3};
	return kind >= 0 && kind <= CT_KINDS ? order[kind] : 5;
}

/* Orders v by severity, keeping the ranking's order within a kind (a stable counting sort).
 * Returns 0 or -ENOMEM. */
static int sort_by_severity(const struct ct_site **v, size_t n)
{
	size_t start[7] = {0};
	const struct ct_site **sorted = malloc((n ? n : 1) * sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		start[severity(v[i]->kind) + 1]++;
	for (int k = 1; k < 7; k++)
		start[k] += start[k - 1];
	for (size_t i = 0; i < n; i++)
		sorted[start[severity(v[i]->kind)]++] = v[i];
	memcpy(v, sorted, n * sizeof(*v));
	free(sorted);
	return 0;
}

/* The leaks, severity first: definitely lost, indirectly, possibly, never scanned; still reachable
 * apart, in a section closed by default (the runtime's buffers, as valgrind keeps them apart). */
static int put_leaks(FILE *out, const struct ct_report *r)
{
	const struct ct_site **v;
	long n = ct_report_rank(r, CT_BY_LEAKED, &v);
	if (n < 0)
		return (int)n;
	size_t shown = (size_t)n < MAX_LEAKS ? (size_t)n : MAX_LEAKS, reachable = 0;
	int rc = sort_by_severity(v, (size_t)n);
	fprintf(out, "<div id=\"leak-list\" data-count=\"%ld\">\n", n);
	if (!n)
		fputs("<p>No leak: every allocation was freed.</p>\n", out);
	for (size_t i = 0; i < shown && !rc; i++) {
		if (v[i]->kind == CT_CLASS_REACHABLE + 1 && !reachable++)
			fputs("<details class=\"reachable\" data-test=\"reachable\"><summary>still reachable "
			      "at "
			      "exit (pointers to them remained: usually the runtime's or the program's own "
			      "caches)</summary>\n",
			      out);
		rc = put_leak(out, r, v[i], i);
	}
	if (reachable)
		fputs("</details>\n", out);
	if ((size_t)n > shown)
		put_rest(out, v + shown, (size_t)n - shown);
	fputs("</div>\n", out);
	free(v);
	return rc;
}

/* ---- invalid frees and the fatal signal ---- */

/* A stack as a list of frames, after a caption (none when empty); a word when it is cut or unknown. */
static int put_stack(FILE *out, const struct ct_report *r, const char *caption, uint32_t stack)
{
	struct frame_list l = {out, NULL, 0, UINT_MAX};
	int truncated = 0, rc = 0;
	if (*caption)
		fprintf(out, "<p class=\"caller\">%s</p>\n", caption);
	fputs("<ol class=\"bt\">\n", out);
	if (stack)
		rc = ct_report_frames(r, stack, put_frame, &l, &truncated);
	if (!stack)
		fputs("<li class=\"cut\">(no backtrace: it could not be recorded)</li>\n", out);
	else if (truncated)
		fputs("<li class=\"cut\">... (deeper frames were not captured)</li>\n", out);
	fputs("</ol>\n", out);
	return rc;
}

static int put_invalid_one(FILE *out, const struct ct_report *r, const struct ct_invalid *v)
{
	char b[64], caption[160];
	fprintf(out,
	        "<details class=\"err\" open data-kind=\"%s\" data-call=\"%s\" data-count=\"%" PRIu64
	        "\"><summary>invalid %s() %s: %" PRIu64 " time%s</summary>\n",
	        ct_invalid_name(v->kind), ct_invalid_call(v->call), v->count, ct_invalid_call(v->call),
	        ct_invalid_label(v->kind), v->count, v->count == 1 ? "" : "s");
	int rc = put_stack(out, r, "", v->stack);
	if (!rc && v->freed)
		rc = put_stack(out, r, "freed before at:", v->freed);
	if (!rc && v->block) {
		const struct ct_info *info = &r->m->infos[v->block - 1];
		snprintf(caption, sizeof(caption),
		         "the block, %s, was allocated at:", ct_fmt_bytes(b, sizeof(b), info->size));
		rc = put_stack(out, r, caption, info->stack);
	}
	fputs("</details>\n", out);
	return rc;
}

/* memcheck's "Invalid free()" errors, the most frequent first; nothing when there are none. */
static int put_invalid(FILE *out, const struct ct_report *r)
{
	const struct ct_invalid **v;
	long n = ct_report_invalid(r, &v);
	if (n <= 0)
		return (int)n;
	fprintf(out,
	        "<h2 id=\"invalid-frees\">Invalid frees</h2>\n<div id=\"invalid-list\" data-count=\"%ld\">\n",
	        n);
	int rc = 0;
	for (long i = 0; i < n && i < MAX_LEAKS && !rc; i++)
		rc = put_invalid_one(out, r, v[i]);
	if (n > MAX_LEAKS || r->m->invalid_others)
		fputs(
		    "<p id=\"invalid-rest\">More invalid frees than shown (ctrack-analyze --json lists those "
		    "kept).</p>\n",
		    out);
	fputs("</div>\n", out);
	free(v);
	return rc;
}

/* The signal the program died of, and where the thread that took it was. */
static int put_crash(FILE *out, const struct ct_report *r)
{
	const struct ct_model *m = r->m;
	if (!m->crashed)
		return 0;
	int sig = m->crash_signal < 256 ? (int)m->crash_signal : 0;
	const char *abbrev = sig ? sigabbrev_np(sig) : NULL, *what = sig ? sigdescr_np(sig) : NULL;
	fprintf(out, "<h2 id=\"fatal-signal\">Fatal signal</h2>\n<p data-signal=\"%" PRIu64 "\">",
	        m->crash_signal);
	if (abbrev)
		fprintf(out, "SIG%s (", abbrev);
	ct_xml_text(out, what ? what : "signal");
	fputs(abbrev ? "), taken at:</p>\n" : ", taken at:</p>\n", out);
	return put_stack(out, r, "", m->crash_stack);
}

/* ---- symbol quality ---- */

static void put_quality(FILE *out, const struct ct_quality *q)
{
	fputs(q->advice ? "<tr class=\"bad\"><td>" : "<tr><td>", out);
	ct_xml_text(out, q->path);
	fprintf(out, "</td><td>%s</td><td>%s</td><td>%s</td><td>", q->symbols, q->line_tables ? "yes" : "no",
	        q->inline_info ? "yes" : "no");
	ct_xml_text(out, q->debug_file && strcmp(q->debug_file, q->path) ? q->debug_file : "");
	fputs("</td><td>", out);
	ct_xml_text(out, q->advice ? q->advice : "fine");
	fputs("</td></tr>\n", out);
}

static int put_symbols(FILE *out, const struct ct_report *r)
{
	struct ct_quality_list l = {0};
	int rc = ct_diagnose_model(&l, r->m, r->sym);
	size_t bad = 0;
	for (size_t i = 0; i < l.n; i++)
		bad += l.v[i].advice != NULL;
	fprintf(out, "<h2 id=\"symbols\">Symbols</h2>\n<p id=\"symbol-verdict\" data-problems=\"%zu\">", bad);
	if (bad)
		fprintf(out,
		        "%zu of %zu modules lose information: frames there may lack names, lines or inlined "
		        "functions.</p>\n",
		        bad, l.n);
	else
		fprintf(
		    out,
		    "Every module holding a frame (%zu) has symbols, line tables and inline records.</p>\n",
		    l.n);
	fputs("<table class=\"symbols\"><tr><th>module</th><th>symbols</th><th>line tables</th><th>inline "
	      "info</th><th>debug file</th><th>verdict</th></tr>\n",
	      out);
	for (size_t i = 0; i < l.n; i++)
		put_quality(out, &l.v[i]);
	fputs("</table>\n", out);
	ct_quality_list_free(&l);
	return rc;
}

/* ---- the page ---- */

/* The page's body: the header's figures, the views' panels (app.js fills those the analyzer leaves
 * empty), the data and the scripts; the diff view's data when diff is not NULL. */
static int write_page(FILE *out, const struct ct_report *r, const struct ct_html_diff *diff)
{
	int rc = put_head(out, r, diff);
	put_qualifiers(out, r->m);
	put_notes(out, r->m);
	put_summary(out, r);
	put_wrappers(out, r);
	fputs("</header>\n<nav id=\"tabs\" class=\"tabs\" data-test=\"tabs\"></nav>\n<main id=\"views\">\n"
	      "<section class=\"view\" id=\"view-timeline\" data-view=\"timeline\" data-title=\"Timeline\">"
	      "</section>\n"
	      "<section class=\"view\" id=\"view-leaks\" data-view=\"leaks\" data-title=\"Leaks\">\n"
	      "<h2 id=\"leaks\">Leaks</h2>\n",
	      out);
	if (!rc)
		rc = put_leaks(out, r);
	fputs("</section>\n"
	      "<section class=\"view\" id=\"view-sites\" data-view=\"sites\" data-title=\"Top "
	      "sites\"></section>\n"
	      "<section class=\"view\" id=\"view-trees\" data-view=\"trees\" data-title=\"Call "
	      "trees\"></section>\n"
	      "<section class=\"view\" id=\"view-flame\" data-view=\"flame\" data-title=\"Flame "
	      "graph\"></section>\n"
	      "<section class=\"view\" id=\"view-histogram\" data-view=\"histogram\" "
	      "data-title=\"Histogram\"></section>\n"
	      "<section class=\"view\" id=\"view-diff\" data-view=\"diff\" data-title=\"Diff\"></section>\n"
	      "<section class=\"view\" id=\"view-details\" data-view=\"details\" data-title=\"Errors and "
	      "symbols\">\n",
	      out);
	if (!rc)
		rc = put_invalid(out, r);
	if (!rc)
		rc = put_crash(out, r);
	if (!rc)
		rc = put_symbols(out, r);
	fputs("</section>\n</main>\n</body>\n</html>\n", out);
	return rc;
}

int ct_write_html(FILE *out, const struct ct_report *r)
{
	return write_page(out, r, NULL);
}

int ct_write_html_diff(FILE *out, const struct ct_report *r, const struct ct_html_diff *diff)
{
	return write_page(out, r, diff);
}
