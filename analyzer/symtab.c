/* SPDX-License-Identifier: MIT */
/* A module's symbol table sorted by address, for symbolize.c: the unambiguous cases answered by
 * binary search, exactly as libdwfl's dwfl_module_addrsym would answer them. */
#include <gelf.h>
#include <stdlib.h>

#include "symtab.h"

/* A sized symbol: [lo, hi) in dwfl addresses. */
struct sym {
	GElf_Addr lo, hi;
	const char *name;
};

struct ct_symtab {
	struct sym *v;     /* sized symbols, by lo */
	GElf_Addr *max_hi; /* max_hi[i]: the highest hi of v[0..i-1] (0 for i = 0) */
	size_t n;
	GElf_Addr sizeless; /* the lowest address of a sizeless symbol, or ~0 */
};

/* The symbols libdwfl's search considers at all (dwfl_module_addrsym.c, search_table). */
static int candidate(const char *name, const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);
	return name && name[0] && sym->st_shndx != SHN_UNDEF && type != STT_SECTION && type != STT_FILE &&
	       type != STT_TLS;
}

static int by_lo(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Fills t from mod's n symbols; returns 0 or -1 (no memory). */
static int fill(struct ct_symtab *t, Dwfl_Module *mod, int n)
{
	t->v = malloc((size_t)n * sizeof(*t->v));
	t->max_hi = malloc((size_t)n * sizeof(*t->max_hi));
	if (!t->v || !t->max_hi)
		return -1;
	t->sizeless = ~(GElf_Addr)0;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);
		if (!candidate(name, &sym))
			continue;
		if (!sym.st_size) {
			t->sizeless = addr < t->sizeless ? addr : t->sizeless;
			continue;
		}
		t->v[t->n++] = (struct sym){addr, addr + sym.st_size, name};
	}
	qsort(t->v, t->n, sizeof(*t->v), by_lo);
	GElf_Addr hi = 0;
	for (size_t i = 0; i < t->n; i++) {
		t->max_hi[i] = hi;
		hi = t->v[i].hi > hi ? t->v[i].hi : hi;
	}
	return 0;
}

struct ct_symtab *ct_symtab_build(Dwfl_Module *mod)
{
	int n = dwfl_module_getsymtab(mod);
	struct ct_symtab *t = n > 1 ? calloc(1, sizeof(*t)) : NULL;
	if (t && fill(t, mod, n) < 0) {
		ct_symtab_free(t);
		return NULL;
	}
	return t;
}

void ct_symtab_free(struct ct_symtab *t)
{
	if (!t)
		return;
	free(t->v);
	free(t->max_hi);
	free(t);
}

/* The last symbol starting at or below addr, or -1. */
static long last_at_or_below(const struct ct_symtab *t, GElf_Addr addr)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->v[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

/* libdwfl takes the one sized symbol that covers addr; with none, a sizeless one below addr may
 * stand in. Overlaps and aliases go by its scan order and binding rules: those are left to it. */
int ct_symtab_lookup(const struct ct_symtab *t, GElf_Addr addr, const char **name)
{
	long j = last_at_or_below(t, addr);
	int covers = j >= 0 && addr < t->v[j].hi;
	int others = j > 0 && t->max_hi[j] > addr;
	*name = NULL;
	if (others)
		return 0;
	if (covers) {
		*name = t->v[j].name;
		return 1;
	}
	return t->sizeless > addr;
}
