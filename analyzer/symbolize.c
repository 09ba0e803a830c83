/* SPDX-License-Identifier: MIT */
/* Symbolization with libdwfl/libdw: one offline Dwfl per module (modules may overlap over time),
 * opened lazily, and a cache of resolved (module, address) pairs, each holding its inline chain.
 * Every string it hands out is owned by the cache. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <limits.h>
#include <libiberty/demangle.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctrack/format.h"
#include "debuginfo.h"
#include "grow.h"
#include "regfile.h"
#include "symbolize.h"
#include "symtab.h"

/* An address range of a compilation unit, in dwfl addresses. */
struct cu_range {
	Dwarf_Addr lo, hi;
	Dwarf_Die cu;
};

/* The DIEs that can hold code at the top of a CU (under its DIEs without addresses that hold
 * functions), in the order a walk of the CU meets them, with their address ranges sorted: which one
 * holds a pc is then a binary search rather than a walk of the CU's top DIEs for every address
 * (libc's CUs hold hundreds). Built from a CU's second walk on. */
struct top_range {
	Dwarf_Addr lo, hi;
	Dwarf_Addr reach; /* the greatest hi of this range and those sorted before it */
	uint32_t order;   /* its DIE, in dies[] */
};

struct cu_tops {
	Dwarf_Off cu; /* the CU DIE's offset + 1: 0 marks an empty slot */
	int walks;    /* walks of the CU asked for */
	int built;
	int imported;    /* the walk stops at an imported unit after the last of dies[] */
	Dwarf_Die *dies; /* in the walk's order */
	size_t ndies, capdies;
	struct top_range *r; /* by lo */
	size_t nr, capr;
};

/* How many of v[0 .. n) (entries of stride bytes, sorted by the address at offset at of each) start
 * at or below addr: the index of the first that starts after it. */
static size_t starting_by(const void *v, size_t n, size_t stride, size_t at, Dwarf_Addr addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		Dwarf_Addr start;
		memcpy(&start, (const char *)v + mid * stride + at, sizeof(start));
		if (start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Per module id: its Dwfl, opened on first use. */
struct dso {
	int tried;
	enum ct_module_file file; /* what is at the path: the traced file, or why not */
	int err;                  /* CT_FILE_UNREADABLE: why */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf_Addr bias; /* dwfl address = ELF vaddr + bias */
	/* CU ranges sorted by lo, read on first use: libdw 0.188 finds CUs only through .debug_aranges,
	 * which clang does not emit. */
	int indexed;
	struct cu_range *cus;
	size_t ncus;
	Dwarf_Addr dwarf_bias; /* dwfl address = DWARF address + dwarf_bias */
	int symtab_tried;
	struct ct_symtab *symtab; /* its symbols by address, built on first use */
	struct cu_tops *tops;     /* per CU walked: its top DIEs by address (open addressing by offset) */
	size_t ntops, sizetops;
};

struct entry {
	uint64_t key_mod; /* module id + 1; 0 marks an empty slot */
	uint64_t ip;
	int exact;               /* ip is resolved at itself, not at ip - 1 */
	struct ct_frame *frames; /* innermost first, the real function last */
	int nframes;
};

/* A stack node's frames in the cache (an entry's, which do not move when the table grows). */
struct node_frames {
	const struct ct_frame *v; /* NULL: not looked up yet */
	int n;
};

struct ct_symbolizer {
	struct dso *dsos;
	size_t ndsos;
	struct entry *table; /* open addressing, power-of-two size, at most half full */
	size_t size, used;
	uint32_t frames; /* frames made: the last id given */
	/* per node of by_model (ct_symbolize_node_frames): walks visit each node many times */
	const struct ct_model *by_model;
	struct node_frames *by_node;
	size_t nby_node;
};

struct ct_symbolizer *ct_symbolizer_new(void)
{
	struct ct_symbolizer *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->size = 1024;
	s->table = calloc(s->size, sizeof(*s->table));
	if (!s->table) {
		free(s);
		return NULL;
	}
	return s;
}

/* Frees the strings of n frames (not the array). */
static void free_strings(struct ct_frame *f, int n)
{
	for (int i = 0; i < n; i++) {
		free((char *)f[i].function);
		free((char *)f[i].symbol);
		free((char *)f[i].file);
	}
}

void ct_symbolizer_free(struct ct_symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ndsos; i++) {
		for (size_t k = 0; k < s->dsos[i].sizetops; k++) {
			free(s->dsos[i].tops[k].dies);
			free(s->dsos[i].tops[k].r);
		}
		free(s->dsos[i].tops);
		ct_symtab_free(s->dsos[i].symtab);
		if (s->dsos[i].dwfl)
			dwfl_end(s->dsos[i].dwfl);
		free(s->dsos[i].cus);
	}
	for (size_t i = 0; i < s->size; i++)
		if (s->table[i].key_mod) {
			free_strings(s->table[i].frames, s->table[i].nframes);
			free(s->table[i].frames);
		}
	free(s->dsos);
	free(s->table);
	free(s->by_node);
	free(s);
}

/* ---- modules ---- */

/* ELF prot bits as a MODULE record writes them. */
static uint8_t seg_prot(const GElf_Phdr *ph)
{
	return (uint8_t)(((ph->p_flags & PF_R) ? CT_SEG_READ : 0) |
	                 ((ph->p_flags & PF_W) ? CT_SEG_WRITE : 0) |
	                 ((ph->p_flags & PF_X) ? CT_SEG_EXEC : 0));
}

/* Whether elf's PT_LOAD segments are the ones m recorded (a writer may record fewer than a file
 * has: those it did must match). */
static int segments_match(Elf *elf, const struct ct_module *m)
{
	size_t n, k = 0;
	if (!elf || elf_getphdrnum(elf, &n) < 0)
		return 1; /* nothing to compare */
	for (size_t i = 0; i < n && k < m->nseg; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		const struct ct_segment *seg = &m->segs[k++];
		if (seg->vaddr != ph.p_vaddr || seg->memsz != ph.p_memsz || seg->offset != ph.p_offset ||
		    seg->prot != seg_prot(&ph))
			return 0;
	}
	return k == m->nseg;
}

/* Whether the file open on fd was modified after m was loaded. */
static int modified_since(int fd, const struct ct_module *m)
{
	struct stat st;
	if (!m->loaded_unix_ns || fstat(fd, &st) < 0)
		return 0;
	uint64_t mtime = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
	return mtime > m->loaded_unix_ns;
}

/* Whether mod is the file m recorded: the same build-id, or when the trace has none, the same
 * segments (a file that is not would give wrong names: none is better); CT_FILE_NEWER when only its
 * time (newer: it was modified after m was loaded) says it may not be. */
static enum ct_module_file compare(Dwfl_Module *mod, const struct ct_module *m, int newer)
{
	const unsigned char *bits;
	GElf_Addr vaddr, bias;
	int n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n > 0 && m->build_id_len)
		return (size_t)n == m->build_id_len && !memcmp(bits, m->build_id, (size_t)n)
		           ? CT_FILE_SAME
		           : CT_FILE_REBUILT;
	if (m->build_id_len)
		return CT_FILE_NO_BUILD_ID;
	if (!segments_match(dwfl_module_getelf(mod, &bias), m))
		return CT_FILE_RELAID;
	return newer ? CT_FILE_NEWER : CT_FILE_SAME;
}

