/* SPDX-License-Identifier: MIT */
/* Timed epoll waits that a thread stop leaves undisturbed (epollwait.h). epoll_wait is the one sleep a
 * ptrace stop ends with EINTR, and a wait with a timeout cannot be restarted blindly: it would wait its
 * whole timeout again. So the hooks note, in the thread's slot, when each timed wait ends and the
 * timeout argument they pass on; the tracer (stopworld.c), finding a wait its stop ended, has the kernel
 * restart it with what is left, as it restarts nanosleep and poll itself. epoll_pwait2 (a timespec the
 * hook could not copy without reading the program's pointer first) and waits made by the system call
 * alone are left as the kernel leaves them. No malloc, errno untouched. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/syscall.h>

#include "epollwait.h"
#include "shim.h"

#define EXPORT __attribute__((visibility("default")))

static int (*real_wait)(int, struct epoll_event *, int, int);
static int (*real_pwait)(int, struct epoll_event *, int, int, const sigset_t *);

void ct_epoll_init(void)
{
	int e = errno;
	ct_bind_next(&real_wait, "epoll_wait");
	ct_bind_next(&real_pwait, "epoll_pwait");
	errno = e;
}

/* The wait that a timed call of the thread's replaces (a signal handler's, nested in it, restores it). */
struct noted {
	uint64_t deadline;
	uintptr_t arg;
};

static struct noted note(struct ct_slot *s, int timeout)
{
	struct noted outer = {s->epoll.deadline, s->epoll.arg};
	/* No stop finds the pair half written as its own: a stop in between finds no wait in progress. */
	s->epoll.deadline = 0;
	atomic_signal_fence(memory_order_seq_cst);
	s->epoll.arg = (uintptr_t)(unsigned)timeout;
	atomic_signal_fence(memory_order_seq_cst);
	s->epoll.deadline = ct_now_ns() + (uint64_t)timeout * 1000000u;
	return outer;
}

static void unnote(struct ct_slot *s, struct noted outer)
{
	s->epoll.deadline = 0;
	atomic_signal_fence(memory_order_seq_cst);
	s->epoll.arg = outer.arg;
	atomic_signal_fence(memory_order_seq_cst);
	s->epoll.deadline = outer.deadline;
}

EXPORT int epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout)
{
	if (!real_wait)
		ct_epoll_init();
	if (!real_wait) {
		errno = ENOSYS;
		return -1;
	}
	if (timeout <= 0) /* no wait, or one without end (the tracer restarts those as they are) */
		return real_wait(epfd, events, maxevents, timeout);
	struct ct_slot *s = ct_slot();
	struct noted outer = note(s, timeout);
	int rc = real_wait(epfd, events, maxevents, timeout);
	unnote(s, outer);
	return rc;
}

EXPORT int epoll_pwait(int epfd, struct epoll_event *events, int maxevents, int timeout,
                       const sigset_t *sigmask)
{
	if (!real_pwait)
		ct_epoll_init();
	if (!real_pwait) {
		errno = ENOSYS;
		return -1;
	}
	if (timeout <= 0)
		return real_pwait(epfd, events, maxevents, timeout, sigmask);
	struct ct_slot *s = ct_slot();
	struct noted outer = note(s, timeout);
	int rc = real_pwait(epfd, events, maxevents, timeout, sigmask);
	unnote(s, outer);
	return rc;
}

/* attach mode (attach.c): the entry points by their own addresses, for the GOT entries it rewrites */
extern __typeof(epoll_wait) ct_hook_epoll_wait
    __attribute__((alias("epoll_wait"), copy(epoll_wait), visibility("hidden")));
extern __typeof(epoll_pwait) ct_hook_epoll_pwait
    __attribute__((alias("epoll_pwait"), copy(epoll_pwait), visibility("hidden")));

int ct_epoll_resume(struct user_regs_struct *regs, uint64_t now)
{
	long nr = (long)regs->orig_rax;
	if ((nr != SYS_epoll_wait && nr != SYS_epoll_pwait) || (long)regs->rax != -EINTR)
		return 0;
	struct ct_slot *s = ct_slot_lookup((uintptr_t)regs->fs_base);
	if (!s || !s->epoll.deadline || (unsigned)regs->r10 != s->epoll.arg)
		return 0;
	if (s->epoll.deadline <= now) {
		regs->rax = 0; /* its timeout has passed: no event, as it would have returned */
		return 1;
	}
	uint64_t ms = (s->epoll.deadline - now + 999999) / 1000000; /* never less than what is left */
	regs->r10 = ms < INT_MAX ? ms : INT_MAX;
	s->epoll.arg = regs->r10; /* the argument of the wait resumed, for the next stop's */
	regs->rax = (unsigned long long)-CT_ERESTARTNOHAND;
	return 1;
}
