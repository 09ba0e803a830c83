/* SPDX-License-Identifier: MIT */
/* A program told to end while it runs: it keeps a list of 8 blocks of 48 bytes from a global
 * (still reachable, 384 bytes in 8 blocks), loses a malloc(200) that holds the only pointer to a
 * malloc(300) (definitely 200, indirectly 300), then raises the signal named by argv[1] (TERM, INT
 * or HUP) on itself. memcheck classifies the heap at that point; so must ctrack. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

static void **list;
static void *volatile sink;

static __attribute__((noinline)) void lose(void)
{
	void **head = malloc(200);
	memset(head, 0, 200);
	head[0] = malloc(300);
	sink = head;
	sink = NULL;
}

int main(int argc, char **argv)
{
	for (int i = 0; i < 8; i++) {
		void **node = malloc(48);
		node[0] = list;
		list = node;
	}
	lose();
	const char *name = argc > 1 ? argv[1] : "TERM";
	raise(!strcmp(name, "INT") ? SIGINT : !strcmp(name, "HUP") ? SIGHUP : SIGTERM);
	return 0;
}
