/* SPDX-License-Identifier: MIT */
/* The call tree: each site's shown frames (inline chains expanded, plumbing folded) merged into one
 * tree of nodes keyed by (parent, function, file, line, inlined), with self and total figures. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tree.h"

static const char *const cost_names[CT_NCOSTS] = {"leaked", "peak", "allocations", "temporary", "allocated"};
static const enum ct_fig cost_figs[CT_NCOSTS] = {CT_FIG_LEAKED_BYTES, CT_FIG_PEAK_BYTES, CT_FIG_ALLOCATIONS,
                                                 CT_FIG_TEMPORARY, CT_FIG_BYTES_ALLOCATED};

const char *ct_cost_name(enum ct_cost c)
{
	return cost_names[c];
}
enum ct_fig ct_cost_fig(enum ct_cost c)
{
	return cost_figs[c];
}
int ct_cost_is_bytes(enum ct_cost c)
{
	return c == CT_COST_LEAKED || c == CT_COST_PEAK || c == CT_COST_ALLOCATED;
}

int ct_cost_parse(const char *s)
{
	for (int c = 0; c < CT_NCOSTS; c++)
		if (!strcmp(s, cost_names[c]))
			return c;
	return -1;
}

static uint64_t key_hash(uint32_t parent, const struct ct_frame *f)
{
	uint64_t h = ct_mix(CT_MIX_SEED, &parent, sizeof(parent));
	h = ct_mix_str(ct_mix_str(h, f->function), f->file);
	h = ct_mix(h, &f->line, sizeof(f->line));
	return ct_mix(h, &f->inlined, sizeof(f->inlined));
}

static int same_key(const struct ct_tree_node *n, uint32_t parent, const struct ct_frame *f)
{
	return n->parent == parent && n->frame.line == f->line && n->frame.inlined == f->inlined &&
	       ct_same_str(n->frame.function, f->function) && ct_same_str(n->frame.file, f->file);
}

static int grow_index(struct ct_tree *t)
{
	size_t nslots = t->nslots ? t->nslots * 2 : 1024;
	uint32_t *slots = calloc(nslots, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 1; i < t->n; i++) {
		size_t s = key_hash(t->nodes[i].parent, &t->nodes[i].frame) & (nslots - 1);
		while (slots[s])
			s = (s + 1) & (nslots - 1);
		slots[s] = (uint32_t)i;
	}
	free(t->slots);
	t->slots = slots, t->nslots = nslots;
	return 0;
}

/* Node i's figures in set s: self, then total. Only for s < t->sets. */
static uint64_t *figs_of(const struct ct_tree *t, size_t i, int s)
{
	return t->figs + (i * (size_t)t->sets + (size_t)s) * 2 * CT_NFIGS;
}

static const uint64_t no_figures[CT_NFIGS];

const uint64_t *ct_tree_self(const struct ct_tree *t, size_t i, int s)
{
	return s < t->sets ? figs_of(t, i, s) : no_figures;
}

const uint64_t *ct_tree_total(const struct ct_tree *t, size_t i, int s)
{
	return s < t->sets ? figs_of(t, i, s) + CT_NFIGS : no_figures;
}

static int grow_nodes(struct ct_tree *t)
{
	size_t cap = t->cap ? t->cap * 2 : 256, per_node = (size_t)t->sets * 2 * CT_NFIGS;
	struct ct_tree_node *nodes = realloc(t->nodes, cap * sizeof(*nodes));
	if (nodes)
		t->nodes = nodes;
	uint64_t *figs = nodes ? realloc(t->figs, cap * per_node * sizeof(*figs)) : NULL;
	if (!figs)
		return -ENOMEM;
	t->figs = figs, t->cap = cap;
	return 0;
}

static int push_node(struct ct_tree *t, uint32_t parent, const struct ct_frame *f)
{
	if (t->n == t->cap && grow_nodes(t) < 0)
		return -ENOMEM;
	if (t->n >= UINT32_MAX)
		return -ENOMEM;
	struct ct_tree_node *n = &t->nodes[t->n];
	*n = (struct ct_tree_node){.frame = *f, .parent = parent};
	memset(figs_of(t, t->n, 0), 0, (size_t)t->sets * 2 * CT_NFIGS * sizeof(*t->figs));
	n->depth = parent == t->n ? 0 : t->nodes[parent].depth + 1;
	if (n->depth > t->max_depth)
		t->max_depth = n->depth;
	return (int)t->n++;
}

/* The child of parent for frame f, created when missing; its index, or -ENOMEM. */
static long child(struct ct_tree *t, uint32_t parent, const struct ct_frame *f)
{
	if ((t->n + 1) * 2 > t->nslots && grow_index(t) < 0)
		return -ENOMEM;
	size_t s = key_hash(parent, f) & (t->nslots - 1);
	for (; t->slots[s]; s = (s + 1) & (t->nslots - 1))
		if (same_key(&t->nodes[t->slots[s]], parent, f))
			return t->slots[s];
	long id = push_node(t, parent, f);
	if (id < 0)
		return id;
	t->slots[s] = (uint32_t)id;
	return id;
}

