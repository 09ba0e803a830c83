/* SPDX-License-Identifier: MIT */
/* Rankings of allocation sites and the walk of a stack's frames (inline chains expanded, allocator
 * plumbing folded), for both reporters. Sites are grouped by their first shown frame or by their
 * folded backtrace. Ties break on the next key, then on the stack id: the order never depends on qsort. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/format.h"
#include "report.h"

#define NRANKS 4

/* Sites with one key summed; best[by] is the member whose backtrace stands for the group in the
 * ranking `by` (the most of that ranking's figures, then the lowest stack id). */
struct ct_group {
	struct ct_site sum;
	const struct ct_site *best[NRANKS];
	/* the key: the first shown frame, or where it came from (--group backtrace) */
	const char *function, *file;
	unsigned line;
	uint64_t address;
	uint32_t node;
	int pos;
};

/* The two keys a ranking sorts on, most significant first. */
static void keys(const struct ct_site *s, enum ct_rank by, uint64_t k[2])
{
	k[0] = k[1] = 0;
	switch (by) {
	case CT_BY_LEAKED:
		k[0] = s->leaked_bytes, k[1] = s->leaked_allocations;
		break;
	case CT_BY_PEAK:
		k[0] = s->peak_bytes, k[1] = s->peak_allocations;
		break;
	case CT_BY_ALLOCATIONS:
		k[0] = s->allocations, k[1] = s->bytes_allocated;
		break;
	case CT_BY_TEMPORARY:
		k[0] = s->temporary, k[1] = s->allocations;
		break;
	}
}

/* <0 when x ranks before y for `by`. */
static int cmp_by(const struct ct_site *x, const struct ct_site *y, enum ct_rank by)
{
	uint64_t kx[2], ky[2];
	keys(x, by, kx);
	keys(y, by, ky);
	for (int i = 0; i < 2; i++)
		if (kx[i] != ky[i])
			return kx[i] > ky[i] ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int cmp_sites(const void *a, const void *b, void *by)
{
	return cmp_by(*(const struct ct_site *const *)a, *(const struct ct_site *const *)b,
	              *(enum ct_rank *)by);
}

/* One malloc'd block: n pointers, then n sites they point to (free(block) frees both). */
static const struct ct_site **alloc_ranking(size_t n, struct ct_site **copies)
{
	size_t head = (n * sizeof(void *) + _Alignof(struct ct_site) - 1) & ~(_Alignof(struct ct_site) - 1);
	char *block = malloc(head + (n ? n : 1) * sizeof(struct ct_site));
	*copies = block ? (struct ct_site *)(block + head) : NULL;
	return (const struct ct_site **)block;
}

long ct_report_rank(const struct ct_report *r, enum ct_rank by, const struct ct_site ***out)
{
	size_t total = r->groups ? r->ngroups : r->nsites, n = 0;
	struct ct_site *copies;
	const struct ct_site **v = alloc_ranking(total, &copies);
	*out = NULL;
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < total; i++) {
		const struct ct_site *s = r->groups ? &r->groups[i].sum : &r->sites[i];
		uint64_t k[2];
		keys(s, by, k);
		if (!k[0])
			continue;
		copies[n] = *s;
		if (r->groups)
			copies[n].stack = r->groups[i].best[by]->stack;
		v[n] = &copies[n];
		n++;
	}
	qsort_r(v, n, sizeof(*v), cmp_sites, &by);
	*out = v;
	return (long)n;
}

/* ---- the frame walk ---- */

/* A walk over a stack's frames: the innermost ones matching the fold list are hidden, but the last
 * of them is shown when nothing else would be. */
struct walk {
	const struct ct_report *r;
	ct_frame_fn fn; /* NULL: count only */
	void *ctx;
	int folding;
	unsigned index, hidden;
	struct ct_frame held; /* the last hidden frame, and where it came from */
	uint32_t held_node;
	int held_pos;
	struct ct_frame first; /* the first shown frame, and where it came from */
	uint32_t first_node;
	int first_pos;
};

static int show(struct walk *w, const struct ct_frame *f, uint32_t node, int pos)
{
	if (!w->index)
		w->first = *f, w->first_node = node, w->first_pos = pos;
	unsigned index = w->index++;
	return w->fn ? w->fn(w->ctx, f, index) : 0;
}

static int step(struct walk *w, const struct ct_frame *f, uint32_t node, int pos)
{
	if (w->folding && ct_fold_match(w->r->fold, f)) {
		w->held = *f, w->held_node = node, w->held_pos = pos;
		w->hidden++;
		return 0;
	}
	w->folding = 0;
	return show(w, f, node, pos);
}

/* Returns 0, the callback's first non-zero result, or -ENOMEM. Groups always fold (their key is the
 * first user frame); the frames shown fold unless --all-frames. */
