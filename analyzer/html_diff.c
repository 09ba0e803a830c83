/* SPDX-License-Identifier: MIT */
/* The HTML report's diff (--diff BASE NEW --html): the "diff" member of html_data.c's document, sites
 * matched as --baseline matches them (ct_baseline_pairs), their frames interned with the page's. */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_data.h"
#include "markup.h"
#include "rules.h"

/* What a matched site's figures lack in baseline.h's pairs: its temporary allocations and its leaks
 * by kind, summed over a run's sites (a trace's) or entries (a JSON report's lists) of the same key. */
struct extra {
	uint64_t temp;
	uint64_t kinds[CT_KINDS][2]; /* blocks, bytes */
	int temp_known;              /* a JSON report lists the top sites' temporary allocations only */
};

struct diff_data {
	struct ct_html_doc *d;
	FILE *out; /* the diff's own memory stream: its frames are interned before "frames" is written */
	const struct ct_html_diff *in;
	struct ct_site_pair *pairs;
	long npairs;
	struct extra *x[2];  /* per pair: BASE's (NULL: a JSON report that cannot be read again), NEW's */
	int base_classified; /* BASE's leaks have kinds */
	uint64_t json_kinds[CT_KINDS][2]; /* a JSON BASE's totals by kind (its summary's) */
};

/* The key order of ct_baseline_pairs (baseline.c's cmp_key): function, then file, no file first. */
static int cmp_pair_key(const char *fn, const char *file, const struct ct_site_pair *p)
{
	int c = strcmp(fn, p->function);
	if (c)
		return c;
	return file && p->file ? strcmp(file, p->file) : (file != NULL) - (p->file != NULL);
}

static int first_frame(void *ctx, const struct ct_frame *f, unsigned index)
{
	(void)index;
	*(struct ct_frame *)ctx = *f;
	return 1; /* stops the walk */
}

