/* SPDX-License-Identifier: MIT */
/* The library dlopen_host loads: its one function allocates and the block is never freed, so the
 * leak's frame 0 is ct_test_dlib_leak inside this module. */
#include <stdlib.h>

__attribute__((noinline, visibility("default"))) void *ct_test_dlib_leak(size_t n)
{
	void *p = malloc(n);
	return p;
}
