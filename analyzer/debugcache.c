/* SPDX-License-Identifier: MIT */
/* The inflated copies of debug files kept between runs (debugcache.h): the directory found and
 * checked once per process, entries written without a name and linked in whole, trimmed by age. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debugcache.h"

#define DEFAULT_MAX (1ull << 30)
#define SUFFIX ".debug"

static struct {
	pthread_once_t once;
	int dir; /* the cache's directory, or -1: no cache */
	uint64_t max;
	pthread_mutex_t trim; /* one trim at a time in this process */
} cache = {.once = PTHREAD_ONCE_INIT, .dir = -1, .trim = PTHREAD_MUTEX_INITIALIZER};

/* Whether dir, or the nearest of its parents that exists, is this user's (a default place under
 * another's: `sudo` keeps the user's HOME, where directories of root's own would be left). */
static int owned(const char *dir)
{
	char *path = strdup(dir);
	struct stat st;
	int found = 0;
	for (char *slash;
	     path && !(found = stat(path, &st) == 0) && (slash = strrchr(path, '/')) && slash != path;)
		*slash = 0;
	free(path);
	return found && st.st_uid == geteuid();
}

/* The cache's path (malloc'd), or NULL: off, or nowhere to put it. */
static char *cache_path(void)
{
	const char *own = getenv("CTRACK_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char *path = NULL;
	int n = -1;
	if (own)
		n = *own ? asprintf(&path, "%s", own) : -1;
	else if (xdg && *xdg == '/')
		n = owned(xdg) ? asprintf(&path, "%s/ctrack/debug", xdg) : -1;
	else if (home && *home == '/')
		n = owned(home) ? asprintf(&path, "%s/.cache/ctrack/debug", home) : -1;
	return n < 0 ? NULL : path;
}

/* Makes every missing directory of path, 0700 (what exists is left as it is). */
static void make_dirs(char *path)
{
	for (char *p = path + 1;; p++) {
		if (*p != '/' && *p)
			continue;
		char c = *p;
		*p = 0;
		if (mkdir(path, 0700) < 0 && errno != EEXIST)
			c = 0; /* a parent that cannot be made: the open below fails */
		*p = c;
		if (!c)
			return;
	}
}

/* $CTRACK_CACHE_MAX: bytes, with a K, M or G suffix (of 1024); DEFAULT_MAX when unset or not such. */
static uint64_t max_bytes(void)
{
	const char *s = getenv("CTRACK_CACHE_MAX"), *units = "KMG";
	char *end;
	if (!s || *s < '0' || *s > '9')
		return DEFAULT_MAX;
	unsigned long long n = strtoull(s, &end, 10);
	const char *unit = *end ? strchr(units, *end) : NULL;
	int shift = unit ? 10 * (int)(unit - units + 1) : 0;
	if ((*end && (!unit || end[1])) || n > (UINT64_MAX >> shift))
		return DEFAULT_MAX;
	return (uint64_t)n << shift;
}

static void open_cache(void)
{
	char *path = cache_path();
	if (!path)
		return;
	make_dirs(path);
	int dir = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	free(path);
	struct stat st;
	/* another user's directory, or one others may write into, could hand libdw any file */
	if (dir >= 0 && (fstat(dir, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022))) {
		close(dir);
		dir = -1;
	}
	cache.dir = dir;
	cache.max = max_bytes();
}

static int cache_dir(void)
{
	pthread_once(&cache.once, open_cache);
	return cache.dir;
}

void ct_debugcache_name(char name[CT_DEBUGCACHE_NAME], const unsigned char *build_id, size_t len,
                        const struct stat *st)
{
	size_t at = 0;
	for (size_t i = 0; i < len && at + 2 < CT_DEBUGCACHE_NAME / 2; i++)
		at += (size_t)snprintf(name + at, 3, "%02x", build_id[i]);
	snprintf(name + at, CT_DEBUGCACHE_NAME - at, "-%llx-%llx.%09ld" SUFFIX,
	         (unsigned long long)st->st_size, (unsigned long long)st->st_mtim.tv_sec,
	         (long)st->st_mtim.tv_nsec);
}

/* Whether the len bytes at off in fd are those of want. */
static int holds(int fd, uint64_t off, const void *want, size_t len)
{
	unsigned char buf[4096];
	const unsigned char *w = want;
	while (len) {
		size_t n = len < sizeof(buf) ? len : sizeof(buf);
		if (pread(fd, buf, n, (off_t)off) != (ssize_t)n || memcmp(buf, w, n))
			return 0;
		w += n, off += n, len -= n;
	}
	return 1;
}

int ct_debugcache_get(const char *name, uint64_t size, const void *head, size_t head_len, const void *tail,
                      size_t tail_len)
{
	int dir = cache_dir();
	if (dir < 0 || tail_len > size)
		return -1;
	int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (uint64_t)st.st_size != size || !holds(fd, 0, head, head_len) ||
	    !holds(fd, size - tail_len, tail, tail_len)) {
		close(fd);
		/* entries are linked in whole: this one was damaged (cut short by a crash before its
		 * pages reached the disk), or made from another file of the same name; the copy made now
		 * takes its place */
		unlinkat(dir, name, 0);
		return -1;
	}
	futimens(fd, NULL); /* used now: the last to go */
	return fd;
}

