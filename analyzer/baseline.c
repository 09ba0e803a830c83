/* SPDX-License-Identifier: MIT */
/* Baselines: per site (first shown frame's function and source file), the leaked bytes of the kinds
 * that count and the bytes at the peak, from a report or a saved JSON report, and their comparison. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "markup.h"
#include "rules.h"
#include "size.h"

/* The lists a baseline reads, a report's rankings or a JSON report's lists of the same names. */
enum list { LEAKS, PEAK, ALLOCATIONS, NLISTS };
static const enum ct_rank list_rank[NLISTS] = {CT_BY_LEAKED, CT_BY_PEAK, CT_BY_ALLOCATIONS};
static const char *const list_json[NLISTS] = {"leaks", "peak", "allocations"};

struct site {
	char *function, *file; /* the key; file: the base name, NULL when unknown */
	unsigned line;         /* shown, never compared */
	uint64_t leaked, blocks, peak, allocations, bytes_allocated;
	int at_peak;   /* listed at the peak (a JSON report lists the top sites only) */
	int at_allocs; /* listed by allocations (the same) */
	/* A report's: the site's largest leak, peak and allocations entries, for their backtraces. */
	const struct ct_site *leak_entry, *peak_entry, *alloc_entry;
};

struct ct_baseline {
	struct site *v;
	size_t n, cap;
	uint64_t leaked, blocks, peak;
	const struct ct_site **ranks[NLISTS]; /* a report's rankings, which the entries point into */
	const struct ct_report *r;            /* the report of the entries' stacks; NULL from JSON */
	char *path;                           /* the trace or the JSON report */
	struct ct_totals t;                   /* the run's totals (report_json.c's summary) */
	int whole[NLISTS]; /* a JSON report's list holds every entry ("peak_entries"): what it lacks is 0 */
};

#define SHARE_DIGITS 18 /* share < 10^18: times any base, it fits in 128 bits */

/* The share of "P%" (n bytes without the '%'): digits, maybe a point and more digits; at most
 * SHARE_DIGITS of them after the point, and as many from the first that is not 0. */
static int parse_share(const char *s, size_t n, struct ct_growth *g)
{
	unsigned digits = 0, significant = 0;
	int point = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '.' && !point && i && i + 1 < n) {
			point = 1;
			continue;
		}
		if (!isdigit((unsigned char)s[i]))
			return -1;
		digits++;
		significant += g->share || s[i] != '0';
		g->scale += (unsigned)point;
		if (significant > SHARE_DIGITS || g->scale > SHARE_DIGITS)
			return -1;
		g->share = g->share * 10 + (uint64_t)(s[i] - '0');
	}
	g->relative = 1;
	return digits ? 0 : -1;
}

/* 10^n, n <= SHARE_DIGITS. */
static uint64_t ten_to(unsigned n)
{
	uint64_t v = 1;
	while (n--)
		v *= 10;
	return v;
}

int ct_growth_parse(const char *s, struct ct_growth *g)
{
	size_t n = strlen(s);
	*g = (struct ct_growth){0};
	if (n && s[n - 1] == '%')
		return parse_share(s, n - 1, g);
	return ct_parse_size(s, &g->bytes) < 0 ? -1 : 0;
}

uint64_t ct_growth_allowed(uint64_t base, const struct ct_growth *g)
{
	__extension__ typedef unsigned __int128 u128;
	u128 extra = g->bytes;
	if (g->relative) {
		u128 per = (u128)100 * ten_to(g->scale);
		extra = ((u128)base * g->share + per - 1) / per; /* rounded up */
	}
	return extra >= UINT64_MAX - base ? UINT64_MAX : base + (uint64_t)extra;
}

/* ---- building ---- */

static struct site *add(struct ct_baseline *b, const char *function, const char *file, unsigned line)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		struct site *v = realloc(b->v, cap * sizeof(*v));
		if (!v)
			return NULL;
		b->v = v, b->cap = cap;
	}
	struct site *s = &b->v[b->n];
	*s = (struct site){.function = strdup(function ? function : "??"), .line = line};
	file = file ? ct_basename(file) : NULL;
	if (!s->function || (file && !(s->file = strdup(file)))) {
		free(s->function);
		return NULL;
	}
	b->n++;
	return s;
}

