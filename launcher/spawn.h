/* SPDX-License-Identifier: MIT */
/* Running the program under the shim: a forked child creates the trace file, hands the shim its
 * settings (LD_PRELOAD and the CTRACK_* variables of common/rules.h) and execs the program; the
 * parent passes on the signals meant for the program and waits. The child sends the parent the
 * trace's descriptor, and says why when it fails before exec, on a close-on-exec socket, whose EOF
 * alone means that the exec succeeded. */
#ifndef CTRACK_SPAWN_H
#define CTRACK_SPAWN_H

#include <limits.h>
#include <stdint.h>

struct ct_spawn_result;

/* What to run; all borrowed until ct_spawn_run returns. */
struct ct_spawn {
	const char *shim;    /* the shim's path (ct_locate_shim), without space or colon */
	const char *exe;     /* the program's path (ct_locate_program) */
	char *const *argv;   /* PROGRAM ARGS..., NULL-terminated, argv[0] as typed */
	const char *output;  /* -o, or NULL for the default trace name */
	int depth;           /* backtrace depth, 1..CT_DEPTH_MAX; replaces any inherited CTRACK_DEPTH */
	int lanes;           /* the shim's lanes (ct_parse_lanes), or 0: an inherited CTRACK_LANES stays */
	unsigned aggregate;  /* --aggregate: the snapshot interval (ms), or 0: a full trace */
	uint64_t sample;     /* --sample: one allocation per this many bytes is recorded, or 0: all */
	int follow_children; /* the program's children trace themselves too */
	int force;           /* replace an existing trace file */
	const char *status;  /* CTRACK_STATUS (the launcher's status page), or NULL for none */
	/* --live (live.h), NULL for none: before_exec runs in the child before the exec, with the trace's
	 * name (0, or a negative errno: the program does not run, CT_SPAWN_SETUP); running runs in the
	 * parent once the program runs, before waiting for it (r: its pid and trace). */
	int (*before_exec)(const char *trace, void *arg);
	void (*running)(const struct ct_spawn_result *r, void *arg);
	void *hook_arg;
};

/* What failed when the program did not run. */
enum ct_spawn_stage {
	CT_SPAWN_PIPE = 1, /* the launcher's socket to the child */
	CT_SPAWN_FORK,     /* the launcher's fork */
	CT_SPAWN_CREATE,   /* the child creating the trace file */
	CT_SPAWN_SETUP,    /* the child setting the shim's environment */
	CT_SPAWN_EXEC,     /* the child's exec of the program */
};

struct ct_spawn_result {
	char trace[PATH_MAX];      /* the trace file's name, with the child's pid; "" if none was forked */
	int status;                /* on success: the program's exit status, 128+N if signal N killed it */
	int signal;                /* on success: the signal that killed the program, 0 if it exited */
	enum ct_spawn_stage stage; /* on failure: what failed */
	pid_t pid;                 /* the program's pid, 0 if none was forked */
	int trace_fd; /* on success: the trace as created, open for writing (the caller closes it), or
	               * -1 when the child could not hand it over */
	uint64_t start_ns, end_ns; /* Unix time before the fork, and once the program was reaped */
};

/* Runs s and waits for the program (r->start_ns is set on failure too). From the fork on, the launcher
 * forwards SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2 to it and ignores SIGINT and SIGQUIT, which a terminal sends
 * the program itself. Returns 0, or a negative errno with r->stage set: the program did not run, and no trace
 * file was left behind. */
int ct_spawn_run(const struct ct_spawn *s, struct ct_spawn_result *r);

#endif
