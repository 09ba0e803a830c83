/* SPDX-License-Identifier: MIT */
/* Where libdwfl finds debug info: the search path (libdwfl's default, then each --debug-dir), the
 * callbacks every Dwfl uses, and a find_debuginfo that does not wake debuginfod for nothing and hands
 * libdw separate debug files with their DWARF decompressed, looked for ahead on a thread of its own. */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debugimage.h"
#include "debuginfo.h"

/* libdwfl's default: the file's directory, its .debug/, and /usr/lib/debug mirroring its path and
 * holding .build-id/. */
#define DEFAULT_PATH ":.debug:/usr/lib/debug"

static void stop_ahead(void);

/* One search path for the process: libdwfl's callbacks take no context of their own. */
static char *search_path; /* NULL: libdwfl's default */

int ct_debuginfo_set_dirs(const char *debug_dirs)
{
	ct_debuginfo_free();
	if (debug_dirs && *debug_dirs && asprintf(&search_path, "%s:%s", DEFAULT_PATH, debug_dirs) < 0) {
		search_path = NULL;
		return -ENOMEM;
	}
	return 0;
}

void ct_debuginfo_free(void)
{
	stop_ahead();
	free(search_path);
	search_path = NULL;
}

/* libdebuginfod asks no server and reads no cache when DEBUGINFOD_URLS is unset or empty. */
static int server_configured(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	return urls && *urls;
}

/* The names tried: the debug link (or the file's basename + ".debug"), its basename, the file's. */
struct names {
	const char *link, *link_base, *file_base;
	int special; /* one of the names tried is there but is not a regular file (a FIFO, a device) */
};

/* dir/sub/name exists (sub may be empty). A path too long to build counts as existing: then
 * libdwfl looks itself. Something there that is not a regular file sets n->special: libdwfl would
 * open it, and a FIFO's open waits for a writer forever. */
static int exists(struct names *n, const char *dir, const char *sub, const char *name)
{
	char p[PATH_MAX];
	struct stat st;
	int len = snprintf(p, sizeof(p), "%s/%s%s%s", dir, sub, *sub ? "/" : "", name);
	if (len < 0 || (size_t)len >= sizeof(p))
		return 1;
	if (stat(p, &st) < 0)
		return 0;
	n->special |= !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
	return 1;
}

/* One entry of the search path: "" is the file's directory, a relative entry a subdirectory of it,
 * an absolute one a root that mirrors the directory or any tail of it; alternate (dwz) files are
 * looked for by basename in an absolute root and in .dwz/ subdirectories. */
static int entry_has(const char *e, const char *dir, struct names *n)
{
	/* | rather than ||: every name is looked at, for n->special */
	if (!*e)
		return exists(n, dir, "", n->link) | exists(n, dir, ".dwz", n->link_base);
	if (*e != '/')
		return exists(n, dir, e, n->link) | exists(n, dir, e, n->file_base);
	int found = exists(n, e, "", n->link_base) | exists(n, e, ".dwz", n->link_base);
	for (const char *t = strchr(dir, '/'); t && t[1]; t = strchr(t + 1, '/'))
		found |= exists(n, e, t + 1, n->link) | exists(n, e, t + 1, n->file_base);
	return found;
}

/* Whether one of the files libdwfl's search by name tries for file exists (find_debuginfo_in_path in
 * elfutils' libdwfl/find-debuginfo.c; this is a superset: a wrong yes only costs a search): 1 or 0,
 * or -1 when one of them is not a regular file, and the search must not run at all. */
