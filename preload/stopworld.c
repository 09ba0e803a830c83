/* SPDX-License-Identifier: MIT */
/* Stopping the program's other threads for a leak scan (stopworld.h). First choice, LeakSanitizer's
 * way: a task of the shim's own (a clone sharing the program's memory, not a thread of it) seizes
 * each thread with ptrace, interrupts it and reads its registers; the threads stand still until the
 * task lets them go. A ptrace stop is no signal to the program: a system call it interrupts is
 * restarted (a sleep goes on with what is left), where a handled signal makes poll, select, pause
 * and the sleeps return EINTR whatever SA_RESTART says. Where the kernel refuses (a program traced
 * already, one that is not dumpable, Yama's ptrace_scope for a user without CAP_SYS_PTRACE, a
 * seccomp filter, valgrind, which runs no such clone), every thread gets a signal instead, whose
 * handler saves its registers and waits on a futex. No malloc, no stdio, errno untouched. */
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "arena.h"
#include "epollwait.h"
#include "procmaps.h"
#include "shim.h"
#include "stopworld.h"

_Static_assert(sizeof(struct user_regs_struct) == CT_STOP_REGS * sizeof(uintptr_t), "ptrace's registers");
_Static_assert(NGREG <= CT_STOP_REGS, "a signal's registers");

#define STOP_WAIT_MS 500
#define TRACER_STACK (64 * 1024)

/* How the last ct_world_stop stopped the threads. */
enum ct_stop_how { CT_STOP_NONE, CT_STOP_PTRACE, CT_STOP_SIGNAL };

static struct {
	struct ct_stopped *v; /* CT_STOP_MAX, from the arena */
	size_t filled;        /* by the last stop, as it returned */
	enum ct_stop_how how;
	int no_ptrace; /* CTRACK_SCAN_STOP=signal */
} world;

/* ---- by ptrace ----
 * The tracer shares the program's memory, files and the writer's thread pointer (no TLS of its
 * own: it makes its system calls itself, so not even errno is written), and starts with every
 * signal blocked, so no handler of the program's ever runs on it. Its exit signal is none: no
 * SIGCHLD reaches the program, and only a wait with __WALL sees it (the writer's, which reaps it). */

enum { PENDING, HELD, GONE };

/* The writer hands the tracer its threads in batches (a thread a running one created after the list
 * was read comes in the next: ct_world_more). */
enum { STOPPING, STOPPED, RELEASE, MORE };

struct tracer {
	const pid_t *tids; /* the batch */
	size_t n;
	struct ct_stopped *v; /* every batch's stopped threads */
	size_t filled;
	int refused;       /* the errno of a seize the kernel refused: the stop falls back to the signal */
	_Atomic int phase; /* STOPPING a batch; STOPPED (or refused): the writer lists again or scans;
	                      MORE: a batch to stop; RELEASE: let them all go */
	uint8_t state[CT_STOP_MAX]; /* the batch's */
	pid_t program;              /* the program's pid: the tracer's parent while it lives */
	pid_t held[CT_STOP_MAX];    /* the thread of each of v */
	int sig[CT_STOP_MAX];       /* the signal it was stopped delivering: handed back at the detach */
};

static struct tracer *tracer;
static char *tracer_stack;
static pid_t tracer_pid;

/* The tracer's system calls, and the writer's here: the result, or minus the error. Never errno,
 * which is the writer's (the tracer has its thread pointer), and the writer reads it meanwhile. */
static long sys_call(long nr, long a, long b, long c, long d)
{
	long r;
	register long r10 __asm__("r10") = d;
	__asm__ volatile("syscall"
	                 : "=a"(r)
	                 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
	                 : "rcx", "r11", "memory");
	return r;
}

static long sys_ptrace(long request, pid_t tid, void *addr, void *data)
{
	return sys_call(SYS_ptrace, request, tid, (long)addr, (long)data);
}

static long wait_task(pid_t tid, int *status, int options)
{
	return sys_call(SYS_wait4, tid, (long)status, options, 0);
}

static void sleep_us(long us)
{
	struct timespec ts = {0, us * 1000};
	sys_call(SYS_nanosleep, (long)&ts, 0, 0, 0);
}