/* What the failed open of a module's file says of it. */
static enum ct_module_file open_failed(int err)
{
	if (err == -ENOENT || err == -ENOTDIR)
		return CT_FILE_GONE;
	return err == -EINVAL || err == -EISDIR ? CT_FILE_NOT_ELF : CT_FILE_UNREADABLE;
}

static void open_dso(struct dso *d, const struct ct_module *m)
{
	d->tried = 1;
	d->file = CT_FILE_NONE;
	if (!m->path || m->path[0] != '/')
		return;                          /* the vdso and other pseudo files have no file to read */
	int fd = ct_regfile_open(m->path, NULL); /* a trace may name a FIFO or a device */
	if (fd < 0) {
		d->file = open_failed(fd);
		d->err = -fd;
		return;
	}
	d->file = CT_FILE_NOT_ELF;
	int newer = modified_since(fd, m);
	d->dwfl = dwfl_begin(ct_debuginfo_callbacks());
	if (d->dwfl) {
		dwfl_report_begin(d->dwfl);
		d->mod = dwfl_report_elf(d->dwfl, m->path, m->path, fd, 0, false); /* takes fd */
		dwfl_report_end(d->dwfl, NULL, NULL);
	}
	if (!d->mod)
		close(fd);
	if (d->mod)
		d->file = compare(d->mod, m, newer);
	if (!d->dwfl)
		return;
	if (d->mod && (d->file == CT_FILE_SAME || d->file == CT_FILE_NEWER) &&
	    dwfl_module_getelf(d->mod, &d->bias))
		return;
	dwfl_end(d->dwfl);
	*d = (struct dso){.tried = 1, .file = d->file};
}

static struct dso *dso_for(struct ct_symbolizer *s, const struct ct_module *m)
{
	if (ct_grow_zeroed((void **)&s->dsos, &s->ndsos, m->id, sizeof(*s->dsos), 16) < 0)
		return NULL;
	struct dso *d = &s->dsos[m->id];
	if (!d->tried)
		open_dso(d, m);
	return d;
}

struct Dwfl_Module *ct_symbolizer_module(struct ct_symbolizer *s, const struct ct_module *mod,
                                         enum ct_module_file *file, int *err)
{
	struct dso *d = dso_for(s, mod);
	*file = d ? d->file : CT_FILE_NONE;
	*err = d ? d->err : ENOMEM;
	return d ? d->mod : NULL;
}

/* ---- pages given back ---- */

