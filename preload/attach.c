/* SPDX-License-Identifier: MIT */
/* Attach mode: the shim in a running process (attach.h). gdb dlopens it with RTLD_LOCAL, so the
 * dynamic linker binds nothing to its exports; ctrack_attach_v1 makes them reached by rewriting the
 * GOT entries (R_X86_64_JUMP_SLOT, R_X86_64_GLOB_DAT) that name an entry point of hooks.c in every
 * loaded module but the shim itself and the loader, and of every module dlopen loads later. Each
 * rewritten entry is remembered with what it held, and gets it back at the detach.
 * Order: the frees are hooked in every module before the allocations (and unhooked after them), so
 * that no block the hooks saw allocated is freed past them while the entries change (it would stay
 * live in the trace, a leak that is none). The GOT pages that RELRO made read-only are made
 * writable for the store only (mprotect, then back, as the loader leaves them).
 * The program's threads run on while gdb's call runs here (gdb resumes them all), so every store is
 * one aligned word: a thread calling through an entry gets the old function or the new one.
 * No malloc (the table of entries is the arena's), no stdio. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "aggregate.h"
#include "attach.h"
#include "attach_proto.h"
#include "procmaps.h"
#include "sample.h"
#include "shim.h"

#define CT_EXPORTED __attribute__((visibility("default")))

/* Called by gdb on a thread of the program: name is the launcher's abstract socket
 * (common/attach_proto.h). 0 when tracing started, else a negative errno (-EALREADY: tracing
 * already; the launcher hears the same on the socket when it got that far). */
CT_EXPORTED long ctrack_attach_v1(const char *name);

/* ---- the entry points rewritten ---- */

enum { PASS_FREES, PASS_ALLOCS, PASSES };

static void *attach_dlopen(const char *file, int mode);

struct hook {
	const char *name;
	uintptr_t fn;
	int pass;
};

#define HOOK(name, pass) \
	{ \
#name, (uintptr_t)&ct_hook_##name, pass \
	}
static const struct hook hooks[] = {
    HOOK(free, PASS_FREES),
    HOOK(realloc, PASS_FREES),
    HOOK(reallocarray, PASS_FREES),
    HOOK(dlclose, PASS_FREES),
    HOOK(malloc_usable_size, PASS_FREES),
    HOOK(malloc, PASS_ALLOCS),
    HOOK(calloc, PASS_ALLOCS),
    HOOK(posix_memalign, PASS_ALLOCS),
    HOOK(aligned_alloc, PASS_ALLOCS),
    HOOK(memalign, PASS_ALLOCS),
    HOOK(valloc, PASS_ALLOCS),
    HOOK(pvalloc, PASS_ALLOCS),
    HOOK(exit, PASS_ALLOCS),
    HOOK(_exit, PASS_ALLOCS),
    HOOK(_Exit, PASS_ALLOCS),
    HOOK(execve, PASS_ALLOCS),
    HOOK(execv, PASS_ALLOCS),
    HOOK(execvp, PASS_ALLOCS),
    HOOK(execvpe, PASS_ALLOCS),
    HOOK(execveat, PASS_ALLOCS),
    HOOK(fexecve, PASS_ALLOCS),
    HOOK(execl, PASS_ALLOCS),
    HOOK(execle, PASS_ALLOCS),
    HOOK(execlp, PASS_ALLOCS),
    HOOK(epoll_wait, PASS_ALLOCS),
    HOOK(epoll_pwait, PASS_ALLOCS),
    HOOK(epoll_pwait2, PASS_ALLOCS),
    HOOK(syscall, PASS_ALLOCS),
    {"dlopen", (uintptr_t)&attach_dlopen, PASS_ALLOCS},
};
#define NHOOKS (sizeof(hooks) / sizeof(hooks[0]))

static const struct hook *hook_named(const char *name)
{
	for (size_t i = 0; i < NHOOKS; i++)
		if (strcmp(hooks[i].name, name) == 0)
			return &hooks[i];
	return NULL;
}

/* ---- the table of rewritten entries ---- */

