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
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctrack/format.h"
#include "debuginfo.h"
#include "diagnose.h"
#include "packages.h"
#include "regfile.h"
#include "symbolize.h"

/* DIEs looked at for inline records per module: past this the module is assumed to have them
 * (not finding one in two million DIEs of real code does not happen; nagging wrongly would). */
#define INLINE_SCAN_BUDGET 2000000L

static const char adv_stripped[] =
    "stripped — frames shown as addresses; keep .symtab (strip = \"debuginfo\" in Cargo, no -s in the link)";
/* The advice of a module whose debug info was split off and is not here ends with a remedy
 * (REMEDY below, or one naming its package). */
static const char adv_no_debug_file[] = "separate debug info not found: ";
static const char adv_no_debug[] = "no debug info: no file:line; build with -g";
/* Starts like adv_no_debug: the same loss, with the other remedy. */
static const char adv_debug_stripped[] =
    "no debug info (stripped; separate debug info not found): no file:line; ";
static const char adv_minidebuginfo[] =
    "MiniDebugInfo only (.gnu_debugdata): function names, no file:line or inlined frames; ";
#define REMEDY "install the debug package (-dbgsym), pass --debug-dir or set DEBUGINFOD_URLS"
/* A traced module whose file is not the one that ran (symbolize.h's ct_module_file). */
#define NOT_READ ": frames shown as addresses; analyze with the binary that ran, or trace again"
static const char *const adv_file[] = {
    [CT_FILE_GONE] = "gone since the trace (no file at this path)" NOT_READ,
    [CT_FILE_NOT_ELF] = "changed since the trace (not an ELF file now)" NOT_READ,
    [CT_FILE_REBUILT] = "changed since the trace (its build-id differs)" NOT_READ,
    [CT_FILE_NO_BUILD_ID] =
        "changed since the trace (the traced file had a build-id, this one has none)" NOT_READ,
    [CT_FILE_RELAID] = "changed since the trace (its loadable segments differ from the traced ones)" NOT_READ,
    [CT_FILE_NEWER] = "modified after the trace loaded it, and no build-id tells whether it is the binary "
                      "that ran: names may be wrong; link with a build-id (-Wl,--build-id)",
};
static const char adv_lines_only[] =
    "line tables only (-gline-tables-only, Rust debug = 1 / line-tables-only): inlined frames are folded "
    "into their caller; build with -g / debug = 2 for inline attribution";

void ct_quality_list_free(struct ct_quality_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].path);
		free(l->v[i].build_id);
		free(l->v[i].debug_file);
		free(l->v[i].package);
		free(l->v[i].advice);
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

static char *concat(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	char *s = malloc(na + nb + 1);
	if (s) {
		memcpy(s, a, na);
		memcpy(s + na, b, nb + 1);
	}
	return s;
}

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

/* Whether the advice a (advise's) calls for the debug info split off the module. */
static int wants_debug_file(const char *a)
{
	return a == adv_no_debug_file || a == adv_debug_stripped || a == adv_minidebuginfo;
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
	const char *a = advise(q, &e, &d);
	q->split_debug = a && wants_debug_file(a);
	if (a && !(q->advice = q->split_debug ? concat(a, REMEDY) : strdup(a)))
		return -ENOMEM;
	return 0;
}

/* ---- the debug package: dpkg knows which package owns a file (packages.h) ---- */

/* The distribution's debuginfod server, by /etc/os-release's ID, or NULL. */
static const char *distro_debuginfod(void)
{
	static const char *const servers[][2] = {{"debian", "https://debuginfod.debian.net"},
	                                         {"ubuntu", "https://debuginfod.ubuntu.com"}};
	char line[256];
	const char *url = NULL;
	FILE *f = fopen("/etc/os-release", "re");
	while (f && !url && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "ID=", 3))
			continue;
		char *id = line + 3 + (line[3] == '"');
		id[strcspn(id, "\"\n")] = 0;
		for (size_t i = 0; i < sizeof(servers) / sizeof(servers[0]); i++)
			if (!strcmp(id, servers[i][0]))
				url = servers[i][1];
		break;
	}
	if (f)
		fclose(f);
	return url;
}

/* q's advice (split_debug) with the remedy naming q->package. */
static char *package_advice(const struct ct_quality *q, const char *url)
{
	size_t keep = strlen(q->advice) - strlen(REMEDY);
	int dbgsym = strlen(q->package) > 7 && !strcmp(q->package + strlen(q->package) - 7, "-dbgsym");
	size_t n = keep + strlen(q->package) + (url ? strlen(url) : 0) + 128;
	char *s = malloc(n);
	if (s)
		snprintf(s, n, "%.*sinstall %s%s, pass --debug-dir or set DEBUGINFOD_URLS%s%s", (int)keep,
		         q->advice, q->package, dbgsym ? " (from the debug archive)" : "", url ? "=" : "",
		         url ? url : "");
	return s;
}

/* ---- the packages looked up ahead ---- */

