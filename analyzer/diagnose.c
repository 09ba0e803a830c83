/* SPDX-License-Identifier: MIT */
/* Symbol-quality diagnostics with libdwfl/libelf: each module is opened the way the symbolizer
 * opens it (so the debug file found is the one frames are resolved with) and scanned once, capped. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctrack/format.h"
#include "debuginfo.h"
#include "diagnose.h"
#include "symbolize.h"

/* DIEs looked at for inline records per module: past this the module is assumed to have them
 * (not finding one in two million DIEs of real code does not happen; nagging wrongly would). */
#define INLINE_SCAN_BUDGET 2000000L

static const char adv_stripped[] =
    "stripped — frames shown as addresses; keep .symtab (strip = \"debuginfo\" in Cargo, no -s in the link)";
static const char adv_no_debug_file[] = "separate debug info not found: install the debug package (-dbgsym), "
                                        "pass --debug-dir or set DEBUGINFOD_URLS";
static const char adv_no_debug[] = "no debug info: no file:line; build with -g";
/* Starts like adv_no_debug: the same loss, with the other remedy. */
static const char adv_debug_stripped[] =
    "no debug info (stripped; separate debug info not found): no file:line; install the debug package "
    "(-dbgsym), pass --debug-dir or set DEBUGINFOD_URLS";
static const char adv_minidebuginfo[] =
    "MiniDebugInfo only (.gnu_debugdata): function names, no file:line or inlined frames; install the "
    "debug package, pass --debug-dir or set DEBUGINFOD_URLS";
static const char adv_changed[] =
    "changed since the trace (its build-id differs): frames shown as addresses; analyze with the "
    "binary that ran, or trace again";
static const char adv_lines_only[] =
    "line tables only (-gline-tables-only, Rust debug = 1 / line-tables-only): inlined frames are folded "
    "into their caller; build with -g / debug = 2 for inline attribution";

void ct_quality_list_free(struct ct_quality_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].path);
		free(l->v[i].build_id);
		free(l->v[i].debug_file);
	}
	free(l->v);
	*l = (struct ct_quality_list){0};
}

static struct ct_quality *push(struct ct_quality_list *l)
{
	if (l->n == l->cap) {
		size_t n = l->cap ? 2 * l->cap : 8;
		struct ct_quality *v = realloc(l->v, n * sizeof(*v));
		if (!v)
			return NULL;
		l->v = v;
		l->cap = n;
	}
	l->v[l->n] = (struct ct_quality){0};
	return &l->v[l->n++];
}

/* ---- ELF sections ---- */

struct elf_facts {
	int symtab, dynsym, debuglink;
	int file_symbols;  /* the .symtab has an STT_FILE symbol */
	int minidebuginfo; /* a .gnu_debugdata section (an xz-compressed ELF holding a .symtab) */
	size_t ndynsym;
};

/* Every compiler writes an STT_FILE symbol per source file, with or without -g; strip -g
 * (objcopy --strip-debug) removes them with the DWARF. So a .symtab without one lost its debug
 * info after the build. */
static int has_file_symbol(Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n = data && sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		if (gelf_getsym(data, (int)i, &sym) && GELF_ST_TYPE(sym.st_info) == STT_FILE)
			return 1;
	}
	return 0;
}

static void scan_sections(Elf *elf, struct elf_facts *f)
{
	size_t shstrndx;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) < 0)
		return;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		f->symtab |= sh.sh_type == SHT_SYMTAB && sh.sh_size > 0;
		f->dynsym |= sh.sh_type == SHT_DYNSYM && sh.sh_size > 0;
		f->debuglink |= name && !strcmp(name, ".gnu_debuglink");
		f->minidebuginfo |= name && !strcmp(name, ".gnu_debugdata");
		if (sh.sh_type == SHT_DYNSYM && sh.sh_entsize)
			f->ndynsym = sh.sh_size / sh.sh_entsize;
		if (sh.sh_type == SHT_SYMTAB && !f->file_symbols)
			f->file_symbols = has_file_symbol(scn, &sh);
	}
}

