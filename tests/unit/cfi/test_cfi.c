/* SPDX-License-Identifier: MIT */
/* Table-driven test of the CFI decoder (preload/cfi.c): one row per case, a hand-written CIE and FDE
 * and the rule expected at one ip. Each row is laid out at run time, because pc-relative and datarel
 * values depend on where the bytes sit: an .eh_frame_hdr page, then the CIE and the FDE, each ending
 * right before a PROT_NONE page, so a read past a record's declared end crashes the test. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cfi.h"

/* Where the described functions "are": never mapped nor read, only compared with ips. Low, so that
 * 4-byte absolute encodings hold it and the region (MAP_32BIT) is within 2 GiB of it. */
#define TEXT ((uintptr_t)0x10000000)
#define PAGE 4096
enum { HDR_PAGE, CIE_PAGE, CIE_GUARD, FDE_PAGE, FDE_GUARD, PAGES };

/* Byte strings in a row: BYTES(insns, 0x41, ...) sets .insns and .insns_n. */
#define BYTES(field, ...) \
	.field = (const uint8_t[]){__VA_ARGS__}, .field##_n = sizeof((const uint8_t[]){__VA_ARGS__})
#define CIE(...) BYTES(cie, __VA_ARGS__)
#define FDE_AUG(...) BYTES(fde_aug, __VA_ARGS__)
#define INSNS(...) BYTES(insns, __VA_ARGS__)
#define RAW(...) BYTES(raw, __VA_ARGS__)

struct row {
	const char *name;
	/* The CIE after its id: version, augmentation, alignments, RA column, augmentation data,
	 * initial instructions. */
	const uint8_t *cie;
	/* The FDE after pc_begin and range: augmentation length and data ('z' CIEs), instructions. */
	const uint8_t *fde_aug, *insns;
	/* Or whole records written out by hand, the FDE at raw + fde_off (for ct_cfi_fde_rule). */
	const uint8_t *raw;
	size_t cie_n, fde_aug_n, insns_n, raw_n, fde_off;
	/* The DW_EH_PE encoding of the FDE's pc_begin (its range: the low nibble), as the CIE's 'R'
	 * says (absptr without 'R'); pc_begin is TEXT. */
	uint8_t enc;
	uint32_t range;
	int cie_cut, fde_cut; /* the record ends this many bytes early (truncated) */
	int self_cie;         /* the FDE's CIE pointer points at the FDE itself */
	int64_t at;           /* the ip looked up, from TEXT */
	/* Expected: an error, or a rule (kind, and for CT_CFI_OK: CFA = reg + off, RBP at CFA+rbp). */
	int rc;
	uint8_t kind, reg;
	int32_t off;
	int16_t rbp;
};

#define OK(r, o, b) .kind = CT_CFI_OK, .reg = CT_CFI_##r, .off = (o), .rbp = (b)
#define END .kind = CT_CFI_END
#define NONE .kind = CT_CFI_NONE

/* CIEs. gcc's: version 1, "zR", code alignment 1, data alignment -8, RA column 16, augmentation
 * data 1 byte: FDE pointers pcrel|sdata4; CFA = RSP+8, RA at CFA-8. */
#define CIE_INSNS 0x0c, 0x07, 0x08, 0x90, 0x01
#define CIE_ZR(enc) 0x01, 'z', 'R', 0, 0x01, 0x78, 0x10, 0x01, (enc), CIE_INSNS
#define GCC CIE(CIE_ZR(0x1b)), .enc = 0x1b, FDE_AUG(0)
#define ENC(e) CIE(CIE_ZR(e)), .enc = (e), FDE_AUG(0)

/* FDE programs. gcc -O0 (0x20 bytes): push rbp at 0, mov rbp,rsp at 1, body from 4, ret at 0x1f
 * after leave (.cfi_def_cfa 7, 8; RBP's rule stays). */
#define PROLOGUE 0x41, 0x0e, 0x10, 0x86, 0x02, 0x43, 0x0d, 0x06
#define FRAMED PROLOGUE, 0x5b, 0x0c, 0x07, 0x08
/* Frameless: sub rsp,0x28 at 0 (4 bytes), add rsp,0x28 at 0x2c, ret at 0x30. */
#define FRAMELESS 0x44, 0x0e, 0x30, 0x6c, 0x0e, 0x08
/* An early return at 0x10: remember_state, CFA back to RSP+8, the rest of the body from 0x11. */
#define EARLY_RET PROLOGUE, 0x4c, 0x0a, 0x0c, 0x07, 0x08, 0x41, 0x0b

