/* SPDX-License-Identifier: MIT */
/* Processes that make --follow-children and --check work for a living, one mode per argv[1]:
 *   leaky-child [S]    the parent frees all it allocates (malloc(1000), freed); its one forked
 *                      child loses 13,370 bytes (malloc(13370), its only pointer overwritten with
 *                      NULL: definitely lost) and exits 0. The parent prints "child=PID" and exits
 *                      S (default 0).
 *   leak BYTES MS      loses BYTES bytes (definitely lost; none when 0), then sleeps MS ms.
 *   daemon MS          the parent forks a child that forks the daemon and exits at once (the
 *                      daemon, in a session of its own, sleeps MS ms, then exits); the parent
 *                      prints "daemon=PID" and exits 0 while the daemon still runs.
 *   brood N MS         sleeps MS ms, forks N children one after the other (each: malloc(100)
 *                      lost, exit 0), sleeps MS ms again. Prints "child=PID" per child.
 *   reexec K           execs itself as "reexec K-1" until K is 0 (one process, K + 1 images);
 *                      each image allocates nothing of its own.
 *   exec PROGRAM ARGS  becomes PROGRAM (execv), allocating nothing before.
 *   no-fds             the parent takes every descriptor its limit leaves (RLIMIT_NOFILE lowered
 *                      to 64), forks a child (malloc(500), freed, exit 0) that so has none left,
 *                      then gives them back. Prints "child=PID".
 * Exit 0, or 1 when something fails. No stdio (it allocates). */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static int say(const char *what, long v)
{
	char buf[64], digits[24];
	size_t n = strlen(what), k = 0;
	memcpy(buf, what, n);
	buf[n++] = '=';
	do
		digits[k++] = (char)('0' + v % 10);
	while ((v /= 10) > 0);
	while (k)
		buf[n++] = digits[--k];
	buf[n++] = '\n';
	return write(1, buf, n) == (ssize_t)n ? 0 : 1;
}

static void sleep_ms(long ms)
{
	struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
}

/* Its only pointer overwritten: definitely lost. */
NOINLINE static int lose(size_t n)
{
	void *volatile p = malloc(n);
	int ok = p != NULL;
	p = NULL;
	return ok;
}

static int wait_ok(pid_t pid)
{
	int status;
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int leaky_child(int status)
{
	void *p = malloc(1000);
	free(p);
	pid_t pid = fork();
	if (pid == 0)
		_exit(lose(13370) ? 0 : 1);
	if (pid < 0 || !p || !wait_ok(pid))
		return 1;
	return say("child", pid) ? 1 : status;
}

static int leak(long bytes, long ms)
{
	if (bytes > 0 && !lose((size_t)bytes))
		return 1;
	sleep_ms(ms);
	return 0;
}

static int daemon_mode(long ms)
{
	int fds[2];
	if (pipe(fds) < 0)
		return 1;
	pid_t mid = fork();
	if (mid == 0) {
		pid_t d = fork();
		if (d == 0) {
			close(fds[0]);
			close(fds[1]);
			setsid();
			sleep_ms(ms);
			_exit(0);
		}
		_exit(d > 0 && write(fds[1], &d, sizeof(d)) == sizeof(d) ? 0 : 1);
	}
	close(fds[1]);
	pid_t d = 0;
	if (mid < 0 || !wait_ok(mid) || read(fds[0], &d, sizeof(d)) != sizeof(d))
		return 1;
	return say("daemon", d);
}

static int brood(long n, long ms)
{
	sleep_ms(ms);
	for (long k = 0; k < n; k++) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(lose(100) ? 0 : 1);
		if (pid < 0 || !wait_ok(pid) || say("child", pid))
			return 1;
	}
	sleep_ms(ms);
	return 0;
}

static int reexec(char **argv, long k)
{
	if (k <= 0)
		return 0;
	char next[24];
	size_t n = 0;
	char digits[24];
	k--;
	do
		digits[n++] = (char)('0' + k % 10);
	while ((k /= 10) > 0);
	for (size_t i = 0; i < n; i++)
		next[i] = digits[n - 1 - i];
	next[n] = 0;
	char *args[] = {argv[0], "reexec", next, NULL};
	execv("/proc/self/exe", args);
	return 1;
}

static int no_fds(void)
{
	struct rlimit old, low;
	int fds[64], n = 0;
	if (getrlimit(RLIMIT_NOFILE, &old) < 0)
		return 1;
	low = old;
	low.rlim_cur = 64;
	if (setrlimit(RLIMIT_NOFILE, &low) < 0)
		return 1;
	while (n < 64 && (fds[n] = dup(0)) >= 0)
		n++;
	pid_t pid = fork();
	if (pid == 0) {
		void *p = malloc(500);
		free(p);
		_exit(p ? 0 : 1);
	}
	while (n > 0)
		close(fds[--n]);
	setrlimit(RLIMIT_NOFILE, &old);
	if (pid < 0 || !wait_ok(pid))
		return 1;
	return say("child", pid);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long a = argc > 2 ? atol(argv[2]) : 0, b = argc > 3 ? atol(argv[3]) : 0;
	if (!strcmp(mode, "leaky-child"))
		return leaky_child((int)a);
	if (!strcmp(mode, "leak"))
		return leak(a, b);
	if (!strcmp(mode, "daemon"))
		return daemon_mode(a);
	if (!strcmp(mode, "brood"))
		return brood(a, b);
	if (!strcmp(mode, "reexec"))
		return reexec(argv, a);
	if (!strcmp(mode, "no-fds"))
		return no_fds();
	if (!strcmp(mode, "exec") && argc > 2) {
		execv(argv[2], argv + 2);
		return 1;
	}
	return 1;
}
