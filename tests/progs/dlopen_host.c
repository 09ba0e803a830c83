/* SPDX-License-Identifier: MIT */
/* dlopen(argv[1]) (the dlib library), calls ct_test_dlib_leak(4242) and ct_test_dlib_leak(58) (both
 * leaked: 2 allocations, 4300 bytes, frame 0 in the library), dlclose, then malloc(10) freed.
 * ld.so allocates for dlopen/dlclose itself: compare totals with valgrind. Exit 0, 1 on failure. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef void *(*leak_fn)(size_t);

int main(int argc, char **argv)
{
	if (argc < 2)
		return 1;
	void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return 1;
	leak_fn leak;
	void *sym = dlsym(lib, "ct_test_dlib_leak");
	memcpy(&leak, &sym, sizeof(leak)); /* ISO C forbids casting an object pointer to a function's */
	if (!sym || !leak(4242) || !leak(58))
		return 1;
	if (dlclose(lib))
		return 1;
	void *p = malloc(10);
	free(p);
	return p ? 0 : 1;
}
