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
};

/* Merges the sites into groups (r->group), after r->sites, r->sym and r->fold are set. Returns 0
 * or -ENOMEM. The rankings then hold the groups' sums, each with the stack of its member that has
 * the most of the ranking's figures. */
int ct_report_group(struct ct_report *r);

enum ct_rank { CT_BY_LEAKED, CT_BY_PEAK, CT_BY_ALLOCATIONS, CT_BY_TEMPORARY };

/* The sites whose key for `by` is not zero, best first, as a malloc'd array of pointers (*out;
 * NULL when there are none). Returns the count or -ENOMEM. */
long ct_report_rank(const struct ct_report *r, enum ct_rank by, const struct ct_site ***out);

/* Calls fn for each frame of stack node `stack` shown after folding, innermost first; *truncated
 * tells whether the stack was cut at the capture depth. Returns 0, fn's first non-zero result, or -ENOMEM. */
typedef int (*ct_frame_fn)(void *ctx, const struct ct_frame *f, unsigned index);
int ct_report_frames(const struct ct_report *r, uint32_t stack, ct_frame_fn fn, void *ctx, int *truncated);

/* The number of frames of stack folding hides, or -ENOMEM. */
long ct_report_folded(const struct ct_report *r, uint32_t stack);

/* FNV-1a over data, and over a string with its NUL (NULL hashes as ""); string equality, NULL only
 * equal to NULL. For the reporters' hash tables. */
uint64_t ct_mix(uint64_t h, const void *data, size_t n);
uint64_t ct_mix_str(uint64_t h, const char *s);
int ct_same_str(const char *a, const char *b);
#define CT_MIX_SEED 0xcbf29ce484222325ull

/* One frame as a JSON object: address (when with_address), function, file, line, module, inlined. */
void ct_json_frame(FILE *out, const struct ct_frame *f, int with_address);

int ct_report_text(const struct ct_report *r);
int ct_report_json(const struct ct_report *r);

#endif
