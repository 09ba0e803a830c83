/* SPDX-License-Identifier: MIT */
/* ctrack_check_leaks() while other threads sleep in system calls that a handled signal interrupts
 * (EINTR whatever SA_RESTART says): nanosleep, clock_nanosleep, poll, select, a read of a pipe
 * (SA_RESTART restarts that one), an epoll_wait without timeout and an epoll_wait, an epoll_pwait and
 * an epoll_pwait2 with one, and an epoll_wait and an epoll_pwait2 with one made through syscall() (EINTR
 * under any stop, even ptrace's, unless the stopper has the kernel restart them: the timed ones for what
 * is left of their timeout). A check must not wake them: each call returns what
 * it returns without ctrack, and a timed epoll wait after its timeout, not later (a restart with its
 * whole timeout again would end DELAY_MS late). main loses LOST blocks of LEAK_SIZE bytes, waits until
 * every sleeper is in its call (/proc/self/task/TID/syscall), then DELAY_MS more, checks CHECKS times,
 * writes a byte to each pipe once the sleeps are over, and prints one line:
 *   sleepers: nanosleep 0 clock_nanosleep 0 poll 0 select 0 read 1 epoll_wait 1 epoll_timed 0
 *   epoll_pwait 0 epoll_pwait2 0 syscall_epoll 0 syscall_pwait2 0 checks: 300 300 300 sigchld 0 wait -10
 * (a timed epoll wait that returned 0 outside [SLEEP_MS, SLEEP_MS + LATE_MS) milliseconds after it
 * began prints 100000 plus the milliseconds it took)
 * (-1 for each check without ctrack; a call that failed prints -EINTR's -4 and so on). The program has
 * no child: no SIGCHLD comes, and a wait finds none (-ECHILD), whatever a check did meanwhile. */
#include <errno.h>
#include <signal.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ctrack/ctrack.h"

#define CHECKS 3
#define LOST 3
#define LEAK_SIZE 100
#define SLEEP_MS 1500
#define DELAY_MS 600
#define LATE_MS 300

#include "lose.h"

enum {
	NANOSLEEP,
	CLOCK_NANOSLEEP,
	POLL,
	SELECT,
	READ,
	EPOLL,
	EPOLL_TIMED,
	EPOLL_PWAIT,
	EPOLL_PWAIT2,
	SYSCALL_EPOLL,
	SYSCALL_PWAIT2,
	SLEEPERS
};
static const char *const names[SLEEPERS] = {"nanosleep",    "clock_nanosleep", "poll",          "select",
                                            "read",         "epoll_wait",      "epoll_timed",   "epoll_pwait",
                                            "epoll_pwait2", "syscall_epoll",   "syscall_pwait2"};
/* The system call each makes: glibc's nanosleep is clock_nanosleep, its select pselect6 (waiting for
 * SYS_nanosleep and SYS_select, main waited its whole second every time). */
static const long calls[SLEEPERS] = {
    SYS_clock_nanosleep, SYS_clock_nanosleep, SYS_poll,        SYS_pselect6,     SYS_read,
    SYS_epoll_wait,      SYS_epoll_wait,      SYS_epoll_pwait, SYS_epoll_pwait2, SYS_epoll_wait,
    SYS_epoll_pwait2};

struct sleeper {
	pthread_t id;
	int kind;
	volatile pid_t tid;
	long result; /* the call's result, or minus its errno */
};

static int pipe_fd[2], epoll_pipe[2], epoll_fd, empty_fd; /* empty_fd: an epoll set of nothing */
static volatile sig_atomic_t sigchld;

static void on_sigchld(int sig)
{
	(void)sig;
	sigchld++;
}

