/* SPDX-License-Identifier: MIT */
/* ctrack-analyze: reads a trace, builds the model, prints the text or JSON report.
 * Exit status: 0 (also for a truncated trace, with a warning), 1 on error, 2 on a usage error. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack-config.h"
#include "debuginfo.h"
#include "diagnose.h"
#include "export.h"
#include "reader.h"
#include "report.h"

#define PROG "ctrack-analyze"

static const char usage[] =
    "usage: " PROG " [--json] [--top N] [--group site|backtrace] [--fold FILE] [--all-frames]\n"
    "       [--debug-dir DIR]... TRACE\n"
    "       [--flamegraph FILE.svg] [--cost COST] [--reverse] [--folded FILE] [--html FILE.html]\n"
    "       [--pprof FILE.pb.gz] [--pprof-at exit|peak] [--speedscope FILE.json] [--massif FILE]\n"
    "       " PROG " [--json] [--flamegraph FILE.svg] [--cost COST] --diff BASE NEW\n"
    "       " PROG " [--json] --symbols BINARY...\n"
    "Reports the leaks, the peak heap and the busiest allocation sites of a ctrack trace.\n"
    "  --json           one JSON document on stdout (schema: docs/json-schema.md)\n"
    "  --flamegraph FILE  an interactive SVG flame graph (click to zoom, search, tooltips)\n"
    "  --cost COST      what flame graph widths measure: leaked, peak, allocations, temporary or\n"
    "                   allocated (bytes); default leaked when the program leaked, else peak\n"
    "  --reverse        the flame graph upside down from the allocation sites (icicle: callers below)\n"
    "  --folded FILE    folded stacks (main;parse;xmalloc 1234) for flamegraph.pl or inferno\n"
    "  --html FILE      a self-contained HTML report: summary, memory over time, flame graphs, leaks\n"
    "  --pprof FILE     pprof's profile.proto, gzipped (go tool pprof FILE); in-use figures are the\n"
    "                   leaks at exit, or the heap at its peak with --pprof-at peak\n"
    "  --speedscope FILE  speedscope's JSON format, one profile per cost\n"
    "  --massif FILE    valgrind massif's format (ms_print FILE, massif-visualizer)\n"
    "  --diff BASE NEW  per backtrace, the change in leaked bytes, peak and allocations from BASE\n"
    "                   to NEW, matched by function, file and line; with --flamegraph, coloured\n"
    "                   red where NEW grew and blue where it shrank\n"
    "  A FILE of - is standard output; writing files replaces the text report (not --json).\n"
    "  --top N          sites per ranking (default 10; the JSON 'leaks' list is always complete)\n"
    "  --group site|backtrace  one entry per allocation site (first shown frame's function, file\n"
    "                   and line; default) or per backtrace after folding\n"
    "  --fold FILE      also fold frames matching FILE's patterns (one per line, '*' wildcard,\n"
    "                   # comments; docs/fold.md); repeatable up to 8 times\n"
    "  --all-frames     show allocator frames (operator new, std::allocator, ...) instead of folding\n"
    "  --symbols BINARY...  instead of a trace: the symbol quality of each binary and the shared\n"
    "                   libraries it needs; exit 3 when a given binary loses inline attribution\n"
    "  --debug-dir DIR  also look for separate debug info under DIR (DIR/.build-id/xx/yyyy.debug\n"
    "                   or by .gnu_debuglink), after /usr/lib/debug; repeatable. Debuginfod is\n"
    "                   asked only when DEBUGINFOD_URLS is set\n";

struct options {
	int json;
	size_t top;
	const char *trace;
	char *debug_dirs;  /* colon-separated absolute paths, or NULL */
	int symbols;       /* --symbols: the positional arguments are binaries */
	const char **args; /* the positional arguments (args[0] is trace) */
	size_t nargs;
	int all_frames;
	enum ct_grouping group;
	const char *fold_files[8];
	size_t nfold;
	/* files to write, NULL when not asked for */
	const char *flamegraph, *folded, *html, *pprof, *speedscope, *massif;
	int cost; /* enum ct_cost, or -1: leaked when anything leaked, else peak */
	int reverse, pprof_peak, diff;
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

static const char *const file_options[] = {"--flamegraph", "--folded",     "--html",
                                           "--pprof",      "--speedscope", "--massif"};

/* Where the file option a ("--html" or "--html=FILE") is kept; NULL when a is no file option. */
static const char **file_option_target(struct options *o, const char *a)
{
	const char **targets[] = {&o->flamegraph, &o->folded,     &o->html,
	                          &o->pprof,      &o->speedscope, &o->massif};
	size_t n = strcspn(a, "=");
	for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++)
		if (strlen(file_options[i]) == n && !strncmp(a, file_options[i], n))
			return targets[i];
	return NULL;
}

