/* SPDX-License-Identifier: MIT */
/* A module's symbol table sorted by address, for symbolize.c: the unambiguous cases answered by
 * binary search, exactly as libdwfl's dwfl_module_addrinfo would answer them; the others asked of
 * libdwfl, whose answer for an address no sized symbol covers is kept for the whole gap it lies in
 * (a stripped binary's static functions: every frame of cc1 but its exported ones). */
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "symtab.h"

/* A sized symbol: [lo, hi) in dwfl addresses. */
struct sym {
	GElf_Addr lo, hi;
	const char *name;
	int index; /* in libdwfl's numbering: the order it scans in */
	int rank;  /* its binding, as libdwfl prefers them: global 3, weak 2, local 1, else 0 */
};

/* A section's addresses, in dwfl addresses. */
struct span {
	GElf_Addr lo, hi;
};

/* libdwfl's answer for an uncovered address, by the gap and sections it lies in (gap_key). */
struct gap {
	uint64_t key; /* 0: an empty slot */
	const char *name;
};

struct ct_symtab {
	struct sym *v;     /* sized symbols, by lo */
	GElf_Addr *max_hi; /* max_hi[i]: the highest hi of v[0..i-1] (0 for i = 0) */
	size_t n;
	GElf_Addr sizeless; /* the lowest address of a sizeless symbol, or ~0 */
	int first_global;   /* libdwfl scans from here to the end, then the rest when that found none */
	GElf_Addr *starts;  /* every symbol's address, sized or not, sorted */
	size_t nstarts;
	/* the addresses of the sizeless symbols in the globals' part, sorted: one at the very address
	 * keeps libdwfl from scanning the locals, so a local symbol covering it is never its answer */
	GElf_Addr *labels;
	size_t nlabels;
	/* The sections of the module's ELF file and of the one its symbols come from, in their order:
	 * libdwfl takes a sizeless symbol only in the section of the address. */
	struct span *secs[2];
	size_t nsecs[2];
	struct gap *gaps; /* open addressing, power-of-two size, at most half full */
	size_t gap_size, gap_used;
};

/* The symbols libdwfl's search considers at all (dwfl_module_addrsym.c, search_table). */
static int candidate(const char *name, const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);
	return name && name[0] && sym->st_shndx != SHN_UNDEF && type != STT_SECTION && type != STT_FILE &&
	       type != STT_TLS;
}

/* Sorts v[0..n) by lo, stably: v comes in index order, so ties stay by index. A byte-wise radix
 * sort (the bytes all symbols share skipped): qsort's calls through a comparator were most of the
 * index's cost on a program of 30,000 symbols. Returns 0 or -1 (no memory). */
static int sort_by_lo(struct sym *v, size_t n)
{
	size_t(*count)[256] = calloc(8, sizeof(*count));
	struct sym *tmp = n > 1 ? malloc(n * sizeof(*tmp)) : NULL;
	if (n > 1 && (!count || !tmp)) {
		free(count);
		free(tmp);
		return -1;
	}
	for (size_t i = 0; i < n && n > 1; i++)
		for (int b = 0; b < 8; b++)
			count[b][(v[i].lo >> (8 * b)) & 0xff]++;
	struct sym *from = v, *to = tmp;
	for (int b = 0; b < 8 && n > 1; b++) {
		if (count[b][(v[0].lo >> (8 * b)) & 0xff] == n)
			continue; /* every symbol has this byte */
		size_t at = 0;
		for (int k = 0; k < 256; k++) {
			size_t c = count[b][k];
			count[b][k] = at;
			at += c;
		}
		for (size_t i = 0; i < n; i++)
			to[count[b][(from[i].lo >> (8 * b)) & 0xff]++] = from[i];
		struct sym *t = from;
		from = to, to = t;
	}
	if (from != v)
		memcpy(v, from, n * sizeof(*v));
	free(count);
	free(tmp);
	return 0;
}

/* dwfl_module_addrsym.c's binding_value. */
static int rank(const GElf_Sym *sym)
{
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
		return 3;
	case STB_WEAK:
		return 2;
	case STB_LOCAL:
		return 1;
	default:
		return 0;
	}
}

static int by_addr(const void *a, const void *b)
{
	const GElf_Addr *x = a, *y = b;
	return *x < *y ? -1 : *x > *y;
}

