/* SPDX-License-Identifier: MIT */
/* The JSON report (schema: docs/json-schema.md): one document on the output stream.
 * Every string is valid JSON whatever its bytes: invalid UTF-8 bytes become \u00XX (latin-1). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "histogram.h"
#include "diagnose.h"
#include "markup.h"
#include "report.h"
#include "aggregated.h"
#include "sampling.h"
#include "suppress.h"

static void put_process(const struct ct_report *r)
{
	const struct ct_process *p = &r->m->proc;
	FILE *out = r->out;
	if (!p->seen) {
		fputs("null", out);
		return;
	}
	fprintf(out, "{\"pid\": %" PRIu64 ", \"ppid\": %" PRIu64 ", \"exe\": ", p->pid, p->ppid);
	ct_json_string(out, p->exe.data, p->exe.len);
	fputs(", \"argv\": [", out);
	for (size_t i = 0; i < p->argc; i++) {
		fputs(i ? ", " : "", out);
		ct_json_string(out, p->argv[i].data, p->argv[i].len);
	}
	fprintf(out, "], \"start_unix_ns\": %" PRIu64 "}", p->start_unix_ns);
}

/* The shim's notes: [{"level": "warning", "text": "...", "count": 3}, ...]. */
static void put_notes(FILE *out, const struct ct_model *m)
{
	fputc('[', out);
	for (size_t i = 0; i < m->nnotes; i++) {
		const struct ct_note *n = &m->notes[i];
		fprintf(out, "%s\n  {\"level\": \"%s\", \"text\": ", i ? "," : "",
		        n->warning ? "warning" : "info");
		ct_json_string(out, n->text.data, n->text.len);
		fprintf(out, ", \"count\": %" PRIu64 "}", n->count);
	}
	fputs(m->nnotes ? "\n]" : "]", out);
}

/* The marks (ctrack_mark()) in the order they came, and the stretch --between narrowed to. */
static void put_marks(FILE *out, const struct ct_model *m)
{
	fputs(",\n\"marks\": [", out);
	for (size_t i = 0; i < m->nmarks; i++) {
		fprintf(out, "%s{\"name\": ", i ? ", " : "");
		ct_json_string(out, m->marks[i].name.data, m->marks[i].name.len);
		fprintf(out, ", \"time_ns\": %" PRIu64 "}", m->marks[i].time_us * 1000);
	}
	fputc(']', out);
	if (!m->between)
		return;
	fputs(",\n\"between\": {\"from\": ", out);
	ct_json_cstring(out, m->between->from);
	fputs(", \"to\": ", out);
	ct_json_cstring(out, m->between->to);
	fprintf(out, ", \"from_time_ns\": %" PRIu64 ", \"to_time_ns\": %" PRIu64 "}",
	        m->between->from_us * 1000, m->between->to_us * 1000);
}

/* The window the figures were narrowed to (--from/--to, or --between's marks), and what was live at
 * its end (docs/json-schema.md). */
static void put_window(FILE *out, const struct ct_model *m)
{
	const struct ct_between *b = m->between;
	if (!b)
		return;
	fprintf(out,
	        ",\n\"window\": {\"from_us\": %" PRIu64 ", \"to_us\": %" PRIu64 ", \"runtime_us\": %" PRIu64
	        ", \"from_mark\": ",
	        b->from_us, b->to_us, ct_model_runtime_us(m));
	if (b->from)
		ct_json_cstring(out, b->from);
	else
		fputs("null", out);
	fputs(", \"to_mark\": ", out);
	if (b->to)
		ct_json_cstring(out, b->to);
	else
		fputs("null", out);
	fprintf(out,
	        ", \"past_end\": %s, \"live_at_end_bytes\": %" PRIu64 ", \"live_at_end_blocks\": %" PRIu64
	        "}",
	        b->from_past_end || b->to_past_end ? "true" : "false", b->live_bytes, b->live_blocks);
}

/* The leak classes' figures (definitely_lost_bytes, ..._blocks, ...), absent when the trace has none. */
static void put_classes(const struct ct_report *r)
{
	static const char *const names[CT_KINDS] = {"definitely_lost", "indirectly_lost", "possibly_lost",
	                                            "still_reachable", "unscanned"};
	uint64_t blocks[CT_KINDS], bytes[CT_KINDS];
	ct_model_class_totals(r->m, blocks, bytes);
	for (int k = 0; k < CT_KINDS && r->m->classified; k++)
		if (k < CT_KIND_UNSCANNED ||
		    blocks[k]) /* unscanned: only after a scan the process outlived */
			fprintf(r->out, ", \"%s_bytes\": %" PRIu64 ", \"%s_blocks\": %" PRIu64, names[k],
			        bytes[k], names[k], blocks[k]);
}

