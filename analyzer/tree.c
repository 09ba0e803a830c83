/* SPDX-License-Identifier: MIT */
/* The call tree: each site's shown frames (inline chains expanded, plumbing folded, --hide-frames'
 * frames dropped) merged into one tree of nodes keyed by (parent, function, file, line, inlined), or
 * by function (parent, function, module's file name, inlined), with self and total figures. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tree.h"

static const char *const cost_names[CT_NCOSTS] = {"leaked",    "peak",      "allocations",
                                                  "temporary", "allocated", "lost"};
static const enum ct_fig cost_figs[CT_NCOSTS] = {CT_FIG_LEAKED_BYTES,    CT_FIG_PEAK_BYTES,
                                                 CT_FIG_ALLOCATIONS,     CT_FIG_TEMPORARY,
                                                 CT_FIG_BYTES_ALLOCATED, CT_FIG_LOST_BYTES};

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
	return c != CT_COST_ALLOCATIONS && c != CT_COST_TEMPORARY;
}

int ct_cost_parse(const char *s)
{
	for (int c = 0; c < CT_NCOSTS; c++)
		if (!strcmp(s, cost_names[c]))
			return c;
	return -1;
}

/* A hidden-or-not answer per function name, direct-mapped by the name's address: the names of one
 * report live as long as it, and the memo is cleared at each ct_tree_add. */
struct ct_tree_memo {
	const char *name;
	int hidden;
};
#define MEMO_SLOTS 4096

/* The module's file name: two builds in two directories still share nodes. */
static const char *module_name(const struct ct_frame *f)
{
	const char *slash = f->module ? strrchr(f->module, '/') : NULL;
	return slash ? slash + 1 : f->module;
}

/* Keyed by function only when there is one: an address ("??", "lib.so+0x12") keeps its line and place,
 * or every unnamed frame of a parent would be one node. */
/* A frame's file as the tree compares it: its name alone with file_names. */
static const char *file_key(const struct ct_tree *t, const char *file)
{
	const char *slash = t->file_names && file ? strrchr(file, '/') : NULL;
	return slash ? slash + 1 : file;
}

static int keyed_by_function(const struct ct_tree *t, const struct ct_frame *f)
{
	return t->by_function && f->symbol;
}

/* By function, a named frame is keyed by its function, inlined or not, and its module's name alone:
 * not its file either, which a line table may give as a header for some of a function's code. */
static uint64_t key_hash(const struct ct_tree *t, uint32_t parent, const struct ct_frame *f)
{
	uint64_t h = ct_mix(CT_MIX_SEED, &parent, sizeof(parent));
	h = ct_mix_str(h, f->function);
	h = ct_mix(h, &f->inlined, sizeof(f->inlined));
	if (keyed_by_function(t, f))
		return ct_mix_str(h, module_name(f));
	h = ct_mix_str(h, file_key(t, f->file));
	h = ct_mix(h, &f->line, sizeof(f->line));
	if (!t->by_function)
		return h;
	h = ct_mix_str(h, module_name(f));
	return ct_mix(h, &f->offset, sizeof(f->offset));
}

static int same_key(const struct ct_tree *t, const struct ct_tree_node *n, uint32_t parent,
                    const struct ct_frame *f)
{
	if (n->parent != parent || n->frame.inlined != f->inlined ||
	    !ct_same_str(n->frame.function, f->function))
		return 0;
	if (keyed_by_function(t, f))
		return ct_same_str(module_name(&n->frame), module_name(f));
	if (n->frame.line != f->line || !ct_same_str(file_key(t, n->frame.file), file_key(t, f->file)))
		return 0;
	return !t->by_function ||
	       (n->frame.offset == f->offset && ct_same_str(module_name(&n->frame), module_name(f)));
}

