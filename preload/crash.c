/* SPDX-License-Identifier: MIT */
/* The program dies of a signal: for the signals whose default action kills, and only where the
 * program left that default, the shim's handler has the writer put every published event in the
 * file, then restores the default and raises the signal again, so the process dies as it would
 * have. The program never sees the handler: sigaction and signal (hooks.c) show SIG_DFL, and a
 * handler the program installs replaces it. The handler is async-signal-safe: no malloc, no lock. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim.h"

/* glibc's sigaction under its other exported name: the real one, whatever interposes sigaction. */
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);

/* Signals whose default action ends the process (SIGKILL cannot be caught). */
static const int fatal_signals[] = {SIGSEGV, SIGBUS,  SIGFPE,  SIGILL,  SIGABRT, SIGTRAP,
                                    SIGSYS,  SIGTERM, SIGINT,  SIGQUIT, SIGHUP,  SIGPIPE,
                                    SIGXCPU, SIGXFSZ, SIGALRM, SIGUSR1, SIGUSR2};

/* 1 while the shim's handler is installed for the signal, where the program believes SIG_DFL is. */
static _Atomic unsigned char ours[NSIG];

static int watched(int sig)
{
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++)
		if (fatal_signals[i] == sig)
			return 1;
	return 0;
}

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	int e = errno;
	ct_track_crash(sig, uc);
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigemptyset(&dfl.sa_mask);
	atomic_store(&ours[sig], 0);
	__sigaction(sig, &dfl, NULL);
	/* Blocked until the handler returns (sa_mask), then delivered with the default action. A fault
	 * would come back by itself as the instruction runs again, but not a trap (int3 resumes after
	 * it): raised again in every case. */
	syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
	errno = e;
}

/* ---- work that may fault, in the handler ----
 * The crash's backtrace is walked over a stack the crash may have damaged: a saved frame pointer
 * overwritten with an address near the stack can send the walk to a guard page. A fault there,
 * with every signal blocked in the handler, would kill the process with SIGSEGV before its trace
 * ends, and with a status that is not the program's. So the walk runs with its faults caught: the
 * thread's SIGSEGV and SIGBUS lead back here, and the walk is given up. */

static sigjmp_buf guard_escape;
static _Atomic pid_t guard_tid;
static struct sigaction guard_old[2];
static const int guard_signals[2] = {SIGSEGV, SIGBUS};

static void guard_fault(int sig, siginfo_t *si, void *uc)
{
	(void)si, (void)uc;
	if ((pid_t)syscall(SYS_gettid) == atomic_load(&guard_tid))
		siglongjmp(guard_escape, 1);
	/* Another thread's fault in the moment the guard stands: its own handler takes it when the
	 * instruction runs again. */
	__sigaction(sig, &guard_old[sig == SIGBUS], NULL);
}

int ct_crash_guarded(void (*fn)(void *), void *arg)
{
	struct sigaction guard = {.sa_sigaction = guard_fault, .sa_flags = SA_SIGINFO | SA_ONSTACK};
	sigset_t faults, was;
	sigfillset(&guard.sa_mask);
	sigemptyset(&faults);
	atomic_store(&guard_tid, (pid_t)syscall(SYS_gettid));
	for (int i = 0; i < 2; i++) {
		sigaddset(&faults, guard_signals[i]);
		__sigaction(guard_signals[i], &guard, &guard_old[i]);
	}
	/* The mask saved here, faults blocked as the handler has them, comes back with a fault. */
	int faulted = sigsetjmp(guard_escape, 1);
	if (!faulted) {
		sigprocmask(SIG_UNBLOCK, &faults, &was);
		fn(arg);
		sigprocmask(SIG_SETMASK, &was, NULL);
	}
	for (int i = 0; i < 2; i++)
		__sigaction(guard_signals[i], &guard_old[i], NULL);
	atomic_store(&guard_tid, 0);
	return faulted ? -1 : 0;
}

static void install(int sig)
{
	struct sigaction sa = {.sa_sigaction = on_fatal, .sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART};
	sigfillset(&sa.sa_mask);
	atomic_store(&ours[sig], 1);
	if (__sigaction(sig, &sa, NULL) != 0)
		atomic_store(&ours[sig], 0);
}

void ct_crash_install(void)
{
	int e = errno;
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++) {
		struct sigaction cur;
		int sig = fatal_signals[i];
		if (__sigaction(sig, NULL, &cur) == 0 && cur.sa_handler == SIG_DFL)
			install(sig);
	}
	errno = e;
}

/* What sigaction reports for a signal left at its default. */
static void default_view(struct sigaction *old)
{
	*old = (struct sigaction){.sa_handler = SIG_DFL};
	sigemptyset(&old->sa_mask);
}

/* The shim's handler is still the one the kernel has for sig. Something other than the hooks may
 * have replaced it (a raw system call, glibc's __sigaction): then the program's view is the
 * kernel's. */
static int still_installed(int sig)
{
	struct sigaction cur;
	return __sigaction(sig, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
	       cur.sa_sigaction == on_fatal;
}

int ct_crash_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (sig > 0 && sig < NSIG && atomic_load(&ours[sig]) && !still_installed(sig))
		atomic_store(&ours[sig], 0);
	if (sig <= 0 || sig >= NSIG || !atomic_load(&ours[sig])) {
		int rc = __sigaction(sig, act, old);
		/* The program gives the signal back to its default: ctrack watches it again. */
		if (rc == 0 && act && act->sa_handler == SIG_DFL && watched(sig) &&
		    atomic_load(&ct_state) == CT_ACTIVE)
			install(sig);
		return rc;
	}
	if (act && act->sa_handler != SIG_DFL) { /* the program takes the signal */
		atomic_store(&ours[sig], 0);
		int rc = __sigaction(sig, act, NULL);
		if (rc != 0)
			atomic_store(&ours[sig], 1);
		else if (old)
			default_view(old);
		return rc;
	}
	if (old)
		default_view(old);
	return 0;
}
