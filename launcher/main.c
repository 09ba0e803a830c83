/* SPDX-License-Identifier: MIT */
/* ctrack: runs a program with libctrack.so preloaded and reports where its trace went. The options
 * table, and main: find the shim, check the program, run it (spawn.h), find the run's traces
 * (family.h), close (closing.h), check them (verdict.h). Errors are reported here, once; the
 * program keeps its own stdio, argv and exit status. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "closing.h"
#include "ctrack-config.h"
#include "elf_static.h"
#include "locate.h"
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
	int quiet;
	int force;
	int checking;          /* --check, --fail-on, --max-leaked or --max-peak */
	struct ct_check check; /* their rules (analyzer/check.h) */
	const char **supp;     /* the --suppressions files, read again for each trace checked */
	size_t nsupp;
	char **argv; /* PROGRAM ARGS..., NULL-terminated */
};

/* ---- the options table ---- */

/* An option's parser returns GO_ON, or the exit status to stop with. */
#define GO_ON (-1)

struct option_spec {
	int letter;       /* the short option ('o'), or 0 for a long one */
	const char *name; /* the long option ("depth") when letter is 0 */
	const char *arg;  /* the argument's name in the help ("N"), or NULL for a flag */
	int (*parse)(struct options *o, const char *arg);
	const char *help;
};

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

static int set_output(struct options *o, const char *arg)
{
	o->output = arg;
	return GO_ON;
}

static int set_follow(struct options *o, const char *arg)
{
	o->follow_children = 1;
	return GO_ON;
}

static int set_depth(struct options *o, const char *arg)
{
	if (ct_parse_depth(arg, &o->depth) < 0)
		return usage_error("--depth: expected a number from 1 to %d, got '%s'", CT_DEPTH_MAX, arg);
	return GO_ON;
}

static int set_quiet(struct options *o, const char *arg)
{
	o->quiet = 1;
	return GO_ON;
}

static int set_force(struct options *o, const char *arg)
{
	o->force = 1;
	return GO_ON;
}

static int set_check(struct options *o, const char *arg)
{
	o->checking = 1;
	if (!o->check.fail_on)
		o->check.fail_on = CT_FAIL_DEFINITE;
	return GO_ON;
}

static int set_fail_on(struct options *o, const char *arg)
{
	int level = ct_check_parse_level(arg);
	if (level < 0)
		return usage_error("--fail-on: expected definite, possible, reachable or any, got '%s'", arg);
	o->check.fail_on = (enum ct_fail_on)level;
	o->checking = 1;
	return GO_ON;
}

static int set_max_leaked(struct options *o, const char *arg)
{
	if (ct_parse_size(arg, &o->check.max_leaked) < 0)
		return usage_error("--max-leaked: expected a size such as 4096, 10KiB or 1.5MB, got '%s'",
		                   arg);
	return set_check(o, arg);
}

static int set_max_peak(struct options *o, const char *arg)
{
	if (ct_parse_size(arg, &o->check.max_peak) < 0)
		return usage_error("--max-peak: expected a size such as 4096, 10KiB or 1.5MB, got '%s'", arg);
	o->check.peak_rule = 1;
	o->checking = 1;
	return GO_ON;
}

static int add_suppressions(struct options *o, const char *arg)
{
	char err[512];
	if (ct_check_add_suppressions(&o->check, arg, err, sizeof(err)) < 0) {
		fprintf(stderr, "ctrack: --suppressions: %s\n", err);
		return 2;
	}
	o->supp[o->nsupp++] = arg; /* room for every argument */
	return set_check(o, arg);
}

static int no_builtin(struct options *o, const char *arg)
{
	o->check.builtin = 0;
	return set_check(o, arg);
}

static int show_help(struct options *o, const char *arg);

static int show_version(struct options *o, const char *arg)
{
	printf("ctrack %s\n", CTRACK_VERSION);
	return 0;
}

static const struct option_spec option_table[] = {
    {'o', NULL, "FILE", set_output, "write the trace to FILE (default: ctrack.PROGRAM.PID.zst)"},
    {0, "follow-children", NULL, set_follow, "trace child processes too (ctrack.NAME.PID.zst beside FILE)"},
    {0, "depth", "N", set_depth,
     "capture at most N stack frames (1.." XSTR(CT_DEPTH_MAX) ", default " XSTR(CT_DEPTH_DEFAULT) ")"},
    {'q', NULL, NULL, set_quiet, "no closing summary"},
    {0, "force", NULL, set_force, "overwrite an existing trace file"},
    {0, "check", NULL, set_check,
     "check the leaks after the run: exit " XSTR(
         CT_CHECK_EXIT) " when any block is definitely or indirectly lost"},
    {0, "fail-on", "LEVEL", set_fail_on,
     "the classes that fail the check: definite (and indirect), possible, reachable or any"},
    {0, "max-leaked", "SIZE", set_max_leaked, "allow up to SIZE bytes in those classes (default 0)"},
    {0, "max-peak", "SIZE", set_max_peak, "fail the check when the heap peaks above SIZE"},
    {0, "suppressions", "FILE", add_suppressions,
     "leaks the check leaves out (leak:PATTERN lines, as LeakSanitizer)"},
    {0, "no-builtin-suppressions", NULL, no_builtin,
     "count what the C runtime and the loader keep until exit by design too"},
    {'h', "help", NULL, show_help, "show this help and exit"},
    {0, "version", NULL, show_version, "show the version and exit"},
};
#define N_OPTIONS (sizeof(option_table) / sizeof(option_table[0]))

