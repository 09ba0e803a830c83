/* SPDX-License-Identifier: MIT */
/* The FDE row tables on real code (preload/cfi.c's ct_cfi_fde_rows, preload/cfirows.c's store): every
 * FDE of the modules loaded here (libc, ld.so, this program, and libstdc++ and libdw when installed),
 * each table against ct_cfi_fde_rule at its rows' edges and middles, the store answering the same when
 * it makes a table, reads one, reads without making (a nested walk), after a generation change, and
 * from four threads at once; two FDEs laid out here with more rows than the scratch holds and than a
 * table may have; and the store given back. */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cfi.h"
#include "cfirows.h"

#define MAX_FDES 200000
#define THREADS 4

static const uint8_t *fdes[MAX_FDES];
static uintptr_t begins[MAX_FDES], ranges[MAX_FDES]; /* a table's FDE's; range 0: no table */
static int n_fdes, failures;
static long tables, rows_total, no_table[4]; /* -ENOSPC, -ENOTSUP, -EINVAL, other */

static int32_t s32(const uint8_t *p)
{
	int32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/* The FDEs of one module's .eh_frame_hdr, in the layout every linker writes (cfi.h's). */
static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size, (void)arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type != PT_GNU_EH_FRAME)
			continue;
		const uint8_t *hdr = (const uint8_t *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
		if (hdr[0] != 1 || hdr[1] != 0x1b || hdr[2] != 0x03 || hdr[3] != 0x3b)
			continue;
		uint32_t count;
		memcpy(&count, hdr + 8, sizeof(count));
		for (uint32_t k = 0; k < count && n_fdes < MAX_FDES; k++)
			fdes[n_fdes++] = hdr + s32(hdr + 12 + 8 * k + 4);
	}
	return 0;
}

static void fail(const char *what, const uint8_t *fde, uintptr_t ip, int rc_want, int rc_got)
{
	Dl_info d;
	if (failures++ < 20)
		fprintf(stderr, "FAIL %s: FDE %p (%s), ip %#lx: rc %d, the CFI's %d\n", what,
		        (const void *)fde, dladdr((void *)ip, &d) && d.dli_fname ? d.dli_fname : "?",
		        (unsigned long)ip, rc_got, rc_want);
}

/* Whether two answers agree: the same return, and the same rule when there is one. */
static int same(int rc_a, const struct ct_cfi_rule *a, int rc_b, const struct ct_cfi_rule *b)
{
	return rc_a == rc_b && (rc_a || !memcmp(a, b, sizeof(*a)));
}

/* The ips a table is checked at: each row's first byte, the one before, its middle and its last. */
static int probes(const struct ct_cfi_row *rows, int n, uintptr_t begin, uintptr_t range, uintptr_t *ips)
{
	int k = 0;
	for (int i = 0; i < n && k < 4 * CT_CFIROWS_MAX; i++) {
		uintptr_t lo = rows[i].start, hi = i + 1 < n ? rows[i + 1].start : range;
		ips[k++] = begin + lo;
		ips[k++] = begin + lo - 1;
		ips[k++] = begin + lo + (hi - lo) / 2;
		ips[k++] = begin + hi - 1;
	}
	ips[k++] = begin + range; /* past the FDE */
	return k;
}

/* FDE i: its table against the CFI, then the store (generation gen) making and reading it. */
static void check_fde(int i, unsigned gen, struct ct_cfi_row *scratch)
{
	static struct ct_cfi_row rows[CT_CFIROWS_MAX];
	static uintptr_t ips[4 * CT_CFIROWS_MAX + 1];
	const uint8_t *fde = fdes[i];
	uintptr_t begin = 0, range = 0;
	int n = ct_cfi_fde_rows(fde, rows, CT_CFIROWS_MAX, &begin, &range), k;
	int counted = ct_cfi_fde_rows(fde, NULL, CT_CFIROWS_MAX, &begin, &range);
	if (n != counted)
		fail("count", fde, begin, n, counted);
	if (n < 0) {
		no_table[n == -ENOSPC ? 0 : n == -ENOTSUP ? 1 : n == -EINVAL ? 2 : 3] += gen == 1;
		return;
	}
	begins[i] = begin;
	ranges[i] = range;
	tables += gen == 1;
	rows_total += gen == 1 ? n : 0;
	k = probes(rows, n, begin, range, ips);
	for (int j = 0; j < k; j++) {
		struct ct_cfi_rule want, got, kept;
		uintptr_t ip = ips[j];
		int rc = ct_cfi_fde_rule(fde, ip, &want), in = ip - begin < range;
		if (in)
			got = ct_cfi_row_rule(rows, n, ip - begin);
		if (rc != (in ? 0 : -ENOENT) || (in && memcmp(&got, &want, sizeof(got))))
			fail("table", fde, ip, rc, in ? 0 : -ENOENT);
		/* the store: made (first ip) or read (the rest), read without making, and again */
		int rc_kept = ct_cfirows_rule(fde, ip, gen, scratch, &kept);
		if (!same(rc, &want, rc_kept, &kept))
			fail("store", fde, ip, rc, rc_kept);
		rc_kept = ct_cfirows_rule(fde, ip, gen, NULL, &kept);
		if (!same(rc, &want, rc_kept, &kept))
			fail("store, read only", fde, ip, rc, rc_kept);
	}
}

