/* SPDX-License-Identifier: MIT */
/* ctrack -p PID (attach.h). Every check runs before anything touches the process; the first that
 * fails is said in one line. gdb then loads the shim: it stops at the entry of malloc, calloc,
 * realloc or free in some thread (a thread there holds none of malloc's locks, which dlopen and the
 * shim need: memray's way), or, when no thread allocates within a second, wherever the process is
 * (a process that allocates nothing for a second is hardly inside malloc: ARCHITECTURE.md says what
 * risk is left), dlopens the shim and calls ctrack_attach_v1, which connects to this launcher's
 * socket for the trace (common/attach_proto.h). */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "attach_proto.h"
#include "closing.h"
#include "elf_static.h"
#include "family.h"
#include "liveview.h"
#include "locate.h"
#include "rules.h"
#include "spawn.h"
#include "tracefile.h"

#define IDLE_MS 1000     /* no thread allocated within this: gdb interrupts the process */
#define INJECT_MS 60000  /* gdb's whole injection, at most */
#define FINISH_MS 60000  /* the shim's end of the trace after a detach (its leak scan) */
#define GDB_OUTPUT 16384 /* bytes of gdb's output kept, for its error */

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("ctrack: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t unix_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- the checks ---- */

/* /proc/PID/FILE into buf (NUL-terminated; NULs inside kept); its length, or -1. */
static ssize_t read_proc(pid_t pid, const char *file, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%ld/%s", (long)pid, file);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = 0;
	ssize_t k;
	while (n + 1 < len && (k = read(fd, buf + n, len - 1 - n)) > 0)
		n += (size_t)k;
	close(fd);
	buf[n] = '\0';
	return (ssize_t)n;
}

/* The value of "Field:" in /proc/PID/status, or -1. */
static long status_field(pid_t pid, const char *field)
{
	char buf[8192];
	if (read_proc(pid, "status", buf, sizeof(buf)) < 0)
		return -1;
	size_t n = strlen(field);
	for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		if (strncmp(line, field, n) == 0 && line[n] == ':')
			return strtol(line + n + 1, NULL, 10);
	return -1;
}

static int check_tracer(pid_t pid)
{
	long tracer = status_field(pid, "TracerPid");
	if (tracer <= 0)
		return 0;
	char comm[64] = "?", parent[64] = "";
	read_proc((pid_t)tracer, "comm", comm, sizeof(comm));
	comm[strcspn(comm, "\n")] = '\0';
	long ppid = status_field((pid_t)tracer, "PPid");
	if (ppid > 0)
		read_proc((pid_t)ppid, "comm", parent, sizeof(parent));
	if (strcmp(comm, "gdb") == 0 && strcmp(parent, "ctrack\n") == 0) /* another ctrack -p's gdb */
		return fail("process %ld is traced by ctrack already (another 'ctrack -p %ld' is attaching)",
		            (long)pid, (long)pid);
	return fail("process %ld is being traced by process %ld (%s), a debugger: detach it first", (long)pid,
	            tracer, comm);
}

/* Whether gdb may trace the process: a ptrace attach that sends no signal (PTRACE_SEIZE), undone at
 * once (a detach needs the thread in a ptrace stop: PTRACE_INTERRUPT makes one, which the process
 * never sees). */
static int check_ptrace(pid_t pid)
{
	if (ptrace(PTRACE_SEIZE, pid, 0, 0) == 0) {
		ptrace(PTRACE_INTERRUPT, pid, 0, 0);
		waitpid(pid, NULL, __WALL);
		ptrace(PTRACE_DETACH, pid, 0, 0);
		return 0;
	}
	int err = errno;
	long uid = status_field(pid, "Uid");
	char scope[16] = "";
	int fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t k = read(fd, scope, sizeof(scope) - 1);
		scope[k > 0 ? k : 0] = '\0';
		scope[strcspn(scope, "\n")] = '\0';
		close(fd);
	}
	if (err == EPERM && uid >= 0 && (uid_t)uid != geteuid() && geteuid() != 0)
		return fail("process %ld belongs to user %ld: run ctrack as that user or as root", (long)pid,
		            uid);
	if (err == EPERM && scope[0] && strcmp(scope, "0") != 0)
		return fail(
		    "ptrace is not permitted on process %ld: /proc/sys/kernel/yama/ptrace_scope is %s "
		    "(1: only a parent may trace its child; run as root, or set it to 0)",
		    (long)pid, scope);
	return fail("cannot trace process %ld: ptrace: %s", (long)pid, strerror(err));
}

/* The process's program is a dynamically linked x86_64 ELF (the shim's machine, and a loader that
 * can dlopen it). */