int ct_tree_init(struct ct_tree *t, int reversed, int sets)
{
	*t = (struct ct_tree){.reversed = reversed, .sets = sets};
	struct ct_frame root = {.function = "all"};
	return push_node(t, 0, &root) < 0 ? -ENOMEM : 0;
}

void ct_tree_destroy(struct ct_tree *t)
{
	free(t->nodes);
	free(t->figs);
	free(t->slots);
	*t = (struct ct_tree){0};
}

/* A site's shown frames, innermost first. */
struct path {
	struct ct_frame *v;
	size_t n, cap;
};

static int collect(void *ctx, const struct ct_frame *f, unsigned index)
{
	(void)index;
	struct path *p = ctx;
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		struct ct_frame *v = realloc(p->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		p->v = v, p->cap = cap;
	}
	p->v[p->n++] = *f;
	return 0;
}

static void add_figures(uint64_t *fig, const struct ct_site *s)
{
	fig[CT_FIG_LEAKED_BYTES] += s->leaked_bytes;
	fig[CT_FIG_LEAKED_ALLOCATIONS] += s->leaked_allocations;
	fig[CT_FIG_PEAK_BYTES] += s->peak_bytes;
	fig[CT_FIG_PEAK_ALLOCATIONS] += s->peak_allocations;
	fig[CT_FIG_ALLOCATIONS] += s->allocations;
	fig[CT_FIG_BYTES_ALLOCATED] += s->bytes_allocated;
	fig[CT_FIG_TEMPORARY] += s->temporary;
}

static int add_site(struct ct_tree *t, const struct ct_report *r, const struct ct_site *s, struct path *p,
                    int set)
{
	static const struct ct_frame cut = {.function = CT_TREE_TRUNCATED};
	int truncated = 0;
	p->n = 0;
	int rc = ct_report_frames(r, s->stack, collect, p, &truncated);
	if (!rc && truncated)
		rc = collect(p, &cut, 0);
	if (rc)
		return rc < 0 ? rc : -EINVAL;
	long node = 0;
	for (size_t i = 0; i < p->n && node >= 0; i++)
		node = child(t, (uint32_t)node, &p->v[t->reversed ? i : p->n - 1 - i]);
	if (node < 0)
		return (int)node;
	if (set >= t->sets)
		return -EINVAL;
	add_figures(figs_of(t, (size_t)node, set), s);
	return 0;
}

int ct_tree_add(struct ct_tree *t, const struct ct_report *r, int set)
{
	struct path p = {0};
	int rc = 0;
	for (size_t i = 0; i < r->nsites && !rc; i++)
		rc = add_site(t, r, &r->sites[i], &p, set);
	free(p.v);
	return rc;
}

int ct_frame_cmp(const struct ct_frame *x, const struct ct_frame *y)
{
	int c = strcmp(x->function, y->function);
	if (!c)
		c = strcmp(x->file ? x->file : "", y->file ? y->file : "");
	if (!c)
		c = (x->line > y->line) - (x->line < y->line);
	return c ? c : x->inlined - y->inlined;
}

static int by_frame(const void *a, const void *b, void *arg)
{
	const struct ct_tree_node *nodes = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	int c = ct_frame_cmp(&nodes[i].frame, &nodes[j].frame);
	return c ? c : (i > j) - (i < j);
}

uint32_t *ct_tree_by_frame(const struct ct_tree *t)
{
	uint32_t *order = malloc((t->n > 1 ? t->n - 1 : 1) * sizeof(*order));
	if (!order)
		return NULL;
	for (size_t i = 1; i < t->n; i++)
		order[i - 1] = (uint32_t)i;
	qsort_r(order, t->n - 1, sizeof(*order), by_frame, t->nodes);
	return order;
}

/* Links every node's children in frame order, with one sort over all nodes grouped by parent. */
static int link_children(struct ct_tree *t)
{
	uint32_t *order = ct_tree_by_frame(t);
	if (!order)
		return -ENOMEM;
	for (size_t i = t->n - 1; i-- > 0;) {
		struct ct_tree_node *n = &t->nodes[order[i]], *parent = &t->nodes[n->parent];
		n->next_sibling = parent->first_child;
		parent->first_child = order[i];
	}
	free(order);
	return 0;
}

int ct_tree_finish(struct ct_tree *t)
{
	for (size_t i = 0; i < t->n; i++)
		for (int s = 0; s < t->sets; s++)
			memcpy(figs_of(t, i, s) + CT_NFIGS, figs_of(t, i, s), CT_NFIGS * sizeof(*t->figs));
	/* Children come after their parents. */
	for (size_t i = t->n; i-- > 1;)
		for (int s = 0; s < t->sets; s++) {
			uint64_t *up = figs_of(t, t->nodes[i].parent, s) + CT_NFIGS;
			const uint64_t *own = figs_of(t, i, s) + CT_NFIGS;
			for (int f = 0; f < CT_NFIGS; f++)
				up[f] += own[f];
		}
	return link_children(t);
}

int ct_tree_build(struct ct_tree *t, const struct ct_report *r, int reversed)
{
	int rc = ct_tree_init(t, reversed, 1);
	if (!rc)
		rc = ct_tree_add(t, r, 0);
	if (!rc)
		rc = ct_tree_finish(t);
	if (rc)
		ct_tree_destroy(t);
	return rc;
}
