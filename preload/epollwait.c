/* SPDX-License-Identifier: MIT */
/* Timed epoll waits that a thread stop leaves undisturbed (epollwait.h). epoll_wait is the one sleep a
 * ptrace stop ends with EINTR, and a wait with a timeout cannot be restarted blindly: it would wait its
 * whole timeout again. So the hooks note, in the thread's slot, when each timed wait ends and the
 * timeout argument they pass on; the tracer (stopworld.c), finding a wait its stop ended, has the kernel
 * restart it with what is left, as it restarts nanosleep and poll itself. epoll_pwait2's timeout is a
 * timespec the hook does not read (a bad pointer is the kernel's EFAULT, not the hook's fault): it notes
 * when the wait began, and the tracer reads the timespec at the first stop, when the kernel has taken
 * it, and restarts the wait with what is left in the slot's own timespec. Waits made by the system
 * call instruction alone are left as the kernel leaves them; those made through syscall() are noted
 * (syscall_entry.S). No malloc; errno untouched but by the calls themselves. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <sys/epoll.h>
#include <string.h>
#include <sys/syscall.h>

#include "epollwait.h"
#include "reach.h" /* ct_reach_copy */
#include "shim.h"

#define EXPORT __attribute__((visibility("default")))

static int (*real_wait)(int, struct epoll_event *, int, int);
static int (*real_pwait)(int, struct epoll_event *, int, int, const sigset_t *);
static int (*real_pwait2)(int, struct epoll_event *, int, const struct timespec *, const sigset_t *);
long (*ct_real_syscall)(long, ...); /* libc's syscall, which syscall_entry.S jumps to */

void ct_epoll_init(void)
{
	int e = errno;
	ct_bind_next(&real_wait, "epoll_wait");
	ct_bind_next(&real_pwait, "epoll_pwait");
	ct_bind_next(&real_pwait2, "epoll_pwait2");
	ct_bind_next(&ct_real_syscall, "syscall");
	errno = e;
}

/* Whether the real function whose pointer is at slot is known, looked up now if not (ENOSYS when it
 * is nowhere). */
static int bound(const void *slot)
{
	void *fn;
	memcpy(&fn, slot, sizeof(fn));
	if (!fn) {
		ct_epoll_init();
		memcpy(&fn, slot, sizeof(fn));
	}
	if (!fn)
		errno = ENOSYS;
	return fn != NULL;
}

/* The wait that a timed call of the thread's replaces (a signal handler's, nested in it, restores it). */
struct noted {
	uint64_t deadline;
	uintptr_t arg;
	uint64_t begun;
};

#define CT_EPOLL_PENDING UINT64_MAX /* deadline: begun + the timespec at arg, not read yet */

/* Notes a wait (the outer one's returned). No stop finds it half written as its own: a stop in
 * between finds no wait in progress. */
static struct noted renote(struct ct_slot *s, struct noted now)
{
	struct noted outer = {s->epoll.deadline, s->epoll.arg, s->epoll.begun};
	s->epoll.deadline = 0;
	atomic_signal_fence(memory_order_seq_cst);
	s->epoll.arg = now.arg;
	s->epoll.begun = now.begun;
	atomic_signal_fence(memory_order_seq_cst);
	s->epoll.deadline = now.deadline;
	return outer;
}

static struct noted note(struct ct_slot *s, int timeout)
{
	return renote(
	    s, (struct noted){ct_now_ns() + (uint64_t)timeout * 1000000u, (uintptr_t)(unsigned)timeout, 0});
}

/* An epoll_pwait2's wait, whose timespec at ts is read at its first stop (CT_EPOLL_PENDING). */
static struct noted note_timespec(struct ct_slot *s, const struct timespec *ts)
{
	return renote(s, (struct noted){CT_EPOLL_PENDING, (uintptr_t)ts, ct_now_ns()});
}

static void unnote(struct ct_slot *s, struct noted outer)
{
	renote(s, outer);
}

EXPORT int epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout)
{
	if (!bound(&real_wait))
		return -1;
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
	if (!bound(&real_pwait))
		return -1;
	if (timeout <= 0)
		return real_pwait(epfd, events, maxevents, timeout, sigmask);
	struct ct_slot *s = ct_slot();
	struct noted outer = note(s, timeout);
	int rc = real_pwait(epfd, events, maxevents, timeout, sigmask);
	unnote(s, outer);
	return rc;
}

