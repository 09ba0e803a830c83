/* SPDX-License-Identifier: MIT */
/* ctrack-analyze: reads a trace, builds the model, writes the outputs asked for (the `outputs` table:
 * the text or JSON report on stdout, flame graphs, HTML, pprof, ...), or compares two traces.
 * Exit status: 0 (also for a truncated or damaged trace, with a warning), 1 on error or when a check
 * of a damaged trace holds on what was read (a damaged trace never passes), 2 on a usage error, 23
 * (CT_CHECK_EXIT) when a rule of --fail-on, --max-leaked, --max-peak or --baseline is broken. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "histogram.h"
#include "baseline.h"
#include "check.h"
#include "ctrack-config.h"
#include "debuginfo.h"
#include "diagnose.h"
#include "export.h"
#include "outfile.h"
#include "reader.h"
#include "report.h"
#include "size.h"
#include "suppress.h"

#define PROG "ctrack-analyze"

/* What the writers are given: the report, and the options that tune them. */
struct exports {
	const struct ct_report *r;
	struct ct_tree tree; /* root first (the folded stacks, the flame graph unless --reverse) */
	int has_tree;        /* tree is built: --diff builds it, else the first writer that needs it */
	enum ct_cost cost;
	int reverse, diff, pprof_peak;
	enum ct_fail_on ci_level; /* the leaks the CI formats list (check.h) */
};

/* x's root-first tree, built on first use: the exporters that draw their own (HTML, speedscope,
 * massif) never hold two trees at once. */
static int root_tree(struct exports *x, const struct ct_tree **t)
{
	int rc = x->has_tree ? 0 : ct_tree_build(&x->tree, x->r, 0);
	x->has_tree = !rc;
	*t = &x->tree;
	return rc;
}

static int write_flamegraph(FILE *out, struct exports *x)
{
	struct ct_tree reversed;
	const struct ct_tree *t = &reversed;
	int rc, rebuild = x->reverse && !x->diff; /* --diff's tree is reversed already */
	if ((rc = rebuild ? ct_tree_build(&reversed, x->r, 1) : root_tree(x, &t)))
		return rc;
	/* Zooming reveals detail, so a standalone graph keeps frames down to 0.1 px, but not without
	 * bound: a trace of a million distinct stacks must still give a file a browser opens. */
	struct ct_flame_opts fo = {.cost = x->cost, .diff = x->diff, .max_frames = 30000};
	rc = ct_write_flamegraph(out, t, &fo);
	if (rebuild)
		ct_tree_destroy(&reversed);
	return rc;
}

static int write_folded(FILE *out, struct exports *x)
{
	const struct ct_tree *t;
	int rc = root_tree(x, &t);
	return rc ? rc : ct_write_folded(out, t, x->cost);
}
static int write_html(FILE *out, struct exports *x)
{
	return ct_write_html(out, x->r);
}
static int write_pprof(FILE *out, struct exports *x)
{
	return ct_write_pprof(out, x->r, x->pprof_peak);
}
static int write_speedscope(FILE *out, struct exports *x)
{
	return ct_write_speedscope(out, x->r);
}
static int write_massif(FILE *out, struct exports *x)
{
	return ct_write_massif(out, x->r);
}
static int write_junit(FILE *out, struct exports *x)
{
	return ct_write_junit(out, x->r, (int)x->ci_level);
}
static int write_sarif(FILE *out, struct exports *x)
{
	return ct_write_sarif(out, x->r, (int)x->ci_level);
}
static int write_github(FILE *out, struct exports *x)
{
	return ct_write_github(out, x->r, (int)x->ci_level);
}

/* The reports print to their report's stream: a copy of it aimed at out. */
static int write_json(FILE *out, struct exports *x)
{
	struct ct_report r = *x->r;
	r.out = out;
	return ct_report_json(&r);
}
static int write_histogram(FILE *out, struct exports *x)
{
	struct ct_histogram h;
	ct_histogram_of(x->r->m, &h);
	ct_histogram_text(out, &h);
	return 0;
}
static int write_text(FILE *out, struct exports *x)
{
	struct ct_report r = *x->r;
	r.out = out;
	return ct_report_text(&r);
}

enum {
	OUT_FILE = 1, /* the option takes a FILE ("-": stdout); else it is a flag and writes to stdout */
	OUT_DIFF = 2, /* also with --diff (which writes its own report on stdout) */
};

/* Every output, one row each. The files asked for are written first, in this order, then the
 * report on stdout: --json, or the text report when no other output is asked for. */
static const struct output {
	const char *option; /* NULL: the text report, the default */
	int (*write)(FILE *out, struct exports *x);
	unsigned flags;       /* OUT_* */
	const char *synopsis; /* a file option's words in the usage lines, with the options that tune it */
	const char *help;     /* its lines in --help, with the options that tune it */
} outputs[] = {
    {"--json", write_json, OUT_DIFF, NULL,
     "  --json           one JSON document on stdout (schema: docs/json-schema.md)\n"},
    {"--flamegraph", write_flamegraph, OUT_FILE | OUT_DIFF,
     "[--flamegraph FILE.svg] [--cost COST] [--reverse]",
     "  --flamegraph FILE  an interactive SVG flame graph (click to zoom, search, tooltips)\n"
     "  --cost COST      what flame graph widths measure: leaked, peak, allocations, temporary or\n"
     "                   allocated (bytes); default leaked when the program leaked, else peak\n"
     "  --reverse        the flame graph upside down from the allocation sites (icicle: callers below)\n"},
    {"--folded", write_folded, OUT_FILE, "[--folded FILE]",
     "  --folded FILE    folded stacks (main;parse;xmalloc 1234) for flamegraph.pl or inferno\n"},
    {"--html", write_html, OUT_FILE, "[--html FILE.html]",
     "  --html FILE      a self-contained HTML report: summary, memory over time, flame graphs, leaks\n"},
    {"--pprof", write_pprof, OUT_FILE, "[--pprof FILE.pb.gz] [--pprof-at exit|peak]",
     "  --pprof FILE     pprof's profile.proto, gzipped (go tool pprof FILE); in-use figures are the\n"
     "                   leaks at exit, or the heap at its peak with --pprof-at peak\n"},
    {"--speedscope", write_speedscope, OUT_FILE, "[--speedscope FILE.json]",
     "  --speedscope FILE  speedscope's JSON format, one profile per cost\n"},
    {"--massif", write_massif, OUT_FILE, "[--massif FILE]",
     "  --massif FILE    valgrind massif's format (ms_print FILE, massif-visualizer)\n"},
    {"--junit", write_junit, OUT_FILE, "[--junit FILE.xml]",
     "  --junit FILE     JUnit XML for CI servers: one failing testcase per leak site\n"},
    {"--sarif", write_sarif, OUT_FILE, "[--sarif FILE.sarif]",
     "  --sarif FILE     SARIF 2.1.0 (code scanning): one result per leak site, with its backtrace\n"},
    {"--github", write_github, 0, "[--github]",
     "  --github         GitHub Actions annotations on stdout: one ::error line per leak site\n"},
    {"--histogram", write_histogram, 0, "[--histogram]",
     "  --histogram      the allocation sizes on stdout: power-of-two buckets, with their\n"
     "                   allocations, bytes, temporary allocations and leaked blocks\n"},
    {NULL, write_text, 0, NULL, NULL},
};

