/* SPDX-License-Identifier: MIT */
/* ctrack: runs a program with libctrack.so preloaded and reports where its trace went. The options
 * table, and main: find the shim, check the program, run it (spawn.h), find the run's traces
 * (family.h), close (closing.h), check them (verdict.h). Errors are reported here, once; the
 * program keeps its own stdio, argv and exit status. */
#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach.h"
#include "check.h"
#include "closing.h"
#include "ctrack-config.h"
#include "elf_static.h"
#include "live.h"
#include "locate.h"
#include "opttab.h"
#include "rules.h"
#include "size.h"
#include "spawn.h"
#include "tracefile.h"
#include "untraceable.h"
#include "verdict.h"

#define EXIT_USAGE 2
#define EXIT_CANNOT_EXEC 126
#define EXIT_NOT_FOUND 127
#define STR(x) #x
#define XSTR(x) STR(x)

struct options {
	const char *output; /* -o, or NULL for ctrack.NAME.PID.zst */
	int follow_children;
	int depth;
	int lanes;            /* --lanes, or 0: CTRACK_LANES as inherited */
	uint64_t sample;      /* --sample, or 0: every allocation */
	int aggregate;        /* --aggregate */
	unsigned snapshot_ms; /* --snapshot, in ms (CT_SNAPSHOT_MS_DEFAULT) */
	int quiet;
	int live; /* --live: the view of the trace while the program runs (live.h) */
	int force;
	int check_flag;          /* --check */
	int checking;            /* --check or a check option was given */
	struct ct_check_args ca; /* the check options (analyzer/check.h): ca.check, their rules */
	char **argv;             /* PROGRAM ARGS..., NULL-terminated */
	long pid;                /* -p: attach to this running process (attach.h), 0: run PROGRAM */
	double duration;         /* --duration: detach after so many seconds, 0: at Ctrl-C */
};

/* ---- the options table (analyzer/opttab.h): parsing, --help, the man page, the completion ---- */

#define OPT(field) offsetof(struct options, field)
#define G_TRACING "Tracing"
#define G_GENERAL "General"

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("ctrack: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'ctrack --help' for more information.\n", stderr);
	return EXIT_USAGE;
}

static int set_output(void *ctx, const struct ct_opt *self, const char *arg, char *err, size_t len)
{
	((struct options *)ctx)->output = arg;
	return CT_OPT_GO_ON;
}

static int set_lanes(void *ctx, const struct ct_opt *self, const char *arg, char *err, size_t len)
{
	if (ct_parse_lanes(arg, &((struct options *)ctx)->lanes) < 0)
		return snprintf(err, len, "--lanes: expected 1, 2 or 4, got '%s'", arg), EXIT_USAGE;
	return CT_OPT_GO_ON;
}

static int set_depth(void *ctx, const struct ct_opt *self, const char *arg, char *err, size_t len)
{
	if (ct_parse_depth(arg, &((struct options *)ctx)->depth) < 0)
		return snprintf(err, len, "--depth: expected a number from 1 to %d, got '%s'", CT_DEPTH_MAX,
		                arg),
		       EXIT_USAGE;
	return CT_OPT_GO_ON;
}

/* --snapshot SECONDS: a decimal number of seconds, whole milliseconds from CT_SNAPSHOT_MS_MIN to
 * CT_SNAPSHOT_MS_MAX; it implies --aggregate. */
static int set_snapshot(void *ctx, const struct ct_opt *self, const char *arg, char *err, size_t len)
{
	char *end;
	errno = 0;
	double s = strtod(arg, &end);
	double ms = s * 1000;
	if (errno || end == arg || *end || !(ms >= CT_SNAPSHOT_MS_MIN && ms <= CT_SNAPSHOT_MS_MAX))
		return snprintf(err, len, "--snapshot: expected seconds from %g to %d, got '%s'",
		                CT_SNAPSHOT_MS_MIN / 1000.0, CT_SNAPSHOT_MS_MAX / 1000, arg),
		       EXIT_USAGE;
	((struct options *)ctx)->snapshot_ms = (unsigned)(ms + 0.5);
	((struct options *)ctx)->aggregate = 1;
	return CT_OPT_GO_ON;
}

