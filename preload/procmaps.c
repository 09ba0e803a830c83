/* SPDX-License-Identifier: MIT */
/* /proc/self/maps, line by line (procmaps.h). No malloc, no stdio, errno kept. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "procmaps.h"
#include "text.h"

int ct_proc_open(const char *path, int past_limit)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct rlimit lim;
	if (fd >= 0 || errno != EMFILE || !past_limit || getrlimit(RLIMIT_NOFILE, &lim) < 0 ||
	    lim.rlim_cur == RLIM_INFINITY)
		return fd;
	struct rlimit raised = {lim.rlim_cur + 1,
	                        lim.rlim_max > lim.rlim_cur ? lim.rlim_max : lim.rlim_cur + 1};
	if (setrlimit(RLIMIT_NOFILE, &raised) < 0) { /* the hard limit, and no CAP_SYS_RESOURCE */
		errno = EMFILE;
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	int e = errno;
	setrlimit(RLIMIT_NOFILE, &lim); /* the descriptor stays valid above it */
	errno = e;
	return fd;
}

int ct_procmaps_read(int fd, int (*fn)(const char *line, void *arg), void *arg)
{
	char buf[4096];
	size_t len = 0;
	int rc = 0;
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
	return rc;
}

int ct_procmaps_each(int (*fn)(const char *line, void *arg), void *arg)
{
	int saved = errno, fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	int rc = fd < 0 ? -1 : ct_procmaps_read(fd, fn, arg);
	if (fd >= 0)
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

void ct_proc_task_path(char *buf, size_t len, pid_t tid, const char *file)
{
	struct ct_text t = ct_text_in(buf, len);
	ct_text_add(&t, "/proc/self/task/");
	ct_text_add_uint(&t, (uint64_t)tid);
	ct_text_add(&t, "/");
	ct_text_add(&t, file);
}

ssize_t ct_proc_read(const char *path, char *buf, size_t len, int past_limit)
{
	int saved = errno, fd = ct_proc_open(path, past_limit);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, len - 1);
	if (fd >= 0)
		close(fd);
	errno = saved;
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return n;
}

const char *ct_procstat_fields_at(const char *path, char *buf, size_t len, int past_limit)
{
	if (ct_proc_read(path, buf, len, past_limit) < 0)
		return NULL;
	const char *p = strrchr(buf, ')'); /* the command's name may hold anything, ')' too */
	return p && p[1] == ' ' && p[2] ? p + 2 : NULL;
}

const char *ct_procstat_fields(const char *path, char *buf, size_t len)
{
	return ct_procstat_fields_at(path, buf, len, 0);
}

/* The next decimal number at *p, after spaces. */
static uint64_t decimal(const char **p)
{
	uint64_t v = 0;
	while (**p == ' ')
		(*p)++;
	for (; **p >= '0' && **p <= '9'; (*p)++)
		v = v * 10 + (uint64_t)(**p - '0');
	return v;
}

int ct_procstatm(uint64_t *size, uint64_t *resident, uint64_t *data)
{
	char buf[128];
	if (ct_proc_read("/proc/self/statm", buf, sizeof(buf), 0) < 0)
		return -1;
	const char *p = buf;
	uint64_t v[6];
	for (int i = 0; i < 6; i++) /* size resident shared text lib data */
		v[i] = decimal(&p);
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	if (size)
		*size = v[0] * page;
	if (resident)
		*resident = v[1] * page;
	if (data)
		*data = v[5] * page;
	return 0;
}

static uint64_t room_under(rlim_t limit, uint64_t used)
{
	return limit == RLIM_INFINITY ? UINT64_MAX : limit > used ? limit - used : 0;
}

uint64_t ct_headroom(void)
{
	struct rlimit as, data;
	uint64_t size, used_data;
	if (getrlimit(RLIMIT_AS, &as) < 0 || getrlimit(RLIMIT_DATA, &data) < 0)
		return UINT64_MAX;
	if (as.rlim_cur == RLIM_INFINITY && data.rlim_cur == RLIM_INFINITY)
		return UINT64_MAX;
	if (ct_procstatm(&size, NULL, &used_data) < 0)
		return 0;
	uint64_t a = room_under(as.rlim_cur, size), d = room_under(data.rlim_cur, used_data);
	return a < d ? a : d;
}