/* Unmaps from this process the pages of [p, p + len) that are a file's own pages, unchanged: the
 * kernel reads them again from the file (or memfd) when touched. A page this process changed (a
 * private copy), never touched, or not a file's (a buffer libelf read the file into) is left alone:
 * /proc/self/pagemap tells them apart, and without it nothing is given back. */
static void give_back(const void *p, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	int fd = page > 0 && p && len ? open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0)
		return;
	uintptr_t first = (uintptr_t)p / (uintptr_t)page, last = ((uintptr_t)p + len) / (uintptr_t)page;
	uint64_t flags[512];
	uintptr_t run = 0, nrun = 0;                 /* pages to give back, not yet given */
	for (uintptr_t at = first + 1; at < last;) { /* the first and last pages may hold other data */
		size_t n = last - at < 512 ? (size_t)(last - at) : 512;
		ssize_t got = pread(fd, flags, n * sizeof(*flags), (off_t)(at * sizeof(*flags)));
		if (got <= 0)
			break;
		n = (size_t)got / sizeof(*flags);
		for (size_t i = 0; i < n; i++) {
			/* bit 63: present; 61: a file page (or shared anonymous); 62: swapped */
			int file = (flags[i] >> 63 & 1) && (flags[i] >> 61 & 1) && !(flags[i] >> 62 & 1);
			if (file && nrun && run + nrun == at + i) {
				nrun++;
				continue;
			}
			if (nrun)
				madvise((void *)(run * (uintptr_t)page), nrun * (size_t)page, MADV_DONTNEED);
			run = at + i, nrun = file;
		}
		at += n;
	}
	if (nrun)
		madvise((void *)(run * (uintptr_t)page), nrun * (size_t)page, MADV_DONTNEED);
	close(fd);
}

static void give_back_elf(Elf *elf)
{
	size_t len = 0;
	const char *raw = elf ? elf_rawfile(elf, &len) : NULL;
	give_back(raw, len);
}

void ct_symbolizer_give_back(struct ct_symbolizer *s)
{
	for (size_t i = 0; i < s->ndsos; i++) {
		Dwfl_Module *mod = s->dsos[i].mod;
		if (!mod)
			continue;
		GElf_Addr bias;
		Dwarf_Addr dwbias;
		Elf *elf = dwfl_module_getelf(mod, &bias);
		/* only DWARF already looked for: never loaded here */
		dwfl_module_info(mod, NULL, NULL, NULL, &dwbias, NULL, NULL, NULL);
		Dwarf *dw = dwbias != (Dwarf_Addr)-1 ? dwfl_module_getdwarf(mod, &dwbias) : NULL;
		Elf *debug = dw ? dwarf_getelf(dw) : NULL;
		give_back_elf(elf);
		if (debug != elf)
			give_back_elf(debug);
	}
}

/* ---- compilation units ---- */