/* What the suppressions matched (docs/json-schema.md, "Suppressions"); null when none applies. */
static void put_suppressions(const struct ct_report *r)
{
	const struct ct_suppressions *s = r->supp;
	FILE *out = r->out;
	fputs(",\n\"suppressions\": ", out);
	if (!s) {
		fputs("null", out);
		return;
	}
	fprintf(out, "{\"applied\": %s, \"matched\": [", s->applied ? "true" : "false");
	size_t shown = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (!s->v[i].blocks)
			continue;
		fputs(shown++ ? ",\n  {\"pattern\": " : "\n  {\"pattern\": ", out);
		ct_json_cstring(out, s->v[i].pattern);
		fputs(", \"origin\": ", out);
		ct_json_cstring(out, s->v[i].origin);
		fprintf(out, ", \"blocks\": %" PRIu64 ", \"bytes\": %" PRIu64 "}", s->v[i].blocks,
		        s->v[i].bytes);
	}
	fprintf(out,
	        "%s], \"indirect_blocks\": %" PRIu64 ", \"indirect_bytes\": %" PRIu64
	        ", \"unsure_indirect_blocks\": %" PRIu64 ", \"unsure_indirect_bytes\": %" PRIu64 "}",
	        shown ? "\n" : "", s->held_blocks, s->held_bytes, s->unsure_blocks, s->unsure_bytes);
}

static void put_summary(const struct ct_report *r)
{
	const struct ct_totals *t = &r->m->t;
	fprintf(r->out,
	        "{\"allocations\": %" PRIu64 ", \"frees\": %" PRIu64 ", \"bytes_allocated\": %" PRIu64
	        ", \"temporary_allocations\": %" PRIu64 ", \"peak_heap_bytes\": %" PRIu64
	        ", \"peak_heap_time_ns\": %" PRIu64 ", \"peak_rss_bytes\": %" PRIu64
	        ", \"leaked_bytes\": %" PRIu64 ", \"leaked_allocations\": %" PRIu64
	        ", \"runtime_ns\": %" PRIu64 ", \"unmatched_frees\": %" PRIu64
	        ", \"invalid_frees\": %" PRIu64,
	        t->allocations, t->frees, t->bytes_allocated, t->temporary, t->peak, t->peak_time_us * 1000,
	        t->peak_rss, t->current, t->live_allocations, ct_model_runtime_us(r->m) * 1000,
	        ct_model_frees_before_tracing(r->m), t->invalid_frees);
	put_classes(r);
	fputc('}', r->out);
}

void ct_json_frame(FILE *out, const struct ct_frame *f, int with_address)
{
	fputc('{', out);
	if (with_address)
		fprintf(out, "\"address\": \"0x%" PRIx64 "\", ", f->address);
	char name[512];
	fputs("\"function\": ", out);
	ct_json_cstring(out, f->function);
	fputs(", \"short\": ", out); /* what a person reads (ct_frame_display_name without --full-names) */
	ct_json_cstring(out, ct_frame_short_name(f, name, sizeof(name)));
	fputs(", \"symbol\": ", out);
	ct_json_cstring(out, f->symbol);
	fputs(", \"file\": ", out);
	ct_json_cstring(out, f->file);
	if (f->file)
		fprintf(out, ", \"line\": %u", f->line);
	else
		fputs(", \"line\": null", out);
	fputs(", \"module\": ", out);
	ct_json_cstring(out, f->module);
	fprintf(out, ", \"inlined\": %s}", f->inlined ? "true" : "false");
}

/* The frames from <= index < to, as a list's elements. */
struct frame_list {
	FILE *out;
	unsigned from, to;
};

static int put_frame(void *ctx, const struct ct_frame *f, unsigned index)
{
	const struct frame_list *l = ctx;
	if (index < l->from || index >= l->to)
		return 0;
	if (index > l->from)
		fputs(", ", l->out);
	ct_json_frame(l->out, f, 1);
	return 0;
}

