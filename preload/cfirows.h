/* SPDX-License-Identifier: MIT */
/* The process's FDE row tables (cfirows.c): each FDE's CFI program run once into rows (cfi.h) and
 * kept, so that a rule cache miss in a function met before costs a binary search, not a run of its
 * program from the function's start. Shared by every thread, lock-free, safe in a signal handler. */
#ifndef CT_PRELOAD_CFIROWS_H
#define CT_PRELOAD_CFIROWS_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "cfi.h"

/* Rows an FDE may have and still be kept. cc1's largest function has 6,678 rows, and with a limit of
 * 512 its 191 rule computations were two thirds of the instructions cc1 spent computing rules: the
 * functions a program meets most are its largest. */
#define CT_CFIROWS_MAX 10000
/* Rows of the caller's scratch (3 KiB): an FDE with more is counted, then made in the store itself. */
#define CT_CFIROWS_SCRATCH 256

/* The rule at ip from fde, as ct_cfi_fde_rule gives it (the same returns). The table kept for fde in
 * generation gen (the unwinder's: a dlclose moves it, and tables of other generations are not read)
 * answers when there is one; else, with scratch (room for CT_CFIROWS_SCRATCH rows, the caller's own
 * while it runs), the table is made and kept. Without scratch (a nested walk, which writes no cache)
 * nothing is kept. Tables take at most a few MiB; once they are full, fde's CFI is run as before. */
int ct_cfirows_rule(const uint8_t *fde, uintptr_t ip, unsigned gen, struct ct_cfi_row *scratch,
                    struct ct_cfi_rule *out) CT_HIDDEN;

/* The bytes the store maps now, which ct_cfirows_release gives back. */
size_t ct_cfirows_bytes(void) CT_HIDDEN;
/* Unmaps the store, once no thread reads it, for a program whose allocation failed for want of the
 * shim's memory (tracker.c); never maps one again. Rules are computed from the CFI from then on. */
void ct_cfirows_release(void) CT_HIDDEN;

#endif
