/* SPDX-License-Identifier: MIT */
/* The closing message: figures from the analysis library's one-call summary (summary.h), counts
 * with thousands separators, sizes exact below 10 KiB, and commands quoted for the shell. Only
 * prints; nothing here can change the launcher's exit status. */
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
#include "ctrack/format.h"
#include "family.h"
#include "locate.h"
#include "sampling.h"

/* The summary's fifth leak kind, after the CLASSES record's four: live blocks never scanned. */
#define UNSCANNED CT_CLASSES

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

/* "N bytes in N blocks" into buf. */
static const char *fmt_blocks(uint64_t bytes, uint64_t blocks, char *buf, size_t len)
{
	char b[32], n[32];
	snprintf(buf, len, "%s in %s block%s", fmt_bytes(bytes, b, sizeof(b)),
	         fmt_count(blocks, n, sizeof(n)), blocks == 1 ? "" : "s");
	return buf;
}

/* What was lost, in memcheck's order and the kinds --check fails on first: "lost 1,024 bytes in 2
 * blocks (definitely 1,000 in 1, indirectly 24 in 1); possibly lost 16 bytes in 1 block". */
static void print_lost(const uint64_t *by, const uint64_t *n)
{
	uint64_t lost = by[CT_CLASS_DEFINITE] + by[CT_CLASS_INDIRECT];
	uint64_t lost_blocks = n[CT_CLASS_DEFINITE] + n[CT_CLASS_INDIRECT];
	char a[64], b[32], c[32], d[32];
	if (!lost_blocks)
		fputs("nothing definitely lost", stderr);
	else
		fprintf(stderr, "lost %s", fmt_blocks(lost, lost_blocks, a, sizeof(a)));
	if (n[CT_CLASS_DEFINITE] && n[CT_CLASS_INDIRECT])
		fprintf(stderr, " (definitely %s in %s, indirectly %s in %s)",
		        fmt_count(by[CT_CLASS_DEFINITE], a, sizeof(a)),
		        fmt_count(n[CT_CLASS_DEFINITE], b, sizeof(b)),
		        fmt_count(by[CT_CLASS_INDIRECT], c, sizeof(c)),
		        fmt_count(n[CT_CLASS_INDIRECT], d, sizeof(d)));
	else if (lost_blocks)
		fputs(n[CT_CLASS_DEFINITE] ? " (definitely lost)" : " (indirectly lost)", stderr);
	if (n[CT_CLASS_POSSIBLE])
		fprintf(stderr, "; possibly lost %s",
		        fmt_blocks(by[CT_CLASS_POSSIBLE], n[CT_CLASS_POSSIBLE], a, sizeof(a)));
}

/* Nothing lost: "no leaks (4,096 bytes still reachable at exit)"; valgrind's "All heap blocks were
 * freed" only when nothing at all was live; "no leaks found" when blocks were never scanned (they
 * may be lost). */
static void print_no_leaks(const uint64_t *by, const uint64_t *n)
{
	char a[32];
	if (!n[CT_CLASS_REACHABLE] && !n[UNSCANNED]) {
		fputs("no leaks (all heap blocks were freed)", stderr);
		return;
	}
	fputs(n[UNSCANNED] ? "no leaks found (" : "no leaks (", stderr);
	if (n[CT_CLASS_REACHABLE])
		fprintf(stderr, "%s still reachable%s", fmt_bytes(by[CT_CLASS_REACHABLE], a, sizeof(a)),
		        n[UNSCANNED] ? ", " : " at exit");
	if (n[UNSCANNED])
		fprintf(stderr, "%s live, never scanned", fmt_bytes(by[UNSCANNED], a, sizeof(a)));
	fputc(')', stderr);
}

/* The headline of a classified trace: what was lost (print_lost), then what was live but not lost,
 * "; 4,096 bytes still reachable"; or print_no_leaks. */
static void print_headline(const struct ct_trace_summary *s)
{
	const uint64_t *by = s->class_bytes, *n = s->class_blocks;
	char a[32];
	if (!n[CT_CLASS_DEFINITE] && !n[CT_CLASS_INDIRECT] && !n[CT_CLASS_POSSIBLE]) {
		print_no_leaks(by, n);
		return;
	}
	print_lost(by, n);
	if (n[CT_CLASS_REACHABLE])
		fprintf(stderr, "; %s still reachable", fmt_bytes(by[CT_CLASS_REACHABLE], a, sizeof(a)));
	if (n[UNSCANNED])
		fprintf(stderr, "; %s live, never scanned", fmt_bytes(by[UNSCANNED], a, sizeof(a)));
}

/* "PREFIX lost ...; 1,031 allocations, ..." for a trace with leak classes (print_headline), "PREFIX
 * 1,031 allocations, ..., leaked 640 bytes in 15 allocations" for one without (killed, or an older
 * shim: the kinds are unknown), or "PREFIX no summary: why". */
