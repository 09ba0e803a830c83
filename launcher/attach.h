/* SPDX-License-Identifier: MIT */
/* `ctrack -p PID`: traces a running process from now on. The checks that leave the process untouched
 * when it cannot be traced (gone, another user's or ptrace refused, under a debugger, traced by
 * ctrack already, static or not x86_64, no gdb), the trace file, the injection of the shim with gdb
 * (preload/attach.c takes it from there), the wait for Ctrl-C, the duration or the process's exit,
 * the detach, and the closing summary. */
#ifndef CTRACK_LAUNCHER_ATTACH_H
#define CTRACK_LAUNCHER_ATTACH_H
#include <stdint.h>
#include <sys/types.h>
struct ct_attach {
	pid_t pid;
	const char *shim;   /* the shim's path (ct_locate_shim) */
	const char *output; /* -o, or NULL for ctrack.NAME.PID.zst */
	int depth;
	int force;
	int quiet;
	double duration;      /* seconds, 0: until Ctrl-C or the process's exit */
	int live;             /* --live: the view while attached; closing it detaches (liveview.h) */
	uint64_t sample;      /* --sample: one allocation per so many bytes recorded, 0: every one */
	unsigned snapshot_ms; /* --aggregate: the snapshot interval, 0: a full trace */
};
/* Attaches, waits, detaches, says where the trace went. Returns ctrack's exit status: 0, or 1 after
 * a one-line reason on stderr (the process untouched). */
int ct_attach_run(const struct ct_attach *a);
#endif