struct entry {
	uintptr_t slot, old, fn;      /* the GOT word, what it held, the hook it holds */
	uintptr_t base;               /* its module's load bias and program headers: the module, */
	const ElfW(Phdr) * phdr;      /* checked again before the word is written back (dlclose) */
	uintptr_t relro_lo, relro_hi; /* pages the loader made read-only */
	int pass;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* the table, hooked, conn */
static int hooked; /* from the attach to the detach: a dlopen hooks the modules it loads */
static struct entry *table;
static size_t nentries, cap;
static uintptr_t self_lo; /* an address of the shim's own code: its entries are left alone */
static void *(*real_dlopen)(const char *, int);

static struct entry *entry_at(uintptr_t slot)
{
	for (size_t i = 0; i < nentries; i++)
		if (table[i].slot == slot)
			return &table[i];
	if (nentries == cap) {
		size_t more = cap ? cap * 2 : 256;
		if (ct_arena_grow((void **)&table, cap * sizeof(*table), more * sizeof(*table)) < 0)
			return NULL;
		cap = more;
	}
	return &table[nentries++];
}

struct prot_at {
	uintptr_t addr;
	int prot; /* as found, else left as it was */
};

static int find_prot(const char *line, void *arg)
{
	struct prot_at *q = arg;
	uintptr_t lo, hi;
	const char *perms = ct_procmaps_range(line, &lo, &hi);
	if (!perms || q->addr < lo || q->addr >= hi)
		return 0;
	q->prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
	          (perms[2] == 'x' ? PROT_EXEC : 0);
	return 1;
}

/* Writes value into the GOT word at slot. A page that is not writable (RELRO made it read-only) is
 * for the store, then gets back the protection it had, as /proc/self/maps says: the loader may be
 * relocating a module that another thread dlopens (it leaves that page read-only once done). */
static void store(uintptr_t slot, uintptr_t value, uintptr_t relro_lo, uintptr_t relro_hi)
{
	int relro = slot >= relro_lo && slot < relro_hi;
	struct prot_at q = {slot, PROT_READ}; /* the loader's, when the maps cannot be read */
	if (relro)
		ct_procmaps_each(find_prot, &q);
	if (!relro || (q.prot & PROT_WRITE)) {
		__atomic_store_n((uintptr_t *)slot, value, __ATOMIC_RELEASE);
		return;
	}
	uintptr_t page = slot & ~(uintptr_t)(getpagesize() - 1);
	if (mprotect((void *)page, (size_t)getpagesize(), q.prot | PROT_WRITE) < 0)
		return; /* left as it was: that module's calls go past the hooks */
	__atomic_store_n((uintptr_t *)slot, value, __ATOMIC_RELEASE);
	mprotect((void *)page, (size_t)getpagesize(), q.prot);
}

/* ---- a module's dynamic section ---- */

struct dyn {
	const ElfW(Sym) * symtab;
	const char *strtab;
	size_t strsz;
	const ElfW(Rela) * rela[2];
	size_t relasz[2];
};

/* The loader relocates the dynamic section's addresses in place, except where it is read-only (the
 * vDSO's): an address below the load bias is still a virtual address. */
static uintptr_t dyn_ptr(uintptr_t base, ElfW(Addr) v)
{
	return v < base ? v + base : v;
}

static int read_dyn(uintptr_t base, const ElfW(Dyn) * d, struct dyn *out)
{
	memset(out, 0, sizeof(*out));
	for (; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_SYMTAB:
			out->symtab = (const ElfW(Sym) *)dyn_ptr(base, d->d_un.d_ptr);
			break;
		case DT_STRTAB:
			out->strtab = (const char *)dyn_ptr(base, d->d_un.d_ptr);
			break;
		case DT_STRSZ:
			out->strsz = d->d_un.d_val;
			break;
		case DT_JMPREL:
			out->rela[0] = (const ElfW(Rela) *)dyn_ptr(base, d->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			out->relasz[0] = d->d_un.d_val;
			break;
		case DT_RELA:
			out->rela[1] = (const ElfW(Rela) *)dyn_ptr(base, d->d_un.d_ptr);
			break;
		case DT_RELASZ:
			out->relasz[1] = d->d_un.d_val;
			break;
		}
	}
	return out->symtab && out->strtab ? 0 : -1;
}

/* ---- hooking and unhooking ---- */

struct walk {
	int pass;
};

/* The loader and the vDSO call nothing through entries of the program's allocator. */
static int skipped(const struct dl_phdr_info *info)
{
	const char *slash = strrchr(info->dlpi_name, '/');
	const char *file = slash ? slash + 1 : info->dlpi_name;
	if (strncmp(file, "ld-linux", 8) == 0 || strncmp(file, "linux-vdso", 10) == 0)
		return 1;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + p->p_vaddr;
		if (p->p_type == PT_LOAD && self_lo >= lo && self_lo < lo + p->p_memsz)
			return 1; /* the shim itself */
	}
	return 0;
}

