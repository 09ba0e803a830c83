/* SPDX-License-Identifier: MIT */
/* valgrind massif's out file, as ms_print and massif-visualizer read it: the heap over time as at
 * most MAX_SNAPSHOTS snapshots at regular intervals of the timeline (timeline.h), every
 * detailed_freq-th one detailed (massif's --detailed-freq) with the tree of what was live at its
 * time, then the peak and the exit detailed, each tree massif's (allocation functions first, callers
 * below, each node the sum of its children). A plain snapshot is the highest heap of its stretch; a
 * detailed one the heap at the stretch's end, the sum of its tree. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack-config.h"
#include "export.h"

/* Snapshots at regular intervals (massif's default is about 50); the peak and the exit come on top. */
#define MAX_SNAPSHOTS 50

struct massif {
	FILE *out;
	const struct ct_tree *t; /* reversed: the root's children are the sites' first frames */
	unsigned next;           /* snapshot number */
	uint64_t last_ms;        /* time of the previous snapshot: ms_print wants them in order */
};

/* Text on one line with no '#' (ms_print drops everything after one as a comment). */
static void put_text(FILE *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		fputc(c < 0x20 || c == 0x7f ? ' ' : c == '#' ? '?' : c, out);
	}
}

static void put_ctext(FILE *out, const char *s)
{
	put_text(out, s, strlen(s));
}

static void put_header(FILE *out, const struct ct_process *p)
{
	fputs("desc: written by ctrack-analyze " CTRACK_VERSION "\ncmd:", out);
	for (size_t i = 0; i < p->argc; i++) {
		fputc(' ', out);
		put_text(out, p->argv[i].data, p->argv[i].len);
	}
	if (!p->argc && p->exe.data) {
		fputc(' ', out);
		put_text(out, p->exe.data, p->exe.len);
	}
	fputs("\ntime_unit: ms\n", out);
}

static void put_snapshot(struct massif *ms, uint64_t time_us, uint64_t heap, const char *tree)
{
	uint64_t ms_time = time_us / 1000;
	if (ms_time < ms->last_ms)
		ms_time = ms->last_ms;
	ms->last_ms = ms_time;
	fprintf(ms->out,
	        "#-----------\nsnapshot=%u\n#-----------\ntime=%" PRIu64 "\nmem_heap_B=%" PRIu64
	        "\nmem_heap_extra_B=0\nmem_stacks_B=0\nheap_tree=%s\n",
	        ms->next++, ms_time, heap, tree);
}

static void put_frame(FILE *out, const struct ct_frame *f)
{
	fprintf(out, "0x%" PRIX64 ": ", f->address);
	put_ctext(out, f->function);
	if (f->inlined)
		fputs(" [inlined]", out);
	if (f->file) {
		fputs(" (", out);
		put_ctext(out, f->file);
		fprintf(out, ":%u)", f->line);
	} else if (f->module) {
		fputs(" (in ", out);
		put_ctext(out, f->module);
		fputc(')', out);
	}
}

struct child {
	uint32_t node;
	uint64_t bytes;
};

static int by_bytes(const void *a, const void *b)
{
	const struct child *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return (x->node > y->node) - (x->node < y->node);
}

/* Massif's threshold: 1% of the snapshot's heap. */
static int significant(uint64_t bytes, uint64_t heap)
{
	return bytes * 100 >= heap;
}

static void indent(FILE *out, unsigned depth)
{
	for (unsigned i = 0; i < depth; i++)
		fputc(' ', out);
}

/* Node n and the significant part of its subtree for figure fig, indented one space per level.
 * Children come by bytes, largest first; those under the threshold as one "in N places" line. A
 * node's own cost (stacks that end there while others go on) is a child of its own, so that every
 * node's bytes are the sum of its children's. */
static int put_node(struct massif *ms, uint32_t n, enum ct_fig fig, uint64_t heap)
{
	const struct ct_tree *t = ms->t;
	const struct ct_tree_node *node = &t->nodes[n];
	size_t nkids = 0, cap = 0;
	for (uint32_t c = ct_tree_first(t, n); c; c = ct_tree_next(t, c))
		cap++;
	struct child *kids = malloc((cap ? cap : 1) * sizeof(*kids));
	if (!kids)
		return -ENOMEM;
	for (uint32_t c = ct_tree_first(t, n); c; c = ct_tree_next(t, c))
		if (ct_tree_total(t, c, 0)[fig])
			kids[nkids++] = (struct child){c, ct_tree_total(t, c, 0)[fig]};
	qsort(kids, nkids, sizeof(*kids), by_bytes);

	size_t nsig = 0, ninsig = 0;
	uint64_t insig = 0, self = ct_tree_self(t, n, 0)[fig];
	for (size_t i = 0; i < nkids; i++)
		if (significant(kids[i].bytes, heap))
			nsig++;
		else
			ninsig++, insig += kids[i].bytes;
	int own = self && nkids; /* a leaf's own cost needs no line of its own */
	indent(ms->out, node->depth);
	fprintf(ms->out, "n%zu: %" PRIu64 " ", nsig + (ninsig > 0) + own, ct_tree_total(t, n, 0)[fig]);
	if (n)
		put_frame(ms->out, &node->frame);
	else
		fputs("(heap allocation functions) malloc/new/new[], --alloc-fns, etc.", ms->out);
	fputc('\n', ms->out);

	int rc = 0;
	for (size_t i = 0; i < nsig && !rc; i++)
		rc = put_node(ms, kids[i].node, fig, heap);
	free(kids);
	if (own) {
		indent(ms->out, node->depth + 1);
		fprintf(ms->out, "n0: %" PRIu64 " in stacks that end at the frame above\n", self);
	}
	if (ninsig) {
		indent(ms->out, node->depth + 1);
		fprintf(ms->out, "n0: %" PRIu64 " in %zu place%s, %sbelow massif's threshold (1.00%%)\n",
		        insig, ninsig, ninsig == 1 ? "" : "s", ninsig == 1 ? "" : "all ");
	}
	return rc;
}