static int cmp_ranges(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int add_range(struct dso *d, size_t *cap, Dwarf_Addr lo, Dwarf_Addr hi, const Dwarf_Die *cu)
{
	if (d->ncus == *cap) {
		size_t n = *cap ? 2 * *cap : 64;
		struct cu_range *v = realloc(d->cus, n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		d->cus = v;
		*cap = n;
	}
	d->cus[d->ncus++] = (struct cu_range){.lo = lo + d->dwarf_bias, .hi = hi + d->dwarf_bias, .cu = *cu};
	return 0;
}

/* Reads every CU's ranges once (a module without DWARF has none). */
static int index_cus(struct dso *d)
{
	size_t cap = 0;
	Dwarf_Die *cu = NULL;
	while ((cu = dwfl_module_nextcu(d->mod, cu, &d->dwarf_bias))) {
		Dwarf_Addr base, lo, hi;
		for (ptrdiff_t off = 0; (off = dwarf_ranges(cu, off, &base, &lo, &hi)) > 0;) {
			if (lo < hi && add_range(d, &cap, lo, hi, cu) < 0) {
				free(d->cus);
				d->cus = NULL;
				d->ncus = 0;
				return -ENOMEM;
			}
		}
	}
	if (d->ncus) /* a module without CUs has no array: qsort's base must not be NULL */
		qsort(d->cus, d->ncus, sizeof(*d->cus), cmp_ranges);
	d->indexed = 1;
	return 0;
}

/* Sets *cu to the CU holding addr (a dwfl address) or NULL, and *bias to convert to its DWARF
 * addresses. Returns 0 or -ENOMEM. */
static int find_cu(struct dso *d, Dwarf_Addr addr, Dwarf_Die **cu, Dwarf_Addr *bias)
{
	/* libdwfl 0.188 answers with the last CU starting below addr even past its end: code without
	 * debug info after a CU (crt1.o's _start after main) would get that CU's last line. */
	*cu = dwfl_module_addrdie(d->mod, addr, bias);
	if (*cu && dwarf_haspc(*cu, addr - *bias) == 1)
		return 0;
	*cu = NULL;
	if (!d->indexed && index_cus(d) < 0)
		return -ENOMEM;
	size_t lo = starting_by(d->cus, d->ncus, sizeof(*d->cus), offsetof(struct cu_range, lo), addr);
	if (lo && addr < d->cus[lo - 1].hi) {
		*cu = &d->cus[lo - 1].cu;
		*bias = d->dwarf_bias;
	}
	return 0;
}

/* ---- one address ---- */

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* The words of the suffixes compilers add to a function's name: gcc's clones and local copies
 * (foo.isra.0, foo.constprop.3, foo.part.0, foo.cold, foo.localalias, foo.lto_priv.0, foo.clone.1)
 * and clang's (foo.llvm.123, foo.__uniq.456). */
static const char *const compiler_suffixes[] = {"localalias", "isra",  "part", "constprop", "cold",
                                                "lto_priv",   "clone", "llvm", "__uniq"};

/* Whether s (at a '.', up to its end) is made only of such suffixes and their numbers, starting
 * with a word: ".isra.0.cold" and ".constprop.0.isra.0" are, ".0" and ".foo" are not. */
static int compiler_suffix(const char *s, size_t len)
{
	const char *end = s + len;
	int words = 0;
	while (s < end) {
		const char *token = s + 1, *next = memchr(token, '.', (size_t)(end - token));
		size_t n = (size_t)((next ? next : end) - token), digits = strspn(token, "0123456789");
		int known = 0;
		for (size_t i = 0; i < sizeof(compiler_suffixes) / sizeof(compiler_suffixes[0]); i++)
			known |= strlen(compiler_suffixes[i]) == n && !memcmp(token, compiler_suffixes[i], n);
		if (!n || (!known && (digits < n || !words)))
			return 0;
		words += known;
		s = token + n;
	}
	return words > 0;
}

/* The length of name without its compiler-made suffixes. Only the symbol as the binary spells it
 * is cut (a C++ or Rust name is still mangled: its dots are these suffixes); assembler labels
 * (".L...") are left whole. */
static size_t plain_length(const char *name, size_t len)
{
	if (name[0] == '.')
		return len;
	for (const char *dot = memchr(name, '.', len); dot;
	     dot = memchr(dot + 1, '.', len - (size_t)(dot + 1 - name)))
		if (compiler_suffix(dot, len - (size_t)(dot - name)))
			return (size_t)(dot - name);
	return len;
}

/* The readable name: without the symbol version ("memcpy@@GLIBC_2.14" -> "memcpy") and compiler
 * suffixes ("_nl_make_l10nflist.localalias", "foo.isra.0.cold" -> "foo"), demangled. */
static char *demangle(const char *name)
{
	char *plain = strndup(name, plain_length(name, strcspn(name, "@")));
	/* _Z: C++ and legacy Rust (libiberty drops its hash); _R: Rust v0. */
	if (!plain || plain[0] != '_' || (plain[1] != 'Z' && plain[1] != 'R'))
		return plain;
	char *d = cplus_demangle(plain, DMGL_PARAMS | DMGL_ANSI);
	if (!d)
		return plain;
	free(plain);
	return d;
}

/* The frames of one address, innermost first. */
struct chain {
	struct ct_frame v[CT_SYMBOLIZE_MAX];
	int n;
};

/* Appends a frame owning function and copies of symbol and file; past CT_SYMBOLIZE_MAX the
 * innermost goes. */
static int push(struct chain *c, const struct ct_frame *f, char *function, const char *symbol,
                const char *file)
{
	char *file_copy = file ? strdup(file) : NULL, *symbol_copy = symbol ? strdup(symbol) : NULL;
	if (!function || (file && !file_copy) || (symbol && !symbol_copy)) {
		free(function);
		free(symbol_copy);
		free(file_copy);
		return -ENOMEM;
	}
	if (c->n == CT_SYMBOLIZE_MAX) {
		free_strings(c->v, 1);
		memmove(c->v, c->v + 1, (size_t)(c->n - 1) * sizeof(c->v[0]));
		c->n--;
	}
	struct ct_frame *out = &c->v[c->n++];
	*out = *f;
	out->function = function;
	out->symbol = symbol_copy;
	out->file = file_copy;
	return 0;
}

/* An inlined function's name comes from its abstract origin: the linkage name names C++
 * functions as the symbol table does (demangle it); C has only DW_AT_name. NULL when it has none. */
static const char *die_function(Dwarf_Die *die)
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

/* path with "." and ".." resolved as words (a/b/../c -> a/c), never through the file system: a
 * symlinked directory stays as it was named. path is absolute; ".." at the root stays there. */
static void normalize(char *path)
{
	char *out = path, *p = path;
	while (*p) {
		while (*p == '/')
			p++;
		char *end = strchrnul(p, '/');
		size_t n = (size_t)(end - p);
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			while (out > path && *--out != '/')
				; /* drop the last word written */
		} else if (n && !(n == 1 && *p == '.')) {
			*out++ = '/';
			memmove(out, p, n);
			out += n;
		}
		p = end;
	}
	if (out == path)
		*out++ = '/';
	*out = '\0';
}

/* A source file named relative to its compilation unit's directory (a meson build dir's
 * "../src/x.c") as the absolute path that exists there, as elfutils' addr2line -A joins them, into
 * buf; else file itself (no DW_AT_comp_dir, nothing at the joined path). */
static const char *absolute(Dwarf_Die *cu, const char *file, char *buf, size_t len)
{
	Dwarf_Attribute a;
	struct stat st;
	const char *dir =
	    file && file[0] != '/' ? dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &a)) : NULL;
	if (!dir || dir[0] != '/' || (size_t)snprintf(buf, len, "%s/%s", dir, file) >= len)
		return file;
	normalize(buf);
	return stat(buf, &st) == 0 ? buf : file;
}