static void hook_relocs(const struct dl_phdr_info *info, const struct dyn *d, const ElfW(Rela) * r,
                        size_t bytes, int pass, uintptr_t relro_lo, uintptr_t relro_hi)
{
	for (size_t i = 0; i < bytes / sizeof(*r); i++) {
		unsigned type = (unsigned)ELF64_R_TYPE(r[i].r_info);
		if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
			continue;
		const ElfW(Sym) *sym = &d->symtab[ELF64_R_SYM(r[i].r_info)];
		if (!sym->st_name || (d->strsz && sym->st_name >= d->strsz))
			continue;
		const struct hook *h = hook_named(d->strtab + sym->st_name);
		uintptr_t slot = info->dlpi_addr + r[i].r_offset;
		if (!h || h->pass != pass || *(const uintptr_t *)slot == h->fn)
			continue;
		struct entry *e = entry_at(slot);
		if (!e)
			return; /* no memory: the rest of this module goes past the hooks */
		*e = (struct entry){slot,
		                    *(const uintptr_t *)slot,
		                    h->fn,
		                    info->dlpi_addr,
		                    info->dlpi_phdr,
		                    relro_lo,
		                    relro_hi,
		                    pass};
		store(slot, h->fn, relro_lo, relro_hi);
	}
}

static int hook_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	const struct walk *wk = arg;
	const ElfW(Dyn) *dynamic = NULL;
	uintptr_t relro_lo = 0, relro_hi = 0, page = (uintptr_t)getpagesize();
	if (skipped(info))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type == PT_DYNAMIC)
			dynamic = (const ElfW(Dyn) *)(info->dlpi_addr + p->p_vaddr);
		if (p->p_type ==
		    PT_GNU_RELRO) { /* the loader protects whole pages only (_dl_protect_relro) */
			relro_lo = (info->dlpi_addr + p->p_vaddr) & ~(page - 1);
			relro_hi = (info->dlpi_addr + p->p_vaddr + p->p_memsz) & ~(page - 1);
		}
	}
	struct dyn d;
	if (!dynamic || read_dyn(info->dlpi_addr, dynamic, &d) < 0)
		return 0;
	for (int k = 0; k < 2; k++)
		if (d.rela[k])
			hook_relocs(info, &d, d.rela[k], d.relasz[k], wk->pass, relro_lo, relro_hi);
	return 0;
}

/* Every loaded module's entries, the frees first. Under lock. */
static void hook_all(void)
{
	for (int pass = 0; pass < PASSES; pass++) {
		struct walk wk = {pass};
		dl_iterate_phdr(hook_module, &wk);
	}
}

/* Whether e's module is still the one loaded there (a dlclose may have unloaded it): the same load
 * bias and program headers, with the entry inside one of its segments. */
static int still_loaded(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	const struct entry *e = arg;
	if (info->dlpi_addr != e->base || info->dlpi_phdr != e->phdr)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + p->p_vaddr;
		if (p->p_type == PT_LOAD && e->slot >= lo && e->slot + sizeof(uintptr_t) <= lo + p->p_memsz)
			return 1;
	}
	return 0;
}

