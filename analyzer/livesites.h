/* SPDX-License-Identifier: MIT */
/* The sites the live view lists (liveview.c): the model's sites merged and folded as the text report
 * merges them (report.h), ranked by one cost, each with the frames that name it. Made again at each
 * refresh of a model still growing; the symbolizer is kept from one to the next, so a frame is
 * resolved once. */
#ifndef CTRACK_LIVESITES_H
#define CTRACK_LIVESITES_H

#include <stddef.h>

#include "model.h"
#include "report.h"

/* What the view sorts by (its keys l, a, b, t). */
enum ct_live_cost { CT_LIVE_BYTES, CT_LIVE_ALLOCATIONS, CT_LIVE_ALLOCATED, CT_LIVE_TEMPORARY, CT_LIVE_COSTS };

struct ct_livesites {
	struct ct_report r;       /* the report of the model as it stood at the last update */
	struct ct_fold *fold;     /* the built-in fold list */
	const struct ct_site **v; /* every site with an allocation, best first (their stack: the
	                           * backtrace with most allocations) */
	size_t n;
	int open; /* r holds a report */
};

/* The name of a cost as the view shows it ("live bytes"). */
const char *ct_live_cost_name(enum ct_live_cost c);

/* ls made empty. 0 or -ENOMEM. */
int ct_livesites_init(struct ct_livesites *ls);
/* The sites of m (trace path) ranked by `by`, replacing those of the last update. 0 or -ENOMEM. */
int ct_livesites_update(struct ct_livesites *ls, const char *path, const struct ct_model *m,
                        enum ct_live_cost by);
/* The first frame shown of site i's backtrace into *f (its strings the symbolizer's, valid until the
 * next update): 0, 1 when the stack shows no frame, or -ENOMEM. */
int ct_livesites_first(struct ct_livesites *ls, size_t i, struct ct_frame *f);
/* Calls fn for each shown frame of stack, innermost first (ct_report_frames). 0 or -ENOMEM. */
int ct_livesites_frames(struct ct_livesites *ls, uint32_t stack, ct_frame_fn fn, void *ctx);
/* The backtraces site i is made of (report.h), each with its own figures, sorted by `by`. 0 or
 * -ENOMEM; c->v is the caller's to free. */
int ct_livesites_callers(struct ct_livesites *ls, size_t i, enum ct_live_cost by, struct ct_callers *c);
void ct_livesites_free(struct ct_livesites *ls);

#endif