/* t->starts: the sizeless symbols' addresses (nstarts of them) and the sized ones' (v, sorted), all
 * sorted: the few sizeless ones sorted, then both merged from the end, in place. */
static void merge_starts(struct ct_symtab *t)
{
	qsort(t->starts, t->nstarts, sizeof(*t->starts), by_addr);
	size_t a = t->nstarts, b = t->n, out = t->nstarts + t->n;
	while (b) {
		if (a && t->starts[a - 1] > t->v[b - 1].lo)
			t->starts[--out] = t->starts[--a];
		else
			t->starts[--out] = t->v[--b].lo;
	}
	t->nstarts += t->n;
}

/* elf's sections, their addresses moved by bias. Returns 0 or -1 (no memory). */
static int read_sections(Elf *elf, GElf_Addr bias, struct span **out, size_t *n)
{
	size_t count;
	*out = NULL, *n = 0;
	if (!elf || elf_getshdrnum(elf, &count) < 0 || !count)
		return 0;
	if (!(*out = malloc(count * sizeof(**out))))
		return -1;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh))
			(*out)[(*n)++] = (struct span){sh.sh_addr + bias, sh.sh_addr + sh.sh_size + bias};
	}
	return 0;
}

/* Fills t from mod's n symbols; returns 0 or -1 (no memory). */
static int fill(struct ct_symtab *t, Dwfl_Module *mod, int n)
{
	t->v = malloc((size_t)n * sizeof(*t->v));
	t->max_hi = malloc((size_t)n * sizeof(*t->max_hi));
	t->starts = malloc((size_t)n * sizeof(*t->starts));
	t->labels = malloc((size_t)n * sizeof(*t->labels));
	if (!t->v || !t->max_hi || !t->starts || !t->labels)
		return -1;
	t->sizeless = ~(GElf_Addr)0;
	Elf *symelf = NULL;
	GElf_Addr symbias = 0;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr, bias;
		Elf *elf;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, &elf, &bias);
		if (!candidate(name, &sym))
			continue;
		if (!symelf)
			symelf = elf, symbias = bias;
		if (!sym.st_size) {
			t->starts[t->nstarts++] = addr; /* the sized ones join them below */
			t->sizeless = addr < t->sizeless ? addr : t->sizeless;
			if (t->first_global > 1 && i >= t->first_global)
				t->labels[t->nlabels++] = addr;
			continue;
		}
		t->v[t->n++] = (struct sym){addr, addr + sym.st_size, name, i, rank(&sym)};
	}
	if (sort_by_lo(t->v, t->n) < 0)
		return -1;
	merge_starts(t);
	qsort(t->labels, t->nlabels, sizeof(*t->labels), by_addr);
	GElf_Addr hi = 0;
	for (size_t i = 0; i < t->n; i++) {
		t->max_hi[i] = hi;
		hi = t->v[i].hi > hi ? t->v[i].hi : hi;
	}
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	return read_sections(elf, bias, &t->secs[0], &t->nsecs[0]) < 0 ||
	               read_sections(symelf, symbias, &t->secs[1], &t->nsecs[1]) < 0
	           ? -1
	           : 0;
}

