/* SPDX-License-Identifier: MIT */
/* What glibc's malloc owns in the program's anonymous memory, so that the leak scan reads the rest
 * of it as roots (memcheck reads every valid word outside heap blocks) and never the allocator's.
 *
 * Contract. The allocator's parts of an anonymous mapping are (glibc malloc/arena.c, malloc.c):
 *  - a thread arena's heap: HEAP_MAX_SIZE-aligned (64 MiB on 64-bit), starting with its heap_info
 *    { ar_ptr, prev, size, mprotect_size, ... }, the arena's malloc_state right after it in the
 *    arena's first heap; all of it up to mprotect_size, whether or not it holds a live block (a
 *    thread that freed all it allocated leaves the program's old pointers in its free chunks);
 *  - an mmapped chunk: a block with its header { prev_size, size | IS_MMAPPED } right below it, and
 *    prev_size bytes of alignment below that, its pages all the chunk's.
 * The kernel merges neighbouring anonymous mappings, so a program's own mmap buffer may share a line
 * of /proc/self/maps with these: only they are cut out. A mapping that holds part of a block that
 * is neither (a non-contiguous main arena's memory, another allocator's, a block that a PROT_NONE
 * page splits) is left out whole: whose it is cannot be told. Nothing here allocates or locks; every
 * read is inside the mapping the caller says is readable (as it was when the caller read the maps). */
#ifndef CTRACK_MALLOCMAP_H
#define CTRACK_MALLOCMAP_H

#include <stddef.h>
#include <stdint.h>

#include "reach.h"

/* The readable anonymous mapping [lo, hi) and the live blocks (sorted by start, as ct_reach_sort
 * leaves them): calls piece(plo, phi, arg) for each part of the mapping that is the program's, in
 * address order, and returns 0; or returns -1 without any call when the mapping is to be left out.
 * safe: the program's threads may run meanwhile (struct ct_reach's safe): every read is a copy, and
 * a header gone is no chunk or heap of glibc's. */
int ct_mallocmap_walk(const struct ct_reach_block *blocks, size_t n, uintptr_t lo, uintptr_t hi, int safe,
                      void (*piece)(uintptr_t plo, uintptr_t phi, void *arg), void *arg);

/* glibc's malloc_usable_size of the live block at p, from its chunk's size word, as glibc's musable()
 * takes an in-use chunk's (its size less the size word, less the whole header of an mmapped chunk),
 * read through a copy: 0 when it is gone. For a scan beside threads that may free it meanwhile. */
size_t ct_mallocmap_usable_size(uintptr_t p);

#endif
