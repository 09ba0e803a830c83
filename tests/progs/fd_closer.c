/* SPDX-License-Identifier: MIT */
/* A daemon-like program that closes every descriptor above 2, then opens its own file 600 times
 * (taking the lowest free numbers, and so the trace file's old number) and writes one 'x' through
 * each. Expected: its file holds exactly 600 'x' and nothing of ctrack's. Allocates 5 blocks of
 * 100 bytes before closing (kept, leaked: 500 bytes) and does 200 malloc/free pairs after. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

static void *volatile keep[5];

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	for (int i = 0; i < 5; i++)
		keep[i] = malloc(100);
	for (int fd = 3; fd < 4096; fd++)
		close(fd);
	int fds[600], n = 0;
	for (int i = 0; i < 600; i++)
		if ((fds[n] = open(argv[1], O_WRONLY | O_CREAT | O_APPEND, 0600)) >= 0)
			n++;
	for (int i = 0; i < 200; i++) {
		void *volatile p = malloc(100);
		free(p);
		usleep(500);
	}
	for (int i = 0; i < n; i++) {
		if (write(fds[i], "x", 1) != 1)
			return 1;
		close(fds[i]);
	}
	return n == 600 ? 0 : 1;
}