/* --sample=SIZE: a size as the check options take them, 1 byte to CT_SAMPLE_MAX. */
static int set_sample(void *ctx, const struct ct_opt *self, const char *arg, char *err, size_t len)
{
	if (ct_parse_sample(arg, &((struct options *)ctx)->sample) < 0)
		return snprintf(
		           err, len,
		           "--sample: expected a size from 1 byte to %llu MiB (4096, 512KiB, 1MiB), got '%s'",
		           CT_SAMPLE_MAX >> 20, arg),
		       EXIT_USAGE;
	return CT_OPT_GO_ON;
}

static int set_pid(void *ctx, const struct ct_opt *self, const char *arg, char *err, size_t len)
{
	char *end;
	errno = 0;
	long v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v <= 0 || v > INT_MAX)
		return snprintf(err, len, "-p: expected a process id, got '%s'", arg), EXIT_USAGE;
	((struct options *)ctx)->pid = v;
	return CT_OPT_GO_ON;
}

static int set_duration(void *ctx, const struct ct_opt *self, const char *arg, char *err, size_t len)
{
	char *end;
	errno = 0;
	double v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v > 0) || v > 1e9)
		return snprintf(err, len, "--duration: expected a number of seconds above 0, got '%s'", arg),
		       EXIT_USAGE;
	((struct options *)ctx)->duration = v;
	return CT_OPT_GO_ON;
}

static int show_help(void *ctx, const struct ct_opt *self, const char *arg, char *err, size_t len);

static int show_version(void *ctx, const struct ct_opt *self, const char *arg, char *err, size_t len)
{
	printf("ctrack %s\n", CTRACK_VERSION);
	return 0;
}

static const struct ct_opt option_table[] = {
    {.letter = 'o',
     .arg = "FILE",
     .group = G_TRACING,
     .help = "write the trace to FILE (default: ctrack.PROGRAM.PID.zst)",
     .kind = CT_OPT_CALL,
     .call = set_output,
     .flags = CT_OPT_FILE},
    {.name = "follow-children",
     .group = G_TRACING,
     .help = "trace child processes too (ctrack.NAME.PID.zst beside FILE)",
     .kind = CT_OPT_FLAG,
     .offset = OPT(follow_children)},
    {.name = "depth",
     .arg = "N",
     .group = G_TRACING,
     .help = "capture at most N stack frames (1.." XSTR(CT_DEPTH_MAX) ", default " XSTR(CT_DEPTH_DEFAULT) ")",
     .kind = CT_OPT_CALL,
     .call = set_depth},
    {.name = "lanes",
     .arg = "N",
     .group = G_TRACING,
     .help = "match the events on N threads of ctrack's (1, 2 or 4; default 1, or CTRACK_LANES): for "
             "programs whose threads allocate faster than one thread keeps up with",
     .kind = CT_OPT_CALL,
     .call = set_lanes},
    {.name = "sample",
     .arg = "SIZE",
     .group = G_TRACING,
     .help = "record one allocation per SIZE bytes allocated on average (512KiB, 1MiB, ...), chosen at "
             "random, for a cost that falls with the rate: every report's figures are then estimates. "
             "No leak classes nor --check (they need every block)",
     .kind = CT_OPT_CALL,
     .call = set_sample},
    {.name = "aggregate",
     .group = G_TRACING,
     .help = "for long runs: keep each stack's figures in the process and write a snapshot of them "
             "every --snapshot seconds and at exit, not every event (the trace grows with stacks and "
             "snapshots; every report's figures are a full trace's, memory over time at the "
             "snapshots' resolution)",
     .kind = CT_OPT_FLAG,
     .offset = OPT(aggregate)},
    {.name = "snapshot",
     .arg = "SECONDS",
     .group = G_TRACING,
     .help = "with --aggregate (which it implies): seconds between snapshots (default 1; 0.01 to "
             "86400)",
     .kind = CT_OPT_CALL,
     .call = set_snapshot},
    {.letter = 'p',
     .arg = "PID",
     .group = G_TRACING,
     .help = "attach to the running process PID instead of running a program (gdb loads the shim); "
             "Ctrl-C, --duration or the process's exit detaches, and the process runs on. Goes with "
             "-o, --force, --depth, --duration, --live, --sample, --aggregate, --snapshot and -q",
     .kind = CT_OPT_CALL,
     .call = set_pid},
    {.name = "duration",
     .arg = "SECONDS",
     .group = G_TRACING,
     .help = "with -p: detach after SECONDS",
     .kind = CT_OPT_CALL,
     .call = set_duration},
    {.letter = 'q',
     .group = G_TRACING,
     .help = "no closing summary",
     .kind = CT_OPT_FLAG,
     .offset = OPT(quiet)},
    {.name = "live",
     .group = G_TRACING,
     .help = "watch the program while it runs: a view of its heap in use, peak, allocations and "
             "frees per second and top sites, redrawn every second (up/down select, Enter "
             "backtrace, l/a/b/t sort, q closes the view and lets the program run on, traced). The "
             "program's stdin is /dev/null and its output goes to a file beside the trace "
             "(ctrack.NAME.PID.out) when they are the terminal; without a terminal, a line of "
             "figures per second on stderr. With -p: the attached process, and closing the view "
             "detaches",
     .kind = CT_OPT_FLAG,
     .offset = OPT(live)},
    {.name = "force",
     .group = G_TRACING,
     .help = "overwrite an existing trace file",
     .kind = CT_OPT_FLAG,
     .offset = OPT(force)},
    {.name = "check",
     .group = CT_CHECK_GROUP,
     .help = "check the leaks after the run: exit " XSTR(
         CT_CHECK_EXIT) " when any block is definitely or indirectly lost (--fail-on definite); "
                        "the check options below imply it",
     .kind = CT_OPT_FLAG,
     .offset = OPT(check_flag)},
    CT_OPT_STANDARD_ROWS(G_GENERAL, show_help, show_version),
};