#define NOUTPUTS (sizeof(outputs) / sizeof(outputs[0]))
#define USAGE_WIDTH 100 /* the usage lines wrap before this column */

static const char usage_head[] =
    "usage: " PROG " [--json] [--top N] [--callers N] [--group site|backtrace] [--fold FILE]\n"
    "       [--no-auto-fold] [--all-frames] [--full-stacks] [--debug-dir DIR]... TRACE\n";
static const char usage_modes[] =
    "       " PROG " [--json] [--flamegraph FILE.svg] [--cost COST] --diff BASE NEW\n"
    "       " PROG " [--json] --symbols BINARY...\n"
    "       " PROG " --fail-on LEVEL [--max-leaked SIZE] [--max-peak SIZE] [--json] TRACE\n"
    "       " PROG " --baseline BASE [--max-growth 5%|SIZE] [--fail-on LEVEL] TRACE\n"
    "       " PROG " [--between FROM,TO] TRACE\n"
    "Reports the leaks, the peak heap and the busiest allocation sites of a ctrack trace.\n";
static const char usage_tail[] =
    "  --diff BASE NEW  per backtrace, the change in leaked bytes, peak and allocations from BASE\n"
    "                   to NEW, matched by function, file and line; with --flamegraph, coloured\n"
    "                   red where NEW grew and blue where it shrank; with --fail-on or --max-growth,\n"
    "                   then compared as --baseline compares\n"
    "  --baseline BASE  compare TRACE with BASE (a trace, or a saved --json report) per site (first\n"
    "                   shown frame's function and file): exit 23 when a site's leaked bytes of the\n"
    "                   --fail-on level (default definite), a site's bytes at the peak, the total\n"
    "                   leaked or the peak heap grew past --max-growth (a share like 5%, or a SIZE;\n"
    "                   default 0), listing what grew and what is new\n"
    "  --between FROM,TO  only what happened between the marks FROM and TO (ctrack_mark() in the\n"
    "                   program, include/ctrack/ctrack.h): allocations made between them, and as\n"
    "                   leaked the blocks live at TO less those live at FROM, per site\n"
    "  A FILE of - is standard output; writing files replaces the text report (not --json).\n"
    "  --top N          sites per ranking (default 10; the JSON 'leaks' list is always complete)\n"
    "  --callers N      under a site reached by several backtraces, the N largest with their own\n"
    "                   figures, the rest summed on one line (default 3)\n"
    "  --group site|backtrace  one entry per allocation site (first shown frame's function, file\n"
    "                   and line; default) or per backtrace after folding\n"
    "  --fold FILE      also fold frames matching FILE's patterns (one per line, '*' wildcard,\n"
    "                   # comments; docs/fold.md); repeatable up to 8 times\n"
    "  --no-auto-fold   do not fold the allocator wrappers found in the trace (xmalloc, ...: functions\n"
    "                   that only pass their callers' sizes on to malloc); the report names them\n"
    "  --all-frames     show allocator frames (operator new, std::allocator, ...) instead of folding\n"
    "  --full-stacks    keep the frames below main and below a thread's start routine (_start,\n"
    "                   __libc_start_main, start_thread, __clone3)\n"
    "  --suppressions FILE  leaks to leave out of the check, LeakSanitizer's leak:PATTERN lines (a\n"
    "                   plain report keeps them and names what each takes in the checks)\n"
    "  --no-builtin-suppressions  the checks (--fail-on, --baseline, the CI formats) count what the\n"
    "                   C runtime, the loader and libstdc++ keep until exit by design too (README)\n"
    "  --fail-on LEVEL  check the leaks (CI): exit 23 when a block (with --max-leaked, more bytes\n"
    "                   than it allows) is definitely or indirectly lost (definite; the default with\n"
    "                   --max-leaked), or also possibly lost (possible), or leaked at all (reachable,\n"
    "                   any), listing them under a verdict that replaces the text report; 1 when\n"
    "                   the trace has no leak classes for definite or possible, or is damaged\n"
    "                   (then no check passes: 'check incomplete', 1 unless a rule is broken)\n"
    "  --max-leaked SIZE, --max-peak SIZE  the leaked bytes allowed (0, the default: no block, not\n"
    "                   even of 0 bytes); the highest peak heap allowed (exit 23 above it). SIZE:\n"
    "                   4096, 10KiB, 1.5MB, ...\n"
    "  --symbols BINARY...  instead of a trace: the symbol quality of each binary and the shared\n"
    "                   libraries it needs; exit 3 when a given binary loses inline attribution\n"
    "  --debug-dir DIR  also look for separate debug info under DIR (DIR/.build-id/xx/yyyy.debug\n"
    "                   or by .gnu_debuglink), after /usr/lib/debug; repeatable. Debuginfod is\n"
    "                   asked only when DEBUGINFOD_URLS is set\n";