static int check_program(pid_t pid, char *exe, size_t len)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/%ld/exe", (long)pid);
	ssize_t n = readlink(link, exe, len - 1);
	exe[n > 0 ? n : 0] = '\0';
	int fd = open(link, O_RDONLY | O_CLOEXEC);
	Elf64_Ehdr eh;
	ssize_t got = fd >= 0 ? pread(fd, &eh, sizeof(eh), 0) : -1;
	if (fd >= 0)
		close(fd);
	if (got == (ssize_t)sizeof(eh) && memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
	    (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64))
		return fail("process %ld runs %s, which is not an x86_64 program: ctrack's shim cannot be "
		            "loaded into it",
		            (long)pid, exe);
	if (ct_elf_is_static(link))
		return fail("process %ld runs %s, which is statically linked: there is no dynamic loader to "
		            "load ctrack's shim",
		            (long)pid, exe);
	return 0;
}

/* The shim loaded and recording from the start (LD_PRELOAD, the environment the process began
 * with, which /proc keeps though the shim took its settings out of environ). */
static int check_preloaded(pid_t pid)
{
	static char env[1 << 16];
	ssize_t n = read_proc(pid, "environ", env, sizeof(env));
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(env + i) + 1)
		if (strncmp(env + i, "LD_PRELOAD=", 11) == 0 && strstr(env + i, "libctrack"))
			return fail("process %ld is traced by ctrack already (it was started under ctrack)",
			            (long)pid);
	return 0;
}

static int check_target(pid_t pid, char *exe, size_t len)
{
	if (pid <= 0 || (kill(pid, 0) < 0 && errno == ESRCH))
		return fail("no process with pid %ld", (long)pid);
	if (pid == getpid())
		return fail("ctrack cannot attach to itself");
	int rc = check_tracer(pid);
	if (!rc)
		rc = check_ptrace(pid);
	if (!rc)
		rc = check_program(pid, exe, len);
	if (!rc)
		rc = check_preloaded(pid);
	return rc;
}

/* The process has ended: gone, or a zombie its parent has not reaped yet. */
static int ended(pid_t pid)
{
	char buf[512];
	if (kill(pid, 0) < 0 && errno == ESRCH)
		return 1;
	const char *state = read_proc(pid, "stat", buf, sizeof(buf)) > 0 ? strrchr(buf, ')') : NULL;
	return state && (state[2] == 'Z' || state[2] == 'X');
}

/* ---- the socket ---- */

/* Binds the process's name: EADDRINUSE means another ctrack is attached to it. */
static int listen_for(pid_t pid, char *name, size_t len)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int n = snprintf(name, len, CT_ATTACH_NAME_PREFIX "%ld", (long)pid);
	memcpy(a.sun_path + 1, name, (size_t)n);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return fail("socket: %s", strerror(errno)), -1;
	if (bind(s, (struct sockaddr *)&a,
	         (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n)) < 0 ||
	    listen(s, 4) < 0) {
		int err = errno;
		close(s);
		if (err == EADDRINUSE)
			fail("process %ld is traced by ctrack already (another 'ctrack -p %ld' is attached)",
			     (long)pid, (long)pid);
		else
			fail("cannot listen for the shim: %s", strerror(err));
		return -1;
	}
	return s;
}

/* The shim's connection, if it is the process's (its credentials say so). */
static int accept_shim(int lsock, pid_t pid)
{
	int c = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0)
		return -1;
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 || cred.pid != pid) {
		close(c);
		return -1;
	}
	return c;
}

/* The hello with the trace's descriptor, and the settings when one is on (a plain attach sends what
 * a shim of an older build reads); then the shim's answer: 0, or a positive errno. */
static int hand_over(int c, int trace_fd, int depth, const struct ct_attach_settings *set)
{
	uint8_t hello[CT_ATTACH_HELLO_BYTES + CT_ATTACH_SETTINGS_BYTES], ans[4];
	int plain = !set->sample_rate && !set->snapshot_ms;
	size_t len = plain ? CT_ATTACH_HELLO_BYTES : sizeof(hello);
	ct_attach_put_u32(hello, plain ? CT_ATTACH_MAGIC : CT_ATTACH_MAGIC_SETTINGS);
	ct_attach_put_u32(hello + 4, (uint32_t)depth);
	ct_attach_settings_put(hello + CT_ATTACH_HELLO_BYTES, set);
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	memset(&u, 0, sizeof(u));
	struct iovec io = {hello, len};
	struct msghdr m = {
	    .msg_iov = &io, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &trace_fd, sizeof(int));
	if (sendmsg(c, &m, MSG_NOSIGNAL) != (ssize_t)len)
		return errno ? errno : EPROTO;
	struct timeval tv = {30, 0};
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (recv(c, ans, sizeof(ans), MSG_WAITALL) != (ssize_t)sizeof(ans))
		return EPROTO;
	return (int)ct_attach_get_u32(ans);
}

