/* SPDX-License-Identifier: MIT */
/* Preloaded after the shim (the user's own LD_PRELOAD), so its constructor runs before the
 * shim's and its destructor after the shim's teardown. Constructor: 111 and 222 bytes; destructor:
 * frees the 111 (a late free, which must still be counted). Leaves 222 bytes in 1 block. */
#include <stdlib.h>

static void *volatile early, *volatile kept;

__attribute__((constructor)) static void lifecycle_ctor(void)
{
	early = malloc(111);
	kept = malloc(222);
}

__attribute__((destructor)) static void lifecycle_dtor(void)
{
	free(early);
}