static int may_find_by_name(const char *file, const char *link)
{
	char *d = strdup(file), *b = strdup(file), *path = strdup(search_path ? search_path : DEFAULT_PATH);
	char made[NAME_MAX + sizeof(".debug")];
	int found = !d || !b || !path; /* no memory: let libdwfl decide */
	const char *dir = d ? dirname(d) : "";
	struct names n = {.link = link, .file_base = b ? basename(b) : ""};
	if (!n.link) {
		snprintf(made, sizeof(made), "%s.debug", n.file_base);
		n.link = made;
	}
	n.link_base = strrchr(n.link, '/') ? strrchr(n.link, '/') + 1 : n.link;
	for (char *rest = path, *e; rest && (e = strsep(&rest, ":"));)
		found |= entry_has(e + (*e == '+' || *e == '-'), dir, &n);
	free(d);
	free(b);
	free(path);
	return n.special ? -1 : found;
}

/* Whether libdwfl asks for mod's own separate debug file, not for the alternate (dwz) file of DWARF
 * it holds: it has none yet (dwbias -1). A debug link carries a CRC; an alternate link never does
 * (crc 0), which tells the two apart when the DWARF with the alternate link is in the main file. */
static int wants_own_file(Dwfl_Module *mod, const char *link, GElf_Word crc)
{
	Dwarf_Addr dwbias;
	dwfl_module_info(mod, NULL, NULL, NULL, &dwbias, NULL, NULL, NULL);
	return dwbias == (Dwarf_Addr)-1 && (!link || crc);
}

/* Whether the ELF file open on fd has the build-id bits[0..len). */
static int same_build_id(int fd, const unsigned char *bits, int len)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *id;
	ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, &id) : -1;
	int same = n == len && !memcmp(id, bits, (size_t)len);
	if (elf)
		elf_end(elf);
	return same;
}

/* The search of dwfl_build_id_find_debuginfo for a module's own debug file, as libdwfl 0.188 does it:
 * the first DIR/.build-id/xx/yyyy.debug that opens, DIR an absolute entry of the search path, checked
 * against the build-id bits[0..len), *name its real path. Returns the file open for reading, or -1
 * (errno 0) when there is none or it is another file. */
