/* SPDX-License-Identifier: MIT */
/* fork, set up, exec, wait. The launcher has one thread, so the forked child may still allocate
 * and setenv. It sends the trace's descriptor once it has created the file, and a failure before
 * exec as {stage, errno}, on a close-on-exec socket (a pipe cannot carry descriptors). */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rules.h"
#include "spawn.h"
#include "tracefile.h"

/* The child's status when it could not run the program (the parent reports the real reason). */
#define EXIT_NOT_RUN 127

/* What the child sends: CREATED with the trace's descriptor, or a failure before dying. */
#define CREATED 0
struct child_report {
	int stage; /* enum ct_spawn_stage, or CREATED */
	int err;   /* positive errno */
};

/* The program, for the signal handler. */
static volatile sig_atomic_t child_pid;

/* ---- the child ---- */

static _Noreturn void report_and_exit(int sock, int stage, int err)
{
	const struct child_report r = {stage, err};
	ssize_t n = write(sock, &r, sizeof(r));
	(void)n; /* if the parent is gone there is no one to tell */
	_exit(EXIT_NOT_RUN);
}

/* Hands the parent the trace's descriptor: it reads back the file the program wrote, whatever
 * its name names by then (another run's file, with --force). Should this fail, the parent falls
 * back on the name, checked against nothing: the program runs all the same. */
static void send_trace(int sock, int fd)
{
	const struct child_report r = {CREATED, 0};
	struct iovec iov = {(void *)&r, sizeof(r)};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u = {{0}};
	struct msghdr msg = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	ssize_t n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	(void)n;
}

/* The shim first, then whatever the user preloads. Returns 0 or -ENOMEM. */
static int set_preload(const char *shim)
{
	const char *user = getenv("LD_PRELOAD");
	if (!user || !*user)
		return setenv("LD_PRELOAD", shim, 1) ? -ENOMEM : 0;
	size_t len = strlen(shim) + strlen(user) + 2;
	char *v = malloc(len);
	if (!v)
		return -ENOMEM;
	snprintf(v, len, "%s:%s", shim, user);
	int rc = setenv("LD_PRELOAD", v, 1);
	free(v);
	return rc ? -ENOMEM : 0;
}

/* The settings of rules.h for the shim of the process that will own the trace fd of the file name.
 * Returns 0 or a negative errno (setenv only fails with ENOMEM). */
static int set_shim_env(const struct ct_spawn *s, const char *name, int fd)
{
	struct stat st;
	char dir[PATH_MAX], buf[96];
	assert(s->depth >= 1 && s->depth <= CT_DEPTH_MAX); /* what ct_parse_depth accepts */
	if (fstat(fd, &st) < 0)
		return -errno;
	int rc = ct_tracefile_dir(name, dir);
	if (rc < 0)
		return rc;
	snprintf(buf, sizeof(buf), "%d:%ju:%ju", fd, (uintmax_t)st.st_dev, (uintmax_t)st.st_ino);
	if (set_preload(s->shim) || setenv(CT_ENV_SHIM, s->shim, 1) || setenv(CT_ENV_FD, buf, 1) ||
	    setenv(CT_ENV_DIR, dir, 1))
		return -ENOMEM;
	/* Always set: a CTRACK_DEPTH inherited from the user's environment never reaches the shim. */
	snprintf(buf, sizeof(buf), "%d", s->depth);
	if (setenv(CT_ENV_DEPTH, buf, 1))
		return -ENOMEM;
	snprintf(buf, sizeof(buf), "%d", s->lanes);
	if (s->lanes && setenv(CT_ENV_LANES, buf, 1))
		return -ENOMEM;
	/* Always set or unset, as the depth: an inherited CTRACK_AGGREGATE never decides. */
	snprintf(buf, sizeof(buf), "%u", s->aggregate);
	if (s->aggregate ? setenv(CT_ENV_AGGREGATE, buf, 1) : unsetenv(CT_ENV_AGGREGATE))
		return -ENOMEM;
	/* The same for sampling (an inherited CTRACK_SAMPLE_SEED stays: tests repeat a choice with it). */
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)s->sample);
	if (s->sample ? setenv(CT_ENV_SAMPLE, buf, 1) : unsetenv(CT_ENV_SAMPLE))
		return -ENOMEM;
	rc = s->follow_children ? setenv(CT_ENV_FOLLOW, "1", 1) : unsetenv(CT_ENV_FOLLOW);
	if (rc == 0)
		rc = s->status ? setenv(CT_ENV_STATUS, s->status, 1) : unsetenv(CT_ENV_STATUS);
	return rc ? -ENOMEM : 0;
}

