/* SPDX-License-Identifier: MIT */
/* fork: parent and child allocate known amounts; the child exits with exit(0) (a normal end).
 * Parent: malloc(1000) freed, parent_leak malloc(2000) leaked, fork, waits, malloc(700) freed:
 *   3 allocations, 2 frees, 3700 bytes, leaked 2000 bytes in 1.
 * Child (after the fork only): child_leak malloc(300) leaked, malloc(400) freed:
 *   2 allocations, 1 free, 700 bytes, leaked 300 bytes in 1 (it inherits the 2000 block live).
 * With an argument N, the parent forks N children one after the other, child k (from 0) leaking
 * 300 + 10 k bytes; the parent's figures stay the same.
 * The parent prints "child=PID\n" (write(1)) per child after all its allocations. Exit 0, 1 on
 * failure. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

NOINLINE static int parent_leak(void)
{
	return malloc(2000) != NULL;
}

NOINLINE static int child_leak(size_t n)
{
	return malloc(n) != NULL;
}

static void child(int k)
{
	int ok = child_leak(300 + 10 * (size_t)k);
	void *p = malloc(400);
	free(p);
	exit(ok && p ? 0 : 1);
}

int main(int argc, char **argv)
{
	int children = argc > 1 ? atoi(argv[1]) : 1;
	pid_t pids[64];
	void *p = malloc(1000);
	free(p);
	if (!p || !parent_leak() || children < 1 || children > 64)
		return 1;
	for (int k = 0; k < children; k++) {
		pid_t pid = fork();
		int status;
		if (pid < 0)
			return 1;
		if (pid == 0)
			child(k);
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			return 1;
		pids[k] = pid;
	}
	p = malloc(700);
	free(p);
	for (int k = 0; p && k < children; k++) {
		char msg[64];
		int n =
		    snprintf(msg, sizeof(msg), "child=%d\n", (int)pids[k]); /* snprintf does not allocate */
		if (write(1, msg, n) != n)
			return 1;
	}
	return p ? 0 : 1;
}
