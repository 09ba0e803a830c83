/* SPDX-License-Identifier: MIT */
/* The HTML report's JSON document (html_data.h): written into memory, then copied to the page with
 * "</" and "<!--" escaped. Frames are interned (one entry per distinct function, file, line, module
 * and inlining), stacks are lists of frame indices, and the timeline is the model's (timeline.h). */
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "histogram.h"
#include "html_data.h"
#include "markup.h"
#include "rules.h"
#include "source.h"

/* Sites of each ranking whose frames get their source lines, and the bytes of source in all. */
#define SOURCE_SITES 50
#define SOURCE_BUDGET (1u << 20)
/* Lines each side of a frame's line at most, whatever --context asks (a page, not the file). */
#define SOURCE_CONTEXT_MAX 100
/* Top sites listed per histogram bucket. */
#define HIST_TOP 5

struct frame_key {
	char *full, *file, *module; /* owned */
	char *fn;                   /* the display name, owned */
	unsigned line;
	int inlined;
};

/* A source line a shown frame of a top site points at. */
struct wanted_line {
	uint32_t frame; /* the frame's index: its file */
	unsigned line;
};

struct data {
	FILE *out; /* the memory stream the document is written to */
	const struct ct_report *r;
	struct frame_key *frames;
	size_t nframes, cap_frames;
	uint32_t *table; /* frame index + 1 by hash, open addressing; size cap_table (a power of two) */
	size_t cap_table;
	uint32_t *site_of_node;  /* stack node -> site index + 1 */
	unsigned char *top;      /* per site: its frames' source lines are wanted */
	struct hist_entry *hist; /* per (site, size bucket), by site */
	size_t nhist, hist_at;
	struct wanted_line *lines;
	size_t nlines, cap_lines;
	int collect; /* the site being written is a top one */
	int failed;  /* out of memory */
	unsigned shown;
};

