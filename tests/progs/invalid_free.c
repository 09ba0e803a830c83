/* SPDX-License-Identifier: MIT */
/* Invalid frees, one per mode (argv[1]), each in a function of its own, called from main; the lines
 * are marked `LINE name` for the tests. With glibc:
 *   double    malloc(32), freed twice: glibc aborts ("free(): double free detected in tcache 2").
 *   global    free of a pointer into a global array: glibc aborts ("free(): invalid pointer").
 *   stack     free of a pointer into a stack array: glibc aborts ("free(): invalid pointer").
 *   interior  free of a pointer 8 bytes into a heap block: glibc aborts ("free(): invalid pointer").
 *   fastbin   a double free glibc does not detect: 7 blocks of 100 bytes fill their tcache bin, then
 *             a, b, a go to the fastbin, whose check only compares with its top (b). The program goes
 *             on (nothing of that size is allocated again: the bin is a cycle) and exits 0.
 *   fork      the parent allocates 48 bytes and forks; the child frees that block (allocated before
 *             its trace began: no invalid free) and exits 0; the parent waits and frees it too.
 * Under valgrind no mode aborts: memcheck reports each invalid free ("Invalid free()") and goes on.
 * Exit 0 when the program goes on to its end; 2 on a usage error. Output: "went on\n" (write(1)). */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

/* gcc knows these frees are wrong, which is the point. */
#pragma GCC diagnostic ignored "-Wfree-nonheap-object"

static char global_array[64] __attribute__((aligned(16)));

NOINLINE static void double_free(void)
{
	char *p = malloc(32); /* LINE double_alloc */
	free(p);              /* LINE double_first */
	free(p);              /* LINE double_free */
}

NOINLINE static void global_free(void)
{
	free(global_array + 16); /* LINE global_free */
}

NOINLINE static void stack_free(void)
{
	char buf[64];
	memset(buf, 0, sizeof(buf));
	free(buf + 16); /* LINE stack_free */
}

NOINLINE static void interior_free(void)
{
	char *p = malloc(64);
	memset(p, 0, 64); /* what glibc reads as the inner "chunk"'s header: no mmapped bit */
	free(p + 8);      /* LINE interior_free */
}

NOINLINE static void fastbin_free(void)
{
	void *fill[7];
	for (int i = 0; i < 7; i++)
		fill[i] = malloc(100);
	char *a = malloc(100); /* LINE fastbin_alloc */
	char *b = malloc(100);
	for (int i = 0; i < 7; i++)
		free(fill[i]);
	free(a); /* LINE fastbin_first */
	free(b);
	free(a); /* LINE fastbin_free */
}

NOINLINE static void child_frees(void *p)
{
	free(p); /* LINE child_free */
}

static int fork_free(void)
{
	void *p = malloc(48);
	pid_t pid = fork();
	if (pid == 0) {
		child_frees(p);
		exit(0);
	}
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	free(p);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (!strcmp(mode, "double"))
		double_free();
	else if (!strcmp(mode, "global"))
		global_free();
	else if (!strcmp(mode, "stack"))
		stack_free();
	else if (!strcmp(mode, "interior"))
		interior_free();
	else if (!strcmp(mode, "fastbin"))
		fastbin_free();
	else if (!strcmp(mode, "fork"))
		return fork_free();
	else
		return 2;
	write(1, "went on\n", 8);
	return 0;
}
