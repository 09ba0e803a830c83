/* SPDX-License-Identifier: MIT */
/* Fast backtraces from CFI rules cached per return address, plus a memo of the thread's last walk.
 * No malloc, no lock when warm, errno kept; any frame without a simple rule: the walk is libunwind's. */
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libunwind.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "unwind.h"

/* DWARF register numbers on x86_64, and the few DW_EH_PE / DW_CFA constants we decode. */
enum { DW_RBP = 6, DW_RSP = 7, DW_RA = 16 };
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

/* A cached rule: CFA = (RSP|RBP) + cfa_off, RA at CFA-8, RBP unchanged (rbp_off 0) or at
 * CFA+rbp_off. RULE_END: the return address is undefined (outermost frame). RULE_FP: code with no
 * unwind information at all (JIT code, V8's builtins, hand-written assembly): a frame-pointer
 * frame is assumed (CFA = RBP+16, RBP saved at CFA-16), as perf and libunwind do, but stepped
 * only while every word it reads lies in the thread's stack, where RBP may hold anything.
 * RULE_FP_ANON: the same for code outside every module, never cached: a library loaded later may
 * be mapped where that code was. */
enum { RULE_NONE, RULE_OK, RULE_END, RULE_FP, RULE_FP_ANON };
struct rule {
	int32_t cfa_off;
	int16_t rbp_off;
	uint8_t cfa_reg;
	uint8_t kind;
};

#define CACHE_BITS 10
#define CACHE_SIZE (1u << CACHE_BITS)
/* A step that moves the stack pointer further than this is taken as a corrupt frame. */
#define MAX_FRAME_SPAN ((uintptr_t)64 << 20)
#define STATE_STACK 8

struct entry {
	uintptr_t ip; /* 0 = empty or being written */
	struct rule rule;
};

static _Atomic unsigned generation;
/* Walks in progress on this thread: a nested one (signal handler) reads the cache, never writes. */
static __thread int walk_depth;
/* The thread's last walk gave exactly the frames of the one before (see ct_unwind_repeated).
 * Only when the memo described the walk before: a walk cut at max or handed to libunwind leaves
 * the memo of an older one (memo_current 0). */
static __thread int repeated, memo_current, memo_was_current;
/* Walks that went through libunwind; read by the unit tests, which include this file. */
static __thread unsigned long fallbacks;

/* The previous walk of the thread, reused when the next one ends the same way (see walk()). */
#define MEMO_FRAMES 64

struct memo_frame {
	uintptr_t ip, sp, bp;
	uintptr_t rbp_slot; /* where the step to the next frame read RBP, 0 = kept */
	unsigned flags;
};

struct memo {
	int n;
	struct memo_frame f[MEMO_FRAMES];
};
enum { MEMO_CFA_RBP = 1, MEMO_KEEPS_RBP = 2, MEMO_NEEDS_BP = 4 };

/* A thread's rule cache and memo: mapped on its first walk rather than kept in static TLS, so the
 * shim adds a few bytes, not tens of KiB, to every thread's TLS block (threads with small stacks
 * must still start). */
struct thread_state {
	unsigned cache_generation;
	int memo_last; /* memos[memo_last] holds the previous walk */
	struct memo memos[2];
	struct entry cache[CACHE_SIZE];
	uintptr_t stack_lo, stack_hi; /* the mapping that held the stack pointer when last looked up */
	int no_maps;                  /* /proc/self/maps could not be read: not tried again */
};
static __thread struct thread_state *ts;

static _Atomic uintptr_t self_lo, self_hi;

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

static uint64_t rd_leb(struct cur *c, int is_signed)
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

static uint64_t rd_uleb(struct cur *c)
{
	return rd_leb(c, 0);
}
static int64_t rd_sleb(struct cur *c)
{
	return (int64_t)rd_leb(c, 1);
}