int ct_debugcache_create(uint64_t size)
{
	int dir = cache_dir();
	if (dir < 0 || size > cache.max / 4)
		return -1;
	int fd = openat(dir, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	/* its blocks taken now: the copy is written through a shared mapping, where a disk found full
	 * at a page's first write would kill the analyzer (SIGBUS) */
	if (fd >= 0 && fallocate(fd, 0, 0, (off_t)size) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

struct entry {
	struct timespec used;
	uint64_t size;
	char name[CT_DEBUGCACHE_NAME];
};

static int by_use(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->used.tv_sec != y->used.tv_sec)
		return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
	return (x->used.tv_nsec > y->used.tv_nsec) - (x->used.tv_nsec < y->used.tv_nsec);
}

/* The cache's entries (regular files named *.debug) into *v; their count, or -1. */
static long list_entries(int dir, struct entry **v)
{
	int fd = dup(dir);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	rewinddir(d);
	size_t n = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		struct stat st;
		if (len < sizeof(SUFFIX) || len >= CT_DEBUGCACHE_NAME ||
		    strcmp(de->d_name + len - (sizeof(SUFFIX) - 1), SUFFIX) ||
		    fstatat(dir, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			struct entry *grown = realloc(*v, (cap = cap ? 2 * cap : 32) * sizeof(**v));
			if (!grown)
				break;
			*v = grown;
		}
		(*v)[n].used = st.st_mtim;
		(*v)[n].size = (uint64_t)st.st_size;
		memcpy((*v)[n++].name, de->d_name, len + 1);
	}
	closedir(d);
	return (long)n;
}

/* Drops the entries used longest ago while the cache holds more than its size. */
static void trim(int dir)
{
	struct entry *v = NULL;
	pthread_mutex_lock(&cache.trim);
	long n = list_entries(dir, &v);
	uint64_t total = 0;
	for (long i = 0; i < n; i++)
		total += v[i].size;
	if (total > cache.max)
		qsort(v, (size_t)n, sizeof(*v), by_use);
	for (long i = 0; i < n && total > cache.max; i++)
		if (unlinkat(dir, v[i].name, 0) == 0)
			total -= v[i].size;
	pthread_mutex_unlock(&cache.trim);
	free(v);
}

void ct_debugcache_keep(int fd, const char *name)
{
	int dir = cache_dir();
	char self[64];
	if (dir < 0)
		return;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, self, dir, name, AT_SYMLINK_FOLLOW) == 0)
		trim(dir);
}

int ct_debugcache_open_file(const char *name)
{
	int dir = cache_dir();
	int fd = dir < 0 ? -1 : openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())) {
		close(fd);
		fd = -1;
	}
	return fd;
}

void ct_debugcache_put_file(const char *name, const void *data, size_t len)
{
	static unsigned serial;
	int dir = cache_dir();
	char tmp[256];
	if (dir < 0 || snprintf(tmp, sizeof(tmp), ".%s.%ld.%u", name, (long)getpid(),
	                        __atomic_fetch_add(&serial, 1, __ATOMIC_RELAXED)) >= (int)sizeof(tmp))
		return;
	int fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	const char *p = data;
	size_t done = 0;
	for (ssize_t got = 0; done < len && (got = write(fd, p + done, len - done)) != 0;)
		if (got > 0)
			done += (size_t)got;
		else if (errno != EINTR)
			break;
	if (close(fd) < 0 || done < len || renameat(dir, tmp, dir, name) < 0)
		unlinkat(dir, tmp, 0);
}
