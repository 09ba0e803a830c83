/* SPDX-License-Identifier: MIT */
/* The process's FDE row tables (cfirows.c): each FDE's CFI program run once into rows (cfi.h) and
 * kept, so that a rule cache miss in a function met before costs a binary search, not a run of its
 * program from the function's start. Shared by every thread, lock-free, safe in a signal handler. */
#ifndef CT_PRELOAD_CFIROWS_H
#define CT_PRELOAD_CFIROWS_H

#include <stdint.h>

#include "arena.h"
#include "cfi.h"

/* Rows an FDE may have and still be kept: scratch's size (96 KiB, touched as far as an FDE's rows
 * go). cc1's three largest functions have some 2,600 rows each, and were a third of the time it
 * spent computing rules with a limit of 512: the functions a program meets most are its largest. */
#define CT_CFIROWS_MAX 8192

/* The rule at ip from fde, as ct_cfi_fde_rule gives it (the same returns). The table kept for fde in
 * generation gen (the unwinder's: a dlclose moves it, and tables of other generations are not read)
 * answers when there is one; else, with scratch (room for CT_CFIROWS_MAX rows, the caller's own
 * while it runs), the table is made there and kept. Without scratch (a nested walk, which writes no
 * cache) nothing is kept. Tables take at most a few MiB; once they are full, fde's CFI is run as
 * before. */
int ct_cfirows_rule(const uint8_t *fde, uintptr_t ip, unsigned gen, struct ct_cfi_row *scratch,
                    struct ct_cfi_rule *out) CT_HIDDEN;

#endif
