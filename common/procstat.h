/* SPDX-License-Identifier: MIT */
/* A process's parent and start time from /proc/PID/stat, for the launcher (which traces belong to
 * its run) and the analyzer (whether a trace's writer still runs). */
#ifndef CTRACK_PROCSTAT_H
#define CTRACK_PROCSTAT_H

#include <stdint.h>

/* Fills *ppid and *start_ns (Unix time in ns, to a clock tick) of process pid: 0; -ENOENT when there
 * is no such process or only its zombie; another negative errno when its stat could not be opened
 * (it may still run). */
int ct_proc_stat(uint64_t pid, uint64_t *ppid, uint64_t *start_ns);

#endif
