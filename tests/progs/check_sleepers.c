/* SPDX-License-Identifier: MIT */
/* ctrack_check_leaks() while other threads sleep in system calls that a handled signal interrupts
 * (EINTR whatever SA_RESTART says): nanosleep, clock_nanosleep, poll, select, a read of a pipe
 * (SA_RESTART restarts that one) and an epoll_wait without timeout (EINTR under any stop, even
 * ptrace's, unless the stopper has the kernel restart it). A check must not wake them: each call returns what
 * it returns without ctrack. main loses LOST blocks of LEAK_SIZE bytes, waits until every sleeper is in its
 * call (/proc/self/task/TID/syscall), checks CHECKS times, writes a byte to each pipe once the sleeps
 * are over, and prints one line:
 *   sleepers: nanosleep 0 clock_nanosleep 0 poll 0 select 0 read 1 epoll_wait 1 checks: 300 300 300
 *   sigchld 0 wait -10
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

#include "lose.h"

enum { NANOSLEEP, CLOCK_NANOSLEEP, POLL, SELECT, READ, EPOLL, SLEEPERS };
static const char *const names[SLEEPERS] = {"nanosleep", "clock_nanosleep", "poll", "select",
                                            "read",      "epoll_wait"};
static const long calls[SLEEPERS] = {SYS_nanosleep, SYS_clock_nanosleep, SYS_poll, SYS_select,
                                     SYS_read,      SYS_epoll_wait};

struct sleeper {
	pthread_t id;
	int kind;
	volatile pid_t tid;
	long result; /* the call's result, or minus its errno */
};

static int pipe_fd[2], epoll_pipe[2], epoll_fd;
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

static void *sleep_in_call(void *arg)
{
	struct sleeper *s = arg;
	struct timespec ts = {SLEEP_MS / 1000, SLEEP_MS % 1000 * 1000000L};
	struct timeval tv = {SLEEP_MS / 1000, SLEEP_MS % 1000 * 1000L};
	char c;
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
	long long checks[CHECKS];
	for (int i = 0; i < CHECKS; i++)
		checks[i] = ctrack_check_leaks();
	for (int i = 0; i < READ; i++)
		pthread_join(s[i].id, NULL);
	if (write(pipe_fd[1], "x", 1) != 1 || write(epoll_pipe[1], "x", 1) != 1)
		return 1;
	pthread_join(s[READ].id, NULL);
	pthread_join(s[EPOLL].id, NULL);
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