/* ---- DWARF ---- */

struct dwarf_facts {
	int cus, line_tables, inline_info, unoptimized;
	int locals; /* a function's parameters or variables are described: full debug info (-g), not
	             * line tables only (-g1, -gline-tables-only, Rust debuginfo=1) */
};

/* Only these can hold inlined code; types and variables are skipped whole. */
static int may_hold_inlines(int tag)
{
	return tag == DW_TAG_subprogram || tag == DW_TAG_lexical_block || tag == DW_TAG_inlined_subroutine ||
	       tag == DW_TAG_namespace || tag == DW_TAG_class_type || tag == DW_TAG_structure_type;
}

static int is_local(int tag, int in_fn)
{
	return tag == DW_TAG_formal_parameter || (in_fn && tag == DW_TAG_variable);
}

/* 1 when die or a following sibling (or their descendants) is an inlined subroutine, 0 when not,
 * -1 when the budget ran out. in_fn: die is inside a function. Notes locals in f on the way. */
static int find_inline(Dwarf_Die *die, int in_fn, long *budget, struct dwarf_facts *f)
{
	do {
		if (--*budget < 0)
			return -1;
		int tag = dwarf_tag(die);
		if (tag == DW_TAG_inlined_subroutine)
			return 1;
		f->locals |= is_local(tag, in_fn);
		Dwarf_Die child;
		if (may_hold_inlines(tag) && dwarf_haschildren(die) > 0 && dwarf_child(die, &child) == 0) {
			int rc = find_inline(&child, in_fn || tag == DW_TAG_subprogram, budget, f);
			if (rc)
				return rc;
		}
	} while (dwarf_siblingof(die, die) == 0);
	return 0;
}

/* gcc records its options in DW_AT_producer: at -O0 nothing is inlined but always_inline code. */
static int producer_unoptimized(Dwarf_Die *cu)
{
	Dwarf_Attribute attr;
	const char *p = dwarf_formstring(dwarf_attr(cu, DW_AT_producer, &attr));
	return p && strstr(p, " -O0");
}

static void scan_dwarf(Dwfl_Module *mod, struct dwarf_facts *f)
{
	long budget = INLINE_SCAN_BUDGET;
	Dwarf_Addr bias;
	for (Dwarf_Die *cu = NULL; (cu = dwfl_module_nextcu(mod, cu, &bias));) {
		Dwarf_Lines *lines;
		size_t n;
		f->cus = 1;
		if (!f->line_tables && dwarf_getsrclines(cu, &lines, &n) == 0 && n > 0)
			f->line_tables = 1;
		f->unoptimized |= producer_unoptimized(cu);
		Dwarf_Die child;
		if (!f->inline_info && dwarf_child(cu, &child) == 0) {
			int rc = find_inline(&child, 0, &budget, f);
			f->inline_info = rc != 0; /* budget out: assume there are some */
		}
		if (f->line_tables && f->inline_info)
			return;
	}
}

/* ---- one module ---- */

static char *hex_build_id(Dwfl_Module *mod)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n <= 0)
		return NULL;
	char *s = malloc(2 * (size_t)n + 1);
	for (int i = 0; s && i < n; i++)
		snprintf(s + 2 * i, 3, "%02x", bits[i]);
	return s;
}

/* No DWARF was found: was there never any, or was it split off and not found? */
static const char *advise_no_dwarf(const struct ct_quality *q, const struct elf_facts *e)
{
	if (e->symtab)
		return e->debuglink || !e->file_symbols ? adv_debug_stripped : adv_no_debug;
	if (!strcmp(q->symbols, "minidebuginfo"))
		return adv_minidebuginfo;
	return e->debuglink ? adv_no_debug_file : adv_stripped;
}