#define NTABLES 2
#define MAX_ROWS 32 /* rows in all the tables, for getopt_long's */

/* ctrack's options: its own, then the check options (analyzer/check.h). */
static void get_tables(struct ct_opttab t[NTABLES])
{
	t[0] = (struct ct_opttab){option_table, sizeof(option_table) / sizeof(option_table[0]), 0};
	t[1] = (struct ct_opttab){ct_check_options, ct_check_noptions, OPT(ca)};
}

static const char *const synopsis[] = {"[OPTIONS] PROGRAM [ARGS...]",
                                       "-p PID [--duration SECONDS] [-o FILE] [--sample=SIZE | --aggregate]",
                                       NULL};
static const char *const groups[] = {G_TRACING, CT_CHECK_GROUP, G_GENERAL, NULL};
static const char *const description[] = {
    "ctrack runs PROGRAM with its heap tracer (the shim libctrack.so) preloaded and writes every "
    "allocation and free, with its backtrace, to a compressed trace file. At the end it says how "
    "much the program leaked and where the trace went; ctrack-analyze(1) reports on the trace.",
    "PROGRAM keeps its own standard streams, arguments and exit status. The shim is looked for "
    "beside ctrack (a build tree), then in " CTRACK_SHIM_RELDIR " relative to ctrack's directory "
    "(an installed tree, wherever it was moved), then in " CTRACK_SHIM_DIR "; the environment "
    "variable " CT_ENV_SHIM " names another.",
    NULL,
};
static const char *const notes[] = {
    "Options end at the first non-option argument or at '--'. ctrack-analyze FILE reports on "
    "the trace.",
    NULL,
};
static const char *const exit_status[] = {
    "PROGRAM's exit status, or 128 plus the signal that killed it.",
    "With --check or a check option: " XSTR(CT_CHECK_EXIT) " when the program succeeded but a rule "
                                                           "of the check is broken.",
    "1: ctrack could not trace the program (a statically linked program, a trace file that "
    "exists); 2: a usage error, or no shim; 126: PROGRAM cannot be run; 127: PROGRAM not found.",
    NULL,
};
static const struct ct_example examples[] = {
    {"ctrack ./myprog --its-option", "Trace a run; the trace is ctrack.myprog.PID.zst."},
    {"ctrack -o build.zst --follow-children make -j4",
     "Trace a build and every process it starts, each in its own file beside build.zst."},
    {"ctrack -p 4242 --duration 60",
     "Trace the running process 4242 for a minute (needs gdb), then leave it running untraced."},
    {"ctrack --check --suppressions lsan.supp ./unit-tests",
     "A CI check: exit 23 when the tests lose memory, leaving out the leaks lsan.supp names."},
    {NULL, NULL},
};
static const struct ct_optdoc doc = {
    .prog = "ctrack",
    .version = CTRACK_VERSION,
    .brief = "run a program under the ctrack heap and leak tracer",
    .synopsis = synopsis,
    .summary = "Run PROGRAM with the ctrack heap tracer preloaded and write its allocation trace.",
    .description = description,
    .groups = groups,
    .notes = notes,
    .examples = examples,
    .exit_status = exit_status,
    .see_also = "ctrack-analyze(1), valgrind(1)",
    .operand_is_command = 1,
};

