/* SPDX-License-Identifier: MIT */
/* Symbol-quality diagnostics with libdwfl/libelf: each module is opened the way the symbolizer
 * opens it (so the debug file found is the one frames are resolved with) and scanned once, capped. */
#include <dirent.h>
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

/* ---- the debug package: dpkg knows which package owns a file ---- */

#define DPKG_INFO "/var/lib/dpkg/info"
#define DPKG_PATHS 4

/* The paths dpkg may list for path: itself and the file it links to, each with and without /usr
 * (with a merged /usr, /lib/x/libz.so.1 and /usr/lib/x/libz.so.1 are one file, and dpkg lists the
 * path its package shipped). Fills out (owned; NULL where memory ran out), returns the count. */
static int dpkg_paths(const char *path, char *out[DPKG_PATHS])
{
	int n = 0;
	char *real = realpath(path, NULL);
	const char *base[2] = {path, real && strcmp(real, path) ? real : NULL};
	for (int i = 0; i < 2 && base[i]; i++) {
		out[n++] = strdup(base[i]);
		out[n++] = strncmp(base[i], "/usr/", 5) ? concat("/usr", base[i]) : strdup(base[i] + 4);
	}
	free(real);
	return n;
}

/* The debug package of the binary package whose file list is list_name ("zlib1g:amd64.list"):
 * glibc ships libc6-dbg; every other package gets PACKAGE-dbgsym in the debug archive. */
static char *debug_package(const char *list_name)
{
	size_t n = strlen(list_name) - strlen(".list");
	const char *colon = memchr(list_name, ':', n);
	char *pkg = strndup(list_name, colon ? (size_t)(colon - list_name) : n);
	char *debug = pkg ? concat(pkg, strcmp(pkg, "libc6") ? "-dbgsym" : "-dbg") : NULL;
	free(pkg);
	return debug;
}

struct wanted {
	struct ct_quality *q;
	char *paths[DPKG_PATHS];
	size_t lens[DPKG_PATHS];
	int n;
};

/* A buffer of whole lines of a file list: a list of megabytes costs a chunk of memory. */
struct chunk {
	char *v;
	size_t cap;
};

#define LIST_CHUNK (64 * 1024)

/* The lengths of the paths looked for, as a filter: a line of another length is none of them (most
 * of the megabytes of lists read). Lengths past LEN_MAX share the last bit. */
#define LEN_MAX 4095
struct lengths {
	uint64_t bits[(LEN_MAX + 1) / 64];
};

static void add_length(struct lengths *l, size_t k)
{
	k = k < LEN_MAX ? k : LEN_MAX;
	l->bits[k / 64] |= 1ull << (k % 64);
}

static int has_length(const struct lengths *l, size_t k)
{
	k = k < LEN_MAX ? k : LEN_MAX;
	return (l->bits[k / 64] >> (k % 64)) & 1;
}

/* Names the package of list_name in each wanted module one of whose paths is a line of text (whole
 * lines). Returns named plus how many it named, or -ENOMEM. */
static int match_lines(const char *text, size_t len, const char *list_name, struct wanted *want, size_t n,
                       const struct lengths *lens, int named)
{
	for (const char *line = text, *end = text + len; line < end && named >= 0;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t k = (size_t)((nl ? nl : end) - line);
		for (size_t i = 0; i < n && named >= 0 && has_length(lens, k); i++)
			for (int j = 0; !want[i].q->package && j < want[i].n; j++)
				if (want[i].paths[j] && want[i].lens[j] == k &&
				    !memcmp(line, want[i].paths[j], k))
					named = (want[i].q->package = debug_package(list_name)) ? named + 1
					                                                        : -ENOMEM;
		line += k + 1;
	}
	return named;
}

/* Reads dir's file list name (dpkg's: one path a line) a chunk of whole lines at a time and names
 * the package in each wanted module it owns. Returns how many modules it named, or -ENOMEM. */