/* Every FDE with a table through the store alone (generation gen), against the CFI at its first
 * bytes: the threads make, publish and read tables at the same time. */
static void *sweep(void *arg)
{
	unsigned gen = (unsigned)(uintptr_t)arg;
	static __thread struct ct_cfi_row scratch[CT_CFIROWS_SCRATCH];
	for (int i = 0; i < n_fdes; i++)
		for (uintptr_t off = 0; off < ranges[i] && off < 64; off += 7) {
			struct ct_cfi_rule want, got;
			int rc = ct_cfi_fde_rule(fdes[i], begins[i] + off, &want);
			int rc_got = ct_cfirows_rule(fdes[i], begins[i] + off, gen, scratch, &got);
			if (!same(rc, &want, rc_got, &got))
				fail("threads", fdes[i], begins[i] + off, rc, rc_got);
		}
	return NULL;
}

static size_t put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
	return 4;
}

/* A CIE (gcc's: "zR", FDE pointers pcrel|sdata4, CFA = RSP+8, RA at CFA-8) and an FDE of n rows after
 * it at buf: the CFA moves between RSP+16 and RSP+24 at every byte of a function of n bytes (which
 * lies at buf + 1 MiB: never run, only looked up), from RSP+24 first with swap. Returns the FDE. */
static const uint8_t *lay_out(uint8_t *buf, int n, int swap)
{
	static const uint8_t cie[] = {0x14, 0,    0,    0,    0,    0,    0,    0,    0x01, 'z',  'R', 0,
	                              0x01, 0x78, 0x10, 0x01, 0x1b, 0x0c, 0x07, 0x08, 0x90, 0x01, 0,   0};
	memcpy(buf, cie, sizeof(cie));
	uint8_t *fde = buf + sizeof(cie), *p = fde + 4;
	p += put32(p, (uint32_t)(p - buf));                                    /* back to the CIE */
	p += put32(p, (uint32_t)((uintptr_t)buf + (1u << 20) - (uintptr_t)p)); /* pc_begin, pcrel */
	p += put32(p, (uint32_t)n);                                            /* range */
	*p++ = 0;                                                              /* no augmentation data */
	for (int i = 0; i < n; i++) {
		*p++ = 0x0e; /* def_cfa_offset 16 or 24, then advance_loc 1 */
		*p++ = (uint8_t)((i & 1) ^ swap ? 24 : 16);
		*p++ = 0x41;
	}
	while ((p - fde) % 4)
		*p++ = 0; /* DW_CFA_nop */
	put32(fde, (uint32_t)(p - fde - 4));
	return fde;
}

/* The table the store keeps is what answers: fde, made with 775 rows in generation 4, is rewritten in
 * place with its CFA offsets swapped. Generation 4 still gives the rules of before (the CFI gives
 * others now); then a new generation (one table a slot: it takes 4's place), those of now. */
static void check_kept(uint8_t *buf, int n, struct ct_cfi_row *scratch)
{
	static struct ct_cfi_rule before[CT_CFIROWS_SCRATCH * 3 + 7];
	uintptr_t begin = (uintptr_t)buf + (1u << 20);
	const uint8_t *fde = buf + 24;
	for (int i = 0; i < n; i++)
		if (ct_cfi_fde_rule(fde, begin + (uintptr_t)i, &before[i]))
			fail("kept, before", fde, begin + (uintptr_t)i, 0, -1);
	lay_out(buf, n, 1);
	for (int gen = 4; gen <= 6; gen += 2)
		for (int i = 0; i < n; i++) {
			struct ct_cfi_rule now, got;
			uintptr_t ip = begin + (uintptr_t)i;
			int rc = ct_cfi_fde_rule(fde, ip, &now);
			if (rc || !memcmp(&now, &before[i], sizeof(now)))
				fail("kept, the CFI rewritten", fde, ip, 1, rc);
			rc = ct_cfirows_rule(fde, ip, (unsigned)gen, scratch, &got);
			if (!same(0, gen == 4 ? &before[i] : &now, rc, &got))
				fail(gen == 4 ? "kept, the table of before"
				              : "kept, a new generation's table",
				     fde, ip, 0, rc);
		}
}

