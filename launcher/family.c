/* SPDX-License-Identifier: MIT */
/* Finding the run's traces (family.h): the program's through the launcher's descriptor, its
 * descendants' by the process chain their PROCESS records draw, whose writers still run, and the
 * status page the children that could not be traced write to. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "family.h"
#include "procstat.h"
#include "rules.h"
#include "tracefile.h"

/* How far clocks and scheduling may put a child's trace from its parent's: a child forked just
 * before its parent ended starts its trace a little after the parent's writer stopped. */
#define SLACK_NS 1000000000ull

/* What a trace the shim never wrote to says (the launcher writes it). */
#define EMPTY_NOTE \
	"nothing was traced: the shim never wrote to this trace (the program did not load it, or ended " \
	"before it started: under a memory limit such as ulimit -v the loader may find no room for it, " \
	"and says so on stderr)"

/* ---- the status page (the launcher's side) ---- */

/* A memfd the shim opens by /proc/OUR_PID/fd/N: nothing on disk, and gone with the launcher. */
static void status_create(struct ct_family *f)
{
	struct stat st;
	int fd = memfd_create("ctrack-status", MFD_CLOEXEC);
	if (fd < 0)
		return;
	void *p = MAP_FAILED;
	if (ftruncate(fd, CT_STATUS_SIZE) == 0 && fstat(fd, &st) == 0)
		p = mmap(NULL, CT_STATUS_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		return;
	}
	f->page = p;
	f->page->magic = CT_STATUS_MAGIC;
	f->status_fd = fd;
	snprintf(f->status, sizeof(f->status), "/proc/%d/fd/%d:%ju:%ju", (int)getpid(), fd,
	         (uintmax_t)st.st_dev, (uintmax_t)st.st_ino);
}

/* The slots written so far (a daemon may still be writing one: it is not ready). */
static void status_read(struct ct_family *f)
{
	if (!f->page)
		return;
	uint32_t claimed = __atomic_load_n(&f->page->claimed, __ATOMIC_ACQUIRE);
	size_t n = claimed < CT_STATUS_SLOTS ? claimed : CT_STATUS_SLOTS;
	f->untraced = n ? calloc(n, sizeof(*f->untraced)) : NULL;
	for (size_t i = 0; f->untraced && i < n; i++) {
		const struct ct_status_slot *s = &f->page->slot[i];
		if (!__atomic_load_n(&s->ready, __ATOMIC_ACQUIRE))
			continue;
		f->untraced[f->nuntraced] = *s;
		f->untraced[f->nuntraced].name[CT_STATUS_NAME - 1] = 0;
		f->nuntraced++;
	}
	f->untraced_total = claimed;
}

/* ---- processes ---- */

/* Whether the process that started the trace m still runs: pid m->pid is alive and started before
 * the trace did (a later one reused the pid). */
static int still_running(const struct ct_member *m)
{
	uint64_t ppid, start;
	if (!m->pid || ct_proc_stat(m->pid, &ppid, &start) < 0)
		return 0;
	return !m->start_ns || start <= m->start_ns + SLACK_NS;
}

/* ---- reading a trace ---- */

int ct_family_open(const struct ct_family *f, const struct ct_member *m)
{
	if (m == &f->parent && f->fd >= 0) {
		int rd = ct_tracefile_reopen(f->fd);
		if (rd >= 0 || rd == -ESTALE)
			return rd;
		/* no /proc: by its name, if that still names it (m->dev and m->ino are the file's) */
	}
	int fd = open(m->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == m->dev && st.st_ino == m->ino &&
	    fcntl(fd, F_SETFL, 0) == 0)
		return fd;
	close(fd);
	return -ESTALE;
}

/* m's summary, and what it says of m's writer. */
static void sum_up(const struct ct_family *f, struct ct_member *m)
{
	int fd = ct_family_open(f, m);
	m->err[0] = 0;
	if (fd < 0)
		snprintf(m->err, sizeof(m->err), "cannot read '%s': %s", m->path, strerror(-fd));
	else
		m->ok = ct_trace_summarize_fd(fd, m->path, &m->s, m->err, sizeof(m->err)) == 0;
	if (fd >= 0)
		close(fd);
	if (!m->ok && !m->err[0])
		snprintf(m->err, sizeof(m->err), "the trace cannot be read");
	if (m->ok && m->s.pid) {
		m->pid = m->s.pid;
		m->ppid = m->s.ppid;
		m->start_ns = m->s.start_unix_ns;
	}
	int whole = m->ok && m->s.complete;
	m->end_ns = whole ? m->start_ns + m->s.runtime_ns : UINT64_MAX;
	m->running = !whole && still_running(m);
}

