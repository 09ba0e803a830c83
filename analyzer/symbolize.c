/* SPDX-License-Identifier: MIT */
/* Symbolization with libdwfl: one offline Dwfl per module (modules may overlap over time), opened
 * lazily, and a cache of resolved (module, address) pairs. The only file that includes libdwfl. */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <inttypes.h>
#include <libiberty/demangle.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize.h"

/* Per module id: its Dwfl, opened on first use. */
struct dso {
	int tried;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf_Addr bias; /* dwfl address = ELF vaddr + bias */
};

struct entry {
	uint64_t key_mod; /* module id + 1; 0 marks an empty slot */
	uint64_t ip;
	struct ct_frame frame;
};

struct ct_symbolizer {
	struct dso *dsos;
	size_t ndsos;
	struct entry *table; /* open addressing, power-of-two size, at most half full */
	size_t size, used;
};

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
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

static void free_frame(struct ct_frame *f)
{
	free((char *)f->function);
	free((char *)f->file);
}

void ct_symbolizer_free(struct ct_symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ndsos; i++)
		if (s->dsos[i].dwfl)
			dwfl_end(s->dsos[i].dwfl);
	for (size_t i = 0; i < s->size; i++)
		if (s->table[i].key_mod)
			free_frame(&s->table[i].frame);
	free(s->dsos);
	free(s->table);
	free(s);
}

/* ---- modules ---- */

/* A module whose file's build-id differs from the recorded one would give wrong names: none is better. */
static int build_id_matches(Dwfl_Module *mod, const struct ct_module *m)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n <= 0 || !m->build_id_len)
		return 1; /* nothing to compare */
	return (size_t)n == m->build_id_len && !memcmp(bits, m->build_id, (size_t)n);
}

static void open_dso(struct dso *d, const struct ct_module *m)
{
	d->tried = 1;
	if (!m->path || m->path[0] != '/')
		return; /* the vdso and other pseudo files have no file to read */
	d->dwfl = dwfl_begin(&callbacks);
	if (!d->dwfl)
		return;
	dwfl_report_begin(d->dwfl);
	d->mod = dwfl_report_elf(d->dwfl, m->path, m->path, -1, 0, false);
	dwfl_report_end(d->dwfl, NULL, NULL);
	if (d->mod && build_id_matches(d->mod, m) && dwfl_module_getelf(d->mod, &d->bias))
		return;
	dwfl_end(d->dwfl);
	*d = (struct dso){.tried = 1};
}

static struct dso *dso_for(struct ct_symbolizer *s, const struct ct_module *m)
{
	if (m->id >= s->ndsos) {
		size_t n = s->ndsos ? s->ndsos : 16;
		while (n <= m->id)
			n *= 2;
		struct dso *d = realloc(s->dsos, n * sizeof(*d));
		if (!d)
			return NULL;
		memset(d + s->ndsos, 0, (n - s->ndsos) * sizeof(*d));
		s->dsos = d;
		s->ndsos = n;
	}
	struct dso *d = &s->dsos[m->id];
	if (!d->tried)
		open_dso(d, m);
	return d;
}

/* ---- one address ---- */

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* The readable name: demangled, without the symbol version ("memcpy@@GLIBC_2.14" -> "memcpy"). */
static char *demangle(const char *name)
{
	char *plain = strndup(name, strcspn(name, "@"));
	if (!plain || plain[0] != '_' || plain[1] != 'Z')
		return plain;
	char *d = cplus_demangle(plain, DMGL_PARAMS | DMGL_ANSI);
	if (!d)
		return plain;
	free(plain);
	return d;
}

static int resolve(struct ct_symbolizer *s, const struct ct_module *m, uint64_t ip, struct ct_frame *f)
{
	char buf[64];
	*f = (struct ct_frame){.address = ip, .module = m ? m->path : NULL};
	struct dso *d = m ? dso_for(s, m) : NULL;
	if (m && !d)
		return -ENOMEM;
	if (d && d->mod) {
		/* ip is a return address: ip - 1 lies inside the call instruction. */
		Dwarf_Addr addr = ip - m->base - 1 + d->bias;
		GElf_Off off;
		GElf_Sym sym;
		const char *name = dwfl_module_addrinfo(d->mod, addr, &off, &sym, NULL, NULL, NULL);
		if (name)
			f->function = demangle(name);
		Dwfl_Line *line = dwfl_module_getsrc(d->mod, addr);
		int lineno = 0;
		const char *file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
		if (file && lineno > 0) {
			f->file = strdup(file);
			f->line = (unsigned)lineno;
			if (!f->file)
				return -ENOMEM;
		}
	}
	if (!f->function && m)
		snprintf(buf, sizeof(buf), "%.40s+0x%" PRIx64, basename_of(m->path), ip - m->base);
	else if (!f->function)
		snprintf(buf, sizeof(buf), "??");
	if (!f->function)
		f->function = strdup(buf);
	return f->function ? 0 : -ENOMEM;
}

/* ---- the cache ---- */

static size_t slot_of(const struct ct_symbolizer *s, uint64_t key_mod, uint64_t ip)
{
	uint64_t h = (ip ^ (key_mod << 47)) * 0x9e3779b97f4a7c15ull;
	size_t i = (size_t)(h >> 20) & (s->size - 1);
	while (s->table[i].key_mod && (s->table[i].key_mod != key_mod || s->table[i].ip != ip))
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
			s->table[slot_of(s, old[i].key_mod, old[i].ip)] = old[i];
	free(old);
	return 0;
}

int ct_symbolize(struct ct_symbolizer *s, const struct ct_module *mod, uint64_t ip, struct ct_frame *out, int max)
{
	if (max < 1)
		return 0;
	uint64_t key_mod = mod ? (uint64_t)mod->id + 2 : 1;
	size_t i = slot_of(s, key_mod, ip);
	if (!s->table[i].key_mod) {
		struct ct_frame f;
		if (resolve(s, mod, ip, &f) < 0) {
			free_frame(&f);
			return -ENOMEM;
		}
		if (2 * (s->used + 1) > s->size) {
			if (grow_table(s) < 0) {
				free_frame(&f);
				return -ENOMEM;
			}
			i = slot_of(s, key_mod, ip);
		}
		s->table[i] = (struct entry){.key_mod = key_mod, .ip = ip, .frame = f};
		s->used++;
	}
	out[0] = s->table[i].frame;
	return 1;
}
