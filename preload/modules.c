/* SPDX-License-Identifier: MIT */
/* The loaded ELF objects, written as MODULE/UNMODULE records (path, load bias, build-id, PT_LOAD
 * segments) before any frame that needs them. Used by the writer thread (and the late path under
 * its lock); reads the loader's list with dl_iterate_phdr. Never allocates with malloc.
 * A library loaded where an unloaded one was (dlclose, then dlopen of another: the kernel hands out
 * the same range) has the same load bias and program headers' address as its predecessor: what it
 * is, its name, build-id and segments, tells them apart. */
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "ctrack/record.h"
#include "procmaps.h"
#include "unwind.h"
#include "writer.h"

_Static_assert(CT_UNWIND_EXACT == CT_REC_IP_EXACT, "the walk marks exact frames as the encoder reads them");

struct module {
	uintptr_t base;
	const void *phdr;     /* with base and fingerprint, identifies one load of one object */
	uint64_t fingerprint; /* of its name, build-id and segments (fingerprint()) */
	uintptr_t lo, hi;     /* span of its PT_LOAD segments */
	uint32_t id;
	uint8_t alive, seen;
};

static struct module *mods;
static size_t nmods, cap_mods;
/* The list changes on the writer only (ct_modules_sync); the matcher's other lanes read it too
 * (ct_modules_covers): the lock keeps them off an array being moved. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t next_id;
static _Atomic int dirty;

void ct_modules_mark_dirty(void)
{
	atomic_store(&dirty, 1);
}
int ct_modules_dirty(void)
{
	return atomic_load_explicit(&dirty, memory_order_relaxed);
}

void ct_modules_reset(void)
{
	pthread_mutex_init(&lock, NULL); /* a forked child's: a lane of the parent's may have held it */
	nmods = 0;
	next_id = 0;
}

int ct_modules_covers(uintptr_t ip)
{
	/* After a dlclose, another library may hold the range that was the unloaded one's: only a sync
	 * can say which module holds ip now. */
	if (ct_modules_dirty())
		return 0;
	ip &= ~(uintptr_t)CT_REC_IP_EXACT;
	int in = 0;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nmods && !in; i++)
		in = mods[i].alive && ip >= mods[i].lo && ip < mods[i].hi;
	pthread_mutex_unlock(&lock);
	return in;
}

static const uint8_t *find_build_id(const struct dl_phdr_info *info, size_t *len)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const uint8_t *name = p + sizeof(*n);
			const uint8_t *desc = name + ((n->n_namesz + 3) & ~3u);
			if (desc + n->n_descsz > end)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
				*len = n->n_descsz;
				return desc;
			}
			p = desc + ((n->n_descsz + 3) & ~3u);
		}
	}
	*len = 0;
	return NULL;
}

/* FNV-1a of n bytes, continuing from h. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ ((const uint8_t *)p)[i]) * 0x100000001b3ull;
	return h;
}

/* What the object is, whatever its address: its name, its build-id and its PT_LOAD segments. */
static uint64_t fingerprint(const struct dl_phdr_info *info)
{
	size_t id_len;
	const uint8_t *id = find_build_id(info, &id_len);
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	uint64_t h = fnv(0xcbf29ce484222325ull, name, strlen(name) + 1);
	h = fnv(h, id, id_len);
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD)
			h = fnv(h, &info->dlpi_phdr[i], sizeof(info->dlpi_phdr[i]));
	return h;
}

/* ---- a module's absolute path ----
 * The loader names an object as it was asked for: dlopen("./libx.so") leaves "./libx.so", which
 * means nothing once the working directory changes, nor to the analyzer. The kernel's name for the
 * file mapped at the module's first segment is absolute: /proc/self/maps. */

struct mapped_name {
	uintptr_t at;
	char *buf;
	size_t len;
};

static int name_of_mapping(const char *line, void *arg)
{
	struct mapped_name *m = arg;
	uintptr_t lo, hi;
	const char *p = ct_procmaps_range(line, &lo, &hi);
	if (!p || m->at < lo || m->at >= hi)
		return 0;
	for (int field = 0; field < 4 && p; field++) /* perms, offset, device, inode */
		p = strchr(p, ' ') ? strchr(p, ' ') + 1 : NULL;
	while (p && *p == ' ')
		p++;
	if (!p || *p != '/' || strlen(p) >= m->len)
		return -1;
	strcpy(m->buf, p);
	return 1;
}

