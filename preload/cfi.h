/* SPDX-License-Identifier: MIT */
/* The x86_64 .eh_frame decoder behind the fast unwinder: from the CFI of an ip to a simple rule.
 * Pure functions of the bytes given: no allocation, no lock, no stdio, errno untouched (runs inside malloc).
 *
 * Input: a loaded .eh_frame_hdr (version 1, table encoded DW_EH_PE_datarel|sdata4, as every linker
 * writes it) and the .eh_frame records it points to, as mapped in memory: pc-relative and datarel
 * values are taken relative to where the bytes sit. The table, each record's length and an FDE's
 * CIE pointer are trusted to describe mapped memory; inside a record, any content gives a result
 * or an error, never a read past the record's end. Errors are negative errnos:
 *   -ENOENT   no FDE covers ip (the caller may guess a frame-pointer frame);
 *   -ENOTSUP  well-formed CFI this decoder does not handle (another .eh_frame_hdr layout, a CIE
 *             version other than 1 or 3, an unknown augmentation, a return address
 *             column other than 16, DW_EH_PE_indirect/datarel/textrel/funcrel/aligned addresses);
 *   -EINVAL   corrupt or truncated records, an unknown DW_CFA opcode, an unbalanced restore_state;
 *   -E2BIG    DW_CFA_remember_state nested deeper than 8. */
#ifndef CT_PRELOAD_CFI_H
#define CT_PRELOAD_CFI_H

#include <stdint.h>

/* DWARF register numbers on x86_64, as they appear in struct ct_cfi_rule's cfa_reg. */
enum { CT_CFI_RBP = 6, CT_CFI_RSP = 7 };

/* The rule that recovers the caller's frame at one ip. */
enum ct_cfi_kind {
	CT_CFI_NONE,   /* the CFI needs more than a simple rule (an expression, a register copy, RA not at
	                * CFA-8, RSP or RBP restored otherwise): a full unwinder must take this frame */
	CT_CFI_OK,     /* CFA = cfa_reg + cfa_off; RA at CFA-8; RBP unchanged (rbp_off 0) or at CFA+rbp_off */
	CT_CFI_END,    /* the return address (or RBP) is undefined: the outermost frame */
	CT_CFI_SIGNAL, /* a signal trampoline (augmentation 'S', __restore_rt): the caller's registers
	                * are in the signal frame the kernel pushed, whose layout the caller knows */
	CT_CFI_KINDS,  /* callers number kinds of their own from here */
};
struct ct_cfi_rule {
	int32_t cfa_off;
	int16_t rbp_off;
	uint8_t cfa_reg; /* CT_CFI_RSP or CT_CFI_RBP */
	uint8_t kind;    /* enum ct_cfi_kind, or a caller's own kind */
};

/* The rule at ip: finds the FDE in eh_frame_hdr's table, then as ct_cfi_fde_rule. Returns 0 and
 * fills *out (CT_CFI_OK, CT_CFI_END, CT_CFI_SIGNAL or CT_CFI_NONE), or a negative errno above (*out
 * untouched). */
int ct_cfi_lookup(const uint8_t *eh_frame_hdr, uintptr_t ip, struct ct_cfi_rule *out);
/* The FDE whose initial location is the last one <= ip, by binary search of the table. Returns 0
 * and sets *fde (which may still not cover ip), -ENOENT when ip precedes every entry, -ENOTSUP for
 * a header layout other than the one above. */
int ct_cfi_find_fde(const uint8_t *eh_frame_hdr, uintptr_t ip, const uint8_t **fde);
/* The rule at ip from one FDE record (its length field first) and the CIE it points to: the CIE's
 * initial instructions, then the FDE's up to the row that holds ip. Same returns as ct_cfi_lookup. */
int ct_cfi_fde_rule(const uint8_t *fde, uintptr_t ip, struct ct_cfi_rule *out);

/* One row of an FDE's table: the rule from start (bytes past the FDE's first address) up to the next
 * row's start, or to the FDE's end. */
struct ct_cfi_row {
	uint32_t start;
	struct ct_cfi_rule rule;
};
/* The FDE's whole table at once, for callers that keep it: rows[] (at most max) give at every ip of
 * [*begin, *begin + *range) the rule ct_cfi_fde_rule gives there; the first starts at 0, and no two
 * neighbours have the same rule. With rows NULL, they are only counted (a caller that makes room for
 * them then). Returns the row count (0 for an empty range), or a negative errno:
 * ct_cfi_fde_rule's (its CFI's errors anywhere, not only up to one ip), -ENOSPC for more rows than
 * max, -ENOTSUP also for CFI whose rule changes within a row (a .plt's CFA expression), that goes
 * back (DW_CFA_set_loc) or covers 4 GiB or more. */
int ct_cfi_fde_rows(const uint8_t *fde, struct ct_cfi_row *rows, int max, uintptr_t *begin, uintptr_t *range);
/* The rule at off (bytes past the FDE's first address, below its range) in a table of n >= 1 rows. */
struct ct_cfi_rule ct_cfi_row_rule(const struct ct_cfi_row *rows, int n, uintptr_t off);

#endif
