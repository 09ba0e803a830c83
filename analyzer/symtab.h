/* SPDX-License-Identifier: MIT */
/* A module's symbol table sorted by address: names most addresses in O(log n), where libdwfl
 * 0.188's dwfl_module_addrinfo scans every symbol, and leaves it the cases its own rules decide,
 * remembering its answers where they cannot differ (between two symbols, in one section). */
#ifndef CTRACK_SYMTAB_H
#define CTRACK_SYMTAB_H

#include <elfutils/libdwfl.h>

struct ct_symtab;

/* The index of mod's symbols (its .symtab, or .dynsym, and MiniDebugInfo's), or NULL when it has
 * none or memory ran out. Names point into libdwfl's data: the index lives no longer than mod. */
struct ct_symtab *ct_symtab_build(Dwfl_Module *mod);
void ct_symtab_free(struct ct_symtab *t);

/* The symbol dwfl_module_addrinfo names for addr (a dwfl address of mod, t's module), or NULL when
 * none covers it; *size is that symbol's st_size (0 for none). t may be NULL: libdwfl answers. */
const char *ct_symtab_name(struct ct_symtab *t, Dwfl_Module *mod, GElf_Addr addr, GElf_Xword *size);

#endif
