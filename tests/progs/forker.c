/* SPDX-License-Identifier: MIT */
/* fork: parent and child allocate known amounts; the child exits with exit(0) (a normal end).
 * Parent: malloc(1000) freed, parent_leak malloc(2000) leaked, fork, waits, malloc(700) freed:
 *   3 allocations, 2 frees, 3700 bytes, leaked 2000 bytes in 1.
 * Child (after the fork only): child_leak malloc(300) leaked, malloc(400) freed:
 *   2 allocations, 1 free, 700 bytes, leaked 300 bytes in 1 (it inherits the 2000 block live).
 * The parent prints "child=PID\n" (write(1)) after all its allocations. Exit 0, 1 on failure. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

NOINLINE static int parent_leak(void)
{
	return malloc(2000) != NULL;
}

NOINLINE static int child_leak(void)
{
	return malloc(300) != NULL;
}

static void child(void)
{
	int ok = child_leak();
	void *p = malloc(400);
	free(p);
	exit(ok && p ? 0 : 1);
}

int main(void)
{
	void *p = malloc(1000);
	free(p);
	if (!p || !parent_leak())
		return 1;
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0)
		child();
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	p = malloc(700);
	free(p);
	char msg[64];
	int n = snprintf(msg, sizeof(msg), "child=%d\n", (int)pid); /* snprintf does not allocate */
	return p && write(1, msg, n) == n ? 0 : 1;
}