static int grow_index(struct ct_tree *t)
{
	size_t nslots = t->nslots ? t->nslots * 2 : 1024;
	uint32_t *slots = calloc(nslots, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 1; i < t->n; i++) {
		size_t s = key_hash(t, t->nodes[i].parent, &t->nodes[i].frame) & (nslots - 1);
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
	size_t s = key_hash(t, parent, f) & (t->nslots - 1);
	for (; t->slots[s]; s = (s + 1) & (t->nslots - 1)) {
		struct ct_tree_node *n = &t->nodes[t->slots[s]];
		if (!same_key(t, n, parent, f))
			continue;
		n->several_lines |= n->frame.line != f->line || !ct_same_str(n->frame.file, f->file);
		return t->slots[s];
	}
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
	for (size_t i = 0; i < t->nhide; i++)
		regfree(&t->hide[i]);
	free(t->hide);
	free(t->memo);
	*t = (struct ct_tree){0};
}

/* Compiles re into *out; on failure regcomp's message in err. */
static int compile(regex_t *out, const char *re, char *err, size_t err_len)
{
	int rc = regcomp(out, re, REG_EXTENDED | REG_NOSUB);
	if (!rc)
		return 0;
	if (err_len) {
		char why[200];
		regerror(rc, out, why, sizeof(why));
		snprintf(err, err_len, "bad pattern '%s': %s", re, why);
	}
	return rc == REG_ESPACE ? -ENOMEM : -EINVAL;
}

int ct_tree_check_pattern(const char *re, char *err, size_t err_len)
{
	regex_t rx;
	int rc = compile(&rx, re, err, err_len);
	if (!rc)
		regfree(&rx);
	return rc;
}

int ct_tree_configure(struct ct_tree *t, const struct ct_tree_opts *o, char *err, size_t err_len)
{
	t->by_function = !o->by_line;
	t->file_names = o->file_names;
	if (!o->nhide)
		return 0;
	t->hide = calloc(o->nhide, sizeof(*t->hide));
	t->memo = calloc(MEMO_SLOTS, sizeof(*t->memo));
	if (!t->hide || !t->memo)
		return -ENOMEM;
	for (; t->nhide < o->nhide; t->nhide++) {
		int rc = compile(&t->hide[t->nhide], o->hide[t->nhide], err, err_len);
		if (rc)
			return rc;
	}
	return 0;
}

/* Whether frame f is left out: its function matches a --hide-frames pattern. The mark standing for
 * a cut stack is not a function and stays. */
static int hidden(struct ct_tree *t, const struct ct_frame *f)
{
	if (!t->nhide || !strcmp(f->function, CT_TREE_TRUNCATED))
		return 0;
	struct ct_tree_memo *m = &t->memo[((uintptr_t)f->function >> 3) % MEMO_SLOTS];
	if (m->name == f->function)
		return m->hidden;
	int hide = 0;
	for (size_t i = 0; i < t->nhide && !hide; i++)
		hide = !regexec(&t->hide[i], f->function, 0, NULL, 0);
	*m = (struct ct_tree_memo){f->function, hide};
	return hide;
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
	fig[CT_FIG_LOST_BYTES] += s->class_bytes[CT_CLASS_DEFINITE] + s->class_bytes[CT_CLASS_INDIRECT];
	fig[CT_FIG_LOST_ALLOCATIONS] +=
	    s->class_allocations[CT_CLASS_DEFINITE] + s->class_allocations[CT_CLASS_INDIRECT];
}

/* Drops p's hidden frames (innermost first, the cut mark last); when every frame of the stack is
 * hidden, its innermost one stays, so its figures still have a frame of their own. */
static void drop_hidden(struct ct_tree *t, struct path *p)
{
	if (!t->nhide || !p->n)
		return;
	struct ct_frame innermost = p->v[0];
	size_t kept = 0, functions = 0;
	for (size_t i = 0; i < p->n; i++) {
		if (hidden(t, &p->v[i]))
			continue;
		functions += strcmp(p->v[i].function, CT_TREE_TRUNCATED) != 0;
		p->v[kept++] = p->v[i];
	}
	if (functions || !strcmp(innermost.function, CT_TREE_TRUNCATED))
		p->n = kept;
	else if (kept) /* the cut mark alone is left: the innermost frame goes before it */
		p->v[1] = p->v[0], p->v[0] = innermost, p->n = 2;
	else
		p->v[0] = innermost, p->n = 1;
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
	drop_hidden(t, p);
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
	if (t->memo) /* the names of an earlier report may be gone, their addresses reused */
		memset(t->memo, 0, MEMO_SLOTS * sizeof(*t->memo));
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
	const struct ct_tree_opts o = {.reversed = reversed, .by_line = 1};
	return ct_tree_build_opts(t, r, &o);
}

int ct_tree_build_opts(struct ct_tree *t, const struct ct_report *r, const struct ct_tree_opts *o)
{
	int rc = ct_tree_init(t, o->reversed, 1);
	if (!rc)
		rc = ct_tree_configure(t, o, NULL, 0);
	if (!rc)
		rc = ct_tree_add(t, r, 0);
	if (!rc)
		rc = ct_tree_finish(t);
	if (rc)
		ct_tree_destroy(t);
	return rc;
}
