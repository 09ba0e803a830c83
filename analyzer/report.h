/* SPDX-License-Identifier: MIT */
/* What the text and JSON reporters share: the analyzed trace, its sites ranked four ways, and the
 * frames of a stack (innermost first). The rankings are total orders, so reports are deterministic. */
#ifndef CTRACK_REPORT_H
#define CTRACK_REPORT_H

#include <stdio.h>

#include "fold.h"
#include "model.h"
#include "symbolize.h"

/* How sites are merged into report entries: by the first shown frame's function, file and line
 * (the same call reached from different callers is one entry), or by the whole folded backtrace. */
enum ct_grouping { CT_GROUP_SITE, CT_GROUP_BACKTRACE };

struct ct_group;
struct ct_suppressions;
struct ct_frame_memo;

/* A function found to be an allocator wrapper (wrappers.c, docs/fold.md): folded like the fold list's. */
struct ct_wrapper {
	const char *function; /* as symbolized; owned by the symbolizer */
	const char *module;   /* path, or NULL; owned by the model */
	size_t callers;       /* distinct functions calling it (1 for a wrapper only another wrapper calls) */
};

struct ct_report {
	const char *path; /* the trace file */
	const struct ct_model *m;
	struct ct_symbolizer *sym;
	struct ct_site *sites;
	size_t nsites;
	size_t top; /* sites per ranking */
	FILE *out;
	const struct ct_fold *fold; /* NULL: nothing is folded */
	int all_frames;             /* show the folded frames too (groups are still keyed on the fold) */
	enum ct_grouping group;
	struct ct_group *groups; /* set by ct_report_group (caller frees); NULL: one entry per site */
	size_t ngroups;
	int full_stacks;             /* keep the frames below main and below a thread's start routine */
	size_t callers;              /* backtraces listed under a site of several (--callers; 0: none) */
	struct ct_wrapper *wrappers; /* set by ct_report_find_wrappers (caller frees), sorted by function */
	size_t nwrappers;
	const struct ct_suppressions *supp; /* what suppressions matched, applied or not (NULL: none) */
	int full_names; /* --full-names: functions as demangled, not shortened (ct_frame_display_name) */
	unsigned source_context;    /* --context N: source lines around a frame's line in HTML (0: none) */
	struct ct_frame_memo *memo; /* what the walk worked out per frame (ct_frame.id), shared by
	                             * copies; set by ct_report_open (NULL: worked out every time) */
};

/* Makes r the report of model m (trace file path) as r's fields already say (top, out, fold, group,
 * callers, all_frames, full_stacks, and sym: a symbolizer of m's frames it takes, or NULL for a new
 * one): its sites, the wrappers unless no_auto_fold, the groups. Returns 0 or -ENOMEM;
 * ct_report_close releases it either way. */
int ct_report_open(struct ct_report *r, const char *path, const struct ct_model *m, int no_auto_fold);
void ct_report_close(struct ct_report *r);

/* Finds the allocator wrappers among the sites' functions (the rule: docs/fold.md), after r->sites,
 * r->sym and r->fold are set and before ct_report_group; they fold from then on. Returns 0 or -ENOMEM. */
int ct_report_find_wrappers(struct ct_report *r);

/* 1 when f is a frame of a function ct_report_find_wrappers found, else 0. */
int ct_report_is_wrapper(const struct ct_report *r, const struct ct_frame *f);

/* 1 when f is one of the C runtime's frames below main or below a thread's start routine
 * (__libc_start_main, _start, start_thread, __clone3, ...), which stacks do not show. */
int ct_report_is_runtime_frame(const struct ct_frame *f);
/* The same, worked out once per frame of r's symbolizer (the names are compared with a dozen). */
int ct_report_is_runtime(const struct ct_report *r, const struct ct_frame *f);

/* Merges the sites into groups (r->group), after r->sites, r->sym and r->fold are set. Returns 0
 * or -ENOMEM. The rankings then hold the groups' sums, each with the stack of its member that has
 * the most of the ranking's figures. */
int ct_report_group(struct ct_report *r);

enum ct_rank { CT_BY_LEAKED, CT_BY_PEAK, CT_BY_ALLOCATIONS, CT_BY_TEMPORARY };

/* A leak entry's kind (struct ct_site's kind: CT_CLASS_* + 1, or 0 when the trace has no leak
 * classes): its JSON name ("definite", "indirect", "possible", "reachable"; NULL for 0), and its
 * words in text ("definitely lost", ..., "still reachable"; "leaked" for 0). */
const char *ct_kind_name(int kind);
const char *ct_kind_label(int kind);

