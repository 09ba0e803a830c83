/* SPDX-License-Identifier: MIT */
/* Dies by SIGKILL with its trace open. Allocates 100 x malloc(1000) (kept, in early_blocks), then
 * "self": sleeps 1 s, allocates 10 x malloc(1000) more and raises SIGKILL;
 * "wait": prints "ready PID\n" (write(1)) and sleeps until the test kills it.
 * So the trace holds at least 100 allocations / 100000 bytes (made >= 1 s before the kill), at
 * most 110 / 110000, and no frees. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

NOINLINE static void early_blocks(void)
{
	for (int i = 0; i < 100; i++)
		if (!malloc(1000))
			exit(1);
}

int main(int argc, char **argv)
{
	early_blocks();
	if (argc > 1 && strcmp(argv[1], "wait") == 0) {
		char msg[64];
		int n = snprintf(msg, sizeof(msg), "ready %d\n", (int)getpid());
		if (write(1, msg, n) != n)
			return 1;
		for (;;)
			pause();
	}
	struct timespec second = {1, 0};
	nanosleep(&second, NULL);
	for (int i = 0; i < 10; i++)
		if (!malloc(1000))
			return 1;
	raise(SIGKILL);
	return 1;
}
