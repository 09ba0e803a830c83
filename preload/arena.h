/* SPDX-License-Identifier: MIT */
/* The shim's own memory (arena.c), straight from mmap, and the compiler helpers every part of the
 * shim uses. Safe anywhere: inside the program's malloc, on the writer, in a signal handler. */
#ifndef CTRACK_ARENA_H
#define CTRACK_ARENA_H

#include <stddef.h>
#include <stdint.h>

#define CT_HIDDEN __attribute__((visibility("hidden")))
#define CT_LIKELY(x) __builtin_expect(!!(x), 1)
#define CT_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Zeroed memory straight from mmap, NULL on failure. */
void *ct_arena_map(size_t size) CT_HIDDEN;
/* The same with every page in place: for memory about to be written all over. */
void *ct_arena_map_populated(size_t size) CT_HIDDEN;
void ct_arena_unmap(void *p, size_t size) CT_HIDDEN;
/* Calls fn for every mapping the arena holds now [lo, hi); returns how many. */
size_t ct_arena_mappings(void (*fn)(uintptr_t lo, uintptr_t hi, void *arg), void *arg) CT_HIDDEN;
/* Whether a mapping the arena holds now overlaps [lo, hi). */
int ct_arena_holds(uintptr_t lo, uintptr_t hi) CT_HIDDEN;
/* Grows *p, mapped with old_size bytes (or NULL: 0), to new_size, its contents kept (it may move).
 * 0, or -1 with *p untouched. */
int ct_arena_grow(void **p, size_t old_size, size_t new_size) CT_HIDDEN;

#endif