static int grow(void **v, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap * 2 : 64;
	while (n < need)
		n *= 2;
	void *p = realloc(*v, n * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = n;
	return 0;
}

static char *dup(const char *s)
{
	return s ? strdup(s) : NULL;
}

static uint64_t frame_hash(const struct ct_frame *f)
{
	uint64_t h = ct_mix_str(CT_MIX_SEED, f->function);
	h = ct_mix_str(h, f->file);
	h = ct_mix_str(h, f->module);
	h = ct_mix(h, &f->line, sizeof(f->line));
	return ct_mix(h, &f->inlined, sizeof(f->inlined));
}

static int same(const struct frame_key *k, const struct ct_frame *f)
{
	return k->line == f->line && k->inlined == f->inlined && ct_same_str(k->full, f->function) &&
	       ct_same_str(k->file, f->file) && ct_same_str(k->module, f->module);
}

static int rehash(struct data *d)
{
	size_t cap = d->cap_table ? d->cap_table * 2 : 1024;
	uint32_t *t = calloc(cap, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < d->nframes; i++) {
		const struct frame_key *k = &d->frames[i];
		struct ct_frame f = {.function = k->full,
		                     .file = k->file,
		                     .module = k->module,
		                     .line = k->line,
		                     .inlined = k->inlined};
		size_t j = frame_hash(&f) & (cap - 1);
		while (t[j])
			j = (j + 1) & (cap - 1);
		t[j] = (uint32_t)i + 1;
	}
	free(d->table);
	d->table = t;
	d->cap_table = cap;
	return 0;
}

/* The index of f among the frames, added when new; -ENOMEM. */
static long intern(struct data *d, const struct ct_frame *f)
{
	if ((d->nframes + 1) * 2 > d->cap_table && rehash(d) < 0)
		return -ENOMEM;
	size_t j = frame_hash(f) & (d->cap_table - 1);
	for (; d->table[j]; j = (j + 1) & (d->cap_table - 1))
		if (same(&d->frames[d->table[j] - 1], f))
			return (long)d->table[j] - 1;
	if (grow((void **)&d->frames, &d->cap_frames, d->nframes + 1, sizeof(*d->frames)) < 0)
		return -ENOMEM;
	char buf[512];
	const char *fn = ct_frame_display_name(d->r, f, buf, sizeof(buf));
	struct frame_key *k = &d->frames[d->nframes];
	*k = (struct frame_key){.full = dup(f->function),
	                        .file = dup(f->file),
	                        .module = dup(f->module),
	                        .fn = dup(fn),
	                        .line = f->line,
	                        .inlined = f->inlined};
	if (!k->full || !k->fn || (f->file && !k->file) || (f->module && !k->module)) {
		free(k->full), free(k->file), free(k->module), free(k->fn);
		return -ENOMEM;
	}
	d->table[j] = (uint32_t)++d->nframes;
	return (long)d->nframes - 1;
}

/* ---- meta and totals ---- */

static void put_notes(FILE *out, const struct ct_model *m)
{
	size_t shown = 0;
	fputs("[", out);
	for (int warning = 1; warning >= 0; warning--)
		for (size_t i = 0; i < m->nnotes; i++) {
			const struct ct_note *n = &m->notes[i];
			if (!n->warning != !warning)
				continue;
			fprintf(out, "%s{\"level\":\"%s\",\"text\":", shown++ ? "," : "",
			        warning ? "warning" : "info");
			ct_json_string(out, n->text.data, n->text.len);
			fprintf(out, ",\"count\":%" PRIu64 "}", n->count);
		}
	fputs("]", out);
}

static void put_meta(FILE *out, const struct ct_report *r)
{
	const struct ct_model *m = r->m;
	const struct ct_process *p = &m->proc;
	fputs("\"meta\":{\"program\":", out);
	if (p->seen && p->argc)
		ct_json_cstring(out, ct_basename(p->argv[0].data));
	else
		ct_json_cstring(out, ct_basename(r->path));
	fputs(",\"argv\":[", out);
	for (size_t i = 0; p->seen && i < p->argc; i++) {
		fputs(i ? "," : "", out);
		ct_json_string(out, p->argv[i].data, p->argv[i].len);
	}
	fprintf(out, "],\"pid\":%" PRIu64 ",\"runtime_us\":%" PRIu64 ",\"trace\":", p->seen ? p->pid : 0,
	        ct_model_runtime_us(m));
	ct_json_cstring(out, r->path);
	fprintf(out, ",\"complete\":%s,\"classified\":%s,\"notes\":", m->complete ? "true" : "false",
	        m->classified ? "true" : "false");
	put_notes(out, m);
	fputs("},\n", out);
}

static void put_totals(FILE *out, const struct ct_model *m)
{
	static const char *const names[CT_KINDS] = {"definite", "indirect", "possible", "reachable",
	                                            "unscanned"};
	const struct ct_totals *t = &m->t;
	uint64_t blocks[CT_KINDS], bytes[CT_KINDS];
	ct_model_class_totals(m, blocks, bytes);
	fprintf(out,
	        "\"totals\":{\"allocations\":%" PRIu64 ",\"frees\":%" PRIu64 ",\"bytes_allocated\":%" PRIu64
	        ",\"temporary\":%" PRIu64 ",\"peak\":%" PRIu64 ",\"peak_time_us\":%" PRIu64
	        ",\"peak_rss\":%" PRIu64 ",\"leaked_bytes\":%" PRIu64 ",\"leaked_blocks\":%" PRIu64
	        ",\"kinds\":{",
	        t->allocations, t->frees, t->bytes_allocated, t->temporary, t->peak, t->peak_time_us,
	        t->peak_rss, t->current, t->live_allocations);
	for (int k = 0; k < CT_KINDS; k++)
		fprintf(out, "%s\"%s\":[%" PRIu64 ",%" PRIu64 "]", k ? "," : "", names[k], blocks[k],
		        bytes[k]);
	fputs("}},\n", out);
}

/* ---- histogram ---- */

/* One site's allocations in one size bucket: the page narrows the histogram to a window with them
 * (a site's allocations in the window spread over its buckets as over the whole run). */
struct hist_entry {
	uint32_t site, bucket;
	uint64_t n, bytes, temp, live;
};

static int by_bucket_n(const void *a, const void *b)
{
	const struct hist_entry *x = a, *y = b;
	if (x->bucket != y->bucket)
		return x->bucket < y->bucket ? -1 : 1;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return x->site < y->site ? -1 : x->site > y->site;
}

/* Infos by site: order[first[s] .. first[s + 1]) are site s's infos with allocations (a counting
 * sort: memory in proportion to the infos, 4 bytes each). */
struct by_site_index {
	size_t *first;
	uint32_t *order;
};

static int index_infos(const struct data *d, struct by_site_index *x)
{
	const struct ct_model *m = d->r->m;
	size_t nsites = d->r->nsites;
	x->first = calloc(nsites + 2, sizeof(*x->first));
	x->order = malloc((m->ninfos ? m->ninfos : 1) * sizeof(*x->order));
	if (!x->first || !x->order || m->ninfos > UINT32_MAX)
		return -ENOMEM;
	for (size_t i = 0; i < m->ninfos; i++) {
		const struct ct_info *info = &m->infos[i];
		uint32_t s = info->stack < m->nnodes ? d->site_of_node[info->stack] : 0;
		if (info->allocations && s)
			x->first[s + 1]++; /* counted at s + 1: after the sums, first[s + 1] is s's start */
	}
	for (size_t s = 1; s <= nsites + 1; s++)
		x->first[s] += x->first[s - 1];
	for (size_t i = 0; i < m->ninfos; i++) {
		const struct ct_info *info = &m->infos[i];
		uint32_t s = info->stack < m->nnodes ? d->site_of_node[info->stack] : 0;
		if (info->allocations && s)
			x->order[x->first[s]++] = (uint32_t)i;
	}
	return 0; /* first[s + 1] is now the end of site s's infos, first[s] its start: site s - 1's end */
}

/* d->hist: per (site, bucket) with allocations, the sums of its infos, by site then bucket. */
static int hist_entries(struct data *d)
{
	const struct ct_model *m = d->r->m;
	struct by_site_index x = {0};
	struct hist_entry b[CT_HIST_BUCKETS];
	size_t cap = 0;
	int rc = index_infos(d, &x);
	for (size_t s = 0; !rc && s < d->r->nsites; s++) {
		memset(b, 0, sizeof(b));
		for (size_t k = x.first[s]; k < x.first[s + 1]; k++) {
			const struct ct_info *info = &m->infos[x.order[k]];
			struct hist_entry *e = &b[ct_hist_bucket_of(info->size)];
			e->n += info->allocations, e->bytes += info->allocations * info->size;
			e->temp += info->temporary, e->live += info->live;
		}
		for (int k = 0; k < CT_HIST_BUCKETS && !rc; k++) {
			if (!b[k].n)
				continue;
			rc = grow((void **)&d->hist, &cap, d->nhist + 1, sizeof(*d->hist));
			if (!rc)
				d->hist[d->nhist++] = (struct hist_entry){
				    (uint32_t)s, (uint32_t)k, b[k].n, b[k].bytes, b[k].temp, b[k].live};
		}
	}
	free(x.first);
	free(x.order);
	return rc;
}

/* A site's size buckets: "hb": [bucket, allocations, bytes, temporary, live, ...]. */
static void put_site_buckets(FILE *out, struct data *d, size_t site)
{
	fputs(",\"hb\":[", out);
	for (size_t t = 0; d->hist_at < d->nhist && d->hist[d->hist_at].site == site; d->hist_at++, t++) {
		const struct hist_entry *e = &d->hist[d->hist_at];
		fprintf(out, "%s%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, t ? "," : "",
		        e->bucket, e->n, e->bytes, e->temp, e->live);
	}
	fputc(']', out);
}

static int put_histogram(struct data *d)
{
	FILE *out = d->out;
	struct ct_histogram h;
	struct hist_entry *v = malloc((d->nhist ? d->nhist : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (d->nhist) /* d->hist is NULL without allocations */
		memcpy(v, d->hist, d->nhist * sizeof(*v));
	qsort(v, d->nhist, sizeof(*v), by_bucket_n);
	ct_histogram_of(d->r->m, &h);
	fputs("\"histogram\":[", out);
	size_t e = 0;
	for (int k = h.first; k <= h.last; k++) {
		const struct ct_hist_bucket *b = &h.b[k];
		fprintf(out,
		        "%s{\"lo\":%" PRIu64 ",\"hi\":%" PRIu64 ",\"n\":%" PRIu64 ",\"bytes\":%" PRIu64
		        ",\"temp\":%" PRIu64 ",\"live\":%" PRIu64 ",\"top\":[",
		        k > h.first ? ",\n" : "\n", b->lo, b->hi, b->allocations, b->bytes, b->temporary,
		        b->live);
		while (e < d->nhist && (int)v[e].bucket < k)
			e++;
		for (size_t t = 0; e < d->nhist && (int)v[e].bucket == k; e++, t++)
			if (t < HIST_TOP)
				fprintf(out, "%s[%" PRIu32 ",%" PRIu64 "]", t ? "," : "", v[e].site, v[e].n);
		fputs("]}", out);
	}
	fputs("],\n", out);
	free(v);
	return 0;
}

/* ---- sites and stacks ---- */

static int put_stack_frame(void *ctx, const struct ct_frame *f, unsigned index)
{
	struct data *d = ctx;
	long i = intern(d, f);
	if (i < 0)
		return (int)i;
	fprintf(d->out, "%s%ld", index ? "," : "", i);
	if (d->collect && f->file && f->line) {
		if (grow((void **)&d->lines, &d->cap_lines, d->nlines + 1, sizeof(*d->lines)) < 0)
			return -ENOMEM;
		d->lines[d->nlines++] = (struct wanted_line){(uint32_t)i, f->line};
	}
	return 0;
}

static int put_stacks(struct data *d)
{
	const struct ct_report *r = d->r;
	int rc = 0;
	fputs("\"stacks\":[", d->out);
	for (size_t i = 0; i < r->nsites && !rc; i++) {
		int truncated = 0;
		fputs(i ? ",\n[" : "\n[", d->out);
		d->collect = d->top[i];
		rc = ct_report_frames(r, r->sites[i].stack, put_stack_frame, d, &truncated);
		fputc(']', d->out);
	}
	fputs("],\n", d->out);
	return rc;
}

static void put_site(struct data *d, const struct ct_site *s, size_t i)
{
	FILE *out = d->out;
	const struct ct_report *r = d->r;
	fprintf(out,
	        "%s{\"stack\":%zu,\"n\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"temp\":%" PRIu64
	        ",\"peak\":%" PRIu64 ",\"peakn\":%" PRIu64 ",\"live\":%" PRIu64 ",\"liven\":%" PRIu64
	        ",\"kinds\":",
	        i ? ",\n" : "\n", i, s->allocations, s->bytes_allocated, s->temporary, s->peak_bytes,
	        s->peak_allocations, s->leaked_bytes, s->leaked_allocations);
	if (!r->m->classified)
		fputs("null", out);
	for (int k = 0; k < CT_KINDS && r->m->classified; k++)
		fprintf(out, "%s[%" PRIu64 ",%" PRIu64 "]", k ? "," : "[", s->class_allocations[k],
		        s->class_bytes[k]);
	fputs(r->m->classified ? "]" : "", out);
	put_site_buckets(out, d, i);
	fputc('}', out);
}

static void put_sites(struct data *d)
{
	fputs("\"sites\":[", d->out);
	d->hist_at = 0;
	for (size_t i = 0; i < d->r->nsites; i++)
		put_site(d, &d->r->sites[i], i);
	fputs("],\n", d->out);
}

/* Marks the sites of the first SOURCE_SITES entries of each ranking as top ones. */
static int mark_top(struct data *d)
{
	static const enum ct_rank ranks[] = {CT_BY_LEAKED, CT_BY_PEAK, CT_BY_ALLOCATIONS, CT_BY_TEMPORARY};
	for (size_t k = 0; k < sizeof(ranks) / sizeof(ranks[0]); k++) {
		const struct ct_site **v;
		long n = ct_report_rank(d->r, ranks[k], &v);
		if (n < 0)
			return (int)n;
		for (long i = 0; i < n && i < SOURCE_SITES; i++) {
			uint32_t s = v[i]->stack < d->r->m->nnodes ? d->site_of_node[v[i]->stack] : 0;
			if (s)
				d->top[s - 1] = 1;
		}
		free(v);
	}
	return 0;
}

/* ---- frames ---- */

static void put_frames(FILE *out, const struct data *d)
{
	fputs("\"frames\":[", out);
	for (size_t i = 0; i < d->nframes; i++) {
		const struct frame_key *k = &d->frames[i];
		fputs(i ? ",\n{\"fn\":" : "\n{\"fn\":", out);
		ct_json_cstring(out, k->fn);
		fputs(",\"full\":", out);
		ct_json_cstring(out, k->full);
		fputs(",\"file\":", out);
		ct_json_cstring(out, k->file);
		fprintf(out, ",\"line\":%u,\"module\":", k->line);
		ct_json_cstring(out, k->module ? ct_basename(k->module) : NULL);
		fprintf(out, ",\"inl\":%d}", k->inlined ? 1 : 0);
	}
	fputs("],\n", out);
}

/* ---- timeline ---- */

/* A per-slice figure of the whole heap as an array: the slice totals' field at offset off. */
static void put_series(FILE *out, const char *name, const struct ct_slice_total *t, uint32_t n, size_t off)
{
	fprintf(out, ",\"%s\":[", name);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t v;
		memcpy(&v, (const char *)&t[i] + off, sizeof(v));
		fprintf(out, i ? ",%" PRIu64 : "%" PRIu64, v);
	}
	fputc(']', out);
}

/* The whole heap's arrays at its width ("width_us", "n" slices), the sites' ("sites") at theirs
 * ("site_width_us", "site_n"): a multiple of the heap's, coarser when many busy stacks asked
 * (timeline.h). A window is a range of site slices. */
static void put_timeline(FILE *out, const struct ct_report *r)
{
	const struct ct_model *m = r->m;
	uint32_t n = ct_timeline_nslices(m);
	const struct ct_slice_total *t = ct_timeline_totals(m);
	fprintf(out, "\"timeline\":{\"width_us\":%" PRIu64 ",\"n\":%" PRIu32, ct_timeline_width_us(m), n);
	fprintf(out, ",\"site_width_us\":%" PRIu64 ",\"site_n\":%" PRIu32, ct_timeline_site_width_us(m),
	        ct_timeline_site_nslices(m));
	put_series(out, "heap", t, n, offsetof(struct ct_slice_total, heap));
	put_series(out, "rss", t, n, offsetof(struct ct_slice_total, rss));
	put_series(out, "allocs", t, n, offsetof(struct ct_slice_total, allocations));
	put_series(out, "temps", t, n, offsetof(struct ct_slice_total, temporary));
	put_series(out, "alloc_bytes", t, n, offsetof(struct ct_slice_total, alloc_bytes));
	fputs(",\n\"sites\":[", out);
	for (size_t i = 0; i < r->nsites; i++) {
		size_t ns;
		const struct ct_slice *s = ct_timeline_slices(m, r->sites[i].stack, &ns);
		fputs(i ? ",\n[" : "\n[", out);
		for (size_t j = 0; j < ns; j++)
			fprintf(out, "%s%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64,
			        j ? "," : "", s[j].slice, s[j].allocations, s[j].alloc_bytes, s[j].frees,
			        s[j].free_bytes, s[j].temporary);
		fputc(']', out);
	}
	fputs("]},\n", out);
}

static void put_marks(FILE *out, const struct ct_model *m)
{
	fputs("\"marks\":[", out);
	for (size_t i = 0; i < m->nmarks; i++) {
		fputs(i ? ",{\"name\":" : "{\"name\":", out);
		ct_json_string(out, m->marks[i].name.data, m->marks[i].name.len);
		fprintf(out, ",\"t\":%" PRIu64 "}", m->marks[i].time_us);
	}
	fputs("],\n", out);
}

/* ---- sources ---- */

static int by_file_line(const void *a, const void *b, void *ctx)
{
	const struct data *d = ctx;
	const struct wanted_line *x = a, *y = b;
	int c = strcmp(d->frames[x->frame].file, d->frames[y->frame].file);
	return c ? c : x->line < y->line ? -1 : x->line > y->line;
}

/* The lines of one file around its frames' lines w[0..n) (sorted), after sep, as a JSON member: the first
 * line's number and the lines from there, those outside every frame's window written empty. The
 * lines come from source.h, which reads only regular text files of a bounded size and never waits on
 * a FIFO. Returns the bytes of source written, 0 when the file cannot be shown, or -ENOMEM. */
static long put_source(FILE *out, const char *sep, struct ct_sources *src, const char *file,
                       const struct wanted_line *w, size_t n, unsigned ctx)
{
	struct ct_source_line *lines = malloc((2 * (size_t)ctx + 1) * sizeof(*lines));
	unsigned next = 0; /* the next line number to write (0: none written yet) */
	long bytes = 0;
	if (!lines)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++) {
		int got = ct_source_lines(src, file, w[k].line, ctx, lines, 2 * (size_t)ctx + 1);
		if (got < 0) {
			free(lines);
			return got;
		}
		for (int i = 0; i < got; i++) {
			const struct ct_source_line *l = &lines[i];
			if (next && l->number < next)
				continue; /* already written for the frame before */
			if (!next) {
				fputs(sep, out);
				ct_json_cstring(out, file);
				fprintf(out, ":{\"first\":%u,\"lines\":[", l->number);
			}
			for (; next && next < l->number; next++, bytes++)
				fputs(",\"\"", out); /* between two frames' windows */
			fputs(next ? "," : "", out);
			ct_json_cstring(out, l->text);
			bytes += (long)strlen(l->text) + 1;
			next = l->number + 1;
		}
	}
	free(lines);
	if (next)
		fputs("]}", out);
	return bytes;
}

/* The lines around the top sites' frames, per file, as long as the budget lasts. */
static int put_sources(struct data *d)
{
	FILE *out = d->out;
	unsigned ctx = d->r->source_context < SOURCE_CONTEXT_MAX ? d->r->source_context : SOURCE_CONTEXT_MAX;
	size_t budget = SOURCE_BUDGET, files = 0;
	struct ct_sources *src = ctx && d->nlines ? ct_sources_new() : NULL;
	int rc = 0;
	fputs("\"sources\":{", out);
	if (src)
		qsort_r(d->lines, d->nlines, sizeof(*d->lines), by_file_line, d);
	for (size_t i = 0, j; src && i < d->nlines && budget && !rc; i = j) {
		const char *file = d->frames[d->lines[i].frame].file;
		for (j = i; j < d->nlines && !strcmp(d->frames[d->lines[j].frame].file, file); j++)
			;
		if (d->lines[j - 1].line - d->lines[i].line > budget)
			continue; /* frames too far apart in a huge file: the gap alone would take it all */
		long used = put_source(out, files ? ",\n" : "\n", src, file, d->lines + i, j - i, ctx);
		rc = used < 0 ? (int)used : 0;
		files += used > 0;
		budget = used > 0 && (size_t)used < budget ? budget - (size_t)used : used > 0 ? 0 : budget;
	}
	ct_sources_free(src);
	fputs("},\n", out);
	return rc;
}

/* ---- the diff (--diff BASE NEW --html) ---- */

/* What a matched site's figures lack in baseline.h's pairs: its temporary allocations and its leaks
 * by kind, summed over a run's sites (a trace's) or entries (a JSON report's lists) of the same key. */
struct extra {
	uint64_t temp;
	uint64_t kinds[CT_KINDS][2]; /* blocks, bytes */
	int temp_known;              /* a JSON report lists the top sites' temporary allocations only */
};

struct diff_data {
	struct data *d;
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
	long i = intern(dd->d, f);
	if (i < 0)
		return (int)i;
	fprintf(dd->out, "%s%ld", index ? "," : "", i);
	return 0;
}

/* The frames of a pair's backtrace: NEW's entry's, else BASE's, else (a site only a JSON report
 * names) its one known frame. */
static int put_pair_frames(struct diff_data *dd, const struct ct_site_pair *p)
{
	const struct ct_report *r = p->new_entry ? dd->d->r : p->base_entry ? dd->in->base_report : NULL;
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
	const struct data *d = dd->d;
	FILE *out = dd->out;
	char buf[512];
	const struct ct_frame key = {.function = p->function};
	long site = -1;
	if (p->new_entry && p->new_entry->stack < d->r->m->nnodes)
		site = (long)d->site_of_node[p->new_entry->stack] - 1;
	fprintf(out, "%s{\"status\":\"%s\",\"fn\":", i ? ",\n" : "\n", pair_status(p));
	ct_json_cstring(out, ct_frame_display_name(d->r, &key, buf, sizeof(buf)));
	fputs(",\"full\":", out);
	ct_json_cstring(out, p->function);
	fputs(",\"file\":", out);
	ct_json_cstring(out, p->file);
	fprintf(out, ",\"line\":%u,\"site\":%ld,\"frames\":[", p->line, site);
	int rc = put_pair_frames(dd, p);
	fputs("],\"base\":", out);
	put_side(out, p->in_base, &p->base, dd->x[0] ? &dd->x[0][i] : NULL, dd->base_classified);
	fputs(",\"new\":", out);
	put_side(out, p->in_new, &p->new, &dd->x[1][i], d->r->m->classified);
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
		if (!rb->m->classified)
			fputs("null", out);
		for (int k = 0; k < CT_KINDS && rb->m->classified; k++)
			fprintf(out, "%s[%" PRIu64 ",%" PRIu64 "]", k ? "," : "[", s->class_allocations[k],
			        s->class_bytes[k]);
		fputs(rb->m->classified ? "]}" : "}", out);
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
	put_run_totals(out, in->new, dd->d->r->m, NULL);
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
static int diff_document(struct data *d, const struct ct_html_diff *in, char **buf, size_t *len)
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
		rc = sum_extras(&dd, d->r, &dd.x[1]);
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

/* ---- the document ---- */

/* Copies the document to the page: "</" as "<\/", "<!--" as "\u003c!--" (both only in strings). */
static int copy_escaped(FILE *out, const char *s, size_t n)
{
	size_t from = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '<' || i + 1 >= n || (s[i + 1] != '/' && s[i + 1] != '!'))
			continue;
		fwrite(s + from, 1, i - from, out);
		fputs(s[i + 1] == '/' ? "<\\" : "\\u003c", out);
		from = i + 1;
	}
	fwrite(s + from, 1, n - from, out);
	return ferror(out) ? -EIO : 0;
}

