/* SPDX-License-Identifier: MIT */
/* LeakSanitizer's use_tls_dynamic shape: a library loaded with dlopen (argv[1], scan_tlslib.c)
 * keeps the only pointer to a malloc(1337) in its __thread variable, which lives in a block of
 * dynamic TLS that the loader allocates and the thread's DTV points to: still reachable (memcheck
 * agrees; LeakSanitizer reports no leak). */
#include <dlfcn.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	void *lib = argc > 1 ? dlopen(argv[1], RTLD_NOW) : NULL;
	void (*set)(void *) = NULL;
	if (!lib)
		return 2;
	*(void **)&set = dlsym(lib, "set_slot");
	if (!set)
		return 3;
	set(malloc(1337));
	return 0;
}