/* Where an inlined subroutine was inlined: DW_AT_call_file (an index into its CU's file table)
 * and DW_AT_call_line. *file is NULL when either is missing. */
static void call_site(Dwarf_Die *inl, Dwarf_Die *cu, const char **file, int *line)
{
	Dwarf_Attribute a;
	Dwarf_Word index, lineno;
	Dwarf_Files *files;
	size_t nfiles;
	*file = NULL;
	*line = 0;
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &a), &index) != 0 ||
	    dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &a), &lineno) != 0 || lineno == 0)
		return;
	if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0 || index >= nfiles)
		return;
	*file = dwarf_filesrc(files, index, NULL, NULL);
	*line = (int)lineno;
}

/* Sets *out to the innermost DIE under parent holding pc, looking through the DIEs without
 * addresses that hold functions (Rust nests every function in its modules' namespaces, which
 * libdw 0.188's dwarf_getscopes prunes). Returns 1 when found, else 0. */
static int innermost_die(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *out)
{
	Dwarf_Die child;
	if (dwarf_child(parent, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child);
		int holder = tag == DW_TAG_namespace || tag == DW_TAG_structure_type ||
		             tag == DW_TAG_class_type || tag == DW_TAG_union_type;
		if (!holder && dwarf_haspc(&child, pc) != 1)
			continue;
		if (innermost_die(&child, pc, out))
			return 1;
		if (!holder) {
			*out = child;
			return 1;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

/* The scopes holding pc (a DWARF address) in cu, innermost first, as they nest in the code: the
 * callers of an inlined function rather than its abstract definition's parents. */
static int concrete_scopes(Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die **scopes)
{
	Dwarf_Die found;
	int n = dwarf_getscopes(cu, pc, scopes), inlined = 0;
	if (n <= 1 && innermost_die(cu, pc, &found)) { /* none or the CU: maybe a namespaced function */
		free(*scopes);
		*scopes = NULL;
		return dwarf_getscopes_die(&found, scopes);
	}
	for (int i = 0; i < n; i++)
		inlined |= dwarf_tag(&(*scopes)[i]) == DW_TAG_inlined_subroutine;
	if (!inlined)
		return n; /* walking the CU again is costly: only inline chains need it */
	Dwarf_Die innermost = (*scopes)[0];
	free(*scopes);
	*scopes = NULL;
	return dwarf_getscopes_die(&innermost, scopes);
}

/* The DIEs from a CU down to the innermost one holding a pc, outermost first. */
struct path {
	Dwarf_Die *v;
	int n, cap;
};

/* Appends die to p: 0, or -ENOMEM. */
static int push_die(struct path *p, const Dwarf_Die *die)
{
	if (p->n == p->cap) {
		int cap = p->cap ? 2 * p->cap : 16;
		Dwarf_Die *v = realloc(p->v, (size_t)cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		p->v = v, p->cap = cap;
	}
	p->v[p->n++] = *die;
	return 0;
}

/* Whether DIEs of this tag may hold code (the others, types and variables, are not asked). */
static int has_code(int tag)
{
	switch (tag) {
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_lexical_block:
	case DW_TAG_entry_point:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_with_stmt:
	case DW_TAG_module:
	case DW_TAG_partial_unit:
		return 1;
	default:
		return 0;
	}
}

/* Appends to p the DIEs under parent down to the innermost one holding pc, as innermost_die finds it
 * (the DIEs without addresses that hold functions looked through, not kept). Returns 1 when one
 * holds pc, 0 if none, -1 at an imported unit (whose DIEs libdw's walk would look into), or -ENOMEM. */
static int descend(Dwarf_Die *parent, Dwarf_Addr pc, struct path *p)
{
	Dwarf_Die child;
	if (dwarf_child(parent, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_imported_unit)
			return -1;
		if (tag == DW_TAG_namespace || tag == DW_TAG_structure_type || tag == DW_TAG_class_type ||
		    tag == DW_TAG_union_type) {
			int rc = descend(&child, pc, p);
			if (rc)
				return rc;
			continue;
		}
		if (!has_code(tag) || dwarf_haspc(&child, pc) != 1)
			continue;
		if (push_die(p, &child) < 0)
			return -ENOMEM;
		int rc = descend(&child, pc, p);
		return rc < 0 ? rc : 1;
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

/* ---- a CU's top DIEs ---- */

/* The entry of the CU at offset off in d's table, made (no walk yet) when it has none; NULL when the
 * table cannot grow. */
static struct cu_tops *tops_slot(struct dso *d, Dwarf_Off off)
{
	if (2 * (d->ntops + 1) > d->sizetops) {
		size_t size = d->sizetops ? 2 * d->sizetops : 64;
		struct cu_tops *v = calloc(size, sizeof(*v));
		if (!v)
			return NULL;
		for (size_t i = 0; i < d->sizetops; i++) {
			if (!d->tops[i].cu)
				continue;
			size_t k = (size_t)(d->tops[i].cu * 0x9e3779b97f4a7c15ull >> 32) & (size - 1);
			while (v[k].cu)
				k = (k + 1) & (size - 1);
			v[k] = d->tops[i];
		}
		free(d->tops);
		d->tops = v, d->sizetops = size;
	}
	size_t k = (size_t)((off + 1) * 0x9e3779b97f4a7c15ull >> 32) & (d->sizetops - 1);
	while (d->tops[k].cu && d->tops[k].cu != off + 1)
		k = (k + 1) & (d->sizetops - 1);
	if (!d->tops[k].cu) {
		d->tops[k].cu = off + 1;
		d->ntops++;
	}
	return &d->tops[k];
}

/* Adds die (it can hold code) and its ranges to t. Returns 0 or -ENOMEM. */
static int add_top(struct cu_tops *t, Dwarf_Die *die)
{
	if (t->ndies == t->capdies) {
		size_t cap = t->capdies ? 2 * t->capdies : 64;
		Dwarf_Die *v = realloc(t->dies, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		t->dies = v, t->capdies = cap;
	}
	uint32_t order = (uint32_t)t->ndies;
	t->dies[t->ndies++] = *die;
	Dwarf_Addr base, lo, hi;
	/* the ranges dwarf_haspc looks through, up to the same error if any */
	for (ptrdiff_t off = 0; (off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0;) {
		if (lo >= hi)
			continue; /* holds no pc */
		if (t->nr == t->capr) {
			size_t cap = t->capr ? 2 * t->capr : 64;
			struct top_range *v = realloc(t->r, cap * sizeof(*v));
			if (!v)
				return -ENOMEM;
			t->r = v, t->capr = cap;
		}
		t->r[t->nr++] = (struct top_range){.lo = lo, .hi = hi, .order = order};
	}
	return 0;
}

/* Adds the DIEs under parent as descend walks them: the ones that can hold code, looking into those
 * without addresses that hold functions. Returns 1 at an imported unit (where descend stops), else 0,
 * or -ENOMEM. */
static int add_tops(struct cu_tops *t, Dwarf_Die *parent)
{
	Dwarf_Die child;
	if (dwarf_child(parent, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child), rc = 0;
		if (tag == DW_TAG_imported_unit)
			return 1;
		if (tag == DW_TAG_namespace || tag == DW_TAG_structure_type || tag == DW_TAG_class_type ||
		    tag == DW_TAG_union_type)
			rc = add_tops(t, &child);
		else if (has_code(tag))
			rc = add_top(t, &child);
		if (rc)
			return rc;
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

static int cmp_tops(const void *a, const void *b)
{
	const struct top_range *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int build_tops(struct cu_tops *t, Dwarf_Die *cu)
{
	t->ndies = t->nr = 0; /* what a build that ran out of memory left */
	int rc = add_tops(t, cu);
	if (rc < 0)
		return rc;
	t->imported = rc;
	if (t->nr) /* qsort's base must not be NULL */
		qsort(t->r, t->nr, sizeof(*t->r), cmp_tops);
	for (size_t i = 0; i < t->nr; i++)
		t->r[i].reach = i && t->r[i - 1].reach > t->r[i].hi ? t->r[i - 1].reach : t->r[i].hi;
	t->built = 1;
	return 0;
}

/* The first of t's DIEs in the walk's order holding pc, or NULL. */
static Dwarf_Die *top_holding(const struct cu_tops *t, Dwarf_Addr pc)
{
	size_t lo = starting_by(t->r, t->nr, sizeof(*t->r), offsetof(struct top_range, lo), pc);
	uint32_t best = UINT32_MAX;
	for (size_t i = lo; i-- > 0 && t->r[i].reach > pc;)
		if (pc < t->r[i].hi && t->r[i].order < best)
			best = t->r[i].order;
	return best == UINT32_MAX ? NULL : &t->dies[best];
}

/* descend from cu, through its index of top DIEs once it has one. */
static int descend_cu(struct dso *d, Dwarf_Die *cu, Dwarf_Addr pc, struct path *p)
{
	struct cu_tops *t = d ? tops_slot(d, dwarf_dieoffset(cu)) : NULL;
	if (t && !t->built && ++t->walks > 1 && build_tops(t, cu) < 0)
		return -ENOMEM;
	if (!t || !t->built)
		return descend(cu, pc, p);
	Dwarf_Die *top = top_holding(t, pc);
	if (!top)
		return t->imported ? -1 : 0;
	if (push_die(p, top) < 0)
		return -ENOMEM;
	int rc = descend(top, pc, p);
	return rc < 0 ? rc : 1;
}

/* The scopes holding pc (a DWARF address) in cu as they nest in the code, innermost first, in one
 * walk of the CU: libdw's dwarf_getscopes, then dwarf_getscopes_die to leave an inline chain's
 * abstract definitions, walk it up to twice. Falls back to them where the walk cannot tell (an
 * imported unit). Returns the count, or -ENOMEM. */
static int walk_scopes(struct dso *d, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die **scopes)
{
	struct path p = {0};
	int rc = descend_cu(d, cu, pc, &p);
	if (rc == -1) {
		free(p.v);
		return concrete_scopes(cu, pc, scopes);
	}
	if (rc < 0) {
		free(p.v);
		return rc;
	}
	for (int i = 0; i < p.n / 2; i++) { /* innermost first */
		Dwarf_Die t = p.v[i];
		p.v[i] = p.v[p.n - 1 - i], p.v[p.n - 1 - i] = t;
	}
	*scopes = p.v;
	return p.n;
}

/* Pushes the inlined functions holding pc, innermost first; *file and *line start as the line
 * table's and end as the call site inside the real function. */
static int push_inlined(struct chain *c, const struct ct_frame *base, struct dso *d, Dwarf_Die *cu,
                        Dwarf_Addr pc, const char **file, int *line)
{
	Dwarf_Die *scopes = NULL;
	int n = walk_scopes(d, cu, pc, &scopes), rc = n < 0 ? n : 0;
	for (int i = 0; i < n && !rc; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_subprogram)
			break; /* the real function: the symbol table names it */
		if (tag != DW_TAG_inlined_subroutine)
			continue; /* lexical blocks */
		struct ct_frame f = *base;
		f.line = *file && *line > 0 ? (unsigned)*line : 0;
		f.inlined = 1;
		const char *name = die_function(&scopes[i]);
		char path[PATH_MAX];
		rc = push(c, &f, name ? demangle(name) : strdup("??"), name,
		          f.line ? absolute(cu, *file, path, sizeof(path)) : NULL);
		call_site(&scopes[i], cu, file, line);
	}
	free(scopes);
	return rc;
}

/* The line table's file and line for pc in cu; *file stays NULL when it has none. */
static void source_line(Dwarf_Die *cu, Dwarf_Addr pc, const char **file, int *line)
{
	Dwarf_Line *l = dwarf_getsrc_die(cu, pc);
	if (l && dwarf_lineno(l, line) == 0)
		*file = dwarf_linesrc(l, NULL, NULL);
}

/* The symbol covering addr, as dwfl_module_addrinfo names it (*size: its st_size), from the index
 * where it can tell. */
static const char *symbol_name(struct dso *d, Dwarf_Addr addr, GElf_Xword *size)
{
	if (!d->symtab_tried) {
		d->symtab = ct_symtab_build(d->mod);
		d->symtab_tried = 1;
	}
	return ct_symtab_name(d->symtab, d->mod, addr, size);
}

/* The frames of ip in m; exact: ip is the instruction itself, else a return address. */
static int resolve(struct ct_symbolizer *s, const struct ct_module *m, uint64_t ip, int exact,
                   struct chain *c)
{
	char buf[64], path[PATH_MAX];
	struct ct_frame f = {.address = ip, .offset = m ? ip - m->base : ip, .module = m ? m->path : NULL};
	char *function = NULL;
	const char *file = NULL, *name = NULL;
	int lineno = 0;
	struct dso *d = m ? dso_for(s, m) : NULL;
	if (m && !d)
		return -ENOMEM;
	if (d && d->mod) {
		/* A return address's ip - 1 lies inside the call instruction. */
		Dwarf_Addr addr = ip - m->base - (exact ? 0 : 1) + d->bias;
		GElf_Xword size;
		name = symbol_name(d, addr, &size);
		if (name && !(function = demangle(name)))
			return -ENOMEM;
		Dwarf_Addr bias;
		Dwarf_Die *cu;
		int rc = find_cu(d, addr, &cu, &bias);
		if (!rc && cu) {
			source_line(cu, addr - bias, &file, &lineno);
			rc = push_inlined(c, &f, d, cu, addr - bias, &file, &lineno);
			file = absolute(cu, file, path, sizeof(path));
		}
		if (rc < 0) {
			free(function);
			return rc;
		}
	}
	if (file && lineno > 0)
		f.line = (unsigned)lineno;
	else
		file = NULL;
	if (!function && m)
		snprintf(buf, sizeof(buf), "%.40s+0x%" PRIx64, basename_of(m->path), ip - m->base);
	else if (!function)
		snprintf(buf, sizeof(buf), "??");
	return push(c, &f, function ? function : strdup(buf), function ? name : NULL, file);
}

/* ---- the cache ---- */

static size_t slot_of(const struct ct_symbolizer *s, uint64_t key_mod, uint64_t ip, int exact)
{
	uint64_t h = (ip ^ (key_mod << 47) ^ (uint64_t)exact << 46) * 0x9e3779b97f4a7c15ull;
	size_t i = (size_t)(h >> 20) & (s->size - 1);
	while (s->table[i].key_mod &&
	       (s->table[i].key_mod != key_mod || s->table[i].ip != ip || s->table[i].exact != exact))
		i = (i + 1) & (s->size - 1);
	return i;
}

static int grow_table(struct ct_symbolizer *s)
{
	struct entry *old = s->table;
	size_t n = s->size;
	s->table = calloc(n * 2, sizeof(*old));
	if (!s->table) {
		s->table = old;
		return -ENOMEM;
	}
	s->size = n * 2;
	for (size_t i = 0; i < n; i++)
		if (old[i].key_mod)
			s->table[slot_of(s, old[i].key_mod, old[i].ip, old[i].exact)] = old[i];
	free(old);
	return 0;
}

/* The cached frames of (mod, ip, exact), resolved on first use; NULL on -ENOMEM. */
static const struct entry *lookup(struct ct_symbolizer *s, const struct ct_module *mod, uint64_t ip,
                                  int exact)
{
	uint64_t key_mod = mod ? (uint64_t)mod->id + 2 : 1;
	size_t i = slot_of(s, key_mod, ip, exact);
	if (s->table[i].key_mod)
		return &s->table[i];
	struct chain c = {.n = 0};
	struct ct_frame *frames = NULL;
	if (resolve(s, mod, ip, exact, &c) < 0 || (2 * (s->used + 1) > s->size && grow_table(s) < 0) ||
	    !(frames = malloc((size_t)c.n * sizeof(*frames)))) {
		free_strings(c.v, c.n);
		return NULL;
	}
	memcpy(frames, c.v, (size_t)c.n * sizeof(*frames));
	for (int k = 0; k < c.n; k++)
		frames[k].id = ++s->frames;
	i = slot_of(s, key_mod, ip, exact);
	s->table[i] =
	    (struct entry){.key_mod = key_mod, .ip = ip, .exact = exact, .frames = frames, .nframes = c.n};
	s->used++;
	return &s->table[i];
}

static int symbolize(struct ct_symbolizer *s, const struct ct_module *mod, uint64_t ip, int exact,
                     struct ct_frame *out, int max)
{
	if (max < 1)
		return 0;
	const struct entry *e = lookup(s, mod, ip, exact);
	if (!e)
		return -ENOMEM;
	int n = e->nframes < max ? e->nframes : max;
	memcpy(out, e->frames + (e->nframes - n), (size_t)n * sizeof(*out));
	return n;
}

int ct_symbolize(struct ct_symbolizer *s, const struct ct_module *mod, uint64_t ip, struct ct_frame *out,
                 int max)
{
	return symbolize(s, mod, ip, 0, out, max);
}

int ct_symbolize_node(struct ct_symbolizer *s, const struct ct_model *m, uint32_t node, struct ct_frame *out,
                      int max)
{
	return symbolize(s, ct_model_node_module(m, node), m->nodes[node].ip, ct_model_node_exact(m, node),
	                 out, max);
}

int ct_symbolize_prepare(struct ct_symbolizer *s, const struct ct_module *mod, uint64_t ip)
{
	return lookup(s, mod, ip, 0) ? 0 : -ENOMEM;
}

int ct_symbolize_node_frames(struct ct_symbolizer *s, const struct ct_model *m, uint32_t node,
                             const struct ct_frame **frames)
{
	if (s->by_model != m || s->nby_node != m->nnodes) { /* another model, or one read further */
		free(s->by_node);
		s->by_node = calloc(m->nnodes ? m->nnodes : 1, sizeof(*s->by_node));
		s->by_model = s->by_node ? m : NULL;
		s->nby_node = s->by_node ? m->nnodes : 0;
	}
	struct node_frames *k = node < s->nby_node ? &s->by_node[node] : NULL;
	if (k && k->v) {
		*frames = k->v;
		return k->n;
	}
	const struct entry *e =
	    lookup(s, ct_model_node_module(m, node), m->nodes[node].ip, ct_model_node_exact(m, node));
	if (!e)
		return -ENOMEM;
	if (k)
		*k = (struct node_frames){e->frames, e->nframes};
	*frames = e->frames;
	return e->nframes;
}

uint64_t ct_symbolize_symbol_size(struct ct_symbolizer *s, const struct ct_module *mod, uint64_t ip)
{
	struct dso *d = mod ? dso_for(s, mod) : NULL;
	if (!d || !d->mod)
		return 0;
	GElf_Xword size;
	/* return address - 1: the call instruction, inside the function even for a noreturn call */
	const char *name = symbol_name(d, ip - mod->base - 1 + d->bias, &size);
	return name ? size : 0;
}