/* --help: the file options' synopses wrapped into usage lines, then every output's help lines. */
static void put_usage(FILE *out)
{
	size_t col = 0;
	fputs(usage_head, out);
	for (size_t i = 0; i < NOUTPUTS; i++) {
		const char *s = outputs[i].synopsis;
		if (!s)
			continue;
		if (col && col + 1 + strlen(s) >= USAGE_WIDTH)
			col = (size_t)fprintf(out, "\n       %s", s) - 1;
		else
			col += (size_t)fprintf(out, col ? " %s" : "       %s", s);
	}
	fputs(col ? "\n" : "", out);
	fputs(usage_modes, out);
	for (size_t i = 0; i < NOUTPUTS; i++)
		fputs(outputs[i].help ? outputs[i].help : "", out);
	fputs(usage_tail, out);
}

struct options {
	size_t top;
	const char *trace;
	char *debug_dirs;  /* colon-separated absolute paths, or NULL */
	int symbols;       /* --symbols: the positional arguments are binaries */
	const char **args; /* the positional arguments (args[0] is trace) */
	size_t nargs;
	int all_frames, full_stacks, no_auto_fold;
	size_t callers;
	enum ct_grouping group;
	const char *fold_files[8];
	size_t nfold;
	const char *out[NOUTPUTS]; /* per output: its file ("-" for stdout), NULL when not asked for */
	int cost;                  /* enum ct_cost, or -1: leaked when anything leaked, else peak */
	int reverse, pprof_peak, diff;
	struct ct_check check;   /* --fail-on, --max-leaked, --max-peak */
	int checking;            /* one of them was given */
	const char *baseline;    /* --baseline BASE: a trace or a saved JSON report */
	struct ct_growth growth; /* --max-growth (default: none) */
	int growth_given;
	enum ct_fail_on level;   /* the leaks a baseline compares: --fail-on's, definite by default */
	char *between;           /* --between FROM,TO: "FROM\0TO" (owned) */
	const char **supp_files; /* the --suppressions files, again for a baseline's trace */
	size_t nsupp;
	const char *between_to;
	struct ct_outfile *std_out; /* standard output, keeping a failed write's errno (outfile.h) */
};

/* A progress line for a terminal: percent of the file read and events per second, ten times a
 * second at most, overwritten in place and erased at the end. */
struct progress {
	const struct ct_model *m;
	struct timespec start, last;
	int shown;
};

static double seconds_since(const struct timespec *t)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t->tv_sec) + (double)(now.tv_nsec - t->tv_nsec) / 1e9;
}

static void show_progress(uint64_t done, uint64_t total, void *arg)
{
	struct progress *p = arg;
	if (!p->start.tv_sec && !p->start.tv_nsec) {
		clock_gettime(CLOCK_MONOTONIC, &p->start);
		p->last = p->start;
	} else if (seconds_since(&p->last) < 0.1) {
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &p->last);
	double elapsed = seconds_since(&p->start);
	uint64_t events = p->m->t.allocations + p->m->t.frees;
	fprintf(stderr, "\r\033[K" PROG ": reading: %3.0f%%, %.1f M events/s",
	        total ? 100.0 * (double)done / (double)total : 0.0,
	        elapsed > 0 ? (double)events / elapsed / 1e6 : 0.0);
	p->shown = 1;
}

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, PROG ": ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (see --help)\n");
	return 2;
}

static int parse_count(const char *s, size_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (!*s || *end || errno || s[0] == '-' || v > SIZE_MAX)
		return -1;
	*out = (size_t)v;
	return 0;
}

/* Appends DIR, made absolute (libdwfl's build-id lookup skips relative entries), to o->debug_dirs.
 * Returns 0, or the exit status. */
static int add_debug_dir(struct options *o, const char *dir)
{
	char *abs = realpath(dir, NULL), *joined = NULL;
	if (!abs) {
		fprintf(stderr, PROG ": --debug-dir %s: %s\n", dir, strerror(errno));
		return 2;
	}
	if (strchr(abs, ':')) {
		free(abs);
		return usage_error("--debug-dir cannot hold a ':' ('%s')", dir);
	}
	int n = o->debug_dirs ? asprintf(&joined, "%s:%s", o->debug_dirs, abs) : asprintf(&joined, "%s", abs);
	free(abs);
	if (n < 0) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}
	free(o->debug_dirs);
	o->debug_dirs = joined;
	return 0;
}

/* The value of option a (argv[*i]): "--opt=value" or the next argument; NULL when missing. */
static const char *option_value(int argc, char **argv, int *i, size_t name_len)
{
	const char *a = argv[*i];
	if (a[name_len] == '=')
		return a + name_len + 1;
	return *i + 1 < argc ? argv[++*i] : NULL;
}

/* The output whose option a is ("--json"; "--html" or "--html=FILE" for a file), or NULL. */
static const struct output *find_output(const char *a)
{
	size_t n = strcspn(a, "=");
	for (size_t i = 0; i < NOUTPUTS; i++) {
		const struct output *w = &outputs[i];
		if (w->option && strlen(w->option) == n && !strncmp(a, w->option, n) &&
		    (w->flags & OUT_FILE || !a[n]))
			return w;
	}
	return NULL;
}

/* Whether the output of option `option` was asked for. */
static int asked(const struct options *o, const char *option)
{
	const struct output *w = find_output(option);
	return w && o->out[w - outputs];
}

/* Whether two outputs would go to standard output, where they would interleave: --diff's report
 * (--json is its form there) and each output asked for with "-". The first two named in buf. */
static int two_on_stdout(const struct options *o, char *buf, size_t len)
{
	const char *names[2] = {o->diff ? "--diff" : NULL};
	size_t n = o->diff != 0;
	for (size_t k = 0; k < NOUTPUTS && n < 2; k++)
		if (o->out[k] && !strcmp(o->out[k], "-") && (outputs[k].flags & OUT_FILE || !o->diff))
			names[n++] = outputs[k].option;
	if (n < 2)
		return 0;
	snprintf(buf, len, "%s and %s", names[0], names[1]);
	return 1;
}

