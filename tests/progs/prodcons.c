/* SPDX-License-Identifier: MIT */
/* Producers and consumers: 3 producer threads each allocate 20000 blocks (block k of producer p:
 * 24 + 8 * ((k + p) % 32) bytes) and pass them through a bounded queue to a consumer thread of
 * their own, which frees them: 6 threads, every block freed by a thread that did not allocate it.
 * Program's own figures: 60000 allocations, 60000 frees, 3 * 625 * 4736 = 8880000 bytes, nothing
 * in use at exit. glibc's thread creation allocates a little on top (one TLS vector per thread):
 * compare the totals with valgrind. No stdio. */
#include <pthread.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define PAIRS 3
#define BLOCKS 20000
#define SLOTS 64

struct queue {
	pthread_mutex_t lock;
	pthread_cond_t not_empty, not_full;
	void *slot[SLOTS];
	unsigned head, tail; /* taken, put */
};

static struct queue queues[PAIRS];
static int bad;

static void put(struct queue *q, void *p)
{
	pthread_mutex_lock(&q->lock);
	while (q->tail - q->head == SLOTS)
		pthread_cond_wait(&q->not_full, &q->lock);
	q->slot[q->tail++ % SLOTS] = p;
	pthread_cond_signal(&q->not_empty);
	pthread_mutex_unlock(&q->lock);
}

static void *take(struct queue *q)
{
	pthread_mutex_lock(&q->lock);
	while (q->tail == q->head)
		pthread_cond_wait(&q->not_empty, &q->lock);
	void *p = q->slot[q->head++ % SLOTS];
	pthread_cond_signal(&q->not_full);
	pthread_mutex_unlock(&q->lock);
	return p;
}

NOINLINE static void *produce_block(size_t size)
{
	char *p = malloc(size);
	if (p)
		p[0] = (char)size;
	else
		bad = 1;
	return p;
}

static void *producer(void *arg)
{
	unsigned p = (unsigned)(size_t)arg;
	for (unsigned k = 0; k < BLOCKS; k++)
		put(&queues[p], produce_block(24 + 8 * ((k + p) % 32)));
	return NULL;
}

NOINLINE static void consume_block(void *p)
{
	free(p);
}

static void *consumer(void *arg)
{
	struct queue *q = &queues[(size_t)arg];
	for (unsigned k = 0; k < BLOCKS; k++)
		consume_block(take(q));
	return NULL;
}

int main(void)
{
	pthread_t t[2 * PAIRS];

	for (size_t i = 0; i < PAIRS; i++) {
		pthread_mutex_init(&queues[i].lock, NULL);
		pthread_cond_init(&queues[i].not_empty, NULL);
		pthread_cond_init(&queues[i].not_full, NULL);
	}
	for (size_t i = 0; i < PAIRS; i++) {
		if (pthread_create(&t[2 * i], NULL, consumer, (void *)i) ||
		    pthread_create(&t[2 * i + 1], NULL, producer, (void *)i))
			return 1;
	}
	for (size_t i = 0; i < 2 * PAIRS; i++)
		pthread_join(t[i], NULL);
	return bad;
}
