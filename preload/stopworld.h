/* SPDX-License-Identifier: MIT */
/* Stopping the program's other threads while a leak scan reads their memory (stopworld.c): with
 * ptrace from a task of the shim's own, as LeakSanitizer does, or with a signal where ptrace is refused. */
#ifndef CTRACK_STOPWORLD_H
#define CTRACK_STOPWORLD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CT_STOP_MAX 4096 /* threads stopped at most; the rest run on and are counted as not scanned */
#define CT_STOP_REGS 27  /* words of registers kept: ptrace's user_regs_struct (a signal's gregs: 23) */

/* A stopped thread's roots: its stack pointer, thread pointer (its static TLS lies below it) and the
 * general registers it was stopped with. */
struct ct_stopped {
	uintptr_t sp, tp;
	uintptr_t regs[CT_STOP_REGS];
};

/* At start-up: reads CTRACK_SCAN_STOP (common/rules.h). */
void ct_world_init(void);
/* Stops the threads tids[0..n) (none of them the calling thread): by ptrace when the kernel allows
 * it, which interrupts no system call the program would see (a poll, a sleep, a select: they go on
 * when the thread is let go; epoll_wait, which returns EINTR under any ptrace stop, gdb's too, is
 * restarted when it waits without end, and returns EINTR with a timeout), else by a signal, whose
 * handler waits (those calls return EINTR, as they would for any handled signal). Returns the stopped
 * threads' roots in *v and how many there are; a thread that ended meanwhile, or that blocks the signal, is
 * not among them. Not reentrant: one stop at a time (the writer's scans), each followed by ct_world_resume.
 */
size_t ct_world_stop(const pid_t *tids, size_t n, const struct ct_stopped **v);
/* Stops the threads tids[0..n) too, the same way, after a ct_world_stop: threads that running ones
 * created after their list was read (list again until no new one comes: once every thread stands
 * still, none can create another). Returns how many stand still now, all their roots in the *v
 * ct_world_stop gave. */
size_t ct_world_more(const pid_t *tids, size_t n);
/* Lets the threads of the last ct_world_stop go, with the signals the stop held back for them. */
void ct_world_resume(void);

#endif