static int search_build_id(const unsigned char *bits, int len, char **name)
{
	*name = NULL;
	if (len < 3 || len > 64)
		return -1;
	char id[sizeof("/.build-id/") + 3 + 2 * 64 + sizeof(".debug")], *p = id;
	p += sprintf(p, "/.build-id/%02x/", bits[0]);
	for (int i = 1; i < len; i++)
		p += sprintf(p, "%02x", bits[i]);
	strcpy(p, ".debug");
	char *path = strdup(search_path ? search_path : DEFAULT_PATH), *tried = NULL;
	int fd = -1;
	for (char *rest = path, *dir; path && fd < 0 && (dir = strsep(&rest, ":"));) {
		dir += *dir == '+' || *dir == '-';
		if (*dir != '/' || asprintf(&tried, "%s%s", dir, id) < 0)
			continue;
		fd = open(tried, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			free(tried);
	}
	free(path);
	errno = 0;
	if (fd < 0)
		return -1;
	if (!same_build_id(fd, bits, len)) {
		close(fd);
		free(tried);
		return -1;
	}
	*name = realpath(tried, NULL);
	if (*name)
		free(tried);
	else
		*name = tried;
	return fd;
}

/* dwfl_build_id_find_debuginfo for a module's own debug file (search_build_id), except that
 * libdwfl's own keeps the handle it checked with, which reads the file as it is: this returns the
 * copy ct_debugimage_open makes. -1 (errno 0) when there is none. */
static int open_by_build_id(const unsigned char *bits, int len, char **name)
{
	int fd = search_build_id(bits, len, name);
	return fd < 0 ? fd : ct_debugimage_open(fd);
}

/* ---- debug files opened ahead ---- */

/* The modules' debug files are looked for as the trace names the modules (ct_debuginfo_prefetch),
 * while the trace is read, and copied decompressed on a thread of their own; the symbolizer then
 * takes the copy made. At most AHEAD_MAX build-ids: a trace that loads more is rare, and the rest
 * are opened when asked, as without this. */
#define AHEAD_MAX 64
/* Threads copying: two, so that a small debug file (ld.so's) is decompressed beside libc's big one
 * rather than before it. */
#define AHEAD_THREADS 2

enum { QUEUED, WORKING, DONE, TAKEN };

struct ahead {
	unsigned char id[64];
	int len;
	int state;
	int fd;     /* QUEUED: the debug file found, to copy; DONE: the copy, or -1 (none found) */
	int found;  /* the debug file was found */
	char *name; /* its real path */
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t done;
	pthread_t thread[AHEAD_THREADS];
	int started; /* threads running */
	int failed;  /* a thread could not be started: no more are tried */
	int stop;
	struct ahead v[AHEAD_MAX];
	int n;
} ahead = {.lock = PTHREAD_MUTEX_INITIALIZER, .done = PTHREAD_COND_INITIALIZER};

static void *ahead_main(void *arg)
{
	(void)arg;
	elf_version(EV_CURRENT);
	pthread_mutex_lock(&ahead.lock);
	for (;;) {
		struct ahead *a = NULL;
		for (int i = 0; i < ahead.n && !a; i++)
			if (ahead.v[i].state == QUEUED)
				a = &ahead.v[i];
		if (!a && ahead.stop)
			break;
		if (!a) {
			pthread_cond_wait(&ahead.done, &ahead.lock);
			continue;
		}
		a->state = WORKING;
		int raw = a->fd;
		pthread_mutex_unlock(&ahead.lock);
		int fd = ct_debugimage_open(raw);
		pthread_mutex_lock(&ahead.lock);
		a->fd = fd, a->state = DONE;
		pthread_cond_broadcast(&ahead.done);
	}
	pthread_mutex_unlock(&ahead.lock);
	return NULL;
}

/* A thread to copy one more file when those running are busy: 1 when one runs for it, else 0. The
 * lock held. */
static int copier(void)
{
	int busy = 0;
	for (int i = 0; i < ahead.n; i++)
		busy += ahead.v[i].state == QUEUED || ahead.v[i].state == WORKING;
	if (!ahead.failed && busy >= ahead.started && ahead.started < AHEAD_THREADS) {
		if (pthread_create(&ahead.thread[ahead.started], NULL, ahead_main, NULL) == 0)
			ahead.started++;
		else
			ahead.failed = 1;
	}
	return ahead.started > 0;
}

/* The entry for build id (id, len), or NULL; the lock held. */
static struct ahead *find_ahead(const unsigned char *id, size_t len)
{
	for (int i = 0; i < ahead.n; i++)
		if (ahead.v[i].len == (int)len && !memcmp(ahead.v[i].id, id, len))
			return &ahead.v[i];
	return NULL;
}

void ct_debuginfo_prefetch(const unsigned char *build_id, size_t len)
{
	if (len < 3 || len > sizeof(ahead.v[0].id))
		return;
	elf_version(EV_CURRENT);
	pthread_mutex_lock(&ahead.lock);
	if (ahead.n == AHEAD_MAX || ahead.stop || find_ahead(build_id, len)) {
		pthread_mutex_unlock(&ahead.lock);
		return;
	}
	/* The search (an open or two) is made here, only the copy on a thread: whether a module has a
	 * debug file is then known from its first frame on, whatever the threads are doing (the package
	 * lookup, diagnose.c, starts from it when the trace is read). */
	char *name;
	int fd = search_build_id(build_id, (int)len, &name);
	if (fd >= 0 && !copier()) { /* no thread: the file is opened when asked, as without this */
		close(fd);
		free(name);
		pthread_mutex_unlock(&ahead.lock);
		return;
	}
	struct ahead *a = &ahead.v[ahead.n++];
	memcpy(a->id, build_id, len);
	a->len = (int)len, a->fd = fd, a->name = name, a->found = fd >= 0;
	a->state = fd >= 0 ? QUEUED : DONE;
	pthread_cond_broadcast(&ahead.done);
	pthread_mutex_unlock(&ahead.lock);
}

/* dl_iterate_phdr's callback: the build-id note of libc.so.* into *arg (struct own_id). */
struct own_id {
	const unsigned char *bits;
	size_t len;
};

static int libc_build_id(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct own_id *id = arg;
	const char *base = strrchr(info->dlpi_name, '/');
	(void)size;
	if (!base || strncmp(base + 1, "libc.so.", 8))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
		for (size_t off = 0; ph->p_type == PT_NOTE && off + sizeof(ElfW(Nhdr)) <= ph->p_memsz;) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)(p + off);
			size_t name = (n->n_namesz + 3) & ~(size_t)3, desc = (n->n_descsz + 3) & ~(size_t)3;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    !memcmp(p + off + sizeof(*n), "GNU", 4)) {
				id->bits = p + off + sizeof(*n) + name;
				id->len = n->n_descsz;
				return 1;
			}
			off += sizeof(*n) + name + desc;
		}
	}
	return 1;
}

