/* SPDX-License-Identifier: MIT */
/* dlreuse LIB_A LIB_B N: N cycles of dlopen, one leak through the library's dlreuse_entry, dlclose;
 * even cycles load LIB_A and leak 1000 bytes, odd ones LIB_B and 2000 bytes, each dlopen right after
 * the dlclose before it, so the kernel maps each library where the other was. Prints
 * "load I PATH BASE" per cycle (BASE: the load bias, from dlinfo). With tests/progs/dlreuse_lib.c's
 * libalpha.so and libbeta.so and N = 20: 10 leaks of 1000 bytes in alpha_leak, 10 of 2000 bytes in
 * beta_leak, each from cycle. Exit 0, 2 on failure. */
#define _GNU_SOURCE /* dlinfo */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CYCLES 1000

static void *volatile kept[MAX_CYCLES];

__attribute__((noinline)) static int cycle(const char *lib, size_t size, int i)
{
	struct link_map *map;
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h || dlinfo(h, RTLD_DI_LINKMAP, &map) != 0)
		return -1;
	void *(*entry)(size_t), *sym = dlsym(h, "dlreuse_entry");
	if (!sym)
		return -1;
	memcpy(&entry, &sym, sizeof(entry)); /* ISO C forbids casting an object pointer to a function's */
	kept[i] = entry(size);               /* LINE cycle */
	printf("load %d %s %#lx\n", i, lib, (unsigned long)map->l_addr);
	return dlclose(h);
}

int main(int argc, char **argv)
{
	int n = argc > 3 ? atoi(argv[3]) : 2;
	if (argc < 3 || n < 0 || n > MAX_CYCLES)
		return 2;
	for (int i = 0; i < n; i++)
		if (cycle(argv[1 + i % 2], i % 2 ? 2000 : 1000, i) != 0)
			return 2;
	return 0;
}