/* The trace file is created here, so that its default name carries the program's pid. */
static _Noreturn void run_child(const struct ct_spawn *s, int sock)
{
	char name[PATH_MAX];
	int fd = ct_tracefile_name(name, sizeof(name), s->output, s->argv[0], getpid());
	if (fd == 0)
		fd = ct_tracefile_create(name, s->force);
	if (fd < 0)
		report_and_exit(sock, CT_SPAWN_CREATE, -fd);
	send_trace(sock, fd);
	int rc = set_shim_env(s, name, fd);
	if (rc == 0 && fcntl(fd, F_SETFD, 0) < 0) /* the one descriptor the program inherits */
		rc = -errno;
	if (rc == 0 && s->before_exec)
		rc = s->before_exec(name, s->hook_arg);
	if (rc < 0) {
		unlink(name);
		report_and_exit(sock, CT_SPAWN_SETUP, -rc);
	}
	execv(s->exe, s->argv);
	int err = errno;
	unlink(name); /* still empty: nothing ran */
	report_and_exit(sock, CT_SPAWN_EXEC, err);
}

/* ---- the parent ---- */

static void forward_signal(int sig)
{
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

/* The terminal sends SIGINT/SIGQUIT to the whole group, so the child has them already; the
 * signals aimed at us alone are passed on. */
static void install_parent_signals(void)
{
	static const int forwarded[] = {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};
	struct sigaction sa = {.sa_handler = SIG_IGN};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	sa.sa_handler = forward_signal;
	sa.sa_flags = SA_RESTART;
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaction(forwarded[i], &sa, NULL);
}

/* Until the handlers are in place, a signal must not kill the launcher and orphan the program. */
static void block_signals(sigset_t *old)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGQUIT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, old);
}

/* One report into *r, and the descriptor it carries into *fd (kept at -1 when none). 1 when a
 * report came, 0 at EOF (the child exec'd the program, or died). */
static int read_report(int sock, struct child_report *r, int *fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u = {{0}};
	struct iovec iov = {r, sizeof(*r)};
	struct msghdr msg = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
	ssize_t n;
	while ((n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&msg) : NULL;
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
		memcpy(fd, CMSG_DATA(c), sizeof(int));
	return n == (ssize_t)sizeof(*r);
}

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* The exit status a shell would give, and the signal that killed the program (0: none). */
static int wait_status(pid_t pid, int *sig)
{
	int status;
	*sig = 0;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 1;
	if (WIFSIGNALED(status)) {
		*sig = WTERMSIG(status);
		return 128 + *sig;
	}
	return WEXITSTATUS(status);
}

static int fail(struct ct_spawn_result *r, enum ct_spawn_stage stage, int err)
{
	r->stage = stage;
	return err > 0 ? -err : -EIO;
}

static int wait_child(const struct ct_spawn *s, pid_t pid, int sock, struct ct_spawn_result *r)
{
	struct child_report report;
	/* the child's own name for the trace; one cut short only shows in messages */
	ct_tracefile_name(r->trace, sizeof(r->trace), s->output, s->argv[0], pid);
	r->pid = pid;
	int failed = read_report(sock, &report, &r->trace_fd);
	if (failed && report.stage == CREATED)
		failed = read_report(sock, &report, &r->trace_fd);
	close(sock);
	if (!failed && s->running)
		s->running(r, s->hook_arg);
	r->status = wait_status(pid, &r->signal);
	r->end_ns = now_ns();
	if (!failed)
		return 0;
	if (r->trace_fd >= 0) /* the child removed the file */
		close(r->trace_fd);
	r->trace_fd = -1;
	return fail(r, report.stage, report.err);
}

int ct_spawn_run(const struct ct_spawn *s, struct ct_spawn_result *r)
{
	int sock[2];
	sigset_t old;
	r->trace[0] = '\0';
	r->trace_fd = -1;
	r->pid = 0;
	r->start_ns = now_ns();
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sock) < 0)
		return fail(r, CT_SPAWN_PIPE, errno);
	block_signals(&old);
	pid_t pid = fork();
	if (pid < 0) {
		int err = errno;
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(sock[0]);
		close(sock[1]);
		return fail(r, CT_SPAWN_FORK, err);
	}
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(sock[0]);
		run_child(s, sock[1]);
	}
	child_pid = pid;
	close(sock[1]);
	install_parent_signals();
	sigprocmask(SIG_SETMASK, &old, NULL);
	return wait_child(s, pid, sock[0], r);
}
