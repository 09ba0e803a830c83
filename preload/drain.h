/* SPDX-License-Identifier: MIT */
/* Draining a thread's ring: into the matcher's one lane (the writer, writer.c), or with several lanes
 * the orderer's pass and each lane thread's share of it (lanes.c). Each keeps its own state for every
 * ring in the ring's consumer bytes; with several lanes, the ring's tail is the slowest lane's position. */
#ifndef CTRACK_DRAIN_H
#define CTRACK_DRAIN_H

#include <stdatomic.h>
#include <stdint.h>

#include "epoch.h"
#include "match.h"
#include "shim.h"

struct ct_drain {
	struct ct_match_stream st;
	_Atomic uint64_t pos;       /* words consumed by this lane or the orderer (with several lanes) */
	_Atomic uint32_t settled;   /* a lane's: 1 + the ring's generation whose stream it settled */
	_Atomic uint32_t gen;       /* the writer's: the threads the ring has served before its present one */
	uint8_t announced, blocked; /* the writer's: THREAD started written; the last drain waited */
	uint8_t settling;   /* the orderer's: its thread is gone, the lanes are told (ct_lanes_settle) */
	uint8_t registered; /* the stream is the lane's (ct_match_stream_add) */
};
/* Where the orderer keeps its state for a ring (pos, blocked, announced, settling, gen), after every
 * lane's (with one lane, the lane's own drain, 0, is the writer's). */
#define CT_DRAIN_ORDERER CT_MATCH_LANES_MAX
_Static_assert(sizeof(struct ct_drain) * (CT_MATCH_LANES_MAX + 1) <= CT_RING_CONSUMER_BYTES,
               "a ring's consumer bytes hold a drain for every lane and the orderer");

/* Lane lane's state for r, or the orderer's (CT_DRAIN_ORDERER): zeroed by the writer when it first
 * sees r (ct_drain_ready). */
static inline struct ct_drain *ct_drain_at(struct ct_ring *r, unsigned lane)
{
	return (struct ct_drain *)(void *)r->consumer + lane;
}

/* Whether the writer has set up r's drains (acquire: the drains are zeroed before). */
static inline int ct_drain_ready(const struct ct_ring *r)
{
	return __atomic_load_n(&r->consumer_ready, __ATOMIC_ACQUIRE);
}

/* Applies r's published events from *pos on to d's stream, ordered (match.h) unless ordered is
 * clear for the first; stops at an event that must wait (d->blocked). Returns the events applied;
 * *pos moves past them. */
int ct_drain(struct ct_ring *r, struct ct_drain *d, _Atomic uint64_t *pos, int ordered) CT_HIDDEN;
/* One of several lanes applies the next n events of r (published, and in the orderer's order: none
 * refused) from d->pos, each event's records marked in run as event *event (*event counts them). */
int ct_drain_run(struct ct_ring *r, struct ct_drain *d, struct ct_run *run, uint64_t *event,
                 uint64_t n) CT_HIDDEN;
/* The orderer's pass over r from d->pos (several lanes): the events whose turn it is (ct_match_turn),
 * up to one that must wait (d->blocked), ordered unless ordered is clear for the first. Returns how
 * many; the lanes are then given them. */
int ct_drain_order(struct ct_ring *r, struct ct_drain *d, int ordered) CT_HIDDEN;
/* Several lanes: r's tail becomes the slowest lane's position (never moves back). */
void ct_drain_tail(struct ct_ring *r, unsigned lanes) CT_HIDDEN;

#endif
