/* SPDX-License-Identifier: MIT */
/* The closing message: figures from the analysis library's one-call summary (summary.h), counts
 * with thousands separators, sizes exact below 10 KiB, and commands quoted for the shell. Only
 * prints; nothing here can change the launcher's exit status. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "closing.h"
#include "locate.h"
#include "summary.h"
#include "tracefile.h"

/* The message names at most this many children's traces: a run of `make` has hundreds. */
#define CHILDREN_SHOWN 10

/* ---- figures and words ---- */

static const char *fmt_count(uint64_t v, char *buf, size_t len)
{
	char digits[24];
	int n = snprintf(digits, sizeof(digits), "%" PRIu64, v);
	size_t o = 0;
	for (int i = 0; i < n && o + 2 < len; i++) {
		if (i > 0 && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

/* Exact below 10 KiB (small leaks are counted in bytes), else one decimal in binary units. */
static const char *fmt_bytes(uint64_t v, char *buf, size_t len)
{
	static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
	char count[32];
	if (v < 10240) {
		snprintf(buf, len, "%s byte%s", fmt_count(v, count, sizeof(count)), v == 1 ? "" : "s");
		return buf;
	}
	double x = (double)v / 1024;
	size_t u = 0;
	while (x >= 1024 && u + 1 < sizeof(units) / sizeof(units[0]))
		x /= 1024, u++;
	snprintf(buf, len, "%.1f %s", x, units[u]);
	return buf;
}

static int shell_safe(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./,:+@%=-", *s))
			return 0;
	return 1;
}

static void print_quoted(const char *s)
{
	if (shell_safe(s)) {
		fputs(s, stderr);
		return;
	}
	fputc('\'', stderr);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", stderr);
		else
			fputc(*s, stderr);
	}
	fputc('\'', stderr);
}

/* ---- summaries ---- */

/* A trace's summary, or why there is none. */
struct summary {
	int ok; /* s is filled, else err says why */
	struct ct_trace_summary s;
	char err[256];
};

static void summarize(const char *path, struct summary *r)
{
	r->err[0] = 0;
	r->ok = ct_trace_summarize(path, &r->s, r->err, sizeof(r->err)) == 0;
	if (!r->ok && !r->err[0])
		snprintf(r->err, sizeof(r->err), "the trace cannot be read");
}

/* "PREFIX 1,031 allocations, ...", or "PREFIX no summary: why". */
static void print_summary(const struct summary *r, const char *prefix)
{
	const struct ct_trace_summary *s = &r->s;
	char a[32], b[32], c[32], d[32], e[32];
	if (!r->ok) {
		fprintf(stderr, "%sno summary: %s\n", prefix, r->err);
		return;
	}
	fprintf(stderr, "%s%s allocation%s, %s allocated, peak %s, leaked %s in %s allocation%s%s\n", prefix,
	        fmt_count(s->allocations, a, sizeof(a)), s->allocations == 1 ? "" : "s",
	        fmt_bytes(s->bytes_allocated, b, sizeof(b)), fmt_bytes(s->peak_heap_bytes, c, sizeof(c)),
	        fmt_bytes(s->leaked_bytes, d, sizeof(d)), fmt_count(s->leaked_allocations, e, sizeof(e)),
	        s->leaked_allocations == 1 ? "" : "s", s->complete ? "" : " (trace is truncated)");
}

/* The trace's first warning (what the shim could not record, a write error), and how many more. */
static void print_warnings(const struct ct_trace_summary *s)
{
	if (!s->warnings)
		return;
	fprintf(stderr, "ctrack: warning: %s", s->first_warning);
	if (s->warnings > 1)
		fprintf(stderr, " (and %" PRIu64 " more warning%s: ctrack-analyze shows them)",
		        s->warnings - 1, s->warnings == 2 ? "" : "s");
	fputc('\n', stderr);
}

/* The summary line of the trace at path, its warnings, and a word on an exec'd image left untraced.
 * Returns 0 when the trace is cut short and none of its warnings can say why, else 1. */
static int print_summary_line(const char *path, const char *prefix, int follow_children)
{
	struct summary r;
	summarize(path, &r);
	print_summary(&r, prefix);
	if (r.ok)
		print_warnings(&r.s);
	if (r.ok && r.s.exec_path[0] && !follow_children)
		fprintf(stderr,
		        "ctrack: the program then ran '%s' (exec), which was not traced: "
		        "--follow-children traces it too\n",
		        r.s.exec_path);
	return !r.ok || r.s.complete || r.s.warnings;
}

/* ---- the parent's trace ---- */

/* "ctrack: WHAT with: CMD [OPTION] TRACE", each word quoted for the shell. */
static void print_command(const char *what, const char *cmd, const char *option, const char *name)
{
	fprintf(stderr, "ctrack: %s with: ", what);
	print_quoted(cmd);
	fputc(' ', stderr);
	if (option) {
		print_quoted(option);
		fputc(' ', stderr);
	}
	print_quoted(name);
	fputc('\n', stderr);
}

/* --html=NAME.html for the trace NAME.zst (any other name keeps its suffix: NAME.x.html). */
static void html_option(char *buf, size_t len, const char *name)
{
	size_t n = strlen(name);
	if (n > 4 && !strcmp(name + n - 4, ".zst"))
		n -= 4;
	snprintf(buf, len, "--html=%.*s.html", (int)n, name);
}

/* A file system this close to full may have refused the shim's very first bytes, or the NOTE that
 * says where a cut trace stops (output.c reserves 4 KiB for it, when the file system lets it). */
#define NEARLY_FULL (64 * 1024)

/* Why a trace that says nothing of a write error may still have been cut by one: its file system is
 * (nearly) full now. Says so on stderr; nothing when the space cannot be known or is plenty. */
static void print_full_disk(const char *name)
{
	struct statvfs fs;
	char free_bytes[32];
	if (statvfs(name, &fs) < 0)
		return;
	uint64_t avail = (uint64_t)fs.f_bavail * fs.f_frsize;
	if (avail >= NEARLY_FULL)
		return;
	fprintf(stderr,
	        "ctrack: the file system holding the trace has %s free: writing the trace most likely "
	        "failed there (%s)\n",
	        fmt_bytes(avail, free_bytes, sizeof(free_bytes)), strerror(ENOSPC));
}

/* What a trace the shim never wrote to says (the launcher writes it). */
#define EMPTY_NOTE \
	"nothing was traced: the shim never wrote to this trace (the program did not load it, or ended " \
	"before it started: under a memory limit such as ulimit -v the loader may find no room for it, " \
	"and says so on stderr)"

static void print_parent(const char *name, int follow_children)
{
	struct stat st;
	char size[32], cmd[PATH_MAX + 32], html[PATH_MAX + 32];
	if (stat(name, &st) < 0) {
		fprintf(stderr, "ctrack: trace file '%s' is gone: %s\n", name, strerror(errno));
		return;
	}
	if (st.st_size == 0 && ct_tracefile_fill_empty(name, EMPTY_NOTE) == 0 && stat(name, &st) < 0)
		st.st_size = 0;
	fprintf(stderr, "ctrack: trace written to %s (%s)\n", name,
	        fmt_bytes((uint64_t)st.st_size, size, sizeof(size)));
	if (st.st_size == 0) {
		fprintf(stderr, "ctrack: the trace is empty: the shim never wrote to it\n");
		print_full_disk(name);
		return;
	}
	if (!print_summary_line(name, "ctrack: ", follow_children))
		print_full_disk(name);
	ct_locate_analyzer(cmd, sizeof(cmd));
	print_command("analyze", cmd, NULL, name);
	html_option(html, sizeof(html), name);
	print_command("HTML report", cmd, html, name);
}

/* ---- the children's traces (--follow-children) ---- */

static int is_trace_name(const char *s)
{
	size_t n = strlen(s);
	return n > 11 && !strncmp(s, "ctrack.", 7) && !strcmp(s + n - 4, ".zst");
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_list(struct ct_trace_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	*l = (struct ct_trace_list){0};
}

/* The ctrack.*.zst files in dir (as many as memory allows; none when dir cannot be read). */
static void list_traces(const char *dir, struct ct_trace_list *l)
{
	*l = (struct ct_trace_list){0};
	DIR *d = opendir(dir);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));) {
		char **v = is_trace_name(e->d_name) ? realloc(l->v, (l->n + 1) * sizeof(*v)) : NULL;
		if (!v)
			continue;
		l->v = v;
		if ((v[l->n] = strdup(e->d_name)))
			l->n++;
	}
	closedir(d);
	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), cmp_name);
}

