/* SPDX-License-Identifier: MIT */
/* /proc/self/maps, line by line (procmaps.h). No malloc, no stdio, errno kept. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "procmaps.h"

int ct_procmaps_each(int (*fn)(const char *line, void *arg), void *arg)
{
	char buf[4096];
	size_t len = 0;
	int saved = errno, rc = 0, fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		errno = saved;
		return -1;
	}
	while (!rc) {
		ssize_t k = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (k <= 0)
			break;
		len += (size_t)k;
		buf[len] = 0;
		char *start = buf, *nl;
		while (!rc && (nl = strchr(start, '\n'))) {
			*nl = 0;
			rc = fn(start, arg);
			start = nl + 1;
		}
		if (start == buf) /* a line longer than the buffer: give up rather than misread */
			break;
		len -= (size_t)(start - buf);
		memmove(buf, start, len);
	}
	close(fd);
	errno = saved;
	return rc;
}

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

const char *ct_procmaps_range(const char *line, uintptr_t *lo, uintptr_t *hi)
{
	const char *p = line;
	*lo = hex(&p);
	if (*p++ != '-')
		return NULL;
	*hi = hex(&p);
	return *p == ' ' ? p + 1 : NULL;
}

const char *ct_procstat_fields(const char *path, char *buf, size_t len)
{
	int saved = errno, fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, len - 1);
	if (fd >= 0)
		close(fd);
	errno = saved;
	if (n <= 0)
		return NULL;
	buf[n] = 0;
	const char *p = strrchr(buf, ')'); /* the command's name may hold anything, ')' too */
	return p && p[1] == ' ' && p[2] ? p + 2 : NULL;
}