static int put_detailed(struct massif *ms, uint64_t time_us, uint64_t heap, enum ct_fig fig, const char *kind)
{
	put_snapshot(ms, time_us, heap, kind);
	return put_node(ms, 0, fig, heap);
}

/* Every site's live bytes at the end of a slice, brought forward slice by slice (sites by index
 * in the report; each site's next timeline entry in next). */
struct live {
	const struct ct_model *m;
	struct ct_report r; /* the report, its sites' leaked bytes those live at the time */
	size_t *next;
	uint64_t heap; /* the sum */
};

static int live_init(struct live *l, const struct ct_report *r)
{
	l->m = r->m;
	l->r = *r;
	l->heap = 0;
	l->next = calloc(r->nsites ? r->nsites : 1, sizeof(*l->next));
	l->r.sites = malloc((r->nsites ? r->nsites : 1) * sizeof(*l->r.sites));
	if (!l->next || !l->r.sites)
		return -ENOMEM;
	memcpy(l->r.sites, r->sites, r->nsites * sizeof(*r->sites));
	for (size_t i = 0; i < r->nsites; i++)
		l->r.sites[i].leaked_bytes = 0;
	return 0;
}

static void live_release(struct live *l)
{
	free(l->next);
	free(l->r.sites);
}

/* Brings the sites to the end of site slice `last`. Unsigned sums: a slice may free more than it
 * allocates, the running sum never goes below 0. */
static void live_advance(struct live *l, uint32_t last)
{
	for (size_t i = 0; i < l->r.nsites; i++) {
		struct ct_site *site = &l->r.sites[i];
		size_t n;
		const struct ct_slice *v = ct_timeline_slices(l->m, site->stack, &n);
		for (; l->next[i] < n && v[l->next[i]].slice <= last; l->next[i]++) {
			site->leaked_bytes += v[l->next[i]].alloc_bytes - v[l->next[i]].free_bytes;
			l->heap += v[l->next[i]].alloc_bytes - v[l->next[i]].free_bytes;
		}
	}
}

/* A detailed snapshot of what was live at the end of site slice `last`: the report's tree with those
 * bytes. */
static int put_live(struct massif *ms, struct live *l, uint32_t last)
{
	struct ct_tree t;
	uint64_t end_us = ((uint64_t)last + 1) * ct_timeline_site_width_us(l->m),
	         run = ct_model_runtime_us(l->m);
	live_advance(l, last);
	int rc = ct_tree_build(&t, &l->r, 1);
	if (rc)
		return rc;
	const struct ct_tree *keep = ms->t;
	ms->t = &t;
	rc = put_detailed(ms, end_us < run ? end_us : run, l->heap, CT_FIG_LEAKED_BYTES, "detailed");
	ms->t = keep;
	ct_tree_destroy(&t);
	return rc;
}

/* The timeline in stretches of `per` slices, MAX_SNAPSHOTS at most: each stretch one snapshot, every
 * detailed_freq-th one detailed, the peak's stretch the peak itself (detailed); then the heap at exit
 * (detailed, the leaks). A stretch is whole site slices (`ratio` heap slices each), so that a detailed
 * snapshot's sites are known at its end. */
static int put_snapshots(struct massif *ms, const struct ct_report *r, unsigned detailed_freq)
{
	const struct ct_model *m = r->m;
	const struct ct_slice_total *tot = ct_timeline_totals(m);
	uint32_t ratio = (uint32_t)(ct_timeline_site_width_us(m) / ct_timeline_width_us(m));
	uint32_t n = ct_timeline_nslices(m), per = (n + MAX_SNAPSHOTS - 1) / MAX_SNAPSHOTS;
	per = (per + ratio - 1) / ratio * ratio;
	uint32_t peak = ct_timeline_slice_of(m, m->t.peak_time_us);
	struct live l;
	int rc = live_init(&l, r);
	for (uint32_t i = 0, k = 1; i < n && !rc; i += per, k++) {
		uint32_t end = i + per < n ? i + per : n, best = i;
		if (peak >= i && peak < end && m->t.peak) {
			rc = put_detailed(ms, m->t.peak_time_us, m->t.peak, CT_FIG_PEAK_BYTES, "peak");
			continue;
		}
		if (end == n) /* the exit's snapshot ends the run */
			break;
		if (detailed_freq && k % detailed_freq == 0) {
			rc = put_live(ms, &l, end / ratio - 1);
			continue;
		}
		for (uint32_t j = i + 1; j < end; j++)
			if (tot[j].heap > tot[best].heap)
				best = j;
		put_snapshot(ms, (uint64_t)best * ct_timeline_width_us(m), tot[best].heap, "empty");
	}
	live_release(&l);
	if (!rc)
		rc = put_detailed(ms, ct_model_runtime_us(m), m->t.current, CT_FIG_LEAKED_BYTES, "detailed");
	return rc;
}

int ct_write_massif(FILE *out, const struct ct_report *r, unsigned detailed_freq)
{
	struct ct_tree t;
	int rc = ct_tree_build(&t, r, 1);
	if (rc)
		return rc;
	struct massif ms = {.out = out, .t = &t};
	put_header(out, &r->m->proc);
	rc = put_snapshots(&ms, r, detailed_freq);
	ct_tree_destroy(&t);
	return rc;
}