/* ---- gdb ---- */

struct gdb {
	pid_t pid;
	int out; /* its stdout and stderr */
	char text[GDB_OUTPUT];
	size_t len;
};

/* gdb's commands: libc's symbols only (the others would take seconds to load), a stop at an
 * allocator's entry (a marker first, so the launcher knows when to interrupt an idle process), the
 * shim loaded and its entry point called. unwindonsignal: a fault inside the call is undone and the
 * process goes on as it was. */
static int start_gdb(struct gdb *g, const char *gdb_path, pid_t pid, const char *shim, const char *name)
{
	char spid[32], dl[PATH_MAX + 96], call[160];
	snprintf(spid, sizeof(spid), "%ld", (long)pid);
	snprintf(dl, sizeof(dl), "print ((void *(*)(const char *, int))dlopen)(\"%s\", 2)", shim);
	snprintf(call, sizeof(call), "print ((long (*)(const char *))ctrack_attach_v1)(\"%s\")", name);
	char *const argv[] = {(char *)gdb_path,
	                      "-nx",
	                      "--batch",
	                      "-q",
	                      "-iex",
	                      "set auto-solib-add off",
	                      "-p",
	                      spid,
	                      "-ex",
	                      "set confirm off",
	                      "-ex",
	                      "set unwindonsignal on",
	                      "-ex",
	                      "sharedlibrary libc.so",
	                      "-ex",
	                      "break malloc",
	                      "-ex",
	                      "break calloc",
	                      "-ex",
	                      "break realloc",
	                      "-ex",
	                      "break free",
	                      "-ex",
	                      "echo ctrack-waiting\\n",
	                      "-ex",
	                      "continue",
	                      "-ex",
	                      "delete",
	                      "-ex",
	                      dl,
	                      "-ex",
	                      "sharedlibrary libctrack",
	                      "-ex",
	                      call,
	                      "-ex",
	                      "detach",
	                      NULL};
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	fflush(NULL);
	g->pid = fork();
	if (g->pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (g->pid == 0) {
		setpgid(0, 0); /* the terminal's Ctrl-C is ctrack's to handle */
		dup2(p[1], 1);
		dup2(p[1], 2);
		int null = open("/dev/null", O_RDONLY);
		dup2(null, 0);
		execv(gdb_path, argv);
		_exit(127);
	}
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	g->out = p[0];
	g->len = 0;
	return 0;
}

/* Reads what gdb wrote so far (its pipe does not block); 1 once it said it waits for a stop. */
static int gdb_read(struct gdb *g)
{
	ssize_t k;
	while (g->len + 1 < sizeof(g->text) &&
	       (k = read(g->out, g->text + g->len, sizeof(g->text) - 1 - g->len)) > 0)
		g->len += (size_t)k;
	g->text[g->len] = '\0';
	return strstr(g->text, "ctrack-waiting") != NULL;
}

/* What ctrack_attach_v1 returned, as gdb printed it (its last "$N = value" line), or 0. */
static long gdb_answer(const struct gdb *g)
{
	const char *last = NULL;
	for (const char *p = g->text; (p = strstr(p, "\n$")); p++)
		last = p;
	const char *eq = last ? strstr(last, " = ") : NULL;
	return eq && (eq[3] == '-' || (eq[3] >= '0' && eq[3] <= '9')) ? strtol(eq + 3, NULL, 10) : 0;
}

/* gdb's last line that says something went wrong, for the one-line reason. */
static const char *gdb_error(struct gdb *g)
{
	static const char *const signs[] = {"ptrace:", "Could not attach", "No symbol", "Error", "error",
	                                    "cannot",  "Cannot",           "not ",      NULL};
	char *last = NULL;
	for (char *line = strtok(g->text, "\n"); line; line = strtok(NULL, "\n"))
		for (int i = 0; signs[i]; i++)
			if (strstr(line, signs[i]))
				last = line;
	return last ? last : "gdb gave no reason";
}

/* ---- waiting ---- */

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
	stop_signal = sig;
}

