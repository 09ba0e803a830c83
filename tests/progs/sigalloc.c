/* SPDX-License-Identifier: MIT */
/* Allocates inside a signal handler: raises SIGUSR1 3 times, and the handler keeps a malloc(32)
 * each time. Each of those 3 backtraces goes through the kernel's signal frame (the walker reads
 * the interrupted registers from it) to main. 3 allocations, 96 bytes, all leaked. */
#include <signal.h>
#include <stdlib.h>

static void *volatile kept[3];
static volatile int n;

static void handler(int sig)
{
	(void)sig;
	kept[n] = malloc(32);
	n++;
}

int main(void)
{
	signal(SIGUSR1, handler);
	for (int i = 0; i < 3; i++)
		raise(SIGUSR1);
	return n == 3 ? 0 : 1;
}