/* Decodes a DW_EH_PE pointer. datarel needs a base (the .eh_frame_hdr); indirect pointers are
 * only ever skipped (personality), so their value is returned undereferenced. */
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
			return -EINVAL;
		v += datarel;
		break;
	default:
		return -EINVAL;
	}
	*out = v;
	return c->bad ? -EINVAL : 0;
}

static int32_t rd_s32(const uint8_t *p)
{
	int32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/* ---- locating and parsing the FDE -------------------------------------------------------- */

/* The .eh_frame_hdr layouts find_fde reads: version 1 with a sorted table of 4-byte offsets. */
static int hdr_supported(const uint8_t *hdr)
{
	return hdr[0] == 1 && hdr[3] == (PE_DATAREL | PE_SDATA4);
}

/* Binary search of the .eh_frame_hdr table (the usual datarel|sdata4 layout; anything else is
 * left to libunwind). Returns the FDE whose initial location is the last one <= ip. */
static const uint8_t *find_fde(const uint8_t *hdr, uintptr_t ip)
{
	struct cur c = {hdr + 4, hdr + 4 + 16, 0};
	uint64_t eh_frame, count;

	if (!hdr_supported(hdr))
		return NULL;
	if (rd_encoded(&c, hdr[1], (uintptr_t)hdr, &eh_frame) ||
	    rd_encoded(&c, hdr[2], (uintptr_t)hdr, &count))
		return NULL;
	const uint8_t *table = c.p;
	size_t lo = 0, hi = count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if ((uintptr_t)hdr + (intptr_t)rd_s32(table + 8 * mid) <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? hdr + rd_s32(table + 8 * (lo - 1) + 4) : NULL;
}

/* A CIE/FDE record: returns its body (after the length) and sets *end; NULL for the terminator
 * or the 64-bit format, which .eh_frame never uses in practice. */
static const uint8_t *record_body(const uint8_t *p, const uint8_t **end)
{
	uint32_t len;
	memcpy(&len, p, sizeof(len));
	if (len == 0 || len == 0xffffffffu)
		return NULL;
	*end = p + 4 + len;
	return p + 4;
}

struct cfi {
	uint64_t code_align;
	int64_t data_align;
	uint8_t fde_enc, has_z;
	struct cur cie_insns, fde_insns;
	uintptr_t pc_begin;
};

static int parse_cie_aug(struct cur *c, const char *aug, struct cfi *f)
{
	uint64_t len = rd_uleb(c), skipped;
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
			if (rd_encoded(c, (uint8_t)(enc & 0x0f), 0, &skipped))
				return -EINVAL;
			break;
		}
		case 'S': /* signal frame: the ip is exact, registers come from expressions */
		default:
			return -EINVAL;
		}
	}
	if (c->bad || end > c->end)
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

	if ((version != 1 && version != 3) || c.p + aug_len >= end)
		return -EINVAL;
	c.p += aug_len + 1;
	f->code_align = rd_uleb(&c);
	f->data_align = rd_sleb(&c);
	uint64_t ra = version == 1 ? rd_fixed(&c, 1) : rd_uleb(&c);
	f->fde_enc = PE_ABSPTR;
	f->has_z = aug[0] == 'z';
	if (ra != DW_RA)
		return -EINVAL;
	if (aug[0] == 'z' && parse_cie_aug(&c, aug + 1, f))
		return -EINVAL;
	if (aug[0] && aug[0] != 'z')
		return -EINVAL;
	f->cie_insns = c;
	return c.bad ? -EINVAL : 0;
}

