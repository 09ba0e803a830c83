/* SPDX-License-Identifier: MIT */
/* The System V signal calls, which glibc builds on its internal sigaction (not the exported one a
 * preloaded library can interpose): sigset, sigignore and __sysv_signal (what `signal` is in a
 * program built with -std=c99). argv[1] names a mode; each writes one line per step (what a call
 * returned, as SIG_DFL, SIG_IGN, SIG_HOLD, SIG_ERR, on_segv, on_usr1, on_alrm or other; what sigaction then
 * says; whether a signal is blocked), and keeps kept_blocks, 1000 x malloc(100) (1000 allocations,
 * 100000 bytes, all live) just before its end:
 *   handler: sigset(SIGSEGV, on_segv), then a store to NULL: on_segv writes "caught SIGSEGV" and
 *     _exits 42;
 *   default: sigset(SIGSEGV, SIG_DFL), then a store to NULL: dies of SIGSEGV;
 *   restore: sigset(SIGSEGV, on_segv), then sigset(SIGSEGV, what that returned): dies of SIGSEGV;
 *   sysv: __sysv_signal(SIGSEGV, SIG_DFL), then a store to NULL: dies of SIGSEGV;
 *   hold: sigset(SIGTERM, SIG_HOLD) twice, raise(SIGTERM) (held), then sigset(SIGTERM, SIG_DFL),
 *     which returns SIG_HOLD and unblocks it: dies of SIGTERM;
 *   release: sigset(SIGUSR1, SIG_HOLD), raise(SIGUSR1) (held), sigset(SIGUSR1, on_usr1): on_usr1
 *     writes "caught SIGUSR1" as the signal is unblocked; exits 0;
 *   ignore: sigignore(SIGINT), raise(SIGINT) (ignored), signal(SIGINT, SIG_DFL), raise(SIGINT):
 *     dies of SIGINT;
 *   raw: __sigaction, glibc's other name for sigaction (a way past any hook), sets on_segv; then
 *     signal(SIGSEGV, SIG_DFL) and a store to NULL: dies of SIGSEGV;
 *   interrupt: siginterrupt(SIGALRM, 1), then signal(SIGALRM, on_alrm) must leave out SA_RESTART: a
 *     read of an empty pipe, with SIGALRM every 20 ms, fails with EINTR at the first ("read: EINTR
 *     after 1 alarm"); were it restarted, on_alrm writes a byte into the pipe at the third, and the
 *     read returns it ("read: a byte after 3 alarms"); exits 0.
 * Exit 2 on a bad argument or a failed call. No stdio. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* sigset, sigignore: glibc 2.32 on */

#define KEPT 1000

extern __sighandler_t __sysv_signal(int sig, __sighandler_t handler);
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);

static void *volatile kept[KEPT];
static int *volatile null_pointer;
static volatile sig_atomic_t alarms;
static int pipe_fds[2];

static void say(const char *a, const char *b)
{
	char buf[128];
	size_t n = strlen(a), m = strlen(b);
	memcpy(buf, a, n);
	memcpy(buf + n, b, m);
	buf[n + m] = '\n';
	if (write(1, buf, n + m + 1) < 0)
		_exit(2);
}

static void on_segv(int sig)
{
	(void)sig;
	say("caught ", "SIGSEGV");
	_exit(42);
}

static void on_usr1(int sig)
{
	(void)sig;
	say("caught ", "SIGUSR1");
}

static void on_alrm(int sig)
{
	(void)sig;
	if (++alarms == 3 && write(pipe_fds[1], "x", 1) < 0)
		_exit(2);
}

/* The interrupt mode's read, with SIGALRM every 20 ms. */
static void read_with_alarms(void)
{
	struct itimerval every = {{0, 20000}, {0, 20000}}, off = {{0, 0}, {0, 0}};
	char c;
	if (pipe(pipe_fds) < 0 || setitimer(ITIMER_REAL, &every, NULL) < 0)
		_exit(2);
	ssize_t n = read(pipe_fds[0], &c, 1);
	int e = errno;
	setitimer(ITIMER_REAL, &off, NULL);
	if (n < 0 && e == EINTR && alarms == 1)
		say("read: ", "EINTR after 1 alarm");
	else if (n == 1 && alarms == 3)
		say("read: ", "a byte after 3 alarms");
	else
		say("read: ", "something else");
}

static const char *name(__sighandler_t h)
{
	return h == SIG_DFL    ? "SIG_DFL"
	       : h == SIG_IGN  ? "SIG_IGN"
	       : h == SIG_HOLD ? "SIG_HOLD"
	       : h == SIG_ERR  ? "SIG_ERR"
	       : h == on_segv  ? "on_segv"
	       : h == on_usr1  ? "on_usr1"
	       : h == on_alrm  ? "on_alrm"
	                       : "other";
}