static void catch_stops(void)
{
	struct sigaction sa = {.sa_handler = on_stop};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* Runs gdb until the shim connected and answered (0), or gdb ended or gave up (the exit status
 * after the reason). Then waits for gdb to detach, so that the process runs freely once this says
 * it is attached. */
static int inject(const struct ct_attach *a, const struct ct_attach_settings *set, int lsock, int trace_fd,
                  const char *name, int *conn)
{
	char gdb_path[PATH_MAX];
	if (ct_locate_program("gdb", gdb_path, sizeof(gdb_path)) < 0)
		return fail("attaching needs gdb, which is not installed (Debian: apt-get install gdb)");
	struct gdb g;
	if (start_gdb(&g, gdb_path, a->pid, a->shim, name) < 0)
		return fail("cannot run gdb: %s", strerror(errno));
	uint64_t start = now_ns(), waiting = 0;
	int answer = -1, interrupted = 0;
	*conn = -1;
	for (;;) {
		struct pollfd pf[2] = {{lsock, POLLIN, 0}, {g.out, POLLIN, 0}};
		poll(pf, 2, 50);
		if (gdb_read(&g) && !waiting)
			waiting = now_ns();
		if (pf[0].revents & POLLIN && *conn < 0 && (*conn = accept_shim(lsock, a->pid)) >= 0)
			answer = hand_over(*conn, trace_fd, a->depth, set);
		int status;
		if (waitpid(g.pid, &status, WNOHANG) == g.pid) {
			gdb_read(&g);
			g.pid = 0;
			break;
		}
		if (waiting && !interrupted && answer < 0 && now_ns() - waiting > IDLE_MS * 1000000ull) {
			kill(g.pid, SIGINT); /* no thread allocates: stop the process where it is */
			interrupted = 1;
		}
		if (now_ns() - start > INJECT_MS * 1000000ull) {
			kill(g.pid, SIGKILL);
			waitpid(g.pid, NULL, 0);
			kill(a->pid, SIGCONT); /* a tracer's death leaves its tracee stopped */
			close(g.out);
			return fail("gdb did not load the shim into process %ld within %d s", (long)a->pid,
			            INJECT_MS / 1000);
		}
	}
	close(g.out);
	if (answer == 0)
		return 0;
	if (answer == EPROTO && (set->sample_rate || set->snapshot_ms))
		return fail("the shim loaded in process %ld is of an older ctrack, which cannot %s while "
		            "attached: attach without it",
		            (long)a->pid, set->sample_rate ? "sample (--sample)" : "aggregate (--aggregate)");
	if (answer > 0)
		return fail("the shim could not start tracing in process %ld: %s", (long)a->pid,
		            answer == EALREADY ? "it is traced by ctrack already" : strerror(answer));
	if (ended(a->pid))
		return fail("process %ld exited while ctrack attached to it", (long)a->pid);
	if (gdb_answer(&g) == -EALREADY) /* never connected: it had a connection already */
		return fail("process %ld is traced by ctrack already", (long)a->pid);
	return fail("gdb could not load the shim into process %ld: %s", (long)a->pid, gdb_error(&g));
}

/* --live: the view of the trace while attached. Closing it (q, Ctrl-C, SIGTERM, SIGHUP) detaches,
 * as those signals do without it; the trace's end (the process's exit or exec) closes it. */
static void watch_live(const struct ct_attach *a, const char *name)
{
	struct ct_model m;
	struct ct_liveview_end end = {0};
	char err[512];
	const struct ct_liveview_opts o = {
	    .trace = name, .writer = (uint64_t)a->pid, .plain = stderr, .own_signals = 1};
	int rc = ct_model_init(&m) < 0 ? (snprintf(err, sizeof(err), "out of memory"), -1)
	                               : ct_liveview_run(&o, &m, &end, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "ctrack: --live: %s\n", err);
	if (rc < 0 || end.state == CT_FOLLOW_STOPPED)
		stop_signal = end.signal ? end.signal : SIGINT; /* the detach */
	ct_model_destroy(&m);
}

/* How the trace ended. */
enum ending { ENDED_DETACH, ENDED_EXIT, ENDED_EXEC };

/* Until Ctrl-C (SIGINT, SIGTERM, SIGHUP), the duration, or the end of the trace in the process (its
 * exit or exec); then the detach, and the end of the trace (the end of the connection). */
static enum ending wait_attached(const struct ct_attach *a, int conn)
{
	uint64_t deadline = a->duration > 0 ? now_ns() + (uint64_t)(a->duration * 1e9) : 0;
	int asked = 0;
	uint64_t asked_at = 0;
	for (;;) {
		struct pollfd pf = {conn, POLLIN, 0};
		int rc = poll(&pf, 1, 100);
		if (rc > 0) {
			char buf[64];
			ssize_t k = recv(conn, buf, sizeof(buf), MSG_DONTWAIT);
			if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR))
				break; /* the trace is complete: a detach, or the process's exit */
		}
		if (!asked && (stop_signal || (deadline && now_ns() >= deadline))) {
			send(conn, "D", 1, MSG_NOSIGNAL);
			asked = 1;
			asked_at = now_ns();
		}
		if (asked && now_ns() - asked_at > FINISH_MS * 1000000ull) {
			fail("warning: the shim did not end the trace within %d s of the detach",
			     FINISH_MS / 1000);
			break;
		}
	}
	if (asked && !ended(a->pid))
		return ENDED_DETACH;
	/* The shim ends the trace before the process ends (its last destructors, the kernel's exit),
	 * or at an exec (the connection is close-on-exec): give it 2 s to end. */
	for (int ms = 0; ms < 2000 && !ended(a->pid); ms += 10)
		poll(NULL, 0, 10);
	return ended(a->pid) ? ENDED_EXIT : ENDED_EXEC;
}