/* FDEs with more rows than the scratch holds (counted, then made in the store) and than a table may
 * have (none kept): the store's answer at every ip of them, made and then read. */
static void check_large(struct ct_cfi_row *scratch)
{
	static uint8_t buf[64 + 3 * (CT_CFIROWS_MAX + 100)];
	const int sizes[] = {CT_CFIROWS_SCRATCH * 3 + 7, CT_CFIROWS_MAX + 100};
	for (int k = 0; k < 2; k++) {
		const uint8_t *fde = lay_out(buf, sizes[k], 0);
		uintptr_t begin = (uintptr_t)buf + (1u << 20);
		for (int pass = 0; pass < 2; pass++)
			for (uintptr_t ip = begin - 1; ip <= begin + (uintptr_t)sizes[k]; ip += k ? 13 : 1) {
				struct ct_cfi_rule want, got;
				int rc = ct_cfi_fde_rule(fde, ip, &want);
				int rc_got = ct_cfirows_rule(fde, ip, 4 + (unsigned)k, scratch, &got);
				if (!same(rc, &want, rc_got, &got))
					fail("large", fde, ip, rc, rc_got);
			}
		uintptr_t range;
		int n = ct_cfi_fde_rows(fde, NULL, CT_CFIROWS_MAX, &begin, &range);
		if (n != (k ? -ENOSPC : sizes[k]))
			fail("large, counted", fde, begin, k ? -ENOSPC : sizes[k], n);
		if (!k)
			check_kept(buf, sizes[k], scratch);
	}
}

int main(void)
{
	static struct ct_cfi_row scratch[CT_CFIROWS_SCRATCH];
	const char *optional[] = {"libstdc++.so.6", "libdw.so.1"};
	for (size_t i = 0; i < sizeof(optional) / sizeof(optional[0]); i++)
		dlopen(optional[i], RTLD_NOW | RTLD_LOCAL); /* more code to read when installed */
	dl_iterate_phdr(collect, NULL);
	if (n_fdes < 1000) {
		fprintf(stderr, "test-cfirows: only %d FDEs in the loaded modules\n", n_fdes);
		return 1;
	}
	for (int i = 0; i < n_fdes; i++)
		check_fde(i, 1, scratch);
	check_large(scratch);               /* while the store has room: the sweeps below fill it */
	for (int i = 0; i < n_fdes; i += 3) /* a dlclose moved the generation: the old tables are not read */
		check_fde(i, 2, scratch);
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, sweep, (void *)(uintptr_t)3);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	/* Given back: answers come from the CFI, and no store is mapped again. */
	if (!ct_cfirows_bytes())
		fail("no store mapped", fdes[0], 0, 1, 0);
	ct_cfirows_release();
	for (int i = 0; i < n_fdes; i += 97)
		check_fde(i, 5, scratch);
	if (ct_cfirows_bytes())
		fail("a store mapped after the release", fdes[0], 0, 0, 1);
	/* A module's code keeps tables for nearly every function: only .plt's and broken CFI have none. */
	long none = no_table[0] + no_table[1] + no_table[2] + no_table[3];
	if (none * 100 > n_fdes) {
		fprintf(
		    stderr,
		    "FAIL: %ld of %d FDEs have no table (%ld too many rows, %ld unsupported, %ld invalid)\n",
		    none, n_fdes, no_table[0], no_table[1], no_table[2]);
		failures++;
	}
	if (failures)
		return fprintf(stderr, "test-cfirows: %d failures\n", failures), 1;
	printf("test-cfirows: %d FDEs, %ld tables of %.1f rows on average (%ld with too many rows, %ld "
	       "unsupported, %ld invalid, %ld other): ok\n",
	       n_fdes, tables, tables ? (double)rows_total / (double)tables : 0.0, no_table[0], no_table[1],
	       no_table[2], no_table[3]);
	return 0;
}