/* Returns -1 to go on, or the exit status (o->debug_dirs is the caller's to free either way). */
static int parse_args(int argc, char **argv, struct options *o)
{
	*o = (struct options){.top = 10, .args = calloc((size_t)argc, sizeof(char *)), .cost = -1};
	if (!o->args)
		return fprintf(stderr, PROG ": out of memory\n"), 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], **target;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, stdout);
			return 0;
		} else if (!strcmp(a, "--version")) {
			printf(PROG " %s\n", CTRACK_VERSION);
			return 0;
		} else if (!strcmp(a, "--symbols")) {
			o->symbols = 1;
		} else if (!strcmp(a, "--json")) {
			o->json = 1;
		} else if (!strcmp(a, "--all-frames")) {
			o->all_frames = 1;
		} else if (!strcmp(a, "--reverse")) {
			o->reverse = 1;
		} else if (!strcmp(a, "--diff")) {
			o->diff = 1;
		} else if ((target = file_option_target(o, a))) {
			const char *v = option_value(argc, argv, &i, strcspn(a, "="));
			if (!v || !*v)
				return usage_error("%s needs a file", a);
			*target = v;
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
	if (o->diff && o->nargs != 2)
		return usage_error("--diff needs two traces, BASE and NEW%s", "");
	if (o->diff && (o->folded || o->html || o->pprof || o->speedscope || o->massif))
		return usage_error("--diff writes a flame graph (--flamegraph) but no other file%s", "");
	if (!o->symbols && !o->diff && o->nargs > 1)
		return usage_error("one trace at a time ('%s' is one too many)", o->args[1]);
	return -1;
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
	*r = (struct ct_report){.path = path,
	                        .m = m,
	                        .top = o->top,
	                        .out = stdout,
	                        .fold = fold,
	                        .all_frames = o->all_frames,
	                        .group = o->group};
	long n = ct_model_sites(m, &r->sites);
	r->sym = ct_symbolizer_new();
	if (n < 0 || !r->sym)
		return -ENOMEM;
	r->nsites = (size_t)n;
	return ct_report_group(r);
}

static void close_report(struct ct_report *r)
{
	ct_symbolizer_free(r->sym);
	free(r->groups);
	free(r->sites);
}

/* What the exporters are given. */
struct exports {
	const struct options *o;
	const struct ct_report *r;
	struct ct_tree tree; /* root first (the folded stacks, the flame graph unless --reverse) */
	int has_tree;        /* tree is built: --diff builds it, else the first exporter that needs it */
	enum ct_cost cost;
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
	int rc, rebuild = x->o->reverse && !x->o->diff; /* --diff's tree is reversed already */
	if ((rc = rebuild ? ct_tree_build(&reversed, x->r, 1) : root_tree(x, &t)))
		return rc;
	/* Zooming reveals detail, so a standalone graph keeps frames down to 0.1 px, but not without
	 * bound: a trace of a million distinct stacks must still give a file a browser opens. */
	struct ct_flame_opts fo = {.cost = x->cost, .diff = x->o->diff, .max_frames = 30000};
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
	return ct_write_pprof(out, x->r, x->o->pprof_peak);
}
static int write_speedscope(FILE *out, struct exports *x)
{
	return ct_write_speedscope(out, x->r);
}
static int write_massif(FILE *out, struct exports *x)
{
	return ct_write_massif(out, x->r);
}

/* Writes one file ("-": standard output) with fn; 0, or -1 after one line on stderr. */
static int write_file(const char *path, int (*fn)(FILE *, struct exports *), struct exports *x)
{
	int to_stdout = !strcmp(path, "-");
	FILE *out = to_stdout ? stdout : fopen(path, "w");
	if (!out) {
		fprintf(stderr, PROG ": cannot create %s: %s\n", path, strerror(errno));
		return -1;
	}
	int rc = fn(out, x);
	if (!rc && (fflush(out) || ferror(out)))
		rc = -errno;
	if (!to_stdout && fclose(out) && !rc)
		rc = -errno;
	if (rc)
		fprintf(stderr, PROG ": cannot write %s: %s\n", path, strerror(rc < 0 ? -rc : EIO));
	return rc ? -1 : 0;
}

/* --cost, or leaked bytes when anything leaked, else the peak. */
static enum ct_cost pick_cost(const struct options *o, const struct ct_model *a, const struct ct_model *b)
{
	if (o->cost >= 0)
		return (enum ct_cost)o->cost;
	return a->t.live_allocations || (b && b->t.live_allocations) ? CT_COST_LEAKED : CT_COST_PEAK;
}