/* Returns -1 to go on, or the exit status (o->debug_dirs is the caller's to free either way). */
static int parse_args(int argc, char **argv, struct options *o)
{
	int max_leaked = 0, no_builtin = 0;
	*o = (struct options){.top = 10,
	                      .callers = 3,
	                      .args = calloc((size_t)argc, sizeof(char *)),
	                      .supp_files = calloc((size_t)argc, sizeof(char *)),
	                      .cost = -1};
	if (!o->args || !o->supp_files)
		return fprintf(stderr, PROG ": out of memory\n"), 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const struct output *w;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			put_usage(stdout);
			return 0;
		} else if (!strcmp(a, "--version")) {
			printf(PROG " %s\n", CTRACK_VERSION);
			return 0;
		} else if (!strcmp(a, "--symbols")) {
			o->symbols = 1;
		} else if (!strcmp(a, "--all-frames")) {
			o->all_frames = 1;
		} else if (!strcmp(a, "--full-stacks")) {
			o->full_stacks = 1;
		} else if (!strcmp(a, "--no-auto-fold")) {
			o->no_auto_fold = 1;
		} else if (!strcmp(a, "--reverse")) {
			o->reverse = 1;
		} else if (!strcmp(a, "--diff")) {
			o->diff = 1;
		} else if (!strcmp(a, "--no-builtin-suppressions")) {
			no_builtin = 1;
		} else if ((w = find_output(a)) && !(w->flags & OUT_FILE)) {
			o->out[w - outputs] = "-";
		} else if (w) {
			const char *v = option_value(argc, argv, &i, strcspn(a, "="));
			if (!v || !*v)
				return usage_error("%s needs a file", a);
			o->out[w - outputs] = v;
		} else if (!strcmp(a, "--cost") || !strncmp(a, "--cost=", 7)) {
			const char *v = option_value(argc, argv, &i, 6);
			if (!v || (o->cost = ct_cost_parse(v)) < 0)
				return usage_error("--cost needs leaked, peak, allocations, temporary or "
				                   "allocated, not '%s'",
				                   v ? v : "");
		} else if (!strcmp(a, "--pprof-at") || !strncmp(a, "--pprof-at=", 11)) {
			const char *v = option_value(argc, argv, &i, 10);
			if (!v || (strcmp(v, "exit") && strcmp(v, "peak")))
				return usage_error("--pprof-at needs 'exit' or 'peak', not '%s'", v ? v : "");
			o->pprof_peak = !strcmp(v, "peak");
		} else if (!strcmp(a, "--group") || !strncmp(a, "--group=", 8)) {
			const char *v = option_value(argc, argv, &i, 7);
			if (!v || (strcmp(v, "site") && strcmp(v, "backtrace")))
				return usage_error("--group needs 'site' or 'backtrace', not '%s'",
				                   v ? v : "");
			o->group = strcmp(v, "site") ? CT_GROUP_BACKTRACE : CT_GROUP_SITE;
		} else if (!strcmp(a, "--fold") || !strncmp(a, "--fold=", 7)) {
			const char *v = option_value(argc, argv, &i, 6);
			if (!v || !*v)
				return usage_error("%s needs a file", a);
			if (o->nfold == sizeof(o->fold_files) / sizeof(o->fold_files[0]))
				return usage_error("at most 8 --fold files ('%s' is one too many)", v);
			o->fold_files[o->nfold++] = v;
		} else if (!strcmp(a, "--callers") || !strncmp(a, "--callers=", 10)) {
			const char *v = option_value(argc, argv, &i, 9);
			if (!v)
				return usage_error("%s needs a number", a);
			if (parse_count(v, &o->callers) < 0)
				return usage_error("--callers needs a number, not '%s'", v);
		} else if (!strcmp(a, "--suppressions") || !strncmp(a, "--suppressions=", 15)) {
			const char *v = option_value(argc, argv, &i, 14);
			char err[512];
			if (!v || !*v)
				return usage_error("%s needs a file", a);
			if (ct_check_add_suppressions(&o->check, v, err, sizeof(err)) < 0) {
				fprintf(stderr, PROG ": --suppressions: %s\n", err);
				return 2;
			}
			o->supp_files[o->nsupp++] = v;
		} else if (!strcmp(a, "--fail-on") || !strncmp(a, "--fail-on=", 10)) {
			const char *v = option_value(argc, argv, &i, 9);
			int level = v ? ct_check_parse_level(v) : -1;
			if (level < 0)
				return usage_error(
				    "--fail-on needs definite, possible, reachable or any, not '%s'",
				    v ? v : "");
			o->check.fail_on = (enum ct_fail_on)level, o->checking = 1;
		} else if (!strcmp(a, "--max-leaked") || !strncmp(a, "--max-leaked=", 13) ||
		           !strcmp(a, "--max-peak") || !strncmp(a, "--max-peak=", 11)) {
			int peak = a[6] == 'p';
			const char *v = option_value(argc, argv, &i, peak ? 10 : 12);
			if (!v || ct_parse_size(v, peak ? &o->check.max_peak : &o->check.max_leaked) < 0)
				return usage_error(
				    peak ? "--max-peak needs a size (4096, 10KiB, 1.5MB), not '%s'"
				         : "--max-leaked needs a size (4096, 10KiB, 1.5MB), not '%s'",
				    v ? v : "");
			o->check.peak_rule |= peak, o->checking = 1, max_leaked |= !peak;
		} else if (!strcmp(a, "--baseline") || !strncmp(a, "--baseline=", 11)) {
			const char *v = option_value(argc, argv, &i, 10);
			if (!v || !*v)
				return usage_error("%s needs a trace or a JSON report", a);
			o->baseline = v;
		} else if (!strcmp(a, "--max-growth") || !strncmp(a, "--max-growth=", 13)) {
			const char *v = option_value(argc, argv, &i, 12);
			if (!v || ct_growth_parse(v, &o->growth) < 0)
				return usage_error("--max-growth needs a share (5%%) or a size (4096, 10KiB, "
				                   "1.5MB), not '%s'",
				                   v ? v : "");
			o->growth_given = 1;
		} else if (!strcmp(a, "--between") || !strncmp(a, "--between=", 10)) {
			const char *v = option_value(argc, argv, &i, 9);
			const char *comma = v ? strchr(v, ',') : NULL;
			if (!comma || comma == v || !comma[1] || strchr(comma + 1, ','))
				return usage_error("--between needs two marks, FROM,TO, not '%s'",
				                   v ? v : "");
			free(o->between);
			if (!(o->between = strdup(v)))
				return fprintf(stderr, PROG ": out of memory\n"), 1;
			o->between[comma - v] = '\0';
			o->between_to = o->between + (comma - v) + 1;
		} else if (!strcmp(a, "--top") || !strncmp(a, "--top=", 6)) {
			const char *v = option_value(argc, argv, &i, 5);
			if (!v)
				return usage_error("%s needs a number", a);
			if (parse_count(v, &o->top) < 0)
				return usage_error("--top needs a number, not '%s'", v);
		} else if (!strcmp(a, "--debug-dir") || !strncmp(a, "--debug-dir=", 12)) {
			const char *v = option_value(argc, argv, &i, 11);
			if (!v || !*v)
				return usage_error("%s needs a directory", a);
			int rc = add_debug_dir(o, v);
			if (rc)
				return rc;
		} else if (a[0] == '-' && a[1] && strcmp(a, "--")) {
			return usage_error("unknown option '%s'", a);
		} else {
			if (!strcmp(a, "--") && i + 1 < argc)
				a = argv[++i];
			o->args[o->nargs++] = a;
			o->trace = o->args[0];
		}
	}
	if (!o->trace)
		return usage_error("%s", o->symbols ? "no binary given" : "no trace file given");
	if (o->symbols && (o->checking || o->baseline || o->growth_given || o->between))
		return usage_error("--symbols checks binaries: no trace rule applies%s", "");
	if (o->diff && (max_leaked || o->check.peak_rule || o->baseline))
		return usage_error("--diff compares its two traces (--fail-on, --max-growth): %s is for "
		                   "one trace",
		                   o->baseline  ? "--baseline"
		                   : max_leaked ? "--max-leaked"
		                                : "--max-peak");
	if (o->growth_given && !o->baseline && !o->diff)
		return usage_error("--max-growth needs --baseline BASE or --diff BASE NEW%s", "");
	if (o->between && (o->diff || o->baseline))
		return usage_error("--between reports one trace, not %s", o->diff ? "--diff" : "--baseline");
	/* A comparison's level is --fail-on's; its own rule replaces --fail-on's absolute one, unless
	 * --max-leaked asks for that too. */
	o->level = o->check.fail_on ? o->check.fail_on : CT_FAIL_DEFINITE;
	if (o->baseline || o->diff) {
		o->growth_given |= o->check.fail_on != CT_FAIL_NONE || o->baseline;
		if (!max_leaked)
			o->check.fail_on = CT_FAIL_NONE;
		o->checking = o->check.fail_on || o->check.peak_rule || o->baseline;
	}
	/* Suppressions serve the checks (the built-in ones nothing else): a plain report keeps
	 * memcheck's figures and names what the others match. */
	int ci = asked(o, "--junit") || asked(o, "--sarif") || asked(o, "--github");
	int checks = o->checking || o->baseline || o->growth_given || ci;
	o->check.builtin = !no_builtin && checks;
	o->check.report_only = !checks;
	if (max_leaked && !o->check.fail_on)
		o->check.fail_on = CT_FAIL_DEFINITE;
	if (o->diff && o->nargs != 2)
		return usage_error("--diff needs two traces, BASE and NEW%s", "");
	for (size_t k = 0; o->diff && k < NOUTPUTS; k++)
		if (o->out[k] && !(outputs[k].flags & OUT_DIFF))
			return usage_error("--diff writes a flame graph (--flamegraph) but no other file%s",
			                   "");
	if (!o->symbols && !o->diff && o->nargs > 1)
		return usage_error("one trace at a time ('%s' is one too many)", o->args[1]);
	size_t n = 0, text = 0;
	for (size_t k = 0; k < NOUTPUTS; k++) {
		n += o->out[k] != NULL;
		text = outputs[k].option ? text : k;
	}
	char both[64];
	if (two_on_stdout(o, both, sizeof(both)))
		return usage_error("%s both write to standard output: give all but one a file", both);
	if (!n && !o->checking) /* the default: the text report (a check prints its verdict instead) */
		o->out[text] = "-";
	return -1;
}

