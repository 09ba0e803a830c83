/* SPDX-License-Identifier: MIT */
/* A server-shaped loop that leaks one block per request, with ctrack's runtime control around it
 * (include/ctrack/ctrack.h): a warm-up (a cache kept in a global, one block lost), the mark "warm",
 * REQUESTS requests that each allocate a temporary of 64 + i bytes and lose one block of LEAK_SIZE
 * bytes (LINE LEAK), the mark "done", then ctrack_check_leaks(), whose answer it prints:
 *   check: (REQUESTS + 1) * LEAK_SIZE = 1100 bytes definitely lost under ctrack, -1 without it.
 * At exit the cache is freed: the same 1100 bytes are lost, nothing else is live. With an argument
 * "kill", it instead allocates AFTER blocks of 48 bytes, marks "after" and dies of SIGKILL: blocks
 * that no scan saw. Printed with write(2), so stdio allocates nothing. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctrack/ctrack.h"

#define REQUESTS 10
#define LEAK_SIZE 100
#define AFTER 5
#define NOINLINE __attribute__((noinline))

static void *volatile cache;
static void *volatile kept[AFTER];

NOINLINE static void lose(void)
{
	void *volatile p = malloc(LEAK_SIZE); /* LINE LEAK */
	p = NULL;
	(void)p;
}

NOINLINE static void handle(int i)
{
	char *volatile tmp = malloc(64 + (size_t)i);
	free(tmp);
	lose();
}

int main(int argc, char **argv)
{
	cache = malloc(4096);
	lose();
	ctrack_mark("warm");
	for (int i = 0; i < REQUESTS; i++)
		handle(i);
	ctrack_mark("done");
	char line[64];
	int n = snprintf(line, sizeof(line), "check: %lld\n", ctrack_check_leaks());
	if (write(STDOUT_FILENO, line, (size_t)n) != n)
		return 1;
	if (argc > 1 && !strcmp(argv[1], "kill")) {
		for (int i = 0; i < AFTER; i++)
			kept[i] = malloc(48);
		ctrack_mark("after");
		raise(SIGKILL);
	}
	free(cache);
	return 0;
}
