/* SPDX-License-Identifier: MIT */
/* ctrack: runs a program with libctrack.so preloaded and reports where its trace went.
 * The program keeps its own stdio, argv and exit status; the trace file is created O_EXCL/O_NOFOLLOW by the child. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctrack-config.h"
#include "summary.h"

#define EXIT_USAGE 2
#define EXIT_CANNOT_EXEC 126
#define EXIT_NOT_FOUND 127
#define DEFAULT_DEPTH 64
#define MAX_DEPTH 1024

struct options {
	const char *output;  /* -o, or NULL for ctrack.NAME.PID.zst */
	int follow_children;
	int depth;
	int quiet;
	int force;
	char **argv;         /* PROGRAM ARGS..., NULL-terminated */
};

/* What the child tells the parent before dying; EOF on the pipe instead means exec succeeded. */
enum child_stage { STAGE_CREATE = 1, STAGE_SETUP, STAGE_EXEC };
struct child_report {
	int stage;
	int err;
};

static volatile pid_t child_pid;

/* ---- small helpers ---- */

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* snprintf that reports truncation, so a long path is an error rather than another file. */
static int fmt_path(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fmt_path(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* The one rule for the default trace name; the parent and the child both apply it. */
static int trace_name(char *buf, size_t len, const struct options *o, pid_t pid)
{
	if (o->output)
		return fmt_path(buf, len, "%s", o->output);
	return fmt_path(buf, len, "ctrack.%s.%ld.zst", base_name(o->argv[0]), (long)pid);
}

/* Directory of the running executable, so build/ctrack finds build/libctrack.so in place. */
static int self_dir(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	if (n <= 0)
		return -errno;
	buf[n] = '\0';
	char *slash = strrchr(buf, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	return 0;
}

static int is_regular(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int find_shim(char *buf, size_t len)
{
	char dir[PATH_MAX];
	if (self_dir(dir, sizeof(dir)) == 0) {
		if (fmt_path(buf, len, "%s/%s", dir, CTRACK_SHIM_NAME) == 0 && is_regular(buf))
			return 0;
	}
	if (fmt_path(buf, len, "%s/%s", CTRACK_SHIM_DIR, CTRACK_SHIM_NAME) < 0)
		return -ENAMETOOLONG;
	return is_regular(buf) ? 0 : -ENOENT;
}

/* ---- finding the program, as execvp would ---- */

/* 0 if path is an executable regular file, else the errno exec would most likely give. */
static int check_executable(const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return errno;
	if (S_ISDIR(st.st_mode))
		return EISDIR;
	if (!S_ISREG(st.st_mode) || access(path, X_OK) < 0)
		return EACCES;
	return 0;
}

/* PATH search: the first executable candidate wins; a non-executable one only decides the
 * error (EACCES beats ENOENT, as in execvp). Empty PATH entries mean the current directory. */
static int search_path(const char *name, char *buf, size_t len)
{
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	int result = ENOENT;
	for (const char *p = path;; p++) {
		const char *end = strchrnul(p, ':');
		int dlen = (int)(end - p);
		int err = dlen ? fmt_path(buf, len, "%.*s/%s", dlen, p, name) : fmt_path(buf, len, "%s", name);
		if (err == 0)
			err = check_executable(buf);
		else
			err = ENAMETOOLONG;
		if (err == 0)
			return 0;
		if (err == EACCES)
			result = EACCES;
		if (!*end)
			break;
		p = end;
	}
	return result;
}

static int resolve_program(const char *name, char *buf, size_t len)
{
	if (!*name)
		return ENOENT;
	if (strchr(name, '/')) {
		if (fmt_path(buf, len, "%s", name) < 0)
			return ENAMETOOLONG;
		return check_executable(buf);
	}
	return search_path(name, buf, len);
}

/* ---- static binaries: LD_PRELOAD cannot reach them ---- */

static int read_at(int fd, void *buf, size_t len, off_t off)
{
	return pread(fd, buf, len, off) == (ssize_t)len ? 0 : -1;
}

/* Type, file offset and size of program header i; -1 when unreadable. Handles both ELF classes. */
static int read_phdr(int fd, int is64, uint64_t phoff, unsigned entsize, unsigned i, uint64_t ph[3])
{
	off_t off = (off_t)(phoff + (uint64_t)i * entsize);
	if (is64) {
		Elf64_Phdr p;
		if (read_at(fd, &p, sizeof(p), off))
			return -1;
		ph[0] = p.p_type, ph[1] = p.p_offset, ph[2] = p.p_filesz;
		return 0;
	}
	Elf32_Phdr p;
	if (read_at(fd, &p, sizeof(p), off))
		return -1;
	ph[0] = p.p_type, ph[1] = p.p_offset, ph[2] = p.p_filesz;
	return 0;
}

/* 1 when the dynamic section (file offset off, size len) marks a PIE: DT_FLAGS_1 & DF_1_PIE. */
static int dynamic_is_pie(int fd, int is64, uint64_t off, uint64_t len)
{
	size_t entsize = is64 ? sizeof(Elf64_Dyn) : sizeof(Elf32_Dyn);
	for (uint64_t at = off; at + entsize <= off + len; at += entsize) {
		uint64_t tag, val;
		if (is64) {
			Elf64_Dyn d;
			if (read_at(fd, &d, sizeof(d), (off_t)at))
				return 0;
			tag = (uint64_t)d.d_tag, val = d.d_un.d_val;
		} else {
			Elf32_Dyn d;
			if (read_at(fd, &d, sizeof(d), (off_t)at))
				return 0;
			tag = (uint64_t)(int64_t)d.d_tag, val = d.d_un.d_val;
		}
		if (tag == DT_NULL)
			return 0;
		if (tag == DT_FLAGS_1)
			return (val & DF_1_PIE) != 0;
	}
	return 0;
}

/* 1 if path is an ELF program the dynamic loader never runs: no PT_INTERP, and either no
 * PT_DYNAMIC (static) or a dynamic section flagged PIE (static-pie, which relocates itself). The
 * loader itself (ld.so, no PT_INTERP, no DF_1_PIE) does run programs with LD_PRELOAD. Anything we
 * cannot read or parse (scripts, exec-only files) is given the benefit of the doubt: exec will tell. */
static int is_static_elf(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	Elf64_Ehdr eh;
	int is_static = 0;
	if (read_at(fd, &eh, EI_NIDENT, 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG))
		goto out;
	int is64 = eh.e_ident[EI_CLASS] == ELFCLASS64;
	uint64_t phoff;
	unsigned phnum, entsize;
	if (is64) {
		if (read_at(fd, &eh, sizeof(eh), 0))
			goto out;
		phoff = eh.e_phoff, phnum = eh.e_phnum, entsize = eh.e_phentsize;
	} else {
		Elf32_Ehdr e32;
		if (read_at(fd, &e32, sizeof(e32), 0))
			goto out;
		phoff = e32.e_phoff, phnum = e32.e_phnum, entsize = e32.e_phentsize;
	}
	if (entsize < (is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)))
		goto out;
	uint64_t dyn[3] = {0}, ph[3];
	for (unsigned i = 0; i < phnum; i++) {
		if (read_phdr(fd, is64, phoff, entsize, i, ph) || ph[0] == PT_INTERP)
			goto out;
		if (ph[0] == PT_DYNAMIC)
			memcpy(dyn, ph, sizeof(dyn));
	}
	is_static = dyn[0] != PT_DYNAMIC || dynamic_is_pie(fd, is64, dyn[1], dyn[2]);
out:
	close(fd);
	return is_static;
}

/* ---- the child ---- */

static void report_and_exit(int pipefd, int stage, int err)
{
	struct child_report r = { stage, err };
	ssize_t n = write(pipefd, &r, sizeof(r));
	(void)n; /* if the parent is gone there is no one to tell */
	_exit(EXIT_NOT_FOUND);
}

static int create_trace(const char *name, int force)
{
	if (force && unlink(name) < 0 && errno != ENOENT)
		return -errno;
	int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (fd > STDERR_FILENO)
		return fd;
	/* stdio was closed: keep the trace off fds 0-2, which the program may reopen */
	int moved = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
	int err = errno;
	close(fd);
	return moved < 0 ? -err : moved;
}

/* Absolute directory of the trace file, where the shim puts the children's traces. */
static int trace_dir(const char *name, char *buf)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(name, '/');
	if (!slash)
		strcpy(dir, ".");
	else if (slash == name)
		strcpy(dir, "/");
	else if (fmt_path(dir, sizeof(dir), "%.*s", (int)(slash - name), name) < 0)
		return -ENAMETOOLONG;
	return realpath(dir, buf) ? 0 : -errno;
}

static int set_preload(const char *shim)
{
	const char *user = getenv("LD_PRELOAD");
	if (!user || !*user)
		return setenv("LD_PRELOAD", shim, 1);
	size_t len = strlen(shim) + strlen(user) + 2;
	char *v = malloc(len);
	if (!v)
		return -1;
	snprintf(v, len, "%s:%s", shim, user);
	int rc = setenv("LD_PRELOAD", v, 1);
	free(v);
	return rc;
}

/* Returns 0 or a negative errno (setenv only fails with ENOMEM). */
static int set_shim_env(const struct options *o, const char *shim, const char *name, int fd)
{
	struct stat st;
	char dir[PATH_MAX], buf[96];
	if (fstat(fd, &st) < 0)
		return -errno;
	int rc = trace_dir(name, dir);
	if (rc < 0)
		return rc;
	snprintf(buf, sizeof(buf), "%d:%ju:%ju", fd, (uintmax_t)st.st_dev, (uintmax_t)st.st_ino);
	if (set_preload(shim) || setenv("CTRACK_SHIM", shim, 1) || setenv("CTRACK_FD", buf, 1) ||
	    setenv("CTRACK_DIR", dir, 1))
		return -ENOMEM;
	snprintf(buf, sizeof(buf), "%d", o->depth);
	if (setenv("CTRACK_DEPTH", buf, 1))
		return -ENOMEM;
	rc = o->follow_children ? setenv("CTRACK_FOLLOW", "1", 1) : unsetenv("CTRACK_FOLLOW");
	return rc ? -ENOMEM : 0;
}

static void run_child(const struct options *o, const char *shim, const char *exe, int pipefd)
{
	char name[PATH_MAX];
	int fd = trace_name(name, sizeof(name), o, getpid());
	if (fd == 0)
		fd = create_trace(name, o->force);
	if (fd < 0)
		report_and_exit(pipefd, STAGE_CREATE, -fd);
	int rc = set_shim_env(o, shim, name, fd);
	if (rc == 0 && fcntl(fd, F_SETFD, 0) < 0)
		rc = -errno;
	if (rc < 0) {
		unlink(name);
		report_and_exit(pipefd, STAGE_SETUP, -rc);
	}
	execv(exe, o->argv);
	int err = errno;
	unlink(name); /* still empty: nothing ran */
	report_and_exit(pipefd, STAGE_EXEC, err);
}

/* ---- the parent ---- */

static void forward_signal(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

/* The terminal sends SIGINT/SIGQUIT to the whole group, so the child has them already; the
 * signals aimed at us alone are passed on. */
static void install_parent_signals(void)
{
	static const int forwarded[] = { SIGTERM, SIGHUP, SIGUSR1, SIGUSR2 };
	struct sigaction sa = { .sa_handler = SIG_IGN };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	sa.sa_handler = forward_signal;
	sa.sa_flags = SA_RESTART;
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaction(forwarded[i], &sa, NULL);
}

static void block_signals(sigset_t *set, sigset_t *old)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGQUIT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGUSR1);
	sigaddset(set, SIGUSR2);
	sigprocmask(SIG_BLOCK, set, old);
}

/* Returns 1 with *r filled if the child reported a failure, 0 if exec succeeded (EOF). */
static int read_report(int fd, struct child_report *r)
{
	ssize_t n;
	do
		n = read(fd, r, sizeof(*r));
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(*r);
}

static int wait_status(pid_t pid)
{
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 1;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

static void print_exec_error(const char *prog, int err)
{
	if (err == ENOENT && !strchr(prog, '/'))
		fprintf(stderr, "ctrack: %s: command not found\n", prog);
	else
		fprintf(stderr, "ctrack: %s: %s\n", prog, strerror(err));
}

static int exec_error_status(int err)
{
	return err == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC;
}

static int report_child_failure(const struct child_report *r, const char *name, const char *prog)
{
	switch (r->stage) {
	case STAGE_CREATE:
		fprintf(stderr, "ctrack: cannot create '%s': %s%s\n", name, strerror(r->err),
			r->err == EEXIST ? " (use --force to overwrite)" : "");
		return 1;
	case STAGE_EXEC:
		print_exec_error(prog, r->err);
		return exec_error_status(r->err);
	default:
		fprintf(stderr, "ctrack: cannot prepare the environment: %s\n", strerror(r->err));
		return 1;
	}
}

/* ---- the closing message ---- */

static const char *fmt_count(uint64_t v, char *buf, size_t len)
{
	char digits[24];
	int n = snprintf(digits, sizeof(digits), "%" PRIu64, v);
	size_t o = 0;
	for (int i = 0; i < n && o + 2 < len; i++) {
		if (i > 0 && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

/* Exact below 10 KiB (small leaks are counted in bytes), else one decimal in binary units. */
static const char *fmt_bytes(uint64_t v, char *buf, size_t len)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
	char count[32];
	if (v < 10240) {
		snprintf(buf, len, "%s byte%s", fmt_count(v, count, sizeof(count)), v == 1 ? "" : "s");
		return buf;
	}
	double x = (double)v / 1024;
	size_t u = 0;
	while (x >= 1024 && u + 1 < sizeof(units) / sizeof(units[0]))
		x /= 1024, u++;
	snprintf(buf, len, "%.1f %s", x, units[u]);
	return buf;
}

static int shell_safe(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./,:+@%=-", *s))
			return 0;
	return 1;
}

static void print_quoted(const char *s)
{
	if (shell_safe(s)) {
		fputs(s, stderr);
		return;
	}
	fputc('\'', stderr);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", stderr);
		else
			fputc(*s, stderr);
	}
	fputc('\'', stderr);
}

static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* The analyzer beside the launcher (run in place from the build tree), by bare name when
 * PATH finds that very file anyway. */
static void analyzer_command(char *buf, size_t len)
{
	char dir[PATH_MAX], beside[PATH_MAX], found[PATH_MAX];
	snprintf(buf, len, "ctrack-analyze");
	if (self_dir(dir, sizeof(dir)) < 0 || fmt_path(beside, sizeof(beside), "%s/ctrack-analyze", dir) < 0)
		return;
	if (check_executable(beside) != 0)
		return;
	if (search_path("ctrack-analyze", found, sizeof(found)) == 0 && same_file(found, beside))
		return;
	snprintf(buf, len, "%s", beside);
}

/* A trace's summary, or why there is none. */
struct summary {
	int ok; /* s is filled, else err says why */
	struct ct_trace_summary s;
	char err[256];
};

static void summarize(const char *path, struct summary *r)
{
	r->err[0] = 0;
	r->ok = ct_trace_summarize(path, &r->s, r->err, sizeof(r->err)) == 0;
	if (!r->ok && !r->err[0])
		snprintf(r->err, sizeof(r->err), "the trace cannot be read");
}

/* "PREFIX 1,031 allocations, ...", or "PREFIX no summary: why". */
static void print_summary(const struct summary *r, const char *prefix)
{
	const struct ct_trace_summary *s = &r->s;
	char a[32], b[32], c[32], d[32], e[32];
	if (!r->ok) {
		fprintf(stderr, "%sno summary: %s\n", prefix, r->err);
		return;
	}
	fprintf(stderr, "%s%s allocation%s, %s allocated, peak %s, leaked %s in %s allocation%s%s\n", prefix,
		fmt_count(s->allocations, a, sizeof(a)), s->allocations == 1 ? "" : "s",
		fmt_bytes(s->bytes_allocated, b, sizeof(b)), fmt_bytes(s->peak_heap_bytes, c, sizeof(c)),
		fmt_bytes(s->leaked_bytes, d, sizeof(d)), fmt_count(s->leaked_allocations, e, sizeof(e)),
		s->leaked_allocations == 1 ? "" : "s", s->complete ? "" : " (trace is truncated)");
}

/* The summary line of the trace at path, and a word on an exec'd image left untraced. */
static void print_summary_line(const char *path, const char *prefix, int follow_children)
{
	struct summary r;
	summarize(path, &r);
	print_summary(&r, prefix);
	if (r.ok && r.s.exec_path[0] && !follow_children)
		fprintf(stderr, "ctrack: the program then ran '%s' (exec), which was not traced: "
		                "--follow-children traces it too\n", r.s.exec_path);
}

/* "ctrack: WHAT with: CMD [OPTION] TRACE", each word quoted for the shell. */
static void print_command(const char *what, const char *cmd, const char *option, const char *name)
{
	fprintf(stderr, "ctrack: %s with: ", what);
	print_quoted(cmd);
	fputc(' ', stderr);
	if (option) {
		print_quoted(option);
		fputc(' ', stderr);
	}
	print_quoted(name);
	fputc('\n', stderr);
}

/* --html=NAME.html for the trace NAME.zst (any other name keeps its suffix: NAME.x.html). */
static void html_option(char *buf, size_t len, const char *name)
{
	size_t n = strlen(name);
	if (n > 4 && !strcmp(name + n - 4, ".zst"))
		n -= 4;
	snprintf(buf, len, "--html=%.*s.html", (int)n, name);
}

static void print_closing(const char *name, int follow_children)
{
	struct stat st;
	char size[32], cmd[PATH_MAX + 32], html[PATH_MAX + 32];
	if (stat(name, &st) < 0) {
		fprintf(stderr, "ctrack: trace file '%s' is gone: %s\n", name, strerror(errno));
		return;
	}
	fprintf(stderr, "ctrack: trace written to %s (%s)\n", name, fmt_bytes((uint64_t)st.st_size, size, sizeof(size)));
	if (st.st_size == 0) {
		fprintf(stderr, "ctrack: the trace is empty: the shim never wrote to it\n");
		return;
	}
	print_summary_line(name, "ctrack: ", follow_children);
	analyzer_command(cmd, sizeof(cmd));
	print_command("analyze", cmd, NULL, name);
	html_option(html, sizeof(html), name);
	print_command("HTML report", cmd, html, name);
}

/* ---- the children's traces (--follow-children) ---- */

/* File names in a directory, sorted. */
struct names {
	char **v;
	size_t n;
};

static int is_trace_name(const char *s)
{
	size_t n = strlen(s);
	return n > 11 && !strncmp(s, "ctrack.", 7) && !strcmp(s + n - 4, ".zst");
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_names(struct names *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	*l = (struct names){ 0 };
}

/* The ctrack.*.zst files in dir (as many as memory allows; none when dir cannot be read). */
static void list_traces(const char *dir, struct names *l)
{
	*l = (struct names){ 0 };
	DIR *d = opendir(dir);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));) {
		char **v = is_trace_name(e->d_name) ? realloc(l->v, (l->n + 1) * sizeof(*v)) : NULL;
		if (!v)
			continue;
		l->v = v;
		if ((v[l->n] = strdup(e->d_name)))
			l->n++;
	}
	closedir(d);
	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), cmp_name);
}

