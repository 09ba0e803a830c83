/* SPDX-License-Identifier: MIT */
/* A leak-free program that lowers its descriptor limit (RLIMIT_NOFILE) to 3, what stdin, stdout
 * and stderr take (the trace's descriptor lies above any limit): the soft limit alone with "soft", both with
 * "hard". A list of 16 blocks of 100 bytes hangs from a global (still reachable: 1,600 bytes in 16 blocks),
 * and nothing is lost. The scan at exit needs /proc/self/maps and /proc/self/task; without them it must give
 * no classes (and say why), never call these blocks lost. */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static void **head;

int main(int argc, char **argv)
{
	struct rlimit lim;
	if (getrlimit(RLIMIT_NOFILE, &lim))
		return 3;
	lim.rlim_cur = 3;
	if (argc > 1 && !strcmp(argv[1], "hard"))
		lim.rlim_max = 3;
	if (setrlimit(RLIMIT_NOFILE, &lim))
		return 3;
	for (int i = 0; i < 16; i++) {
		void **node = malloc(100);
		if (!node)
			return 2;
		node[0] = head;
		head = node;
	}
	return 0;
}
