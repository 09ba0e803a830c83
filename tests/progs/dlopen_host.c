/* SPDX-License-Identifier: MIT */
/* dlopen(argv[1]) (the dlib library), calls ct_test_dlib_leak(4242) and ct_test_dlib_leak(58) (both
 * leaked: 2 allocations, 4300 bytes, frame 0 in the library), dlclose; argv[2] times (default 1), so
 * N cycles leak 2N allocations, 4300N bytes, from the same two call sites. With argv[3] "move", the
 * pages the library was loaded at are taken (an inaccessible mapping) after each dlclose, so the next
 * load goes elsewhere. Then malloc(10) freed. ld.so allocates for dlopen/dlclose itself: compare
 * totals with valgrind. Exit 0, 1 on failure. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef void *(*leak_fn)(size_t);

static int move; /* argv[3] is "move" */

/* Keeps the next load off the library's first page (one page is enough: loads start there). */
static void take_place(void *base)
{
	void *p = mmap(base, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	(void)p; /* taken or not, the cycle goes on */
}

/* One cycle: load, leak twice, unload. 0, or 1 on failure. */
static int cycle(const char *path)
{
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return 1;
	leak_fn leak;
	void *sym = dlsym(lib, "ct_test_dlib_leak");
	memcpy(&leak, &sym, sizeof(leak)); /* ISO C forbids casting an object pointer to a function's */
	if (!sym || !leak(4242) || !leak(58))
		return 1;
	Dl_info where;
	void *base = dladdr(sym, &where) ? where.dli_fbase : NULL;
	if (dlclose(lib))
		return 1;
	if (move && base)
		take_place(base);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 1;
	int cycles = argc > 2 ? atoi(argv[2]) : 1;
	move = argc > 3 && !strcmp(argv[3], "move");
	for (int i = 0; i < cycles; i++)
		if (cycle(argv[1]))
			return 1;
	void *p = malloc(10);
	free(p);
	return p ? 0 : 1;
}
