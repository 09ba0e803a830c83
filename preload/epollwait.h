/* SPDX-License-Identifier: MIT */
/* Timed epoll waits that a thread stop leaves undisturbed (epollwait.c): the hooks note each wait's
 * deadline in the thread's slot, those made through syscall() too (syscall_entry.S); the tracer has
 * the kernel resume a wait its stop ended early. */
#ifndef CTRACK_EPOLLWAIT_H
#define CTRACK_EPOLLWAIT_H

#include <stdint.h>
#include <sys/user.h>

/* The kernel's "restart the call unless a signal's handler runs" (not in the headers programs see):
 * the error a stop's tracer gives a wait so that the kernel restarts it as the thread goes on. */
#define CT_ERESTARTNOHAND 514

/* Finds the real epoll_wait, epoll_pwait and epoll_pwait2 (the shim's start: not in a hook, where a
 * signal handler's first call would look them up inside dlsym). */
void ct_epoll_init(void) __attribute__((visibility("hidden")));

/* A ptrace stop at now (CLOCK_MONOTONIC nanoseconds) ended the system call in *regs with EINTR:
 * when it is a timed wait the hooks noted (the thread's slot found by its thread pointer, the timeout
 * argument the one the hook passed, or the last stop's), *regs are changed to restart it for what is
 * left of its timeout, or to return 0, no event, when its deadline has passed; returns 1 then. 0: left
 * as it is. For the tracer, with the thread stopped: no call but loads and stores. */
int ct_epoll_resume(struct user_regs_struct *regs, uint64_t now) __attribute__((visibility("hidden")));

/* syscall() (syscall_entry.S): libc's, found by ct_epoll_init, which the entry jumps to for every call
 * but a timed epoll wait; and the function it jumps to for those (and for any call made before libc's
 * was found), which notes the wait and makes the call itself. */
extern long (*ct_real_syscall)(long, ...) __attribute__((visibility("hidden")));
long ct_syscall_epoll(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
    __attribute__((visibility("hidden")));

#endif