void ct_attach_unhook(void)
{
	pthread_mutex_lock(&lock);
	hooked = 0;
	for (int pass = PASSES - 1; pass >= 0; pass--)
		for (size_t i = 0; i < nentries; i++) {
			struct entry *e = &table[i];
			if (e->pass != pass || !dl_iterate_phdr(still_loaded, e))
				continue;
			if (*(const uintptr_t *)e->slot == e->fn) /* else the program wrote it since */
				store(e->slot, e->old, e->relro_lo, e->relro_hi);
		}
	nentries = 0;
	pthread_mutex_unlock(&lock);
}

/* A module dlopen loaded (and those it needs) gets its entries hooked before the program can call
 * it. The loader takes the caller's module from dlopen's return address (for its RUNPATH and
 * $ORIGIN): here that is the shim's, which has neither (ARCHITECTURE.md says what that changes). */
static void *attach_dlopen(const char *file, int mode)
{
	void *h = real_dlopen(file, mode);
	if (h) {
		int e = errno;
		ct_in_shim++;
		pthread_mutex_lock(&lock);
		if (hooked) /* not once the detach began: it would hook what the detach unhooked */
			hook_all();
		pthread_mutex_unlock(&lock);
		ct_in_shim--;
		errno = e;
	}
	return h;
}

/* ---- the launcher's connection ---- */

static int conn = -1; /* while attached: the launcher's socket */
static dev_t conn_dev;
static ino_t conn_ino;
static uint64_t last_poll_ns;

/* conn is still the socket it was: a program that closes every descriptor (a daemon) may have
 * reused its number for one of its own, which must never be read here. */
static int conn_is_ours(void)
{
	struct stat st;
	return conn >= 0 && fstat(conn, &st) == 0 && st.st_dev == conn_dev && st.st_ino == conn_ino;
}

static int connect_launcher(const char *name)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	size_t n = strlen(name);
	if (n + 1 > sizeof(a.sun_path) || n + 1 > CT_ATTACH_NAME_MAX)
		return -ENAMETOOLONG;
	memcpy(a.sun_path + 1, name, n); /* abstract: sun_path[0] is NUL */
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	struct timeval tv = {10, 0}; /* a launcher that says nothing: give up */
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(s, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) <
	    0) {
		int err = errno;
		close(s);
		return -err;
	}
	return s;
}

/* The settings that follow a hello of CT_ATTACH_MAGIC_SETTINGS: 0, or a negative errno. */
static int receive_settings(int s, struct ct_attach_settings *set)
{
	uint8_t b[CT_ATTACH_SETTINGS_BYTES];
	ssize_t got = recv(s, b, sizeof(b), MSG_WAITALL);
	if (got != (ssize_t)sizeof(b))
		return got < 0 ? -errno : -EPROTO;
	ct_attach_settings_get(b, set);
	if (set->sample_rate > CT_SAMPLE_MAX || (set->sample_rate && set->snapshot_ms))
		return -EINVAL; /* the launcher refuses both together, as for a launch */
	return 0;
}

/* The launcher's hello: the trace's descriptor (an empty regular file), the depth and the settings
 * (all zero in a plain hello). */
static int receive_trace(int s, int *depth, struct ct_attach_settings *set)
{
	uint8_t hello[CT_ATTACH_HELLO_BYTES];
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct iovec io = {hello, sizeof(hello)};
	struct msghdr m = {
	    .msg_iov = &io, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
	ssize_t got = recvmsg(s, &m, MSG_CMSG_CLOEXEC | MSG_WAITALL);
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	int fd = -1;
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&fd, CMSG_DATA(c), sizeof(fd));
	uint32_t magic = got == (ssize_t)sizeof(hello) ? ct_attach_get_u32(hello) : 0;
	*set = (struct ct_attach_settings){0};
	if ((magic != CT_ATTACH_MAGIC && magic != CT_ATTACH_MAGIC_SETTINGS) || fd < 0) {
		if (fd >= 0)
			close(fd);
		return got < 0 ? -errno : -EPROTO;
	}
	int rc = magic == CT_ATTACH_MAGIC_SETTINGS ? receive_settings(s, set) : 0;
	uint32_t d = ct_attach_get_u32(hello + 4);
	struct stat st;
	if (rc == 0 &&
	    (d < 1 || d > CT_DEPTH_MAX || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size != 0))
		rc = -EINVAL;
	if (rc < 0) {
		close(fd);
		return rc;
	}
	*depth = (int)d;
	return fd;
}

