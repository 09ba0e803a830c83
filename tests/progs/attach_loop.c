/* SPDX-License-Identifier: MIT */
/* The program test_attach.py attaches to: it runs phases on command, one line each on stdin, and
 * prints its own count of what each phase did, so the test knows the figures of the window it
 * traced (the test says "phase N" only once ctrack said it is attached: the boundaries are exact).
 *   phase 0     20 blocks of 100 bytes, kept (allocated before any attach)
 *   phase N>0   50 mallocs of 32+N bytes, the first 30 freed, 20 kept (reachable); 5 callocs of 64
 *               bytes lost (no pointer left); realloc of 2 blocks of phase 0 to 200 bytes (each a
 *               free of a block allocated before the attach, and a new allocation, kept); free of 3
 *               more blocks of phase 0; with N = 3, free of 10 blocks phase 1 kept as well
 *   thread N    a thread started before phase 0 (before any attach) allocates N blocks of 48 bytes,
 *               kept (reachable), and prints "thread allocs N bytes 48N"
 *   burst N S   N mallocs of 1 to S bytes, each freed at once (N up to 10^7; the sizes 1 + (x >> 16)
 *               % S for x of the LCG x = x * 1103515245 + 12345 mod 2^32 from 1, so that a full trace
 *               does not compress them away), and prints "burst allocs N bytes B frees N": the
 *               sampled and aggregated attaches' workload
 *   dlopen LIB  dlopens LIB and calls its ct_test_dlib_leak(777) (kept)
 *   execl PATH  execl(PATH, PATH, NULL): the process becomes PATH (nothing printed)
 *   where       prints on stderr the file of the module its pointer to malloc leads into (the GOT
 *               entry ctrack rewrites while attached): "malloc in libctrack.so" while traced
 *   exit        exits 0 (as does the end of stdin)
 * Each phase prints "phase N allocs A bytes B frees F prefrees P live L lost D". Allocates nothing
 * of its own besides (stdio's buffers are made by phase 0's line). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *old[20];
static void *keep[4][20];
static void *volatile lost_slot;
static void *dl_block;
static void *tkeep[64];
static int to_worker[2], from_worker[2];

/* The thread of "thread N": it waits for N on a pipe, allocates, and answers. */
static void *worker(void *arg)
{
	(void)arg;
	int n;
	while (read(to_worker[0], &n, sizeof(n)) == sizeof(n)) {
		for (int i = 0; i < n && i < 64; i++)
			tkeep[i] = malloc(48);
		if (write(from_worker[1], &n, sizeof(n)) != sizeof(n))
			break;
	}
	return NULL;
}

/* Allocates a block and forgets it, in a frame of its own that scrub() overwrites. */
__attribute__((noinline)) static void lose(void)
{
	lost_slot = calloc(1, 64);
	lost_slot = NULL;
}

__attribute__((noinline)) static void scrub(void)
{
	volatile char junk[4096];
	memset((char *)junk, 0, sizeof(junk));
}

static void phase(int n)
{
	unsigned long allocs = 0, bytes = 0, frees = 0, prefrees = 0;
	if (n == 0) {
		for (int i = 0; i < 20; i++)
			old[i] = malloc(100);
		printf("phase 0 allocs 20 bytes 2000 frees 0 prefrees 0 live 20 lost 0\n");
		fflush(stdout);
		return;
	}
	void *p[50];
	for (int i = 0; i < 50; i++, allocs++, bytes += 32 + (unsigned)n)
		p[i] = malloc(32 + (size_t)n);
	for (int i = 0; i < 30; i++, frees++)
		free(p[i]);
	for (int i = 0; i < 20; i++)
		keep[n][i] = p[30 + i];
	for (int i = 0; i < 5; i++, allocs++, bytes += 64)
		lose();
	for (int i = 2 * n - 2; i < 2 * n; i++, allocs++, bytes += 200, prefrees++)
		old[i] = realloc(old[i], 200);
	for (int i = 10 + 3 * (n - 1); i < 13 + 3 * (n - 1); i++, prefrees++)
		free(old[i]);
	if (n == 3)
		for (int i = 0; i < 10; i++, prefrees++)
			free(keep[1][i]);
	scrub();
	printf("phase %d allocs %lu bytes %lu frees %lu prefrees %lu live %d lost %d\n", n, allocs, bytes,
	       frees, prefrees, 22, 5);
	fflush(stdout);
}

static void burst(const char *args)
{
	unsigned long n = 0, sizes = 0, bytes = 0;
	uint32_t x = 1;
	if (sscanf(args, "%lu %lu", &n, &sizes) != 2 || n > 10000000 || sizes == 0)
		n = 0;
	for (unsigned long i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		size_t size = 1 + (x >> 16) % sizes;
		void *volatile p = malloc(size);
		free(p);
		bytes += size;
	}
	printf("burst allocs %lu bytes %lu frees %lu\n", n, bytes, n);
	fflush(stdout);
}

int main(void)
{
	char line[512];
	pthread_t t;
	if (pipe(to_worker) < 0 || pipe(from_worker) < 0 || pthread_create(&t, NULL, worker, NULL) != 0)
		return 1;
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "phase ", 6) == 0) {
			phase(atoi(line + 6));
		} else if (strncmp(line, "thread ", 7) == 0) {
			int n = atoi(line + 7);
			if (write(to_worker[1], &n, sizeof(n)) != sizeof(n) ||
			    read(from_worker[0], &n, sizeof(n)) != sizeof(n))
				return 1;
			printf("thread allocs %d bytes %d\n", n, 48 * n);
			fflush(stdout);
		} else if (strncmp(line, "burst ", 6) == 0) {
			burst(line + 6);
		} else if (strncmp(line, "dlopen ", 7) == 0) {
			void *h = dlopen(line + 7, RTLD_NOW);
			void *sym = h ? dlsym(h, "ct_test_dlib_leak") : NULL;
			void *(*fn)(size_t) = NULL;
			memcpy(&fn, &sym, sizeof(sym)); /* ISO C has no cast from void * to a function */
			dl_block = fn ? fn(777) : NULL;
			printf("dlopen %s\n", dl_block ? "ok" : "failed");
			fflush(stdout);
		} else if (strncmp(line, "execl ", 6) == 0) {
			execl(line + 6, line + 6, (char *)NULL);
			return 127;
		} else if (strcmp(line, "where") == 0) {
			void *(*volatile fn)(size_t) = malloc;
			void *at;
			memcpy(&at, (void *const *)&fn, sizeof(at));
			Dl_info info;
			const char *file = dladdr(at, &info) && info.dli_fname ? info.dli_fname : "?";
			fprintf(stderr, "malloc in %s\n", strrchr(file, '/') ? strrchr(file, '/') + 1 : file);
		} else if (strcmp(line, "exit") == 0) {
			break;
		}
	}
	return 0;
}
