/* SPDX-License-Identifier: MIT */
/* The fold list: patterns naming allocator plumbing (operator new, std::allocator, RawVec, ...)
 * whose frames are hidden so a leak's first frame is the user's code. Frames in libc never fold. */
#ifndef CTRACK_FOLD_H
#define CTRACK_FOLD_H

#include <stddef.h>

#include "symbolize.h"

struct ct_fold;

/* A fold list holding the built-in patterns (docs/fold.md), or NULL when out of memory. */
struct ct_fold *ct_fold_new(void);
void ct_fold_free(struct ct_fold *f);

/* Adds the patterns of the file at path: one per line, surrounding blanks ignored, empty lines and
 * lines starting with '#' skipped. Returns 0 or a negative errno (err says which line or why). */
int ct_fold_load(struct ct_fold *f, const char *path, char *err, size_t errlen);

/* 1 when the frame's function matches a pattern (and the frame is not in libc), else 0. A pattern
 * matches a prefix of the function's name without its return type and parameter list; '*' stands
 * for any run of characters. Frames from the built-in allocator source files (Rust's alloc.rs, ...)
 * match too. */
int ct_fold_match(const struct ct_fold *f, const struct ct_frame *frame);

#endif