/* The pair of a site whose first shown frame is function fn in file (a path; NULL: unknown), or -1. */
static long pair_of_key(const struct diff_data *dd, const char *fn, const char *file)
{
	fn = fn ? fn : "??", file = file ? ct_basename(file) : NULL;
	long lo = 0, hi = dd->npairs;
	while (lo < hi) {
		long mid = lo + (hi - lo) / 2;
		int c = cmp_pair_key(fn, file, &dd->pairs[mid]);
		if (!c)
			return mid;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

/* The pair of r's site s (its first shown frame's function and file's base name), or -1. */
static long pair_of(const struct diff_data *dd, const struct ct_report *r, const struct ct_site *s)
{
	struct ct_frame f = {0};
	int truncated;
	if (ct_report_frames(r, s->stack, first_frame, &f, &truncated) < 0)
		return -1;
	return pair_of_key(dd, f.function, f.file);
}

/* Sums r's sites' temporary allocations and leaks by kind into their pairs' extras. */
static int sum_extras(struct diff_data *dd, const struct ct_report *r, struct extra **out)
{
	struct extra *x = calloc((size_t)dd->npairs + 1, sizeof(*x));
	if (!(*out = x))
		return -ENOMEM;
	for (size_t i = 0; i < r->nsites; i++) {
		const struct ct_site *s = &r->sites[i];
		long p = pair_of(dd, r, s);
		if (p < 0)
			continue;
		x[p].temp += s->temporary, x[p].temp_known = 1;
		for (int k = 0; k < CT_KINDS; k++)
			x[p].kinds[k][0] += s->class_allocations[k], x[p].kinds[k][1] += s->class_bytes[k];
	}
	return 0;
}

/* ---- a saved JSON report as BASE: its lists read again for what its baseline does not keep ---- */

static json_object *member(json_object *o, const char *key, json_type type)
{
	json_object *v;
	return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, type) ? v : NULL;
}

static uint64_t number(json_object *o, const char *key)
{
	json_object *v = member(o, key, json_type_int);
	return v ? json_object_get_uint64(v) : 0;
}

/* The pair of a list entry of a JSON report: its first frame's function and file, as baseline.c keys it. */
static long json_pair(const struct diff_data *dd, json_object *e)
{
	json_object *frames = member(e, "frames", json_type_array);
	json_object *f =
	    frames && json_object_array_length(frames) ? json_object_array_get_idx(frames, 0) : NULL;
	json_object *fn = member(f, "function", json_type_string),
	            *file = member(f, "file", json_type_string);
	return pair_of_key(dd, fn ? json_object_get_string(fn) : NULL,
	                   file ? json_object_get_string(file) : NULL);
}

/* The leak kind an entry names, as an index of the kinds (0 definite ...), or -1. */
static int json_kind(json_object *e)
{
	json_object *k = member(e, "kind", json_type_string);
	for (int kind = 1; k && ct_kind_name(kind); kind++)
		if (!strcmp(ct_kind_name(kind), json_object_get_string(k)))
			return kind - 1;
	return -1;
}

/* The summary's totals by kind ("definitely_lost_bytes", ...); 0 when it has none (unclassified). */
static int json_kind_totals(json_object *summary, uint64_t kinds[CT_KINDS][2])
{
	static const char *const names[CT_KINDS] = {"definitely_lost", "indirectly_lost", "possibly_lost",
	                                            "still_reachable", "unscanned"};
	char key[64];
	snprintf(key, sizeof(key), "%s_bytes", names[0]);
	if (!member(summary, key, json_type_int))
		return 0;
	for (int k = 0; k < CT_KINDS; k++) {
		snprintf(key, sizeof(key), "%s_blocks", names[k]);
		kinds[k][0] = number(summary, key);
		snprintf(key, sizeof(key), "%s_bytes", names[k]);
		kinds[k][1] = number(summary, key);
	}
	return 1;
}

/* BASE's extras from its JSON report: leaks by kind from its "leaks" (every leak), temporary
 * allocations from its "temporary" (every site when the list is whole, else the listed ones). A report
 * that cannot be read again (changed since) leaves them unknown. Returns 0 or -ENOMEM. */
static int json_extras(struct diff_data *dd, struct extra **out)
{
	json_object *root = json_object_from_file(ct_baseline_path(dd->in->base));
	json_object *leaks = member(root, "leaks", json_type_array),
	            *temps = member(root, "temporary", json_type_array);
	*out = NULL;
	if (!leaks) {
		json_object_put(root);
		return 0;
	}
	struct extra *x = calloc((size_t)dd->npairs + 1, sizeof(*x));
	if (!(*out = x)) {
		json_object_put(root);
		return -ENOMEM;
	}
	dd->base_classified = json_kind_totals(member(root, "summary", json_type_object), dd->json_kinds);
	for (size_t i = 0; i < json_object_array_length(leaks); i++) {
		json_object *e = json_object_array_get_idx(leaks, i);
		long p = json_pair(dd, e);
		int k = json_kind(e);
		dd->base_classified &= k >= 0;
		if (p >= 0 && k >= 0)
			x[p].kinds[k][0] += number(e, "allocations"), x[p].kinds[k][1] += number(e, "bytes");
	}
	size_t ntemps = temps ? json_object_array_length(temps) : 0;
	int whole = temps && number(root, "temporary_entries") == ntemps;
	for (long p = 0; whole && p < dd->npairs; p++)
		x[p].temp_known = 1;
	for (size_t i = 0; i < ntemps; i++) {
		json_object *e = json_object_array_get_idx(temps, i);
		long p = json_pair(dd, e);
		if (p >= 0)
			x[p].temp += number(e, "temporary_allocations"), x[p].temp_known = 1;
	}
	json_object_put(root);
	return 0;
}

/* A figure, or null when the run's report does not list it. */
static void put_known_u64(FILE *out, const char *name, int known, uint64_t v)
{
	if (known)
		fprintf(out, ",\"%s\":%" PRIu64, name, v);
	else
		fprintf(out, ",\"%s\":null", name);
}

/* One run's figures of a pair: null when the site is not in that run. */
static void put_side(FILE *out, int in, const struct ct_site_figures *f, const struct extra *x,
                     int classified)
{
	if (!in) {
		fputs("null", out);
		return;
	}
	fprintf(out, "{\"leaked\":%" PRIu64 ",\"leakedn\":%" PRIu64, f->leaked_bytes, f->leaked_blocks);
	put_known_u64(out, "n", f->allocations_known, f->allocations);
	put_known_u64(out, "bytes", f->allocations_known, f->bytes_allocated);
	put_known_u64(out, "peak", f->peak_known, f->peak_bytes);
	put_known_u64(out, "temp", x && x->temp_known, x ? x->temp : 0);
	fputs(",\"kinds\":", out);
	if (!x || !classified)
		fputs("null", out);
	for (int k = 0; x && classified && k < CT_KINDS; k++)
		fprintf(out, "%s[%" PRIu64 ",%" PRIu64 "]", k ? "," : "[", x->kinds[k][0], x->kinds[k][1]);
	fputs(x && classified ? "]}" : "}", out);
}

/* diff.c's status: only in NEW, only in BASE, a figure both runs know changed, or none did. */
static const char *pair_status(const struct ct_site_pair *p)
{
	const struct ct_site_figures *a = &p->base, *b = &p->new;
	if (!p->in_base)
		return "new";
	if (!p->in_new)
		return "gone";
	int allocs = a->allocations_known && b->allocations_known, peak = a->peak_known && b->peak_known;
	if (a->leaked_bytes != b->leaked_bytes || a->leaked_blocks != b->leaked_blocks ||
	    (peak && a->peak_bytes != b->peak_bytes) ||
	    (allocs && (a->allocations != b->allocations || a->bytes_allocated != b->bytes_allocated)))
		return "changed";
	return "same";
}

static int put_diff_frame(void *ctx, const struct ct_frame *f, unsigned index)
{
	struct diff_data *dd = ctx;
	long i = ct_html_doc_frame(dd->d, f);
	if (i < 0)
		return (int)i;
	fprintf(dd->out, "%s%ld", index ? "," : "", i);
	return 0;
}

/* The frames of a pair's backtrace: NEW's entry's, else BASE's, else (a site only a JSON report
 * names) its one known frame. */
static int put_pair_frames(struct diff_data *dd, const struct ct_site_pair *p)
{
	const struct ct_report *r = p->new_entry    ? ct_html_doc_report(dd->d)
	                            : p->base_entry ? dd->in->base_report
	                                            : NULL;
	const struct ct_site *e = p->new_entry ? p->new_entry : p->base_entry;
	int truncated;
	if (r && e)
		return ct_report_frames(r, e->stack, put_diff_frame, dd, &truncated);
	struct ct_frame f = {.function = p->function, .file = p->file, .line = p->file ? p->line : 0};
	return put_diff_frame(dd, &f, 0);
}

static int put_pair(struct diff_data *dd, long i)
{
	const struct ct_site_pair *p = &dd->pairs[i];
	const struct ct_report *r = ct_html_doc_report(dd->d);
	FILE *out = dd->out;
	char buf[512];
	const struct ct_frame key = {.function = p->function};
	long site = p->new_entry ? ct_html_doc_site(dd->d, p->new_entry->stack) : -1;
	fprintf(out, "%s{\"status\":\"%s\",\"fn\":", i ? ",\n" : "\n", pair_status(p));
	ct_json_cstring(out, ct_frame_display_name(r, &key, buf, sizeof(buf)));
	fputs(",\"full\":", out);
	ct_json_cstring(out, p->function);
	fputs(",\"file\":", out);
	ct_json_cstring(out, p->file);
	fprintf(out, ",\"line\":%u,\"site\":%ld,\"frames\":[", p->line, site);
	int rc = put_pair_frames(dd, p);
	fputs("],\"base\":", out);
	put_side(out, p->in_base, &p->base, dd->x[0] ? &dd->x[0][i] : NULL, dd->base_classified);
	fputs(",\"new\":", out);
	put_side(out, p->in_new, &p->new, &dd->x[1][i], r->m->classified);
	fputc('}', out);
	return rc;
}

/* A run's totals (report_json.c's summary figures) and its leaks by kind: a classified trace's (m),
 * a JSON report's (kinds), else null. */
static void put_run_totals(FILE *out, const struct ct_baseline *b, const struct ct_model *m,
                           const uint64_t (*kinds)[2])
{
	const struct ct_totals *t = ct_baseline_totals(b);
	fputs("{\"trace\":", out);
	ct_json_cstring(out, ct_baseline_path(b));
	fprintf(out,
	        ",\"allocations\":%" PRIu64 ",\"frees\":%" PRIu64 ",\"bytes_allocated\":%" PRIu64
	        ",\"temporary\":%" PRIu64 ",\"peak\":%" PRIu64 ",\"leaked_bytes\":%" PRIu64
	        ",\"leaked_blocks\":%" PRIu64 ",\"kinds\":",
	        t->allocations, t->frees, t->bytes_allocated, t->temporary, t->peak, t->current,
	        t->live_allocations);
	if (!kinds && (!m || !m->classified)) {
		fputs("null}", out);
		return;
	}
	uint64_t blocks[CT_KINDS], bytes[CT_KINDS];
	if (!kinds)
		ct_model_class_totals(m, blocks, bytes);
	for (int k = 0; k < CT_KINDS; k++)
		fprintf(out, "%s[%" PRIu64 ",%" PRIu64 "]", k ? "," : "[", kinds ? kinds[k][0] : blocks[k],
		        kinds ? kinds[k][1] : bytes[k]);
	fputs("]}", out);
}

/* BASE's own sites and stacks (a trace only), as "sites" and "stacks" are NEW's: the flame graph of
 * the change merges both runs' stacks. */
static int put_base_sites(struct diff_data *dd)
{
	const struct ct_report *rb = dd->in->base_report;
	FILE *out = dd->out;
	int rc = 0, truncated;
	fputs(",\n\"base_stacks\":[", out);
	for (size_t i = 0; i < rb->nsites && !rc; i++) {
		fputs(i ? ",\n[" : "\n[", out);
		rc = ct_report_frames(rb, rb->sites[i].stack, put_diff_frame, dd, &truncated);
		fputc(']', out);
	}
	fputs("],\n\"base_sites\":[", out);
	for (size_t i = 0; i < rb->nsites && !rc; i++) {
		const struct ct_site *s = &rb->sites[i];
		fprintf(out,
		        "%s{\"stack\":%zu,\"n\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"temp\":%" PRIu64
		        ",\"peak\":%" PRIu64 ",\"live\":%" PRIu64 ",\"kinds\":",
		        i ? ",\n" : "\n", i, s->allocations, s->bytes_allocated, s->temporary, s->peak_bytes,
		        s->leaked_bytes);
		ct_html_put_kinds(out, s, rb->m->classified);
		fputc('}', out);
	}
	fputs("]", out);
	return rc;
}

static int put_diff_body(struct diff_data *dd)
{
	const struct ct_html_diff *in = dd->in;
	const struct ct_report *rb = in->base_report;
	FILE *out = dd->out;
	int rc = 0;
	fputs("{\"base\":", out);
	ct_json_cstring(out, ct_baseline_path(in->base));
	fprintf(out, ",\"base_is_trace\":%s,\n\"totals\":{\"base\":", rb ? "true" : "false");
	put_run_totals(out, in->base, rb ? rb->m : NULL,
	               !rb && dd->base_classified ? (const uint64_t(*)[2])dd->json_kinds : NULL);
	fputs(",\"new\":", out);
	put_run_totals(out, in->new, ct_html_doc_report(dd->d)->m, NULL);
	fputs("},\n\"sites\":[", out);
	for (long i = 0; i < dd->npairs && !rc; i++)
		rc = put_pair(dd, i);
	fputs("]", out);
	if (!rc && rb)
		rc = put_base_sites(dd);
	fputs("}", out);
	return rc;
}

/* The diff as a JSON value into *buf (malloc'd, the caller's), its frames interned into d's. */
int ct_html_diff_json(struct ct_html_doc *d, const struct ct_html_diff *in, char **buf, size_t *len)
{
	struct diff_data dd = {.d = d, .in = in};
	dd.base_classified = in->base_report && in->base_report->m->classified;
	dd.npairs = ct_baseline_pairs(in->base, in->new, &dd.pairs);
	int rc = dd.npairs < 0 ? (int)dd.npairs : 0;
	if (!rc && in->base_report)
		rc = sum_extras(&dd, in->base_report, &dd.x[0]);
	else if (!rc)
		rc = json_extras(&dd, &dd.x[0]);
	if (!rc)
		rc = sum_extras(&dd, ct_html_doc_report(d), &dd.x[1]);
	if (!rc)
		rc = (dd.out = open_memstream(buf, len)) ? 0 : -ENOMEM;
	if (!rc)
		rc = put_diff_body(&dd);
	if (dd.out && fclose(dd.out) && !rc)
		rc = -ENOMEM;
	free(dd.pairs);
	free(dd.x[0]);
	free(dd.x[1]);
	return rc;
}