static int put_document(struct data *d, const struct ct_html_diff *diff, char **diff_buf)
{
	const struct ct_report *r = d->r;
	FILE *out = d->out;
	size_t diff_len = 0;
	fputs("{\"version\":1,\n", out);
	put_meta(out, r);
	put_totals(out, r->m);
	int rc = mark_top(d);
	if (!rc)
		rc = put_stacks(d);
	if (!rc && diff) /* before "frames": the diff's frames join them */
		rc = diff_document(d, diff, diff_buf, &diff_len);
	if (rc)
		return rc;
	put_frames(out, d);
	rc = hist_entries(d);
	if (rc)
		return rc;
	put_sites(d);
	put_timeline(out, r);
	put_marks(out, r->m);
	rc = put_histogram(d);
	if (rc)
		return rc;
	rc = put_sources(d);
	fputs("\"diff\":", out);
	if (*diff_buf)
		fwrite(*diff_buf, 1, diff_len, out);
	fputs(*diff_buf ? "}\n" : "null}\n", out);
	return rc;
}

static void release(struct data *d)
{
	for (size_t i = 0; i < d->nframes; i++) {
		struct frame_key *k = &d->frames[i];
		free(k->full), free(k->file), free(k->module), free(k->fn);
	}
	free(d->frames);
	free(d->table);
	free(d->site_of_node);
	free(d->top);
	free(d->lines);
	free(d->hist);
}

int ct_html_data(FILE *out, const struct ct_report *r)
{
	return ct_html_data_diff(out, r, NULL);
}

int ct_html_data_diff(FILE *out, const struct ct_report *r, const struct ct_html_diff *diff)
{
	char *buf = NULL, *diff_buf = NULL;
	size_t len = 0;
	struct data d = {.r = r};
	d.site_of_node = calloc(r->m->nnodes ? r->m->nnodes : 1, sizeof(*d.site_of_node));
	d.top = calloc(r->nsites ? r->nsites : 1, 1);
	d.out = open_memstream(&buf, &len);
	int rc = d.site_of_node && d.top && d.out ? 0 : -ENOMEM;
	for (size_t i = 0; !rc && i < r->nsites; i++)
		if (r->sites[i].stack < r->m->nnodes)
			d.site_of_node[r->sites[i].stack] = (uint32_t)i + 1;
	if (!rc)
		rc = put_document(&d, diff, &diff_buf);
	if (d.out && fclose(d.out) && !rc)
		rc = -ENOMEM;
	if (!rc)
		rc = copy_escaped(out, buf, len);
	free(buf);
	free(diff_buf);
	release(&d);
	return rc;
}
