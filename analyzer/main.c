/* SPDX-License-Identifier: MIT */
/* ctrack-analyze: reads a trace, builds the model, writes the outputs asked for (the `outputs` table:
 * the text or JSON report on stdout, flame graphs, HTML, pprof, ...), or compares two traces.
 * Exit status: 0 (also for a truncated or damaged trace, with a warning), 1 on error or when a check
 * of a damaged trace holds on what was read (a damaged trace never passes), 2 on a usage error, 23
 * (CT_CHECK_EXIT) when a rule of --fail-on, --max-leaked, --max-peak or --baseline is broken. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <regex.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "histogram.h"
#include "liveview.h"
#include "html_data.h"
#include "baseline.h"
#include "check.h"
#include "ctrack-config.h"
#include "debuginfo.h"
#include "diagnose.h"
#include "export.h"
#include "opttab.h"
#include "outfile.h"
#include "presym.h"
#include "reader.h"
#include "report.h"
#include "size.h"
#include "suppress.h"
#include "summary.h"

#define PROG "ctrack-analyze"

/* What the writers are given: the report, and the options that tune them. */
struct exports {
	const struct ct_report *r;
	struct ct_tree tree; /* root first (the folded stacks, the flame graph unless --reverse) */
	int has_tree;        /* tree is built: --diff builds it, else the first writer that needs it */
	enum ct_cost cost;
	int reverse, diff, pprof_peak;
	enum ct_fail_on ci_level;        /* the leaks the CI formats list (check.h) */
	int by_line, icicle, full_names; /* --by-line, --icicle, --full-names */
	const char *const *hide;         /* --hide-frames */
	size_t nhide;
	unsigned detailed_freq;               /* --detailed-freq: every Nth massif snapshot detailed */
	const struct ct_html_diff *html_diff; /* --diff's view in --html, or NULL */
};

/* The flame graph's and folded stacks' tree: by function unless --by-line, --hide-frames' frames out. */
static int flame_tree(struct exports *x, struct ct_tree *t, int reversed)
{
	const struct ct_tree_opts to = {
	    .reversed = reversed, .by_line = x->by_line, .hide = x->hide, .nhide = x->nhide};
	return ct_tree_build_opts(t, x->r, &to);
}

/* x's root-first tree, built on first use: the exporters that draw their own (HTML, speedscope,
 * massif) never hold two trees at once. */
static int root_tree(struct exports *x, const struct ct_tree **t)
{
	int rc = x->has_tree ? 0 : flame_tree(x, &x->tree, 0);
	x->has_tree = !rc;
	*t = &x->tree;
	return rc;
}

static int write_flamegraph(FILE *out, struct exports *x)
{
	struct ct_tree reversed;
	const struct ct_tree *t = &reversed;
	int rc, rebuild = x->reverse && !x->diff; /* --diff's tree is reversed already */
	if ((rc = rebuild ? flame_tree(x, &reversed, 1) : root_tree(x, &t)))
		return rc;
	/* Zooming reveals detail, so a standalone graph keeps frames down to 0.1 px, but not without
	 * bound: a trace of a million distinct stacks must still give a file a browser opens. */
	struct ct_flame_opts fo = {.cost = x->cost,
	                           .diff = x->diff,
	                           .max_frames = 30000,
	                           .icicle = x->icicle,
	                           .full_names = x->full_names};
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
	return x->html_diff ? ct_write_html_diff(out, x->r, x->html_diff) : ct_write_html(out, x->r);
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
	return ct_write_massif(out, x->r, x->detailed_freq);
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
	int rc = ct_histogram_sites(x->r, &h);
	if (!rc)
		ct_histogram_text(out, &h, x->r);
	return rc;
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

/* Every output, one row each (its option's help is in the options table). The files asked for are
 * written first, in this order, then the report on stdout: --json, or the text report when no
 * other output is asked for. */
static const struct output {
	const char *option; /* NULL: the text report, the default */
	int (*write)(FILE *out, struct exports *x);
	unsigned flags; /* OUT_* */
} outputs[] = {
    {"--json", write_json, OUT_DIFF},     {"--flamegraph", write_flamegraph, OUT_FILE | OUT_DIFF},
    {"--folded", write_folded, OUT_FILE}, {"--html", write_html, OUT_FILE | OUT_DIFF},
    {"--pprof", write_pprof, OUT_FILE},   {"--speedscope", write_speedscope, OUT_FILE},
    {"--massif", write_massif, OUT_FILE}, {"--junit", write_junit, OUT_FILE},
    {"--sarif", write_sarif, OUT_FILE},   {"--github", write_github, 0},
    {"--histogram", write_histogram, 0},  {NULL, write_text, 0},
};

#define NOUTPUTS (sizeof(outputs) / sizeof(outputs[0]))

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
	struct ct_check_args ca; /* the check options (check.h): ca.check, their rules */
	int checking;            /* --fail-on, --max-leaked or --max-peak was given */
	const char *baseline;    /* --baseline BASE: a trace or a saved JSON report */
	struct ct_growth growth; /* --max-growth (default: none) */
	int growth_given;
	enum ct_fail_on level; /* the leaks a baseline compares: --fail-on's, definite by default */
	char *between;         /* --between FROM,TO: "FROM\0TO" (owned) */
	const char *between_to;
	int window;                 /* --from or --to was given */
	uint64_t from_us, to_us;    /* --from, --to: the time window in microseconds (0, UINT64_MAX) */
	int full_names;             /* --full-names: C++ names in full in text, HTML and flame graphs */
	int by_line;                /* --by-line: flame graphs and trees split a function per call line */
	int icicle;                 /* --icicle: the flame graph top-down, roots at the top */
	const char *hide_frames[8]; /* --hide-frames REGEX: POSIX extended, on function names */
	size_t nhide;
	unsigned detailed_freq;     /* --detailed-freq N: every Nth massif snapshot detailed (10) */
	unsigned source_context;    /* --context N: source lines around a frame's line in HTML (3) */
	struct ct_outfile *std_out; /* standard output, keeping a failed write's errno (outfile.h) */
	int follow;                 /* --follow: the live view of a trace being written (liveview.h) */
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

/* A TIME of --from/--to in microseconds: a decimal number and an optional unit, s (the default),
 * ms or us ("1.5", "250ms", "1200us"); digits finer than a microsecond are dropped. 0, or -1. */
static int parse_time(const char *s, uint64_t *us)
{
	uint64_t whole = 0, frac = 0, fscale = 1;
	const char *p = s;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (whole > (UINT64_MAX - 9) / 10)
			return -1;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	int digits = p > s;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++, digits = 1)
			if (fscale < 1000000) /* no unit needs more than six places */
				frac = frac * 10 + (uint64_t)(*p - '0'), fscale *= 10;
	uint64_t unit = !strcmp(p, "s") || !*p ? 1000000 : !strcmp(p, "ms") ? 1000 : !strcmp(p, "us") ? 1 : 0;
	if (!digits || !unit || whole > UINT64_MAX / unit || whole * unit > UINT64_MAX - frac * unit / fscale)
		return -1;
	*us = whole * unit + frac * unit / fscale;
	return 0;
}