/* Waits while *word is seen, us microseconds at most (0: no limit). */
static void futex_wait(_Atomic int *word, int seen, long us)
{
	struct timespec ts = {0, us * 1000};
	sys_call(SYS_futex, (long)word, FUTEX_WAIT_PRIVATE, seen, us ? (long)&ts : 0);
}

static void futex_wake(_Atomic int *word)
{
	sys_call(SYS_futex, (long)word, FUTEX_WAKE_PRIVATE, INT32_MAX, 0);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	sys_call(SYS_clock_gettime, CLOCK_MONOTONIC, (long)&ts, 0, 0);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* epoll_wait is the one sleep a ptrace stop ends with EINTR (it returns -EINTR where poll returns
 * the kernel's "restart unless a handler runs"). When the stop found a thread in an epoll wait
 * without end, the error becomes that one: the kernel restarts the call as the thread goes on,
 * or, should a signal's handler run first, returns EINTR as it would have. A wait with a timeout
 * that the hooks noted is restarted with what is left of it (epollwait.h); any other is left alone:
 * a restart would wait its whole timeout again. */
static void restart_epoll(pid_t tid, struct user_regs_struct *regs)
{
	long nr = (long)regs->orig_rax, timeout = (long)(int)regs->r10;
	int endless = (nr == SYS_epoll_wait || nr == SYS_epoll_pwait) ? timeout < 0
	              : nr == SYS_epoll_pwait2                        ? regs->r10 == 0 /* no timespec */
	                                                              : 0;
	struct user_regs_struct again = *regs;
	if (endless && (long)regs->rax == -EINTR)
		again.rax = (unsigned long long)-CT_ERESTARTNOHAND;
	else if (!ct_epoll_resume(&again, now_ns()))
		return;
	sys_ptrace(PTRACE_SETREGS, tid, NULL, &again);
}

/* Entry k stopped with wait status st: its registers are kept, or it is gone. */
static void tracer_stopped(struct tracer *t, size_t k, int st)
{
	struct user_regs_struct regs;
	pid_t tid = t->tids[k];
	t->state[k] = GONE; /* stopped past CT_STOP_MAX: resumed as the tracer ends, and not scanned */
	if (!WIFSTOPPED(st) || t->filled == CT_STOP_MAX || sys_ptrace(PTRACE_GETREGS, tid, NULL, &regs) < 0)
		return;
	t->state[k] = HELD;
	/* An interrupt (or a group stop) stops with PTRACE_EVENT_STOP; any other stop is a signal on
	 * its way to the thread, which the detach delivers. */
	t->sig[t->filled] = (st >> 16) == PTRACE_EVENT_STOP ? 0 : WSTOPSIG(st);
	if ((st >> 16) == PTRACE_EVENT_STOP)
		restart_epoll(tid, &regs);
	t->held[t->filled] = tid;
	struct ct_stopped *s = &t->v[t->filled];
	s->sp = regs.rsp;
	s->tp = regs.fs_base;
	memcpy(s->regs, &regs, sizeof(regs));
	t->filled++;
}

/* Waits (up to STOP_WAIT_MS) for every seized thread's stop. */
static void tracer_collect(struct tracer *t)
{
	size_t waiting = 0;
	for (size_t k = 0; k < t->n; k++)
		waiting += t->state[k] == PENDING;
	for (long us = 0; waiting && us < STOP_WAIT_MS * 1000L; us += 100) {
		for (size_t k = 0; k < t->n; k++) {
			int st = 0;
			if (t->state[k] != PENDING)
				continue;
			long r = wait_task(t->tids[k], &st, __WALL | WNOHANG);
			if (r == 0)
				continue;
			if (r < 0)
				t->state[k] = GONE;
			else
				tracer_stopped(t, k, st);
			waiting--;
		}
		if (waiting)
			sleep_us(100);
	}
}

/* Seizes and interrupts the batch's threads and waits for their stops. */
static void tracer_batch(struct tracer *t)
{
	for (size_t k = 0; k < t->n && !t->refused; k++) {
		long r = sys_ptrace(PTRACE_SEIZE, t->tids[k], NULL, NULL);
		if (r < 0) {
			if (r != -ESRCH) /* ESRCH: it ended */
				t->refused = (int)-r;
			continue;
		}
		t->state[k] = PENDING;
		sys_ptrace(PTRACE_INTERRUPT, t->tids[k], NULL, NULL);
	}
	if (!t->refused)
		tracer_collect(t);
}

/* The tracer dies with the writer, its parent: when the program dies in a scan (a crash of any of
 * its threads, a SIGKILL), a tracer waiting on for the writer's word held a traced thread, which
 * kept the dead program from being reaped, and the program's parent waited forever. */
static int tracer_orphaned(const struct tracer *t)
{
	if (sys_call(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0) < 0)
		return 1;
	return sys_call(SYS_getppid, 0, 0, 0, 0) != t->program; /* it died before the prctl */
}

static int tracer_main(void *arg)
{
	struct tracer *t = arg;
	if (tracer_orphaned(t))
		return 0;
	for (int phase = MORE; phase == MORE;) {
		tracer_batch(t);
		atomic_store(&t->phase, STOPPED);
		futex_wake(&t->phase);
		while ((phase = atomic_load(&t->phase)) == STOPPED)
			futex_wait(&t->phase, STOPPED, 100000);
	}
	for (size_t i = 0; i < t->filled; i++)
		sys_ptrace(PTRACE_DETACH, t->held[i], NULL, (void *)(uintptr_t)t->sig[i]);
	return 0; /* the rest (seized, never stopped) the kernel detaches as this task ends */
}

/* 1 when a seccomp filter guards the program's system calls: a ptrace or a clone it does not expect
 * could kill it. */
static int under_seccomp(void)
{
	char buf[4096];
	if (ct_proc_read("/proc/self/status", buf, sizeof(buf), 1) < 0)
		return 1;
	const char *s = strstr(buf, "\nSeccomp:");
	return !s || strtol(s + 9, NULL, 10) != 0;
}

/* Reaps the tracer (it ends once let go). */
static void tracer_end(void)
{
	atomic_store(&tracer->phase, RELEASE);
	futex_wake(&tracer->phase);
	int st;
	while (wait_task(tracer_pid, &st, __WALL) == -EINTR)
		;
	tracer_pid = 0;
}

/* Waits until the tracer stopped its batch: 0, or -1 when it died (a SIGKILL: what it held, the
 * kernel let go). */
static int tracer_wait_batch(void)
{
	struct tracer *t = tracer;
	while (atomic_load(&t->phase) != STOPPED) {
		futex_wait(&t->phase, atomic_load(&t->phase), 10000);
		int st;
		if (atomic_load(&t->phase) != STOPPED && wait_task(tracer_pid, &st, __WALL | WNOHANG) != 0) {
			tracer_pid = 0;
			return -1;
		}
	}
	return 0;
}

static void tracer_hand(struct tracer *t, const pid_t *tids, size_t n)
{
	t->tids = tids;
	t->n = n;
	memset(t->state, GONE, n); /* what a refusal leaves unseized stays GONE */
}

/* The threads stopped by ptrace: how many (world.v), or -1 when the kernel would not have it. */
static long stop_by_ptrace(const pid_t *tids, size_t n)
{
	if (world.no_ptrace || under_seccomp())
		return -1;
	if (!tracer)
		tracer = ct_arena_map(sizeof(*tracer));
	if (!tracer_stack)
		tracer_stack = ct_arena_map(TRACER_STACK);
	if (!tracer || !tracer_stack)
		return -1;
	struct tracer *t = tracer;
	tracer_hand(t, tids, n);
	t->v = world.v;
	t->filled = 0;
	t->refused = 0;
	t->program = getpid();
	atomic_store(&t->phase, STOPPING);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	tracer_pid = clone(tracer_main, tracer_stack + TRACER_STACK,
	                   CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_UNTRACED, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (tracer_pid <= 0) {
		tracer_pid = 0;
		return -1;
	}
	if (tracer_wait_batch() < 0)
		return -1;
	if (t->refused) {
		tracer_end();
		return -1;
	}
	return (long)t->filled;
}

/* A later batch for the tracer that holds the first: how many it holds now. A refusal now (a
 * thread ptrace may not stop, though its siblings could be) leaves that thread running: the scan
 * counts it as not scanned. */
static size_t more_by_ptrace(const pid_t *tids, size_t n)
{
	struct tracer *t = tracer;
	if (!tracer_pid)
		return world.filled;
	tracer_hand(t, tids, n);
	t->refused = 0;
	atomic_store(&t->phase, MORE);
	futex_wake(&t->phase);
	if (tracer_wait_batch() < 0)
		world.how = CT_STOP_NONE; /* nothing held any more */
	return t->filled;
}

/* ---- by a signal ----
 * Each thread gets a signal whose handler stores its registers, stack pointer and thread pointer in
 * a slot and waits on a futex until the scan is over: memory they hold cannot change meanwhile.
 * The signal is the first of a few rarely used ones whose disposition is the default. */

static struct {
	_Atomic size_t claimed, filled, inside;
	_Atomic int release;
	int sig;
	size_t signalled;
	size_t refusing; /* signalled threads that block the signal: they never answer */
	struct sigaction old;
} stw;

static void stop_handler(int sig, siginfo_t *info, void *ucontext)
{
	int e = errno;
	(void)sig, (void)info;
	atomic_fetch_add(&stw.inside, 1);
	size_t i = atomic_fetch_add(&stw.claimed, 1);
	if (!atomic_load(&stw.release) && i < CT_STOP_MAX) {
		const ucontext_t *uc = ucontext;
		struct ct_stopped *t = &world.v[i];
		memcpy(t->regs, uc->uc_mcontext.gregs, sizeof(uc->uc_mcontext.gregs));
		memset(t->regs + NGREG, 0,
		       sizeof(t->regs) - sizeof(uc->uc_mcontext.gregs)); /* a ptrace stop's */
		t->sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
		t->tp = (uintptr_t)__builtin_thread_pointer();
		atomic_fetch_add(&stw.filled, 1);
		while (!atomic_load(&stw.release))
			futex_wait(&stw.release, 0, 0);
	}
	atomic_fetch_sub(&stw.inside, 1);
	errno = e;
}

/* 1 when sig's handler is stop_handler: a stop before this one left it, for a thread that never
 * answered (resume_signalled). */
static int still_ours(int sig)
{
	struct sigaction now;
	return sig && sigaction(sig, NULL, &now) == 0 && (now.sa_flags & SA_SIGINFO) &&
	       now.sa_sigaction == stop_handler;
}

/* The signal of this stop: the last one's, when its handler is still installed (a thread that
 * blocked it, one exiting, say, kept it there: taking the next candidate each time, the fifth stop
 * found none, stopped nothing, and the scan read memory running threads unmapped); else the first
 * candidate whose disposition is the default. stw.old keeps the disposition it had before. */
static int pick_signal(void)
{
	const int candidates[] = {SIGRTMAX, SIGRTMAX - 1, SIGRTMAX - 2, SIGPWR};
	if (still_ours(stw.sig))
		return stw.sig;
	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++) {
		struct sigaction now;
		if (sigaction(candidates[i], NULL, &now) == 0 && !(now.sa_flags & SA_SIGINFO) &&
		    now.sa_handler == SIG_DFL) {
			stw.old = now;
			return candidates[i];
		}
	}
	return 0;
}

/* A thread that has not answered by then is looked at: one that blocks the signal never will. */
#define REFUSERS_AFTER_MS 20

/* The mask of a /proc status line ("SigBlk:", "SigPnd:") in text, 0 when it has none. */
static unsigned long long status_mask(const char *text, const char *field)
{
	const char *line = strstr(text, field);
	return line ? strtoull(line + strlen(field), NULL, 16) : 0;
}

/* Threads of tids that hold sig pending and blocked (/proc/self/task/TID/status): they would not
 * answer before they unblock it, if ever (a thread of the program's that blocks every signal). A
 * thread in the stop's handler blocks it too, but holds none pending. */
static size_t refusing(const pid_t *tids, size_t n, int sig)
{
	size_t count = 0;
	for (size_t k = 0; k < n; k++) {
		char path[64], buf[2048];
		ct_proc_task_path(path, sizeof(path), tids[k], "status");
		if (ct_proc_read(path, buf, sizeof(buf), 1) <= 0)
			continue;
		unsigned long long bit = 1ull << (sig - 1);
		count += (status_mask(buf, "\nSigBlk:") & status_mask(buf, "\nSigPnd:") & bit) != 0;
	}
	return count;
}

/* Signals every thread of tids and waits (up to STOP_WAIT_MS) until every thread signalled so far
 * stands still, but those that block the signal (each stop waited STOP_WAIT_MS for them); returns
 * how many stand still. */
static size_t signal_batch(const pid_t *tids, size_t n)
{
	for (size_t k = 0; stw.sig && k < n; k++)
		stw.signalled += sys_call(SYS_tgkill, getpid(), tids[k], stw.sig, 0) == 0;
	for (int ms = 0;
	     stw.signalled && atomic_load(&stw.filled) + stw.refusing < stw.signalled && ms < STOP_WAIT_MS;
	     ms++) {
		if (ms == REFUSERS_AFTER_MS)
			stw.refusing += refusing(tids, n, stw.sig);
		sleep_us(1000);
	}
	size_t filled = atomic_load(&stw.filled);
	return filled < CT_STOP_MAX ? filled : CT_STOP_MAX;
}

static size_t stop_by_signal(const pid_t *tids, size_t n)
{
	stw.signalled = stw.refusing = 0;
	if (!(stw.sig = pick_signal()))
		return 0;                /* every candidate is the program's */
	if (!atomic_load(&stw.inside)) { /* a scan before this one (a check, a detach) left its counts */
		atomic_store(&stw.claimed, 0);
		atomic_store(&stw.filled, 0);
		atomic_store(&stw.release, 0);
	}
	struct sigaction sa = {.sa_sigaction = stop_handler, .sa_flags = SA_SIGINFO | SA_RESTART};
	sigfillset(&sa.sa_mask);
	sigaction(stw.sig, &sa, NULL);
	return signal_batch(tids, n);
}

/* Lets the stopped threads go. A thread that never answered may still run the handler later: the
 * handler stays installed then (a default action could kill the process), and returns at once. */
static void resume_signalled(void)
{
	atomic_store(&stw.release, 1);
	futex_wake(&stw.release);
	for (int ms = 0; atomic_load(&stw.inside) && ms < 1000; ms++)
		sleep_us(1000);
	if (stw.sig && atomic_load(&stw.claimed) >= stw.signalled && !atomic_load(&stw.inside))
		sigaction(stw.sig, &stw.old, NULL);
}

/* ---- the interface ---- */

void ct_world_init(void)
{
	const char *v = getenv(CT_ENV_SCAN_STOP);
	world.no_ptrace = v && !strcmp(v, "signal");
}

size_t ct_world_stop(const pid_t *tids, size_t n, const struct ct_stopped **v)
{
	int e = errno;
	world.how = CT_STOP_NONE;
	world.filled = 0;
	if (!world.v)
		world.v = ct_arena_map(CT_STOP_MAX * sizeof(*world.v));
	*v = world.v;
	if (!world.v || !n) {
		errno = e;
		return 0;
	}
	if (n > CT_STOP_MAX)
		n = CT_STOP_MAX;
	long held = stop_by_ptrace(tids, n);
	if (held >= 0) {
		world.how = CT_STOP_PTRACE;
		world.filled = (size_t)held;
	} else {
		world.how = CT_STOP_SIGNAL;
		world.filled = stop_by_signal(tids, n);
	}
	errno = e;
	return world.filled;
}

size_t ct_world_more(const pid_t *tids, size_t n)
{
	int e = errno;
	if (n > CT_STOP_MAX)
		n = CT_STOP_MAX;
	if (world.how == CT_STOP_PTRACE)
		world.filled = more_by_ptrace(tids, n);
	else if (world.how == CT_STOP_SIGNAL)
		world.filled = signal_batch(tids, n);
	errno = e;
	return world.filled;
}

void ct_world_resume(void)
{
	int e = errno;
	if (world.how == CT_STOP_PTRACE && tracer_pid)
		tracer_end();
	else if (world.how == CT_STOP_SIGNAL)
		resume_signalled();
	errno = e;
}