struct child {
	const char *name;
	struct summary sum;
};

/* Readable traces first, the most leaked bytes first, then by name. */
static int cmp_child(const void *a, const void *b)
{
	const struct child *x = a, *y = b;
	if (x->sum.ok != y->sum.ok)
		return y->sum.ok - x->sum.ok;
	if (x->sum.ok && x->sum.s.leaked_bytes != y->sum.s.leaked_bytes)
		return x->sum.s.leaked_bytes < y->sum.s.leaked_bytes ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* 1 if path is the file st describes (NULL: none). */
static int is_file(const char *path, const struct stat *st)
{
	struct stat sp;
	return st && stat(path, &sp) == 0 && sp.st_dev == st->st_dev && sp.st_ino == st->st_ino;
}

/* The traces of after that appeared during the run (not in before), other than the parent's
 * (name), summed up into v. Returns how many. */
static size_t new_children(const char *dir, const struct ct_trace_list *after,
                           const struct ct_trace_list *before, const char *name, struct child *v)
{
	char path[PATH_MAX];
	struct stat st;
	const struct stat *parent = stat(name, &st) == 0 ? &st : NULL;
	size_t n = 0;
	for (size_t i = 0; i < after->n; i++) {
		/* An empty list has no array, and bsearch's base must not be NULL even for 0 elements. */
		if (before->n && bsearch(&after->v[i], before->v, before->n, sizeof(*before->v), cmp_name))
			continue;
		int len = snprintf(path, sizeof(path), "%s/%s", dir, after->v[i]);
		if (len < 0 || (size_t)len >= sizeof(path) || is_file(path, parent))
			continue;
		v[n].name = after->v[i];
		summarize(path, &v[n++].sum);
	}
	return n;
}

/* The children that leaked most get their summary lines, so nobody has to guess which of
 * ctrack.*.zst to look at. */
static void print_children(const struct ct_closing *c, const char *name)
{
	struct ct_trace_list after;
	char prefix[NAME_MAX + 32], total[32];
	list_traces(c->dir, &after);
	struct child *v = after.n ? calloc(after.n, sizeof(*v)) : NULL;
	size_t n = v ? new_children(c->dir, &after, &c->before, name, v) : 0;
	if (n)
		qsort(v, n, sizeof(*v), cmp_child);
	if (n > CHILDREN_SHOWN)
		fprintf(stderr, "ctrack: %zu child traces in %s; the %d that leaked most:\n", n, c->dir,
		        CHILDREN_SHOWN);
	else if (n)
		fprintf(stderr, "ctrack: %zu child trace%s in %s:\n", n, n == 1 ? "" : "s", c->dir);
	uint64_t rest = 0;
	for (size_t i = 0; i < n; i++) {
		if (i >= CHILDREN_SHOWN) {
			rest += v[i].sum.ok ? v[i].sum.s.leaked_bytes : 0;
			continue;
		}
		snprintf(prefix, sizeof(prefix), "ctrack:   %s: ", v[i].name);
		print_summary(&v[i].sum, prefix);
	}
	if (n > CHILDREN_SHOWN)
		fprintf(stderr, "ctrack:   and %zu more, which leaked %s in all\n", n - CHILDREN_SHOWN,
		        fmt_bytes(rest, total, sizeof(total)));
	free(v);
	free_list(&after);
}

/* ---- the message ---- */

void ct_closing_init(struct ct_closing *c, const char *trace, int follow_children, int quiet)
{
	*c = (struct ct_closing){.quiet = quiet, .follow_children = follow_children};
	c->children = follow_children && !quiet && ct_tracefile_dir(trace, c->dir) == 0;
	if (c->children)
		list_traces(c->dir, &c->before);
}

void ct_closing_print(const struct ct_closing *c, const char *trace)
{
	if (c->quiet)
		return;
	print_parent(trace, c->follow_children);
	if (c->children)
		print_children(c, trace);
}

void ct_closing_signal(const char *prog, int sig)
{
	const char *abbrev = sigabbrev_np(sig), *what = strsignal(sig);
	fprintf(stderr, "ctrack: %s was killed by SIG%s (%s)\n", prog, abbrev ? abbrev : "?",
	        what ? what : "unknown signal");
}

void ct_closing_release(struct ct_closing *c)
{
	free_list(&c->before);
}
