/* SPDX-License-Identifier: MIT */
/* The HTML report's JSON document (html_data.h): written into memory, then copied to the page with
 * "</" and "<!--" escaped. Frames are interned (one entry per distinct function, file, line, module
 * and inlining), stacks are lists of frame indices, and the timeline is the model's (timeline.h). */
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
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

struct ct_html_doc {
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

static int rehash(struct ct_html_doc *d)
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
static long intern(struct ct_html_doc *d, const struct ct_frame *f)
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

void ct_html_put_kinds(FILE *out, const struct ct_site *s, int classified)
{
	if (!classified)
		fputs("null", out);
	for (int k = 0; k < CT_KINDS && classified; k++)
		fprintf(out, "%s[%" PRIu64 ",%" PRIu64 "]", k ? "," : "[", s->class_allocations[k],
		        s->class_bytes[k]);
	fputs(classified ? "]" : "", out);
}

long ct_html_doc_frame(struct ct_html_doc *d, const struct ct_frame *f)
{
	return intern(d, f);
}

long ct_html_doc_site(const struct ct_html_doc *d, uint32_t stack)
{
	return stack < d->r->m->nnodes ? (long)d->site_of_node[stack] - 1 : -1;
}

const struct ct_report *ct_html_doc_report(const struct ct_html_doc *d)
{
	return d->r;
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
	fprintf(out, ",\"complete\":%s,\"classified\":%s,\"sample_rate\":%" PRIu64 ",\"notes\":",
	        m->complete ? "true" : "false", m->classified ? "true" : "false", m->sample_rate);
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

static int index_infos(const struct ct_html_doc *d, struct by_site_index *x)
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
static int hist_entries(struct ct_html_doc *d)
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
static void put_site_buckets(FILE *out, struct ct_html_doc *d, size_t site)
{
	fputs(",\"hb\":[", out);
	for (size_t t = 0; d->hist_at < d->nhist && d->hist[d->hist_at].site == site; d->hist_at++, t++) {
		const struct hist_entry *e = &d->hist[d->hist_at];
		fprintf(out, "%s%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, t ? "," : "",
		        e->bucket, e->n, e->bytes, e->temp, e->live);
	}
	fputc(']', out);
}

static int put_histogram(struct ct_html_doc *d)
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
	struct ct_html_doc *d = ctx;
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

static int put_stacks(struct ct_html_doc *d)
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

static void put_site(struct ct_html_doc *d, const struct ct_site *s, size_t i)
{
	FILE *out = d->out;
	const struct ct_report *r = d->r;
	fprintf(out,
	        "%s{\"stack\":%zu,\"n\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"temp\":%" PRIu64
	        ",\"peak\":%" PRIu64 ",\"peakn\":%" PRIu64 ",\"live\":%" PRIu64 ",\"liven\":%" PRIu64
	        ",\"kinds\":",
	        i ? ",\n" : "\n", i, s->allocations, s->bytes_allocated, s->temporary, s->peak_bytes,
	        s->peak_allocations, s->leaked_bytes, s->leaked_allocations);
	ct_html_put_kinds(out, s, r->m->classified);
	put_site_buckets(out, d, i);
	fputc('}', out);
}

static void put_sites(struct ct_html_doc *d)
{
	fputs("\"sites\":[", d->out);
	d->hist_at = 0;
	for (size_t i = 0; i < d->r->nsites; i++)
		put_site(d, &d->r->sites[i], i);
	fputs("],\n", d->out);
}

/* Marks the sites of the first SOURCE_SITES entries of each ranking as top ones. */
static int mark_top(struct ct_html_doc *d)
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

static void put_frames(FILE *out, const struct ct_html_doc *d)
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
	const struct ct_html_doc *d = ctx;
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
static int put_sources(struct ct_html_doc *d)
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

static int put_document(struct ct_html_doc *d, const struct ct_html_diff *diff, char **diff_buf)
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
		rc = ct_html_diff_json(d, diff, diff_buf, &diff_len);
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

static void release(struct ct_html_doc *d)
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
	struct ct_html_doc d = {.r = r};
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
