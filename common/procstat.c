/* SPDX-License-Identifier: MIT */
/* A process's parent and start time from /proc/PID/stat (procstat.h): the one reader of that file
 * for the launcher and the analyzer. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "procstat.h"

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int ct_proc_stat(uint64_t pid, uint64_t *ppid, uint64_t *start_ns)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%llu/stat", (unsigned long long)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? -ENOENT : -errno;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ENOENT; /* it ended between the open and the read */
	buf[n] = 0;
	char *p = strrchr(buf, ')'); /* the command name may hold anything */
	if (!p || p[1] != ' ' || !p[2] || p[2] == 'Z' || p[2] == 'X')
		return -ENOENT;
	p += 3;
	uint64_t field[19]; /* fields 4 (ppid) to 22 (starttime, in clock ticks since boot) */
	for (int i = 0; i < 19; i++)
		field[i] = strtoull(p, &p, 10);
	long tick = sysconf(_SC_CLK_TCK);
	uint64_t boot = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_BOOTTIME);
	*ppid = field[0];
	*start_ns = boot + field[18] * (1000000000ull / (uint64_t)(tick > 0 ? tick : 100));
	return 0;
}