static int parse_fde(const uint8_t *fde, uintptr_t ip, struct cfi *f)
{
	const uint8_t *end;
	const uint8_t *body = record_body(fde, &end);
	uint64_t begin, range, aug_len;

	if (!body || rd_s32(body) == 0 || parse_cie(body - rd_s32(body), f))
		return -EINVAL;
	struct cur c = {body + 4, end, 0};
	if ((f->fde_enc & PE_INDIRECT) || rd_encoded(&c, f->fde_enc, 0, &begin) ||
	    rd_encoded(&c, (uint8_t)(f->fde_enc & 0x0f), 0, &range))
		return -EINVAL;
	if (ip < begin || ip - begin >= range)
		return -ENOENT;
	if (f->has_z) {
		aug_len = rd_uleb(&c);
		c.p += aug_len;
	}
	if (c.bad || c.p > end)
		return -EINVAL;
	f->fde_insns = c;
	f->pc_begin = (uintptr_t)begin;
	return 0;
}

/* ---- running the CFA program ------------------------------------------------------------- */

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

/* Moves the row start by delta; returns 1 when the row containing ip has been reached. */
static int advance(uintptr_t *loc, uint64_t delta, uintptr_t ip)
{
	if (ip - *loc < delta)
		return 1;
	*loc += delta;
	return 0;
}

static void skip_block(struct cur *c)
{
	uint64_t len = rd_uleb(c);
	if (len > (uint64_t)(c->end - c->p))
		c->bad = 1;
	else
		c->p += len;
}

/* Executes instructions until the row for ip; init is the CIE state (NULL while running it). */
static int run_cfa(struct cur c, const struct cfi *f, uintptr_t ip, struct regs *s, const struct regs *init)
{
	struct regs saved[STATE_STACK];
	int depth = 0;
	uintptr_t loc = f->pc_begin;
	uint64_t reg, nloc;
	const int64_t da = f->data_align;

	if (!init)
		init = s;
	while (c.p < c.end && !c.bad) {
		uint8_t op = (uint8_t)rd_fixed(&c, 1);
		switch (op >> 6) {
		case 1:
			if (advance(&loc, (op & 0x3f) * f->code_align, ip))
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
			if (rd_encoded(&c, f->fde_enc, 0, &nloc))
				return -EINVAL;
			if (ip < nloc)
				return 0;
			loc = (uintptr_t)nloc;
			break;
		case CFA_ADVANCE_LOC1:
		case CFA_ADVANCE_LOC2:
		case CFA_ADVANCE_LOC4:
			if (advance(&loc,
			            rd_fixed(&c, op == CFA_ADVANCE_LOC4 ? 4u : (size_t)op - 1) *
			                f->code_align,
			            ip))
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
		case CFA_DEF_CFA_EXPRESSION:
			skip_block(&c);
			s->cfa_expr = 1;
			break;
		case CFA_GNU_ARGS_SIZE:
			rd_uleb(&c);
			break;
		default:
			return -EINVAL;
		}
	}
	return c.bad ? -EINVAL : 0;
}

static struct rule make_rule(const struct regs *s)
{
	struct rule r = {0, 0, 0, RULE_NONE};

	/* libunwind ends the chain on an undefined RA, and on x86_64 on an undefined RBP too. */
	if (s->ra == R_UNDEF || s->rbp == R_UNDEF) {
		r.kind = RULE_END;
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
	r.kind = RULE_OK;
	return r;
}

static struct rule compute_rule(uintptr_t ip)
{
	static const struct rule none = {0, 0, 0, RULE_NONE}, fp = {16, -16, DW_RBP, RULE_FP},
	                         fp_anon = {16, -16, DW_RBP, RULE_FP_ANON};
	struct dl_find_object obj;
	struct cfi f;
	struct regs init = {.cfa_reg = DW_RSP, .rbp = R_SAME, .ra = R_SAME, .rsp = R_SAME};