static void answer(int s, int err)
{
	uint8_t b[4];
	ct_attach_put_u32(b, (uint32_t)err);
	ssize_t rc = send(s, b, sizeof(b), MSG_NOSIGNAL);
	(void)rc; /* a launcher gone: the writer's first look at conn detaches */
}

/* The settings of this attach, before its writer starts (it writes SAMPLING and AGGREGATE from
 * them) and before anything is hooked; what an earlier attach left is gone first (ct_sample_stop,
 * in case a thread held inside a hook at that detach left something since). 0, or a negative errno
 * (fd is closed then, as ct_track_attach would). */
static int apply_settings(int fd, const struct ct_attach_settings *set)
{
	ct_sample_stop();
	int rc = ct_agg_set_interval(set->snapshot_ms);
	if (rc == 0 && set->sample_rate && ct_sample_start(set->sample_rate, set->seed, (int)set->seeded) < 0)
		rc = -ENOMEM; /* no filter: refused rather than record every allocation unweighed */
	if (rc < 0)
		close(fd);
	return rc;
}

static long attach(const char *name)
{
	if (!name)
		return -EINVAL;
	int state = atomic_load(&ct_state);
	if (conn >= 0 || state == CT_ACTIVE || state == CT_LATE) /* LATE: the process is exiting */
		return -EALREADY;
	int s = connect_launcher(name), depth = 0;
	if (s < 0)
		return s;
	struct ct_attach_settings set;
	int fd = receive_trace(s, &depth, &set);
	struct stat st;
	fstat(s, &st);
	conn_dev = st.st_dev;
	conn_ino = st.st_ino;
	last_poll_ns = 0;
	conn = s; /* before the writer starts: its first look is at this connection */
	int rc = fd < 0 ? fd : apply_settings(fd, &set);
	if (rc == 0)
		rc = ct_track_attach(fd, depth);
	if (rc == 0) {
		hook_all();
		hooked = 1;
	} else {
		ct_sample_stop();
	}
	answer(s, rc < 0 ? -rc : 0);
	if (rc < 0) {
		conn = -1;
		close(s);
	}
	return rc;
}

long ctrack_attach_v1(const char *name)
{
	int e = errno;
	ct_in_shim++;
	if (!self_lo) {
		self_lo = (uintptr_t)&ct_attach_poll;
		void *sym = dlsym(RTLD_DEFAULT, "dlopen");
		memcpy(&real_dlopen, &sym, sizeof(sym));
	}
	pthread_mutex_lock(&lock);
	long rc = real_dlopen ? attach(name) : -ENOSYS;
	pthread_mutex_unlock(&lock);
	ct_in_shim--;
	errno = e;
	return rc;
}

/* The main program's handle searches the global scope (the program, what LD_PRELOAD and its
 * DT_NEEDED loaded, RTLD_GLOBAL loads); RTLD_DEFAULT would search the shim's own scope too. */
int ct_attach_loaded_late(void)
{
	void *main_scope = dlopen(NULL, RTLD_NOW);
	return main_scope && dlsym(main_scope, "ctrack_attach_v1") == NULL;
}

#define POLL_NS 20000000ull

int ct_attach_poll(void)
{
	uint64_t now = ct_now_ns();
	if (now - last_poll_ns < POLL_NS)
		return 0;
	last_poll_ns = now;
	if (!conn_is_ours())
		return 1;
	char c;
	ssize_t n = recv(conn, &c, 1, MSG_DONTWAIT);
	return n >= 0 || (errno != EAGAIN && errno != EINTR);
}

void ct_attach_done(void)
{
	pthread_mutex_lock(&lock);
	if (conn_is_ours())
		close(conn);
	conn = -1;
	pthread_mutex_unlock(&lock);
}

void ct_attach_after_fork_child(void)
{
	pthread_mutex_init(&lock, NULL);
	if (conn_is_ours())
		close(conn);
	conn = -1;
	nentries = 0; /* the child's entries stay hooked: its hooks find tracing off */
	hooked = 0;
}