static int any_file(const struct options *o)
{
	return o->flamegraph || o->folded || o->html || o->pprof || o->speedscope || o->massif;
}

static int write_files(const struct options *o, const struct ct_report *r)
{
	struct exports x = {.o = o, .r = r, .cost = pick_cost(o, r->m, NULL)};
	int rc = 0;
	const char *paths[] = {o->flamegraph, o->folded, o->html, o->pprof, o->speedscope, o->massif};
	int (*fns[])(FILE *, struct exports *) = {write_flamegraph, write_folded,     write_html,
	                                          write_pprof,      write_speedscope, write_massif};
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]) && !rc; i++)
		if (paths[i])
			rc = write_file(paths[i], fns[i], &x);
	if (x.has_tree)
		ct_tree_destroy(&x.tree);
	return rc;
}

static int report(const struct options *o, const struct ct_model *m)
{
	struct ct_fold *fold;
	struct ct_report r;
	if (load_fold(o, &fold) < 0)
		return -1;
	int rc = open_report(o, o->trace, m, fold, &r);
	if (!rc && any_file(o) && write_files(o, &r) < 0)
		rc = 1; /* said already */
	else if (!rc && (o->json || !any_file(o)))
		rc = o->json ? ct_report_json(&r) : ct_report_text(&r);
	close_report(&r);
	ct_fold_free(fold);
	if (rc < 0)
		fprintf(stderr, PROG ": %s\n", strerror(-rc));
	else if (fflush(stdout) || ferror(stdout))
		rc = -1, fprintf(stderr, PROG ": cannot write the report: %s\n", strerror(errno));
	return rc ? -1 : 0;
}

/* --diff: the two traces' trees in one (base set 0, new set 1), printed as a diff, and drawn. */
static int diff(const struct options *o, const struct ct_model *base, const struct ct_model *new)
{
	struct ct_fold *fold;
	struct ct_report rb, rn;
	if (load_fold(o, &fold) < 0)
		return -1;
	struct exports x = {.o = o, .r = &rn, .has_tree = 1, .cost = pick_cost(o, base, new)};
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
		rc = ct_write_diff(stdout, &x.tree, &rb, &rn, o->json);
	if (rc < 0)
		fprintf(stderr, PROG ": %s\n", strerror(-rc));
	else if (o->flamegraph)
		rc = write_file(o->flamegraph, write_flamegraph, &x);
	ct_tree_destroy(&x.tree);
	close_report(&rb);
	close_report(&rn);
	ct_fold_free(fold);
	if (!rc && (fflush(stdout) || ferror(stdout)))
		rc = -1, fprintf(stderr, PROG ": cannot write the report: %s\n", strerror(errno));
	return rc ? -1 : 0;
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
	if (!rc && o->json) {
		fputs("{\"modules\": ", stdout);
		ct_quality_json(stdout, &l);
		fputs("}\n", stdout);
	} else if (!rc) {
		ct_quality_text(stdout, &l, 0);
	}
	if (rc == -ENOMEM)
		fprintf(stderr, PROG ": out of memory\n");
	ct_quality_list_free(&l);
	return rc ? 1 : poor ? 3 : 0;
}

/* Reads the trace at path into m (initialised here; the caller destroys it even on failure). Returns
 * 0, or -1 after one line on stderr. A truncated trace is read up to the cut, with a warning. */
static int load(const char *path, struct ct_model *m)
{
	char err[512];
	if (ct_model_init(m) < 0) {
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
	if (!m->complete)
		fprintf(
		    stderr,
		    PROG
		    ": warning: %s is truncated (the process was killed?); figures cover what was recorded\n",
		    path);
	return 0;
}

int main(int argc, char **argv)
{
	struct options o;
	int status = parse_args(argc, argv, &o);
	if (status < 0 && ct_debuginfo_set_dirs(o.debug_dirs) < 0)
		status = 1, fprintf(stderr, PROG ": out of memory\n");
	if (status < 0 && o.symbols)
		status = check_symbols(&o);
	if (status >= 0) {
		ct_debuginfo_free();
		free(o.debug_dirs);
		free(o.args);
		return status;
	}
	struct ct_model m[2];
	int n = o.diff ? 2 : 1;
	status = 0;
	for (int i = 0; i < n; i++)
		if (!status && load(o.args[i], &m[i]) < 0)
			status = 1, n = i + 1;
	if (!status)
		status = (o.diff ? diff(&o, &m[0], &m[1]) : report(&o, &m[0])) < 0;
	for (int i = 0; i < n; i++)
		ct_model_destroy(&m[i]);
	ct_debuginfo_free();
	free(o.debug_dirs);
	free(o.args);
	return status;
}
