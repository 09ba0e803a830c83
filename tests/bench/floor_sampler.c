/* SPDX-License-Identifier: MIT */
/* scripts/sample-floor's second floor: the least a sampling interposer can do for the allocations it
 * leaves out. malloc counts the thread's bytes down (initial-exec TLS) and calls libc's; free looks
 * its block up in a bitmap of recorded blocks, as preload/sample.h's filter (one bit per 16 bytes,
 * 2^20 bits), and calls libc's. Nothing is recorded, walked nor guarded: no recursion guard, no
 * bootstrap pool, no retry after an out-of-memory failure, no errno kept, and a TLS segment (which
 * ctrack's shim has none of: it would make glibc allocate the program's TLS vectors one module larger). */
#include <stddef.h>
#include <stdint.h>

#define RATE 524288

extern void *__libc_malloc(size_t size);
extern void __libc_free(void *p);

static __thread int64_t left __attribute__((tls_model("initial-exec"))) = RATE;
static uint64_t filter[(1u << 20) / 64];
static void *volatile recorded; /* where a walk and an event would go */

__attribute__((visibility("default"))) void *malloc(size_t size)
{
	void *p = __libc_malloc(size);
	if (__builtin_expect((left -= (int64_t)size) <= 0, 0)) {
		left = RATE;
		recorded = p;
	}
	return p;
}

__attribute__((visibility("default"))) void free(void *p)
{
	uintptr_t a = (uintptr_t)p;
	uint32_t bit = (uint32_t)((a >> 4) + (((a >> 26) * 0x9E3779B97F4A7C15ull) >> 44)) & ((1u << 20) - 1);
	if (__builtin_expect(filter[bit >> 6] >> (bit & 63) & 1, 0))
		recorded = p;
	__libc_free(p);
}