/* The absolute path of the file mapped at `at` into buf; 0, or -1 when there is none. */
static int absolute_path(uintptr_t at, char *buf, size_t len)
{
	struct mapped_name m = {at, buf, len};
	return ct_procmaps_each(name_of_mapping, &m) == 1 ? 0 : -1;
}

#define MAX_SEGMENTS 64 /* PT_LOAD headers written per module; linkers emit 2 to 6 */

static void emit_module(struct ct_rec_buf *o, const struct dl_phdr_info *info, uint32_t id, uintptr_t lo)
{
	char exe[4096];
	struct ct_rec_segment segs[MAX_SEGMENTS];
	struct ct_rec_module m = {.id = id, .base = info->dlpi_addr, .path = info->dlpi_name, .segs = segs};
	m.path_len = m.path ? strlen(m.path) : 0;
	if (!m.path_len) { /* the main program has no name in the loader's list */
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe));
		m.path = exe;
		m.path_len = n > 0 ? (size_t)n : 0;
	} else if (m.path[0] != '/' && absolute_path(lo, exe, sizeof(exe)) == 0) {
		m.path = exe;
		m.path_len = strlen(exe);
	}
	m.build_id = find_build_id(info, &m.build_id_len);
	for (int i = 0; i < info->dlpi_phnum && m.nseg < MAX_SEGMENTS; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		segs[m.nseg++] = (struct ct_rec_segment){
		    .vaddr = ph->p_vaddr,
		    .memsz = ph->p_memsz,
		    .offset = ph->p_offset,
		    .prot = (uint8_t)(((ph->p_flags & PF_R) ? CT_SEG_READ : 0) |
		                      ((ph->p_flags & PF_W) ? CT_SEG_WRITE : 0) |
		                      ((ph->p_flags & PF_X) ? CT_SEG_EXEC : 0)),
		};
	}
	ct_rec_module(o, &m);
}

static struct module *add(const struct dl_phdr_info *info, uint64_t print)
{
	if (nmods == cap_mods) {
		size_t cap = cap_mods ? cap_mods * 2 : 256;
		struct module *m = ct_arena_map(cap * sizeof(*m));
		if (!m)
			return NULL;
		if (mods) {
			memcpy(m, mods, nmods * sizeof(*m));
			ct_arena_unmap(mods, cap_mods * sizeof(*m));
		}
		mods = m;
		cap_mods = cap;
	}
	struct module *m = &mods[nmods++];
	m->base = info->dlpi_addr;
	m->phdr = info->dlpi_phdr;
	m->fingerprint = print;
	m->lo = UINTPTR_MAX;
	m->hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (lo < m->lo)
			m->lo = lo;
		if (lo + ph->p_memsz > m->hi)
			m->hi = lo + ph->p_memsz;
	}
	m->id = next_id++;
	m->alive = 1;
	return m;
}

static int visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	uint64_t print = fingerprint(info);
	for (size_t i = 0; i < nmods; i++) {
		struct module *m = &mods[i];
		if (m->alive && m->base == info->dlpi_addr && m->phdr == info->dlpi_phdr &&
		    m->fingerprint == print) {
			m->seen = 1;
			return 0;
		}
	}
	struct module *m = add(info, print);
	if (m) {
		m->seen = 1;
		emit_module(arg, info, m->id, m->lo);
	}
	return 0;
}

void ct_modules_sync(struct ct_rec_buf *o)
{
	pthread_mutex_lock(&lock);
	atomic_store(&dirty, 0);
	for (size_t i = 0; i < nmods; i++)
		mods[i].seen = 0;
	dl_iterate_phdr(visit, o);
	for (size_t i = 0; i < nmods; i++) {
		struct module *m = &mods[i];
		if (!m->alive || m->seen)
			continue;
		m->alive = 0;
		ct_rec_unmodule(o, m->id);
	}
	pthread_mutex_unlock(&lock);
}
