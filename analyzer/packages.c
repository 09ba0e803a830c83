/* SPDX-License-Identifier: MIT */
/* The Debian package that owns a file (packages.h): dpkg's file lists read a chunk of whole lines at
 * a time through a filter on line length, and the answers kept in one file of the debug cache. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "debugcache.h"
#include "packages.h"

#define DPKG_INFO "/var/lib/dpkg/info"
#define DPKG_PATHS 4

/* ---- the files looked for ---- */

struct wanted {
	struct ct_package_query *q;
	char *real; /* q->path's real path when it differs (malloc'd), or NULL */
	char *paths[DPKG_PATHS];
	size_t lens[DPKG_PATHS];
	int n;
	int kept; /* answered by the kept answers */
};

/* The paths dpkg may list for w's file: itself and the file it links to, each with and without
 * /usr (with a merged /usr, /lib/x/libz.so.1 and /usr/lib/x/libz.so.1 are one file, and dpkg lists
 * the path its package shipped). A path left NULL where memory ran out is not looked for. */
static void dpkg_paths(struct wanted *w)
{
	char *real = realpath(w->q->path, NULL);
	w->real = real && strcmp(real, w->q->path) ? real : NULL;
	if (!w->real)
		free(real);
	const char *base[2] = {w->q->path, w->real};
	for (int i = 0; i < 2 && base[i]; i++) {
		w->paths[w->n++] = strdup(base[i]);
		char *other;
		if (!strncmp(base[i], "/usr/", 5))
			other = strdup(base[i] + 4);
		else if (asprintf(&other, "/usr%s", base[i]) < 0)
			other = NULL;
		w->paths[w->n++] = other;
	}
	for (int j = 0; j < w->n; j++)
		w->lens[j] = w->paths[j] ? strlen(w->paths[j]) : 0;
}

static void free_wanted(struct wanted *w)
{
	free(w->real);
	for (int j = 0; j < w->n; j++)
		free(w->paths[j]);
}

/* ---- dpkg's lists ---- */

/* The debug package of the binary package whose file list is list_name ("zlib1g:amd64.list"):
 * glibc ships libc6-dbg; every other package gets PACKAGE-dbgsym in the debug archive. */
static char *debug_package(const char *list_name)
{
	size_t n = strlen(list_name) - strlen(".list");
	const char *colon = memchr(list_name, ':', n);
	int len = (int)(colon ? (size_t)(colon - list_name) : n);
	char *debug = NULL;
	int libc = len == 5 && !memcmp(list_name, "libc6", 5);
	return asprintf(&debug, "%.*s%s", len, list_name, libc ? "-dbg" : "-dbgsym") < 0 ? NULL : debug;
}

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

/* Names the package of list_name in each wanted file one of whose paths is a line of text (whole
 * lines). Returns named plus how many it named, or -ENOMEM. */
static int match_lines(const char *text, size_t len, const char *list_name, struct wanted *want, size_t n,
                       const struct lengths *lens, int named)
{
	for (const char *line = text, *end = text + len; line < end && named >= 0;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t k = (size_t)((nl ? nl : end) - line);
		for (size_t i = 0; i < n && named >= 0 && has_length(lens, k); i++)
			for (int j = 0; !want[i].q->debug_package && j < want[i].n; j++)
				if (want[i].paths[j] && want[i].lens[j] == k &&
				    !memcmp(line, want[i].paths[j], k))
					named = (want[i].q->debug_package = debug_package(list_name))
					            ? named + 1
					            : -ENOMEM;
		line += k + 1;
	}
	return named;
}

/* Reads dir's file list name (dpkg's: one path a line) a chunk of whole lines at a time and names
 * the package in each wanted file it owns. Returns how many files it named, or -ENOMEM. */
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

/* Looks for the files of want[0..n) not kept in every package's file list, until each is found.
 * Returns 1 when it read every list, 0 when it stopped early (or there is no dpkg), -ENOMEM. */
static int scan_lists(struct wanted *want, size_t n)
{
	size_t left = 0;
	struct lengths lens = {{0}};
	for (size_t i = 0; i < n; i++) {
		left += !want[i].kept;
		for (int j = 0; !want[i].kept && j < want[i].n; j++)
			if (want[i].paths[j])
				add_length(&lens, want[i].lens[j]);
	}
	DIR *dir = left ? opendir(DPKG_INFO) : NULL;
	if (!dir)
		return 0;
	int rc = 0;
	struct chunk c = {0};
	struct dirent *e = NULL;
	while (left && !rc && (e = readdir(dir))) {
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
	return rc ? rc : !e;
}

/* ---- the answers kept between runs ----
 *
 * The cache's file KEPT_NAME: a first line naming the lists' directory as it was when the answers
 * were found, then an answer a line, the newest first:
 *
 *   ctrack dpkg owners 1 DEV INODE MTIME_S MTIME_NS
 *   DEBUG_PACKAGE\tPATH\tREAL_PATH
 *
 * with "-" for no package, and for a real path that is the path itself. Paths holding a tab or a
 * newline are not kept. */
#define KEPT_NAME "dpkg-owners"
#define KEPT_HEAD "ctrack dpkg owners 1"
#define KEPT_MAX 4096         /* answers */
#define KEPT_BYTES (1u << 20) /* a file bigger than this is not read */
/* The lists' directory changed less than this long ago: dpkg may be at work, and a change within
 * its modification time's tick would not show, so what is found now is not kept. */
#define SETTLED_S 2

struct answer {
	const char *package, *path, *real; /* package, real: NULL for "-" */
};

struct kept {
	char *text; /* the file read, its lines cut into answers */
	struct answer *v;
	size_t n;
};

static void dir_key(char *buf, size_t cap, const struct stat *st)
{
	snprintf(buf, cap, KEPT_HEAD " %ju %ju %jd %ld", (uintmax_t)st->st_dev, (uintmax_t)st->st_ino,
	         (intmax_t)st->st_mtim.tv_sec, st->st_mtim.tv_nsec);
}

static char *read_kept(void)
{
	int fd = ct_debugcache_open_file(KEPT_NAME);
	struct stat st;
	char *text = NULL;
	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size < KEPT_BYTES &&
	    (text = malloc((size_t)st.st_size + 1)))
		text[pread(fd, text, (size_t)st.st_size, 0) == st.st_size ? st.st_size : 0] = 0;
	if (fd >= 0)
		close(fd);
	return text;
}