/* An output file that would destroy an input of the run (the traces, a baseline, the suppressions
 * and fold files) or another trace, refused before anything is read or written: -1 to go on, or
 * the exit status after one line on stderr. */
static int refuse_outputs(const struct options *o)
{
	const char **in = calloc(o->nargs + o->nsupp + o->nfold + 1, sizeof(*in));
	if (!in)
		return fprintf(stderr, PROG ": out of memory\n"), 1;
	size_t n = 0, which;
	for (size_t i = 0; i < o->nargs; i++)
		in[n++] = o->args[i];
	for (size_t i = 0; i < o->nsupp; i++)
		in[n++] = o->supp_files[i];
	for (size_t i = 0; i < o->nfold; i++)
		in[n++] = o->fold_files[i];
	if (o->baseline)
		in[n++] = o->baseline;
	int status = -1;
	for (size_t k = 0; k < NOUTPUTS && status < 0; k++) {
		const char *path = o->out[k];
		int what = path && outputs[k].flags & OUT_FILE && strcmp(path, "-")
		               ? ct_outfile_clobbers(path, in, n, &which)
		               : 0;
		if (what == 1)
			fprintf(stderr, PROG ": refusing to write %s to '%s': it is the input '%s'\n",
			        outputs[k].option, path, in[which]);
		else if (what == 2)
			fprintf(stderr, PROG ": refusing to write %s to '%s': it is a ctrack trace\n",
			        outputs[k].option, path);
		status = what ? 2 : -1;
	}
	free(in);
	return status;
}

