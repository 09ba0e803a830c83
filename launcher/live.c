/* SPDX-License-Identifier: MIT */
/* ctrack --live (live.h): the child's descriptors made the view's room before the exec, and the
 * view in the parent while the program runs. The launcher keeps its signal handling (spawn.c:
 * SIGTERM and SIGHUP passed on to the program, SIGINT ignored): the view ends when the trace does. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "live.h"
#include "liveview.h"
#include "tracefile.h"

/* The output file's name for the trace's: its .zst suffix, if any, replaced by .out. */
static void output_name(const char *trace, char *buf, size_t len)
{
	size_t n = strlen(trace);
	if (n > 4 && !strcmp(trace + n - 4, ".zst"))
		n -= 4;
	snprintf(buf, len, "%.*s.out", (int)n, trace);
}

/* Whether the program's output goes to the file: its stdout or stderr is a terminal. */
static int output_to_file(void)
{
	return isatty(STDOUT_FILENO) || isatty(STDERR_FILENO);
}

int ct_live_before_exec(const char *trace, void *arg)
{
	const struct ct_live *l = arg;
	char name[PATH_MAX];
	if (isatty(STDIN_FILENO)) {
		int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (in < 0 || dup2(in, STDIN_FILENO) < 0)
			return -errno;
		close(in);
	}
	if (!output_to_file())
		return 0;
	output_name(trace, name, sizeof(name));
	int out = ct_tracefile_create(name, l->force); /* as the trace: never another's file */
	if (out < 0)
		return out;
	if ((isatty(STDOUT_FILENO) && dup2(out, STDOUT_FILENO) < 0) ||
	    (isatty(STDERR_FILENO) && dup2(out, STDERR_FILENO) < 0))
		return -errno;
	close(out);
	return 0;
}

void ct_live_failed(const struct ct_spawn_result *r)
{
	char name[PATH_MAX];
	if (r->stage != CT_SPAWN_EXEC || !r->trace[0] || !output_to_file())
		return;
	output_name(r->trace, name, sizeof(name));
	unlink(name); /* made by before_exec, which ran: still empty, nothing ran */
}

void ct_live_running(const struct ct_spawn_result *r, void *arg)
{
	const struct ct_live *l = arg;
	char output[PATH_MAX], err[512];
	struct ct_model m;
	struct ct_liveview_end end = {0};
	output_name(r->trace, output, sizeof(output));
	const struct ct_liveview_opts o = {.trace = r->trace,
	                                   .writer = (uint64_t)r->pid,
	                                   .output = output_to_file() ? output : NULL,
	                                   .plain = stderr};
	int rc = ct_model_init(&m) < 0 ? (snprintf(err, sizeof(err), "out of memory"), -1)
	                               : ct_liveview_run(&o, &m, &end, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "ctrack: --live: %s\n", err);
	if (rc < 0 || end.state == CT_FOLLOW_STOPPED)
		fprintf(
		    stderr, "ctrack: the live view is closed; %s (pid %d) runs on, traced, to its end%s%s\n",
		    l->prog, (int)r->pid, o.output ? "; its output goes to " : "", o.output ? o.output : "");
	ct_model_destroy(&m);
}
