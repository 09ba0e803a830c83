/* SPDX-License-Identifier: MIT */
/* The call tree every graphical output draws (flame graphs, folded stacks, speedscope, massif, diff):
 * the shown frames of each site merged root first, or allocation site first when reversed. */
#ifndef CTRACK_TREE_H
#define CTRACK_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"

/* The figures of a node, summed over the sites below it (total) or ending at it (self). */
enum ct_fig {
	CT_FIG_LEAKED_BYTES,
	CT_FIG_LEAKED_ALLOCATIONS,
	CT_FIG_PEAK_BYTES,
	CT_FIG_PEAK_ALLOCATIONS,
	CT_FIG_ALLOCATIONS,
	CT_FIG_BYTES_ALLOCATED,
	CT_FIG_TEMPORARY,
	CT_NFIGS
};

/* What a flame graph's widths measure (--cost). */
enum ct_cost {
	CT_COST_LEAKED,
	CT_COST_PEAK,
	CT_COST_ALLOCATIONS,
	CT_COST_TEMPORARY,
	CT_COST_ALLOCATED,
	CT_NCOSTS
};

/* "leaked", "peak", "allocations", "temporary", "allocated". */
const char *ct_cost_name(enum ct_cost c);
/* The cost named s, or -1. */
int ct_cost_parse(const char *s);
/* The figure a cost reads, and whether it counts bytes (else allocations). */
enum ct_fig ct_cost_fig(enum ct_cost c);
int ct_cost_is_bytes(enum ct_cost c);

/* A tree holds one figure set per trace: set 0, and set 1 for --diff's new trace. */
#define CT_TREE_SETS 2

struct ct_tree_node {
	struct ct_frame frame; /* function, file, line, module, inlined; address of the first site added */
	uint32_t parent;       /* the root (node 0) is its own parent */
	uint32_t first_child, next_sibling; /* 0: none; children sorted by function, then file, line */
	uint32_t depth;                     /* root 0 */
};

struct ct_tree {
	struct ct_tree_node *nodes; /* nodes[0] is the root, "all" */
	uint64_t *figs;             /* per node and set: self, then total (CT_NFIGS each); see ct_tree_self */
	int sets;                   /* 1, or 2 for --diff */
	size_t n, cap;
	uint32_t *slots; /* open-addressing index of (parent, frame key) -> node */
	size_t nslots;
	int reversed; /* allocation site first: the root's children are the sites' first frames */
	unsigned max_depth;
};

/* A frame standing for the part of a stack cut at the capture depth (its outermost frames). */
#define CT_TREE_TRUNCATED "[truncated]"

/* sets: the figure sets the tree holds, 1 or CT_TREE_SETS. */
int ct_tree_init(struct ct_tree *t, int reversed, int sets);

/* Node i's own figures in set s (CT_NFIGS values), and the sums over its subtree (after
 * ct_tree_finish); all zero for a set the tree does not hold. */
const uint64_t *ct_tree_self(const struct ct_tree *t, size_t i, int s);
const uint64_t *ct_tree_total(const struct ct_tree *t, size_t i, int s);
void ct_tree_destroy(struct ct_tree *t);

/* Adds every site of r (its shown frames, after folding) into figure set `set`. Frames match by
 * function, file, line and whether they are inlined, never by address or module path, so two builds
 * of one program share nodes. Returns 0 or -ENOMEM. */
int ct_tree_add(struct ct_tree *t, const struct ct_report *r, int set);

/* Sorts children and sums totals; call once, after the last ct_tree_add. Returns 0 or -ENOMEM. */
int ct_tree_finish(struct ct_tree *t);

/* init, add r as set 0, finish: the tree of one report. On failure t is destroyed already. */
int ct_tree_build(struct ct_tree *t, const struct ct_report *r, int reversed);

/* Frame order: function, file, line, then inlined (0 first). */
int ct_frame_cmp(const struct ct_frame *x, const struct ct_frame *y);
/* Every node but the root, sorted by frame (ties by node index), as a malloc'd array of t->n - 1
 * ids; NULL when out of memory. */
uint32_t *ct_tree_by_frame(const struct ct_tree *t);

/* A node's children in order: for (c = first(t, n); c; c = next(t, c)). */
static inline uint32_t ct_tree_first(const struct ct_tree *t, uint32_t n)
{
	return t->nodes[n].first_child;
}
static inline uint32_t ct_tree_next(const struct ct_tree *t, uint32_t n)
{
	return t->nodes[n].next_sibling;
}

#endif
