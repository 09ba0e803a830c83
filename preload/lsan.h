/* SPDX-License-Identifier: MIT */
/* LeakSanitizer's interface in the shim (lsan.c): the blocks a program says are no leaks, and the
 * regions it says hold pointers, for the leak scan; the hooks tell it of allocations and frees. */
#ifndef CTRACK_LSAN_H
#define CTRACK_LSAN_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "reach.h"

/* Non-zero while any block is ignored: a free looks its block up only then. */
extern _Atomic size_t ct_lsan_ignoring __attribute__((visibility("hidden")));

/* A block the program allocated while its thread had the check disabled (__lsan_disable): ignored. */
void ct_lsan_ignore(const void *p) __attribute__((visibility("hidden")));
/* A block that is about to be freed (or moved by realloc): ignored no more. */
void ct_lsan_forget(const void *p) __attribute__((visibility("hidden")));

/* The scan's roots from the program's word, with the other threads stopped: each live block that is
 * ignored (as a start pointer: it and what it reaches are still reachable; the count and bytes of
 * those blocks in *blocks and *bytes) and each registered root region, read through root_range
 * (which clamps to readable memory). */
void ct_lsan_roots(struct ct_reach *r,
                   void (*root_range)(struct ct_reach *r, uintptr_t lo, uintptr_t hi, void *arg), void *arg,
                   uint64_t *blocks, uint64_t *bytes) __attribute__((visibility("hidden")));

#endif
