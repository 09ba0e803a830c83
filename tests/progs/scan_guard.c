/* SPDX-License-Identifier: MIT */
/* Live blocks with pages nobody may read, as memcheck's and LeakSanitizer's guard-page tests have
 * them: a calloc(200000) (an mmap'd chunk) with two of its pages made PROT_NONE, and a coroutine
 * stack from posix_memalign(4096, 65536) whose lowest page is the guard (PROT_NONE). Both are kept
 * in globals (still reachable); a lost block, malloc(48), is definitely lost. The scan at exit must
 * read around the pages it cannot: the program exits 0, and the classes are memcheck's. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

static char *big;
static void *coro_stack;
static void *volatile lost;

int main(void)
{
	big = calloc(1, 200000);
	if (!big || posix_memalign(&coro_stack, 4096, 65536))
		return 2;
	/* two whole pages inside the block, from its first page boundary after 16 KiB */
	char *pages = (char *)(((uintptr_t)big + 16384 + 4095) & ~(uintptr_t)4095);
	if (mprotect(pages, 8192, PROT_NONE) || mprotect(coro_stack, 4096, PROT_NONE))
		return 3;
	lost = malloc(48);
	lost = NULL;
	return 0;
}