void ct_debuginfo_prefetch_own_libc(void)
{
	struct own_id id = {0};
	dl_iterate_phdr(libc_build_id, &id);
	if (id.bits)
		ct_debuginfo_prefetch(id.bits, id.len);
}

/* The copy opened ahead for bits (its fd, maybe -1, and *name), waiting for it when it is being made,
 * or made now when no thread has started it (quicker done here than after those before it); -2 when
 * there is none to take (never asked, or taken already: the caller opens the file itself). */
static int take_ahead(const unsigned char *bits, int len, char **name)
{
	int fd = -2, raw = -1;
	pthread_mutex_lock(&ahead.lock);
	struct ahead *a = find_ahead(bits, (size_t)len);
	while (a && a->state == WORKING)
		pthread_cond_wait(&ahead.done, &ahead.lock);
	if (a && (a->state == DONE || a->state == QUEUED)) {
		*(a->state == DONE ? &fd : &raw) = a->fd;
		*name = a->name;
		a->fd = -1, a->name = NULL, a->state = TAKEN;
		pthread_cond_broadcast(&ahead.done); /* ct_debuginfo_wait_copies: one fewer queued */
	}
	pthread_mutex_unlock(&ahead.lock);
	return raw >= 0 ? ct_debugimage_open(raw) : fd;
}

enum question { PENDING, FOUND };

/* Asks what the fetch ahead of a build-id's debug file is doing (under the lock): still copying
 * (PENDING), or found the file (FOUND). 0 for a build-id never asked for. */
static int ask_ahead(const unsigned char *build_id, size_t len, enum question q)
{
	if (len < 3 || len > sizeof(ahead.v[0].id))
		return 0;
	pthread_mutex_lock(&ahead.lock);
	const struct ahead *a = find_ahead(build_id, len);
	int yes = a && (q == PENDING ? a->state == QUEUED || a->state == WORKING : a->found);
	pthread_mutex_unlock(&ahead.lock);
	return yes;
}

int ct_debuginfo_pending(const unsigned char *build_id, size_t len)
{
	return ask_ahead(build_id, len, PENDING);
}

int ct_debuginfo_found(const unsigned char *build_id, size_t len)
{
	return ask_ahead(build_id, len, FOUND);
}

/* Whether a copy is queued or being made; the lock held. */
static int copying(void)
{
	for (int i = 0; i < ahead.n; i++)
		if (ahead.v[i].state == QUEUED || ahead.v[i].state == WORKING)
			return 1;
	return 0;
}

void ct_debuginfo_wait_copies(void)
{
	pthread_mutex_lock(&ahead.lock);
	while (copying() && !ahead.stop)
		pthread_cond_wait(&ahead.done, &ahead.lock);
	pthread_mutex_unlock(&ahead.lock);
}

static void stop_ahead(void)
{
	pthread_mutex_lock(&ahead.lock);
	ahead.stop = 1;
	pthread_cond_broadcast(&ahead.done);
	pthread_mutex_unlock(&ahead.lock);
	for (int i = 0; i < ahead.started; i++)
		pthread_join(ahead.thread[i], NULL);
	for (int i = 0; i < ahead.n; i++) {
		if (ahead.v[i].fd >= 0)
			close(ahead.v[i].fd);
		free(ahead.v[i].name);
	}
	ahead.n = 0, ahead.started = 0, ahead.failed = 0, ahead.stop = 0;
}

