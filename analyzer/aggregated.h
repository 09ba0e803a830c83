/* SPDX-License-Identifier: MIT */
/* Aggregated traces in the model (format.h's AGGREGATE and AGG_SNAPSHOT, ctrack --aggregate): a
 * snapshot changes every figure as the records of blocks it stands for would have (model.c), its
 * memory over time at the snapshot's time. */
#ifndef CTRACK_AGGREGATED_H
#define CTRACK_AGGREGATED_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* AGGREGATE: the trace is aggregated, a snapshot every interval_us. -EINVAL when it comes twice, after
 * events or alloc infos, or with an interval of 0. */
int ct_model_aggregate(struct ct_model *m, uint64_t interval_us);
/* An AGG_SNAPSHOT's payload [p, end), checked whole first: applied, 0; or nothing changed and
 * -EINVAL with a one-line reason in why (cut short, an undefined or repeated info, more frees than
 * blocks, a peak that does not rise), or -ENOMEM. */
int ct_model_agg_snapshot(struct ct_model *m, const uint8_t *p, const uint8_t *end, char *why, size_t len);

/* The line every report shows once for an aggregated trace, into buf (len bytes, NUL-ended):
 * "aggregated: memory over time every N s (snapshots of the figures, not every event)". */
void ct_aggregated_note(char *buf, size_t len, uint64_t interval_us);

#endif
