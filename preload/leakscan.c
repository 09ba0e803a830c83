/* SPDX-License-Identifier: MIT */
/* The leak classes at exit: the live blocks from the matcher, the program's roots (its modules'
 * writable data and bss, the exiting thread's stack, registers and static TLS), reach.c's flood
 * fill, and one CLASSES record per trace. The exiting thread captures its roots (prepare) and
 * waits; the writer runs the scan after its last drain, before END.
 * Limits of this first version: other threads still running at exit are not stopped, so their
 * stacks and registers are not roots (a NOTE says how many); anonymous mappings of the program are
 * not scanned (memcheck scans them, LeakSanitizer does not).
 * No malloc (memory from the arena), no stdio; every root range is clamped to readable mappings. */
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "leakscan.h"
#include "match.h"
#include "reach.h"
#include "shim.h"
#include "unwind.h"

static struct {
	uintptr_t sp, tp; /* the exiting thread's, captured by prepare */
	size_t tls_size;  /* glibc's static TLS size, 0 when unknown */
	int prepared;
	uint64_t threads_not_scanned; /* other threads alive at the scan */
} roots;

/* ---- readable mappings, from /proc/self/maps ---- */

struct range {
	uintptr_t lo, hi;
};

struct maps {
	struct range *v;
	size_t n, cap;
};

static uintptr_t hex(const char **p)
{
	uintptr_t v = 0;
	for (;; (*p)++) {
		unsigned c = (unsigned char)**p;
		unsigned d = c - '0' < 10 ? c - '0' : (c | 32) - 'a' < 6 ? (c | 32) - 'a' + 10 : 16;
		if (d == 16)
			return v;
		v = v << 4 | d;
	}
}

static void maps_add(struct maps *m, const char *line)
{
	const char *p = line;
	uintptr_t lo = hex(&p);
	if (*p++ != '-')
		return;
	uintptr_t hi = hex(&p);
	if (*p++ != ' ' || *p != 'r')
		return;
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 512;
		if (ct_arena_grow((void **)&m->v, m->n * sizeof(*m->v), cap * sizeof(*m->v)) < 0)
			return;
		m->cap = cap;
	}
	m->v[m->n++] = (struct range){lo, hi};
}

/* The readable mappings, in address order (the kernel lists them so). */
static void maps_read(struct maps *m)
{
	char buf[4096];
	size_t len = 0;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	for (;;) {
		ssize_t k = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (k <= 0)
			break;
		len += (size_t)k;
		buf[len] = 0;
		char *start = buf, *nl;
		while ((nl = strchr(start, '\n'))) {
			*nl = 0;
			maps_add(m, start);
			start = nl + 1;
		}
		len -= (size_t)(start - buf);
		memmove(buf, start, len);
	}
	close(fd);
}

/* The readable mapping that holds p, or NULL. */
static const struct range *maps_find(const struct maps *m, uintptr_t p)
{
	for (size_t i = 0; i < m->n; i++)
		if (p >= m->v[i].lo && p < m->v[i].hi)
			return &m->v[i];
	return NULL;
}

/* Scans [lo, hi) as roots, only where it is readable. */
static void root_range(struct ct_reach *r, const struct maps *m, uintptr_t lo, uintptr_t hi)
{
	for (size_t i = 0; i < m->n && lo < hi; i++) {
		uintptr_t a = lo > m->v[i].lo ? lo : m->v[i].lo, b = hi < m->v[i].hi ? hi : m->v[i].hi;
		if (a < b)
			ct_reach_root(r, (const void *)a, b - a);
	}
}

/* ---- the roots ---- */

struct modules_ctx {
	struct ct_reach *r;
	const struct maps *m;
	uintptr_t self; /* an address inside the shim: its own data is no root */
};

static int visit_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct modules_ctx *c = arg;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && c->self - lo < ph->p_memsz)
			return 0; /* the shim */
	}
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		root_range(c->r, c->m, lo, lo + ph->p_memsz);
	}
	return 0;
}

/* The exiting thread's stack from its pointer up, and its static TLS and thread control block
 * around the thread pointer (glibc keeps the TLS below it and the TCB above, x86_64's variant II). */
static void root_thread(struct ct_reach *r, const struct maps *m)
{
	const struct range *stack = maps_find(m, roots.sp);
	if (stack)
		root_range(r, m, roots.sp, stack->hi);
	const struct range *tls = roots.tls_size ? maps_find(m, roots.tp) : NULL;
	if (tls)
		root_range(r, m, roots.tp - roots.tls_size, roots.tp + roots.tls_size);
}