/* ---- the program's trace ---- */

static void collect_parent(struct ct_family *f, const char *name, int sum)
{
	struct stat st;
	struct ct_member *m = &f->parent;
	m->path = strdup(name);
	m->pid = (uint64_t)f->root;
	if (!m->path)
		return;
	if (f->fd >= 0) {
		f->moved = ct_tracefile_moved(name, f->fd);
		if (fstat(f->fd, &st) == 0 && st.st_size == 0)
			ct_tracefile_fill_empty(f->fd, EMPTY_NOTE);
	}
	if (fstat(f->fd, &st) == 0 || stat(name, &st) == 0)
		m->dev = st.st_dev, m->ino = st.st_ino;
	if (sum)
		sum_up(f, m);
}

/* ---- the children's traces ---- */

/* A trace of the directory that may be the run's. */
struct candidate {
	char *file;
	dev_t dev;
	ino_t ino;
	int known; /* o holds its PROCESS record; else pid is its name's */
	struct ct_trace_origin o;
	int taken;
};

static int is_trace_name(const char *s)
{
	size_t n = strlen(s);
	return n > 11 && !strncmp(s, "ctrack.", 7) && !strcmp(s + n - 4, ".zst");
}

static int all_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return n > 0;
}

/* The pid in ctrack.NAME.PID.zst or ctrack.NAME.PID.NN.zst (common/rules.h), or 0. */
static uint64_t pid_of_name(const char *s)
{
	size_t n = strlen(s) - 4; /* without .zst */
	const char *dot = memrchr(s, '.', n);
	if (!dot || !all_digits(dot + 1, (size_t)(s + n - dot - 1)))
		return 0;
	const char *prev = memrchr(s, '.', (size_t)(dot - s));
	if (s + n - dot - 1 == 2 && prev && prev > s + 6 && all_digits(prev + 1, (size_t)(dot - prev - 1)))
		dot = prev; /* PID.NN: the pid is before the attempt */
	return strtoull(dot + 1, NULL, 10);
}

/* Whether name in d (open as dfd) may be the run's: a regular file, not the program's trace,
 * written since the run began. Fills c, reading its PROCESS record. */
static int consider(const struct ct_family *f, int dfd, const char *name, struct candidate *c)
{
	struct stat st;
	if (!is_trace_name(name) || fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
		return 0;
	if (st.st_dev == f->parent.dev && st.st_ino == f->parent.ino)
		return 0;
	uint64_t mtime = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
	if (mtime + 2 * SLACK_NS < f->start_ns) /* the file system's clock lags a little */
		return 0;
	*c = (struct candidate){.dev = st.st_dev, .ino = st.st_ino};
	int fd = openat(dfd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	char err[256];
	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == c->dev && st.st_ino == c->ino)
		c->known = ct_trace_origin_fd(fd, name, &c->o, err, sizeof(err)) == 0;
	if (fd >= 0)
		close(fd);
	if (c->known && c->o.start_unix_ns < f->start_ns)
		return 0; /* an older process's */
	if (!c->known)
		c->o.pid = pid_of_name(name);
	c->file = strdup(name);
	return c->file != NULL;
}

static int cmp_start(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;
	if (x->known != y->known)
		return y->known - x->known;
	return x->o.start_unix_ns < y->o.start_unix_ns ? -1 : x->o.start_unix_ns > y->o.start_unix_ns;
}

/* The ctrack.*.zst files of the directory that may be the run's, oldest first. */
static size_t list_candidates(const struct ct_family *f, struct candidate **out)
{
	DIR *d = opendir(f->dir);
	size_t n = 0, cap = 0;
	*out = NULL;
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (n == cap) {
			struct candidate *v = realloc(*out, (cap = cap ? 2 * cap : 64) * sizeof(*v));
			if (!v)
				break;
			*out = v;
		}
		n += (size_t)consider(f, dirfd(d), e->d_name, &(*out)[n]);
	}
	closedir(d);
	if (n)
		qsort(*out, n, sizeof(**out), cmp_start);
	return n;
}

/* Whether start is within m's run: a process it forked, or an image it exec'd into. */
static int during(const struct ct_member *m, uint64_t start)
{
	return start + SLACK_NS >= m->start_ns && (m->end_ns == UINT64_MAX || start <= m->end_ns + SLACK_NS);
}