static int cmp_key(const struct site *x, const struct site *y)
{
	int c = strcmp(x->function, y->function);
	if (c)
		return c;
	return x->file && y->file ? strcmp(x->file, y->file) : (x->file != NULL) - (y->file != NULL);
}

static int cmp_sites(const void *a, const void *b)
{
	return cmp_key(a, b);
}

static const struct ct_site *larger(const struct ct_site *a, const struct ct_site *b, int peak)
{
	if (!a || !b)
		return a ? a : b;
	return (peak ? b->peak_bytes > a->peak_bytes : b->leaked_bytes > a->leaked_bytes) ? b : a;
}

/* Sorts the sites by key and merges those with the same key: one site per function and file. */
static void merge(struct ct_baseline *b)
{
	if (b->n) /* a baseline without sites has no array, and qsort's base must not be NULL */
		qsort(b->v, b->n, sizeof(*b->v), cmp_sites);
	size_t n = 0;
	for (size_t i = 0; i < b->n; i++) {
		struct site *s = &b->v[i], *t = n ? &b->v[n - 1] : NULL;
		if (!t || cmp_key(t, s)) {
			b->v[n++] = *s;
			continue;
		}
		t->line = t->leaked >= s->leaked ? t->line : s->line;
		t->leaked += s->leaked, t->blocks += s->blocks, t->peak += s->peak;
		t->allocations += s->allocations, t->bytes_allocated += s->bytes_allocated;
		t->at_peak |= s->at_peak, t->at_allocs |= s->at_allocs;
		t->leak_entry = larger(t->leak_entry, s->leak_entry, 0);
		t->peak_entry = larger(t->peak_entry, s->peak_entry, 1);
		if (!t->alloc_entry ||
		    (s->alloc_entry && s->alloc_entry->allocations > t->alloc_entry->allocations))
			t->alloc_entry = s->alloc_entry;
		free(s->function);
		free(s->file);
	}
	b->n = n;
}

static const struct site *find(const struct ct_baseline *b, const struct site *key)
{
	return bsearch(key, b->v, b->n, sizeof(*b->v), cmp_sites);
}

/* ---- from a report ---- */

/* A copy of the first frame: the walk's frames live in its own stack frame (their strings in the
 * symbolizer's, as long as the report). */
static int first_frame(void *ctx, const struct ct_frame *f, unsigned index)
{
	(void)index;
	*(struct ct_frame *)ctx = *f;
	return 1; /* stops the walk */
}

static int add_entry(struct ct_baseline *b, const struct ct_report *r, const struct ct_site *e, enum list l)
{
	struct ct_frame first = {0}, *f = &first;
	int truncated, rc = ct_report_frames(r, e->stack, first_frame, &first, &truncated);
	if (rc < 0)
		return rc;
	if (!first.function)
		f = NULL; /* no frame shown */
	struct site *s = add(b, f ? f->function : NULL, f ? f->file : NULL, f ? f->line : 0);
	if (!s)
		return -ENOMEM;
	if (l == PEAK)
		s->peak = e->peak_bytes, s->at_peak = 1, s->peak_entry = e;
	else if (l == ALLOCATIONS)
		s->allocations = e->allocations, s->bytes_allocated = e->bytes_allocated, s->at_allocs = 1,
		s->alloc_entry = e;
	else
		s->leaked = e->leaked_bytes, s->blocks = e->leaked_allocations, s->leak_entry = e;
	return 0;
}

int ct_baseline_of_report(const struct ct_report *r, enum ct_fail_on level, struct ct_baseline **out)
{
	struct ct_baseline *b = calloc(1, sizeof(*b));
	if (!(*out = b))
		return -ENOMEM;
	b->peak = r->m->t.peak;
	b->r = r, b->t = r->m->t;
	if (!(b->path = strdup(r->path ? r->path : "")))
		return -ENOMEM;
	for (enum list l = 0; l < NLISTS; l++) {
		long n = ct_report_rank(r, list_rank[l], &b->ranks[l]);
		if (n < 0)
			return -ENOMEM;
		for (long i = 0; i < n; i++) {
			const struct ct_site *e = b->ranks[l][i];
			if (l == LEAKS && !ct_check_counts(level, e->kind))
				continue;
			if (l == LEAKS)
				b->leaked += e->leaked_bytes, b->blocks += e->leaked_allocations;
			if (add_entry(b, r, e, l) < 0)
				return -ENOMEM;
		}
	}
	merge(b);
	return 0;
}

