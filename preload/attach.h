/* SPDX-License-Identifier: MIT */
/* Attach mode (`ctrack -p PID`, ARCHITECTURE.md): the shim loaded into a running process by dlopen
 * (gdb calls it), where its exported malloc & co interpose nothing. ctrack_attach_v1, called by
 * gdb on a thread of the program, takes the trace from the launcher (common/attach_proto.h), starts
 * the writer and points the GOT entries of every loaded module at the hooks; the writer watches the
 * launcher's connection and, when it asks (or goes away), detaches: the entries get back what they
 * held, the trace ends with END, and the shim stays loaded but inert (never dlclosed: a thread may
 * still be inside a hook), ready for another attach. */
#ifndef CTRACK_ATTACH_H
#define CTRACK_ATTACH_H

#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>

#include "arena.h"

/* The entry points of hooks.c by their own addresses (inside the shim a reference to `malloc`
 * binds to libc's when the shim was loaded by dlopen). */
extern __typeof(malloc) ct_hook_malloc CT_HIDDEN;
extern __typeof(free) ct_hook_free CT_HIDDEN;
extern __typeof(calloc) ct_hook_calloc CT_HIDDEN;
extern __typeof(realloc) ct_hook_realloc CT_HIDDEN;
extern __typeof(reallocarray) ct_hook_reallocarray CT_HIDDEN;
extern __typeof(posix_memalign) ct_hook_posix_memalign CT_HIDDEN;
extern __typeof(aligned_alloc) ct_hook_aligned_alloc CT_HIDDEN;
extern void *ct_hook_memalign(size_t, size_t) CT_HIDDEN;
extern void *ct_hook_valloc(size_t) CT_HIDDEN;
extern void *ct_hook_pvalloc(size_t) CT_HIDDEN;
extern size_t ct_hook_malloc_usable_size(void *) CT_HIDDEN;
extern int ct_hook_dlclose(void *) CT_HIDDEN;
extern void ct_hook_exit(int) CT_HIDDEN;
extern void ct_hook__exit(int) CT_HIDDEN;
extern void ct_hook__Exit(int) CT_HIDDEN;
extern int ct_hook_execve(const char *, char *const[], char *const[]) CT_HIDDEN;
extern int ct_hook_execv(const char *, char *const[]) CT_HIDDEN;
extern int ct_hook_execvp(const char *, char *const[]) CT_HIDDEN;
extern int ct_hook_execvpe(const char *, char *const[], char *const[]) CT_HIDDEN;
extern int ct_hook_execveat(int, const char *, char *const[], char *const[], int) CT_HIDDEN;
extern int ct_hook_fexecve(int, char *const[], char *const[]) CT_HIDDEN;
extern int ct_hook_execl(const char *, const char *, ...) CT_HIDDEN;
extern int ct_hook_execle(const char *, const char *, ...) CT_HIDDEN;
extern int ct_hook_execlp(const char *, const char *, ...) CT_HIDDEN;
extern int ct_hook_epoll_wait(int, struct epoll_event *, int, int) CT_HIDDEN;
extern int ct_hook_epoll_pwait(int, struct epoll_event *, int, int, const sigset_t *) CT_HIDDEN;
extern int ct_hook_epoll_pwait2(int, struct epoll_event *, int, const struct timespec *,
                                const sigset_t *) CT_HIDDEN;
extern long ct_hook_syscall(long, ...) CT_HIDDEN; /* syscall_entry.S */

/* tracker.c: tracing starts, again after a detach, into the empty trace file fd with backtraces of
 * depth frames at most: the writer runs and the hooks report once this returns 0; else a negative
 * errno (-EALREADY: tracing already) and fd is closed. */
int ct_track_attach(int fd, int depth) CT_HIDDEN;

/* 1 when this copy of the shim was loaded by dlopen (it is not in the global scope: LD_PRELOAD did
 * not load it), so its constructor must not start tracing: gdb's call does. */
int ct_attach_loaded_late(void) CT_HIDDEN;
/* On the writer, at most every 20 ms: 1 when the launcher asked to detach or went away. */
int ct_attach_poll(void) CT_HIDDEN;
/* On the writer, detaching: every GOT entry rewritten gets back what it held. */
void ct_attach_unhook(void) CT_HIDDEN;
/* On the writer, once the trace is complete (END written): the launcher learns it as the end of the
 * connection. */
void ct_attach_done(void) CT_HIDDEN;
/* In a forked child: the connection is the parent's (closed here, so the launcher sees its end when
 * the parent's trace ends). */
void ct_attach_after_fork_child(void) CT_HIDDEN;

#endif