	if (_dl_find_object((void *)ip, &obj) != 0) /* code outside every module: JIT code */
		return fp_anon;
	if (!obj.dlfo_eh_frame) /* no .eh_frame_hdr: libunwind may still find .debug_frame */
		return none;
	const uint8_t *fde = find_fde(obj.dlfo_eh_frame, ip);
	int rc = fde ? parse_fde(fde, ip, &f) : hdr_supported(obj.dlfo_eh_frame) ? -ENOENT : -EINVAL;
	if (rc == -ENOENT) /* no FDE covers ip */
		return fp;
	if (rc)
		return none;
	if (run_cfa(f.cie_insns, &f, UINTPTR_MAX, &init, NULL))
		return none;
	struct regs s = init;
	if (run_cfa(f.fde_insns, &f, ip, &s, &init))
		return none;
	return make_rule(&s);
}

/* ---- the per-thread rule cache ----------------------------------------------------------- */

static struct entry *slot(uintptr_t ip)
{
	return &ts->cache[(ip * 0x9e3779b97f4a7c15ull) >> (64 - CACHE_BITS)];
}

/* The outermost walk of a thread owns the cache: it maps it on first use (mmap is
 * async-signal-safe) and clears it when the generation moved. A nested walk (signal handler)
 * of a missing or stale cache bypasses it. Returns whether it may be used. */
static int cache_usable(void)
{
	unsigned gen = atomic_load_explicit(&generation, memory_order_relaxed);
	if (__builtin_expect(ts && gen == ts->cache_generation, 1))
		return 1;
	if (walk_depth > 1)
		return 0;
	if (!ts) {
		int saved_errno = errno;
		void *p = mmap(NULL, sizeof(*ts), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		errno = saved_errno;
		if (p == MAP_FAILED)
			return 0;
		ts = p; /* zero-filled: an empty cache, no memo */
	}
	memset(ts->cache, 0, sizeof(ts->cache));
	ts->memos[0].n = ts->memos[1].n = 0;
	ts->cache_generation = gen;
	return 1;
}

void ct_unwind_thread_exit(void)
{
	if (!ts || walk_depth)
		return;
	int saved_errno = errno;
	munmap(ts, sizeof(*ts));
	errno = saved_errno;
	ts = NULL;
}

static struct rule rule_for(uintptr_t ip, int use_cache)
{
	struct entry *e = slot(ip);
	if (use_cache && e->ip == ip)
		return e->rule;
	struct rule r = compute_rule(ip);
	if (!use_cache || walk_depth > 1 || r.kind == RULE_FP_ANON)
		return r;
	/* Emptied first, so a signal handler walking meanwhile never sees a half-written entry. */
	e->ip = 0;
	atomic_signal_fence(memory_order_seq_cst);
	e->rule = r;
	atomic_signal_fence(memory_order_seq_cst);
	e->ip = ip;
	return r;
}

/* ---- walking ------------------------------------------------------------------------------ */

struct frame {
	uintptr_t ip, sp, bp;
};

static void self_range(uintptr_t *lo, uintptr_t *hi)
{
	struct dl_find_object obj;

	*hi = atomic_load_explicit(&self_hi, memory_order_acquire);
	if (*hi) {
		*lo = atomic_load_explicit(&self_lo, memory_order_relaxed);
		return;
	}
	*lo = *hi = 0;
	if (_dl_find_object((void *)(uintptr_t)&ct_unwind, &obj) != 0)
		return;
	*lo = (uintptr_t)obj.dlfo_map_start;
	*hi = (uintptr_t)obj.dlfo_map_end;
	atomic_store_explicit(&self_lo, *lo, memory_order_relaxed);
	atomic_store_explicit(&self_hi, *hi, memory_order_release);
}

/* Parses the hex number at *p, advancing it. */
static uintptr_t hex(const char **p)
{
	uintptr_t v = 0;
	for (;; (*p)++) {
		unsigned c = (unsigned char)**p, d = c - '0' < 10         ? c - '0'
		                                     : (c | 32) - 'a' < 6 ? (c | 32) - 'a' + 10
		                                                          : 16;
		if (d == 16)
			return v;
		v = v << 4 | d;
	}
}

/* One line of /proc/self/maps, "lo-hi perms ...": whether its range holds sp. */
static int line_holds(const char *line, uintptr_t sp, uintptr_t *lo, uintptr_t *hi)
{
	const char *p = line;
	uintptr_t a = hex(&p);
	if (*p++ != '-')
		return 0;
	uintptr_t b = hex(&p);
	if (sp < a || sp >= b)
		return 0;
	*lo = a, *hi = b;
	return 1;
}

/* The mapping that holds sp, from /proc/self/maps, read with no allocation (this runs inside
 * malloc). Returns 0, or -1 when it cannot be read. */
static int find_mapping(uintptr_t sp, uintptr_t *lo, uintptr_t *hi)
{
	char buf[4096];
	size_t len = 0;
	int found = 0, fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	for (;;) {
		ssize_t k = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (k <= 0)
			break;
		len += (size_t)k;
		buf[len] = 0;
		char *start = buf, *nl;
		while (!found && (nl = strchr(start, '\n'))) {
			found = line_holds(start, sp, lo, hi);
			start = nl + 1;
		}
		if (found || start == buf) /* found, or a line longer than the buffer */
			break;
		len -= (size_t)(start - buf);
		memmove(buf, start, len);
	}
	close(fd);
	return found ? 0 : -1;
}

/* Whether [sp, end) lies in the thread's stack: 1, 0, or -1 when the stack is not known (a nested
 * walk, or /proc unreadable): then libunwind decides. */
static int in_stack(uintptr_t sp, uintptr_t end)
{
	if (!ts)
		return -1;
	if (sp >= ts->stack_lo && sp < ts->stack_hi)
		return end <= ts->stack_hi;
	if (walk_depth > 1 || ts->no_maps)
		return -1;
	uintptr_t lo, hi;
	int saved_errno = errno, rc = find_mapping(sp, &lo, &hi);
	errno = saved_errno;
	if (rc < 0) {
		ts->no_maps = 1;
		return -1;
	}
	/* A signal handler's walk may read these between two stores: it must see an empty range. */
	ts->stack_hi = 0;
	atomic_signal_fence(memory_order_seq_cst);
	ts->stack_lo = lo;
	atomic_signal_fence(memory_order_seq_cst);
	ts->stack_hi = hi;
	return end <= hi;
}

/* Applies a rule, refusing anything that does not look like a caller's frame. *rbp_slot: where
 * the caller's RBP was read, 0 when it was kept. Returns 0, -EFAULT or -ENOENT (the walk ends), or
 * -EAGAIN (a frame-pointer guess whose stack is not known: libunwind takes the walk). */
static int step(struct frame *f, struct rule r, uintptr_t *rbp_slot)
{
	uintptr_t cfa = (r.cfa_reg == DW_RSP ? f->sp : f->bp) + (uintptr_t)(intptr_t)r.cfa_off;
	uintptr_t slot = r.rbp_off ? cfa + (uintptr_t)(intptr_t)r.rbp_off : 0;

	if (cfa <= f->sp || (cfa & 7) || cfa - f->sp > MAX_FRAME_SPAN)
		return -EFAULT;
	if (slot && slot < f->sp)
		return -EFAULT;
	if (r.kind == RULE_FP || r.kind == RULE_FP_ANON) {
		int in = in_stack(f->sp, cfa);
		if (in <= 0)
			return in < 0 ? -EAGAIN : -EFAULT;
	}
	uintptr_t ip = *(const uintptr_t *)(cfa - 8);
	if (!ip)
		return -ENOENT;
	if (slot)
		f->bp = *(const uintptr_t *)slot;
	f->ip = ip;
	f->sp = cfa;
	*rbp_slot = slot;
	return 0;
}

/* ---- the memo of the previous walk --------------------------------------------------------
 * Consecutive walks of a thread share their outer frames. A walk is a function of its register
 * state at a frame and of the stack words it reads from there on (return addresses, saved RBPs);
 * so when a frame's state matches one of the previous walk's and those words are unchanged, the
 * rest of the previous walk is the rest of this one. The checks are independent loads, not the
 * chain of dependent loads a walk is. Only walks that reached the outermost frame are kept. */

/* Which frames' outcome depends on their RBP: backwards, from frame `from` down to 0. */
static void memo_needs_bp(struct memo *m, int from)
{
	int needs = from + 1 < m->n && (m->f[from + 1].flags & MEMO_NEEDS_BP);
	for (int i = from; i >= 0; i--) {
		struct memo_frame *fr = &m->f[i];
		needs = (fr->flags & MEMO_CFA_RBP) || ((fr->flags & MEMO_KEEPS_RBP) && needs);
		fr->flags = needs ? fr->flags | MEMO_NEEDS_BP : fr->flags & ~(unsigned)MEMO_NEEDS_BP;
	}
}

static int memo_matches(const struct memo *m, int k, const struct frame *f)
{
	const struct memo_frame *fr = &m->f[k];

	if (fr->sp != f->sp || fr->ip != f->ip || ((fr->flags & MEMO_NEEDS_BP) && fr->bp != f->bp))
		return 0;
	for (int i = k; i + 1 < m->n; i++) {
		const struct memo_frame *cur = &m->f[i], *up = &m->f[i + 1];
		if (*(const uintptr_t *)(up->sp - 8) != up->ip)
			return 0;
		if (cur->rbp_slot && (up->flags & MEMO_NEEDS_BP) &&
		    *(const uintptr_t *)cur->rbp_slot != up->bp)
			return 0;
	}
	return 1;
}

/* This walk's frames so far are in `next` (count m); the previous walk's from frame k on follow. */
static int memo_reuse(const struct memo *prev, int k, struct memo *next, int m, uintptr_t *ips, int n,
                      int max, int *truncated)
{
	int tail = prev->n - k, copied = tail < max - n ? tail : max - n;

	for (int i = 0; i < copied; i++)
		ips[n + i] = prev->f[k + i].ip;
	*truncated = copied < tail;
	/* The same stack as last time: the memo already describes it. */
	if (m == 0 && k == 0) {
		repeated = memo_was_current && !*truncated;
		memo_current = !*truncated;
		return n + copied;
	}
	if (m + tail > MEMO_FRAMES)
		return n + copied;
	memo_current = !*truncated;
	for (int i = 0; i < tail; i++)
		next->f[m + i] = prev->f[k + i];
	next->n = m + tail;
	memo_needs_bp(next, m - 1);
	ts->memo_last ^= 1;
	return n + copied;
}

static void memo_record(struct memo *m, int i, const struct frame *f, struct rule r)
{
	struct memo_frame *fr = &m->f[i];

	fr->ip = f->ip;
	fr->sp = f->sp;
	fr->bp = f->bp;
	fr->rbp_slot = 0;
	fr->flags = (r.cfa_reg == DW_RBP ? MEMO_CFA_RBP : 0u) | (r.rbp_off ? 0u : MEMO_KEEPS_RBP);
}

static void memo_commit(struct memo *m, int count)
{
	m->n = count;
	memo_needs_bp(m, count - 1);
	ts->memo_last ^= 1;
	memo_current = 1;
}

/* Returns the frame count, or -1 when some frame needs libunwind. The outermost walk of a thread
 * (not one nested in a signal handler) uses and renews the memo. */
static int walk(struct frame *f, uintptr_t adjust, uintptr_t *ips, int max, int *truncated)
{
	uintptr_t lo, hi, scratch;
	int n = 0, in_self = 1, use_cache = cache_usable();
	int use_memo = use_cache && walk_depth == 1, k = 0, m = 0;
	struct memo *prev = use_memo ? &ts->memos[ts->memo_last] : NULL;
	struct memo *next = use_memo ? &ts->memos[ts->memo_last ^ 1] : NULL;
	int prev_n = use_memo ? prev->n : 0;

	self_range(&lo, &hi);
	for (;;) {
		in_self = in_self && f->ip - lo < hi - lo;
		if (!in_self) {
			while (k < prev_n && prev->f[k].sp < f->sp)
				k++;
			if (k < prev_n && memo_matches(prev, k, f))
				return memo_reuse(prev, k, next, m, ips, n, max, truncated);
			if (n == max) {
				*truncated = 1;
				return n;
			}
			ips[n++] = f->ip;
		}
		/* A return address points after the call; the call itself decides the rule. */
		struct rule r = rule_for(f->ip - adjust, use_cache);
		if (r.kind == RULE_NONE)
			return -1;
		use_memo = use_memo && m < MEMO_FRAMES;
		if (use_memo && !in_self)
			memo_record(next, m++, f, r);
		if (r.kind == RULE_END) {
			if (use_memo)
				memo_commit(next, m);
			return n;
		}
		int rc = step(f, r, use_memo && !in_self ? &next->f[m - 1].rbp_slot : &scratch);
		if (rc == -EAGAIN)
			return -1;
		if (rc)
			return n;
		adjust = 1;
	}
}

/* Both entry points: the fast walk from frame f (adjust 1 when f->ip is a return address), or
 * libunwind's when some frame has no simple rule. */
static int unwind_frame(struct frame *f, uintptr_t adjust, uintptr_t *ips, int max, int *truncated)
{
	int dummy, n;

	if (!truncated)
		truncated = &dummy;
	*truncated = 0;
	if (max < 0)
		max = 0;
	repeated = 0;
	memo_was_current = memo_current;
	memo_current = 0;
	walk_depth++;
	atomic_signal_fence(memory_order_seq_cst);
	n = walk(f, adjust, ips, max, truncated);
	atomic_signal_fence(memory_order_seq_cst);
	walk_depth--;
	if (n >= 0)
		return n;
	fallbacks++;
	*truncated = 0;
	return ct_unwind_slow(ips, max, truncated);
}

__attribute__((noinline)) int ct_unwind(uintptr_t *ips, int max, int *truncated)
{
	struct frame f;

	/* The registers at one instruction of this very function, whose CFI row describes them. */
	__asm__ volatile("1: leaq 1b(%%rip), %0\n\t"
	                 "movq %%rsp, %1\n\t"
	                 "movq %%rbp, %2"
	                 : "=r"(f.ip), "=r"(f.sp), "=r"(f.bp));
	return unwind_frame(&f, 0, ips, max, truncated);
}

int ct_unwind_from(uintptr_t ra, uintptr_t sp, uintptr_t bp, uintptr_t *ips, int max, int *truncated)
{
	struct frame f = {ra, sp, bp};
	return unwind_frame(&f, 1, ips, max, truncated);
}

__attribute__((noinline)) int ct_unwind_slow(uintptr_t *ips, int max, int *truncated)
{
	int saved_errno = errno, n = 0, in_self = 1, dummy;
	unw_context_t ctx;
	unw_cursor_t cursor;
	unw_word_t ip;
	uintptr_t lo, hi;

	if (!truncated)
		truncated = &dummy;
	*truncated = 0;
	if (max < 0)
		max = 0;
	self_range(&lo, &hi);
	if (unw_getcontext(&ctx) != 0 || unw_init_local(&cursor, &ctx) != 0)
		goto out;
	do {
		if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0)
			break;
		in_self = in_self && ip - lo < hi - lo;
		if (in_self)
			continue;
		if (n == max) {
			*truncated = 1;
			break;
		}
		ips[n++] = (uintptr_t)ip;
	} while (unw_step(&cursor) > 0);
out:
	errno = saved_errno;
	return n;
}

int ct_unwind_repeated(void)
{
	return repeated;
}

void ct_unwind_invalidate(void)
{
	atomic_fetch_add_explicit(&generation, 1, memory_order_relaxed);
}
