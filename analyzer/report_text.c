/* SPDX-License-Identifier: MIT */
/* The text report: a summary with exact figures, then the top sites four ways with backtraces.
 * Every value is printed on one line: argv is shell-quoted with C escapes for control bytes. */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/format.h"
#include "diagnose.h"
#include "markup.h"
#include "rules.h"
#include "aggregated.h"
#include "sampling.h"
#include "report.h"
#include "suppress.h"

static int safe_shell_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       strchr("_@%+=:,./-", c);
}

static int control_byte(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

/* A control byte as a C escape (\n, \t, \xNN); any other byte as it is. */
static void put_byte_escaped(FILE *out, unsigned char c)
{
	if (c == '\n')
		fputs("\\n", out);
	else if (c == '\t')
		fputs("\\t", out);
	else if (control_byte(c))
		fprintf(out, "\\x%02x", c);
	else
		fputc(c, out);
}

/* One argument as a shell would need it: bare, '...' or $'...' (the last for control bytes). */
static void put_shell_word(FILE *out, const struct ct_bytes *w)
{
	const unsigned char *s = (const unsigned char *)w->data;
	int bare = w->len > 0, ctl = 0;
	for (size_t i = 0; i < w->len; i++) {
		bare &= safe_shell_byte(s[i]) && s[i];
		ctl |= control_byte(s[i]);
	}
	if (bare) {
		fwrite(s, 1, w->len, out);
		return;
	}
	fputs(ctl ? "$'" : "'", out);
	for (size_t i = 0; i < w->len; i++) {
		unsigned char c = s[i];
		if (!ctl && c == '\'')
			fputs("'\\''", out);
		else if (ctl && (c == '\'' || c == '\\'))
			fprintf(out, "\\%c", c);
		else
			put_byte_escaped(out, c);
	}
	fputc('\'', out);
}

static void put_command(FILE *out, const struct ct_process *p)
{
	fputs("command: ", out);
	for (size_t i = 0; i < p->argc; i++) {
		if (i)
			fputc(' ', out);
		put_shell_word(out, &p->argv[i]);
	}
	fputc('\n', out);
}

/* A note's text on one line: control bytes as C escapes, so no text can forge a line of the report. */
static void put_note_text(FILE *out, const struct ct_bytes *text)
{
	for (size_t i = 0; i < text->len; i++) {
		unsigned char c = (unsigned char)text->data[i];
		if (c == '\\')
			fputs("\\\\", out);
		else
			put_byte_escaped(out, c);
	}
}

/* The shim's notes, one line each: "warning: TEXT (3 times)" or "note: TEXT". */
static void put_notes(FILE *out, const struct ct_model *m)
{
	for (size_t i = 0; i < m->nnotes; i++) {
		const struct ct_note *n = &m->notes[i];
		fputs(n->warning ? "warning: " : "note: ", out);
		put_note_text(out, &n->text);
		if (n->count > 1)
			fprintf(out, " (%" PRIu64 " times)", n->count);
		fputc('\n', out);
	}
}

static const char *allocations(uint64_t n)
{
	return n == 1 ? "allocation" : "allocations";
}

static double seconds(uint64_t us)
{
	return (double)us / 1e6;
}

static double percent(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* The stretch --between or --from/--to narrowed the figures to, and what was live at its end. */
static void put_window(FILE *out, const struct ct_model *m)
{
	const struct ct_between *b = m->between;
	char bytes[64];
	if (b->from)
		fprintf(out,
		        "between marks %s (%.3f s) and %s (%.3f s): allocations made between them; leaked: "
		        "blocks live at %s less those live at %s, per site (peak: the whole run's)\n",
		        b->from, seconds(b->from_us), b->to, seconds(b->to_us), b->to, b->from);
	else
		fprintf(out,
		        "window: %.3f s to %.3f s of %.3f s: allocations made in it; leaked: blocks live at "
		        "its end less those live at its start, per site (peak: the whole run's)\n",
		        seconds(b->from_us), seconds(b->to_us), seconds(ct_model_runtime_us(m)));
	fprintf(out, "live at %.3f s: %s in %" PRIu64 " %s\n", seconds(b->to_us),
	        ct_fmt_bytes(bytes, sizeof(bytes), b->live_bytes), b->live_blocks,
	        allocations(b->live_blocks));
}

/* The marks (ctrack_mark()), the first ten, and the stretch --between narrowed the figures to. */
static void put_marks(FILE *out, const struct ct_model *m)
{
	for (size_t i = 0; i < m->nmarks && i < 10; i++)
		fprintf(out, "%s%.*s at %.3f s", i ? ", " : "marks: ", (int)m->marks[i].name.len,
		        m->marks[i].name.data, seconds(m->marks[i].time_us));
	if (m->marks_total > 10)
		fprintf(out, " and %" PRIu64 " more (--json lists them)", m->marks_total - 10);
	fputs(m->nmarks ? "\n" : "", out);
	if (m->between)
		put_window(out, m);
}

static void put_summary(const struct ct_report *r)
{
	const struct ct_model *m = r->m;
	const struct ct_totals *t = &m->t;
	FILE *out = r->out;
	char b[64];
	fprintf(out, "trace: %s", r->path);
	if (m->damaged)
		fprintf(out, " (damaged near byte %" PRIu64 ": read up to there)\n", m->damaged_at);
	else
		fputs(m->complete ? "\n" : " (truncated)\n", out);
	if (m->sample_rate) { /* once, above every figure it qualifies */
		char line[160];
		ct_sampling_note(line, sizeof(line), m->sample_rate);
		fprintf(out, "%s\n", line);
	}
	if (m->aggregate_us) { /* the charts' resolution: said once, above the figures */
		char line[160];
		ct_aggregated_note(line, sizeof(line), m->aggregate_us);
		fprintf(out, "%s\n", line);
	}
	put_notes(out, m);
	if (m->proc.seen) {
		put_command(out, &m->proc);
		fprintf(out, "pid: %" PRIu64 "\n", m->proc.pid);
	}
	uint64_t run = ct_model_runtime_us(m);
	fprintf(out, "runtime: %.3f s\n", seconds(run));
	put_marks(out, m);
	fprintf(out, "calls to allocation functions: %" PRIu64, t->allocations);
	if (run)
		fprintf(out, " (%.0f/s)", (double)t->allocations / seconds(run));
	fprintf(out, "\nfrees: %" PRIu64 "\n", t->frees);
	fprintf(out, "bytes allocated: %s\n", ct_fmt_bytes(b, sizeof(b), t->bytes_allocated));
	fprintf(out, "temporary allocations: %" PRIu64 " (%.1f%% of allocations)\n", t->temporary,
	        percent(t->temporary, t->allocations));
	fprintf(out, "peak heap: %s at %.3f s\n", ct_fmt_bytes(b, sizeof(b), t->peak),
	        seconds(t->peak_time_us));
	fprintf(out, "peak RSS: %s\n", t->peak_rss ? ct_fmt_bytes(b, sizeof(b), t->peak_rss) : "not sampled");
	fprintf(out, "leaked: %s in %" PRIu64 " %s\n", ct_fmt_bytes(b, sizeof(b), t->current),
	        t->live_allocations, allocations(t->live_allocations));
	if (m->classified) {
		uint64_t blocks[CT_KINDS], bytes[CT_KINDS];
		ct_model_class_totals(m, blocks, bytes);
		for (int k = 0; k < CT_KINDS; k++)
			if (k < CT_KIND_UNSCANNED ||
			    blocks[k]) /* unscanned: only after a scan the process outlived */
				fprintf(out, "%s: %s in %" PRIu64 " %s\n", ct_kind_label(k + 1),
				        ct_fmt_bytes(b, sizeof(b), bytes[k]), blocks[k],
				        blocks[k] == 1 ? "block" : "blocks");
	}
	if (r->supp)
		ct_supp_put(r->supp, out);
	if (t->invalid_frees)
		fprintf(out, "invalid frees: %" PRIu64 " (INVALID FREES below)\n", t->invalid_frees);
	if (ct_model_frees_before_tracing(m))
		fprintf(out, "frees of blocks allocated before tracing: %" PRIu64 "\n",
		        ct_model_frees_before_tracing(m));
	if (r->nwrappers) {
		fputs("allocator wrappers folded:", out);
		for (size_t i = 0; i < r->nwrappers && i < 10; i++) {
			char name[512];
			const struct ct_frame f = {.function = r->wrappers[i].function};
			fprintf(out, "%s %s", i ? "," : "", ct_frame_display_name(r, &f, name, sizeof(name)));
		}
		if (r->nwrappers > 10)
			fprintf(out, " and %zu more (--json lists them)", r->nwrappers - 10);
		fputs(" (their callers are the sites; --no-auto-fold shows them)\n", out);
	}
}

/* Colour only on a terminal, and not when NO_COLOR is set (no-color.org). */
static int use_colour(FILE *out)
{
	const char *no = getenv("NO_COLOR");
	return isatty(fileno(out)) && !(no && *no);
}

#define BOLD(c) ((c) ? "\033[1m" : "")
#define DIM(c) ((c) ? "\033[2m" : "")
#define CYAN(c) ((c) ? "\033[36m" : "")
#define RESET(c) ((c) ? "\033[0m" : "")

struct frame_printer {
	FILE *out;
	int colour;
	const char *module; /* of the previous frame: a run of frames in one module names it once */
	unsigned from, to;  /* the frames printed: from <= index < to */
	const char *indent;
	const struct ct_report *r; /* names as ct_frame_display_name gives them */
};

/* v in decimal or lowercase hexadecimal, as fprintf's %u and %x write it. */
static void put_number(FILE *out, uint64_t v, unsigned base)
{
	char buf[24];
	char *p = buf + sizeof(buf);
	do
		*--p = "0123456789abcdef"[v % base];
	while ((v /= base));
	fwrite(p, 1, (size_t)(buf + sizeof(buf) - p), out);
}

/* One frame's line, written piece by piece: fprintf's formatting of every frame was most of the
 * text report's time. */
static int put_frame(void *ctx, const struct ct_frame *f, unsigned index)
{
	struct frame_printer *p = ctx;
	FILE *out = p->out;
	int c = p->colour;
	if (index < p->from || index >= p->to)
		return 0;
	char name[512];
	fputs(p->indent, out);
	putc('#', out);
	put_number(out, index, 10);
	putc(' ', out);
	fputs(DIM(c), out);
	fputs("0x", out);
	put_number(out, f->address, 16);
	fputs(RESET(c), out);
	putc(' ', out);
	fputs(BOLD(c), out);
	fputs(ct_frame_display_name(p->r, f, name, sizeof(name)), out);
	fputs(RESET(c), out);
	if (f->file) {
		fputs(" at ", out);
		fputs(CYAN(c), out);
		fputs(f->file, out);
		putc(':', out);
		put_number(out, f->line, 10);
		fputs(RESET(c), out);
	}
	if (f->module && (!p->module || strcmp(p->module, f->module))) {
		putc(' ', out);
		fputs(DIM(c), out);
		putc('(', out);
		fputs(ct_basename(f->module), out);
		putc(')', out);
		fputs(RESET(c), out);
	}
	p->module = f->module;
	if (f->inlined)
		fputs(c ? " \033[2m[inlined]\033[0m" : " [inlined]", out);
	putc('\n', out);
	return 0;
}

/* A ranking's figures of s, without a newline. */
static void put_figures(const struct ct_report *r, enum ct_rank by, const struct ct_site *s)
{
	char b[64];
	FILE *out = r->out;
	switch (by) {
	case CT_BY_LEAKED:
		fprintf(out, "%s %s in %" PRIu64 " %s", ct_fmt_bytes(b, sizeof(b), s->leaked_bytes),
		        ct_kind_label(s->kind), s->leaked_allocations, allocations(s->leaked_allocations));
		break;
	case CT_BY_PEAK:
		fprintf(out, "%s at the peak in %" PRIu64 " %s", ct_fmt_bytes(b, sizeof(b), s->peak_bytes),
		        s->peak_allocations, allocations(s->peak_allocations));
		break;
	case CT_BY_ALLOCATIONS:
		fprintf(out, "%" PRIu64 " %s, %s in all", s->allocations, allocations(s->allocations),
		        ct_fmt_bytes(b, sizeof(b), s->bytes_allocated));
		break;
	case CT_BY_TEMPORARY:
		fprintf(out, "%" PRIu64 " temporary of %" PRIu64 " %s (%.1f%%)", s->temporary, s->allocations,
		        allocations(s->allocations), percent(s->temporary, s->allocations));
		break;
	}
}

/* The ranking's first figure, for shares. */
static uint64_t first_key(enum ct_rank by, const struct ct_site *s)
{
	return by == CT_BY_LEAKED        ? s->leaked_bytes
	       : by == CT_BY_PEAK        ? s->peak_bytes
	       : by == CT_BY_ALLOCATIONS ? s->allocations
	                                 : s->temporary;
}

/* One entry: its figures; a single backtrace under them, or the frames its backtraces share, then
 * the largest backtraces, each under its own figures, and one line summing the others. */
int ct_report_text_entry(const struct ct_report *r, enum ct_rank by, const struct ct_site *s)
{
	struct ct_callers c;
	int rc = ct_report_callers(r, by, s, &c), truncated;
	if (rc < 0)
		return rc;
	struct frame_printer p = {r->out, use_colour(r->out), NULL, 0, (unsigned)c.common, "  ", r};
	fprintf(r->out, "\n%s", BOLD(p.colour));
	put_figures(r, by, s);
	fprintf(r->out, "%s\n", RESET(p.colour));
	rc = ct_report_frames(r, c.v[0].stack, put_frame, &p, &truncated);
	if (c.n == 1 && !rc && truncated)
		fputs("  ... (deeper frames were not captured)\n", r->out);
	if (c.n > 1 && !rc)
		fprintf(r->out, "  from %zu backtraces%s\n", c.n,
		        r->callers ? ":" : " (--callers N lists them)");
	const char *module = p.module;
	for (size_t i = 0; c.n > 1 && i < c.n && i < r->callers && !rc; i++) {
		fputs("  ", r->out);
		put_figures(r, by, &c.v[i]);
		fprintf(r->out, " (%.1f%%):\n", percent(first_key(by, &c.v[i]), first_key(by, s)));
		p = (struct frame_printer){r->out, p.colour, module, (unsigned)c.common, UINT_MAX, "    ", r};
		rc = ct_report_frames(r, c.v[i].stack, put_frame, &p, &truncated);
		if (!rc && truncated)
			fputs("    ... (deeper frames were not captured)\n", r->out);
	}
	if (c.n > 1 && c.n > r->callers && r->callers && !rc) {
		struct ct_site rest;
		size_t others = c.n - r->callers;
		ct_callers_rest(&c, r->callers, &rest);
		rest.kind = s->kind; /* the same leak class as the entry's */
		fprintf(r->out, "  and %zu other backtrace%s: ", others, others == 1 ? "" : "s");
		put_figures(r, by, &rest);
		fprintf(r->out, " (%.1f%%)\n", percent(first_key(by, &rest), first_key(by, s)));
	}
	free(c.v);
	return rc;
}

/* The frames of stack under a title line, then a word when the stack was cut or is unknown. */
static int put_stack(const struct ct_report *r, const char *title, uint32_t stack)
{
	struct frame_printer p = {r->out, use_colour(r->out), NULL, 0, UINT_MAX, "  ", r};
	int truncated = 0, rc = 0;
	fputs(title, r->out);
	if (stack)
		rc = ct_report_frames(r, stack, put_frame, &p, &truncated);
	if (!stack)
		fputs("  (no backtrace: it could not be recorded)\n", r->out);
	else if (!rc && truncated)
		fputs("  ... (deeper frames were not captured)\n", r->out);
	return rc;
}

int ct_report_text_invalid(const struct ct_report *r, const struct ct_invalid *v)
{
	char b[64];
	int colour = use_colour(r->out);
	fprintf(r->out, "\n%sinvalid %s() %s: %" PRIu64 " time%s%s\n", BOLD(colour), ct_invalid_call(v->call),
	        ct_invalid_label(v->kind), v->count, v->count == 1 ? "" : "s", RESET(colour));
	int rc = put_stack(r, "", v->stack);
	if (!rc && v->freed)
		rc = put_stack(r, "  freed before at:\n", v->freed);
	if (!rc && v->block) {
		const struct ct_info *info = &r->m->infos[v->block - 1];
		fprintf(r->out, "  the block, %s, was allocated at:\n",
		        ct_fmt_bytes(b, sizeof(b), info->size));
		rc = put_stack(r, "", info->stack);
	}
	return rc;
}

/* memcheck's "Invalid free()" errors, the most frequent first. */
static int put_invalid(const struct ct_report *r)
{
	const struct ct_invalid **v;
	long n = ct_report_invalid(r, &v);
	if (n <= 0)
		return (int)n;
	fputs("\nINVALID FREES:\n", r->out);
	int rc = 0;
	for (long i = 0; i < n && (size_t)i < r->top && !rc; i++)
		rc = ct_report_text_invalid(r, v[i]);
	if (!rc && (size_t)n > r->top)
		fprintf(r->out, "\n(%ld more; --top N shows more)\n", n - (long)r->top);
	if (!rc && r->m->invalid_others)
		fprintf(r->out, "\n(%" PRIu64 " more invalid frees, of other kinds or stacks, not kept)\n",
		        r->m->invalid_others);
	free(v);
	return rc;
}

/* The signal the program died of, and where the thread that took it was. */
static int put_crash(const struct ct_report *r)
{
	const struct ct_model *m = r->m;
	if (!m->crashed)
		return 0;
	int sig = m->crash_signal < 256 ? (int)m->crash_signal : 0;
	const char *abbrev = sig ? sigabbrev_np(sig) : NULL, *what = sig ? sigdescr_np(sig) : NULL;
	if (abbrev)
		fprintf(r->out, "\nFATAL SIGNAL: SIG%s (%s), taken at:\n", abbrev, what ? what : "?");
	else
		fprintf(r->out, "\nFATAL SIGNAL: signal %" PRIu64 ", taken at:\n", m->crash_signal);
	return put_stack(r, "", m->crash_stack);
}

/* One list of a ranking under its title: its first --top entries, then how many more (and their
 * bytes, for leaks). Returns 0 or -ENOMEM. */
static int put_list(const struct ct_report *r, enum ct_rank by, const char *title, const struct ct_site **v,
                    size_t n)
{
	char b[64];
	fprintf(r->out, "\n%s", title);
	fputs(n ? ":\n" : ": none\n", r->out);
	for (size_t i = 0; i < n && i < r->top; i++) {
		int rc = ct_report_text_entry(r, by, v[i]);
		if (rc < 0)
			return rc;
	}
	if (n <= r->top)
		return 0;
	if (by != CT_BY_LEAKED) {
		fprintf(r->out, "\n(%zu more sites; --top N shows more)\n", n - r->top);
		return 0;
	}
	uint64_t bytes = 0;
	for (size_t i = r->top; i < n; i++)
		bytes += v[i]->leaked_bytes;
	fprintf(r->out, "\n(%zu more entries, %s in all; --top N shows more)\n", n - r->top,
	        ct_fmt_bytes(b, sizeof(b), bytes));
	return 0;
}

/* A classified trace's leaks in memcheck's order (ct_report_rank): what was lost, then apart what was
 * still reachable at exit, which no one would call a leak (and blocks a scan never saw, last). */
static int put_leaks(const struct ct_report *r, const struct ct_site **v, size_t n)
{
	size_t lost = 0;
	while (lost < n && v[lost]->kind && v[lost]->kind <= CT_CLASS_POSSIBLE + 1)
		lost++;
	int unscanned = n > lost && v[n - 1]->kind == CT_KIND_UNSCANNED + 1;
	int rc = put_list(r, CT_BY_LEAKED, "LOST (definitely, then indirectly, then possibly lost; by bytes)",
	                  v, lost);
	return rc ? rc
	          : put_list(r, CT_BY_LEAKED,
	                     unscanned ? "STILL REACHABLE AT EXIT, THEN NEVER SCANNED"
	                               : "STILL REACHABLE AT EXIT (not lost)",
	                     v + lost, n - lost);
}

static int put_ranking(const struct ct_report *r, enum ct_rank by, const char *title)
{
	const struct ct_site **v;
	long n = ct_report_rank(r, by, &v);
	if (n < 0)
		return (int)n;
	int rc = by == CT_BY_LEAKED && r->m->classified ? put_leaks(r, v, (size_t)n)
	                                                : put_list(r, by, title, v, (size_t)n);
	free(v);
	return rc;
}

void ct_quality_text(FILE *out, const struct ct_quality_list *l, int problems_only)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct ct_quality *q = &l->v[i];
		if (problems_only && !q->advice)
			continue;
		/* Line tables and no advice without inline records: full debug info where nothing was
		 * inlined. */
		const char *inl = q->inline_info                 ? "yes"
		                  : q->line_tables && !q->advice ? "no (none inlined)"
		                                                 : "no";
		fprintf(out, "%s: symbols %s, line tables %s, inline info %s",
		        problems_only ? ct_basename(q->path) : q->path, q->symbols,
		        q->line_tables ? "yes" : "no", inl);
		if (!problems_only && q->debug_file && strcmp(q->debug_file, q->path))
			fprintf(out, ", debug file %s", q->debug_file);
		fprintf(out, "%s%s\n", q->advice ? ": " : "", q->advice ? q->advice : "");
	}
}

