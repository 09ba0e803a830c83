/* SPDX-License-Identifier: MIT */
/* Every shape of memcheck's leak classes (its manual's nine cases) in one program, so a test can
 * hold ctrack's classes against valgrind's LEAK SUMMARY on the same run. By shape:
 *   a global pointer, and a chain of 2 from another global:          still reachable, 3 blocks
 *   a pointer overwritten with NULL:                                  definitely lost
 *   a lost chain of 3 (A -> B -> C):                                  1 definite, 2 indirect
 *   a lost tree (root -> 2 children -> 1 grandchild):                 1 definite, 3 indirect
 *   a lost cycle of 2:                                                1 definite, 1 indirect
 *   an interior pointer from a global:                                possibly lost
 *   a reachable block with an interior pointer to another:            that one possibly lost
 *   a lost block with an interior pointer to another:                 1 definite, 1 indirect
 *   a block referenced only from thread-local storage:                still reachable
 *   new[] of objects with a destructor, kept by a pointer to its
 *   first element (8 bytes in: memcheck's newarray heuristic):        still reachable
 * Sizes differ by shape, so the bytes tell the shapes apart. No stdio. */
#include <stdint.h>
#include <stdlib.h>

struct node {
	struct node *next, *other;
	char pad[16];
};

static struct node *make(size_t extra)
{
	struct node *n = calloc(1, sizeof(*n) + extra);
	return n;
}

static void *volatile global;
static struct node *volatile chain;
static char *volatile interior;
static struct node *volatile holder;
static __thread void *volatile tls_only;
static void *volatile array_start;

__attribute__((noinline)) static void lose(void)
{
	struct node *volatile p;
	p = make(1); /* overwritten */
	p = NULL;
	struct node *a = make(2), *b = make(3), *c = make(4); /* lost chain */
	a->next = b;
	b->next = c;
	struct node *r = make(5), *l = make(6), *rr = make(7), *g = make(8); /* lost tree */
	r->next = l;
	r->other = rr;
	l->next = g;
	struct node *x = make(9), *y = make(10); /* lost cycle */
	x->next = y;
	y->next = x;
	struct node *lo = make(11), *li = make(12); /* lost, interior pointer to another */
	lo->next = (struct node *)((char *)li + 8);
	(void)p;
}

int main(void)
{
	global = malloc(100);
	chain = make(20);
	chain->next = make(21);
	interior = (char *)malloc(200) + 16;
	holder = make(30);
	holder->next = (struct node *)((char *)make(31) + 8);
	tls_only = malloc(300);
	size_t *arr = malloc(8 + 3 * 16); /* what new[] of 3 16-byte objects with a destructor makes */
	arr[0] = 3;
	array_start = arr + 1;
	lose();
	return 0;
}
