/* SPDX-License-Identifier: MIT */
/* Reading /proc/self/maps (and the stat files) from inside the shim: a line at a time through a stack buffer,
 * with no malloc and no stdio (the unwinder reads it inside malloc; the leak scan with threads stopped). */
#ifndef CTRACK_PROCMAPS_H
#define CTRACK_PROCMAPS_H

#include <stddef.h>
#include <stdint.h>

/* Calls fn(line, arg) for each line (NUL-terminated, without its newline) until fn returns non-zero.
 * Returns that value, 0 after the last line, or -1 when the file cannot be opened. errno is kept. */
int ct_procmaps_each(int (*fn)(const char *line, void *arg), void *arg);

/* The range "lo-hi" at the start of a line: returns the rest of the line (after one space), or NULL
 * when the line does not start with a range. */
const char *ct_procmaps_range(const char *line, uintptr_t *lo, uintptr_t *hi);

/* The fields of a /proc stat file (path: "/proc/self/stat", "/proc/self/task/TID/stat") from the
 * third on, the state ("Z 1234 ..."), read into buf; NULL when it cannot be read. errno is kept. */
const char *ct_procstat_fields(const char *path, char *buf, size_t len);

#endif
