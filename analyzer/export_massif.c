/* SPDX-License-Identifier: MIT */
/* valgrind massif's out file, as ms_print and massif-visualizer read it: the heap over time as at
 * most MAX_SNAPSHOTS snapshots (each the highest point of its stretch), the peak and the exit detailed
 * with massif's tree (allocation functions first, callers below, each node the sum of its children). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack-config.h"
#include "export.h"

/* Snapshots drawn from the time series; the peak and the exit come on top. */
#define MAX_SNAPSHOTS 100

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

/* The point of the series holding the peak: the last one starting no later than it. */
static size_t peak_point(const struct ct_model *m)
{
	size_t i = 0;
	while (i + 1 < m->nseries && m->series[i + 1].time_us <= m->t.peak_time_us)
		i++;
	return i;
}

/* The series in stretches of `per` points, each stretch its highest point, the peak's stretch the
 * peak itself (detailed); then the heap at exit (detailed, the leaks). */
static int put_snapshots(struct massif *ms, const struct ct_model *m)
{
	size_t per = (m->nseries + MAX_SNAPSHOTS - 1) / MAX_SNAPSHOTS, peak = peak_point(m);
	int rc = 0;
	for (size_t i = 0; i < m->nseries && !rc; i += per) {
		size_t end = i + per < m->nseries ? i + per : m->nseries, best = i;
		if (peak >= i && peak < end) {
			rc = put_detailed(ms, m->t.peak_time_us, m->t.peak, CT_FIG_PEAK_BYTES, "peak");
			continue;
		}
		for (size_t j = i + 1; j < end; j++)
			if (m->series[j].heap > m->series[best].heap)
				best = j;
		put_snapshot(ms, m->series[best].time_us, m->series[best].heap, "empty");
	}
	if (!rc)
		rc = put_detailed(ms, ct_model_runtime_us(m), m->t.current, CT_FIG_LEAKED_BYTES, "detailed");
	return rc;
}

int ct_write_massif(FILE *out, const struct ct_report *r)
{
	struct ct_tree t;
	int rc = ct_tree_build(&t, r, 1);
	if (rc)
		return rc;
	struct massif ms = {.out = out, .t = &t};
	put_header(out, &r->m->proc);
	rc = put_snapshots(&ms, r->m);
	ct_tree_destroy(&t);
	return rc;
}