static void print_summary(const struct ct_member *m, const char *prefix)
{
	const struct ct_trace_summary *s = &m->s;
	char a[32], b[32], c[32], d[32], e[32];
	if (!m->ok) {
		fprintf(stderr, "%sno summary: %s\n", prefix, m->err);
		return;
	}
	fputs(prefix, stderr);
	if (s->classified) {
		print_headline(s);
		fputs("; ", stderr);
	}
	fprintf(stderr, "%s allocation%s, %s allocated, peak %s", fmt_count(s->allocations, a, sizeof(a)),
	        s->allocations == 1 ? "" : "s", fmt_bytes(s->bytes_allocated, b, sizeof(b)),
	        fmt_bytes(s->peak_heap_bytes, c, sizeof(c)));
	if (!s->classified)
		fprintf(stderr, ", leaked %s in %s allocation%s", fmt_bytes(s->leaked_bytes, d, sizeof(d)),
		        fmt_count(s->leaked_allocations, e, sizeof(e)),
		        s->leaked_allocations == 1 ? "" : "s");
	if (s->invalid_frees)
		fprintf(stderr, ", %s invalid free%s", fmt_count(s->invalid_frees, a, sizeof(a)),
		        s->invalid_frees == 1 ? "" : "s");
	fprintf(stderr, "%s\n",
	        s->complete  ? ""
	        : s->damaged ? " (trace is damaged)"
	                     : " (trace is truncated)");
}

