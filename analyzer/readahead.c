/* SPDX-License-Identifier: MIT */
/* Reading ahead (readahead.h): a ring of SLOTS slots between the producing thread and the reader's.
 * The producer fills the slot after the last one filled while fewer than SLOTS are filled or held;
 * the consumer holds one slot at a time, from one ct_readahead_next to the next. Each slot keeps
 * its buffers from one round to the next, so that the steady state allocates nothing. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rec_heap.h"
#include "readahead.h"

/* A slot holds one zstd call's output, 128 KiB at most (a block), and the BATCH records it
 * completes: a few MiB in all, whatever the trace's size. The producer, once the ring is full,
 * sleeps until half of it is free: a wake-up costs it the other core's scheduling delay (up to a
 * time slice on a machine whose other core is busy), which the half still filled must cover. */
#define SLOTS 32

struct ct_readahead {
	ct_ra_produce_fn produce;
	void *arg;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t filled_cond, freed_cond;
	/* under lock */
	unsigned head;  /* the slot the consumer holds or takes next */
	unsigned ready; /* filled and not taken, from head (or head + 1 while one is held) */
	int held;       /* the consumer holds slot head */
	int asleep;     /* the producer waits for half of the ring */
	int cancel;
	struct ct_ra_slot slot[SLOTS];
};

/* The producer's next slot, once there is room; NULL when cancelled. */
static struct ct_ra_slot *take_free(struct ct_readahead *ra)
{
	pthread_mutex_lock(&ra->lock);
	if (ra->ready + (unsigned)ra->held >= SLOTS) {
		ra->asleep = 1;
		while (!ra->cancel && ra->asleep)
			pthread_cond_wait(&ra->freed_cond, &ra->lock);
	}
	struct ct_ra_slot *s =
	    ra->cancel ? NULL : &ra->slot[(ra->head + ra->ready + (unsigned)ra->held) % SLOTS];
	pthread_mutex_unlock(&ra->lock);
	return s;
}

static void *producer_main(void *arg)
{
	struct ct_readahead *ra = arg;
	int rc = 1;
	struct ct_ra_slot *s;
	while (rc > 0 && (s = take_free(ra))) {
		s->bytes.len = 0;
		s->njoins = s->next = 0;
		rc = ra->produce(ra->arg, s);
		pthread_mutex_lock(&ra->lock);
		ra->ready++;
		pthread_cond_signal(&ra->filled_cond);
		pthread_mutex_unlock(&ra->lock);
	}
	return NULL;
}

struct ct_readahead *ct_readahead_start(ct_ra_produce_fn produce, void *arg)
{
	struct ct_readahead *ra = calloc(1, sizeof(*ra));
	if (!ra)
		return NULL;
	ra->produce = produce;
	ra->arg = arg;
	for (int i = 0; i < SLOTS; i++)
		ra->slot[i].bytes.grow = ct_rec_grow_heap;
	pthread_mutex_init(&ra->lock, NULL);
	pthread_cond_init(&ra->filled_cond, NULL);
	pthread_cond_init(&ra->freed_cond, NULL);
	if (pthread_create(&ra->thread, NULL, producer_main, ra) != 0) {
		pthread_cond_destroy(&ra->freed_cond);
		pthread_cond_destroy(&ra->filled_cond);
		pthread_mutex_destroy(&ra->lock);
		free(ra);
		return NULL;
	}
	return ra;
}

struct ct_ra_slot *ct_readahead_next(struct ct_readahead *ra)
{
	pthread_mutex_lock(&ra->lock);
	if (ra->held) {
		ra->held = 0;
		ra->head = (ra->head + 1) % SLOTS;
		if (ra->asleep && ra->ready <= SLOTS / 2) {
			ra->asleep = 0;
			pthread_cond_signal(&ra->freed_cond);
		}
	}
	while (!ra->ready)
		pthread_cond_wait(&ra->filled_cond, &ra->lock);
	ra->ready--;
	ra->held = 1;
	struct ct_ra_slot *s = &ra->slot[ra->head];
	pthread_mutex_unlock(&ra->lock);
	return s;
}

void ct_readahead_stop(struct ct_readahead *ra)
{
	if (!ra)
		return;
	pthread_mutex_lock(&ra->lock);
	ra->cancel = 1;
	pthread_cond_signal(&ra->freed_cond);
	pthread_mutex_unlock(&ra->lock);
	pthread_join(ra->thread, NULL);
	for (int i = 0; i < SLOTS; i++) {
		struct ct_ra_slot *s = &ra->slot[i];
		for (size_t j = 0; j < s->capjoins; j++)
			free(s->joins[j].rows.data);
		free(s->joins);
		free(s->bytes.data);
	}
	pthread_cond_destroy(&ra->freed_cond);
	pthread_cond_destroy(&ra->filled_cond);
	pthread_mutex_destroy(&ra->lock);
	free(ra);
}

struct ct_ra_join *ct_ra_slot_add_join(struct ct_ra_slot *s, uint64_t at)
{
	if (s->njoins == s->capjoins) {
		size_t cap = s->capjoins ? 2 * s->capjoins : 8;
		struct ct_ra_join *j = realloc(s->joins, cap * sizeof(*j));
		if (!j)
			return NULL;
		memset(j + s->capjoins, 0, (cap - s->capjoins) * sizeof(*j));
		s->joins = j;
		s->capjoins = cap;
	}
	struct ct_ra_join *j = &s->joins[s->njoins++];
	j->at = at;
	j->rows.len = 0;
	j->rows.dropped = 0;
	j->rows.grow = ct_rec_grow_heap;
	j->rc = 0;
	j->n = 0;
	return j;
}

struct ct_ra_join *ct_ra_slot_join_at(struct ct_ra_slot *s, uint64_t at)
{
	while (s->next < s->njoins && s->joins[s->next].at < at)
		s->next++;
	if (s->next == s->njoins || s->joins[s->next].at != at)
		return NULL;
	return &s->joins[s->next++];
}