struct ct_symtab *ct_symtab_build(Dwfl_Module *mod)
{
	int n = dwfl_module_getsymtab(mod);
	struct ct_symtab *t = n > 1 ? calloc(1, sizeof(*t)) : NULL;
	if (t)
		t->first_global = dwfl_module_getsymtab_first_global(mod);
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
	free(t->starts);
	free(t->labels);
	free(t->secs[0]);
	free(t->secs[1]);
	free(t->gaps);
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

/* How many of the n sorted addresses v are at or below addr. */
static size_t at_or_below(const GElf_Addr *v, size_t n, GElf_Addr addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether a sizeless symbol of the globals' part is at addr. */
static int label_at(const struct ct_symtab *t, GElf_Addr addr)
{
	size_t k = at_or_below(t->labels, t->nlabels, addr);
	return k && t->labels[k - 1] == addr;
}

/* 1 + the index of the first section holding addr, 0 when none does. */
static uint64_t section_of(const struct span *v, size_t n, GElf_Addr addr)
{
	for (size_t i = 0; i < n; i++)
		if (addr >= v[i].lo && addr < v[i].hi)
			return i + 1;
	return 0;
}

/* What libdwfl's answer for an address no sized symbol covers depends on: the symbols at or below
 * it (the gap), whether one starts at it, and the sections it lies in. 0 when it does not fit. */
static uint64_t gap_key(const struct ct_symtab *t, GElf_Addr addr)
{
	uint64_t k = at_or_below(t->starts, t->nstarts, addr), at = k && t->starts[k - 1] == addr;
	uint64_t s0 = section_of(t->secs[0], t->nsecs[0], addr),
	         s1 = section_of(t->secs[1], t->nsecs[1], addr);
	if (k >= 1u << 30 || s0 >= 1u << 16 || s1 >= 1u << 16)
		return 0;
	return (k << 34 | at << 33 | s0 << 17 | s1 << 1) | 1;
}

static size_t gap_slot(const struct ct_symtab *t, uint64_t key)
{
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (t->gap_size - 1);
	while (t->gaps[i].key && t->gaps[i].key != key)
		i = (i + 1) & (t->gap_size - 1);
	return i;
}

/* Remembers name for key; a table that cannot grow just remembers nothing more. */
static void remember(struct ct_symtab *t, uint64_t key, const char *name)
{
	if (2 * (t->gap_used + 1) > t->gap_size) {
		size_t n = t->gap_size ? 2 * t->gap_size : 64;
		struct gap *old = t->gaps, *v = calloc(n, sizeof(*v));
		if (!v)
			return;
		size_t old_size = t->gap_size;
		t->gaps = v, t->gap_size = n;
		for (size_t i = 0; i < old_size; i++)
			if (old[i].key)
				t->gaps[gap_slot(t, old[i].key)] = old[i];
		free(old);
	}
	t->gaps[gap_slot(t, key)] = (struct gap){key, name};
	t->gap_used++;
}

static const char *ask_libdwfl(Dwfl_Module *mod, GElf_Addr addr, GElf_Xword *size)
{
	GElf_Off off;
	GElf_Sym sym;
	const char *name = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);
	*size = name ? sym.st_size : 0;
	return name;
}

/* When the symbols covering addr are aliases (the same start and end: C++'s complete and base
 * constructors, a versioned name and its default), the one libdwfl's scan keeps: the globals' part of
 * the table is scanned first and the rest only when it found none; the best binding wins, the
 * first scanned among equals. NULL when other symbols overlap them: libdwfl decides. */
static const struct sym *alias_pick(const struct ct_symtab *t, long j, GElf_Addr addr)
{
	long g = j;
	while (g > 0 && t->v[g - 1].lo == t->v[j].lo)
		g--;
	if (t->max_hi[g] > addr || t->first_global < 0)
		return NULL;
	const struct sym *best = NULL;
	int globals = 0;
	for (long i = g; i <= j; i++) {
		if (t->v[i].hi != t->v[j].hi)
			return NULL;
		globals |= t->v[i].index >= t->first_global;
	}
	for (long i = g; i <= j; i++) {
		const struct sym *x = &t->v[i];
		if (globals && x->index < t->first_global)
			continue;
		if (!best || x->rank > best->rank || (x->rank == best->rank && x->index < best->index))
			best = x;
	}
	return best;
}

/* libdwfl takes the one sized symbol that covers addr; with none, a sizeless one below addr may
 * stand in (its size is 0). Overlaps and aliases go by its scan order and binding rules: those are
 * left to it. */
const char *ct_symtab_name(struct ct_symtab *t, Dwfl_Module *mod, GElf_Addr addr, GElf_Xword *size)
{
	if (!t)
		return ask_libdwfl(mod, addr, size);
	long j = last_at_or_below(t, addr);
	int covers = j >= 0 && addr < t->v[j].hi;
	int others = j > 0 && t->max_hi[j] > addr;
	*size = 0;
	const struct sym *pick = !covers ? NULL : others ? alias_pick(t, j, addr) : &t->v[j];
	if (pick && pick->index < t->first_global && label_at(t, addr))
		pick = NULL; /* libdwfl never scans the locals: it names the label */
	if (pick) {
		*size = pick->hi - pick->lo;
		return pick->name;
	}
	if (covers || others)
		return ask_libdwfl(mod, addr, size);
	if (t->sizeless > addr)
		return NULL;
	uint64_t key = gap_key(t, addr);
	if (key && t->gap_size) {
		const struct gap *g = &t->gaps[gap_slot(t, key)];
		if (g->key)
			return g->name;
	}
	const char *name = ask_libdwfl(mod, addr, size);
	if (key && !*size)
		remember(t, key, name);
	return name;
}
