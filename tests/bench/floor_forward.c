/* SPDX-License-Identifier: MIT */
/* scripts/sample-floor's first floor: the least an LD_PRELOAD interposer of malloc and free can do,
 * forward each call to libc's own. What it costs is the price of interposing at all. */
#include <stddef.h>

extern void *__libc_malloc(size_t size);
extern void __libc_free(void *p);

__attribute__((visibility("default"))) void *malloc(size_t size)
{
	return __libc_malloc(size);
}

__attribute__((visibility("default"))) void free(void *p)
{
	__libc_free(p);
}
