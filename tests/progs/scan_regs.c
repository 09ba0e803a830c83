/* SPDX-License-Identifier: MIT */
/* LeakSanitizer's use_registers shape, built -O2: a thread keeps its only pointer to a malloc(1337)
 * in a register (r14) while it spins, and main returns. The stopped thread's registers are roots:
 * still reachable, 1,337 bytes in 1 block (memcheck agrees). */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

static int ready;

static void *spin(void *arg)
{
	(void)arg;
	void *p = malloc(1337);
	__asm__ volatile("mov %0, %%r14\n" : : "r"(p) : "r14");
	__atomic_store_n(&ready, 1, __ATOMIC_SEQ_CST);
	for (;;)
		__asm__ volatile("" : : : "memory");
	return NULL;
}

int main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, spin, NULL))
		return 2;
	while (!__atomic_load_n(&ready, __ATOMIC_SEQ_CST))
		sched_yield();
	return 0;
}
