/* SPDX-License-Identifier: MIT */
/* The x86_64 .eh_frame decoder behind the fast unwinder (contract in cfi.h): .eh_frame_hdr search,
 * CIE/FDE parsing, DW_EH_PE pointers, the DW_CFA program run up to an ip, the simple rule it yields.
 * Runs inside malloc: no allocation, no lock, no stdio, errno untouched. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cfi.h"

/* DWARF register numbers on x86_64, and the few DW_EH_PE / DW_CFA constants we decode. */
enum { DW_RBP = CT_CFI_RBP, DW_RSP = CT_CFI_RSP, DW_RA = 16 };
enum {
	PE_ABSPTR = 0x00,
	PE_ULEB = 0x01,
	PE_UDATA2 = 0x02,
	PE_UDATA4 = 0x03,
	PE_UDATA8 = 0x04,
	PE_SLEB = 0x09,
	PE_SDATA2 = 0x0a,
	PE_SDATA4 = 0x0b,
	PE_SDATA8 = 0x0c,
	PE_PCREL = 0x10,
	PE_DATAREL = 0x30,
	PE_INDIRECT = 0x80,
	PE_OMIT = 0xff,
};
enum {
	CFA_NOP = 0x00,
	CFA_SET_LOC = 0x01,
	CFA_ADVANCE_LOC1 = 0x02,
	CFA_ADVANCE_LOC2 = 0x03,
	CFA_ADVANCE_LOC4 = 0x04,
	CFA_OFFSET_EXT = 0x05,
	CFA_RESTORE_EXT = 0x06,
	CFA_UNDEFINED = 0x07,
	CFA_SAME_VALUE = 0x08,
	CFA_REGISTER = 0x09,
	CFA_REMEMBER_STATE = 0x0a,
	CFA_RESTORE_STATE = 0x0b,
	CFA_DEF_CFA = 0x0c,
	CFA_DEF_CFA_REGISTER = 0x0d,
	CFA_DEF_CFA_OFFSET = 0x0e,
	CFA_DEF_CFA_EXPRESSION = 0x0f,
	CFA_EXPRESSION = 0x10,
	CFA_OFFSET_EXT_SF = 0x11,
	CFA_DEF_CFA_SF = 0x12,
	CFA_DEF_CFA_OFFSET_SF = 0x13,
	CFA_VAL_OFFSET = 0x14,
	CFA_VAL_OFFSET_SF = 0x15,
	CFA_VAL_EXPRESSION = 0x16,
	CFA_GNU_ARGS_SIZE = 0x2e,
	CFA_GNU_NEG_OFFSET_EXT = 0x2f,
};

#define STATE_STACK 8 /* nesting of DW_CFA_remember_state */

/* ---- reading .eh_frame bytes ------------------------------------------------------------- */