/* DW_CFA_def_cfa_expression: DW_OP_breg7 8; DW_OP_breg16 0; DW_OP_lit15; DW_OP_and; DW_OP_lit11;
 * DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus (binutils' .plt). */
#define PLT_CFA 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22

static const struct row rows[] = {
    /* The typical prologue and epilogue, at each row boundary and one before. */
    {"push rbp: entry", GCC, INSNS(FRAMED), .range = 0x20, .at = 0, OK(RSP, 8, 0)},
    {"push rbp: after push", GCC, INSNS(FRAMED), .range = 0x20, .at = 1, OK(RSP, 16, -16)},
    {"push rbp: before mov ends", GCC, INSNS(FRAMED), .range = 0x20, .at = 3, OK(RSP, 16, -16)},
    {"push rbp: body", GCC, INSNS(FRAMED), .range = 0x20, .at = 4, OK(RBP, 16, -16)},
    {"push rbp: before ret", GCC, INSNS(FRAMED), .range = 0x20, .at = 0x1e, OK(RBP, 16, -16)},
    {"push rbp: ret", GCC, INSNS(FRAMED), .range = 0x20, .at = 0x1f, OK(RSP, 8, -16)},
    {"push rbp: past the FDE", GCC, INSNS(FRAMED), .range = 0x20, .at = 0x20, .rc = -ENOENT},
    {"push rbp: before the FDE", GCC, INSNS(FRAMED), .range = 0x20, .at = -1, .rc = -ENOENT},
    /* Frameless code: DW_CFA_def_cfa_offset only. */
    {"sub rsp: before", GCC, INSNS(FRAMELESS), .range = 0x31, .at = 3, OK(RSP, 8, 0)},
    {"sub rsp: after", GCC, INSNS(FRAMELESS), .range = 0x31, .at = 4, OK(RSP, 48, 0)},
    {"sub rsp: before add", GCC, INSNS(FRAMELESS), .range = 0x31, .at = 0x2f, OK(RSP, 48, 0)},
    {"sub rsp: ret", GCC, INSNS(FRAMELESS), .range = 0x31, .at = 0x30, OK(RSP, 8, 0)},
    /* remember/restore_state around an early return; the CFA rule is part of the state. */
    {"early ret: before", GCC, INSNS(EARLY_RET), .range = 0x40, .at = 0x0f, OK(RBP, 16, -16)},
    {"early ret: ret", GCC, INSNS(EARLY_RET), .range = 0x40, .at = 0x10, OK(RSP, 8, -16)},
    {"early ret: restored", GCC, INSNS(EARLY_RET), .range = 0x40, .at = 0x11, OK(RBP, 16, -16)},
    {"restore_state brings back RBP's rule", GCC,
     INSNS(0x41, 0x0e, 0x10, 0x86, 0x02, 0x0a, 0x41, 0xc6, 0x0e, 0x08, 0x41, 0x0b), .range = 0x10, .at = 2,
     OK(RSP, 8, 0)},
    {"restore_state brings back RBP's rule (after)", GCC,
     INSNS(0x41, 0x0e, 0x10, 0x86, 0x02, 0x0a, 0x41, 0xc6, 0x0e, 0x08, 0x41, 0x0b), .range = 0x10, .at = 3,
     OK(RSP, 16, -16)},
    {"restore_state without remember_state", GCC, INSNS(0x0b), .range = 0x10, .at = 0, .rc = -EINVAL},
    {"remember_state 9 deep", GCC, INSNS(0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a), .range = 0x10,
     .at = 0, .rc = -E2BIG},
    /* advance_loc1/2/4 and set_loc: the new row starts exactly at the boundary. */
    {"advance_loc1: before", GCC, INSNS(0x02, 0x10, 0x0e, 0x10), .range = 0x20, .at = 0x0f, OK(RSP, 8, 0)},
    {"advance_loc1: at", GCC, INSNS(0x02, 0x10, 0x0e, 0x10), .range = 0x20, .at = 0x10, OK(RSP, 16, 0)},
    {"advance_loc2: before", GCC, INSNS(0x03, 0x00, 0x01, 0x0e, 0x18), .range = 0x200, .at = 0xff,
     OK(RSP, 8, 0)},
    {"advance_loc2: at", GCC, INSNS(0x03, 0x00, 0x01, 0x0e, 0x18), .range = 0x200, .at = 0x100,
     OK(RSP, 24, 0)},
    {"advance_loc4: before", GCC, INSNS(0x04, 0x00, 0x00, 0x01, 0x00, 0x0e, 0x20), .range = 0x20000,
     .at = 0xffff, OK(RSP, 8, 0)},
    {"advance_loc4: at", GCC, INSNS(0x04, 0x00, 0x00, 0x01, 0x00, 0x0e, 0x20), .range = 0x20000,
     .at = 0x10000, OK(RSP, 32, 0)},
    {"advance_loc, code alignment 4: before", CIE(0x01, 'z', 'R', 0, 0x04, 0x78, 0x10, 0x01, 0x1b, CIE_INSNS),
     .enc = 0x1b, FDE_AUG(0), INSNS(0x44, 0x0e, 0x10), .range = 0x20, .at = 15, OK(RSP, 8, 0)},
    {"advance_loc, code alignment 4: at", CIE(0x01, 'z', 'R', 0, 0x04, 0x78, 0x10, 0x01, 0x1b, CIE_INSNS),
     .enc = 0x1b, FDE_AUG(0), INSNS(0x44, 0x0e, 0x10), .range = 0x20, .at = 16, OK(RSP, 16, 0)},
    {"set_loc udata4: before", ENC(0x03), INSNS(0x01, 0x20, 0x00, 0x00, 0x10, 0x0e, 0x10), .range = 0x40,
     .at = 0x1f, OK(RSP, 8, 0)},
    {"set_loc udata4: at", ENC(0x03), INSNS(0x01, 0x20, 0x00, 0x00, 0x10, 0x0e, 0x10), .range = 0x40,
     .at = 0x20, OK(RSP, 16, 0)},
    /* Rules a simple rule cannot express, and the outermost frame. */
    {"RA undefined (_start)", GCC, INSNS(0x07, 0x10), .range = 0x10, .at = 0, END},
    {"RBP undefined", GCC, INSNS(0x07, 0x06), .range = 0x10, .at = 0, END},
    {"RA undefined from the second row", GCC, INSNS(0x41, 0x07, 0x10), .range = 0x10, .at = 0, OK(RSP, 8, 0)},
    {"CFA expression", GCC, INSNS(0x0f, 0x02, 0x77, 0x08), .range = 0x10, .at = 0, NONE},
    /* A .plt's expression: RSP+8, RSP+16 from byte 11 of each 16-byte entry. */
    {"PLT entry, before its push", GCC, INSNS(PLT_CFA), .range = 0x20, .at = 0x1a, OK(RSP, 8, 0)},
    {"PLT entry, after its push", GCC, INSNS(PLT_CFA), .range = 0x20, .at = 0x1b, OK(RSP, 16, 0)},
    {"PLT-like expression, other operator", GCC,
     INSNS(0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x1c), .range = 0x20,
     .at = 0x1b, NONE},
    {"RBP in a register", GCC, INSNS(0x09, 0x06, 0x03), .range = 0x10, .at = 0, NONE},
    {"RBP expression", GCC, INSNS(0x10, 0x06, 0x02, 0x77, 0x00), .range = 0x10, .at = 0, NONE},
    {"RA val_offset", GCC, INSNS(0x14, 0x10, 0x01), .range = 0x10, .at = 0, NONE},
    {"RA at CFA-16", GCC, INSNS(0x90, 0x02), .range = 0x10, .at = 0, NONE},
    {"RSP saved", GCC, INSNS(0x87, 0x02), .range = 0x10, .at = 0, NONE},
    {"CFA = RBX+8", GCC, INSNS(0x0d, 0x03), .range = 0x10, .at = 0, NONE},
    {"CFA offset beyond int32", GCC, INSNS(0x0e, 0x80, 0x80, 0x80, 0x80, 0x10), .range = 0x10, .at = 0, NONE},
    {"RBP offset beyond int16", GCC, INSNS(0x05, 0x06, 0x80, 0x80, 0x04), .range = 0x10, .at = 0, NONE},
    {"RBP restored to same_value", GCC, INSNS(0x86, 0x02, 0x08, 0x06), .range = 0x10, .at = 0, OK(RSP, 8, 0)},
    /* The other ways of saying the same: sf and extended forms, GNU_args_size, nops. */
    {"def_cfa_sf", GCC, INSNS(0x12, 0x07, 0x7e), .range = 0x10, .at = 0, OK(RSP, 16, 0)},
    {"def_cfa_offset_sf", GCC, INSNS(0x13, 0x7c), .range = 0x10, .at = 0, OK(RSP, 32, 0)},
    {"offset_extended_sf RBP", GCC, INSNS(0x11, 0x06, 0x02), .range = 0x10, .at = 0, OK(RSP, 8, -16)},
    {"GNU_args_size, nop", GCC, INSNS(0x2e, 0x10, 0x00, 0x0e, 0x10), .range = 0x10, .at = 0, OK(RSP, 16, 0)},
    /* Augmentations. */
    {"'zPLR' (C++: personality, LSDA)",
     CIE(0x01, 'z', 'P', 'L', 'R', 0, 0x01, 0x78, 0x10, 0x07, 0x9b, 0x00, 0x00, 0x00, 0x00, 0x1b, 0x1b,
         CIE_INSNS),
     .enc = 0x1b, FDE_AUG(0x04, 0x00, 0x00, 0x00, 0x00), INSNS(FRAMED), .range = 0x20, .at = 4,
     OK(RBP, 16, -16)},
    {"no augmentation (absptr)", CIE(0x01, 0, 0x01, 0x78, 0x10, CIE_INSNS), .enc = 0x00, INSNS(FRAMED),
     .range = 0x20, .at = 1, OK(RSP, 16, -16)},
    {"CIE version 3", CIE(0x03, 'z', 'R', 0, 0x01, 0x78, 0x10, 0x01, 0x1b, CIE_INSNS), .enc = 0x1b,
     FDE_AUG(0), INSNS(FRAMED), .range = 0x20, .at = 4, OK(RBP, 16, -16)},
    {"'zRS' (signal frame)", CIE(0x01, 'z', 'R', 'S', 0, 0x01, 0x78, 0x10, 0x01, 0x1b, CIE_INSNS),
     .enc = 0x1b, FDE_AUG(0), INSNS(FRAMED), .range = 0x20, .at = 4, .kind = CT_CFI_SIGNAL},
    {"'zRX' (unknown letter)", CIE(0x01, 'z', 'R', 'X', 0, 0x01, 0x78, 0x10, 0x01, 0x1b, CIE_INSNS),
     .enc = 0x1b, FDE_AUG(0), INSNS(FRAMED), .range = 0x20, .at = 4, .rc = -ENOTSUP},
    {"'eh' (old gcc)", CIE(0x01, 'e', 'h', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x78, 0x10, CIE_INSNS),
     .enc = 0x00, INSNS(FRAMED), .range = 0x20, .at = 4, .rc = -ENOTSUP},
    {"CIE version 2", CIE(0x02, 'z', 'R', 0, 0x01, 0x78, 0x10, 0x01, 0x1b, CIE_INSNS), .enc = 0x1b,
     FDE_AUG(0), INSNS(FRAMED), .range = 0x20, .at = 4, .rc = -ENOTSUP},
    {"RA column 15", CIE(0x01, 'z', 'R', 0, 0x01, 0x78, 0x0f, 0x01, 0x1b, CIE_INSNS), .enc = 0x1b, FDE_AUG(0),
     INSNS(FRAMED), .range = 0x20, .at = 4, .rc = -ENOTSUP},
    /* FDE pointer encodings. */
    {"pcrel|sdata4", ENC(0x1b), INSNS(FRAMED), .range = 0x20, .at = 4, OK(RBP, 16, -16)},
    {"udata4", ENC(0x03), INSNS(FRAMED), .range = 0x20, .at = 4, OK(RBP, 16, -16)},
    {"sdata4", ENC(0x0b), INSNS(FRAMED), .range = 0x20, .at = 4, OK(RBP, 16, -16)},
    {"uleb128", ENC(0x01), INSNS(FRAMED), .range = 0x20, .at = 4, OK(RBP, 16, -16)},
    {"udata8", ENC(0x04), INSNS(FRAMED), .range = 0x20, .at = 4, OK(RBP, 16, -16)},
    {"pcrel|sdata8", ENC(0x1c), INSNS(FRAMED), .range = 0x20, .at = 4, OK(RBP, 16, -16)},
    {"uleb128: past the FDE", ENC(0x01), INSNS(FRAMED), .range = 0x20, .at = 0x20, .rc = -ENOENT},
    {"datarel|sdata4 (no data base)", ENC(0x3b), INSNS(FRAMED), .range = 0x20, .at = 4, .rc = -ENOTSUP},
    {"funcrel|sdata4", ENC(0x4b), INSNS(FRAMED), .range = 0x20, .at = 4, .rc = -ENOTSUP},
    {"indirect|pcrel|sdata4", ENC(0x9b), INSNS(FRAMED), .range = 0x20, .at = 4, .rc = -ENOTSUP},
    {"format 0x05 (none such)", ENC(0x05), INSNS(FRAMED), .range = 0x20, .at = 4, .rc = -EINVAL},
    /* Truncated and corrupt records: an error, never a read past the record. A cut counts the bytes
     * left out from the end: the FDE's 12 bytes of FRAMED, 1 of augmentation, 4 of range, 4 of
     * pc_begin, then its CIE pointer; the CIE's 14 bytes after its id, then the id. */
    {"FDE ends in an operand", GCC, INSNS(0x41, 0x0e), .range = 0x10, .at = 1, .rc = -EINVAL},
    {"FDE ends in an operand past ip's row", GCC, INSNS(0x41, 0x0e), .range = 0x10, .at = 0, OK(RSP, 8, 0)},
    {"FDE ends in advance_loc2", GCC, INSNS(0x03, 0x01), .range = 0x200, .at = 0x100, .rc = -EINVAL},
    {"FDE ends in an expression", GCC, INSNS(0x0f, 0x20, 0x77), .range = 0x10, .at = 0, .rc = -EINVAL},
    {"FDE ends in pc_begin", GCC, INSNS(FRAMED), .range = 0x20, .at = 4, .fde_cut = 12 + 1 + 4 + 2,
     .rc = -EINVAL},
    {"FDE ends in its CIE pointer", GCC, INSNS(FRAMED), .range = 0x20, .at = 4, .fde_cut = 12 + 1 + 4 + 4 + 2,
     .rc = -EINVAL},
    {"FDE augmentation longer than the FDE", CIE(CIE_ZR(0x1b)), .enc = 0x1b, FDE_AUG(0x40), INSNS(FRAMED),
     .range = 0x20, .at = 4, .rc = -EINVAL},
    {"FDE augmentation length 2^64-1", CIE(CIE_ZR(0x1b)), .enc = 0x1b,
     FDE_AUG(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01), INSNS(FRAMED), .range = 0x20,
     .at = 4, .rc = -EINVAL},
    {"unknown opcode 0x17", GCC, INSNS(0x17), .range = 0x10, .at = 0, .rc = -EINVAL},
    {"CIE pointer to an FDE", GCC, INSNS(FRAMED), .range = 0x20, .at = 4, .self_cie = 1, .rc = -EINVAL},
    {"CIE ends in its augmentation string", GCC, INSNS(FRAMED), .range = 0x20, .at = 4, .cie_cut = 11,
     .rc = -EINVAL},
    {"CIE ends in its instructions", GCC, INSNS(FRAMED), .range = 0x20, .at = 4, .cie_cut = 3, .rc = -EINVAL},
    {"CIE ends in its id", GCC, INSNS(FRAMED), .range = 0x20, .at = 4, .cie_cut = 14 + 2, .rc = -EINVAL},
    {"CIE of length 0", GCC, INSNS(FRAMED), .range = 0x20, .at = 4, .cie_cut = 14 + 4, .rc = -EINVAL},
    {"CIE augmentation longer than the CIE", CIE(0x01, 'z', 'R', 0, 0x01, 0x78, 0x10, 0x40, 0x1b, CIE_INSNS),
     .enc = 0x1b, FDE_AUG(0), INSNS(FRAMED), .range = 0x20, .at = 4, .rc = -EINVAL},
    {"CIE augmentation shorter than its letters",
     CIE(0x01, 'z', 'R', 0, 0x01, 0x78, 0x10, 0x00, 0x1b, CIE_INSNS), .enc = 0x1b, FDE_AUG(0), INSNS(FRAMED),
     .range = 0x20, .at = 4, .rc = -EINVAL},
    {"CIE augmentation length 2^64-1",
     CIE(0x01, 'z', 'R', 0, 0x01, 0x78, 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
         0x1b, CIE_INSNS),
     .enc = 0x1b, FDE_AUG(0), INSNS(FRAMED), .range = 0x20, .at = 4, .rc = -EINVAL},
};

