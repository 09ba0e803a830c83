/* SPDX-License-Identifier: MIT */
/* The live view's target (tests/e2e/test_live.py): allocates known amounts, says it paused by
 * creating the file argv[2], then waits until argv[1] (a FIFO) gives it a byte, and goes on.
 * No stdio before the pause (its buffer would be an allocation of its own).
 *
 * At the pause: keep_big 4 x 100000 bytes live, keep_small 10 x 1000 live (6 called from main, 4 from
 * main through small_helper: one site of two backtraces), churn 50 x 64 allocated
 * and each freed by the very next event (temporary): heap in use 410000 bytes in 14 blocks; 64
 * allocations, 50 frees, 50 temporary; the top site by live bytes is keep_big (400000 bytes, 4 blocks,
 * 4 allocations), by allocations churn (50).
 * After the pause: 2 of keep_big's blocks freed; "done" on stdout and stderr; exit status 3 with
 * 210000 bytes in 12 blocks live (leaked): 64 allocations, 52 frees. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *big[4], *small[10];

__attribute__((noinline)) static void keep_big(void)
{
	for (int i = 0; i < 4; i++)
		big[i] = malloc(100000);
}

__attribute__((noinline)) static void keep_small(int from, int n)
{
	for (int i = from; i < from + n; i++)
		small[i] = malloc(1000);
}

__attribute__((noinline)) static void small_helper(void)
{
	keep_small(6, 4);
}

__attribute__((noinline)) static void churn(void)
{
	for (int i = 0; i < 50; i++) {
		char *p = malloc(64);
		p[0] = (char)i;
		free(p);
	}
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	keep_big();
	keep_small(0, 6);
	small_helper();
	churn();
	int ready = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (ready < 0)
		return 1;
	close(ready);
	char c;
	int go = open(argv[1], O_RDONLY); /* blocks until the test opens the FIFO for writing */
	if (go < 0 || read(go, &c, 1) != 1)
		return 1;
	close(go);
	free(big[0]);
	free(big[1]);
	static const char done[] = "done\n";
	if (write(1, done, 5) != 5 || write(2, done, 5) != 5)
		return 1;
	return 3;
}
