/* SPDX-License-Identifier: MIT */
/* Aggregated tracing (ctrack --aggregate, CTRACK_AGGREGATE): the records of blocks that the matcher
 * makes (ALLOC, FREE, TEMP, TEMPFREE, RECENT) are summed per alloc info here instead of being
 * written, and AGG_SNAPSHOT records (format.h) carry what changed, every interval and before every
 * record that must see the figures. The sums are exactly what a reader of the full trace would
 * count from those records in the same order (analyzer/model.c): allocations, temporary ones,
 * frees, live blocks, the heap in use and its peak with each info's blocks live at the peak.
 *
 * Contract: one thread at a time (the writer, or the late path under its lock), one lane; no
 * malloc (tables from the arena); a table that cannot grow drops the event and counts it
 * (ct_agg_dropped). */
#ifndef CTRACK_AGGREGATE_H
#define CTRACK_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "ctrack/record.h"

/* The setting (CTRACK_AGGREGATE, common/rules.h), read once at start: a snapshot interval in ms,
 * or NULL / anything else for a full trace (a refused value: the caller says so). 0, or -EINVAL. */
int ct_agg_setting(const char *value) CT_HIDDEN;
unsigned ct_agg_interval_ms(void) CT_HIDDEN; /* 0: the trace is full, not aggregated */
/* Attach mode (ctrack -p): the interval the launcher sent, in place of CTRACK_AGGREGATE, which the
 * process never had; 0: a full trace. Set before each attach's writer starts (the tables are the
 * writer's: it empties them at its start and gives them back at its end). 0, or -EINVAL for an
 * interval out of range (a full trace then). */
int ct_agg_set_interval(unsigned ms) CT_HIDDEN;

/* A new trace file: every figure zeroed. 0, or -ENOMEM. */
int ct_agg_reset(void) CT_HIDDEN;
void ct_agg_release(void) CT_HIDDEN;     /* its memory back to the system */
size_t ct_agg_bytes(void) CT_HIDDEN;     /* what its tables hold */
uint64_t ct_agg_dropped(void) CT_HIDDEN; /* events lost for want of memory */

/* The matcher's record `tag` (CT_REC_ALLOC, _FREE, _TEMP, _TEMPFREE; a RECENT as FREE) of alloc
 * info `info` (match.h's ct_match_aggregate). */
void ct_agg_block(unsigned tag, uint32_t info) CT_HIDDEN;
/* The writer's clock (us since the start), the time of a new peak. */
void ct_agg_clock(uint64_t now_us) CT_HIDDEN;
/* An RSS sample (bytes), for the next snapshot's rss_max. */
void ct_agg_rss(uint64_t rss) CT_HIDDEN;
/* Appends the AGG_SNAPSHOT of the changes since the last one, RSS rss now, to out. */
void ct_agg_snapshot(struct ct_rec_buf *out, uint64_t rss) CT_HIDDEN;

#endif