/* Whole records written out by hand, given to ct_cfi_fde_rule: a check on the layout code below,
 * and lengths it cannot write. */
#define U64(v) \
	(uint8_t)(v), (uint8_t)((v) >> 8), (uint8_t)((v) >> 16), (uint8_t)((v) >> 24), \
	    (uint8_t)((uint64_t)(v) >> 32), (uint8_t)((uint64_t)(v) >> 40), (uint8_t)((uint64_t)(v) >> 48), \
	    (uint8_t)((uint64_t)(v) >> 56)
/* CIE: length 16, id 0, version 1, no augmentation, code 1, data -8, RA 16; CFA = RSP+8, RA at
 * CFA-8; two nops. */
#define RAW_CIE 0x10, 0, 0, 0, 0, 0, 0, 0, 0x01, 0, 0x01, 0x78, 0x10, 0x0c, 0x07, 0x08, 0x90, 0x01, 0, 0
/* FDE at 20: length 23, CIE pointer 24 (back to 0), pc_begin TEXT and range 0x20 (absptr), then
 * advance_loc 1, def_cfa_offset 16. */
#define RAW_FDE 0x17, 0, 0, 0, 0x18, 0, 0, 0, U64(TEXT), U64(0x20), 0x41, 0x0e, 0x10

static const struct row raws[] = {
    {"raw: absptr FDE, entry", RAW(RAW_CIE, RAW_FDE), .fde_off = 20, .at = 0, OK(RSP, 8, 0)},
    {"raw: absptr FDE, after push", RAW(RAW_CIE, RAW_FDE), .fde_off = 20, .at = 1, OK(RSP, 16, 0)},
    {"raw: absptr FDE, past it", RAW(RAW_CIE, RAW_FDE), .fde_off = 20, .at = 0x20, .rc = -ENOENT},
    {"raw: terminator", RAW(0, 0, 0, 0), .rc = -EINVAL},
    {"raw: 64-bit length", RAW(0xff, 0xff, 0xff, 0xff, U64(8), 0, 0, 0, 0, 0, 0, 0, 0), .rc = -EINVAL},
    {"raw: FDE shorter than its CIE pointer", RAW(RAW_CIE, 0x02, 0, 0, 0, 0x18, 0), .fde_off = 20,
     .rc = -EINVAL},
    {"raw: a CIE given as the FDE", RAW(RAW_CIE), .rc = -EINVAL},
};