/* mod's own debug file by its build-id: the copy opened ahead, or opened now. */
static int find_by_build_id(Dwfl_Module *mod, char **debug_file)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	char *name = NULL;
	int len = dwfl_module_build_id(mod, &bits, &vaddr);
	int fd = len > 0 ? take_ahead(bits, len, &name) : -1;
	if (fd == -2)
		fd = open_by_build_id(bits, len, &name);
	if (fd < 0) {
		free(name);
		errno = 0;
		return -1;
	}
	free(*debug_file);
	*debug_file = name;
	return fd;
}

/* A file found by libdwfl's own search: copied decompressed when libdwfl has not opened it itself
 * already (its build-id search keeps the handle it checked the file with). */
static int found(Dwfl_Module *mod, int fd)
{
	Dwarf_Addr dwbias;
	if (fd < 0)
		return fd;
	dwfl_module_info(mod, NULL, NULL, NULL, &dwbias, NULL, NULL, NULL);
	return dwbias == (Dwarf_Addr)-1 ? ct_debugimage_open(fd) : fd;
}

/* libdwfl 0.188's standard search ends by loading libdebuginfod (with libcurl and GnuTLS: 7.5 MiB
 * and some milliseconds) whenever it found nothing, server or not. So without a server, it is
 * called only when the build-id lookup or a file it would try by name may find something. A
 * separate debug file's compressed DWARF is decompressed once (debugimage.h). */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
                          const char *file, const char *link, GElf_Word crc, char **debug_file)
{
	if (!file)
		return found(mod, dwfl_standard_find_debuginfo(mod, userdata, modname, base, file, link, crc,
		                                               debug_file));
	char *real = realpath(file, NULL);
	int here = may_find_by_name(file, link), there = real ? may_find_by_name(real, link) : 0;
	free(real);
	errno = 0;
	if (here < 0 || there < 0)
		return -1; /* a FIFO or a device where a debug file could be: no search */
	int own = wants_own_file(mod, link, crc);
	int fd = own ? find_by_build_id(mod, debug_file) : -1;
	if (fd >= 0)
		return fd;
	if (server_configured())
		return found(mod, dwfl_standard_find_debuginfo(mod, userdata, modname, base, file, link, crc,
		                                               debug_file));
	if (!own)
		fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file, link, crc, debug_file);
	if (fd >= 0)
		return fd;
	if (here || there)
		return found(mod, dwfl_standard_find_debuginfo(mod, userdata, modname, base, file, link, crc,
		                                               debug_file));
	errno = 0;
	return -1;
}

/* Where debuginfod-client-config(7) says: libdwfl 0.188 does not name the file it got from
 * debuginfod. */
char *ct_debuginfod_cache_file(const char *build_id)
{
	const char *cache = getenv("DEBUGINFOD_CACHE_PATH"), *xdg = getenv("XDG_CACHE_HOME"),
	           *home = getenv("HOME");
	char *path = NULL;
	int n = -1;
	if (!build_id)
		return NULL;
	if (cache && *cache)
		n = asprintf(&path, "%s/%s/debuginfo", cache, build_id);
	else if (xdg && *xdg)
		n = asprintf(&path, "%s/debuginfod_client/%s/debuginfo", xdg, build_id);
	else if (home && *home)
		n = asprintf(&path, "%s/.cache/debuginfod_client/%s/debuginfo", home, build_id);
	if (n < 0 || access(path, R_OK) < 0) {
		free(n < 0 ? NULL : path);
		return NULL;
	}
	return path;
}

static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &search_path,
};

const Dwfl_Callbacks *ct_debuginfo_callbacks(void)
{
	return &callbacks;
}
