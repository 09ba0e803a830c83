/* SPDX-License-Identifier: MIT */
/* A module's symbol table sorted by address: names most addresses in O(log n), where libdwfl
 * 0.188's dwfl_module_addrinfo scans every symbol, and leaves it the cases its own rules decide. */
#ifndef CTRACK_SYMTAB_H
#define CTRACK_SYMTAB_H

#include <elfutils/libdwfl.h>

struct ct_symtab;

/* The index of mod's symbols (its .symtab, or .dynsym, and MiniDebugInfo's), or NULL when it has
 * none or memory ran out. Names point into libdwfl's data: the index lives no longer than mod. */
struct ct_symtab *ct_symtab_build(Dwfl_Module *mod);
void ct_symtab_free(struct ct_symtab *t);

/* The symbol dwfl_module_addrinfo would name for addr (a dwfl address): 1 with *name set (NULL when
 * no symbol covers addr), or 0 when only dwfl_module_addrinfo can tell (overlapping or aliased
 * symbols, assembly labels without a size). */
int ct_symtab_lookup(const struct ct_symtab *t, GElf_Addr addr, const char **name);

#endif