/* A count of at most UINT_MAX into *out, at least min: 0, or -1. */
static int parse_unsigned(const char *s, unsigned min, unsigned *out)
{
	size_t v;
	if (parse_count(s, &v) < 0 || v > UINT_MAX || v < min)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* --hide-frames REGEX: compiled once here, so a bad pattern is a usage error naming regerror's
 * reason (in err); the users compile it again. 0, or -1. */
static int check_regex(const char *re, char *err, size_t len)
{
	regex_t r;
	char why[256];
	int rc = regcomp(&r, re, REG_EXTENDED | REG_NOSUB);
	if (!rc) {
		regfree(&r);
		return 0;
	}
	regerror(rc, &r, why, sizeof(why));
	snprintf(err, len, "--hide-frames '%s': %s", re, why);
	return -1;
}

/* Appends DIR, made absolute (libdwfl's build-id lookup skips relative entries), to o->debug_dirs.
 * Returns 0, or the exit status with the reason in err. */
static int add_debug_dir(struct options *o, const char *dir, char *err, size_t len)
{
	char *abs = realpath(dir, NULL), *joined = NULL;
	if (!abs)
		return snprintf(err, len, "--debug-dir %s: %s", dir, strerror(errno)), 2;
	if (strchr(abs, ':')) {
		free(abs);
		return snprintf(err, len, "--debug-dir cannot hold a ':' ('%s')", dir), 2;
	}
	int n = o->debug_dirs ? asprintf(&joined, "%s:%s", o->debug_dirs, abs) : asprintf(&joined, "%s", abs);
	free(abs);
	if (n < 0)
		return snprintf(err, len, "out of memory"), 1;
	free(o->debug_dirs);
	o->debug_dirs = joined;
	return 0;
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

/* ---- the options table: each row applied by a handler below (or set as a flag), and written
 * into --help, the man page and the bash completion (opttab.h) ---- */

#define OPT(field) offsetof(struct options, field)
#define G_REPORTS "Reports"
#define G_OUTPUTS "Outputs (files)"
#define G_WINDOW "Time window"
#define G_FLAME "Flame graphs and names"
#define G_COMPARE "Comparing runs"
#define G_SYMBOLS "Symbols and debug info"
#define G_GENERAL "General"

/* A usage error's reason into err: exit status 2. */
static int bad(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return 2;
}

/* An output's option: its file, or "-" for one that writes to stdout. */
static int opt_output(void *ctx, const struct ct_opt *self, const char *arg, char *err, size_t len)
{
	struct options *o = ctx;
	char name[32];
	snprintf(name, sizeof(name), "--%s", self->name);
	const struct output *w = find_output(name);
	assert(w); /* every output's row names an output */
	o->out[w - outputs] = arg ? arg : "-";
	return CT_OPT_GO_ON;
}

/* A size_t count at the row's offset. */
static int opt_count(void *ctx, const struct ct_opt *self, const char *arg, char *err, size_t len)
{
	if (parse_count(arg, (size_t *)(void *)((char *)ctx + self->offset)) < 0)
		return bad(err, len, "--%s needs a number, not '%s'", self->name, arg);
	return CT_OPT_GO_ON;
}

/* An unsigned count at the row's offset: --detailed-freq needs at least 1, --context 0 or more. */
static int opt_unsigned(void *ctx, const struct ct_opt *self, const char *arg, char *err, size_t len)
{
	unsigned min = !strcmp(self->name, "detailed-freq");
	if (parse_unsigned(arg, min, (unsigned *)(void *)((char *)ctx + self->offset)) < 0)
		return bad(err, len, "--%s needs a number%s, not '%s'", self->name,
		           min ? " of at least 1" : " of lines", arg);
	return CT_OPT_GO_ON;
}

/* A string kept as given, at the row's offset. */
static int opt_string(void *ctx, const struct ct_opt *self, const char *arg, char *err, size_t len)
{
	*(const char **)(void *)((char *)ctx + self->offset) = arg;
	return CT_OPT_GO_ON;
}

static int opt_cost(void *ctx, const struct ct_opt *self, const char *arg, char *err, size_t len)
{
	struct options *o = ctx;
	if ((o->cost = ct_cost_parse(arg)) < 0)
		return bad(err, len,
		           "--cost needs leaked, peak, allocations, temporary or allocated, not '%s'", arg);
	return CT_OPT_GO_ON;
}

static int opt_pprof_at(void *ctx, const struct ct_opt *self, const char *arg, char *err, size_t len)
{
	struct options *o = ctx;
	if (strcmp(arg, "exit") && strcmp(arg, "peak"))
		return bad(err, len, "--pprof-at needs 'exit' or 'peak', not '%s'", arg);
	o->pprof_peak = !strcmp(arg, "peak");
	return CT_OPT_GO_ON;
}

static int opt_group(void *ctx, const struct ct_opt *self, const char *arg, char *err, size_t len)
{
	struct options *o = ctx;
	if (strcmp(arg, "site") && strcmp(arg, "backtrace"))
		return bad(err, len, "--group needs 'site' or 'backtrace', not '%s'", arg);
	o->group = strcmp(arg, "site") ? CT_GROUP_BACKTRACE : CT_GROUP_SITE;
	return CT_OPT_GO_ON;
}

static int opt_fold(void *ctx, const struct ct_opt *self, const char *arg, char *err, size_t len)
{
	struct options *o = ctx;
	if (o->nfold == sizeof(o->fold_files) / sizeof(o->fold_files[0]))
		return bad(err, len, "at most 8 --fold files ('%s' is one too many)", arg);
	o->fold_files[o->nfold++] = arg;
	return CT_OPT_GO_ON;
}

static int opt_growth(void *ctx, const struct ct_opt *self, const char *arg, char *err, size_t len)
{
	struct options *o = ctx;
	if (ct_growth_parse(arg, &o->growth) < 0)
		return bad(err, len,
		           "--max-growth needs a share (5%%) or a size (4096, 10KiB, 1.5MB), not '%s'", arg);
	o->growth_given = 1;
	return CT_OPT_GO_ON;
}

static int opt_between(void *ctx, const struct ct_opt *self, const char *arg, char *err, size_t len)
{
	struct options *o = ctx;
	const char *comma = strchr(arg, ',');
	if (!comma || comma == arg || !comma[1] || strchr(comma + 1, ','))
		return bad(err, len, "--between needs two marks, FROM,TO, not '%s'", arg);
	free(o->between);
	if (!(o->between = strdup(arg)))
		return snprintf(err, len, "out of memory"), 1;
	o->between[comma - arg] = '\0';
	o->between_to = o->between + (comma - arg) + 1;
	return CT_OPT_GO_ON;
}

static int opt_time(void *ctx, const struct ct_opt *self, const char *arg, char *err, size_t len)
{
	struct options *o = ctx;
	int from = !strcmp(self->name, "from");
	if (parse_time(arg, from ? &o->from_us : &o->to_us) < 0)
		return bad(err, len, "--%s needs a time (1.5, 250ms, 1200us), not '%s'", self->name, arg);
	o->window = 1;
	return CT_OPT_GO_ON;
}

static int opt_hide(void *ctx, const struct ct_opt *self, const char *arg, char *err, size_t len)
{
	struct options *o = ctx;
	if (o->nhide == sizeof(o->hide_frames) / sizeof(o->hide_frames[0]))
		return bad(err, len, "at most 8 --hide-frames patterns ('%s' is one too many)", arg);
	if (check_regex(arg, err, len) < 0)
		return 2;
	o->hide_frames[o->nhide++] = arg;
	return CT_OPT_GO_ON;
}

static int opt_debug_dir(void *ctx, const struct ct_opt *self, const char *arg, char *err, size_t len)
{
	int rc = add_debug_dir(ctx, arg, err, len);
	return rc ? rc : CT_OPT_GO_ON;
}

static int opt_help(void *ctx, const struct ct_opt *self, const char *arg, char *err, size_t len);

static int opt_version(void *ctx, const struct ct_opt *self, const char *arg, char *err, size_t len)
{
	printf(PROG " %s\n", CTRACK_VERSION);
	return 0;
}

static const struct ct_opt option_table[] = {
    {.name = "json",
     .group = G_REPORTS,
     .help = "one JSON document on stdout instead of the text report (schema: docs/json-schema.md)",
     .kind = CT_OPT_CALL,
     .call = opt_output},
    {.name = "histogram",
     .group = G_REPORTS,
     .help = "the allocation sizes on stdout: power-of-two buckets, with their allocations, bytes, "
             "temporary allocations and leaked blocks",
     .kind = CT_OPT_CALL,
     .call = opt_output},
    {.name = "top",
     .arg = "N",
     .group = G_REPORTS,
     .help = "sites per ranking (default 10; the JSON 'leaks' list is always complete)",
     .kind = CT_OPT_CALL,
     .call = opt_count,
     .offset = OPT(top)},
    {.name = "callers",
     .arg = "N",
     .group = G_REPORTS,
     .help = "under a site reached by several backtraces, the N largest with their own figures, "
             "the rest summed on one line (default 3)",
     .kind = CT_OPT_CALL,
     .call = opt_count,
     .offset = OPT(callers)},
    {.name = "group",
     .arg = "site|backtrace",
     .group = G_REPORTS,
     .help = "one entry per allocation site (first shown frame's function, file and line; the "
             "default) or per backtrace after folding",
     .kind = CT_OPT_CALL,
     .call = opt_group,
     .values = "site backtrace"},
    {.name = "html",
     .arg = "FILE",
     .group = G_OUTPUTS,
     .help = "a self-contained HTML report: summary, memory over time, call trees, flame graphs, "
             "leaks; with --diff, the comparison of BASE and NEW",
     .kind = CT_OPT_CALL,
     .call = opt_output,
     .flags = CT_OPT_FILE},
    {.name = "context",
     .arg = "N",
     .group = G_OUTPUTS,
     .help = "--html: the source lines shown around a frame's line (default 3; 0: no source)",
     .kind = CT_OPT_CALL,
     .call = opt_unsigned,
     .offset = OPT(source_context)},
    {.name = "flamegraph",
     .arg = "FILE",
     .group = G_OUTPUTS,
     .help = "an interactive SVG flame graph (click to zoom, search, tooltips); with --diff, "
             "red where NEW grew and blue where it shrank",
     .kind = CT_OPT_CALL,
     .call = opt_output,
     .flags = CT_OPT_FILE},
    {.name = "folded",
     .arg = "FILE",
     .group = G_OUTPUTS,
     .help = "folded stacks (main;parse;xmalloc 1234) for flamegraph.pl or inferno",
     .kind = CT_OPT_CALL,
     .call = opt_output,
     .flags = CT_OPT_FILE},
    {.name = "pprof",
     .arg = "FILE",
     .group = G_OUTPUTS,
     .help = "pprof's profile.proto, gzipped (go tool pprof FILE); in-use figures are the leaks "
             "at exit, or the heap at its peak with --pprof-at peak",
     .kind = CT_OPT_CALL,
     .call = opt_output,
     .flags = CT_OPT_FILE},
    {.name = "pprof-at",
     .arg = "exit|peak",
     .group = G_OUTPUTS,
     .help = "--pprof: the in-use figures at exit (the default) or at the peak",
     .kind = CT_OPT_CALL,
     .call = opt_pprof_at,
     .values = "exit peak"},
    {.name = "speedscope",
     .arg = "FILE",
     .group = G_OUTPUTS,
     .help = "speedscope's JSON format, one profile per cost",
     .kind = CT_OPT_CALL,
     .call = opt_output,
     .flags = CT_OPT_FILE},
    {.name = "massif",
     .arg = "FILE",
     .group = G_OUTPUTS,
     .help = "valgrind massif's format (ms_print FILE, massif-visualizer)",
     .kind = CT_OPT_CALL,
     .call = opt_output,
     .flags = CT_OPT_FILE},
    {.name = "detailed-freq",
     .arg = "N",
     .group = G_OUTPUTS,
     .help = "--massif: every Nth snapshot is a detailed one, as massif's option (default 10; 1: "
             "every one)",
     .kind = CT_OPT_CALL,
     .call = opt_unsigned,
     .offset = OPT(detailed_freq)},
    {.name = "from",
     .arg = "TIME",
     .group = G_WINDOW,
     .help = "only what happened from TIME on: allocations made in the window, and as leaked the "
             "blocks still live at its end. TIME: seconds from the start of the run, or with a "
             "unit (1.5, 250ms, 1200us)",
     .kind = CT_OPT_CALL,
     .call = opt_time},
    {.name = "to",
     .arg = "TIME",
     .group = G_WINDOW,
     .help = "only what happened until TIME (default: the end of the run)",
     .kind = CT_OPT_CALL,
     .call = opt_time},
    {.name = "between",
     .arg = "FROM,TO",
     .group = G_WINDOW,
     .help = "only what happened between the marks FROM and TO (ctrack_mark() in the program, "
             "include/ctrack/ctrack.h): allocations made between them, and as leaked the blocks "
             "live at TO less those live at FROM, per site; not with --from or --to",
     .kind = CT_OPT_CALL,
     .call = opt_between},
    {.name = "cost",
     .arg = "COST",
     .group = G_FLAME,
     .help = "what flame graph widths measure: lost (bytes definitely or indirectly lost), leaked "
             "(bytes live at exit, still reachable ones too), peak, allocations, temporary or "
             "allocated (bytes); default lost when the exit scan found blocks lost, leaked when a "
             "trace without leak classes leaked, else peak",
     .kind = CT_OPT_CALL,
     .call = opt_cost,
     .values = "lost leaked peak allocations temporary allocated"},
    {.name = "reverse",
     .group = G_FLAME,
     .help = "the flame graph rooted at the allocation sites, their callers stacked outward (draw "
             "it top-down with --icicle)",
     .kind = CT_OPT_FLAG,
     .offset = OPT(reverse)},
    {.name = "icicle",
     .group = G_FLAME,
     .help = "the flame graph drawn top-down, its roots at the top (the SVG's Icicle/Flame button "
             "turns it over)",
     .kind = CT_OPT_FLAG,
     .offset = OPT(icicle)},
    {.name = "by-line",
     .group = G_FLAME,
     .help = "flame graphs and call trees split a function's frames per call line (default: merged "
             "by function)",
     .kind = CT_OPT_FLAG,
     .offset = OPT(by_line)},
    {.name = "hide-frames",
     .arg = "REGEX",
     .group = G_FLAME,
     .help = "leave out the frames whose function matches REGEX (POSIX extended); repeatable up "
             "to 8 times",
     .kind = CT_OPT_CALL,
     .call = opt_hide},
    {.name = "full-names",
     .group = G_FLAME,
     .help = "C++ names in full in the text, the HTML tables and the flame graphs (default: "
             "template arguments collapsed to <…>, no parameter lists)",
     .kind = CT_OPT_FLAG,
     .offset = OPT(full_names)},
    {.name = "fold",
     .arg = "FILE",
     .group = G_FLAME,
     .help = "also fold frames matching FILE's patterns (one per line, '*' wildcard, # comments; "
             "docs/fold.md); repeatable up to 8 times",
     .kind = CT_OPT_CALL,
     .call = opt_fold,
     .flags = CT_OPT_FILE},
    {.name = "no-auto-fold",
     .group = G_FLAME,
     .help = "do not fold the allocator wrappers found in the trace (xmalloc, ...: functions that "
             "only pass their callers' sizes on to malloc); the report names them",
     .kind = CT_OPT_FLAG,
     .offset = OPT(no_auto_fold)},
    {.name = "all-frames",
     .group = G_FLAME,
     .help = "show allocator frames (operator new, std::allocator, ...) instead of folding them",
     .kind = CT_OPT_FLAG,
     .offset = OPT(all_frames)},
    {.name = "full-stacks",
     .group = G_FLAME,
     .help = "keep the frames below main and below a thread's start routine (_start, "
             "__libc_start_main, start_thread, __clone3)",
     .kind = CT_OPT_FLAG,
     .offset = OPT(full_stacks)},
    {.name = "junit",
     .arg = "FILE",
     .group = CT_CHECK_GROUP,
     .help = "JUnit XML for CI servers: one failing testcase per leak site and per invalid free, an error "
             "for a damaged or cut trace, the shim's warnings",
     .kind = CT_OPT_CALL,
     .call = opt_output,
     .flags = CT_OPT_FILE},
    {.name = "sarif",
     .arg = "FILE",
     .group = CT_CHECK_GROUP,
     .help = "SARIF 2.1.0 (code scanning): one result per leak site and per invalid free, with its "
             "backtrace; a damaged or cut trace and the shim's warnings as notifications",
     .kind = CT_OPT_CALL,
     .call = opt_output,
     .flags = CT_OPT_FILE},
    {.name = "github",
     .group = CT_CHECK_GROUP,
     .help = "GitHub Actions annotations on stdout: one ::error line per leak site and per invalid free, "
             "one for a damaged or cut trace, a ::warning per warning of the shim",
     .kind = CT_OPT_CALL,
     .call = opt_output},
    {.name = "diff",
     .group = G_COMPARE,
     .help = "two runs, BASE (a trace or a saved --json report) and NEW: per site, the change in "
             "leaked bytes, peak and allocations from BASE to NEW, sites matched as --baseline "
             "matches them; with --fail-on or --max-growth, then checked as --baseline checks",
     .kind = CT_OPT_FLAG,
     .offset = OPT(diff)},
    {.name = "baseline",
     .arg = "BASE",
     .group = G_COMPARE,
     .help = "compare TRACE with BASE (a trace, or a saved --json report) per site (first shown "
             "frame's function and file): exit 23 when a site's leaked bytes of the --fail-on "
             "level (default definite), a site's bytes at the peak, the total leaked or the peak "
             "heap grew past --max-growth, listing what grew and what is new",
     .kind = CT_OPT_CALL,
     .call = opt_string,
     .offset = OPT(baseline),
     .flags = CT_OPT_FILE},
    {.name = "max-growth",
     .arg = "SHARE|SIZE",
     .group = G_COMPARE,
     .help = "the growth --baseline and --diff allow: a share like 5%, or a SIZE (default 0)",
     .kind = CT_OPT_CALL,
     .call = opt_growth},
    {.name = "follow",
     .group = G_REPORTS,
     .help = "watch TRACE while a running program writes it: on a terminal, a view redrawn every "
             "second (heap in use, peak, allocations and frees per second, RSS, the top sites by "
             "live bytes; keys: up/down select, Enter backtrace, l/a/b/t sort by live bytes, "
             "allocations, allocated bytes, temporary, q quit); otherwise one line of figures per "
             "second. It ends when the trace does; no other output or check goes with it",
     .kind = CT_OPT_FLAG,
     .offset = OPT(follow)},
    {.name = "symbols",
     .group = G_SYMBOLS,
     .help = "the operands are binaries, not a trace: the symbol quality of each and of the shared "
             "libraries it needs; exit 3 when a given binary loses inline attribution",
     .kind = CT_OPT_FLAG,
     .offset = OPT(symbols)},
    {.name = "debug-dir",
     .arg = "DIR",
     .group = G_SYMBOLS,
     .help = "also look for separate debug info under DIR (DIR/.build-id/xx/yyyy.debug or by "
             ".gnu_debuglink), after /usr/lib/debug; repeatable. Debuginfod is asked only when "
             "DEBUGINFOD_URLS is set. A debug file's compressed DWARF is kept decompressed in "
             "~/.cache/ctrack/debug (CTRACK_CACHE_DIR: another place, empty: none; CTRACK_CACHE_MAX: "
             "its size, default 1G)",
     .kind = CT_OPT_CALL,
     .call = opt_debug_dir,
     .flags = CT_OPT_DIR},
    CT_OPT_STANDARD_ROWS(G_GENERAL, opt_help, opt_version),
};

#define NTABLES 2

/* ctrack-analyze's options: the check options (check.h), then its own. */
static void get_tables(struct ct_opttab t[NTABLES])
{
	t[0] = (struct ct_opttab){ct_check_options, ct_check_noptions, OPT(ca)};
	t[1] = (struct ct_opttab){option_table, sizeof(option_table) / sizeof(option_table[0]), 0};
}

static const char *const synopsis[] = {
    "[OPTIONS] TRACE",
    "[OPTIONS] --diff BASE NEW",
    "--baseline BASE [--max-growth SHARE|SIZE] [OPTIONS] TRACE",
    "--symbols [--json] BINARY...",
    NULL,
};
static const char *const groups[] = {G_REPORTS, G_OUTPUTS, G_WINDOW,  G_FLAME, CT_CHECK_GROUP,
                                     G_COMPARE, G_SYMBOLS, G_GENERAL, NULL};
static const char *const description[] = {
    PROG " reads a trace written by ctrack(1) (an allocation trace of a program run under its "
         "shim) and reports the leaks (definitely, indirectly and possibly lost, and still "
         "reachable, as valgrind's memcheck classes them), the peak heap and the busiest "
         "allocation sites, with their backtraces.",
    "Without an output option it prints the text report. Each output option writes its own file; "
    "the text report is then left out, but not --json.",
    NULL,
};
static const char *const notes[] = {
    "A FILE of - is standard output. Options may come before or after the operands; '--' ends "
    "them. An option's argument follows it or is joined with '=' (--top=5).",
    NULL,
};
static const char *const exit_status[] = {
    "0: the report was written (also for a truncated or damaged trace, with a warning).",
    "1: an error, or a check of a damaged trace that holds on what was read (a damaged trace never "
    "passes).",
    "2: a usage error.",
    "3: --symbols found a given binary that loses inline attribution.",
    "23: a rule of --fail-on, --max-leaked, --max-peak, --baseline or --max-growth is broken.",
    NULL,
};
static const struct ct_example examples[] = {
    {PROG " ctrack.demo.1234.zst",
     "The text report: the leaks (what is lost first), the peak heap and the busiest sites."},
    {PROG " --html report.html ctrack.demo.1234.zst",
     "A self-contained HTML report to open in a browser or send to a colleague."},
    {PROG " --fail-on definite --junit leaks.xml ctrack.tests.1234.zst",
     "A CI check: exit 23 when a block is definitely or indirectly lost, each leak site a failing "
     "JUnit testcase."},
    {PROG " --json ctrack.app.1234.zst > base.json",
     "Save a baseline (a JSON report) of a known good run ..."},
    {PROG " --baseline base.json --max-growth 5% ctrack.app.5678.zst",
     "... and fail (exit 23) when a later run's leaks or peak grew more than 5% per site."},
    {PROG " --from 1.5 --to 2s ctrack.app.1234.zst",
     "What the program allocated between 1.5 s and 2 s into its run, and what of it was still "
     "live at 2 s."},
    {NULL, NULL},
};
static const struct ct_optdoc doc = {
    .prog = PROG,
    .version = CTRACK_VERSION,
    .brief = "report the leaks, the peak heap and the allocation sites of a ctrack trace",
    .synopsis = synopsis,
    .summary = "Reports the leaks, the peak heap and the busiest allocation sites of a ctrack trace.",
    .description = description,
    .groups = groups,
    .notes = notes,
    .examples = examples,
    .exit_status = exit_status,
    .see_also = "ctrack(1), valgrind(1), ms_print(1)",
};

/* --help, and the build's --help-man and --help-completion. */
static int opt_help(void *ctx, const struct ct_opt *self, const char *arg, char *err, size_t len)
{
	struct ct_opttab t[NTABLES];
	get_tables(t);
	return ct_opt_show(self, &doc, t, NTABLES);
}

/* The option at argv[*i] (its argument the next word, or joined by '='), applied: CT_OPT_GO_ON, or
 * the exit status after one line on stderr. */
static int parse_option(int argc, char **argv, int *i, struct options *o)
{
	struct ct_opttab t[NTABLES];
	const struct ct_opttab *in;
	const char *a = argv[*i], *eq = a[1] == '-' ? strchr(a, '=') : NULL;
	char err[1024], name[96];
	get_tables(t);
	const struct ct_opt *r = ct_opt_find(t, NTABLES, a, &in);
	if (!r)
		return usage_error("unknown option '%s'", a);
	snprintf(name, sizeof(name), "%.*s", (int)(eq ? (size_t)(eq - a) : strlen(a)), a);
	if (!r->arg && eq)
		return usage_error("%s takes no argument", name);
	const char *v = !r->arg ? NULL : eq ? eq + 1 : *i + 1 < argc ? argv[++*i] : NULL;
	if (r->arg && (!v || !*v)) {
		fprintf(stderr, PROG ": %s needs an argument (%s) (see --help)\n", name, r->arg);
		return 2;
	}
	int rc = ct_opt_apply(r, in, o, v, err, sizeof(err));
	if (rc > 0)
		fprintf(stderr, PROG ": %s%s\n", err, rc == 2 ? " (see --help)" : "");
	return rc;
}

/* --follow goes alone: 1 after the usage error, else 0. */
static int follow_alone(const struct options *o)
{
	const char *other = NULL;
	if (o->diff || o->symbols || o->baseline)
		other = o->diff ? "--diff" : o->symbols ? "--symbols" : "--baseline";
	else if (o->ca.rules || o->window || o->between)
		other = o->ca.rules ? "a check" : "a window";
	else if (o->nargs > 1)
		other = "a second trace";
	for (size_t k = 0; !other && k < NOUTPUTS; k++)
		other = o->out[k] ? outputs[k].option : NULL;
	if (other)
		usage_error("--follow shows one trace as it is written: it does not go with %s", other);
	return other != NULL;
}

/* The rules between options, once all are read: -1 to go on, or the exit status. */
static int finish_args(struct options *o)
{
	int max_leaked = o->ca.max_leaked;
	o->checking = o->ca.rules;
	if (!o->trace)
		return usage_error("%s", o->symbols ? "no binary given" : "no trace file given");
	if (o->follow && follow_alone(o))
		return 2;
	if (o->symbols && (o->checking || o->baseline || o->growth_given || o->between || o->window))
		return usage_error("--symbols checks binaries: no trace rule or window applies%s", "");
	if (o->diff && (max_leaked || o->ca.check.peak_rule || o->baseline))
		return usage_error("--diff compares its two traces (--fail-on, --max-growth): %s is for "
		                   "one trace",
		                   o->baseline  ? "--baseline"
		                   : max_leaked ? "--max-leaked"
		                                : "--max-peak");
	if (o->growth_given && !o->baseline && !o->diff)
		return usage_error("--max-growth needs --baseline BASE or --diff BASE NEW%s", "");
	if (o->from_us > o->to_us)
		return usage_error("--from is after --to%s", "");
	if (o->window && o->between)
		return usage_error("--from and --to cannot go with --between (one window at a time)%s", "");
	if (o->window && (o->checking || o->baseline || o->growth_given)) /* the checks judge whole runs */
		return usage_error("--from and --to cannot go with %s",
		                   o->baseline ? "--baseline" : "the checks");
	/* The HTML report and massif chart the whole run from its timeline: narrowed figures beside it
	 * would disagree with the chart (the page selects its own window by dragging across a chart). */
	if ((o->window || o->between) && (asked(o, "--html") || asked(o, "--massif")))
		return usage_error("--from, --to and --between narrow the reports, not %s (the HTML report "
		                   "selects a window on its charts)",
		                   asked(o, "--html") ? "--html" : "--massif");
	if (o->between && (o->diff || o->baseline))
		return usage_error("--between reports one trace, not %s", o->diff ? "--diff" : "--baseline");
	/* A comparison's level is --fail-on's; its own rule replaces --fail-on's absolute one, unless
	 * --max-leaked asks for that too. */
	o->level = o->ca.check.fail_on ? o->ca.check.fail_on : CT_FAIL_DEFINITE;
	if (o->baseline || o->diff) {
		o->growth_given |= o->ca.check.fail_on != CT_FAIL_NONE || o->baseline;
		if (!max_leaked)
			o->ca.check.fail_on = CT_FAIL_NONE;
		o->checking = o->ca.check.fail_on || o->ca.check.peak_rule || o->baseline;
	}
	/* Suppressions serve the checks (the built-in ones nothing else): a plain report keeps
	 * memcheck's figures and names what the others match. */
	int ci = asked(o, "--junit") || asked(o, "--sarif") || asked(o, "--github");
	int checks = o->checking || o->baseline || o->growth_given || ci;
	o->ca.check.builtin = !o->ca.no_builtin && checks;
	o->ca.check.report_only = !checks;
	if (max_leaked && !o->ca.check.fail_on)
		o->ca.check.fail_on = CT_FAIL_DEFINITE;
	if (o->diff && o->nargs != 2)
		return usage_error("--diff needs two traces, BASE and NEW%s", "");
	for (size_t k = 0; o->diff && k < NOUTPUTS; k++)
		if (o->out[k] && !(outputs[k].flags & OUT_DIFF))
			return usage_error("--diff writes a flame graph (--flamegraph) and an HTML report "
			                   "(--html), no other file%s",
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

/* Returns -1 to go on, or the exit status (o->debug_dirs is the caller's to free either way). */
static int parse_args(int argc, char **argv, struct options *o)
{
	*o = (struct options){.top = 10,
	                      .callers = 3,
	                      .args = calloc((size_t)argc, sizeof(char *)),
	                      .ca.supp_files = calloc((size_t)argc, sizeof(char *)),
	                      .cost = -1,
	                      .to_us = UINT64_MAX,
	                      .detailed_freq = 10,
	                      .source_context = 3};
	if (!o->args || !o->ca.supp_files)
		return fprintf(stderr, PROG ": out of memory\n"), 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int rc = CT_OPT_GO_ON;
		if (!strcmp(a, "--"))
			while (++i < argc)
				o->args[o->nargs++] = argv[i];
		else if (a[0] == '-' && a[1])
			rc = parse_option(argc, argv, &i, o);
		else
			o->args[o->nargs++] = a;
		if (rc != CT_OPT_GO_ON)
			return rc;
	}
	o->trace = o->args[0];
	return finish_args(o);
}

/* An output file that would destroy an input of the run (the traces, a baseline, the suppressions
 * and fold files) or another trace, refused before anything is read or written: -1 to go on, or
 * the exit status after one line on stderr. */
static int refuse_outputs(const struct options *o)
{
	const char **in = calloc(o->nargs + o->ca.nsupp + o->nfold + 1, sizeof(*in));
	if (!in)
		return fprintf(stderr, PROG ": out of memory\n"), 1;
	size_t n = 0, which;
	for (size_t i = 0; i < o->nargs; i++)
		in[n++] = o->args[i];
	for (size_t i = 0; i < o->ca.nsupp; i++)
		in[n++] = o->ca.supp_files[i];
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

/* One trace's report: its sites, a symbolizer (sym, the report's from then on, or a new one when
 * NULL) and the groups. */
static int open_report(const struct options *o, const char *path, const struct ct_model *m,
                       const struct ct_fold *fold, struct ct_report *r, struct ct_symbolizer *sym)
{
	*r = (struct ct_report){.top = o->top,
	                        .out = o->std_out->f,
	                        .fold = fold,
	                        .all_frames = o->all_frames,
	                        .full_stacks = o->full_stacks,
	                        .callers = o->callers,
	                        .group = o->group};
	r->full_names = o->full_names;
	r->source_context = o->source_context;
	r->sym = sym;
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
/* Whether m's exit scan found blocks definitely or indirectly lost. */
static int lost(const struct ct_model *m)
{
	uint64_t blocks[CT_KINDS], bytes[CT_KINDS];
	ct_model_class_totals(m, blocks, bytes);
	return blocks[CT_CLASS_DEFINITE] || blocks[CT_CLASS_INDIRECT];
}

static enum ct_cost pick_cost(const struct options *o, const struct ct_model *a, const struct ct_model *b)
{
	if (o->cost >= 0)
		return (enum ct_cost)o->cost;
	if (a->classified && (!b || b->classified))
		return lost(a) || (b && lost(b)) ? CT_COST_LOST : CT_COST_PEAK;
	return a->t.live_allocations || (b && b->t.live_allocations) ? CT_COST_LEAKED : CT_COST_PEAK;
}

/* The outputs asked for: the files in table order, then the report on stdout. Returns 0, 1 when a
 * file could not be written (said on stderr), or the stdout report's negative errno. */
static int write_outputs(const struct options *o, const struct ct_report *r)
{
	/* The CI formats list the leaks that count: --fail-on's (definite by default), or all of them
	 * when the trace has no classes. */
	struct exports x = {.r = r,
	                    .detailed_freq = o->detailed_freq,
	                    .cost = pick_cost(o, r->m, NULL),
	                    .reverse = o->reverse,
	                    .pprof_peak = o->pprof_peak,
	                    .ci_level = r->m->classified ? o->level : CT_FAIL_REACHABLE,
	                    .by_line = o->by_line,
	                    .icicle = o->icicle,
	                    .full_names = o->full_names,
	                    .hide = o->hide_frames,
	                    .nhide = o->nhide};
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

/* A window by time past the run's end uses the end: said once on stderr. */
static void window_past_end(const char *path, const struct ct_model *m)
{
	const struct ct_between *b = m->between;
	if (b->from_past_end || b->to_past_end)
		fprintf(stderr,
		        PROG ": warning: %s %.3f s is past the end of %s (%.3f s): the window ends there\n",
		        b->from_past_end ? "--from" : "--to",
		        (double)(b->from_past_end ? b->from_at : b->to_at) / 1e6, path,
		        (double)ct_model_runtime_us(m) / 1e6);
}

/* Reads the trace at path into m (initialised here; the caller destroys it even on failure). Returns
 * 0, or -1 after one line on stderr. A truncated or damaged trace is read up to the cut or the
 * damage, with a warning. */
/* A traced module's debug info is looked for and decompressed while the rest of the trace is read,
 * from its first frame on: modules no frame lies in (ld.so, libm in most traces) are never asked. */
static void prefetch_debug(const struct ct_module *mod, void *arg)
{
	(void)arg;
	if (mod->path && mod->path[0] == '/')
		ct_debuginfo_prefetch(mod->build_id, mod->build_id_len);
}

/* load, and with sym (unless NULL) the frames resolved while the trace is read (presym.h) into a
 * symbolizer the caller frees, whose files' pages are given back once they are all resolved. */
static int read_model(const char *path, struct ct_model *m, const struct options *o,
                      struct ct_symbolizer **sym)
{
	char err[512];
	int window = o->window; /* --from, --to */
	int rc = ct_model_init(m);
	m->module_framed = prefetch_debug;
	m->tl.no_sites =
	    !asked(o, "--html") && !asked(o, "--massif"); /* the only readers of the stacks' slices */
	if (rc < 0 || (o->between && ct_model_between(m, o->between, o->between_to) < 0) ||
	    (window && ct_model_window(m, o->from_us, o->to_us) < 0)) {
		fprintf(stderr, PROG ": out of memory\n");
		return -1;
	}
	struct progress p = {.m = m};
	int tty = isatty(STDERR_FILENO);
	if (sym)
		ct_debuginfo_prefetch_own_libc();
	struct ct_presym *ahead = sym ? ct_presym_start(m) : NULL;
	rc = ct_read_trace_progress(path, m, err, sizeof(err), tty ? show_progress : NULL, &p);
	/* the SYMBOLS advice's package lookup, from the moment the modules with frames are known: while
	 * the last frames are resolved (the text report is the last output), once the debug files being
	 * decompressed are (diagnose.c) */
	if (sym && rc >= 0 && (o->out[NOUTPUTS - 1] || asked(o, "--json") || asked(o, "--html")))
		ct_diagnose_prefetch(m);
	if (sym)
		*sym = ct_presym_finish(ahead, m);
	if (sym && *sym) /* resolved: the files' pages are worth less than the reports' memory now */
		ct_symbolizer_give_back(*sym);
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
		fprintf(stderr, PROG ": %s: %s\n", window ? "--from/--to" : "--between", err);
		return -1;
	}
	if (window)
		window_past_end(path, m);
	else if (!m->between)
		ct_trace_trailer_verify(path, m); /* the test suite's check of the writer (summary.h) */
	return 0;
}

static int load(const char *path, struct ct_model *m, const struct options *o)
{
	return read_model(path, m, o, NULL);
}

/* The trace at path into m as load reads it, its frames resolved meanwhile on a thread of their own
 * into *sym (NULL: none; the caller frees it, also on failure). */
static int load_resolved(const char *path, struct ct_model *m, const struct options *o,
                         struct ct_symbolizer **sym)
{
	*sym = NULL;
	return read_model(path, m, o, sym);
}

/* A check of a damaged trace (or baseline) covers only what was read before the damage, and of one
 * that ends early without any leak scan (killed, cut) only what came before the end: neither ever
 * passes. Said on out, one line. Returns 1 for such a trace. (One that ends early after a scan, a
 * server killed after its ctrack_check_leaks(), is judged by that scan.) */
static int incomplete(FILE *out, const char *path, const struct ct_model *m)
{
	if (!m->damaged && !m->complete && !m->classified) {
		/* killed (SIGKILL) or cut, with no scan: what came after the end is unknown */
		fprintf(out,
		        "check incomplete: %s ends early (the program was killed, or the trace cut or still "
		        "being written) and holds no leak scan: its figures stop there, so no check passes "
		        "on it\n",
		        path);
		return 1;
	}
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
	struct ct_check c = {.builtin = o->ca.check.builtin};
	char err[512];
	int rc = 0;
	for (size_t i = 0; i < o->ca.nsupp && !rc; i++)
		rc = ct_check_add_suppressions(&c, o->ca.supp_files[i], err, sizeof(err));
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
	if (!rc && (rc = open_report(o, o->baseline, &m, fold, &r, NULL)) == 0)
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
 * damaged (the check is incomplete), or -1 after one line on stderr. sym: m's frames resolved while it
 * was read (taken, freed either way), or NULL. */
static int report(const struct options *o, const struct ct_model *m, struct ct_symbolizer *sym)
{
	struct ct_fold *fold;
	struct ct_report r;
	if (!has_classes(o->trace, m, o->checking ? o->ca.check.fail_on : CT_FAIL_NONE) ||
	    (o->baseline && !has_classes(o->trace, m, o->level)) || load_fold(o, &fold) < 0) {
		ct_symbolizer_free(sym);
		return -1;
	}
	int rc = open_report(o, o->trace, m, fold, &r, sym), broken = 0, partial = 0;
	r.supp = o->ca.check.supp;
	if (!rc)
		rc = write_outputs(o, &r);
	if (!rc && (o->ca.check.fail_on || o->ca.check.peak_rule)) {
		broken = ct_check_run(&r, &o->ca.check, check_stream(o));
		rc = broken < 0 ? broken : 0;
	}
	if (!rc && o->baseline) {
		int grown = against_baseline(o, &r, fold, &partial);
		if (grown < 0) {
			ct_report_close(&r);
			ct_fold_free(fold);
			ct_diagnose_prefetch_free();
			return -1;
		}
		broken |= grown;
	}
	if (!rc && (o->ca.check.fail_on || o->ca.check.peak_rule || o->baseline))
		partial |= incomplete(check_stream(o), o->trace, m);
	ct_report_close(&r);
	ct_fold_free(fold);
	ct_diagnose_prefetch_free();
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

/* --diff's report: the sites of both runs matched as --baseline matches them (diff.c). 0 or -ENOMEM. */
static int write_diff(const struct options *o, const struct ct_report *rb, const struct ct_report *rn)
{
	struct ct_baseline *b = NULL, *n = NULL;
	int rc = ct_baseline_of_report(rb, CT_FAIL_REACHABLE, &b);
	if (!rc)
		rc = ct_baseline_of_report(rn, CT_FAIL_REACHABLE, &n);
	if (!rc)
		rc = ct_write_diff(o->std_out->f, b, n, asked(o, "--json"));
	ct_baseline_free(b);
	ct_baseline_free(n);
	return rc;
}

/* --diff BASE.json NEW: a saved JSON report against a trace, as --baseline takes one (its sites, no
 * stacks: no flame graph), and with --max-growth, NEW checked against it. The exit status, or -1
 * after one line on stderr. */
static int diff_json_base(const struct options *o)
{
	struct ct_baseline *b = NULL, *n = NULL, *level = NULL;
	struct ct_fold *fold = NULL;
	struct ct_report rn = {0};
	struct ct_model m;
	char err[512];
	int rc = 0, broken = 0, loaded;
	for (size_t i = 0; i < NOUTPUTS; i++)
		if (o->out[i] && outputs[i].flags & OUT_FILE && outputs[i].write != write_html) {
			fprintf(stderr, PROG ": --diff: %s is a JSON report, which holds no stacks to draw\n",
			        o->args[0]);
			return -1;
		}
	if (ct_baseline_of_json(o->args[0], CT_FAIL_REACHABLE, &b, err, sizeof(err)) < 0 ||
	    (o->growth_given && ct_baseline_of_json(o->args[0], o->level, &level, err, sizeof(err)) < 0)) {
		fprintf(stderr, PROG ": --diff: %s\n", err);
		ct_baseline_free(b);
		return -1;
	}
	if (load(o->args[1], &m, o) < 0) /* m is set up either way (run() destroys it so) */
		rc = -1;
	loaded = 1;
	if (!rc && load_fold(o, &fold) < 0)
		rc = -1;
	if (!rc && o->growth_given &&
	    (suppress_other(o, o->args[1], &m) < 0 || !has_classes(o->args[1], &m, o->level)))
		rc = -1;
	if (!rc && (rc = open_report(o, o->args[1], &m, fold, &rn, NULL)) == 0 &&
	    (rc = ct_baseline_of_report(&rn, CT_FAIL_REACHABLE, &n)) == 0)
		rc = ct_write_diff(o->std_out->f, b, n, asked(o, "--json"));
	if (!rc && asked(o, "--html")) { /* NEW's page with the diff view: BASE's sites, no stacks */
		const struct ct_html_diff hd = {b, n, NULL};
		struct exports x = {.r = &rn, .html_diff = &hd};
		rc = write_file(o, o->out[find_output("--html") - outputs], write_html, &x);
	}
	FILE *out = asked(o, "--json") ? stderr : o->std_out->f; /* compare_runs' */
	if (!rc && o->growth_given) {
		fputc('\n', out);
		broken = rc = ct_baseline_check(level, &rn, o->level, &o->growth, out);
	}
	int partial = !rc && o->growth_given ? incomplete(out, o->args[1], &m) : 0;
	if (rc < -1)
		fprintf(stderr, PROG ": %s\n", strerror(-rc));
	ct_baseline_free(n);
	ct_baseline_free(b);
	ct_baseline_free(level);
	ct_report_close(&rn);
	ct_fold_free(fold);
	if (loaded)
		ct_model_destroy(&m);
	return rc < 0 ? -1 : broken > 0 ? CT_CHECK_EXIT : partial;
}

/* --diff: the two traces' trees in one (base set 0, new set 1), printed as a diff, and drawn. */
static int diff(const struct options *o, const struct ct_model *base, const struct ct_model *new)
{
	struct ct_fold *fold;
	struct ct_report rb, rn;
	if (load_fold(o, &fold) < 0)
		return -1;
	struct exports x = {.r = &rn,
	                    .has_tree = 1,
	                    .cost = pick_cost(o, base, new),
	                    .reverse = o->reverse,
	                    .diff = 1,
	                    .icicle = o->icicle,
	                    .full_names = o->full_names};
	int broken = 0, partial = 0;
	if (o->growth_given &&
	    (!has_classes(o->args[0], base, o->level) || !has_classes(o->args[1], new, o->level))) {
		ct_fold_free(fold);
		return -1;
	}
	int rc = open_report(o, o->args[0], base, fold, &rb, NULL);
	if (!rc)
		rc = open_report(o, o->args[1], new, fold, &rn, NULL);
	if (!rc)
		rc = ct_tree_init(&x.tree, o->reverse, CT_TREE_SETS);
	/* By line, files by their names: by function, nodes are keyed on the module's name, which two
	 * builds may differ in, and by full path two checkouts would share no node. */
	const struct ct_tree_opts to = {
	    .reversed = o->reverse, .by_line = 1, .file_names = 1, .hide = o->hide_frames, .nhide = o->nhide};
	if (!rc)
		rc = ct_tree_configure(&x.tree, &to, NULL, 0);
	if (!rc)
		rc = ct_tree_add(&x.tree, &rb, 0);
	if (!rc)
		rc = ct_tree_add(&x.tree, &rn, 1);
	if (!rc)
		rc = ct_tree_finish(&x.tree);
	if (!rc)
		rc = write_diff(o, &rb, &rn);
	if (!rc && o->growth_given)
		rc = compare_runs(o, &rb, &rn, &broken);
	if (!rc && o->growth_given) {
		FILE *out = asked(o, "--json") ? stderr : o->std_out->f; /* compare_runs' */
		partial = incomplete(out, o->args[0], base) | incomplete(out, o->args[1], new);
	}
	struct ct_baseline *hb = NULL, *hn = NULL; /* --html's diff view: every site of both runs */
	struct ct_html_diff hd = {0};
	if (!rc && asked(o, "--html") && !(rc = ct_baseline_of_report(&rb, CT_FAIL_REACHABLE, &hb)) &&
	    !(rc = ct_baseline_of_report(&rn, CT_FAIL_REACHABLE, &hn)))
		hd = (struct ct_html_diff){hb, hn, &rb}, x.html_diff = &hd;
	if (rc < 0)
		fprintf(stderr, PROG ": %s\n", strerror(-rc));
	for (size_t i = 0; i < NOUTPUTS && !rc; i++)
		if (o->out[i] && outputs[i].flags & OUT_FILE)
			rc = write_file(o, o->out[i], outputs[i].write, &x);
	ct_baseline_free(hb);
	ct_baseline_free(hn);
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
	ct_check_release(&o->ca.check);
	free(o->debug_dirs);
	free(o->args);
	free(o->ca.supp_files);
	free(o->between);
}

/* --follow: the live view of o->trace until it ends or the user quits; the exit status (128 + N
 * when signal N stopped it). */
static int follow(const struct options *o)
{
	struct ct_model m;
	struct ct_liveview_end end;
	char err[512];
	const struct ct_liveview_opts lo = {
	    .trace = o->trace, .plain = stdout, .own_signals = 1, .linger = 1};
	int rc = ct_model_init(&m) < 0 ? (snprintf(err, sizeof(err), "out of memory"), -1)
	                               : ct_liveview_run(&lo, &m, &end, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, PROG ": %s\n", err);
	else if (end.state == CT_FOLLOW_DAMAGED)
		fprintf(stderr,
		        PROG ": warning: %s: corrupt trace near byte %llu (%s); figures cover what was "
		             "read before it\n",
		        o->trace, (unsigned long long)m.damaged_at, m.damage);
	else if (end.state == CT_FOLLOW_GONE)
		fprintf(stderr,
		        PROG ": warning: %s ends there, cut before its end: its writer (pid %llu) is "
		             "gone (killed?); figures cover what was recorded\n",
		        o->trace, (unsigned long long)end.writer);
	ct_model_destroy(&m);
	return rc < 0 ? 1 : end.signal ? 128 + end.signal : 0;
}

/* A sampled trace (SAMPLING) sees one allocation in many: no check may judge it. 0, or 2 (a usage
 * error) after one line on stderr. */
static int refuse_sampled(const struct options *o, const char *path, const struct ct_model *m)
{
	const char *what = o->ca.check.fail_on || o->ca.nsupp ? "a leak check"
	                   : o->ca.check.peak_rule            ? "--max-peak"
	                   : o->baseline || o->growth_given   ? "a check against a baseline"
	                   : asked(o, "--junit") || asked(o, "--sarif") || asked(o, "--github")
	                       ? "a CI leak list"
	                       : NULL;
	if (!m->sample_rate || !what)
		return 0;
	fprintf(stderr,
	        PROG ": %s is sampled (one allocation per %llu bytes): %s cannot judge it, since it needs "
	             "every block (trace without --sample)\n",
	        path, (unsigned long long)m->sample_rate, what);
	return 2;
}

/* Reads the trace (two with --diff) and writes what was asked for: the exit status. */
static int run(struct options *o)
{
	if (o->follow)
		return follow(o);
	struct ct_model m[2];
	int n = o->diff ? 2 : 1, status = 0;
	if (o->diff && ct_baseline_is_json(o->args[0]) == 1) { /* --diff BASE.json NEW */
		status = diff_json_base(o);
		return status < 0 ? 1 : status;
	}
	struct ct_symbolizer *sym = NULL; /* one trace's frames, resolved while it is read */
	for (int i = 0; i < n; i++)
		if (!status &&
		    (o->diff ? load(o->args[i], &m[i], o) : load_resolved(o->args[i], &m[i], o, &sym)) < 0)
			status = 1, n = i + 1;
	for (int i = 0; i < n && !status; i++)
		status = refuse_sampled(o, o->diff ? o->args[i] : o->trace, &m[i]);
	char err[512];
	if (!status && !o->diff && ct_check_suppress(&o->ca.check, &m[0], err, sizeof(err)) < 0)
		status = 1, fprintf(stderr, PROG ": %s\n", err);
	for (int i = 0; o->diff && o->growth_given && i < n && !status; i++)
		status = suppress_other(o, o->args[i], &m[i]) < 0;
	if (!status)
		status = o->diff ? diff(o, &m[0], &m[1]) : report(o, &m[0], sym);
	else
		ct_symbolizer_free(sym);
	ct_diagnose_prefetch_free(); /* started by read_model when report is not reached */
	for (int i = 0; i < n; i++)
		ct_model_destroy(&m[i]);
	return status < 0 ? 1 : status;
}

int main(int argc, char **argv)
{
	struct options o;
	struct ct_outfile std_out = {0};
	/* One malloc arena for every thread: glibc grows a thread's own arena a few pages at a time,
	 * each step an mprotect that takes the address space's lock for writing and so stalls the page
	 * faults of the threads inflating debug files (600 calls on python3's trace). */
	mallopt(M_ARENA_MAX, 1);
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
