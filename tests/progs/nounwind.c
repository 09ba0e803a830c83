/* SPDX-License-Identifier: MIT */
/* main and a thread each leak one block through middle and leaf: 100 bytes from main, 200 from
 * thread_main. Built by tests/e2e/test_nounwind.py with and without unwind tables and frame
 * pointers. With -DJUNK_RBP, leaf holds a value of its own in RBP across its call to malloc, as code
 * built without frame pointers may: a frame-pointer guess at its frame leads nowhere. Exit 0, 2 on
 * failure. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static void *volatile kept[2];

NOINLINE void *leaf(size_t n)
{
#ifdef JUNK_RBP
	register uintptr_t junk __asm__("rbp") = 0x1234;
	__asm__ volatile("" : "+r"(junk));
#endif
	void *p = malloc(n); /* LINE leaf */
#ifdef JUNK_RBP
	__asm__ volatile("" : : "r"(junk));
#endif
	return p;
}

NOINLINE void *middle(size_t n)
{
	void *p = leaf(n);                   /* LINE middle */
	__asm__ volatile("" : : : "memory"); /* a call, not a jump */
	return p;
}

static void *thread_main(void *arg)
{
	kept[1] = middle(200); /* LINE thread */
	return arg;
}

int main(void)
{
	pthread_t t;
	kept[0] = middle(100); /* LINE main */
	if (pthread_create(&t, NULL, thread_main, NULL) || pthread_join(t, NULL))
		return 2;
	return 0;
}
