/* SPDX-License-Identifier: MIT */
/* Where libdwfl finds debug info: the search path (libdwfl's default, then each --debug-dir), the
 * callbacks every Dwfl uses, and a find_debuginfo that does not wake debuginfod for nothing. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debuginfo.h"

/* libdwfl's default: the file's directory, its .debug/, and /usr/lib/debug mirroring its path and
 * holding .build-id/. */
#define DEFAULT_PATH ":.debug:/usr/lib/debug"

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

/* libdwfl 0.188's standard search ends by loading libdebuginfod (with libcurl and GnuTLS: 7.5 MiB
 * and some milliseconds) whenever it found nothing, server or not. So without a server, it is
 * called only when the build-id lookup or a file it would try by name may find something. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
                          const char *file, const char *link, GElf_Word crc, char **debug_file)
{
	if (!file)
		return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file, link, crc,
		                                    debug_file);
	char *real = realpath(file, NULL);
	int here = may_find_by_name(file, link), there = real ? may_find_by_name(real, link) : 0;
	free(real);
	errno = 0;
	if (here < 0 || there < 0)
		return -1; /* a FIFO or a device where a debug file could be: no search */
	if (server_configured())
		return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file, link, crc,
		                                    debug_file);
	int fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file, link, crc, debug_file);
	if (fd >= 0)
		return fd;
	if (here || there)
		return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file, link, crc,
		                                    debug_file);
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