/* --help, and the build's --help-man and --help-completion. */
static int show_help(void *ctx, const struct ct_opt *self, const char *arg, char *err, size_t len)
{
	struct ct_opttab t[NTABLES];
	get_tables(t);
	return ct_opt_show(self, &doc, t, NTABLES);
}

/* getopt_long's value for row i of table k without a letter: above any letter. */
#define LONG_VAL(k, i) (256 + 256 * (int)(k) + (int)(i))

/* getopt_long's tables from the option tables: "+:" stops at the program and reports a missing
 * argument as ':'. */
static void getopt_tables(const struct ct_opttab *t, char *shorts, struct option *longs)
{
	char *s = shorts;
	size_t n = 0;
	*s++ = '+';
	*s++ = ':';
	for (size_t k = 0; k < NTABLES; k++)
		for (size_t i = 0; i < t[k].n; i++) {
			const struct ct_opt *r = &t[k].v[i];
			if (r->letter) {
				*s++ = r->letter;
				if (r->arg)
					*s++ = ':';
			}
			if (r->name) /* with a letter too, the long name gives the letter */
				longs[n++] =
				    (struct option){r->name, r->arg ? required_argument : no_argument, NULL,
				                    r->letter ? r->letter : LONG_VAL(k, i)};
		}
	*s = '\0';
	longs[n] = (struct option){0};
}

static const struct ct_opt *find_option(const struct ct_opttab *t, int c, const struct ct_opttab **in)
{
	for (size_t k = 0; k < NTABLES; k++)
		for (size_t i = 0; i < t[k].n; i++)
			if (c == (t[k].v[i].letter ? t[k].v[i].letter : LONG_VAL(k, i))) {
				*in = &t[k];
				return &t[k].v[i];
			}
	return NULL;
}

/* getopt_long's ':' (missing argument) or '?' (unknown option, optopt 0 for a long one). */
static int bad_option(int c, char **argv)
{
	if (c == ':')
		return usage_error("option '%s' needs an argument", argv[optind - 1]);
	if (optopt)
		return usage_error("unknown option '-%c'", optopt);
	return usage_error("unknown option '%s'", argv[optind - 1]);
}

/* The check that the options ask for: --check and the check options imply definite leaks,
 * unless --fail-on names another level (--max-peak alone checks the peak only). */
static void finish_check(struct options *o)
{
	struct ct_check_args *a = &o->ca;
	int implied = o->check_flag || a->max_leaked || a->nsupp || a->no_builtin;
	o->checking = implied || a->rules;
	if (implied && !a->check.fail_on)
		a->check.fail_on = CT_FAIL_DEFINITE;
	a->check.builtin = !a->no_builtin;
}