static long as_result(long r)
{
	return r < 0 ? -errno : r;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* A timed epoll wait's result: its own, or 100000 + its milliseconds when it timed out too early or
 * too late. */
static long timed(long r, const struct timespec *t0)
{
	long ms = ms_since(t0);
	return r == 0 && (ms < SLEEP_MS || ms >= SLEEP_MS + LATE_MS) ? 100000 + ms : r;
}

static void *sleep_in_call(void *arg)
{
	struct sleeper *s = arg;
	struct timespec ts = {SLEEP_MS / 1000, SLEEP_MS % 1000 * 1000000L};
	struct timeval tv = {SLEEP_MS / 1000, SLEEP_MS % 1000 * 1000L};
	char c;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	s->tid = (pid_t)syscall(SYS_gettid);
	switch (s->kind) {
	case NANOSLEEP:
		s->result = as_result(nanosleep(&ts, NULL));
		break;
	case CLOCK_NANOSLEEP:
		s->result = -clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL); /* returns the error itself */
		break;
	case POLL:
		s->result = as_result(poll(NULL, 0, SLEEP_MS));
		break;
	case SELECT:
		s->result = as_result(select(0, NULL, NULL, NULL, &tv));
		break;
	case READ:
		s->result = as_result(read(pipe_fd[0], &c, 1));
		break;
	case EPOLL: {
		struct epoll_event ev;
		s->result = as_result(epoll_wait(epoll_fd, &ev, 1, -1));
		break;
	}
	case EPOLL_TIMED: {
		struct epoll_event ev;
		s->result = timed(as_result(epoll_wait(empty_fd, &ev, 1, SLEEP_MS)), &t0);
		break;
	}
	case EPOLL_PWAIT: {
		struct epoll_event ev;
		sigset_t none;
		sigemptyset(&none);
		s->result = timed(as_result(epoll_pwait(empty_fd, &ev, 1, SLEEP_MS, &none)), &t0);
		break;
	}
	case EPOLL_PWAIT2: {
		struct epoll_event ev;
		sigset_t none;
		sigemptyset(&none);
		s->result = timed(as_result(epoll_pwait2(empty_fd, &ev, 1, &ts, &none)), &t0);
		break;
	}
	case SYSCALL_EPOLL: { /* the same waits through syscall(), as a program without the wrappers makes
		                 them */
		struct epoll_event ev;
		s->result = timed(as_result(syscall(SYS_epoll_wait, empty_fd, &ev, 1, SLEEP_MS)), &t0);
		break;
	}
	case SYSCALL_PWAIT2: {
		struct epoll_event ev;
		s->result = timed(as_result(syscall(SYS_epoll_pwait2, empty_fd, &ev, 1, &ts, NULL, 8)), &t0);
		break;
	}
	}
	return NULL;
}

/* 1 once thread tid is inside system call nr (the first field of /proc/self/task/TID/syscall). */
static int in_call(pid_t tid, long nr)
{
	char path[64], buf[128];
	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	int ok = fgets(buf, sizeof(buf), f) && strtol(buf, NULL, 10) == nr;
	fclose(f);
	return ok;
}

int main(void)
{
	static struct sleeper s[SLEEPERS];
	struct epoll_event in = {.events = EPOLLIN};
	if (pipe(pipe_fd) != 0 || pipe(epoll_pipe) != 0 || (epoll_fd = epoll_create1(0)) < 0 ||
	    (empty_fd = epoll_create1(0)) < 0 ||
	    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, epoll_pipe[0], &in) != 0 ||
	    signal(SIGCHLD, on_sigchld) == SIG_ERR)
		return 1;
	for (int i = 0; i < LOST; i++)
		lose();
	for (int i = 0; i < SLEEPERS; i++) {
		s[i].kind = i;
		if (pthread_create(&s[i].id, NULL, sleep_in_call, &s[i]) != 0)
			return 1;
	}
	for (int i = 0, waited = 0; i < SLEEPERS && waited < 1000; waited++)
		if (s[i].tid && in_call(s[i].tid, calls[i]))
			i++;
		else
			usleep(1000);
	usleep(DELAY_MS * 1000);
	long long checks[CHECKS];
	for (int i = 0; i < CHECKS; i++)
		checks[i] = ctrack_check_leaks();
	for (int i = 0; i < READ; i++)
		pthread_join(s[i].id, NULL);
	if (write(pipe_fd[1], "x", 1) != 1 || write(epoll_pipe[1], "x", 1) != 1)
		return 1;
	for (int i = READ; i < SLEEPERS; i++)
		pthread_join(s[i].id, NULL);
	printf("sleepers:");
	for (int i = 0; i < SLEEPERS; i++)
		printf(" %s %ld", names[i], s[i].result);
	printf(" checks:");
	for (int i = 0; i < CHECKS; i++)
		printf(" %lld", checks[i]);
	int status;
	printf(" sigchld %d wait %ld\n", (int)sigchld, as_result(waitpid(-1, &status, WNOHANG)));
	return 0;
}