/* The two figures a ranking's entries carry, under their JSON names. */
static void put_figures(FILE *out, enum ct_rank by, const struct ct_site *s)
{
	switch (by) {
	case CT_BY_LEAKED:
		fprintf(out, "\"bytes\": %" PRIu64 ", \"allocations\": %" PRIu64, s->leaked_bytes,
		        s->leaked_allocations);
		break;
	case CT_BY_PEAK:
		fprintf(out, "\"bytes\": %" PRIu64 ", \"allocations\": %" PRIu64, s->peak_bytes,
		        s->peak_allocations);
		break;
	case CT_BY_ALLOCATIONS:
		fprintf(out, "\"allocations\": %" PRIu64 ", \"bytes\": %" PRIu64, s->allocations,
		        s->bytes_allocated);
		break;
	case CT_BY_TEMPORARY:
		fprintf(out, "\"temporary_allocations\": %" PRIu64 ", \"allocations\": %" PRIu64,
		        s->temporary, s->allocations);
		break;
	}
}

/* The backtraces of an entry of several: the largest (r->callers), each with its frames past the
 * shared ones, then the others summed. */
static int put_callers(const struct ct_report *r, enum ct_rank by, const struct ct_callers *c)
{
	int rc = 0, truncated;
	fputs(", \"callers\": [", r->out);
	for (size_t i = 0; c->n > 1 && i < c->n && i < r->callers && !rc; i++) {
		fputs(i ? ",\n    {" : "\n    {", r->out);
		put_figures(r->out, by, &c->v[i]);
		fputs(", \"frames\": [", r->out);
		struct frame_list l = {r->out, (unsigned)c->common, UINT_MAX};
		rc = ct_report_frames(r, c->v[i].stack, put_frame, &l, &truncated);
		fprintf(r->out, "], \"truncated\": %s}", truncated ? "true" : "false");
	}
	fputs("]", r->out);
	if (c->n > 1 && c->n > r->callers) {
		struct ct_site rest;
		ct_callers_rest(c, r->callers, &rest);
		fprintf(r->out, ", \"other_callers\": {\"backtraces\": %zu, ", c->n - r->callers);
		put_figures(r->out, by, &rest);
		fputs("}", r->out);
	}
	return rc;
}

/* One entry of a ranking: figures, the frames its backtraces share (all of a single one), folded,
 * truncated, callers. */
static int put_entry(const struct ct_report *r, enum ct_rank by, const struct ct_site *s)
{
	struct ct_callers c;
	int rc = ct_report_callers(r, by, s, &c), truncated;
	if (rc < 0)
		return rc;
	if (by == CT_BY_LEAKED && s->kind) /* a classified trace's leaks */
		fprintf(r->out, "\"kind\": \"%s\", ", ct_kind_name(s->kind));
	put_figures(r->out, by, s);
	fputs(", \"frames\": [", r->out);
	struct frame_list l = {r->out, 0, (unsigned)c.common};
	rc = ct_report_frames(r, c.v[0].stack, put_frame, &l, &truncated);
	long folded = rc < 0 ? rc : ct_report_folded(r, s->stack);
	if (folded >= 0) {
		fprintf(r->out, "], \"folded\": %ld, \"truncated\": %s", folded,
		        c.n == 1 && truncated ? "true" : "false");
		rc = put_callers(r, by, &c);
		fputs("}", r->out);
	}
	free(c.v);
	return folded < 0 ? (int)folded : rc;
}

static int put_ranking(const struct ct_report *r, enum ct_rank by, const char *name, size_t limit)
{
	const struct ct_site **v;
	long n = ct_report_rank(r, by, &v);
	if (n < 0)
		return (int)n;
	fprintf(r->out, ",\n\"%s\": [", name);
	for (long i = 0; i < n && (size_t)i < limit; i++) {
		fprintf(r->out, "%s\n  {", i ? "," : "");
		int rc = put_entry(r, by, v[i]);
		if (rc < 0) {
			free(v);
			return rc;
		}
	}
	fputs(n ? "\n]" : "]", r->out);
	/* how many the ranking holds: a reader tells a site left off (--top) from one with nothing */
	fprintf(r->out, ",\n\"%s_entries\": %ld", name, n);
	free(v);
	return 0;
}