/* ---- from a JSON report ---- */

static json_object *member(json_object *o, const char *key, json_type type)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, type) ? v : NULL;
}

static uint64_t number(json_object *o, const char *key)
{
	json_object *v = member(o, key, json_type_int);
	return v ? json_object_get_uint64(v) : 0;
}

/* The kind an entry names ("definite", ...: CT_CLASS_* + 1), 0 for none, -1 for an unknown name. */
static int entry_kind(json_object *e)
{
	json_object *k = member(e, "kind", json_type_string);
	if (!k)
		return 0;
	for (int kind = 1; ct_kind_name(kind); kind++)
		if (!strcmp(ct_kind_name(kind), json_object_get_string(k)))
			return kind;
	return -1;
}

static int add_json_entry(struct ct_baseline *b, json_object *e, enum list l)
{
	json_object *frames = member(e, "frames", json_type_array);
	json_object *f =
	    frames && json_object_array_length(frames) ? json_object_array_get_idx(frames, 0) : NULL;
	json_object *fn = f ? member(f, "function", json_type_string) : NULL;
	json_object *file = f ? member(f, "file", json_type_string) : NULL;
	struct site *s = add(b, fn ? json_object_get_string(fn) : NULL,
	                     file ? json_object_get_string(file) : NULL, f ? (unsigned)number(f, "line") : 0);
	if (!s)
		return -ENOMEM;
	if (l == PEAK)
		s->peak = number(e, "bytes"), s->at_peak = 1;
	else if (l == ALLOCATIONS)
		s->allocations = number(e, "allocations"), s->bytes_allocated = number(e, "bytes"),
		s->at_allocs = 1;
	else
		s->leaked = number(e, "bytes"), s->blocks = number(e, "allocations");
	return 0;
}

/* The run's totals from a JSON report's summary, under report_json.c's names. */
static void json_totals(json_object *summary, struct ct_totals *t)
{
	t->allocations = number(summary, "allocations");
	t->frees = number(summary, "frees");
	t->bytes_allocated = number(summary, "bytes_allocated");
	t->temporary = number(summary, "temporary_allocations");
	t->peak = number(summary, "peak_heap_bytes");
	t->current = number(summary, "leaked_bytes");
	t->live_allocations = number(summary, "leaked_allocations");
}

static int json_fail(struct ct_baseline *b, json_object *root, char *err, size_t errlen, const char *fmt,
                     const char *path)
{
	snprintf(err, errlen, fmt, path);
	json_object_put(root);
	ct_baseline_free(b);
	return -1;
}

int ct_baseline_of_json(const char *path, enum ct_fail_on level, struct ct_baseline **out, char *err,
                        size_t errlen)
{
	json_object *root = json_object_from_file(path);
	struct ct_baseline *b = calloc(1, sizeof(*b));
	*out = NULL;
	if (!b)
		return json_fail(b, root, err, errlen, "out of memory%s", "");
	if (!root)
		return json_fail(b, root, err, errlen, "cannot read '%s' as JSON", path);
	json_object *summary = member(root, "summary", json_type_object), *lists[NLISTS];
	for (enum list l = 0; l < NLISTS; l++)
		lists[l] = member(root, list_json[l], json_type_array);
	if (!summary || !lists[LEAKS] || !lists[PEAK])
		return json_fail(b, root, err, errlen, "'%s' is not a ctrack-analyze --json report", path);
	if (!(b->path = strdup(path)))
		return json_fail(b, root, err, errlen, "out of memory%s", "");
	b->peak = number(summary, "peak_heap_bytes");
	json_totals(summary, &b->t);
	for (enum list l = 0; l < NLISTS; l++) {
		char name[32];
		snprintf(name, sizeof(name), "%s_entries", list_json[l]);
		b->whole[l] = lists[l] && member(root, name, json_type_int) &&
		              number(root, name) == json_object_array_length(lists[l]);
	}
	for (enum list l = 0; l < NLISTS; l++)
		for (size_t i = 0; lists[l] && i < json_object_array_length(lists[l]); i++) {
			json_object *e = json_object_array_get_idx(lists[l], i);
			int peak = l != LEAKS, kind = peak ? 0 : entry_kind(e);
			if (kind < 0)
				return json_fail(b, root, err, errlen,
				                 "'%s' names a leak kind this ctrack does not know", path);
			if (!peak && !kind && level != CT_FAIL_REACHABLE)
				return json_fail(
				    b, root, err, errlen,
				    "'%s' has no leak classes (a report of a trace without ctrack's scan at "
				    "exit): only --fail-on=reachable compares its leaks",
				    path);
			if (!peak && !ct_check_counts(level, kind))
				continue;
			if (!peak)
				b->leaked += number(e, "bytes"), b->blocks += number(e, "allocations");
			if (add_json_entry(b, e, l) < 0)
				return json_fail(b, root, err, errlen, "out of memory%s", "");
		}
	json_object_put(root);
	merge(b);
	*out = b;
	return 0;
}