/* Returns CT_OPT_GO_ON with o filled, else the exit status (help, version, errors). */
static int parse_args(int argc, char **argv, struct options *o)
{
	struct ct_opttab t[NTABLES];
	get_tables(t);
	char shorts[2 + 2 * MAX_ROWS + 1], err[1024];
	struct option longs[MAX_ROWS + 1];
	int c;
	assert(t[0].n + t[1].n <= MAX_ROWS);
	getopt_tables(t, shorts, longs);
	*o = (struct options){.depth = CT_DEPTH_DEFAULT, .snapshot_ms = CT_SNAPSHOT_MS_DEFAULT};
	o->ca.supp_files = calloc((size_t)argc, sizeof(*o->ca.supp_files));
	if (!o->ca.supp_files) {
		fputs("ctrack: out of memory\n", stderr);
		return 1;
	}
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		const struct ct_opttab *in;
		const struct ct_opt *r = find_option(t, c, &in);
		if (!r)
			return bad_option(c, argv);
		int rc = ct_opt_apply(r, in, o, optarg, err, sizeof(err));
		if (rc == EXIT_USAGE)
			return usage_error("%s", err);
		if (rc > 0)
			fprintf(stderr, "ctrack: %s\n", err);
		if (rc != CT_OPT_GO_ON)
			return rc;
	}
	if (o->pid && optind < argc)
		return usage_error("-p attaches to a running process: no program may be given");
	if (o->duration && !o->pid)
		return usage_error("--duration goes with -p");
	if (o->pid && (o->follow_children || o->lanes > 1 || o->check_flag || o->ca.rules))
		return usage_error("-p takes -o, --force, --depth, --duration, --live, --sample, "
		                   "--aggregate, --snapshot and -q only");
	if (o->pid && o->live && o->duration)
		return usage_error(
		    "--live with -p detaches when the view is closed: --duration cannot go with it");
	if (o->sample && o->aggregate)
		return usage_error(
		    "--sample cannot go with --aggregate yet: a snapshot's figures are not weighed");
	if (o->pid)
		return CT_OPT_GO_ON;
	if (optind >= argc)
		return usage_error("no program given");
	o->argv = argv + optind;
	finish_check(o);
	if (o->sample && o->checking)
		return usage_error("--sample cannot go with --check or a check option: a sampled trace sees "
		                   "one allocation in many, and a leak check needs every block");
	return CT_OPT_GO_ON;
}

/* ---- errors ---- */

/* err: a positive errno from finding or exec'ing prog. Returns the shell's exit status for it. */
static int exec_error(const char *prog, int err)
{
	if (err == ENOENT && !strchr(prog, '/'))
		fprintf(stderr, "ctrack: %s: command not found\n", prog);
	else
		fprintf(stderr, "ctrack: %s: %s\n", prog, strerror(err));
	return err == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC;
}

/* err: a positive errno from ct_spawn_run. Returns the exit status. */
static int spawn_error(const struct ct_spawn_result *r, const char *prog, int err)
{
	switch (r->stage) {
	case CT_SPAWN_PIPE:
		fprintf(stderr, "ctrack: socketpair: %s\n", strerror(err));
		return 1;
	case CT_SPAWN_FORK:
		fprintf(stderr, "ctrack: fork: %s\n", strerror(err));
		return 1;
	case CT_SPAWN_CREATE:
		if (err == EEXIST && ct_tracefile_special(r->trace)) {
			fprintf(stderr,
			        "ctrack: cannot create '%s': it is %s; traces go to regular files only, and "
			        "--force never replaces anything else\n",
			        r->trace, ct_tracefile_special(r->trace));
			return 1;
		}
		fprintf(stderr, "ctrack: cannot create '%s': %s%s\n", r->trace, strerror(err),
		        err == EEXIST ? " (use --force to overwrite)" : "");
		return 1;
	case CT_SPAWN_EXEC:
		return exec_error(prog, err);
	case CT_SPAWN_SETUP:
		break;
	}
	fprintf(stderr, "ctrack: cannot prepare the environment: %s\n", strerror(err));
	return 1;
}

/* ---- main ---- */

/* The shim's path into buf: 0, or the exit status after saying why there is none. */
static int find_shim(char *buf, size_t len)
{
	const char *wanted = getenv(CT_ENV_SHIM);
	if (ct_locate_shim(buf, len) < 0) {
		if (wanted && *wanted)
			fprintf(stderr, "ctrack: cannot use the shim %s=%s: no such regular file\n",
			        CT_ENV_SHIM, wanted);
		else
			fprintf(stderr, "ctrack: cannot find %s beside ctrack, in %s beside it, or in %s\n",
			        CTRACK_SHIM_NAME, CTRACK_SHIM_RELDIR, CTRACK_SHIM_DIR);
		return EXIT_USAGE;
	}
	if (strpbrk(buf, " :")) { /* LD_PRELOAD splits on both */
		fprintf(stderr,
		        "ctrack: the shim path '%s' has a space or colon; LD_PRELOAD cannot hold it\n", buf);
		return EXIT_USAGE;
	}
	return 0;
}

