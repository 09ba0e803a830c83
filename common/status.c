/* SPDX-License-Identifier: MIT */
/* The shim's side of the status page (status.h): mapping it, and claiming a slot. Runs inside the
 * shim's hooks: no malloc, no stdio, errno as it was. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rules.h"
#include "status.h"
#include "text.h"

/* spec is PATH:DEV:INO; the path may hold colons, the numbers never. 0 with path, dev and ino. */
static int parse(const char *spec, char *path, size_t len, unsigned long long *dev, unsigned long long *ino)
{
	const char *c2 = strrchr(spec, ':');
	const char *c1 = c2 ? memrchr(spec, ':', (size_t)(c2 - spec)) : NULL;
	if (!c1 || (size_t)(c1 - spec) >= len)
		return -1;
	char *end;
	*dev = strtoull(c1 + 1, &end, 10);
	if (end != c2)
		return -1;
	*ino = strtoull(c2 + 1, &end, 10);
	if (*end || end == c2 + 1)
		return -1;
	memcpy(path, spec, (size_t)(c1 - spec));
	path[c1 - spec] = 0;
	return 0;
}

static int is_page(const struct stat *st, unsigned long long dev, unsigned long long ino)
{
	return S_ISREG(st->st_mode) && st->st_dev == dev && st->st_ino == ino &&
	       st->st_size >= CT_STATUS_SIZE;
}

/* The name is checked before the open, so that nothing but the page is ever opened (a device may
 * act on an open), and the descriptor after it. */
static struct ct_status_page *attach(const char *spec)
{
	char path[PATH_MAX];
	unsigned long long dev, ino;
	struct stat st;
	if (parse(spec, path, sizeof(path), &dev, &ino) < 0 || stat(path, &st) < 0 || !is_page(&st, dev, ino))
		return NULL;
	int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	void *p = MAP_FAILED;
	if (fstat(fd, &st) == 0 && is_page(&st, dev, ino))
		p = mmap(NULL, CT_STATUS_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return NULL;
	struct ct_status_page *page = p;
	if (page->magic == CT_STATUS_MAGIC)
		return page;
	munmap(p, CT_STATUS_SIZE);
	return NULL;
}

struct ct_status_page *ct_status_attach(const char *spec)
{
	int e = errno;
	struct ct_status_page *page = spec && *spec ? attach(spec) : NULL;
	errno = e;
	return page;
}

void ct_status_note(struct ct_status_page *p, int err)
{
	int e = errno;
	uint32_t k = __atomic_fetch_add(&p->claimed, 1, __ATOMIC_RELAXED);
	if (k >= CT_STATUS_SLOTS) {
		errno = e;
		return;
	}
	struct ct_status_slot *s = &p->slot[k];
	struct timespec now;
	char exe[PATH_MAX];
	clock_gettime(CLOCK_REALTIME, &now);
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1); /* needs no descriptor */
	exe[n > 0 ? n : 0] = 0;
	struct ct_text t = ct_text_in(s->name, sizeof(s->name));
	ct_text_add(&t, ct_basename(exe));
	s->pid = (int32_t)getpid();
	s->ppid = (int32_t)getppid();
	s->err = err;
	s->start_unix_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	__atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);
	errno = e;
}
