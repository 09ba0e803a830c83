/* SPDX-License-Identifier: MIT */
/* The inline chains ct_symbolize gives, against libdw's dwarf_getscopes and dwarf_getscopes_die on
 * the same module: for addresses spread over every function of libc (with libc6-dbg's debug file)
 * and of this test, all resolved by one symbolizer, so that most are found through a CU's index of
 * its top DIEs (built from a CU's second address on) and the first of each CU by a walk. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize.h"

#define ADDRESSES 1500 /* per module at most: a spread over its functions */

static int failures;

/* The raw name ct_symbolize gives an inlined frame as its symbol. */
static const char *raw_name(Dwarf_Die *die)
{
	static const int attrs[] = {DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name};
	Dwarf_Attribute a;
	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		const char *name = dwarf_formstring(dwarf_attr_integrate(die, attrs[i], &a));
		if (name)
			return name;
	}
	return NULL;
}

/* The functions inlined at addr (a dwfl address), innermost first, as libdw finds them: their raw
 * names into names[0..], their count, or -1 when no CU holds addr (not compared). */
static int libdw_chain(Dwfl_Module *mod, Dwarf_Addr addr, const char **names, int max)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, &bias);
	if (!cu || dwarf_haspc(cu, addr - bias) != 1)
		return -1;
	Dwarf_Die *scopes = NULL;
	int n = dwarf_getscopes(cu, addr - bias, &scopes), inlined = 0;
	for (int i = 0; i < n; i++)
		inlined |= dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine;
	if (inlined) { /* the callers as they nest in the code, not the abstract definition's parents */
		Dwarf_Die innermost = scopes[0];
		free(scopes);
		scopes = NULL;
		n = dwarf_getscopes_die(&innermost, &scopes);
	}
	int k = 0;
	for (int i = 0; i < n && k < max; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_subprogram)
			break;
		if (tag == DW_TAG_inlined_subroutine)
			names[k++] = raw_name(&scopes[i]);
	}
	free(scopes);
	return k;
}

static int same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Compares the chains at addresses spread over path's functions. Returns how many had inlines. */
static int test_module(const char *path, int needs_inlines)
{
	struct ct_symbolizer *s = ct_symbolizer_new();
	struct ct_module m = {.id = 0, .path = (char *)path};
	enum ct_module_file file;
	int err;
	Dwfl_Module *mod = s ? ct_symbolizer_module(s, &m, &file, &err) : NULL;
	if (!mod) {
		printf("skip %s: cannot be opened\n", path);
		ct_symbolizer_free(s);
		return 0;
	}
	int nsyms = dwfl_module_getsymtab(mod), step = nsyms / ADDRESSES + 1, compared = 0, chains = 0;
	for (int i = 0; i < nsyms; i += step) {
		GElf_Sym sym;
		GElf_Addr addr;
		if (!dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL) ||
		    GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_size < 4)
			continue;
		for (GElf_Addr at = addr + 1; at < addr + sym.st_size; at += sym.st_size / 3 + 1) {
			const char *want[CT_SYMBOLIZE_MAX];
			int n = libdw_chain(mod, at, want, CT_SYMBOLIZE_MAX - 1);
			if (n < 0)
				continue;
			struct ct_frame f[CT_SYMBOLIZE_MAX];
			int got = ct_symbolize(s, &m, at + 1, f, CT_SYMBOLIZE_MAX), ok = got == n + 1;
			for (int k = 0; ok && k < n; k++)
				ok = f[k].inlined && same(f[k].symbol, want[k]);
			if (!ok && failures++ < 10)
				printf("FAIL %s+0x%llx: %d inlined frames, libdw %d (%s / %s)\n", path,
				       (unsigned long long)at, got - 1, n, got > 1 ? f[0].symbol : "-",
				       n ? want[0] : "-");
			compared++;
			chains += n > 0;
		}
	}
	printf("%s: %d addresses compared, %d in inlined code\n", path, compared, chains);
	if (needs_inlines && !chains && failures++ < 10)
		printf("FAIL %s: no address in inlined code\n", path);
	ct_symbolizer_free(s);
	return chains;
}

int main(void)
{
	static const char libc[] = "/lib/x86_64-linux-gnu/libc.so.6";
	test_module("/proc/self/exe", 0);
	if (!access(libc, R_OK))
		test_module(libc, 0);
	return failures ? 1 : 0;
}