EXPORT int epoll_pwait2(int epfd, struct epoll_event *events, int maxevents, const struct timespec *timeout,
                        const sigset_t *sigmask)
{
	if (!bound(&real_pwait2))
		return -1;
	if (!timeout) /* a wait without end: the tracer restarts it as it is */
		return real_pwait2(epfd, events, maxevents, timeout, sigmask);
	struct ct_slot *s = ct_slot();
	struct noted outer = note_timespec(s, timeout);
	int rc = real_pwait2(epfd, events, maxevents, timeout, sigmask);
	unnote(s, outer);
	return rc;
}

/* A system call at syscall()'s entry (syscall_entry.S): a timed epoll wait, noted as the hooks above
 * note theirs, or any call made before libc's syscall was found. Made here as glibc's syscall makes
 * it: six arguments (the sixth from the stack, where a variadic call leaves it), -1 and errno on an
 * error. */
static long raw_syscall(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	register long r10 __asm__("r10") = a4, r8 __asm__("r8") = a5, r9 __asm__("r9") = a6;
	long rc;
	__asm__ volatile("syscall"
	                 : "=a"(rc)
	                 : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
	                 : "rcx", "r11", "memory");
	return rc;
}

long ct_syscall_epoll(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	int ms = nr == SYS_epoll_wait || nr == SYS_epoll_pwait;
	int timed = ms ? (int)a4 > 0 : nr == SYS_epoll_pwait2 && a4;
	struct ct_slot *s = timed ? ct_slot() : NULL;
	struct noted outer = {0};
	if (timed)
		outer = ms ? note(s, (int)a4) : note_timespec(s, (const struct timespec *)a4);
	long rc = raw_syscall(nr, a1, a2, a3, a4, a5, a6);
	if (timed)
		unnote(s, outer);
	if ((unsigned long)rc > -4096ul) {
		errno = (int)-rc;
		return -1;
	}
	return rc;
}

/* attach mode (attach.c): the entry points by their own addresses, for the GOT entries it rewrites */
extern __typeof(epoll_wait) ct_hook_epoll_wait
    __attribute__((alias("epoll_wait"), copy(epoll_wait), visibility("hidden")));
extern __typeof(epoll_pwait) ct_hook_epoll_pwait
    __attribute__((alias("epoll_pwait"), copy(epoll_pwait), visibility("hidden")));
extern __typeof(epoll_pwait2) ct_hook_epoll_pwait2
    __attribute__((alias("epoll_pwait2"), copy(epoll_pwait2), visibility("hidden")));

/* epoll_pwait2's deadline: begun + the timespec at arg, which the kernel read (a copy that fails
 * rather than faults: another thread may have unmapped it since). 0 when it cannot be read. */
static uint64_t pwait2_deadline(const struct ct_slot *s)
{
	struct timespec ts;
	if (ct_reach_copy(&ts, s->epoll.arg, sizeof(ts)) != sizeof(ts) || ts.tv_sec < 0 ||
	    (uint64_t)ts.tv_sec > (UINT64_MAX - s->epoll.begun) / 2000000000u)
		return 0;
	return s->epoll.begun + (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int ct_epoll_resume(struct user_regs_struct *regs, uint64_t now)
{
	long nr = (long)regs->orig_rax;
	if ((nr != SYS_epoll_wait && nr != SYS_epoll_pwait && nr != SYS_epoll_pwait2) ||
	    (long)regs->rax != -EINTR)
		return 0;
	struct ct_slot *s = ct_slot_lookup((uintptr_t)regs->fs_base);
	int ms_arg = nr != SYS_epoll_pwait2;
	if (!s || !s->epoll.deadline || (ms_arg ? (unsigned)regs->r10 : regs->r10) != s->epoll.arg ||
	    ms_arg != (s->epoll.begun == 0))
		return 0;
	if (s->epoll.deadline == CT_EPOLL_PENDING && !(s->epoll.deadline = pwait2_deadline(s)))
		return 0;
	if (s->epoll.deadline <= now) {
		regs->rax = 0; /* its timeout has passed: no event, as it would have returned */
		return 1;
	}
	uint64_t left = s->epoll.deadline - now;
	if (ms_arg) {
		uint64_t ms = (left + 999999) / 1000000; /* never less than what is left */
		regs->r10 = ms < INT_MAX ? ms : INT_MAX;
	} else {
		s->epoll.left = (struct timespec){(time_t)(left / 1000000000u), (long)(left % 1000000000u)};
		regs->r10 = (uintptr_t)&s->epoll.left;
	}
	s->epoll.arg = regs->r10; /* the argument of the wait resumed, for the next stop's */
	regs->rax = (unsigned long long)-CT_ERESTARTNOHAND;
	return 1;
}