static const char *advise(const struct ct_quality *q, const struct elf_facts *e, const struct dwarf_facts *d)
{
	if (!d->cus)
		return advise_no_dwarf(q, e);
	if (!q->line_tables)
		return adv_no_debug;
	if (!q->inline_info && !d->unoptimized && !d->locals)
		return adv_lines_only;
	return NULL;
}

/* The name of the file mod's DWARF came from: libdwfl names the module or the separate file it
 * found on disk; DWARF in another ELF without a name came from debuginfod. */
static char *dwarf_file_name(Dwfl_Module *mod, Dwarf *dw, const char *build_id, const char *path)
{
	const char *mainfile = NULL, *debugfile = NULL;
	GElf_Addr bias;
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &mainfile, &debugfile);
	char *fetched = NULL;
	if (!debugfile && dwarf_getelf(dw) != dwfl_module_getelf(mod, &bias) &&
	    (fetched = ct_debuginfod_cache_file(build_id)))
		return fetched;
	return strdup(debugfile ? debugfile : mainfile ? mainfile : path);
}

/* Fills q (whose path is set) from the module dwfl opened. Returns 0 or -ENOMEM. */
static int judge(struct ct_quality *q, Dwfl_Module *mod)
{
	struct elf_facts e = {0};
	struct dwarf_facts d = {0};
	GElf_Addr bias;
	scan_sections(dwfl_module_getelf(mod, &bias), &e);
	q->build_id = hex_build_id(mod);
	Dwarf *dw = dwfl_module_getdwarf(mod, &bias);
	if (dw) {
		scan_sections(dwarf_getelf(dw), &e); /* a separate debug file keeps the full .symtab */
		scan_dwarf(mod, &d);
		if (!(q->debug_file = dwarf_file_name(mod, dw, q->build_id, q->path)))
			return -ENOMEM;
	}
	/* libdwfl reads .gnu_debugdata's symbols only when built with lzma: count what it has. */
	int mini = e.minidebuginfo && dwfl_module_getsymtab(mod) > (int)e.ndynsym;
	q->symbols = e.symtab ? "symtab" : mini ? "minidebuginfo" : e.dynsym ? "dynsym" : "none";
	q->line_tables = d.line_tables;
	q->inline_info = d.inline_info;
	q->advice = advise(q, &e, &d);
	return 0;
}

int ct_diagnose_file(struct ct_quality_list *l, const char *path)
{
	if (access(path, R_OK) < 0)
		return -errno;
	int rc = -ENOMEM;
	Dwfl *dwfl = dwfl_begin(ct_debuginfo_callbacks());
	if (!dwfl)
		goto out;
	dwfl_report_begin(dwfl);
	Dwfl_Module *mod = dwfl_report_elf(dwfl, path, path, -1, 0, false);
	dwfl_report_end(dwfl, NULL, NULL);
	rc = -ENOEXEC;
	if (!mod)
		goto out;
	struct ct_quality *q = push(l);
	rc = -ENOMEM;
	if (!q || !(q->path = strdup(path)))
		goto out;
	rc = judge(q, mod);
out:
	if (dwfl)
		dwfl_end(dwfl);
	return rc;
}

/* The verdict of a module the symbolizer has open; falls back to opening the file. */
static int diagnose_traced(struct ct_quality_list *l, struct ct_symbolizer *s, const struct ct_module *m)
{
	int changed;
	Dwfl_Module *mod = ct_symbolizer_module(s, m, &changed);
	if (!mod && !changed)
		return ct_diagnose_file(l, m->path);
	struct ct_quality *q = push(l);
	if (!q || !(q->path = strdup(m->path)))
		return -ENOMEM;
	if (mod)
		return judge(q, mod);
	q->symbols = "none"; /* nothing of the traced binary can be read */
	q->advice = adv_changed;
	if (m->build_id_len && !(q->build_id = malloc(2 * m->build_id_len + 1)))
		return -ENOMEM;
	for (size_t i = 0; i < m->build_id_len; i++)
		snprintf(q->build_id + 2 * i, 3, "%02x", (unsigned char)m->build_id[i]);
	return 0;
}