int ct_baseline_is_json(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -errno;
	int c;
	while ((c = getc(f)) != EOF && isspace(c))
		;
	fclose(f);
	return c == '{';
}

void ct_baseline_free(struct ct_baseline *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n; i++) {
		free(b->v[i].function);
		free(b->v[i].file);
	}
	free(b->v);
	for (enum list l = 0; l < NLISTS; l++)
		free(b->ranks[l]);
	free(b->path);
	free(b);
}

/* ---- matching two runs (--diff) ---- */

const char *ct_baseline_path(const struct ct_baseline *b)
{
	return b->path;
}

const struct ct_totals *ct_baseline_totals(const struct ct_baseline *b)
{
	return &b->t;
}

const struct ct_report *ct_baseline_report(const struct ct_baseline *b)
{
	return b->r;
}

/* s's figures in b, and the entry that stands for it (leaks first: the backtrace of what is left). */
static void figures_of(const struct ct_baseline *b, const struct site *s, struct ct_site_figures *f,
                       const struct ct_site **entry, enum ct_rank *by)
{
	int report = b->r != NULL;
	*f = (struct ct_site_figures){s->leaked,
	                              s->blocks,
	                              s->peak,
	                              s->allocations,
	                              s->bytes_allocated,
	                              report || b->whole[PEAK] || s->at_peak,
	                              report || b->whole[ALLOCATIONS] || s->at_allocs};
	*entry = s->leak_entry ? s->leak_entry : s->peak_entry ? s->peak_entry : s->alloc_entry;
	*by = s->leak_entry ? CT_BY_LEAKED : s->peak_entry ? CT_BY_PEAK : CT_BY_ALLOCATIONS;
}

long ct_baseline_pairs(const struct ct_baseline *base, const struct ct_baseline *new,
                       struct ct_site_pair **out)
{
	size_t i = 0, j = 0, n = 0;
	struct ct_site_pair *v = malloc((base->n + new->n + 1) * sizeof(*v));
	*out = NULL;
	if (!v)
		return -ENOMEM;
	while (i < base->n || j < new->n) {
		int c = i == base->n ? 1 : j == new->n ? -1 : cmp_key(&base->v[i], &new->v[j]);
		const struct site *b = c <= 0 ? &base->v[i++] : NULL, *s = c >= 0 ? &new->v[j++] : NULL;
		struct ct_site_pair *p = &v[n++];
		*p = (struct ct_site_pair){.in_base = b != NULL, .in_new = s != NULL};
		if (b)
			figures_of(base, b, &p->base, &p->base_entry, &p->base_by);
		if (s)
			figures_of(new, s, &p->new, &p->new_entry, &p->new_by);
		const struct site *k = s ? s : b;
		p->function = k->function, p->file = k->file, p->line = k->line;
	}
	*out = v;
	return (long)n;
}

/* ---- the comparison ---- */

static void put_growth(FILE *out, const struct ct_growth *g)
{
	char b[64];
	uint64_t ten = ten_to(g->scale);
	if (g->relative && g->scale)
		fprintf(out, "%" PRIu64 ".%0*" PRIu64 "%%", g->share / ten, (int)g->scale, g->share % ten);
	else if (g->relative)
		fprintf(out, "%" PRIu64 "%%", g->share);
	else
		fputs(ct_fmt_bytes(b, sizeof(b), g->bytes), out);
}

/* A site by its function's name as the report shows it (short, or whole with --full-names). */
static void put_site(const struct ct_report *r, FILE *out, const struct site *s)
{
	char name[512];
	const struct ct_frame f = {.function = s->function};
	fputs(ct_frame_display_name(r, &f, name, sizeof(name)), out);
	if (s->file && s->line)
		fprintf(out, " (%s:%u)", s->file, s->line);
	else if (s->file)
		fprintf(out, " (%s)", s->file);
}

