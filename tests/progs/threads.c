/* SPDX-License-Identifier: MIT */
/* 8 threads in a ring: thread i allocates 1000 blocks of 32 + 8 * i bytes into the queue of thread
 * i + 1 (mod 8), then frees the 1000 blocks thread i - 1 sent it, so every block is freed by a thread
 * that did not allocate it. Each thread also leaks malloc(1000 + i) in thread_leak.
 * Program's own figures: 8008 allocations, 8000 frees, 8000 * 60 + 8028 = 488028 bytes; leaked
 * 8028 bytes in 8 allocations (thread_leak). glibc's thread creation allocates a little on top
 * (its TLS vectors): compare the totals with valgrind. No stdio. */
#include <pthread.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define THREADS 8
#define BLOCKS 1000

struct block {
	struct block *next;
};

struct queue {
	pthread_mutex_t lock;
	pthread_cond_t ready;
	struct block *head;
};

static struct queue queues[THREADS];
static int bad;

NOINLINE static void thread_leak(size_t n)
{
	if (!malloc(n))
		bad = 1;
}

static void push(struct queue *q, struct block *b)
{
	pthread_mutex_lock(&q->lock);
	b->next = q->head;
	q->head = b;
	pthread_cond_signal(&q->ready);
	pthread_mutex_unlock(&q->lock);
}

static struct block *pop(struct queue *q)
{
	pthread_mutex_lock(&q->lock);
	while (!q->head)
		pthread_cond_wait(&q->ready, &q->lock);
	struct block *b = q->head;
	q->head = b->next;
	pthread_mutex_unlock(&q->lock);
	return b;
}

static void *worker(void *arg)
{
	size_t i = (size_t)arg;
	for (int k = 0; k < BLOCKS; k++) {
		struct block *b = malloc(32 + 8 * i);
		if (!b) {
			bad = 1;
			return NULL;
		}
		push(&queues[(i + 1) % THREADS], b);
	}
	thread_leak(1000 + i);
	for (int k = 0; k < BLOCKS; k++)
		free(pop(&queues[i]));
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	for (size_t i = 0; i < THREADS; i++) {
		pthread_mutex_init(&queues[i].lock, NULL);
		pthread_cond_init(&queues[i].ready, NULL);
	}
	for (size_t i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			return 2;
	for (size_t i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	return bad;
}