static int walk(struct walk *w, uint32_t stack, int *truncated, int for_key)
{
	const struct ct_report *r = w->r;
	uint32_t node = stack;
	int rc = 0;
	w->folding = r->fold && (for_key || !r->all_frames);
	/* Parents are defined before their children, so the walk ends at a root. */
	for (; !rc && node >= CT_STACK_FIRST && node < r->m->nnodes; node = r->m->nodes[node].parent) {
		struct ct_frame frames[CT_SYMBOLIZE_MAX];
		int n = ct_symbolize(r->sym, ct_model_node_module(r->m, node), r->m->nodes[node].ip, frames,
		                     CT_SYMBOLIZE_MAX);
		if (n < 0)
			return n;
		for (int i = 0; i < n && !rc; i++)
			rc = step(w, &frames[i], node, i);
	}
	if (rc)
		return rc;
	if (!w->index && w->hidden) {
		w->hidden--;
		rc = show(w, &w->held, w->held_node, w->held_pos);
	}
	if (truncated)
		*truncated = node == CT_STACK_TRUNCATED;
	return rc;
}

int ct_report_frames(const struct ct_report *r, uint32_t stack, ct_frame_fn fn, void *ctx, int *truncated)
{
	struct walk w = {.r = r, .fn = fn, .ctx = ctx};
	return walk(&w, stack, truncated, 0);
}

long ct_report_folded(const struct ct_report *r, uint32_t stack)
{
	struct walk w = {.r = r};
	int rc = walk(&w, stack, NULL, 0);
	return rc < 0 ? rc : (long)w.hidden;
}

/* ---- grouping ---- */

static int stop(void *ctx, const struct ct_frame *f, unsigned index)
{
	(void)ctx, (void)f, (void)index;
	return 1;
}

uint64_t ct_mix(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

uint64_t ct_mix_str(uint64_t h, const char *s)
{
	return s ? ct_mix(h, s, strlen(s) + 1) : ct_mix(h, "", 1);
}

int ct_same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* The key of a group: --group backtrace, where the first shown frame came from (node, position in
 * its inline chain: the folded backtrace from there is the same); --group site, the first shown
 * frame's function, file and line (its address when there is no line). */
static void set_key(const struct ct_report *r, struct ct_group *g, const struct walk *w)
{
	if (r->group == CT_GROUP_BACKTRACE) {
		g->node = w->first_node, g->pos = w->first_pos;
		return;
	}
	g->function = w->first.function, g->file = w->first.file, g->line = w->first.line;
	g->address = w->first.file ? 0 : w->first.address;
}

static uint64_t hash_key(const struct ct_group *g)
{
	uint64_t h = ct_mix_str(ct_mix_str(CT_MIX_SEED, g->function), g->file);
	h = ct_mix(h, &g->line, sizeof(g->line));
	h = ct_mix(h, &g->address, sizeof(g->address));
	h = ct_mix(h, &g->node, sizeof(g->node));
	return ct_mix(h, &g->pos, sizeof(g->pos));
}

static int same_key(const struct ct_group *a, const struct ct_group *b)
{
	return ct_same_str(a->function, b->function) && ct_same_str(a->file, b->file) && a->line == b->line &&
	       a->address == b->address && a->node == b->node && a->pos == b->pos;
}

static void add_site(struct ct_group *g, const struct ct_site *s)
{
	struct ct_site *t = &g->sum;
	t->leaked_bytes += s->leaked_bytes, t->leaked_allocations += s->leaked_allocations;
	t->peak_bytes += s->peak_bytes, t->peak_allocations += s->peak_allocations;
	t->allocations += s->allocations, t->bytes_allocated += s->bytes_allocated;
	t->temporary += s->temporary;
	for (int by = 0; by < NRANKS; by++)
		if (cmp_by(s, g->best[by], (enum ct_rank)by) < 0)
			g->best[by] = s;
}

/* The group of key k in the open-addressing table slots (size a power of two): found or new. */
static struct ct_group *find_group(struct ct_report *r, long *slots, size_t size, const struct ct_group *k,
                                   const struct ct_site *s)
{
	for (size_t i = hash_key(k) & (size - 1);; i = (i + 1) & (size - 1)) {
		if (slots[i] < 0) {
			struct ct_group *g = &r->groups[r->ngroups];
			*g = *k;
			g->sum = (struct ct_site){.stack = s->stack};
			for (int by = 0; by < NRANKS; by++)
				g->best[by] = s;
			slots[i] = (long)r->ngroups++;
			return g;
		}
		if (same_key(&r->groups[slots[i]], k))
			return &r->groups[slots[i]];
	}
}

int ct_report_group(struct ct_report *r)
{
	size_t size = 16;
	while (size < 2 * r->nsites)
		size *= 2;
	long *slots = malloc(size * sizeof(*slots));
	r->groups = malloc((r->nsites ? r->nsites : 1) * sizeof(*r->groups));
	r->ngroups = 0;
	if (!slots || !r->groups) {
		free(slots);
		free(r->groups), r->groups = NULL;
		return -ENOMEM;
	}
	memset(slots, 0xff, size * sizeof(*slots)); /* -1: empty */
	for (size_t i = 0; i < r->nsites; i++) {
		const struct ct_site *s = &r->sites[i];
		struct walk w = {.r = r, .fn = stop};
		int rc = walk(&w, s->stack, NULL, 1);
		if (rc < 0) {
			free(slots);
			free(r->groups), r->groups = NULL;
			return rc;
		}
		struct ct_group k = {0};
		set_key(r, &k, &w);
		add_site(find_group(r, slots, size, &k, s), s);
	}
	free(slots);
	return 0;
}