/* An invalid free's kind (CT_INVALID_*; another is a later writer's): its JSON name ("double_free",
 * "static", "stack", "not_allocated", "invalid"), and what it freed in words, after "free()": "of a
 * block already freed (a double free)", ...; its call's name ("free", "realloc"). */
const char *ct_invalid_name(unsigned kind);
const char *ct_invalid_label(unsigned kind);
const char *ct_invalid_call(unsigned call);
/* The model's invalid frees, most frequent first (then in the order they came), as a malloc'd array of
 * pointers (*out; NULL when there are none). Returns the count or -ENOMEM. */
long ct_report_invalid(const struct ct_report *r, const struct ct_invalid ***out);

/* The sites whose key for `by` is not zero, best first, as a malloc'd array of pointers (*out; NULL
 * when there are none). Returns the count or -ENOMEM. In a classified trace, CT_BY_LEAKED gives one
 * entry per site and leak kind it has blocks of, with that kind's figures as its leaked ones. */
long ct_report_rank(const struct ct_report *r, enum ct_rank by, const struct ct_site ***out);

/* The backtraces a ranked entry is made of, as shown (two stacks that differ only in folded frames
 * or in frames below main are one), each with the figures of its own allocations: they add up to the
 * entry's. */
struct ct_callers {
	size_t common;     /* frames every backtrace shares, innermost first (the site's frame at least) */
	struct ct_site *v; /* one per backtrace (stack: one of its stacks), the ranking's order */
	size_t n;          /* 1 when the entry is a single backtrace */
};

/* The backtraces of entry (an element of a ranking by `by`) with a non-zero first key. Returns 0 or
 * -ENOMEM; c->v is the caller's to free. */
int ct_report_callers(const struct ct_report *r, enum ct_rank by, const struct ct_site *entry,
                      struct ct_callers *c);

/* The figures of c->v[from..] summed into *sum. */
void ct_callers_rest(const struct ct_callers *c, size_t from, struct ct_site *sum);

/* Calls fn for each frame of stack node `stack` shown after folding, innermost first; *truncated
 * tells whether the stack was cut at the capture depth. Returns 0, fn's first non-zero result, or -ENOMEM. */
typedef int (*ct_frame_fn)(void *ctx, const struct ct_frame *f, unsigned index);
int ct_report_frames(const struct ct_report *r, uint32_t stack, ct_frame_fn fn, void *ctx, int *truncated);
/* The same, and at_node(ctx, node, index) is called before each stack node's frames when what
 * comes from there on depends on that node alone: the innermost frames' folding is over and no
 * runtime frame is held back (the frames shown from there are those of the node and its parents,
 * numbered from index). A non-zero result ends the walk with it, *truncated untold. */
typedef int (*ct_node_fn)(void *ctx, uint32_t node, unsigned index);
int ct_report_frames_nodes(const struct ct_report *r, uint32_t stack, ct_frame_fn fn, ct_node_fn at_node,
                           void *ctx, int *truncated);

/* The number of frames of stack folding hides, or -ENOMEM. */
long ct_report_folded(const struct ct_report *r, uint32_t stack);

/* FNV-1a over data, and over a string with its NUL (NULL hashes as ""); string equality, NULL only
 * equal to NULL. For the reporters' hash tables. */
uint64_t ct_mix(uint64_t h, const void *data, size_t n);
uint64_t ct_mix_str(uint64_t h, const char *s);
int ct_same_str(const char *a, const char *b);
#define CT_MIX_SEED 0xcbf29ce484222325ull

/* The name a person reads for f's function: its short form (shortname.h: C++ template arguments as
 * <…>, no parameter list nor return type; a Rust qualified path's <Type as Trait> kept readable; a C
 * name as it is), or the whole name with r->full_names. Returns buf (len bytes, cut to fit) or
 * f->function itself. */
const char *ct_frame_display_name(const struct ct_report *r, const struct ct_frame *f, char *buf, size_t len);
/* The short form alone, whatever r->full_names (JSON's "short"). */
const char *ct_frame_short_name(const struct ct_frame *f, char *buf, size_t len);

/* One frame as a JSON object: address (when with_address), function, file, line, module, inlined. */
void ct_json_frame(FILE *out, const struct ct_frame *f, int with_address);

int ct_report_text(const struct ct_report *r);
/* One invalid free as the text report prints it: a blank line, what it was, its backtrace, where the
 * address was freed before and the block's allocation when known. Returns 0 or -ENOMEM. */
int ct_report_text_invalid(const struct ct_report *r, const struct ct_invalid *v);
/* One entry of a ranking as the text report prints it: a blank line, its figures, its backtraces.
 * Returns 0 or -ENOMEM. */
int ct_report_text_entry(const struct ct_report *r, enum ct_rank by, const struct ct_site *s);
int ct_report_json(const struct ct_report *r);

#endif
