/* SPDX-License-Identifier: MIT */
/* The call tree every graphical output draws (flame graphs, folded stacks, speedscope, massif, diff):
 * the shown frames of each site merged root first, or allocation site first when reversed; a node per
 * call line (what --diff matches on), or per function with its lines merged (the flame graphs' and
 * folded stacks' default), with the frames of functions matching --hide-frames left out. */
#ifndef CTRACK_TREE_H
#define CTRACK_TREE_H

#include <regex.h>
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
	CT_FIG_LOST_BYTES, /* definitely and indirectly lost (0 in a trace without leak classes) */
	CT_FIG_LOST_ALLOCATIONS,
	CT_NFIGS
};

/* What a flame graph's widths measure (--cost). */
enum ct_cost {
	CT_COST_LEAKED,
	CT_COST_PEAK,
	CT_COST_ALLOCATIONS,
	CT_COST_TEMPORARY,
	CT_COST_ALLOCATED,
	CT_COST_LOST, /* definitely and indirectly lost bytes: memcheck's leaks, not the runtime's buffers */
	CT_NCOSTS
};

/* "leaked", "peak", "allocations", "temporary", "allocated", "lost". */
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
	int several_lines; /* by function: frames of several lines merged here (frame's file and line are
	                    * the first's) */
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
	int by_function; /* nodes keyed by function, not by call line (struct ct_tree_opts) */
	int file_names;  /* by line, files compared by their names alone (struct ct_tree_opts) */
	regex_t *hide;   /* the compiled --hide-frames patterns, owned */
	size_t nhide;
	struct ct_tree_memo
	    *memo; /* per function name: hidden or not (a pattern match per name, not per frame) */
	size_t nmemo;
};

/* How a tree keys and filters frames, for ct_tree_build_opts (ct_tree_build: by line, none hidden). */
struct ct_tree_opts {
	int reversed; /* allocation site first (--reverse) */
	int by_line;  /* a node per call line (--by-line); 0: per function, its frames' lines merged. A frame
	               * without a function (an address) keeps its place and line in the key either way. */
	int file_names;          /* by line, a frame's file compared by its name alone, not its directory: two
	                          * checkouts of one program share nodes (--diff's graph, as --baseline matches) */
	const char *const *hide; /* POSIX extended regexes matched against function names (--hide-frames): */
	size_t nhide;            /* such frames are left out, their callees attached to their caller; a stack
	                          * with every frame hidden keeps its innermost one. Totals are unchanged. */
};

/* A frame standing for the part of a stack cut at the capture depth (its outermost frames). */
#define CT_TREE_TRUNCATED "[truncated]"

/* sets: the figure sets the tree holds, 1 or CT_TREE_SETS. */
int ct_tree_init(struct ct_tree *t, int reversed, int sets);

/* Applies o's keying and hiding to t, after ct_tree_init and before the first ct_tree_add. Returns 0,
 * -ENOMEM, or -EINVAL for a pattern regcomp refuses (its message in err, when err_len). */
int ct_tree_configure(struct ct_tree *t, const struct ct_tree_opts *o, char *err, size_t err_len);

/* 0 when re compiles as a POSIX extended regex, else -EINVAL with regcomp's message in err: for
 * command lines, to refuse a bad --hide-frames pattern before reading a trace. */
int ct_tree_check_pattern(const char *re, char *err, size_t err_len);

/* Node i's own figures in set s (CT_NFIGS values), and the sums over its subtree (after
 * ct_tree_finish); all zero for a set the tree does not hold. */
const uint64_t *ct_tree_self(const struct ct_tree *t, size_t i, int s);
const uint64_t *ct_tree_total(const struct ct_tree *t, size_t i, int s);
void ct_tree_destroy(struct ct_tree *t);

/* Adds every site of r (its shown frames, after folding, less the hidden ones) into figure set `set`.
 * By line, frames match by function, file, line and whether they are inlined, never by address or
 * module path, so two builds of one program share nodes; by function, by function, the module's file
 * name and inlined (a frame without a function by its file, line, module's file name and offset).
 * Returns 0 or -ENOMEM. */
int ct_tree_add(struct ct_tree *t, const struct ct_report *r, int set);

/* Sorts children and sums totals; call once, after the last ct_tree_add. Returns 0 or -ENOMEM. */
int ct_tree_finish(struct ct_tree *t);

/* init, add r as set 0, finish: the tree of one report, a node per call line, nothing hidden. On
 * failure t is destroyed already. */
int ct_tree_build(struct ct_tree *t, const struct ct_report *r, int reversed);

/* The same, keyed and filtered as o says. Returns 0, -ENOMEM, or -EINVAL for a bad pattern (checked
 * with ct_tree_check_pattern first for a message). On failure t is destroyed already. */
int ct_tree_build_opts(struct ct_tree *t, const struct ct_report *r, const struct ct_tree_opts *o);

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
