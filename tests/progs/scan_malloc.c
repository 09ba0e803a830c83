/* SPDX-License-Identifier: MIT */
/* The leak scan against glibc's malloc: blocks placed where the allocator keeps pointers of its own
 * (memory a phase freed and the next reuses, chunks that came back from the tcache, the chunk next
 * to the top chunk, mmapped chunks, a thread's arena, a thread's heap left with free chunks only).
 * memcheck, whose allocator is its own, never sees glibc's state: its LEAK SUMMARY is the answer.
 *
 * Most modes end with shape(SIZE, N), N blocks of SIZE bytes: 2 kept in a global (still
 * reachable); 1 held only by a global interior pointer (+40, or +8 in a block of 48 bytes or less:
 * possibly lost; the block's words are 0, so no heuristic applies); 1 that holds the only pointer
 * to another (definitely lost, the other indirectly lost); the other N - 5 dropped (definitely
 * lost). So for one shape: definitely lost (N - 4) * SIZE bytes in N - 4 blocks, indirectly lost
 * SIZE in 1, possibly lost SIZE in 1, still reachable 2 * SIZE in 2. stdout's buffer (puts, first
 * thing) is still reachable too: libc's FILE holds it. No pointer to a freed block is kept, but
 * in the mode dangling. Modes (argv[1]):
 *   reuse SIZE   100 blocks of 1000 bytes freed, then shape(SIZE, 20) in the memory they left
 *   tcache       7 blocks each of 24, 100 and 1000 bytes freed into the tcache, then shape(S, 7)
 *                for each S (the tcache gives the same chunks back, its link still in them)
 *   top          shape(S, 6) for S = 24, 1000, 4000, 990 (the last block borders the top chunk,
 *                whose pointer lands in the block's last word)
 *   large        shape(200000, 6): mmapped chunks, each a mapping of its own
 *   thread       a thread runs reuse 3000 in its own arena; main joins it
 *   thread-free  main drops a malloc(500) (definitely lost); a thread allocates 50 blocks of 100
 *                bytes in its arena, writes that pointer into each, frees them all and ends
 *                (its heap holds free chunks only); then shape(64, 6) in main
 *   mmap-buf     shape(200000, 6), then the program mmaps a page of its own next to those chunks
 *                and keeps the only pointer to a malloc(77) there (still reachable: memcheck
 *                scans the program's own mappings)
 *   dangling     100 blocks of 1000 bytes freed, their pointers kept in a global array; then 50
 *                blocks of 3000 bytes dropped. glibc gives the 3000-byte blocks the memory the
 *                others left, so the old pointers now point into them: a block that one points at
 *                the start of is still reachable, one that one points inside possibly lost, the
 *                rest definitely lost, by memcheck's rules. The program counts these itself and
 *                prints "dangling: D definite, P possible, R reachable". memcheck, whose allocator
 *                keeps freed memory aside (--freelist-vol, 20 MB), says all 50 definitely lost:
 *                ctrack reads the memory as the program left it under glibc's malloc. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define NOINLINE __attribute__((noinline))
#define MAX_SHAPES 8

static void *kept[MAX_SHAPES][2];
static char *inner[MAX_SHAPES];
static int shapes;
static void *volatile lost_500;

/* Overwrites the stack below the caller, where a dead frame may still hold a block's address. */
static NOINLINE void scrub(void)
{
	volatile char pad[4096];
	memset((char *)pad, 0, sizeof(pad));
}

static NOINLINE void *block(size_t size)
{
	void *p = malloc(size);
	if (!p)
		exit(2);
	memset(p, 0, size);
	return p;
}

static NOINLINE void shape(size_t size, int n)
{
	int s = shapes++;
	kept[s][0] = block(size);
	kept[s][1] = block(size);
	inner[s] = (char *)block(size) + (size > 48 ? 40 : 8);
	void **holder = block(size);
	holder[0] = block(size);
	for (int i = 5; i < n; i++)
		block(size);
	scrub();
}

static NOINLINE void reuse(size_t size)
{
	static void *a[100];
	for (int i = 0; i < 100; i++)
		a[i] = block(1000);
	for (int i = 0; i < 100; i++) {
		free(a[i]);
		a[i] = NULL; /* no dangling pointer left */
	}
	shape(size, 20);
}

static NOINLINE void tcache(void)
{
	static const size_t sizes[] = {24, 100, 1000};
	for (int k = 0; k < 3; k++) {
		void *t[7];
		for (int i = 0; i < 7; i++)
			t[i] = malloc(sizes[k]);
		for (int i = 0; i < 7; i++)
			free(t[i]);
		memset(t, 0, sizeof(t));
		shape(sizes[k], 7);
	}
}

static NOINLINE void dangling(void)
{
	static void *a[100];
	for (int i = 0; i < 100; i++)
		a[i] = block(1000);
	for (int i = 0; i < 100; i++)
		free(a[i]);       /* a[i] dangles */
	unsigned counts[3] = {0}; /* definite, possible, reachable */
	for (int k = 0; k < 50; k++) {
		uintptr_t p = (uintptr_t)block(3000);
		/* glibc's header of the next chunk starts in the block's last word: the allocator's */
		uintptr_t edge = p + malloc_usable_size((void *)p) - sizeof(void *);
		int kind = 0;
		for (int i = 0; i < 100; i++) {
			uintptr_t w = (uintptr_t)a[i];
			if (w == p)
				kind = 2;
			else if (w > p && w < p + 3000 && w != edge && !kind)
				kind = 1;
		}
		counts[kind]++;
	}
	scrub();
	printf("dangling: %u definite, %u possible, %u reachable\n", counts[0], counts[1], counts[2]);
}

static void *run_reuse(void *arg)
{
	(void)arg;
	reuse(3000);
	return NULL;
}

static NOINLINE void fill_and_free(void)
{
	void *b[50];
	for (int i = 0; i < 50; i++) {
		b[i] = block(100);
		((void *volatile *)b[i])[4] = lost_500; /* at +32: free() leaves it there */
	}
	for (int i = 0; i < 50; i++)
		free(b[i]);
	memset(b, 0, sizeof(b));
}

static void *free_all(void *arg)
{
	(void)arg;
	fill_and_free();
	scrub(); /* the thread's stack stays mapped for the next thread, and is read */
	return NULL;
}

static int in_thread(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	return pthread_create(&t, NULL, fn, arg) || pthread_join(t, NULL);
}

static NOINLINE int thread_free(void)
{
	lost_500 = block(500);
	int rc = in_thread(free_all, NULL);
	lost_500 = NULL;
	return rc;
}

static NOINLINE int mmap_buf(void)
{
	shape(200000, 6);
	void **page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return 2;
	page[0] = block(77);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int rc = 0;
	puts(mode);
	if (!strcmp(mode, "reuse") && argc > 2)
		reuse(strtoul(argv[2], NULL, 10));
	else if (!strcmp(mode, "tcache"))
		tcache();
	else if (!strcmp(mode, "top")) {
		shape(24, 6);
		shape(1000, 6);
		shape(4000, 6);
		shape(990, 6);
	} else if (!strcmp(mode, "large"))
		shape(200000, 6);
	else if (!strcmp(mode, "thread"))
		rc = in_thread(run_reuse, NULL);
	else if (!strcmp(mode, "thread-free")) {
		rc = thread_free();
		shape(64, 6);
	} else if (!strcmp(mode, "mmap-buf"))
		rc = mmap_buf();
	else if (!strcmp(mode, "dangling"))
		dangling();
	else
		return 2;
	fflush(stdout);
	scrub();
	return rc;
}