/* The built-in fold list and the --fold files' patterns into *out; -1 (said on stderr) on error. */
static int load_fold(const struct options *o, struct ct_fold **out)
{
	char err[512];
	*out = ct_fold_new();
	if (!*out)
		return fprintf(stderr, PROG ": out of memory\n"), -1;
	for (size_t i = 0; i < o->nfold; i++)
		if (ct_fold_load(*out, o->fold_files[i], err, sizeof(err)) < 0) {
			fprintf(stderr, PROG ": --fold %s\n", err);
			ct_fold_free(*out);
			return -1;
		}
	return 0;
}

/* One trace's report: its sites, a symbolizer and the groups. */
static int open_report(const struct options *o, const char *path, const struct ct_model *m,
                       const struct ct_fold *fold, struct ct_report *r)
{
	*r = (struct ct_report){.top = o->top,
	                        .out = o->std_out->f,
	                        .fold = fold,
	                        .all_frames = o->all_frames,
	                        .full_stacks = o->full_stacks,
	                        .callers = o->callers,
	                        .group = o->group};
	return ct_report_open(r, path, m, o->no_auto_fold);
}

/* fn's output on standard output: 0, or fn's negative errno. A failed write is not one: main says
 * it once, when it closes standard output. */
static int write_stdout(const struct options *o, int (*fn)(FILE *, struct exports *), struct exports *x)
{
	int rc = fn(o->std_out->f, x);
	return rc == -EIO && ferror(o->std_out->f) ? 0 : rc;
}

/* Writes one file ("-": standard output) with fn; 0, or -1 after one line on stderr. */
static int write_file(const struct options *o, const char *path, int (*fn)(FILE *, struct exports *),
                      struct exports *x)
{
	struct ct_outfile f;
	int rc;
	if (!strcmp(path, "-")) {
		rc = write_stdout(o, fn, x);
	} else if ((rc = ct_outfile_open(&f, path)) < 0) {
		fprintf(stderr, PROG ": cannot create '%s': %s\n", path, strerror(-rc));
		return -1;
	} else {
		rc = fn(f.f, x);
		int closed = ct_outfile_close(&f);
		if (closed < 0 && (!rc || rc == -EIO)) /* why the writes failed, not the writer's EIO */
			rc = closed;
	}
	if (rc)
		fprintf(stderr, PROG ": cannot write '%s': %s\n", path, strerror(rc < 0 ? -rc : EIO));
	return rc ? -1 : 0;
}

/* --cost, or leaked bytes when anything leaked, else the peak. */
static enum ct_cost pick_cost(const struct options *o, const struct ct_model *a, const struct ct_model *b)
{
	if (o->cost >= 0)
		return (enum ct_cost)o->cost;
	return a->t.live_allocations || (b && b->t.live_allocations) ? CT_COST_LEAKED : CT_COST_PEAK;
}

/* The outputs asked for: the files in table order, then the report on stdout. Returns 0, 1 when a
 * file could not be written (said on stderr), or the stdout report's negative errno. */
static int write_outputs(const struct options *o, const struct ct_report *r)
{
	/* The CI formats list the leaks that count: --fail-on's (definite by default), or all of them
	 * when the trace has no classes. */
	struct exports x = {.r = r,
	                    .cost = pick_cost(o, r->m, NULL),
	                    .reverse = o->reverse,
	                    .pprof_peak = o->pprof_peak,
	                    .ci_level = r->m->classified ? o->level : CT_FAIL_REACHABLE};
	int rc = 0;
	for (size_t i = 0; i < NOUTPUTS && !rc; i++)
		if (o->out[i] && outputs[i].flags & OUT_FILE &&
		    write_file(o, o->out[i], outputs[i].write, &x) < 0)
			rc = 1;
	for (size_t i = 0; i < NOUTPUTS && !rc; i++)
		if (o->out[i] && !(outputs[i].flags & OUT_FILE))
			rc = write_stdout(o, outputs[i].write, &x);
	if (x.has_tree)
		ct_tree_destroy(&x.tree);
	return rc;
}

/* The check's verdict goes to stdout, unless an output is written there. */
static FILE *check_stream(const struct options *o)
{
	for (size_t i = 0; i < NOUTPUTS; i++)
		if (o->out[i] && !strcmp(o->out[i], "-"))
			return stderr;
	return o->std_out->f;
}

/* A damaged trace's SUPPRESSIONS record may be damaged bytes read as one: text that is not
 * suppressions is left out (the damage warning says so) rather than failing the whole report.
 * Returns 1 when it was. */
static int drop_damaged_suppressions(struct ct_model *m)
{
	struct ct_suppressions s = {0};
	char err[512];
	if (!m->damaged || !m->suppressions.len)
		return 0;
	int rc = ct_supp_parse(&s, m->suppressions.data, m->suppressions.len, "", err, sizeof(err));
	ct_supp_release(&s);
	if (rc != -EINVAL)
		return 0;
	free(m->suppressions.data);
	m->suppressions = (struct ct_bytes){0};
	return 1;
}

/* Reads the trace at path into m (initialised here; the caller destroys it even on failure). Returns
 * 0, or -1 after one line on stderr. A truncated or damaged trace is read up to the cut or the
 * damage, with a warning. */
static int load(const char *path, struct ct_model *m, const struct options *o)
{
	char err[512];
	if (ct_model_init(m) < 0 || (o->between && ct_model_between(m, o->between, o->between_to) < 0)) {
		fprintf(stderr, PROG ": out of memory\n");
		return -1;
	}
	struct progress p = {.m = m};
	int tty = isatty(STDERR_FILENO);
	int rc = ct_read_trace_progress(path, m, err, sizeof(err), tty ? show_progress : NULL, &p);
	if (p.shown)
		fputs("\r\033[K", stderr); /* the progress line goes away */
	if (rc < 0) {
		fprintf(stderr, PROG ": %s\n", err);
		return -1;
	}
	if (m->damaged)
		fprintf(stderr,
		        PROG ": warning: %s: corrupt trace near byte %llu (%s); figures cover what was read "
		             "before it%s\n",
		        path, (unsigned long long)m->damaged_at, m->damage,
		        drop_damaged_suppressions(m)
		            ? " (the program's suppressions, which do not parse, left out)"
		            : "");
	else if (!m->complete)
		fprintf(
		    stderr,
		    PROG
		    ": warning: %s is truncated (the process was killed?); figures cover what was recorded\n",
		    path);
	if (m->between && ct_model_between_apply(m, err, sizeof(err)) < 0) {
		fprintf(stderr, PROG ": --between: %s\n", err);
		return -1;
	}
	return 0;
}