/* ---- the run ---- */

static int create_trace(const struct ct_attach *a, const char *exe, char *name, size_t len)
{
	const char *slash = strrchr(exe, '/');
	if (ct_tracefile_name(name, len, a->output, slash ? slash + 1 : exe, a->pid) < 0)
		return fail("trace name too long"), -1;
	int fd = ct_tracefile_create(name, a->force);
	if (fd >= 0)
		return fd;
	if (fd == -EEXIST && ct_tracefile_special(name))
		fail("cannot create '%s': it is %s; traces go to regular files only", name,
		     ct_tracefile_special(name));
	else
		fail("cannot create '%s': %s%s", name, strerror(-fd),
		     fd == -EEXIST ? " (use --force to overwrite)" : "");
	return -1;
}

static void close_run(const struct ct_attach *a, const char *name, int trace_fd, uint64_t start,
                      enum ending how)
{
	struct ct_family family;
	struct ct_spawn_result r = {
	    .pid = a->pid, .trace_fd = trace_fd, .start_ns = start, .end_ns = unix_ns()};
	snprintf(r.trace, sizeof(r.trace), "%s", name);
	ct_family_init(&family, name, 0);
	ct_family_collect(&family, &r, !a->quiet, 0);
	ct_closing_print(&family, a->quiet);
	if (!a->quiet)
		fprintf(stderr,
		        "ctrack: the trace covers the attached window only, from the attach to %s; blocks "
		        "allocated before the attach are not counted\n",
		        how == ENDED_EXIT   ? "the process's exit"
		        : how == ENDED_EXEC ? "the process's exec"
		                            : "the detach (the process runs on)");
	ct_family_release(&family);
}

/* The shim's settings: the options', and the seed of CTRACK_SAMPLE_SEED when sampling (a launch's
 * shim reads it from the environment; this one's environment is the process's). 0, or 1 after the
 * reason. */
static int settings(const struct ct_attach *a, struct ct_attach_settings *set)
{
	const char *seed = getenv(CT_ENV_SAMPLE_SEED);
	*set = (struct ct_attach_settings){.sample_rate = a->sample, .snapshot_ms = a->snapshot_ms};
	if (!a->sample || !seed || !*seed)
		return 0;
	if (ct_parse_seed(seed, &set->seed) < 0)
		return fail("%s: expected a whole number, got '%s'", CT_ENV_SAMPLE_SEED, seed);
	set->seeded = 1;
	return 0;
}

int ct_attach_run(const struct ct_attach *a)
{
	char exe[PATH_MAX], name[PATH_MAX], sock[CT_ATTACH_NAME_MAX];
	struct ct_attach_settings set;
	if (settings(a, &set) || check_target(a->pid, exe, sizeof(exe)))
		return 1;
	int lsock = listen_for(a->pid, sock, sizeof(sock));
	if (lsock < 0)
		return 1;
	int trace_fd = create_trace(a, exe, name, sizeof(name));
	if (trace_fd < 0) {
		close(lsock);
		return 1;
	}
	uint64_t start = unix_ns();
	int conn = -1;
	catch_stops();
	if (inject(a, &set, lsock, trace_fd, sock, &conn)) {
		if (conn >= 0)
			close(conn);
		close(lsock);
		unlink(name); /* nothing was traced: no trace left behind */
		close(trace_fd);
		return 1;
	}
	if (!a->quiet)
		fprintf(stderr, "ctrack: attached to process %ld (%s), tracing into %s; Ctrl-C detaches\n",
		        (long)a->pid, exe, name);
	if (a->live)
		watch_live(a, name);
	enum ending how = wait_attached(a, conn);
	close(conn);
	close(lsock); /* held until now: its name tells another ctrack that the process is traced */
	close_run(a, name, trace_fd, start, how);
	return 0;
}
