/* SPDX-License-Identifier: MIT */
/* Reading /proc/self/maps (and the stat files) from inside the shim: a line at a time through a stack buffer,
 * with no malloc and no stdio (the unwinder reads it inside malloc; the leak scan with threads stopped). */
#ifndef CTRACK_PROCMAPS_H
#define CTRACK_PROCMAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Calls fn(line, arg) for each line (NUL-terminated, without its newline) until fn returns non-zero.
 * Returns that value, 0 after the last line, or -1 when the file cannot be opened. errno is kept. */
int ct_procmaps_each(int (*fn)(const char *line, void *arg), void *arg);
/* The same over a descriptor open on a maps file, which the caller closes. */
int ct_procmaps_read(int fd, int (*fn)(const char *line, void *arg), void *arg);

/* open(path, O_RDONLY | O_CLOEXEC) of a /proc file. With past_limit, a process at its descriptor
 * limit (EMFILE) gets the file all the same when the limit can be raised: the soft limit goes up by
 * one for the open and back at once (the descriptor stays valid above it), so the leak scan can read
 * what it needs in a program that uses every descriptor it may have. -1 with errno set (EMFILE
 * when the hard limit could not be raised). */
int ct_proc_open(const char *path, int past_limit);

/* The range "lo-hi" at the start of a line: returns the rest of the line (after one space), or NULL
 * when the line does not start with a range. */
const char *ct_procmaps_range(const char *line, uintptr_t *lo, uintptr_t *hi);

/* "/proc/self/task/TID/FILE" into buf (len bytes: 64 hold any TID and the file names used). */
void ct_proc_task_path(char *buf, size_t len, pid_t tid, const char *file);

/* Reads a small /proc file (at most len - 1 bytes) into buf, NUL-terminated, opened with
 * ct_proc_open(path, past_limit): how many bytes, or -1 when it cannot be read. errno is kept. */
ssize_t ct_proc_read(const char *path, char *buf, size_t len, int past_limit);
/* The fields of a /proc stat file (path: "/proc/self/stat", "/proc/self/task/TID/stat") from the
 * third on, the state ("Z 1234 ..."), read into buf; NULL when it cannot be read. errno is kept. */
const char *ct_procstat_fields(const char *path, char *buf, size_t len);
/* The same, opened with ct_proc_open(path, past_limit). */
const char *ct_procstat_fields_at(const char *path, char *buf, size_t len, int past_limit);

/* The process's address space, its resident set and its data (writable private mappings and
 * stacks) in bytes, from /proc/self/statm (size and data are the figures RLIMIT_AS and RLIMIT_DATA
 * limit); each pointer may be NULL. 0, or -1 when it cannot be read. errno is kept. */
int ct_procstatm(uint64_t *size, uint64_t *resident, uint64_t *data);

/* What the process could still map under its memory limits (RLIMIT_AS, RLIMIT_DATA) in bytes:
 * UINT64_MAX when it has none, 0 when its usage cannot be read. errno is kept. */
uint64_t ct_headroom(void);

#endif