/* The answers kept for the lists' directory as st says it is now (none: k->n 0). */
static void load_kept(struct kept *k, const struct stat *st)
{
	char key[128];
	dir_key(key, sizeof(key), st);
	char *text = read_kept(), *nl = text ? strchr(text, '\n') : NULL;
	k->text = text;
	if (!nl || (size_t)(nl - text) != strlen(key) || memcmp(text, key, strlen(key)))
		return;
	size_t lines = 0;
	for (char *p = nl; (p = strchr(p + 1, '\n'));)
		lines++;
	if (!(k->v = calloc(lines ? lines : 1, sizeof(*k->v))))
		return;
	for (char *line = nl + 1, *end; k->n < lines && (end = strchr(line, '\n')); line = end + 1) {
		*end = 0;
		char *path = strchr(line, '\t'), *real = path ? strchr(path + 1, '\t') : NULL;
		if (!real)
			continue; /* not an answer */
		*path++ = 0, *real++ = 0;
		k->v[k->n++] =
		    (struct answer){strcmp(line, "-") ? line : NULL, path, strcmp(real, "-") ? real : NULL};
	}
}

static int same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Sets w's package from k when k has its answer: 1 when it did, 0 when not, -ENOMEM. */
static int take_kept(struct wanted *w, const struct kept *k)
{
	for (size_t i = 0; i < k->n; i++) {
		const struct answer *a = &k->v[i];
		if (strcmp(a->path, w->q->path) || !same(a->real, w->real))
			continue;
		if (a->package && !(w->q->debug_package = strdup(a->package)))
			return -ENOMEM;
		return w->kept = 1;
	}
	return 0;
}

static int keepable(const char *s)
{
	return s[strcspn(s, "\t\n")] == 0;
}

static void put_answer(FILE *f, const char *package, const char *path, const char *real)
{
	if (keepable(path) && (!real || keepable(real)))
		fprintf(f, "%s\t%s\t%s\n", package ? package : "-", path, real ? real : "-");
}

/* Keeps what the scan found for want[0..n) (a package, or none when every list was read), then the
 * answers kept before for other files, up to KEPT_MAX, as the directory st describes. */
static void keep(const struct wanted *want, size_t n, int read_all, const struct kept *k,
                 const struct stat *st)
{
	char key[128], *text = NULL;
	size_t len = 0, lines = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return;
	dir_key(key, sizeof(key), st);
	fprintf(f, "%s\n", key);
	for (size_t i = 0; i < n; i++)
		if (!want[i].kept && (want[i].q->debug_package || read_all) && lines++ < KEPT_MAX)
			put_answer(f, want[i].q->debug_package, want[i].q->path, want[i].real);
	for (size_t i = 0; i < k->n && lines < KEPT_MAX; i++) {
		int found = 0;
		for (size_t j = 0; j < n && !found; j++)
			found = !strcmp(k->v[i].path, want[j].q->path) && same(k->v[i].real, want[j].real);
		if (found)
			continue; /* answered again above */
		put_answer(f, k->v[i].package, k->v[i].path, k->v[i].real);
		lines++;
	}
	if (fclose(f) == 0)
		ct_debugcache_put_file(KEPT_NAME, text, len);
	free(text);
}

/* ---- entry point ---- */

int ct_packages_find(struct ct_package_query *q, size_t n)
{
	struct stat st;
	if (!n || stat(DPKG_INFO, &st) < 0 || !S_ISDIR(st.st_mode))
		return 0; /* no dpkg: the advice stays generic */
	struct wanted *want = calloc(n, sizeof(*want));
	if (!want)
		return -ENOMEM;
	struct kept k = {0};
	load_kept(&k, &st);
	int rc = 0;
	size_t left = 0;
	for (size_t i = 0; i < n && rc >= 0; i++) {
		want[i].q = &q[i];
		dpkg_paths(&want[i]);
		rc = take_kept(&want[i], &k);
		left += !rc;
	}
	int read_all = rc < 0 ? rc : scan_lists(want, n);
	rc = read_all < 0 ? read_all : 0;
	if (!rc && left && time(NULL) - st.st_mtim.tv_sec >= SETTLED_S)
		keep(want, n, read_all, &k, &st);
	for (size_t i = 0; i < n; i++)
		free_wanted(&want[i]);
	free(want);
	free(k.v);
	free(k.text);
	return rc;
}
