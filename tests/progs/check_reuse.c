/* SPDX-License-Identifier: MIT */
/* ctrack_check_leaks() while a thread replaces, over and over, the block a global points to with a new
 * one of the same size (glibc hands the same address back), copying its pointer to a 1000-byte child
 * across and wiping the copy on its stack: at a check, the child is named by the new block alone,
 * whose allocation (and the old one's free) the writer has not matched yet. One block of LEAK_SIZE
 * bytes is lost; CHECKS checks print
 *   checks: CHECKS answered LEAK_SIZE, 0 otherwise
 * A few checks in 200 answered LEAK_SIZE + 1000 before 2026-12-07 (a block allocated since the scan
 * took its live set was not read; one allocated again at a freed block's address, read as that
 * block, then not read at all for a while that day); the wrong answers go to stderr. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/ctrack.h"

#define LEAK_SIZE 100
#define CHECKS 200
#define SHOWN 5

#include "lose.h"

struct node {
	void *child;
	char pad[40];
};
static struct node *volatile g;
static atomic_int stop;

static void *churn(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		struct node tmp;
		memcpy(&tmp, (void *)g, sizeof(tmp));
		free(g);
		struct node *n = malloc(sizeof(*n)); /* tcache: the same address */
		memcpy(n, &tmp, sizeof(tmp));
		explicit_bzero(&tmp, sizeof(tmp));
		g = n;
	}
	return NULL;
}

int main(void)
{
	lose();
	g = malloc(sizeof(struct node));
	g->child = malloc(1000);
	pthread_t t;
	if (pthread_create(&t, NULL, churn, NULL) != 0)
		return 1;
	int wrong = 0;
	for (int i = 0; i < CHECKS; i++) {
		long long lost = ctrack_check_leaks();
		if (lost != LEAK_SIZE && wrong++ < SHOWN)
			fprintf(stderr, "check %d answered %lld\n", i, lost);
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	printf("checks: %d answered %d, %d otherwise\n", CHECKS - wrong, LEAK_SIZE, wrong);
	return 0;
}