static void put_change(FILE *out, uint64_t from, uint64_t to, uint64_t limit)
{
	char a[64], b[64], c[64];
	fprintf(out, "%s -> %s", ct_fmt_bytes(a, sizeof(a), from), ct_fmt_bytes(b, sizeof(b), to));
	if (from)
		fprintf(out, " (+%.1f%%)", 100.0 * (double)(to - from) / (double)from);
	fprintf(out, ", allowed %s", ct_fmt_bytes(c, sizeof(c), limit));
}

/* One site of new whose figure (leaked, or at the peak) grew past the allowance, with its backtrace. */
static int put_grown(const struct ct_report *r, const struct site *s, const struct site *was, int peak,
                     const struct ct_growth *g)
{
	uint64_t from = was ? (peak ? was->peak : was->leaked) : 0, to = peak ? s->peak : s->leaked;
	fputs(peak ? "peak grew at " : was && was->leaked ? "leak grew at " : "new leak at ", r->out);
	put_site(r, r->out, s);
	fputs(": ", r->out);
	put_change(r->out, from, to, ct_growth_allowed(from, g));
	fputc('\n', r->out);
	const struct ct_site *e = peak ? s->peak_entry : s->leak_entry;
	return e ? ct_report_text_entry(r, peak ? CT_BY_PEAK : CT_BY_LEAKED, e) : 0;
}

/* The sites of new past the allowance: their count, or -ENOMEM. */
static long grown_sites(const struct ct_baseline *base, const struct ct_baseline *new,
                        const struct ct_report *r, const struct ct_growth *g)
{
	long grown = 0;
	for (size_t i = 0; i < new->n; i++) {
		const struct site *s = &new->v[i], *was = find(base, s);
		int rc = 0, leak = s->leaked > ct_growth_allowed(was ? was->leaked : 0, g);
		/* at the peak: only sites both runs list (a JSON report lists the top ones) */
		int peak = was && s->at_peak && was->at_peak && s->peak > ct_growth_allowed(was->peak, g);
		if (leak)
			rc = put_grown(r, s, was, 0, g);
		if (!rc && peak)
			rc = put_grown(r, s, was, 1, g);
		if (rc < 0)
			return rc;
		grown += leak || peak;
	}
	return grown;
}

int ct_baseline_check(const struct ct_baseline *base, const struct ct_report *new, enum ct_fail_on level,
                      const struct ct_growth *g, FILE *out)
{
	struct ct_report to = *new;
	struct ct_baseline *now;
	to.out = out;
	int rc = ct_baseline_of_report(new, level, &now);
	if (rc < 0) {
		ct_baseline_free(now);
		return rc;
	}
	long grown = grown_sites(base, now, &to, g);
	if (grown < 0) {
		ct_baseline_free(now);
		return (int)grown;
	}
	char a[64], b[64], c[64], d[64];
	int totals = now->leaked > ct_growth_allowed(base->leaked, g),
	    peak = now->peak > ct_growth_allowed(base->peak, g);
	if (totals) {
		fprintf(out, "%s grew: ", ct_check_level_words(level, 1));
		put_change(out, base->leaked, now->leaked, ct_growth_allowed(base->leaked, g));
		fputc('\n', out);
	}
	if (peak) {
		fputs("peak heap grew: ", out);
		put_change(out, base->peak, now->peak, ct_growth_allowed(base->peak, g));
		fputc('\n', out);
	}
	int broken = grown || totals || peak;
	fprintf(out, "%s: ", broken ? "check failed" : "check passed");
	if (grown)
		fprintf(out, "%ld site%s past the baseline's allowance (+", grown, grown == 1 ? "" : "s");
	else
		fputs("no site past the baseline's allowance (+", out);
	put_growth(out, g);
	fprintf(out, "); %s %s -> %s, peak heap %s -> %s\n", ct_check_level_words(level, 1),
	        ct_fmt_bytes(a, sizeof(a), base->leaked), ct_fmt_bytes(b, sizeof(b), now->leaked),
	        ct_fmt_bytes(c, sizeof(c), base->peak), ct_fmt_bytes(d, sizeof(d), now->peak));
	ct_baseline_free(now);
	return broken;
}