/* Whether process pid was one of the run's at time start (0: any time). */
static int ours(const struct ct_family *f, uint64_t pid, uint64_t start)
{
	if (pid == (uint64_t)f->root)
		return !start || (start + SLACK_NS >= f->start_ns && start <= f->end_ns + SLACK_NS);
	for (size_t i = 0; i < f->nkids; i++)
		if (f->kids[i].pid == pid && (!start || during(&f->kids[i], start)))
			return 1;
	for (size_t i = 0; i < f->nuntraced; i++)
		if ((uint64_t)f->untraced[i].pid == pid &&
		    (!start || start + SLACK_NS >= f->untraced[i].start_unix_ns))
			return 1;
	return 0;
}

/* An image that one of the run's traces exec'd into, started when that trace ended. */
static int exec_of_ours(const struct ct_family *f, const struct ct_trace_origin *o)
{
	const struct ct_member *p = &f->parent;
	if (p->ok && p->s.exec_path[0] && o->pid == p->pid && during(p, o->start_unix_ns))
		return 1;
	for (size_t i = 0; i < f->nkids; i++) {
		const struct ct_member *m = &f->kids[i];
		if (m->ok && m->s.exec_path[0] && o->pid == m->pid &&
		    o->start_unix_ns + SLACK_NS >= m->end_ns && o->start_unix_ns <= m->end_ns + SLACK_NS)
			return 1;
	}
	return 0;
}

/* Whether the live process pid carries this run's CTRACK_STATUS in its environment: a followed
 * process keeps the shim's settings, and the status page's name is this run's alone. */
static int carries_status(const struct ct_family *f, uint64_t pid)
{
	char path[64], buf[65536], want[sizeof(f->status) + 32];
	if (!f->status[0])
		return 0;
	snprintf(path, sizeof(path), "/proc/%" PRIu64 "/environ", pid);
	int n = snprintf(want, sizeof(want), "%s=%s", CT_ENV_STATUS, f->status);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t k = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (k > 0)
		buf[k] = 0;
	for (ssize_t at = 0; at < k; at += (ssize_t)strlen(buf + at) + 1)
		if (!strcmp(buf + at, want))
			return n > 0;
	return 0;
}

/* Whether c is the run's: forked by one of the run's processes while it ran, or an image one of
 * them became. A trace with no PROCESS record (empty, cut at once: its writer has not flushed yet,
 * a daemon on a loaded machine) has only its name's pid: the run's when that pid is, when its live
 * process's parent is, or when its live process carries this run's status page name (a daemon's
 * parent is gone: its parent is now init). */
static int belongs(const struct ct_family *f, const struct candidate *c)
{
	if (c->known)
		return ours(f, c->o.ppid, c->o.start_unix_ns) || exec_of_ours(f, &c->o) ||
		       (c->o.pid == (uint64_t)f->root && ours(f, c->o.pid, c->o.start_unix_ns));
	uint64_t ppid, start;
	if (!c->o.pid)
		return 0;
	if (ct_proc_stat(c->o.pid, &ppid, &start) < 0)
		return ours(f, c->o.pid, 0);
	return start + SLACK_NS >= f->start_ns &&
	       (ours(f, c->o.pid, 0) || ours(f, ppid, 0) || carries_status(f, c->o.pid));
}

static int take(struct ct_family *f, struct candidate *c, size_t cap)
{
	if (f->nkids == cap)
		return -1;
	struct ct_member *m = &f->kids[f->nkids];
	size_t len = strlen(f->dir) + 1 + strlen(c->file) + 1;
	*m = (struct ct_member){.path = malloc(len), .dev = c->dev, .ino = c->ino};
	if (!m->path)
		return -1;
	snprintf(m->path, len, "%s/%s", f->dir, c->file);
	m->file = m->path + strlen(f->dir) + 1;
	m->pid = c->o.pid;
	m->ppid = c->o.ppid;
	m->start_ns = c->o.start_unix_ns;
	sum_up(f, m);
	f->nkids++;
	c->taken = 1;
	return 0;
}

/* Until no more is found: a child's trace makes its own children the run's. */
static void collect_children(struct ct_family *f)
{
	struct candidate *v;
	size_t n = list_candidates(f, &v);
	f->kids = n ? calloc(n, sizeof(*f->kids)) : NULL;
	for (int found = f->kids != NULL; found;) {
		found = 0;
		for (size_t i = 0; i < n; i++)
			if (!v[i].taken && belongs(f, &v[i]) && take(f, &v[i], n) == 0)
				found = 1;
	}
	for (size_t i = 0; i < n; i++)
		free(v[i].file);
	free(v);
}

