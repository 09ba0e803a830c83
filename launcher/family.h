/* SPDX-License-Identifier: MIT */
/* The run's traces. The program's is read through the descriptor the launcher holds, never by its
 * name again (another run with --force may have replaced it meanwhile). With --follow-children,
 * its descendants' are the ctrack.*.zst files of the trace's directory whose PROCESS record (pid,
 * parent pid, start) chains them to the program while their parents ran: never what merely
 * appeared there, which another run in the same directory also writes. A trace cut short whose
 * writer is alive belongs to a process that still runs (a daemon). The children that could not
 * create their trace say so on the launcher's status page (common/status.h). */
#ifndef CTRACK_FAMILY_H
#define CTRACK_FAMILY_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "spawn.h"
#include "status.h"
#include "summary.h"

/* One trace of the run. */
struct ct_member {
	char *path;       /* its name: the parent's as given (-o), a child's DIR/FILE */
	const char *file; /* a child's FILE, in path */
	dev_t dev;        /* the file read: a later open reads the same or nothing */
	ino_t ino;
	int ok; /* s is filled, else err says why */
	struct ct_trace_summary s;
	char err[256];
	uint64_t pid, ppid, start_ns; /* its PROCESS record (a child without one: pid from its name) */
	uint64_t end_ns;              /* when its writer stopped; UINT64_MAX when the trace is cut */
	int running;                  /* cut short (or empty), and its process is alive */
};

/* An image a process exec'd into that left no trace (a static or set-ID program, or one that could
 * not create its trace). */
struct ct_exec_gap {
	const struct ct_member *m; /* the trace that ends with the exec */
};

struct ct_family {
	int follow;         /* children were traced */
	int children;       /* ... and their traces were looked for */
	pid_t root;         /* the program's pid */
	uint64_t start_ns;  /* Unix time before the fork */
	uint64_t end_ns;    /* ... and once the program was reaped */
	char dir[PATH_MAX]; /* the traces' directory, absolute ("" if unknown) */
	int fd;             /* the program's trace as created, open for writing, or -1 */
	const char *moved;  /* NULL, or what became of its name: "removed", "replaced by ..." */
	int summed;         /* parent (and kids) hold summaries */
	struct ct_member parent;
	struct ct_member *kids; /* the descendants' traces, nkids of them */
	size_t nkids;
	struct ct_exec_gap *gaps; /* the exec'd images that left no trace, ngaps of them */
	size_t ngaps;
	struct ct_status_slot *untraced; /* the children that could not be traced (nuntraced shown) */
	size_t nuntraced;
	size_t untraced_total;       /* ... and how many said so, slots or not */
	struct ct_status_page *page; /* the launcher's status page, NULL without one */
	int status_fd;
	char status[PATH_MAX + 64]; /* CTRACK_STATUS for the shim, "" without a page */
};

/* Before the run: the directory of a trace named like trace, and with follow the status page. */
void ct_family_init(struct ct_family *f, const char *trace, int follow);

/* CTRACK_STATUS for ct_spawn's status, or NULL. */
const char *ct_family_status(const struct ct_family *f);

/* After the run r (which succeeded): takes r->trace_fd; says what became of the trace's name; with
 * sum, reads the program's trace (an empty one first gets a NOTE saying so); with children too
 * (and --follow-children), finds and reads the descendants' traces and the untraced children. */
void ct_family_collect(struct ct_family *f, struct ct_spawn_result *r, int sum, int children);

/* A read-only descriptor on m's very file (the caller closes it), or a negative errno: -ESTALE
 * when its name now names another file. */
int ct_family_open(const struct ct_family *f, const struct ct_member *m);

void ct_family_release(struct ct_family *f);

#endif