void ct_quality_json(FILE *out, const struct ct_quality_list *l)
{
	fputs("[", out);
	for (size_t i = 0; i < l->n; i++) {
		const struct ct_quality *q = &l->v[i];
		fputs(i ? ",\n  {\"path\": " : "\n  {\"path\": ", out);
		ct_json_cstring(out, q->path);
		fputs(", \"build_id\": ", out);
		ct_json_cstring(out, q->build_id);
		fprintf(out,
		        ", \"symbols\": \"%s\", \"line_tables\": %s, \"inline_info\": %s, \"debug_file\": ",
		        q->symbols, q->line_tables ? "true" : "false", q->inline_info ? "true" : "false");
		ct_json_cstring(out, q->debug_file);
		fputs(", \"advice\": ", out);
		ct_json_cstring(out, q->advice);
		fputs("}", out);
	}
	fputs(l->n ? "\n]" : "]", out);
}

/* {"frames": [...], "truncated": false} of a stack, or null for none (0). */
static int put_stack(const struct ct_report *r, uint32_t stack)
{
	int truncated = 0, rc = 0;
	if (!stack) {
		fputs("null", r->out);
		return 0;
	}
	struct frame_list l = {r->out, 0, UINT_MAX};
	fputs("{\"frames\": [", r->out);
	rc = ct_report_frames(r, stack, put_frame, &l, &truncated);
	fprintf(r->out, "], \"truncated\": %s}", truncated ? "true" : "false");
	return rc;
}

/* The invalid frees (docs/json-schema.md), the most frequent first, all of them. */
static int put_invalid(const struct ct_report *r)
{
	const struct ct_invalid **v;
	long n = ct_report_invalid(r, &v);
	int rc = n < 0 ? (int)n : 0;
	fputs(",\n\"invalid_frees\": [", r->out);
	for (long i = 0; i < n && !rc; i++) {
		fprintf(r->out,
		        "%s\n  {\"kind\": \"%s\", \"call\": \"%s\", \"count\": %" PRIu64 ", \"frames\": [",
		        i ? "," : "", ct_invalid_name(v[i]->kind), ct_invalid_call(v[i]->call), v[i]->count);
		int truncated = 0;
		struct frame_list l = {r->out, 0, UINT_MAX};
		rc = ct_report_frames(r, v[i]->stack, put_frame, &l, &truncated);
		fprintf(r->out, "], \"truncated\": %s, \"freed\": ", truncated ? "true" : "false");
		if (!rc)
			rc = put_stack(r, v[i]->freed);
		fputs(", \"block\": ", r->out);
		if (!rc && v[i]->block) {
			const struct ct_info *info = &r->m->infos[v[i]->block - 1];
			fprintf(r->out, "{\"size\": %" PRIu64 ", \"allocated\": ", info->size);
			rc = put_stack(r, info->stack);
			fputc('}', r->out);
		} else {
			fputs("null", r->out);
		}
		fputc('}', r->out);
	}
	fputs(n > 0 ? "\n]" : "]", r->out);
	fprintf(r->out, ",\n\"invalid_frees_not_kept\": %" PRIu64, r->m->invalid_others);
	free(v);
	return rc;
}

/* The signal the program died of and where (CRASH), or null. */
static int put_crash(const struct ct_report *r)
{
	const struct ct_model *m = r->m;
	fputs(",\n\"fatal_signal\": ", r->out);
	if (!m->crashed) {
		fputs("null", r->out);
		return 0;
	}
	const char *abbrev = m->crash_signal < 256 ? sigabbrev_np((int)m->crash_signal) : NULL;
	fputs("{\"signal\": ", r->out);
	if (abbrev)
		fprintf(r->out, "\"SIG%s\"", abbrev);
	else
		fputs("null", r->out);
	fprintf(r->out, ", \"number\": %" PRIu64 ", \"taken_at\": ", m->crash_signal);
	int rc = put_stack(r, m->crash_stack);
	fputc('}', r->out);
	return rc;
}

/* The functions folded as allocator wrappers. */
static void put_wrappers(const struct ct_report *r)
{
	fputs(",\n\"wrappers\": [", r->out);
	for (size_t i = 0; i < r->nwrappers; i++) {
		fputs(i ? ",\n  {\"function\": " : "\n  {\"function\": ", r->out);
		ct_json_cstring(r->out, r->wrappers[i].function);
		fputs(", \"module\": ", r->out);
		ct_json_cstring(r->out, r->wrappers[i].module);
		fprintf(r->out, ", \"callers\": %zu}", r->wrappers[i].callers);
	}
	fputs(r->nwrappers ? "\n]" : "]", r->out);
}