static uint8_t *region;
static int failures, tables;

static uint8_t *page_end(int page)
{
	return region + (size_t)(page + 1) * PAGE;
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static size_t put_uleb(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	do {
		p[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return n;
}

/* Writes v in DW_EH_PE encoding enc at p, which will sit at address at. Returns its size. */
static size_t put_encoded(uint8_t *p, uintptr_t at, uint8_t enc, uint64_t v)
{
	if ((enc & 0x70) == 0x10)
		v -= at;
	switch (enc & 0x0f) {
	case 0x01:
		return put_uleb(p, v);
	case 0x00:
	case 0x04:
	case 0x0c:
		memcpy(p, &v, 8);
		return 8;
	default: /* the 4-byte forms, and formats that do not exist: rows' values fit 4 bytes */
		memcpy(p, &v, 4);
		return 4;
	}
}

/* Copies n bytes of a row's field, which a row without that field leaves NULL (memcpy's source
 * must not be NULL, even for 0 bytes). Returns n. */
static size_t put_bytes(uint8_t *buf, const uint8_t *bytes, size_t n)
{
	if (n)
		memcpy(buf, bytes, n);
	return n;
}

static size_t compose_cie(uint8_t *buf, uintptr_t at, uintptr_t cie, const struct row *r)
{
	put32(buf + 4, 0);
	return 8 + put_bytes(buf + 8, r->cie, r->cie_n);
}

/* The FDE of row r, describing TEXT + begin, as if buf sat at address at and its CIE at cie. */
static size_t compose_fde_at(uint8_t *buf, uintptr_t at, uintptr_t cie, const struct row *r, uintptr_t begin)
{
	size_t n = 8;

	put32(buf + 4, r->self_cie ? 4 : (uint32_t)(at + 4 - cie));
	n += put_encoded(buf + n, at + n, r->enc, TEXT + begin);
	n += put_encoded(buf + n, at + n, r->enc & 0x0f, r->range);
	n += put_bytes(buf + n, r->fde_aug, r->fde_aug_n);
	return n + put_bytes(buf + n, r->insns, r->insns_n);
}

static size_t compose_fde(uint8_t *buf, uintptr_t at, uintptr_t cie, const struct row *r)
{
	return compose_fde_at(buf, at, cie, r, 0);
}

typedef size_t compose_fn(uint8_t *buf, uintptr_t at, uintptr_t cie, const struct row *r);

/* Lays a record out so that its declared end (its full length minus cut) is the end of page:
 * compose writes it whole into a buffer as if it sat at its final address. Returns its start. */
static uint8_t *place(int page, int cut, compose_fn *compose, uintptr_t cie, const struct row *r)
{
	uint8_t buf[512];
	size_t kept = compose(buf, 0, cie, r) - (size_t)cut;
	uint8_t *start = page_end(page) - kept;

	compose(buf, (uintptr_t)start, cie, r);
	put32(buf, (uint32_t)(kept - 4));
	memcpy(start, buf, kept);
	return start;
}

/* An .eh_frame_hdr at the start of region for the FDEs at fdes[] (sorted), describing functions at
 * TEXT + begins[i]. */
static const uint8_t *put_hdr(uint8_t *const *fdes, const uintptr_t *begins, int count)
{
	uint8_t *hdr = region;

	memset(hdr, 0, PAGE);
	hdr[0] = 1;
	hdr[1] = 0x1b; /* eh_frame_ptr: pcrel|sdata4 */
	hdr[2] = 0x03; /* fde_count: udata4 */
	hdr[3] = 0x3b; /* table: datarel|sdata4 */
	put32(hdr + 4, (uint32_t)(page_end(HDR_PAGE) - (hdr + 4)));
	put32(hdr + 8, (uint32_t)count);
	for (int i = 0; i < count; i++) {
		put32(hdr + 12 + 8 * i, (uint32_t)(TEXT + begins[i] - (uintptr_t)hdr));
		put32(hdr + 16 + 8 * i, (uint32_t)((uintptr_t)fdes[i] - (uintptr_t)hdr));
	}
	return hdr;
}

static void show(char *buf, size_t size, int rc, const struct ct_cfi_rule *r)
{
	static const char *const kinds[] = {"NONE", "OK", "END", "SIGNAL"};

	if (rc)
		snprintf(buf, size, "error %d (%s)", rc, strerror(-rc));
	else if (r->kind == CT_CFI_OK)
		snprintf(buf, size, "OK CFA=%s%+d RBP %s%+d", r->cfa_reg == CT_CFI_RSP ? "RSP" : "RBP",
		         (int)r->cfa_off, r->rbp_off ? "at CFA" : "kept", (int)r->rbp_off);
	else
		snprintf(buf, size, "%s", r->kind < CT_CFI_KINDS ? kinds[r->kind] : "?");
}

/* What a decoder call must leave in *out on error, and in errno always. */
static const struct ct_cfi_rule untouched = {0x5a5a, 0x5a5a, 0x5a, 0x5a};
#define ERRNO_MARK 4242

/* Compares a result with row want's expectation; counts and prints a failure. */
static void expect(const char *name, int rc, const struct ct_cfi_rule *got, const struct row *want)
{
	const struct ct_cfi_rule w = {want->off, want->rbp, want->reg, want->kind};
	char a[96], b[96];

	if (errno != ERRNO_MARK) {
		fprintf(stderr, "FAIL %s: errno changed to %d\n", name, errno);
		failures++;
	}
	if (rc == want->rc && !memcmp(got, rc ? &untouched : &w, sizeof(w)))
		return;
	show(a, sizeof(a), rc, got);
	show(b, sizeof(b), want->rc, &w);
	fprintf(stderr, "FAIL %s: got %s, want %s\n", name, a, b);
	failures++;
}

static int lookup(const uint8_t *hdr, uintptr_t ip, struct ct_cfi_rule *out)
{
	*out = untouched;
	errno = ERRNO_MARK;
	return ct_cfi_lookup(hdr, ip, out);
}

/* The FDE's whole table (ct_cfi_fde_rows), when it has one, against ct_cfi_fde_rule at every ip of
 * its range and the bytes around: the same rule everywhere, rows that start at 0 and go up, and no
 * two neighbours alike. */
static void check_table(const char *name, const uint8_t *fde)
{
	struct ct_cfi_row rows[64];
	uintptr_t begin = 0, range = 0;
	int n = ct_cfi_fde_rows(fde, rows, 64, &begin, &range);
	if (n < 0) /* an error somewhere in its CFI, or a .plt's */
		return;
	tables++;
	for (int i = 0; i < n; i++)
		if ((i == 0 && rows[0].start) ||
		    (i > 0 && (rows[i].start <= rows[i - 1].start ||
		               !memcmp(&rows[i].rule, &rows[i - 1].rule, sizeof(rows[i].rule))))) {
			fprintf(stderr, "FAIL %s: table row %d of %d starts at %u\n", name, i, n,
			        rows[i].start);
			failures++;
			return;
		}
	for (uintptr_t ip = begin - 2; ip != begin + range + 2; ip++) {
		struct ct_cfi_rule want = untouched, got = untouched;
		int rc = ct_cfi_fde_rule(fde, ip, &want), in = ip - begin < range;
		if (in && n)
			got = ct_cfi_row_rule(rows, n, ip - begin);
		if (rc != (in ? 0 : -ENOENT) || (in && memcmp(&got, &want, sizeof(got)))) {
			char a[96], b[96];
			show(a, sizeof(a), 0, &got);
			show(b, sizeof(b), rc, &want);
			fprintf(stderr, "FAIL %s: table at +%ld gives %s, the CFI %s\n", name,
			        (long)(ip - begin), a, b);
			failures++;
			return;
		}
	}
}

static void run_row(const struct row *r)
{
	struct ct_cfi_rule got;
	uint8_t *cie = place(CIE_PAGE, r->cie_cut, compose_cie, 0, r);
	uint8_t *fde = place(FDE_PAGE, r->fde_cut, compose_fde, (uintptr_t)cie, r);
	const uint8_t *hdr = put_hdr(&fde, (const uintptr_t[]){0}, 1);

	expect(r->name, lookup(hdr, TEXT + (uintptr_t)r->at, &got), &got, r);
	check_table(r->name, fde);
}

static void run_raw(const struct row *r)
{
	uint8_t *start = page_end(FDE_PAGE) - r->raw_n;
	struct ct_cfi_rule got = untouched;

	memcpy(start, r->raw, r->raw_n);
	errno = ERRNO_MARK;
	expect(r->name, ct_cfi_fde_rule(start + r->fde_off, TEXT + (uintptr_t)r->at, &got), &got, r);
}

/* Several FDEs behind one CIE: the binary search of the header's table, gaps between functions,
 * and the header layouts that are not handled. Function i starts at TEXT + 0x100 * i, lasts 0x80
 * bytes and sets CFA = RSP + 16 + 8 * i at 4. */
static void run_table(void)
{
	enum { N = 5 };
	uint8_t *fdes[N], insns[N][3];
	uintptr_t begins[N];
	struct ct_cfi_rule got;
	const struct row fn = {GCC, .range = 0x80};
	uint8_t *cie = place(CIE_PAGE, 0, compose_cie, 0, &fn), *p = page_end(FDE_PAGE) - PAGE;
	char name[64];

	for (int i = 0; i < N; i++) {
		struct row r = fn;
		memcpy(insns[i], (const uint8_t[]){0x44, 0x0e, (uint8_t)(16 + 8 * i)}, 3);
		r.insns = insns[i];
		r.insns_n = 3;
		begins[i] = 0x100 * (uintptr_t)i;
		fdes[i] = p;
		size_t n = compose_fde_at(p, (uintptr_t)p, (uintptr_t)cie, &r, begins[i]);
		put32(p, (uint32_t)(n - 4));
		p += n;
	}
	put32(p, 0); /* the terminator */
	const uint8_t *hdr = put_hdr(fdes, begins, N);
	for (int i = 0; i < N; i++) {
		const struct row entry = {OK(RSP, 8, 0)}, body = {OK(RSP, 16 + 8 * i, 0)},
		                 gap = {.rc = -ENOENT};
		snprintf(name, sizeof(name), "table: function %d, entry", i);
		expect(name, lookup(hdr, TEXT + begins[i], &got), &got, &entry);
		snprintf(name, sizeof(name), "table: function %d, body", i);
		expect(name, lookup(hdr, TEXT + begins[i] + 4, &got), &got, &body);
		snprintf(name, sizeof(name), "table: function %d, last byte", i);
		expect(name, lookup(hdr, TEXT + begins[i] + 0x7f, &got), &got, &body);
		snprintf(name, sizeof(name), "table: after function %d (a gap)", i);
		expect(name, lookup(hdr, TEXT + begins[i] + 0x80, &got), &got, &gap);
	}
	const struct row enoent = {.rc = -ENOENT}, enotsup = {.rc = -ENOTSUP};
	expect("table: before every function", lookup(hdr, TEXT - 1, &got), &got, &enoent);
	expect("table: far after", lookup(hdr, UINTPTR_MAX, &got), &got, &enoent);
	region[0] = 2;
	expect("table: header version 2", lookup(hdr, TEXT + 4, &got), &got, &enotsup);
	region[0] = 1;
	region[3] = 0x03;
	expect("table: header table in udata4", lookup(hdr, TEXT + 4, &got), &got, &enotsup);
	region[3] = 0x3b;
	put32(region + 8, 0);
	expect("table: no entries", lookup(hdr, TEXT + 4, &got), &got, &enoent);
}

int main(void)
{
	const size_t rows_n = sizeof(rows) / sizeof(rows[0]), raws_n = sizeof(raws) / sizeof(raws[0]);

	region = mmap(NULL, (size_t)PAGES * PAGE, PROT_READ | PROT_WRITE,
	              MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (region == MAP_FAILED || mprotect(page_end(CIE_PAGE), PAGE, PROT_NONE) ||
	    mprotect(page_end(FDE_PAGE), PAGE, PROT_NONE)) {
		perror("test-cfi: mmap");
		return 1;
	}
	for (size_t i = 0; i < rows_n; i++)
		run_row(&rows[i]);
	for (size_t i = 0; i < raws_n; i++)
		run_raw(&raws[i]);
	run_table();
	if (failures)
		return fprintf(stderr, "test-cfi: %d failures\n", failures), 1;
	printf("test-cfi: %zu rows (%d whole tables), %zu hand-laid records, a table of 5 FDEs: ok\n", rows_n,
	       tables, raws_n);
	return 0;
}