struct cur {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t rd_fixed(struct cur *c, size_t size)
{
	uint64_t v = 0;
	if ((size_t)(c->end - c->p) < size) {
		c->bad = 1;
		return 0;
	}
	memcpy(&v, c->p, size); /* x86_64 is little-endian, like the data */
	c->p += size;
	return v;
}

/* One byte, the opcode of every CFA instruction: no memcpy of a size known only at run time. */
static inline uint8_t rd_u8(struct cur *c)
{
	if (c->p >= c->end) {
		c->bad = 1;
		return 0;
	}
	return *c->p++;
}

/* A LEB128 value of any length (rd_leb's slow path). */
static __attribute__((noinline)) uint64_t rd_leb_long(struct cur *c, int is_signed)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;
	do {
		if (c->p >= c->end) {
			c->bad = 1;
			return 0;
		}
		b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (is_signed && shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return v;
}

/* A LEB128 value; the one-byte ones (nearly every operand of a CFA program) inline. */
static inline uint64_t rd_leb(struct cur *c, int is_signed)
{
	if (c->p < c->end && !(*c->p & 0x80)) {
		uint8_t b = *c->p++;
		return is_signed && (b & 0x40) ? (uint64_t)b | ~(uint64_t)0x7f : b;
	}
	return rd_leb_long(c, is_signed);
}

static uint64_t rd_uleb(struct cur *c)
{
	return rd_leb(c, 0);
}
static int64_t rd_sleb(struct cur *c)
{
	return (int64_t)rd_leb(c, 1);
}

/* Decodes a DW_EH_PE pointer: 0, -EINVAL (truncated, or no such format) or -ENOTSUP (a base other
 * than pcrel or datarel). datarel needs a base (the .eh_frame_hdr); indirect pointers are only
 * ever skipped (personality), so their value is returned undereferenced. */
static int rd_encoded(struct cur *c, uint8_t enc, uintptr_t datarel, uint64_t *out)
{
	const uint8_t *at = c->p;
	uint64_t v;

	if (enc == PE_OMIT) {
		*out = 0;
		return 0;
	}
	switch (enc & 0x0f) {
	case PE_ABSPTR:
	case PE_UDATA8:
	case PE_SDATA8:
		v = rd_fixed(c, 8);
		break;
	case PE_ULEB:
		v = rd_uleb(c);
		break;
	case PE_SLEB:
		v = (uint64_t)rd_sleb(c);
		break;
	case PE_UDATA2:
		v = rd_fixed(c, 2);
		break;
	case PE_SDATA2:
		v = (uint64_t)(int64_t)(int16_t)rd_fixed(c, 2);
		break;
	case PE_UDATA4:
		v = rd_fixed(c, 4);
		break;
	case PE_SDATA4:
		v = (uint64_t)(int64_t)(int32_t)rd_fixed(c, 4);
		break;
	default:
		return -EINVAL;
	}
	switch (enc & 0x70) {
	case 0:
		break;
	case PE_PCREL:
		v += (uintptr_t)at;
		break;
	case PE_DATAREL:
		if (!datarel)
			return -ENOTSUP;
		v += datarel;
		break;
	default:
		return -ENOTSUP;
	}
	*out = v;
	return c->bad ? -EINVAL : 0;
}

/* Skips a block that starts with its uleb128 length (an expression, augmentation data). */
static void skip_block(struct cur *c)
{
	uint64_t len = rd_uleb(c);
	if (len > (uint64_t)(c->end - c->p))
		c->bad = 1;
	else
		c->p += len;
}

static int32_t rd_s32(const uint8_t *p)
{
	int32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/* ---- locating and parsing the FDE -------------------------------------------------------- */

/* The .eh_frame_hdr layouts ct_cfi_find_fde reads: version 1 with a sorted table of 4-byte offsets. */
static int hdr_supported(const uint8_t *hdr)
{
	return hdr[0] == 1 && hdr[3] == (PE_DATAREL | PE_SDATA4);
}

/* Binary search of the .eh_frame_hdr table (the usual datarel|sdata4 layout; anything else is
 * for libunwind). */
int ct_cfi_find_fde(const uint8_t *hdr, uintptr_t ip, const uint8_t **fde)
{
	struct cur c = {hdr + 4, hdr + 4 + 16, 0};
	uint64_t eh_frame, count;

	if (!hdr_supported(hdr))
		return -ENOTSUP;
	int rc = rd_encoded(&c, hdr[1], (uintptr_t)hdr, &eh_frame);
	if (rc || (rc = rd_encoded(&c, hdr[2], (uintptr_t)hdr, &count)))
		return rc;
	const uint8_t *table = c.p;
	size_t lo = 0, hi = count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if ((uintptr_t)hdr + (intptr_t)rd_s32(table + 8 * mid) <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -ENOENT;
	*fde = hdr + rd_s32(table + 8 * (lo - 1) + 4);
	return 0;
}

/* A CIE/FDE record: returns its body (after the length) and sets *end; NULL for the terminator,
 * a record too short for its CIE id or pointer, or the 64-bit format, which .eh_frame never uses
 * in practice. */
static const uint8_t *record_body(const uint8_t *p, const uint8_t **end)
{
	uint32_t len;
	memcpy(&len, p, sizeof(len));
	if (len < 4 || len == 0xffffffffu)
		return NULL;
	*end = p + 4 + len;
	return p + 4;
}

struct cfi {
	uint64_t code_align;
	int64_t data_align;
	uint8_t fde_enc, has_z, signal;
	struct cur cie_insns, fde_insns;
	uintptr_t pc_begin, pc_range;
};

/* The augmentation data of a 'z' CIE: aug is the string after the 'z'. */
static int parse_cie_aug(struct cur *c, const char *aug, struct cfi *f)
{
	uint64_t len = rd_uleb(c), skipped;
	int rc;

	if (c->bad || len > (uint64_t)(c->end - c->p)) /* checked first: a huge length would wrap */
		return -EINVAL;
	const uint8_t *end = c->p + len;

	for (; *aug; aug++) {
		switch (*aug) {
		case 'R':
			f->fde_enc = (uint8_t)rd_fixed(c, 1);
			break;
		case 'L':
			rd_fixed(c, 1);
			break;
		case 'P': {
			uint8_t enc = (uint8_t)rd_fixed(c, 1);
			/* Only the size matters; the base is irrelevant to skipping it. */
			if ((rc = rd_encoded(c, (uint8_t)(enc & 0x0f), 0, &skipped)))
				return rc;
			break;
		}
		case 'S': /* a signal trampoline: the registers are in the frame the kernel pushed */
			f->signal = 1;
			break;
		default:
			return -ENOTSUP;
		}
	}
	if (c->bad || c->p > end) /* the data is shorter than its letters say */
		return -EINVAL;
	c->p = end;
	return 0;
}

static int parse_cie(const uint8_t *cie, struct cfi *f)
{
	const uint8_t *end;
	const uint8_t *body = record_body(cie, &end);
	if (!body || rd_s32(body) != 0)
		return -EINVAL;
	struct cur c = {body + 4, end, 0};
	uint64_t version = rd_fixed(&c, 1);
	const char *aug = (const char *)c.p;
	size_t aug_len = strnlen(aug, (size_t)(end - c.p));

	if (c.bad || c.p + aug_len >= end) /* no room for the version, or no NUL */
		return -EINVAL;
	if (version != 1 && version != 3)
		return -ENOTSUP;
	c.p += aug_len + 1;
	f->code_align = rd_uleb(&c);
	f->data_align = rd_sleb(&c);
	uint64_t ra = version == 1 ? rd_fixed(&c, 1) : rd_uleb(&c);
	f->fde_enc = PE_ABSPTR;
	f->has_z = aug[0] == 'z';
	f->signal = 0;
	if (c.bad)
		return -EINVAL;
	if (ra != DW_RA)
		return -ENOTSUP;
	int rc = aug[0] == 'z' ? parse_cie_aug(&c, aug + 1, f) : aug[0] ? -ENOTSUP : 0;
	if (rc)
		return rc;
	f->cie_insns = c;
	return c.bad ? -EINVAL : 0;
}

/* The FDE at fde and its CIE into *f, the FDE's addresses [f->pc_begin, f->pc_begin + f->pc_range):
 * -ENOENT when they do not hold *ip (any ip: NULL). */
static int parse_fde(const uint8_t *fde, const uintptr_t *ip, struct cfi *f)
{
	const uint8_t *end;
	const uint8_t *body = record_body(fde, &end);
	uint64_t begin, range;
	int rc;

	if (!body || rd_s32(body) == 0)
		return -EINVAL;
	if ((rc = parse_cie(body - rd_s32(body), f)))
		return rc;
	if (f->fde_enc & PE_INDIRECT)
		return -ENOTSUP;
	struct cur c = {body + 4, end, 0};
	if ((rc = rd_encoded(&c, f->fde_enc, 0, &begin)) ||
	    (rc = rd_encoded(&c, (uint8_t)(f->fde_enc & 0x0f), 0, &range)))
		return rc;
	if (ip && (*ip < begin || *ip - begin >= range))
		return -ENOENT;
	if (f->has_z)
		skip_block(&c);
	if (c.bad)
		return -EINVAL;
	f->fde_insns = c;
	f->pc_begin = (uintptr_t)begin;
	f->pc_range = (uintptr_t)range;
	return 0;
}

/* ---- running the CFA program ------------------------------------------------------------- */

/* The CFA expression every linker writes for the entries of a .plt: RSP+off, plus 8 from byte k of
 * each 16-byte entry on (after its push): DW_OP_breg7 off; DW_OP_breg16 0; DW_OP_lit15; DW_OP_and;
 * DW_OP_lit<k>; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus. A signal can interrupt a PLT entry.
 * Returns 1 and sets *off to the CFA's offset from RSP at ip, 0 for any other expression. */
static int plt_cfa(struct cur e, uintptr_t ip, int64_t *off)
{
	static const uint8_t tail[] = {0x80, 0x00, 0x3f, 0x1a, 0x2a, 0x33, 0x24, 0x22};
	uint8_t op[sizeof(tail) + 1];

	if (rd_fixed(&e, 1) != 0x77) /* DW_OP_breg7 */
		return 0;
	int64_t base = rd_sleb(&e);
	if ((size_t)(e.end - e.p) != sizeof(op))
		return 0;
	memcpy(op, e.p, sizeof(op));
	unsigned k = op[4] - 0x30u; /* DW_OP_lit<k>, between DW_OP_and and DW_OP_ge */
	if (e.bad || k > 15 || memcmp(op, tail, 4) || memcmp(op + 5, tail + 4, 4))
		return 0;
	*off = base + ((ip & 15) >= k ? 8 : 0);
	return 1;
}

enum { R_SAME, R_OFFSET, R_UNDEF, R_OTHER };

/* Only what a simple rule can express is tracked; every other register is ignored. */
struct regs {
	int64_t cfa_off, rbp_off, ra_off;
	uint64_t cfa_reg;
	uint8_t rbp, ra, rsp, cfa_expr;
};

static void set_rule(struct regs *s, uint64_t reg, uint8_t kind, int64_t off)
{
	switch (reg) {
	case DW_RBP:
		s->rbp = kind;
		s->rbp_off = off;
		break;
	case DW_RA:
		s->ra = kind;
		s->ra_off = off;
		break;
	case DW_RSP:
		s->rsp = kind;
		break;
	default:
		break;
	}
}

static void restore_rule(struct regs *s, uint64_t reg, const struct regs *init)
{
	switch (reg) {
	case DW_RBP:
		s->rbp = init->rbp;
		s->rbp_off = init->rbp_off;
		break;
	case DW_RA:
		s->ra = init->ra;
		s->ra_off = init->ra_off;
		break;
	case DW_RSP:
		s->rsp = init->rsp;
		break;
	default:
		break;
	}
}

/* A row table in the making (ct_cfi_fde_rows): rows[n] of at most max (rows NULL: only counted), for
 * an FDE of range bytes; rc a negative errno once the table cannot be made. */
struct rows_out {
	struct ct_cfi_row *rows;
	int n, max, rc;
	uintptr_t range;
	struct ct_cfi_row last[2]; /* rows n-2 and n-1, here for a count too */
};

static struct ct_cfi_rule make_rule(const struct regs *s);

/* The row of state s from off (bytes past the FDE's first address) on: it replaces a row that began
 * there too (an advance by 0) and extends the row before when their rules are the same. */
static void put_row(struct rows_out *o, uintptr_t off, const struct regs *s)
{
	if (off >= o->range) /* past the FDE: no ip is looked up there */
		return;
	struct ct_cfi_row row = {(uint32_t)off, make_rule(s)};
	if (o->n && o->last[1].start == off) {
		o->n--;
		/* last[0] is not known now, and never needed: a later row cannot begin where this one did */
		o->last[1] = o->last[0];
	}
	if (o->n && !memcmp(&o->last[1].rule, &row.rule, sizeof(row.rule)))
		return;
	if (o->n == o->max) {
		o->rc = -ENOSPC;
		return;
	}
	if (o->rows)
		o->rows[o->n] = row;
	o->n++;
	o->last[0] = o->last[1];
	o->last[1] = row;
}

/* Moves the row start by delta; returns 1 when the row containing ip has been reached. A table in
 * the making (o) gets the row that ends here instead. */
static int advance(uintptr_t *loc, uint64_t delta, uintptr_t ip, const struct cfi *f, const struct regs *s,
                   struct rows_out *o)
{
	if (o)
		put_row(o, *loc - f->pc_begin, s);
	else if (ip - *loc < delta)
		return 1;
	*loc += delta;
	return 0;
}

/* Executes instructions until the row for ip; init is the CIE state (NULL while running it). With o,
 * runs them all instead, each row into o (ip unused). */
static int run_cfa(struct cur c, const struct cfi *f, uintptr_t ip, struct regs *s, const struct regs *init,
                   struct rows_out *o)
{
	struct regs saved[STATE_STACK];
	int depth = 0, rc;
	uintptr_t loc = f->pc_begin;
	uint64_t reg, nloc;
	const int64_t da = f->data_align;

	if (!init)
		init = s;
	while (c.p < c.end && !c.bad && !(o && o->rc)) {
		uint8_t op = rd_u8(&c);
		switch (op >> 6) {
		case 1:
			if (advance(&loc, (op & 0x3f) * f->code_align, ip, f, s, o))
				return 0;
			continue;
		case 2:
			set_rule(s, op & 0x3f, R_OFFSET, (int64_t)rd_uleb(&c) * da);
			continue;
		case 3:
			restore_rule(s, op & 0x3f, init);
			continue;
		default:
			break;
		}
		switch (op) {
		case CFA_NOP:
			break;
		case CFA_SET_LOC:
			if ((rc = rd_encoded(&c, f->fde_enc, 0, &nloc)))
				return rc;
			if (o && nloc < loc) /* backwards: rows would overlap */
				return -ENOTSUP;
			if (o)
				put_row(o, loc - f->pc_begin, s);
			else if (ip < nloc)
				return 0;
			loc = (uintptr_t)nloc;
			break;
		case CFA_ADVANCE_LOC1:
		case CFA_ADVANCE_LOC2:
		case CFA_ADVANCE_LOC4:
			if (advance(&loc,
			            rd_fixed(&c, op == CFA_ADVANCE_LOC4 ? 4u : (size_t)op - 1) *
			                f->code_align,
			            ip, f, s, o))
				return 0;
			break;
		case CFA_OFFSET_EXT:
			reg = rd_uleb(&c);
			set_rule(s, reg, R_OFFSET, (int64_t)rd_uleb(&c) * da);
			break;
		case CFA_OFFSET_EXT_SF:
			reg = rd_uleb(&c);
			set_rule(s, reg, R_OFFSET, rd_sleb(&c) * da);
			break;
		case CFA_GNU_NEG_OFFSET_EXT:
			reg = rd_uleb(&c);
			set_rule(s, reg, R_OFFSET, -(int64_t)rd_uleb(&c) * da);
			break;
		case CFA_RESTORE_EXT:
			restore_rule(s, rd_uleb(&c), init);
			break;
		case CFA_UNDEFINED:
			set_rule(s, rd_uleb(&c), R_UNDEF, 0);
			break;
		case CFA_SAME_VALUE:
			set_rule(s, rd_uleb(&c), R_SAME, 0);
			break;
		case CFA_REGISTER:
		case CFA_VAL_OFFSET:
			reg = rd_uleb(&c);
			rd_uleb(&c);
			set_rule(s, reg, R_OTHER, 0);
			break;
		case CFA_VAL_OFFSET_SF:
			reg = rd_uleb(&c);
			rd_sleb(&c);
			set_rule(s, reg, R_OTHER, 0);
			break;
		case CFA_EXPRESSION:
		case CFA_VAL_EXPRESSION:
			reg = rd_uleb(&c);
			skip_block(&c);
			set_rule(s, reg, R_OTHER, 0);
			break;
		case CFA_REMEMBER_STATE:
			if (depth == STATE_STACK)
				return -E2BIG;
			saved[depth++] = *s;
			break;
		case CFA_RESTORE_STATE: /* the CFA rule is part of the state, as in libgcc and libunwind */
			if (!depth)
				return -EINVAL;
			*s = saved[--depth];
			break;
		case CFA_DEF_CFA:
			s->cfa_reg = rd_uleb(&c);
			s->cfa_off = (int64_t)rd_uleb(&c);
			s->cfa_expr = 0;
			break;
		case CFA_DEF_CFA_SF:
			s->cfa_reg = rd_uleb(&c);
			s->cfa_off = rd_sleb(&c) * da;
			s->cfa_expr = 0;
			break;
		case CFA_DEF_CFA_REGISTER:
			s->cfa_reg = rd_uleb(&c);
			break;
		case CFA_DEF_CFA_OFFSET:
			s->cfa_off = (int64_t)rd_uleb(&c);
			break;
		case CFA_DEF_CFA_OFFSET_SF:
			s->cfa_off = rd_sleb(&c) * da;
			break;
		case CFA_DEF_CFA_EXPRESSION: {
			const uint8_t *at = c.p;
			skip_block(&c);
			struct cur e = {at, c.p, 0};
			rd_uleb(&e);                         /* the block's length */
			if (o && plt_cfa(e, 0, &s->cfa_off)) /* a .plt's: its CFA changes within a row */
				return -ENOTSUP;
			s->cfa_expr = !plt_cfa(e, ip, &s->cfa_off);
			if (!s->cfa_expr)
				s->cfa_reg = DW_RSP;
			break;
		}
		case CFA_GNU_ARGS_SIZE:
			rd_uleb(&c);
			break;
		default:
			return -EINVAL;
		}
	}
	if (c.bad)
		return -EINVAL;
	if (o && !o->rc)
		put_row(o, loc - f->pc_begin, s); /* the last row: to the FDE's end */
	return o ? o->rc : 0;
}

static struct ct_cfi_rule make_rule(const struct regs *s)
{
	struct ct_cfi_rule r = {0, 0, 0, CT_CFI_NONE};

	/* libunwind ends the chain on an undefined RA, and on x86_64 on an undefined RBP too. */
	if (s->ra == R_UNDEF || s->rbp == R_UNDEF) {
		r.kind = CT_CFI_END;
		return r;
	}
	if (s->cfa_expr || s->rsp != R_SAME || s->ra != R_OFFSET || s->ra_off != -8)
		return r;
	if ((s->cfa_reg != DW_RSP && s->cfa_reg != DW_RBP) || s->cfa_off != (int32_t)s->cfa_off)
		return r;
	if (s->rbp == R_OFFSET && (s->rbp_off == 0 || s->rbp_off != (int16_t)s->rbp_off))
		return r;
	if (s->rbp != R_SAME && s->rbp != R_OFFSET)
		return r;
	r.cfa_off = (int32_t)s->cfa_off;
	r.rbp_off = s->rbp == R_OFFSET ? (int16_t)s->rbp_off : 0;
	r.cfa_reg = (uint8_t)s->cfa_reg;
	r.kind = CT_CFI_OK;
	return r;
}

/* The FDE at fde into *f (-ENOENT when it does not hold *ip; any ip: NULL) and, unless it is a signal
 * trampoline's, whose CFI is expressions into the kernel's frame (the caller knows its layout), its
 * CIE's row into *init: the CIE's program runs to the end, as its row applies to every ip. */
static int start_fde(const uint8_t *fde, const uintptr_t *ip, struct cfi *f, struct regs *init)
{
	*init = (struct regs){.cfa_reg = DW_RSP, .rbp = R_SAME, .ra = R_SAME, .rsp = R_SAME};
	int rc = parse_fde(fde, ip, f);
	if (rc || f->signal)
		return rc;
	return run_cfa(f->cie_insns, f, UINTPTR_MAX, init, NULL, NULL);
}

int ct_cfi_fde_rule(const uint8_t *fde, uintptr_t ip, struct ct_cfi_rule *out)
{
	struct cfi f;
	struct regs init;
	int rc = start_fde(fde, &ip, &f, &init);

	if (rc)
		return rc;
	if (f.signal) {
		*out = (struct ct_cfi_rule){0, 0, 0, CT_CFI_SIGNAL};
		return 0;
	}
	struct regs s = init;
	if ((rc = run_cfa(f.fde_insns, &f, ip, &s, &init, NULL)))
		return rc;
	*out = make_rule(&s);
	return 0;
}

int ct_cfi_fde_rows(const uint8_t *fde, struct ct_cfi_row *rows, int max, uintptr_t *begin, uintptr_t *range)
{
	struct cfi f;
	struct regs init;
	int rc = start_fde(fde, NULL, &f, &init);

	if (rc)
		return rc;
	if (f.pc_range > UINT32_MAX) /* rows start at 32-bit offsets */
		return -ENOTSUP;
	*begin = f.pc_begin;
	*range = f.pc_range;
	if (f.signal) {
		if (max < 1)
			return -ENOSPC;
		if (rows)
			rows[0] = (struct ct_cfi_row){0, {0, 0, 0, CT_CFI_SIGNAL}};
		return f.pc_range ? 1 : 0;
	}
	struct regs s = init;
	struct rows_out o = {rows, 0, max, 0, f.pc_range, {{0}}};
	if ((rc = run_cfa(f.fde_insns, &f, UINTPTR_MAX, &s, &init, &o)))
		return rc;
	return o.n;
}

struct ct_cfi_rule ct_cfi_row_rule(const struct ct_cfi_row *rows, int n, uintptr_t off)
{
	int lo = 0, hi = n; /* the last row that starts at or before off: rows[0] starts at 0 */
	while (hi - lo > 1) {
		int mid = lo + (hi - lo) / 2;
		if (rows[mid].start <= off)
			lo = mid;
		else
			hi = mid;
	}
	return rows[lo].rule;
}

int ct_cfi_lookup(const uint8_t *eh_frame_hdr, uintptr_t ip, struct ct_cfi_rule *out)
{
	const uint8_t *fde;
	int rc = ct_cfi_find_fde(eh_frame_hdr, ip, &fde);

	return rc ? rc : ct_cfi_fde_rule(fde, ip, out);
}