/* A check of a damaged trace (or baseline) covers only what was read before the damage, and never
 * passes: said on out, one line. Returns 1 when m is damaged. */
static int incomplete(FILE *out, const char *path, const struct ct_model *m)
{
	if (!m->damaged)
		return 0;
	fprintf(out,
	        "check incomplete: %s is damaged near byte %" PRIu64 ": its figures cover only what was read "
	        "before it, and a damaged trace never passes\n",
	        path, m->damaged_at);
	return 1;
}

/* A trace has the leak classes that level needs (said on stderr when not). */
static int has_classes(const char *path, const struct ct_model *m, enum ct_fail_on level)
{
	if (!ct_check_needs_classes(&(struct ct_check){.fail_on = level}, m))
		return 1;
	fprintf(stderr,
	        PROG ": %s has no leak classes: --fail-on=%s needs a ctrack that scans the heap at exit "
	             "(--fail-on=reachable counts every leaked byte)\n",
	        path, level == CT_FAIL_DEFINITE ? "definite" : "possible");
	return 0;
}

/* --baseline BASE as a trace: read, with the --suppressions files and its own program's, and
 * reported as NEW is. */
/* The suppressions (the files, the program's, the built-in ones) applied to a trace other than the
 * one whose check prints their counts: a baseline, --diff's two. 0, or -1 after one line on stderr. */
static int suppress_other(const struct options *o, const char *path, struct ct_model *m)
{
	struct ct_check c = {.builtin = o->check.builtin};
	char err[512];
	int rc = 0;
	for (size_t i = 0; i < o->nsupp && !rc; i++)
		rc = ct_check_add_suppressions(&c, o->supp_files[i], err, sizeof(err));
	if (!rc)
		rc = ct_check_suppress(&c, m, err, sizeof(err));
	if (rc)
		fprintf(stderr, PROG ": %s: %s\n", path, err);
	ct_check_release(&c);
	return rc ? -1 : 0;
}

static int trace_baseline(const struct options *o, const struct ct_fold *fold, struct ct_baseline **out,
                          int *partial)
{
	struct ct_model m;
	struct ct_report r = {0};
	int rc = load(o->baseline, &m, o);
	if (!rc)
		*partial |= incomplete(check_stream(o), o->baseline, &m);
	if (!rc)
		rc = suppress_other(o, o->baseline, &m);
	if (!rc && !has_classes(o->baseline, &m, o->level))
		rc = -1;
	if (!rc && (rc = open_report(o, o->baseline, &m, fold, &r)) == 0)
		rc = ct_baseline_of_report(&r, o->level, out);
	if (rc == -ENOMEM)
		fprintf(stderr, PROG ": out of memory\n");
	ct_report_close(&r);
	ct_model_destroy(&m);
	return rc ? -1 : 0;
}

/* NEW (r) against --baseline BASE, a trace or a saved JSON report: 1 when a site grew past the
 * allowance, 0 when none did, or -1 after one line on stderr; *partial set when BASE is a damaged
 * trace. */
static int against_baseline(const struct options *o, const struct ct_report *r, const struct ct_fold *fold,
                            int *partial)
{
	struct ct_baseline *b = NULL;
	char err[512];
	int json = ct_baseline_is_json(o->baseline), rc = 0;
	if (json < 0)
		fprintf(stderr, PROG ": cannot open '%s': %s\n", o->baseline, strerror(-json)), rc = -1;
	else if (json && ct_baseline_of_json(o->baseline, o->level, &b, err, sizeof(err)) < 0)
		fprintf(stderr, PROG ": --baseline: %s\n", err), rc = -1;
	else if (!json)
		rc = trace_baseline(o, fold, &b, partial);
	if (!rc && (rc = ct_baseline_check(b, r, o->level, &o->growth, check_stream(o))) < 0)
		fprintf(stderr, PROG ": out of memory\n");
	ct_baseline_free(b);
	return rc;
}

/* Returns 0, CT_CHECK_EXIT when a rule of the check is broken, 1 when none is but the trace is
 * damaged (the check is incomplete), or -1 after one line on stderr. */
static int report(const struct options *o, const struct ct_model *m)
{
	struct ct_fold *fold;
	struct ct_report r;
	if (!has_classes(o->trace, m, o->checking ? o->check.fail_on : CT_FAIL_NONE) ||
	    (o->baseline && !has_classes(o->trace, m, o->level)))
		return -1;
	if (load_fold(o, &fold) < 0)
		return -1;
	int rc = open_report(o, o->trace, m, fold, &r), broken = 0, partial = 0;
	r.supp = o->check.supp;
	if (!rc)
		rc = write_outputs(o, &r);
	if (!rc && (o->check.fail_on || o->check.peak_rule)) {
		broken = ct_check_run(&r, &o->check, check_stream(o));
		rc = broken < 0 ? broken : 0;
	}
	if (!rc && o->baseline) {
		int grown = against_baseline(o, &r, fold, &partial);
		if (grown < 0) {
			ct_report_close(&r);
			ct_fold_free(fold);
			return -1;
		}
		broken |= grown;
	}
	if (!rc && (o->check.fail_on || o->check.peak_rule || o->baseline))
		partial |= incomplete(check_stream(o), o->trace, m);
	ct_report_close(&r);
	ct_fold_free(fold);
	if (rc < 0)
		fprintf(stderr, PROG ": %s\n", strerror(-rc));
	return rc ? -1 : broken > 0 ? CT_CHECK_EXIT : partial;
}

/* --diff with --fail-on or --max-growth: NEW against BASE as --baseline compares them; the verdict
 * follows the diff, on stderr when the diff is JSON. 0 with *broken set, or -ENOMEM. */