/* Where the trace is damaged, and that its figures stop there. */
static void print_damage(const struct ct_trace_summary *s)
{
	if (s->damaged)
		fprintf(stderr,
		        "ctrack: warning: corrupt trace near byte %" PRIu64
		        " (%s); figures cover what was read "
		        "before it\n",
		        s->damaged_at, s->damage);
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

/* The invalid frees (memcheck's errors), named by the most frequent one's kind. */
static void print_invalid(const struct ct_trace_summary *s)
{
	static const char *const kinds[CT_INVALID_KINDS] = {
	    "a double free", "a free of a global or a constant", "a free of a stack address",
	    "a free of an address never allocated"};
	if (!s->invalid_frees)
		return;
	fprintf(stderr, "ctrack: error: %" PRIu64 " invalid free%s (%s%s): ctrack-analyze shows %s\n",
	        s->invalid_frees, s->invalid_frees == 1 ? "" : "s",
	        s->invalid_kind < CT_INVALID_KINDS ? kinds[s->invalid_kind] : "a free of no live block",
	        s->invalid_frees == 1 ? "" : ", the most frequent",
	        s->invalid_frees == 1 ? "its backtrace" : "their backtraces");
}

/* The summary line of the program's trace, its warnings and invalid frees, and a word on an exec'd
 * image left untraced. Returns 0 when the trace is cut short and neither its damage nor its
 * warnings can say why, else 1. */
static int print_summary_line(const struct ct_member *m, int follow_children)
{
	char line[160];
	if (m->ok && m->s.sample_rate) { /* the figures that follow are estimates */
		ct_sampling_note(line, sizeof(line), m->s.sample_rate);
		fprintf(stderr, "ctrack: %s\n", line);
	}
	print_summary(m, "ctrack: ");
	if (m->ok)
		print_damage(&m->s);
	if (m->ok)
		print_warnings(&m->s);
	if (m->ok)
		print_invalid(&m->s);
	if (m->ok && m->s.exec_path[0] && !follow_children)
		fprintf(stderr,
		        "ctrack: the program then ran '%s' (exec), which was not traced: "
		        "--follow-children traces it too\n",
		        m->s.exec_path);
	return !m->ok || m->s.complete || m->s.damaged || m->s.warnings;
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

/* Someone else removed or replaced the trace's file during the run (a second run with --force and
 * the same -o): what this run wrote is only in the launcher's descriptor, and goes with it. */
static void print_moved(const struct ct_family *f)
{
	if (!f->moved)
		return;
	int replaced = strcmp(f->moved, "removed") != 0;
	fprintf(stderr,
	        "ctrack: warning: the trace file '%s' was %s during the run%s: this run's trace, summed "
	        "up and checked here, is lost when ctrack exits\n",
	        f->parent.path, f->moved, replaced ? " (another run with --force and the same -o?)" : "");
}

static void print_parent(const struct ct_family *f)
{
	struct stat st;
	char size[32], cmd[PATH_MAX + 32], html[PATH_MAX + 32];
	const char *name = f->parent.path;
	if (f->fd >= 0 ? fstat(f->fd, &st) < 0 : stat(name, &st) < 0) {
		fprintf(stderr, "ctrack: trace file '%s' is gone: %s\n", name, strerror(errno));
		return;
	}
	if (!f->moved)
		fprintf(stderr, "ctrack: trace written to %s (%s)\n", name,
		        fmt_bytes((uint64_t)st.st_size, size, sizeof(size)));
	if (st.st_size == 0) {
		fprintf(stderr, "ctrack: the trace is empty: the shim never wrote to it\n");
		print_full_disk(name);
		return;
	}
	if (!print_summary_line(&f->parent, f->follow))
		print_full_disk(name);
	if (f->moved)
		return; /* the commands would read another run's file */
	ct_locate_analyzer(cmd, sizeof(cmd));
	print_command("analyze", cmd, NULL, name);
	html_option(html, sizeof(html), name);
	print_command("HTML report", cmd, html, name);
}

/* ---- the children's traces (--follow-children) ---- */

/* Readable traces first, the most leaked bytes first, then in the order they started. */
static int cmp_child(const void *a, const void *b)
{
	const struct ct_member *x = *(const struct ct_member *const *)a;
	const struct ct_member *y = *(const struct ct_member *const *)b;
	int xok = x->ok && !x->running, yok = y->ok && !y->running;
	if (xok != yok)
		return yok - xok;
	if (xok && x->s.leaked_bytes != y->s.leaked_bytes)
		return x->s.leaked_bytes < y->s.leaked_bytes ? 1 : -1;
	if (x->start_ns != y->start_ns) /* in the order they ran */
		return x->start_ns < y->start_ns ? -1 : 1;
	return strverscmp(x->file, y->file);
}

static void print_child(const struct ct_member *m)
{
	char prefix[NAME_MAX + 32];
	if (m->running) {
		fprintf(stderr,
		        "ctrack:   %s: still running (pid %" PRIu64 "): its trace is whole once it ends\n",
		        m->file, m->pid);
		return;
	}
	snprintf(prefix, sizeof(prefix), "ctrack:   %s: ", m->file);
	print_summary(m, prefix);
}

/* The children that leaked most get their summary lines, so nobody has to guess which of
 * ctrack.*.zst to look at. */
static void print_children(const struct ct_family *f)
{
	char total[32];
	size_t n = f->nkids;
	const struct ct_member **v = n ? calloc(n, sizeof(*v)) : NULL;
	if (!v)
		n = 0;
	for (size_t i = 0; i < n; i++)
		v[i] = &f->kids[i];
	if (n)
		qsort(v, n, sizeof(*v), cmp_child);
	if (n > CHILDREN_SHOWN)
		fprintf(stderr, "ctrack: %zu child traces in %s; the %d that leaked most:\n", n, f->dir,
		        CHILDREN_SHOWN);
	else if (n)
		fprintf(stderr, "ctrack: %zu child trace%s in %s:\n", n, n == 1 ? "" : "s", f->dir);
	uint64_t rest = 0;
	for (size_t i = 0; i < n; i++) {
		if (i >= CHILDREN_SHOWN)
			rest += v[i]->ok ? v[i]->s.leaked_bytes : 0;
		else
			print_child(v[i]);
	}
	if (n > CHILDREN_SHOWN)
		fprintf(stderr, "ctrack:   and %zu more, which leaked %s in all\n", n - CHILDREN_SHOWN,
		        fmt_bytes(rest, total, sizeof(total)));
	free(v);
}

/* The children the shim could not trace: they ran all the same, unseen. */
static void print_untraced(const struct ct_family *f)
{
	for (size_t i = 0; i < f->nuntraced && i < CHILDREN_SHOWN; i++) {
		const struct ct_status_slot *u = &f->untraced[i];
		fprintf(stderr,
		        "ctrack: %s (pid %d, forked by pid %d) was not traced: it could not create its "
		        "trace in %s (%s)\n",
		        u->name[0] ? u->name : "a child", (int)u->pid, (int)u->ppid, f->dir,
		        u->err ? strerror(u->err) : "unknown error");
	}
	size_t shown = f->nuntraced < CHILDREN_SHOWN ? f->nuntraced : CHILDREN_SHOWN;
	if (f->untraced_total > shown)
		fprintf(stderr, "ctrack: and %zu more children were not traced\n", f->untraced_total - shown);
	for (size_t i = 0; i < f->ngaps; i++) {
		const struct ct_member *m = f->gaps[i].m;
		fprintf(stderr,
		        "ctrack: %s (pid %" PRIu64 ") then ran '%s' (exec), which left no trace: it was not "
		        "traced (a static or set-ID program, or one that could not create its trace)\n",
		        m->s.program[0] ? m->s.program : "a process", m->pid, m->s.exec_path);
	}
}

/* ---- the message ---- */

void ct_closing_print(const struct ct_family *f, int quiet)
{
	print_moved(f); /* even with -q: the trace is lost */
	if (quiet)
		return;
	print_parent(f);
	if (f->children)
		print_children(f);
	if (f->follow)
		print_untraced(f);
}

void ct_closing_signal(const char *prog, int sig)
{
	const char *abbrev = sigabbrev_np(sig), *what = strsignal(sig);
	fprintf(stderr, "ctrack: %s was killed by SIG%s (%s)\n", prog, abbrev ? abbrev : "?",
	        what ? what : "unknown signal");
}