static int scan_list(int dir, const char *name, struct wanted *want, size_t n, const struct lengths *lens,
                     struct chunk *c)
{
	int fd = openat(dir, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	size_t have = 0;
	int named = 0, eof = 0;
	while (!eof && named >= 0) {
		if (have == c->cap) { /* a line longer than the buffer */
			size_t cap = c->cap ? 2 * c->cap : LIST_CHUNK;
			char *v = realloc(c->v, cap);
			if (!v) {
				named = -ENOMEM;
				break;
			}
			c->v = v, c->cap = cap;
		}
		ssize_t got = read(fd, c->v + have, c->cap - have);
		if (got < 0 && errno == EINTR)
			continue;
		eof = got <= 0;
		have += eof ? 0 : (size_t)got;
		const char *last = eof ? NULL : memrchr(c->v, '\n', have);
		size_t whole = eof ? have : last ? (size_t)(last - c->v) + 1 : 0;
		named = match_lines(c->v, whole, name, want, n, lens, named);
		memmove(c->v, c->v + whole, have - whole);
		have -= whole;
	}
	close(fd);
	return named;
}

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

/* Looks for the files of want[0..n) in every package's file list, once. */
static int find_packages(struct wanted *want, size_t n)
{
	DIR *dir = opendir(DPKG_INFO);
	if (!dir)
		return 0; /* no dpkg: the advice stays generic */
	size_t left = n;
	int rc = 0;
	struct chunk c = {0};
	struct lengths lens = {{0}};
	for (size_t i = 0; i < n; i++)
		for (int j = 0; j < want[i].n; j++)
			if (want[i].paths[j])
				add_length(&lens, want[i].lens[j]);
	for (struct dirent *e; left && !rc && (e = readdir(dir));) {
		size_t len = strlen(e->d_name);
		if (len <= 5 || strcmp(e->d_name + len - 5, ".list"))
			continue;
		int named = scan_list(dirfd(dir), e->d_name, want, n, &lens, &c);
		if (named < 0)
			rc = named;
		else
			left -= (size_t)named;
	}
	free(c.v);
	closedir(dir);
	return rc;
}

static void wanted_paths(struct wanted *w, struct ct_quality *q)
{
	w->q = q;
	w->n = dpkg_paths(q->path, w->paths);
	for (int j = 0; j < w->n; j++)
		w->lens[j] = w->paths[j] ? strlen(w->paths[j]) : 0;
}

/* ---- the packages looked up ahead ---- */

/* The packages of every module that holds a frame, looked up on a thread of its own while the frames
 * are symbolized (ct_diagnose_prefetch): which modules lack their debug info is known only then, but
 * a file's package is the first file list naming it, whatever else is looked for, so the answers
 * found for more files are the answers. */
static struct {
	pthread_t thread;
	int started;          /* 1: the thread runs or ran and is not joined yet; 2: joined */
	int rc;               /* find_packages' */
	struct ct_quality *q; /* per module looked up: its path, and package when one was found */
	struct wanted *want;
	size_t n;
} ahead;

static void *ahead_main(void *arg)
{
	(void)arg;
	/* Not beside the debug files' decompressing: their frames, then the report, come after it, and
	 * this fits beside those on the other core, where it would slow the decompressing down. */
	ct_debuginfo_wait_copies();
	ahead.rc = find_packages(ahead.want, ahead.n);
	return NULL;
}

static void free_ahead(void)
{
	for (size_t i = 0; i < ahead.n; i++) {
		free(ahead.q[i].path);
		free(ahead.q[i].package);
		for (int j = 0; j < ahead.want[i].n; j++)
			free(ahead.want[i].paths[j]);
	}
	free(ahead.q);
	free(ahead.want);
	ahead.q = NULL, ahead.want = NULL, ahead.n = 0;
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
	ahead.want = n ? calloc(n, sizeof(*ahead.want)) : NULL;
	for (size_t i = 0; ahead.q && ahead.want && i < m->nmodules; i++) {
		const struct ct_module *mod = &m->modules[i];
		if (!lookup_ahead(mod))
			continue;
		if (!(ahead.q[ahead.n].path = strdup(mod->path)))
			break;
		wanted_paths(&ahead.want[ahead.n], &ahead.q[ahead.n]);
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

/* Sets w->q->package as the lookup made ahead found it, waiting for that: 1 when it looked w's file
 * up, 0 when it did not (w is looked up now), -ENOMEM. */
static int take_ahead(struct wanted *w)
{
	if (ahead.started == 1) {
		pthread_join(ahead.thread, NULL);
		ahead.started = 2;
	}
	if (!ahead.started || ahead.rc < 0)
		return 0;
	for (size_t i = 0; i < ahead.n; i++) {
		if (strcmp(ahead.q[i].path, w->q->path))
			continue;
		if (ahead.q[i].package && !(w->q->package = strdup(ahead.q[i].package)))
			return -ENOMEM;
		return 1;
	}
	return 0;
}

/* Looks up the files of want[0..n) that the lookup made ahead did not. Returns 0 or -ENOMEM. */
static int find_rest(struct wanted *want, size_t n)
{
	struct wanted *rest = calloc(n, sizeof(*rest));
	size_t k = 0;
	int rc = rest ? 0 : -ENOMEM;
	for (size_t i = 0; i < n && !rc; i++) {
		rc = take_ahead(&want[i]);
		if (!rc)
			rest[k++] = want[i]; /* shares want[i]'s paths and module */
		rc = rc < 0 ? rc : 0;
	}
	if (!rc && k)
		rc = find_packages(rest, k);
	free(rest);
	return rc;
}

/* Names the debug package in the advice of l's modules from start on that lack their split-off
 * debug info, where dpkg owns the file. Returns 0 or -ENOMEM. */
static int name_packages(struct ct_quality_list *l, size_t start)
{
	size_t n = 0;
	for (size_t i = start; i < l->n; i++)
		n += l->v[i].split_debug;
	struct wanted *want = n ? calloc(n, sizeof(*want)) : NULL;
	if (!n || !want)
		return n ? -ENOMEM : 0;
	for (size_t i = start, k = 0; i < l->n; i++)
		if (l->v[i].split_debug)
			wanted_paths(&want[k++], &l->v[i]);
	int rc = find_rest(want, n);
	const char *url = distro_debuginfod();
	for (size_t i = 0; i < n; i++) {
		struct ct_quality *q = want[i].q;
		char *advice = q->package && !rc ? package_advice(q, url) : NULL;
		if (q->package && !rc && !advice)
			rc = -ENOMEM;
		if (advice) {
			free(q->advice);
			q->advice = advice;
		}
		for (int j = 0; j < want[i].n; j++)
			free(want[i].paths[j]);
	}
	free(want);
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