/* The disposition sigaction reports, and whether the signal is blocked. */
static void show(const char *what, int sig)
{
	struct sigaction sa;
	sigset_t mask;
	if (sigaction(sig, NULL, &sa) < 0 || sigprocmask(SIG_BLOCK, NULL, &mask) < 0)
		_exit(2);
	say(what, name(sa.sa_handler));
	say(what, sigismember(&mask, sig) ? "blocked" : "unblocked");
}

static void returned(const char *call, __sighandler_t h)
{
	say(call, name(h));
	if (h == SIG_ERR)
		_exit(2);
}

__attribute__((noinline)) static void kept_blocks(void)
{
	for (int i = 0; i < KEPT; i++)
		if (!(kept[i] = malloc(100)))
			_exit(2);
}

/* What call returned, what sigaction says of SIGSEGV now, then the blocks and a store to NULL. */
static void then_crash(const char *call, __sighandler_t returned_handler)
{
	returned(call, returned_handler);
	show("SEGV: ", SIGSEGV);
	kept_blocks();
	*null_pointer = 1;
}

static void mode_handler(void)
{
	then_crash("sigset(SEGV, on_segv) -> ", sigset(SIGSEGV, on_segv));
}

static void mode_default(void)
{
	then_crash("sigset(SEGV, SIG_DFL) -> ", sigset(SIGSEGV, SIG_DFL));
}

static void mode_restore(void)
{
	__sighandler_t old = sigset(SIGSEGV, on_segv);
	returned("sigset(SEGV, on_segv) -> ", old);
	then_crash("sigset(SEGV, old) -> ", sigset(SIGSEGV, old));
}

static void mode_sysv(void)
{
	then_crash("__sysv_signal(SEGV, SIG_DFL) -> ", __sysv_signal(SIGSEGV, SIG_DFL));
}

static void mode_raw(void)
{
	struct sigaction sa = {.sa_handler = on_segv};
	sigemptyset(&sa.sa_mask);
	if (__sigaction(SIGSEGV, &sa, NULL) < 0)
		_exit(2);
	show("SEGV: ", SIGSEGV);
	then_crash("signal(SEGV, SIG_DFL) -> ", signal(SIGSEGV, SIG_DFL));
}

static void mode_hold(void)
{
	returned("sigset(TERM, SIG_HOLD) -> ", sigset(SIGTERM, SIG_HOLD));
	returned("sigset(TERM, SIG_HOLD) again -> ", sigset(SIGTERM, SIG_HOLD));
	show("TERM: ", SIGTERM);
	raise(SIGTERM);
	say("TERM raised: ", "held");
	kept_blocks();
	returned("sigset(TERM, SIG_DFL) -> ", sigset(SIGTERM, SIG_DFL));
}

static void mode_release(void)
{
	returned("sigset(USR1, SIG_HOLD) -> ", sigset(SIGUSR1, SIG_HOLD));
	raise(SIGUSR1);
	say("USR1 raised: ", "held");
	returned("sigset(USR1, on_usr1) -> ", sigset(SIGUSR1, on_usr1));
	show("USR1: ", SIGUSR1);
	kept_blocks();
	_exit(0);
}

static void mode_ignore(void)
{
	if (sigignore(SIGINT) < 0)
		_exit(2);
	show("INT: ", SIGINT);
	raise(SIGINT);
	say("INT raised: ", "ignored");
	returned("signal(INT, SIG_DFL) -> ", signal(SIGINT, SIG_DFL));
	show("INT: ", SIGINT);
	kept_blocks();
	raise(SIGINT);
}

static void mode_interrupt(void)
{
	struct sigaction sa;
	if (siginterrupt(SIGALRM, 1) < 0)
		_exit(2);
	returned("signal(ALRM, on_alrm) -> ", signal(SIGALRM, on_alrm));
	if (sigaction(SIGALRM, NULL, &sa) < 0)
		_exit(2);
	say("ALRM: ", sa.sa_flags & SA_RESTART ? "SA_RESTART" : "no SA_RESTART");
	kept_blocks();
	read_with_alarms();
	_exit(0);
}

static const struct {
	const char *name;
	void (*run)(void);
} modes[] = {{"handler", mode_handler}, {"default", mode_default}, {"restore", mode_restore},
             {"sysv", mode_sysv},       {"raw", mode_raw},         {"hold", mode_hold},
             {"release", mode_release}, {"ignore", mode_ignore},   {"interrupt", mode_interrupt}};

int main(int argc, char **argv)
{
	for (size_t i = 0; argc > 1 && i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(argv[1], modes[i].name))
			modes[i].run();
	return 2;
}