/* Threads of the process other than this one and the exiting one: their stacks are not roots. */
static uint64_t other_threads(void)
{
	char buf[2048];
	uint64_t n = 0;
	int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	for (long k; (k = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0;)
		for (long off = 0; off < k;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			n += d->d_name[0] != '.';
			off += d->d_reclen;
		}
	close(fd);
	return n > 2 ? n - 2 : 0;
}

/* ---- the scan ---- */

struct fill {
	struct ct_reach_block *v;
	size_t n, cap;
};

static void add_block(uint64_t p, uint64_t size, uint32_t info, void *arg)
{
	struct fill *f = arg;
	if (f->n < f->cap)
		f->v[f->n++] = (struct ct_reach_block){.start = p, .size = size, .tag = info};
}

static void count_block(uint64_t p, uint64_t size, uint32_t info, void *arg)
{
	(void)p, (void)size, (void)info;
	(*(size_t *)arg)++;
}

/* Per alloc info, its blocks by class, as CLASSES records them (infos without live blocks left out). */
static void write_classes(struct ct_rec_buf *out, const struct ct_reach_block *b, size_t n)
{
	uint32_t ninfos = ct_match_infos();
	size_t bytes = (size_t)ninfos * sizeof(struct ct_rec_classes);
	struct ct_rec_classes *v = ninfos ? ct_arena_map(bytes) : NULL;
	if (!v) {
		ct_rec_classes(out, NULL, 0);
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (b[i].tag < ninfos)
			v[b[i].tag].count[b[i].state]++;
	size_t k = 0;
	for (uint32_t i = 0; i < ninfos; i++) {
		uint64_t live = v[i].count[0] + v[i].count[1] + v[i].count[2] + v[i].count[3];
		if (live) {
			v[k] = v[i];
			v[k++].info = i;
		}
	}
	ct_rec_classes(out, v, k);
	ct_arena_unmap(v, bytes);
}

/* The span of the module that holds address p, as [lo, hi), or [0, 0). */
static void module_span(const void *p, uintptr_t span[2])
{
	struct dl_find_object obj;
	span[0] = span[1] = 0;
	if (p && _dl_find_object((void *)p, &obj) == 0) {
		span[0] = (uintptr_t)obj.dlfo_map_start;
		span[1] = (uintptr_t)obj.dlfo_map_end;
	}
}

void ct_leakscan_prepare(const void *sp)
{
	/* The exiting thread's frames of the shim and of the C runtime's exit machinery (exit's handlers
	 * in libc, _dl_fini in ld.so) are no roots: they overlay the program's dead frames, whose stale
	 * slots would keep lost blocks "reachable". The program's frames start above them: at the caller
	 * of exit(), or __libc_start_call_main after main returned. */
	uintptr_t spans[3][2];
	module_span((const void *)(uintptr_t)&ct_leakscan_prepare, spans[0]);
	module_span(dlsym(RTLD_DEFAULT, "exit"), spans[1]);
	module_span(dlsym(RTLD_DEFAULT, "__tls_get_addr"), spans[2]); /* ld.so (_dl_find_object is libc's) */
	uintptr_t program_sp = ct_unwind_first_sp_outside((const uintptr_t(*)[2])spans, 3);
	roots.sp = program_sp > (uintptr_t)sp ? program_sp : (uintptr_t)sp;
	roots.tp = (uintptr_t)__builtin_thread_pointer();
	void (*info)(size_t *, size_t *);
	void *sym = dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info"); /* GLIBC_PRIVATE, in ld.so */
	memcpy(&info, &sym, sizeof(sym));
	size_t align = 0;
	if (info)
		info(&roots.tls_size, &align);
	roots.prepared = 1;
}

int ct_leakscan(struct ct_rec_buf *out)
{
	if (!roots.prepared)
		return -1;
	size_t n = 0;
	ct_match_live(count_block, &n);
	struct fill f = {.cap = n};
	f.v = n ? ct_arena_map(n * sizeof(*f.v)) : NULL;
	uint32_t *stack = n ? ct_arena_map(n * sizeof(*stack)) : NULL;
	if (n && (!f.v || !stack)) {
		ct_arena_unmap(f.v, n * sizeof(*f.v));
		ct_arena_unmap(stack, n * sizeof(*stack));
		return -1;
	}
	ct_match_live(add_block, &f);
	ct_reach_sort(f.v, f.n);
	struct ct_reach r = {.blocks = f.v, .n = f.n, .stack = stack, .heuristics = CT_REACH_HEURISTICS};
	ct_reach_begin(&r);
	struct maps m = {0};
	maps_read(&m);
	struct modules_ctx c = {&r, &m, (uintptr_t)&ct_leakscan};
	dl_iterate_phdr(visit_module, &c);
	root_thread(&r, &m);
	ct_reach_finish(&r);
	write_classes(out, f.v, f.n);
	roots.threads_not_scanned = other_threads();
	ct_arena_unmap(m.v, m.cap * sizeof(*m.v));
	ct_arena_unmap(f.v, n * sizeof(*f.v));
	ct_arena_unmap(stack, n * sizeof(*stack));
	return 0;
}

uint64_t ct_leakscan_threads_not_scanned(void)
{
	return roots.threads_not_scanned;
}