/* Where the trace is damaged and why, or null. */
static void put_damage(FILE *out, const struct ct_model *m)
{
	if (!m->damaged) {
		fputs("null", out);
		return;
	}
	fprintf(out, "{\"near_byte\": %" PRIu64 ", \"why\": ", m->damaged_at);
	ct_json_cstring(out, m->damage);
	fputc('}', out);
}

/* A sampled trace's rate, seed and the line saying its figures are estimates, or null. */
static void put_sampling(FILE *out, const struct ct_model *m)
{
	char line[160];
	if (!m->sample_rate) {
		fputs("null", out);
		return;
	}
	ct_sampling_note(line, sizeof(line), m->sample_rate);
	fprintf(out, "{\"rate\": %" PRIu64 ", \"seed\": %" PRIu64 ", \"note\": ", m->sample_rate,
	        m->sample_seed);
	ct_json_cstring(out, line);
	fputc('}', out);
}

/* An aggregated trace's snapshot interval and the line saying what it means, or null. */
static void put_aggregated(FILE *out, const struct ct_model *m)
{
	char line[160];
	if (!m->aggregate_us) {
		fputs("null", out);
		return;
	}
	ct_aggregated_note(line, sizeof(line), m->aggregate_us);
	fprintf(out, "{\"interval_ns\": %" PRIu64 ", \"note\": ", m->aggregate_us * 1000);
	ct_json_cstring(out, line);
	fputc('}', out);
}

/* A trace that starts at an attach: when, the attach's number in its process and the note that
 * says what it means, or null. */
static void put_attach(FILE *out, const struct ct_model *m)
{
	if (!m->attach_ordinal || m->attach_note >= m->nnotes) {
		fputs("null", out);
		return;
	}
	fprintf(out, "{\"unix_ns\": %" PRIu64 ", \"number\": %" PRIu64 ", \"note\": ", m->attach_unix_ns,
	        m->attach_ordinal);
	ct_json_cstring(out, m->notes[m->attach_note].text.data);
	fputc('}', out);
}

/* The modules holding frames of the trace's stacks, with their symbol quality. */
static int put_modules(const struct ct_report *r)
{
	struct ct_quality_list l = {0};
	int rc = ct_diagnose_model(&l, r->m, r->sym);
	if (!rc) {
		fputs(",\n\"modules\": ", r->out);
		ct_quality_json(r->out, &l);
	}
	ct_quality_list_free(&l);
	return rc;
}

int ct_report_json(const struct ct_report *r)
{
	FILE *out = r->out;
	fputs("{\"trace\": ", out);
	ct_json_cstring(out, r->path);
	fprintf(out, ", \"complete\": %s,\n\"damaged\": ", r->m->complete ? "true" : "false");
	put_damage(out, r->m);
	fputs(",\n\"sampling\": ", out);
	put_sampling(out, r->m);
	fputs(",\n\"aggregated\": ", out);
	put_aggregated(out, r->m);
	fputs(",\n\"attach\": ", out);
	put_attach(out, r->m);
	fputs(",\n\"notes\": ", out);
	put_notes(out, r->m);
	put_marks(out, r->m);
	put_window(out, r->m);
	fputs(",\n\"process\": ", out);
	put_process(r);
	fputs(",\n\"summary\": ", out);
	put_summary(r);
	struct ct_histogram h;
	if (ct_histogram_sites(r, &h) < 0)
		return -ENOMEM;
	fputs(",\n\"histogram\": ", out);
	ct_histogram_json(out, &h, r);
	put_suppressions(r);
	put_wrappers(r);
	int rc = put_invalid(r);
	if (!rc)
		rc = put_crash(r);
	if (!rc)
		rc = put_ranking(r, CT_BY_LEAKED, "leaks", SIZE_MAX);
	if (!rc)
		rc = put_ranking(r, CT_BY_PEAK, "peak", r->top);
	if (!rc)
		rc = put_ranking(r, CT_BY_ALLOCATIONS, "allocations", r->top);
	if (!rc)
		rc = put_ranking(r, CT_BY_TEMPORARY, "temporary", r->top);
	if (!rc)
		rc = put_modules(r);
	fputs("}\n", out);
	return rc;
}