/* The program's path into buf: 0, or the exit status after saying why it cannot be traced (a
 * program traced only in part gets a warning). */
static int find_program(const char *prog, char *buf, size_t len)
{
	int rc = ct_locate_program(prog, buf, len);
	if (rc < 0)
		return exec_error(prog, -rc);
	if (ct_elf_is_static(buf)) {
		fprintf(stderr,
		        "ctrack: %s is statically linked; LD_PRELOAD cannot trace it (link it dynamically)\n",
		        prog);
		return 1;
	}
	char why[512];
	enum ct_traceable t = ct_untraceable(buf, why, sizeof(why));
	if (t != CT_TRACEABLE)
		fprintf(stderr, "ctrack: %s%s: %s\n", t == CT_TRACE_WARN ? "warning: " : "", prog, why);
	return t == CT_TRACE_REFUSE;
}

static int run(struct options *o, const char *shim, const char *exe)
{
	struct ct_family family;
	struct ct_spawn_result r;
	char name[PATH_MAX];
	struct ct_live live = {.prog = o->argv[0], .force = o->force};
	/* Any pid will do: the family only needs the trace's directory, before the run. */
	ct_tracefile_name(name, sizeof(name), o->output, o->argv[0], 0);
	ct_family_init(&family, name, o->follow_children);
	const struct ct_spawn s = {
	    .shim = shim,
	    .exe = exe,
	    .argv = o->argv,
	    .output = o->output,
	    .depth = o->depth,
	    .lanes = o->lanes,
	    .sample = o->sample,
	    .aggregate = o->aggregate ? o->snapshot_ms : 0,
	    .follow_children = o->follow_children,
	    .force = o->force,
	    .status = ct_family_status(&family),
	    .before_exec = o->live ? ct_live_before_exec : NULL,
	    .running = o->live ? ct_live_running : NULL,
	    .hook_arg = &live,
	};
	fflush(stdout); /* the child must not inherit unwritten output */
	int rc = ct_spawn_run(&s, &r);
	if (rc < 0 && o->live)
		ct_live_failed(&r);
	if (rc < 0) {
		ct_family_release(&family);
		return spawn_error(&r, o->argv[0], -rc);
	}
	/* With -q and no check nothing is read: only a replaced trace file is said. */
	int reading = !o->quiet || o->checking;
	ct_family_collect(&family, &r, reading, reading && o->follow_children);
	ct_closing_print(&family, o->quiet);
	if (r.signal)
		ct_closing_signal(o->argv[0], r.signal);
	/* The program's own failure wins; the verdicts go to stderr, beside the closing message. */
	rc = o->checking ? ct_verdict(&family, &o->ca.check, o->ca.supp_files, o->ca.nsupp, r.status)
	                 : r.status;
	ct_family_release(&family);
	return rc;
}

/* Finds the shim and the program, then runs it; returns ctrack's exit status. */
static int trace(struct options *o)
{
	char shim[PATH_MAX], exe[PATH_MAX];
	int rc = find_shim(shim, sizeof(shim));
	if (rc)
		return rc;
	if (o->pid) {
		const struct ct_attach a = {.pid = (pid_t)o->pid,
		                            .shim = shim,
		                            .output = o->output,
		                            .depth = o->depth,
		                            .force = o->force,
		                            .quiet = o->quiet,
		                            .duration = o->duration,
		                            .live = o->live,
		                            .sample = o->sample,
		                            .snapshot_ms = o->aggregate ? o->snapshot_ms : 0};
		return ct_attach_run(&a);
	}
	rc = find_program(o->argv[0], exe, sizeof(exe));
	if (rc)
		return rc;
	return run(o, shim, exe);
}

int main(int argc, char **argv)
{
	struct options o;
	int rc = parse_args(argc, argv, &o);
	if (rc == CT_OPT_GO_ON)
		rc = trace(&o);
	ct_check_release(&o.ca.check); /* what --suppressions read, and the check its built-in list */
	free(o.ca.supp_files);
	return rc;
}
