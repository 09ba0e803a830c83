/* SPDX-License-Identifier: MIT */
/* Finding the program (PATH, as execvp), the shim and the analyzer (beside the launcher first).
 * The shim: CTRACK_SHIM when the user sets it; else beside the launcher (a build tree), then where
 * the install put it relative to the launcher (an installed tree copied or staged elsewhere), then
 * where the install put it. Errors are negative errnos; nothing is printed here. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctrack-config.h"
#include "locate.h"
#include "rules.h"

#define ANALYZER "ctrack-analyze"

/* DIR/NAME from the first dirlen bytes of dir, or NAME alone when dirlen is 0 (an empty PATH
 * entry means the current directory). Truncation is an error, so a long path never names another
 * file. */
static int join(char *buf, size_t len, const char *dir, size_t dirlen, const char *name)
{
	int n =
	    dirlen ? snprintf(buf, len, "%.*s/%s", (int)dirlen, dir, name) : snprintf(buf, len, "%s", name);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Directory of the running executable, so build/ctrack finds build/libctrack.so in place. */
static int self_dir(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	if (n < 0)
		return -errno;
	if ((size_t)n >= len - 1)
		return -ENAMETOOLONG; /* readlink truncates silently */
	buf[n] = '\0';
	char *slash = strrchr(buf, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	return 0;
}

/* 0 if path is an executable regular file, else the errno exec would most likely give, negated. */
static int check_executable(const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode) || access(path, X_OK) < 0)
		return -EACCES;
	return 0;
}

/* PATH search: the first executable candidate wins; a non-executable one only decides the
 * error (EACCES beats ENOENT, as in execvp). */
static int search_path(const char *name, char *buf, size_t len)
{
	const char *p = getenv("PATH");
	if (!p)
		p = "/usr/local/bin:/usr/bin:/bin";
	int result = -ENOENT;
	for (;;) {
		const char *end = strchrnul(p, ':');
		int err = join(buf, len, p, (size_t)(end - p), name);
		if (err == 0)
			err = check_executable(buf);
		if (err == 0)
			return 0;
		if (err == -EACCES)
			result = -EACCES;
		if (!*end)
			return result;
		p = end + 1;
	}
}

int ct_locate_program(const char *name, char *buf, size_t len)
{
	if (!*name)
		return -ENOENT;
	if (!strchr(name, '/'))
		return search_path(name, buf, len);
	int rc = join(buf, len, NULL, 0, name);
	return rc < 0 ? rc : check_executable(buf);
}

static int is_regular(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* DIR/REL/NAME is a regular file, into buf. */
static int found_in(char *buf, size_t len, const char *dir, const char *rel)
{
	char sub[PATH_MAX];
	if (join(sub, sizeof(sub), dir, strlen(dir), rel) < 0)
		return 0;
	return join(buf, len, sub, strlen(sub), CTRACK_SHIM_NAME) == 0 && is_regular(buf);
}

int ct_locate_shim(char *buf, size_t len)
{
	const char *wanted = getenv(CT_ENV_SHIM);
	if (wanted && *wanted) { /* the user's choice, or nothing */
		int rc = join(buf, len, NULL, 0, wanted);
		return rc < 0 ? rc : is_regular(buf) ? 0 : -ENOENT;
	}
	char dir[PATH_MAX];
	if (self_dir(dir, sizeof(dir)) == 0 &&
	    ((join(buf, len, dir, strlen(dir), CTRACK_SHIM_NAME) == 0 && is_regular(buf)) ||
	     found_in(buf, len, dir, CTRACK_SHIM_RELDIR)))
		return 0; /* a build tree, or an install moved as a whole (meson install --destdir) */
	int rc = join(buf, len, CTRACK_SHIM_DIR, strlen(CTRACK_SHIM_DIR), CTRACK_SHIM_NAME);
	if (rc < 0)
		return rc;
	return is_regular(buf) ? 0 : -ENOENT;
}

static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

void ct_locate_analyzer(char *buf, size_t len)
{
	char dir[PATH_MAX], beside[PATH_MAX], found[PATH_MAX];
	snprintf(buf, len, "%s", ANALYZER);
	if (self_dir(dir, sizeof(dir)) < 0 || join(beside, sizeof(beside), dir, strlen(dir), ANALYZER) < 0)
		return;
	if (check_executable(beside) < 0)
		return;
	if (search_path(ANALYZER, found, sizeof(found)) == 0 && same_file(found, beside))
		return;
	snprintf(buf, len, "%s", beside);
}