/* The packages of every module that holds a frame, looked up on a thread of its own while the frames
 * are symbolized (ct_diagnose_prefetch): which modules lack their debug info is known only then, but
 * a file's package is the one file list naming it, whatever else is looked for, so the answers
 * found for more files are the answers. */
static struct {
	pthread_t thread;
	int started;                /* 1: the thread runs or ran and is not joined yet; 2: joined */
	int rc;                     /* ct_packages_find's */
	struct ct_package_query *q; /* per module looked up: its path (malloc'd) and debug package */
	size_t n;
} ahead;

static void *ahead_main(void *arg)
{
	(void)arg;
	/* Not beside the debug files' decompressing: their frames, then the report, come after it, and
	 * this fits beside those on the other core, where it would slow the decompressing down. */
	ct_debuginfo_wait_copies();
	ahead.rc = ct_packages_find(ahead.q, ahead.n);
	return NULL;
}

static void free_queries(struct ct_package_query *q, size_t n, int paths)
{
	for (size_t i = 0; i < n; i++) {
		if (paths)
			free((char *)q[i].path);
		free(q[i].debug_package);
	}
	free(q);
}

static void free_ahead(void)
{
	free_queries(ahead.q, ahead.n, 1);
	ahead.q = NULL, ahead.n = 0;
}

/* Whether mod's package is looked up ahead: it holds a frame, its file is where packages install
 * theirs, and no separate debug file was found for it. The others seldom need it (a program built in
 * a home directory, with its debug info or without a package) and are looked up when asked. */
static int lookup_ahead(const struct ct_module *mod)
{
	static const char *const dirs[] = {"/usr/", "/lib", "/bin/", "/sbin/", "/opt/"};
	int packaged = 0;
	for (size_t i = 0; mod->path && i < sizeof(dirs) / sizeof(dirs[0]); i++)
		packaged |= !strncmp(mod->path, dirs[i], strlen(dirs[i]));
	return mod->framed && packaged && !ct_debuginfo_found(mod->build_id, mod->build_id_len);
}

void ct_diagnose_prefetch(const struct ct_model *m)
{
	ct_diagnose_prefetch_free();
	size_t n = 0;
	for (size_t i = 0; i < m->nmodules; i++)
		n += lookup_ahead(&m->modules[i]);
	ahead.q = n ? calloc(n, sizeof(*ahead.q)) : NULL;
	for (size_t i = 0; ahead.q && i < m->nmodules; i++) {
		const struct ct_module *mod = &m->modules[i];
		if (!lookup_ahead(mod))
			continue;
		if (!(ahead.q[ahead.n].path = strdup(mod->path)))
			break;
		ahead.n++;
	}
	if (n && ahead.n == n && pthread_create(&ahead.thread, NULL, ahead_main, NULL) == 0)
		ahead.started = 1;
	else
		free_ahead(); /* nothing done ahead: each lookup is made when asked, as without this */
}

void ct_diagnose_prefetch_free(void)
{
	if (ahead.started == 1)
		pthread_join(ahead.thread, NULL);
	ahead.started = 0;
	free_ahead();
}

/* Sets q's package as the lookup made ahead found it, waiting for that: 1 when it looked q's file
 * up, 0 when it did not (q is looked up now), -ENOMEM. */
static int take_ahead(struct ct_package_query *q)
{
	if (ahead.started == 1) {
		pthread_join(ahead.thread, NULL);
		ahead.started = 2;
	}
	if (!ahead.started || ahead.rc < 0)
		return 0;
	for (size_t i = 0; i < ahead.n; i++) {
		if (strcmp(ahead.q[i].path, q->path))
			continue;
		if (ahead.q[i].debug_package && !(q->debug_package = strdup(ahead.q[i].debug_package)))
			return -ENOMEM;
		return 1;
	}
	return 0;
}

/* Looks up the files of q[0..n) that the lookup made ahead did not. Returns 0 or -ENOMEM. */
static int find_rest(struct ct_package_query *q, size_t n)
{
	struct ct_package_query **rest = calloc(n, sizeof(*rest)), *now = calloc(n, sizeof(*now));
	size_t k = 0;
	int rc = rest && now ? 0 : -ENOMEM;
	for (size_t i = 0; i < n && !rc; i++) {
		rc = take_ahead(&q[i]);
		if (!rc) { /* not looked up ahead: now */
			now[k].path = q[i].path;
			rest[k++] = &q[i];
		}
		rc = rc < 0 ? rc : 0;
	}
	if (!rc && k)
		rc = ct_packages_find(now, k);
	for (size_t i = 0; i < k; i++)
		rest[i]->debug_package = now[i].debug_package; /* handed over */
	free(rest);
	free(now);
	return rc;
}

/* Names the debug package in the advice of l's modules from start on that lack their split-off
 * debug info, where dpkg owns the file. Returns 0 or -ENOMEM. */