/* Whether one of the run's traces is pid's. */
static int has_member(const struct ct_family *f, uint64_t pid)
{
	for (size_t i = 0; i < f->nkids; i++)
		if (f->kids[i].pid == pid)
			return 1;
	return f->parent.pid == pid;
}

/* The run's processes that still run and left no trace in the directory yet: a daemon forked on a
 * loaded machine may not have created its trace by the time the program is reaped, and its parent
 * may be gone. Each is found by the run's status page name in its environment (carries_status),
 * and becomes a member that is still running, named as its trace will be. */
static void collect_running(struct ct_family *f)
{
	DIR *proc = f->status[0] ? opendir("/proc") : NULL;
	for (struct dirent *e; proc && (e = readdir(proc));) {
		char *end, exe[PATH_MAX], name[PATH_MAX];
		uint64_t pid = strtoull(e->d_name, &end, 10), ppid, start;
		if (*end || !pid || pid == (uint64_t)getpid() || has_member(f, pid) ||
		    ct_proc_stat(pid, &ppid, &start) < 0 || start + SLACK_NS < f->start_ns ||
		    !carries_status(f, pid))
			continue;
		snprintf(name, sizeof(name), "/proc/%" PRIu64 "/exe", pid);
		ssize_t k = readlink(name, exe, sizeof(exe) - 1);
		exe[k > 0 ? k : 0] = 0;
		struct ct_member *v = realloc(f->kids, (f->nkids + 1) * sizeof(*v));
		if (!v || ct_trace_name(name, sizeof(name), f->dir, k > 0 ? ct_basename(exe) : "?",
		                        (pid_t)pid, 0) < 0) {
			f->kids = v ? v : f->kids;
			continue;
		}
		f->kids = v;
		struct ct_member *m = &f->kids[f->nkids];
		*m = (struct ct_member){.path = strdup(name), .pid = pid, .ppid = ppid, .start_ns = start};
		if (!m->path)
			continue;
		m->file = m->path + strlen(f->dir) + 1;
		m->end_ns = UINT64_MAX;
		m->running = 1;
		snprintf(m->err, sizeof(m->err), "its trace is not written yet");
		f->nkids++;
	}
	if (proc)
		closedir(proc);
}

/* The images the run's processes exec'd into that left no trace of theirs. */
static void find_gaps(struct ct_family *f)
{
	size_t n = f->nkids + 1;
	f->gaps = calloc(n, sizeof(*f->gaps));
	for (size_t i = 0; f->gaps && i < n; i++) {
		const struct ct_member *m = i ? &f->kids[i - 1] : &f->parent;
		if (!m->ok || !m->s.exec_path[0])
			continue;
		const struct ct_trace_origin o = {m->pid, 0, m->end_ns};
		int found = 0;
		for (size_t k = 0; k < f->nkids && !found; k++) {
			const struct ct_member *x = &f->kids[k];
			found =
			    x->pid == o.pid && (!x->start_ns || (x->start_ns + SLACK_NS >= o.start_unix_ns &&
			                                         x->start_ns <= o.start_unix_ns + SLACK_NS));
		}
		if (!found)
			f->gaps[f->ngaps++].m = m;
	}
}

/* ---- the family ---- */

void ct_family_init(struct ct_family *f, const char *trace, int follow)
{
	*f = (struct ct_family){.follow = follow, .fd = -1, .status_fd = -1};
	if (follow && ct_tracefile_dir(trace, f->dir) < 0)
		f->dir[0] = 0;
	if (follow)
		status_create(f);
}

const char *ct_family_status(const struct ct_family *f)
{
	return f->status[0] ? f->status : NULL;
}

void ct_family_collect(struct ct_family *f, struct ct_spawn_result *r, int sum, int children)
{
	f->root = r->pid;
	f->start_ns = r->start_ns;
	f->end_ns = r->end_ns;
	f->fd = r->trace_fd;
	r->trace_fd = -1;
	collect_parent(f, r->trace, sum || children);
	f->summed = sum || children;
	if (!children || !f->follow)
		return;
	status_read(f);
	if (f->dir[0]) {
		f->children = 1;
		collect_children(f);
		collect_running(f);
	}
	find_gaps(f);
}

void ct_family_release(struct ct_family *f)
{
	free(f->parent.path);
	for (size_t i = 0; i < f->nkids; i++)
		free(f->kids[i].path);
	free(f->kids);
	free(f->gaps);
	free(f->untraced);
	if (f->page)
		munmap(f->page, CT_STATUS_SIZE);
	if (f->status_fd >= 0)
		close(f->status_fd);
	if (f->fd >= 0)
		close(f->fd);
	*f = (struct ct_family){.fd = -1, .status_fd = -1};
}