/* "SYMBOLS": only the modules holding frames whose symbols lose information, and only if any. */
static int put_symbols(const struct ct_report *r)
{
	struct ct_quality_list l = {0};
	int rc = ct_diagnose_model(&l, r->m, r->sym);
	size_t bad = 0;
	for (size_t i = 0; !rc && i < l.n; i++)
		bad += l.v[i].advice != NULL;
	if (bad) {
		fputs("\nSYMBOLS:\n", r->out);
		ct_quality_text(r->out, &l, 1);
	}
	ct_quality_list_free(&l);
	return rc;
}

int ct_report_text(const struct ct_report *r)
{
	static const struct {
		enum ct_rank by;
		const char *title;
	} rankings[] = {
	    {CT_BY_LEAKED, "MOST LEAKED BYTES"},
	    {CT_BY_PEAK, "MOST BYTES AT THE PEAK"},
	    {CT_BY_ALLOCATIONS, "MOST ALLOCATIONS"},
	    {CT_BY_TEMPORARY, "MOST TEMPORARY ALLOCATIONS"},
	};
	put_summary(r);
	int rc = put_invalid(r);
	if (!rc)
		rc = put_crash(r);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < sizeof(rankings) / sizeof(rankings[0]); i++) {
		rc = put_ranking(r, rankings[i].by, rankings[i].title);
		if (rc < 0)
			return rc;
	}
	return put_symbols(r);
}
