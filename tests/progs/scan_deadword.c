/* SPDX-License-Identifier: MIT */
/* LeakSanitizer's use_stacks_threaded shape, built -O2: a thread mallocs 1337 bytes, drops every
 * copy of the pointer (the register that held it is overwritten at once) and spins; main returns
 * while it spins. Nothing of the program holds the block: definitely lost, 1,337 bytes in 1 block,
 * LeakSanitizer's verdict. Only the dead frames that malloc left just below the thread's stack
 * pointer hold it: under memcheck those are valgrind's own malloc wrapper's, inside the 128-byte red
 * zone memcheck scans, so memcheck calls it still reachable; under ctrack they are the shim's, which
 * zeroes them. (With an fprintf after the malloc, as LSan's test has, memcheck agrees: definite.) */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

static int sync_flag;

static void *spin(void *arg)
{
	(void)arg;
	void *p = malloc(1337);
	__asm__ volatile("" : : "r"(p) : "memory"); /* allocated, then forgotten */
	__atomic_store_n(&sync_flag, 1, __ATOMIC_SEQ_CST);
	for (;;)
		__asm__ volatile("pause");
	return NULL;
}

int main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, spin, NULL))
		return 2;
	while (!__atomic_load_n(&sync_flag, __ATOMIC_SEQ_CST))
		sched_yield();
	return 0;
}