/* The closing message names at most this many children's traces: a run of `make` has hundreds. */
#define CHILDREN_SHOWN 10

struct child {
	const char *name;
	struct summary sum;
};

/* Readable traces first, the most leaked bytes first, then by name. */
static int cmp_child(const void *a, const void *b)
{
	const struct child *x = a, *y = b;
	if (x->sum.ok != y->sum.ok)
		return y->sum.ok - x->sum.ok;
	if (x->sum.ok && x->sum.s.leaked_bytes != y->sum.s.leaked_bytes)
		return x->sum.s.leaked_bytes < y->sum.s.leaked_bytes ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* The traces in after that appeared during the run (not in before), other than the parent's. */
static size_t new_children(const char *dir, const struct names *after, const struct names *before,
                           const char *name, struct child *v)
{
	char path[PATH_MAX];
	size_t n = 0;
	for (size_t i = 0; i < after->n; i++) {
		if (bsearch(&after->v[i], before->v, before->n, sizeof(*before->v), cmp_name) ||
		    fmt_path(path, sizeof(path), "%s/%s", dir, after->v[i]) < 0 || same_file(path, name))
			continue;
		v[n].name = after->v[i];
		summarize(path, &v[n++].sum);
	}
	return n;
}

/* Children's traces are the ones that appeared in the trace directory during the run: the ones that
 * leaked most get their summary lines, so nobody has to guess which of ctrack.*.zst to look at. */
static void print_children(const char *dir, const struct names *before, const char *name)
{
	struct names after;
	char prefix[NAME_MAX + 32], total[32];
	list_traces(dir, &after);
	struct child *v = after.n ? calloc(after.n, sizeof(*v)) : NULL;
	size_t n = v ? new_children(dir, &after, before, name, v) : 0;
	qsort(v, n, sizeof(*v), cmp_child);
	if (n > CHILDREN_SHOWN)
		fprintf(stderr, "ctrack: %zu child traces in %s; the %d that leaked most:\n", n, dir, CHILDREN_SHOWN);
	else if (n)
		fprintf(stderr, "ctrack: %zu child trace%s in %s:\n", n, n == 1 ? "" : "s", dir);
	uint64_t rest = 0;
	for (size_t i = 0; i < n; i++) {
		if (i >= CHILDREN_SHOWN) {
			rest += v[i].sum.ok ? v[i].sum.s.leaked_bytes : 0;
			continue;
		}
		snprintf(prefix, sizeof(prefix), "ctrack:   %s: ", v[i].name);
		print_summary(&v[i].sum, prefix);
	}
	if (n > CHILDREN_SHOWN)
		fprintf(stderr, "ctrack:   and %zu more, which leaked %s in all\n", n - CHILDREN_SHOWN,
		        fmt_bytes(rest, total, sizeof(total)));
	free(v);
	free_names(&after);
}

/* ---- command line ---- */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: ctrack [OPTIONS] PROGRAM [ARGS...]\n"
		"Run PROGRAM with the ctrack heap tracer preloaded and write its allocation trace.\n"
		"\n"
		"  -o FILE                write the trace to FILE (default: ctrack.PROGRAM.PID.zst)\n"
		"      --follow-children  trace child processes too (ctrack.NAME.PID.zst beside FILE)\n"
		"      --depth N          capture at most N stack frames (1..%d, default %d)\n"
		"  -q                     no closing summary\n"
		"      --force            overwrite an existing trace file\n"
		"      --help             show this help and exit\n"
		"      --version          show the version and exit\n"
		"\n"
		"Options end at the first non-option argument or at '--'.\n"
		"Analyze the trace with: ctrack-analyze FILE\n",
		MAX_DEPTH, DEFAULT_DEPTH);
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("ctrack: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'ctrack --help' for more information.\n", stderr);
	return EXIT_USAGE;
}