static int compare_runs(const struct options *o, const struct ct_report *base, const struct ct_report *new,
                        int *broken)
{
	struct ct_baseline *b;
	FILE *out = asked(o, "--json") ? stderr : o->std_out->f;
	int rc = ct_baseline_of_report(base, o->level, &b);
	if (!rc) {
		fputc('\n', out);
		rc = ct_baseline_check(b, new, o->level, &o->growth, out);
	}
	ct_baseline_free(b);
	*broken = rc > 0;
	return rc < 0 ? rc : 0;
}

/* --diff: the two traces' trees in one (base set 0, new set 1), printed as a diff, and drawn. */
static int diff(const struct options *o, const struct ct_model *base, const struct ct_model *new)
{
	struct ct_fold *fold;
	struct ct_report rb, rn;
	if (load_fold(o, &fold) < 0)
		return -1;
	struct exports x = {
	    .r = &rn, .has_tree = 1, .cost = pick_cost(o, base, new), .reverse = o->reverse, .diff = 1};
	int broken = 0, partial = 0;
	if (o->growth_given &&
	    (!has_classes(o->args[0], base, o->level) || !has_classes(o->args[1], new, o->level))) {
		ct_fold_free(fold);
		return -1;
	}
	int rc = open_report(o, o->args[0], base, fold, &rb);
	if (!rc)
		rc = open_report(o, o->args[1], new, fold, &rn);
	if (!rc)
		rc = ct_tree_init(&x.tree, o->reverse, CT_TREE_SETS);
	if (!rc)
		rc = ct_tree_add(&x.tree, &rb, 0);
	if (!rc)
		rc = ct_tree_add(&x.tree, &rn, 1);
	if (!rc)
		rc = ct_tree_finish(&x.tree);
	if (!rc)
		rc = ct_write_diff(o->std_out->f, &x.tree, &rb, &rn, asked(o, "--json"));
	if (!rc && o->growth_given)
		rc = compare_runs(o, &rb, &rn, &broken);
	if (!rc && o->growth_given) {
		FILE *out = asked(o, "--json") ? stderr : o->std_out->f; /* compare_runs' */
		partial = incomplete(out, o->args[0], base) | incomplete(out, o->args[1], new);
	}
	if (rc < 0)
		fprintf(stderr, PROG ": %s\n", strerror(-rc));
	for (size_t i = 0; i < NOUTPUTS && !rc; i++)
		if (o->out[i] && outputs[i].flags & OUT_FILE)
			rc = write_file(o, o->out[i], outputs[i].write, &x);
	ct_tree_destroy(&x.tree);
	ct_report_close(&rb);
	ct_report_close(&rn);
	ct_fold_free(fold);
	return rc ? -1 : broken ? CT_CHECK_EXIT : partial;
}

/* --symbols: 0 when every given binary keeps inline attribution, 3 when one does not, 1 on error. */
static int check_symbols(const struct options *o)
{
	struct ct_quality_list l = {0};
	int rc = 0, poor = 0;
	for (size_t i = 0; i < o->nargs && !rc; i++) {
		rc = ct_diagnose_file(&l, o->args[i]);
		if (rc < 0) {
			fprintf(stderr, PROG ": %s: %s\n", o->args[i],
			        rc == -ENOEXEC ? "not an ELF file" : strerror(-rc));
			break;
		}
		poor |= l.v[l.n - 1].advice != NULL;
	}
	for (size_t i = 0; i < o->nargs && !rc; i++)
		rc = ct_diagnose_needed(&l, o->args[i]);
	if (!rc && asked(o, "--json")) {
		fputs("{\"modules\": ", o->std_out->f);
		ct_quality_json(o->std_out->f, &l);
		fputs("}\n", o->std_out->f);
	} else if (!rc) {
		ct_quality_text(o->std_out->f, &l, 0);
	}
	if (rc == -ENOMEM)
		fprintf(stderr, PROG ": out of memory\n");
	ct_quality_list_free(&l);
	return rc ? 1 : poor ? 3 : 0;
}

static void release_options(struct options *o)
{
	ct_check_release(&o->check);
	free(o->debug_dirs);
	free(o->args);
	free(o->supp_files);
	free(o->between);
}

/* Reads the trace (two with --diff) and writes what was asked for: the exit status. */
static int run(struct options *o)
{
	struct ct_model m[2];
	int n = o->diff ? 2 : 1, status = 0;
	for (int i = 0; i < n; i++)
		if (!status && load(o->args[i], &m[i], o) < 0)
			status = 1, n = i + 1;
	char err[512];
	if (!status && !o->diff && ct_check_suppress(&o->check, &m[0], err, sizeof(err)) < 0)
		status = 1, fprintf(stderr, PROG ": %s\n", err);
	for (int i = 0; o->diff && o->growth_given && i < n && !status; i++)
		status = suppress_other(o, o->args[i], &m[i]) < 0;
	if (!status)
		status = o->diff ? diff(o, &m[0], &m[1]) : report(o, &m[0]);
	for (int i = 0; i < n; i++)
		ct_model_destroy(&m[i]);
	return status < 0 ? 1 : status;
}

int main(int argc, char **argv)
{
	struct options o;
	struct ct_outfile std_out = {0};
	int status = parse_args(argc, argv, &o);
	if (status < 0)
		status = refuse_outputs(&o);
	if (status < 0 && ct_debuginfo_set_dirs(o.debug_dirs) < 0)
		status = 1, fprintf(stderr, PROG ": out of memory\n");
	if (status < 0 && ct_outfile_open(&std_out, "-") < 0)
		status = 1, fprintf(stderr, PROG ": out of memory\n");
	o.std_out = &std_out;
	if (status < 0)
		status = o.symbols ? check_symbols(&o) : run(&o);
	int err = std_out.f ? ct_outfile_close(&std_out) : 0;
	if (err < 0 && status != 1)
		status = 1, fprintf(stderr, PROG ": cannot write the report: %s\n", strerror(-err));
	ct_debuginfo_free();
	release_options(&o);
	return status;
}