int ct_diagnose_model(struct ct_quality_list *l, const struct ct_model *m, struct ct_symbolizer *s)
{
	char *seen = calloc(m->nmodules + 1, 1);
	if (!seen)
		return -ENOMEM;
	for (uint32_t node = CT_STACK_FIRST; node < m->nnodes; node++) {
		const struct ct_module *mod = ct_model_node_module(m, node);
		if (mod && mod->id < m->nmodules)
			seen[mod->id] = 1;
	}
	int rc = 0;
	for (size_t i = 0; i < m->nmodules && rc != -ENOMEM; i++) {
		const char *p = m->modules[i].path;
		/* Pseudo modules (the vdso) have no file; a file gone since the trace is skipped. */
		if (seen[i] && p && p[0] == '/')
			rc = diagnose_traced(l, s, &m->modules[i]);
	}
	free(seen);
	return rc == -ENOMEM ? rc : 0;
}

/* ---- shared libraries ---- */

static int listed(const struct ct_quality_list *l, const char *path)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].path, path))
			return 1;
	return 0;
}

/* Real path of the first dir/name (from a colon-separated list) that exists, or NULL.
 * $ORIGIN at the start of an entry stands for origin. */
static char *find_in(const char *dirs, const char *name, const char *origin)
{
	char *copy = strdup(dirs), *save = NULL, *found = NULL;
	for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d && !found;
	     d = strtok_r(NULL, ":", &save)) {
		char buf[PATH_MAX];
		int ori = !strncmp(d, "$ORIGIN", 7);
		snprintf(buf, sizeof(buf), "%s%s/%s", ori ? origin : "", ori ? d + 7 : d, name);
		found = realpath(buf, NULL);
	}
	free(copy);
	return found;
}

static char *resolve(const char *name, const char *runpath, const char *origin)
{
	static const char system_dirs[] = "/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:/usr/lib";
	if (strchr(name, '/'))
		return realpath(name, NULL);
	char *p = runpath ? find_in(runpath, name, origin) : NULL;
	return p ? p : find_in(system_dirs, name, origin);
}

/* Appends (diagnosed) each library path needs that is not listed yet. */
static int add_needed_of(struct ct_quality_list *l, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	char *dir = strdup(path);
	int rc = dir ? 0 : -ENOMEM;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	while (elf && (scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNAMIC)
			break;
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
	size_t n = data && sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
	const char *runpath = NULL;
	for (size_t i = 0; i < n; i++) {
		GElf_Dyn dyn;
		if (gelf_getdyn(data, (int)i, &dyn) && (dyn.d_tag == DT_RUNPATH || dyn.d_tag == DT_RPATH))
			runpath = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
	}
	const char *origin = dir ? dirname(dir) : "";
	for (size_t i = 0; i < n && !rc; i++) {
		GElf_Dyn dyn;
		const char *name;
		if (!gelf_getdyn(data, (int)i, &dyn) || dyn.d_tag != DT_NEEDED ||
		    !(name = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val)))
			continue;
		char *lib = resolve(name, runpath, origin);
		if (lib && !listed(l, lib))
			rc = ct_diagnose_file(l, lib) == -ENOMEM ? -ENOMEM : 0;
		free(lib);
	}
	free(dir);
	if (elf)
		elf_end(elf);
	close(fd);
	return rc;
}

int ct_diagnose_needed(struct ct_quality_list *l, const char *path)
{
	size_t start = l->n;
	int rc = add_needed_of(l, path);
	/* The list is the queue: each library's own needs are appended after it. */
	for (size_t i = start; i < l->n && !rc; i++) {
		char *p = strdup(l->v[i].path); /* l->v may move */
		rc = p ? add_needed_of(l, p) : -ENOMEM;
		free(p);
	}
	return rc;
}