static int parse_depth(const char *s, int *depth)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > MAX_DEPTH)
		return -EINVAL;
	*depth = (int)v;
	return 0;
}

enum { OPT_FOLLOW = 256, OPT_DEPTH, OPT_FORCE, OPT_HELP, OPT_VERSION };

/* Returns -1 to go on, else the exit status (help, version, errors). */
static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "follow-children", no_argument, NULL, OPT_FOLLOW },
		{ "depth", required_argument, NULL, OPT_DEPTH },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "help", no_argument, NULL, OPT_HELP },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ 0 },
	};
	*o = (struct options){ .depth = DEFAULT_DEPTH };
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "+:o:q", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o->output = optarg; break;
		case 'q': o->quiet = 1; break;
		case OPT_FOLLOW: o->follow_children = 1; break;
		case OPT_FORCE: o->force = 1; break;
		case OPT_DEPTH:
			if (parse_depth(optarg, &o->depth) < 0)
				return usage_error("--depth: expected a number from 1 to %d, got '%s'", MAX_DEPTH, optarg);
			break;
		case OPT_HELP: usage(stdout); return 0;
		case OPT_VERSION: printf("ctrack %s\n", CTRACK_VERSION); return 0;
		case ':': return usage_error("option '%s' needs an argument", argv[optind - 1]);
		default:
			if (optopt)
				return usage_error("unknown option '-%c'", optopt);
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("no program given");
	o->argv = argv + optind;
	return -1;
}