static int name_packages(struct ct_quality_list *l, size_t start)
{
	size_t n = 0;
	for (size_t i = start; i < l->n; i++)
		n += l->v[i].split_debug;
	if (!n)
		return 0;
	struct ct_package_query *q = calloc(n, sizeof(*q));
	struct ct_quality **of = calloc(n, sizeof(*of));
	int rc = q && of ? 0 : -ENOMEM;
	for (size_t i = start, k = 0; !rc && i < l->n; i++)
		if (l->v[i].split_debug)
			of[k] = &l->v[i], q[k++].path = l->v[i].path;
	rc = rc ? rc : find_rest(q, n);
	const char *url = distro_debuginfod();
	for (size_t i = 0; !rc && i < n; i++) {
		if (!q[i].debug_package)
			continue;
		of[i]->package = q[i].debug_package, q[i].debug_package = NULL; /* handed over */
		char *advice = package_advice(of[i], url);
		if (!advice)
			rc = -ENOMEM;
		else
			free(of[i]->advice), of[i]->advice = advice;
	}
	free_queries(q, q ? n : 0, 0);
	free(of);
	return rc;
}

/* ---- entry points ---- */

static int diagnose_file(struct ct_quality_list *l, const char *path)
{
	int fd = ct_regfile_open(path, NULL);
	if (fd < 0)
		return fd == -EINVAL ? -ENOEXEC : fd; /* a FIFO, a device: no ELF file to read */
	int rc = -ENOMEM;
	Dwfl *dwfl = dwfl_begin(ct_debuginfo_callbacks());
	if (!dwfl) {
		close(fd);
		goto out;
	}
	dwfl_report_begin(dwfl);
	Dwfl_Module *mod = dwfl_report_elf(dwfl, path, path, fd, 0, false); /* takes fd */
	dwfl_report_end(dwfl, NULL, NULL);
	rc = -ENOEXEC;
	if (!mod) {
		close(fd);
		goto out;
	}
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

int ct_diagnose_file(struct ct_quality_list *l, const char *path)
{
	size_t start = l->n;
	int rc = diagnose_file(l, path);
	return rc ? rc : name_packages(l, start);
}

/* The build-id the trace recorded for m, in q (none: NULL). 0 or -ENOMEM. */
static int traced_build_id(struct ct_quality *q, const struct ct_module *m)
{
	if (m->build_id_len && !(q->build_id = malloc(2 * m->build_id_len + 1)))
		return -ENOMEM;
	for (size_t i = 0; i < m->build_id_len; i++)
		snprintf(q->build_id + 2 * i, 3, "%02x", (unsigned char)m->build_id[i]);
	return 0;
}

/* q's advice for a module read from a file that may not be the traced one: that first, then the
 * symbols' own. 0 or -ENOMEM. */
static int warn_newer(struct ct_quality *q)
{
	char *a = NULL;
	int n = q->advice ? asprintf(&a, "%s; %s", adv_file[CT_FILE_NEWER], q->advice)
	                  : asprintf(&a, "%s", adv_file[CT_FILE_NEWER]);
	if (n < 0)
		return -ENOMEM;
	free(q->advice);
	q->advice = a;
	return 0;
}

/* The verdict of a module the symbolizer has open, or of why it has not: its file is gone, or not
 * the traced one. */
static int diagnose_traced(struct ct_quality_list *l, struct ct_symbolizer *s, const struct ct_module *m)
{
	enum ct_module_file file;
	int err;
	Dwfl_Module *mod = ct_symbolizer_module(s, m, &file, &err);
	if (!mod && (file == CT_FILE_SAME || file == CT_FILE_NONE))
		return diagnose_file(l, m->path);
	struct ct_quality *q = push(l);
	if (!q || !(q->path = strdup(m->path)))
		return -ENOMEM;
	if (mod) {
		int rc = judge(q, mod);
		return rc || file != CT_FILE_NEWER ? rc : warn_newer(q);
	}
	q->symbols = "none"; /* nothing of the traced binary can be read */
	int n = file == CT_FILE_UNREADABLE
	            ? asprintf(&q->advice, "cannot be read (%s): frames shown as addresses", strerror(err))
	            : asprintf(&q->advice, "%s", adv_file[file]);
	if (n < 0) {
		q->advice = NULL;
		return -ENOMEM;
	}
	return traced_build_id(q, m);
}

int ct_diagnose_model(struct ct_quality_list *l, const struct ct_model *m, struct ct_symbolizer *s)
{
	char *seen = calloc(m->nmodules + 1, 1);
	size_t start = l->n;
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
		/* Pseudo modules (the vdso) have no file. */
		if (seen[i] && p && p[0] == '/')
			rc = diagnose_traced(l, s, &m->modules[i]);
	}
	free(seen);
	return rc == -ENOMEM ? rc : name_packages(l, start);
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
	int fd = ct_regfile_open(path, NULL);
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
			rc = diagnose_file(l, lib) == -ENOMEM ? -ENOMEM : 0;
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
	return rc ? rc : name_packages(l, start);
}