/* getopt_long's value for the long option at index i of the table: above any letter. */
#define LONG_VAL(i) (256 + (int)(i))

static int show_help(struct options *o, const char *arg)
{
	char left[32];
	fputs("Usage: ctrack [OPTIONS] PROGRAM [ARGS...]\n"
	      "Run PROGRAM with the ctrack heap tracer preloaded and write its allocation trace.\n\n",
	      stdout);
	for (size_t i = 0; i < N_OPTIONS; i++) {
		const struct option_spec *t = &option_table[i];
		const char *sep = t->arg ? " " : "", *arg_name = t->arg ? t->arg : "";
		if (t->letter && t->name)
			snprintf(left, sizeof(left), "  -%c, --%s%s%s", t->letter, t->name, sep, arg_name);
		else if (t->letter)
			snprintf(left, sizeof(left), "  -%c%s%s", t->letter, sep, arg_name);
		else
			snprintf(left, sizeof(left), "      --%s%s%s", t->name, sep, arg_name);
		printf("%-23s  %s\n", left, t->help);
	}
	fputs("\nOptions end at the first non-option argument or at '--'.\n"
	      "Analyze the trace with: ctrack-analyze FILE\n",
	      stdout);
	return 0;
}

/* getopt_long's tables from option_table: "+:" stops at the program and reports a missing
 * argument as ':'. */
static void getopt_tables(char *shorts, struct option *longs)
{
	char *s = shorts;
	size_t n = 0;
	*s++ = '+';
	*s++ = ':';
	for (size_t i = 0; i < N_OPTIONS; i++) {
		const struct option_spec *t = &option_table[i];
		if (t->letter) {
			*s++ = (char)t->letter;
			if (t->arg)
				*s++ = ':';
		}
		if (t->name) /* with a letter too, the long name gives the letter */
			longs[n++] = (struct option){t->name, t->arg ? required_argument : no_argument, NULL,
			                             t->letter ? t->letter : LONG_VAL(i)};
	}
	*s = '\0';
	longs[n] = (struct option){0};
}

static const struct option_spec *find_option(int c)
{
	for (size_t i = 0; i < N_OPTIONS; i++)
		if (c == (option_table[i].letter ? option_table[i].letter : LONG_VAL(i)))
			return &option_table[i];
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

/* Returns GO_ON with o filled, else the exit status (help, version, errors). */
static int parse_args(int argc, char **argv, struct options *o)
{
	char shorts[2 + 2 * N_OPTIONS + 1];
	struct option longs[N_OPTIONS + 1];
	int c;
	getopt_tables(shorts, longs);
	*o = (struct options){.depth = CT_DEPTH_DEFAULT, .check.builtin = 1};
	o->supp = calloc((size_t)argc, sizeof(*o->supp));
	if (!o->supp) {
		fputs("ctrack: out of memory\n", stderr);
		return 1;
	}
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		const struct option_spec *t = find_option(c);
		if (!t)
			return bad_option(c, argv);
		int rc = t->parse(o, optarg);
		if (rc != GO_ON)
			return rc;
	}
	if (optind >= argc)
		return usage_error("no program given");
	o->argv = argv + optind;
	return GO_ON;
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
	/* Any pid will do: the family only needs the trace's directory, before the run. */
	ct_tracefile_name(name, sizeof(name), o->output, o->argv[0], 0);
	ct_family_init(&family, name, o->follow_children);
	const struct ct_spawn s = {
	    .shim = shim,
	    .exe = exe,
	    .argv = o->argv,
	    .output = o->output,
	    .depth = o->depth,
	    .follow_children = o->follow_children,
	    .force = o->force,
	    .status = ct_family_status(&family),
	};
	fflush(stdout); /* the child must not inherit unwritten output */
	int rc = ct_spawn_run(&s, &r);
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
	rc = o->checking ? ct_verdict(&family, &o->check, o->supp, o->nsupp, r.status) : r.status;
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
	rc = find_program(o->argv[0], exe, sizeof(exe));
	if (rc)
		return rc;
	return run(o, shim, exe);
}

int main(int argc, char **argv)
{
	struct options o;
	int rc = parse_args(argc, argv, &o);
	if (rc == GO_ON)
		rc = trace(&o);
	ct_check_release(&o.check); /* what --suppressions read, and the check its built-in list */
	free(o.supp);
	return rc;
}