/* ---- main ---- */

static int launch(const struct options *o, const char *shim, const char *exe)
{
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		fprintf(stderr, "ctrack: pipe: %s\n", strerror(errno));
		return 1;
	}
	/* The traces already in the directory, before the program can write any of its own. */
	char name[PATH_MAX], dir[PATH_MAX];
	struct names before = { 0 };
	trace_name(name, sizeof(name), o, 0);
	int children = o->follow_children && !o->quiet && trace_dir(name, dir) == 0;
	if (children)
		list_traces(dir, &before);
	sigset_t set, old;
	block_signals(&set, &old);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "ctrack: fork: %s\n", strerror(errno));
		free_names(&before);
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(pipefd[0]);
		close(pipefd[1]);
		return 1;
	}
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(pipefd[0]);
		run_child(o, shim, exe, pipefd[1]);
	}
	child_pid = pid;
	close(pipefd[1]);
	install_parent_signals();
	sigprocmask(SIG_SETMASK, &old, NULL);

	trace_name(name, sizeof(name), o, pid); /* a truncated name only shows in messages */
	struct child_report r;
	int failed = read_report(pipefd[0], &r);
	close(pipefd[0]);
	int status = wait_status(pid);
	if (failed) {
		free_names(&before);
		return report_child_failure(&r, name, o->argv[0]);
	}
	if (!o->quiet)
		print_closing(name, o->follow_children);
	if (children)
		print_children(dir, &before, name);
	free_names(&before);
	return status;
}

int main(int argc, char **argv)
{
	struct options o;
	int rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		return rc;

	char shim[PATH_MAX];
	if (find_shim(shim, sizeof(shim)) < 0) {
		fprintf(stderr, "ctrack: cannot find %s beside ctrack or in %s\n", CTRACK_SHIM_NAME, CTRACK_SHIM_DIR);
		return EXIT_USAGE;
	}
	if (strpbrk(shim, " :")) { /* LD_PRELOAD splits on both */
		fprintf(stderr, "ctrack: the shim path '%s' has a space or colon; LD_PRELOAD cannot hold it\n", shim);
		return EXIT_USAGE;
	}

	char exe[PATH_MAX];
	int err = resolve_program(o.argv[0], exe, sizeof(exe));
	if (err) {
		print_exec_error(o.argv[0], err);
		return exec_error_status(err);
	}
	if (is_static_elf(exe)) {
		fprintf(stderr, "ctrack: %s is statically linked; LD_PRELOAD cannot trace it (link it dynamically)\n", o.argv[0]);
		return 1;
	}
	fflush(stdout);
	return launch(&o, shim, exe);
}
