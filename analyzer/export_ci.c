/* SPDX-License-Identifier: MIT */
/* What a check fails on, as CI servers read it: JUnit XML, SARIF 2.1.0 and GitHub workflow commands
 * list the leak sites, the invalid frees, a damaged or incomplete trace and the shim's warnings.
 * The check (check.c, main.c) fails on every one but the warnings, so a CI server's test report never
 * says "no leaks" when the check failed, and says what the shim could not record.
 * - A leak site is an entry of the leaked ranking, as in the text and JSON reports, of the kinds the
 *   --fail-on level counts; its backtrace is that of its largest caller.
 * - An invalid free is memcheck's "Invalid free()": each distinct one, the most frequent first, with
 *   its backtrace, where the address was freed before and the block's allocation when known.
 * - JUnit: a failing testcase each, a testcase "trace" in error when the trace is damaged or cut, the
 *   warnings in system-err, and one passing testcase when there is nothing else. SARIF: a result each,
 *   located at its first frame with a source file, the backtraces as a code flow and stacks; the
 *   trace's state and the warnings as the invocation's notifications. GitHub: an ::error line each,
 *   a ::warning line per warning.
 * Source paths under the current directory (the repository's root in CI) are written relative to it,
 * so that CI servers can tie them to the repository's files. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "ctrack-config.h"
#include "export.h"
#include "markup.h"

#define RULE_ID "ctrack/leak"
#define INVALID_RULE_ID "ctrack/invalid-free"

/* The leak class of a site ("definite", "indirect", ...), or NULL when the trace does not tell.
 * The one place that knows: every format below names the class only through it. */
static const char *leak_kind(const struct ct_report *r, const struct ct_site *s)
{
	(void)r;
	return s->kind ? ct_kind_name(s->kind) : NULL;
}

/* A backtrace as the formats show it: its frames after folding, innermost first. */
struct bt {
	struct ct_frame *v; /* strings owned by the symbolizer */
	size_t n, cap;
	size_t located; /* index of the first frame with a source file; n when there is none */
	int truncated;  /* the backtrace was cut at the capture depth */
};

/* One leak site as the formats show it: its figures, kind and shown frames. */
struct leak {
	const struct ct_site *s;
	const char *kind;  /* leak_kind's */
	struct bt bt;      /* its largest backtrace */
	size_t backtraces; /* how many backtraces the site gathers */
};

/* One invalid free as the formats show it: the call's backtrace, where the address was freed before
 * and where the block was allocated (both empty when unknown). */
struct bad_free {
	const struct ct_invalid *v;
	struct bt call, freed, alloc;
	uint64_t size; /* the block's, when v->block */
};

static int keep_frame(void *ctx, const struct ct_frame *f, unsigned index)
{
	(void)index;
	struct bt *b = ctx;
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 32;
		struct ct_frame *v = realloc(b->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		b->v = v, b->cap = cap;
	}
	b->v[b->n++] = *f;
	return 0;
}

/* Fills b (whose v it reuses) with the frames of stack node `stack`; none for 0 (no backtrace was
 * recorded). Returns 0 or -ENOMEM. */
static int bt_load(const struct ct_report *r, uint32_t stack, struct bt *b)
{
	b->n = 0, b->truncated = 0;
	int rc = stack ? ct_report_frames(r, stack, keep_frame, b, &b->truncated) : 0;
	for (b->located = 0; b->located < b->n && !b->v[b->located].file; b->located++)
		;
	return rc;
}

/* Fills l (whose frames it reuses) for site s. Returns 0 or -ENOMEM. */
static int leak_load(const struct ct_report *r, const struct ct_site *s, struct leak *l)
{
	struct ct_callers c;
	int rc = ct_report_callers(r, CT_BY_LEAKED, s, &c);
	if (rc < 0)
		return rc;
	l->s = s, l->kind = leak_kind(r, s), l->backtraces = c.n;
	rc = bt_load(r, c.v[0].stack, &l->bt);
	free(c.v);
	return rc;
}

/* The leak sites whose kind counts at level, biggest first, in a malloc'd array (*out); their
 * count, or -ENOMEM. */
static long leak_sites(const struct ct_report *r, int level, const struct ct_site ***out)
{
	long n = ct_report_rank(r, CT_BY_LEAKED, out), k = 0;
	for (long i = 0; i < n; i++)
		if (ct_check_counts((enum ct_fail_on)level, (*out)[i]->kind))
			(*out)[k++] = (*out)[i];
	return n < 0 ? n : k;
}

/* Calls fn for every leak site that counts at level, biggest first, with l filled. Returns 0, fn's
 * first non-zero result or -ENOMEM. */
static int each_leak(const struct ct_report *r, int level,
                     int (*fn)(void *ctx, const struct leak *l, size_t i), void *ctx, size_t *count)
{
	const struct ct_site **v;
	long n = leak_sites(r, level, &v);
	if (n < 0)
		return (int)n;
	struct leak l = {0};
	int rc = 0;
	for (long i = 0; i < n && !rc; i++)
		if (!(rc = leak_load(r, v[i], &l)))
			rc = fn(ctx, &l, (size_t)i);
	free(l.bt.v);
	free(v);
	if (count)
		*count = (size_t)n;
	return rc;
}

static long count_leaks(const struct ct_report *r, int level)
{
	const struct ct_site **v;
	long n = leak_sites(r, level, &v);
	free(v);
	return n;
}

/* Fills b (whose frames it reuses) for invalid free v. Returns 0 or -ENOMEM. */
static int bad_free_load(const struct ct_report *r, const struct ct_invalid *v, struct bad_free *b)
{
	const struct ct_info *info = v->block ? &r->m->infos[v->block - 1] : NULL;
	b->v = v, b->size = info ? info->size : 0;
	int rc = bt_load(r, v->stack, &b->call);
	if (!rc)
		rc = bt_load(r, v->freed, &b->freed);
	if (!rc)
		rc = bt_load(r, info ? info->stack : 0, &b->alloc);
	return rc;
}

/* Calls fn for every invalid free the model kept, the most frequent first, with b filled. Invalid
 * frees fail a check whatever its rules: every one is listed. Returns 0, fn's first non-zero result
 * or -ENOMEM. */
static int each_invalid(const struct ct_report *r, int (*fn)(void *ctx, const struct bad_free *b, size_t i),
                        void *ctx)
{
	const struct ct_invalid **v;
	long n = ct_report_invalid(r, &v);
	if (n < 0)
		return (int)n;
	struct bad_free b = {0};
	int rc = 0;
	for (long i = 0; i < n && !rc; i++)
		if (!(rc = bad_free_load(r, v[i], &b)))
			rc = fn(ctx, &b, (size_t)i);
	free(b.call.v), free(b.freed.v), free(b.alloc.v);
	free(v);
	return rc;
}

/* Why the trace's figures are not the whole run's, in words, or NULL when they are: a damage (where
 * and what; a check never passes on it), or an end before the program's (killed, or the file cut).
 * *damaged tells which. buf: room for the damage's words. */
static const char *trace_problem(const struct ct_model *m, char *buf, size_t len, int *damaged)
{
	*damaged = m->damaged;
	if (m->damaged) {
		snprintf(buf, len,
		         "the trace is damaged near byte %" PRIu64 " (%s): its figures cover only what was "
		         "read before it, and a damaged trace never passes a check",
		         m->damaged_at, m->damage);
		return buf;
	}
	if (!m->complete)
		return "the trace ends early: the program was killed or the trace cut; figures stop there";
	return NULL;
}

/* Calls fn with each of the shim's warnings in words ("TEXT (3 times)"), then, if the model kept
 * not every invalid free, one saying how many more there were. Returns 0 or fn's first non-zero
 * result. Info notes (a file opened again, nothing lost) are no CI server's business, but for the
 * one that says the trace starts at an attach. */
static int each_warning(const struct ct_model *m, int (*fn)(void *ctx, const char *text), void *ctx)
{
	char text[CT_NOTE_TEXT_MAX + 64];
	int rc = 0;
	for (size_t i = 0; i < m->nnotes && !rc; i++) {
		const struct ct_note *n = &m->notes[i];
		/* a trace that starts at an attach says so: its figures are the attached window's */
		if (!n->warning && !(m->attach_ordinal && i == m->attach_note))
			continue;
		/* The text stops at a NUL, which only a hostile trace holds. */
		if (n->count > 1)
			snprintf(text, sizeof(text), "%s (%" PRIu64 " times)", n->text.data, n->count);
		else
			snprintf(text, sizeof(text), "%s", n->text.data);
		rc = fn(ctx, text);
	}
	if (!rc && m->invalid_others) {
		snprintf(text, sizeof(text),
		         "%" PRIu64 " more invalid frees, of other kinds or stacks, not listed: the first %d "
		         "distinct ones are kept",
		         m->invalid_others, CT_INVALID_MAX);
		rc = fn(ctx, text);
	}
	return rc;
}

/* ---- paths ---- */

/* The current directory with a trailing '/', or NULL; malloc'd. */
static char *current_dir(void)
{
	char *d = getcwd(NULL, 0), *slash = NULL;
	if (d && asprintf(&slash, "%s%s", d, strcmp(d, "/") ? "/" : "") < 0)
		slash = NULL;
	free(d);
	return slash;
}

/* file as CI servers should see it: relative to cwd (with its '/') when it lies under it, else as
 * symbolized. *rel tells which. Returns a malloc'd string or NULL (out of memory). */
static char *shown_path(const char *file, const char *cwd, int *rel)
{
	/* "/src/build/../a.c" is "/src/a.c". A relative path is relative to the compile directory,
	 * which the symbolizer does not say: it is left as it is. */
	char *real = file[0] == '/' ? realpath(file, NULL) : NULL;
	const char *p = real ? real : file;
	size_t n = cwd ? strlen(cwd) : 0;
	*rel = cwd && !strncmp(p, cwd, n) && p[n];
	char *out = strdup(*rel ? p + n : p);
	free(real);
	return out;
}

/* "function at file:line", "function in module" or just the function, for one-line names. */
static void put_frame_name(FILE *out, const struct ct_frame *f, const char *path,
                           void (*quote)(FILE *, const char *))
{
	char line[32] = "";
	quote(out, f->function);
	if (path && f->line)
		snprintf(line, sizeof(line), ":%u", f->line);
	if (path) {
		quote(out, " at ");
		quote(out, path);
		quote(out, line);
	} else if (f->module) {
		const char *base = strrchr(f->module, '/');
		quote(out, " in ");
		quote(out, base ? base + 1 : f->module);
	}
}

/* The figures of a leak in words: "300 bytes leaked in 3 blocks". */
static void leak_message(char *buf, size_t len, const struct leak *l)
{
	char b[64];
	int n = snprintf(buf, len, "%s leaked in %" PRIu64 " block%s",
	                 ct_fmt_bytes(b, sizeof(b), l->s->leaked_bytes), l->s->leaked_allocations,
	                 l->s->leaked_allocations == 1 ? "" : "s");
	if (l->kind && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " (%s)", l->kind);
}

/* An invalid free in words, as the text report heads it: "invalid free() of a block already freed
 * (a double free): 2 times". */
static void invalid_message(char *buf, size_t len, const struct ct_invalid *v)
{
	snprintf(buf, len, "invalid %s() %s: %" PRIu64 " time%s", ct_invalid_call(v->call),
	         ct_invalid_label(v->kind), v->count, v->count == 1 ? "" : "s");
}

/* The backtrace as text lines, each after a newline ("\n#0 function at file:line [inlined]"),
 * through quote; "(the largest of N backtraces)" when it stands for more. */
static int put_backtrace(FILE *out, const struct bt *b, size_t backtraces, const char *cwd,
                         void (*quote)(FILE *, const char *))
{
	if (!b->n) /* stack 0: the shim could not record it */
		quote(out, "\n(no backtrace: it could not be recorded)");
	for (size_t i = 0; i < b->n; i++) {
		const struct ct_frame *f = &b->v[i];
		int rel;
		char *path = f->file ? shown_path(f->file, cwd, &rel) : NULL, num[32];
		if (f->file && !path)
			return -ENOMEM;
		snprintf(num, sizeof(num), "\n#%zu ", i);
		quote(out, num);
		put_frame_name(out, f, path, quote);
		quote(out, f->inlined ? " [inlined]" : "");
		free(path);
	}
	if (b->truncated)
		quote(out, "\n... (deeper frames were not captured)");
	if (backtraces > 1) {
		char more[96];
		snprintf(more, sizeof(more), "\n(the largest of %zu backtraces)", backtraces);
		quote(out, more);
	}
	return 0;
}

/* An invalid free's backtraces as the text report shows them: the call's, then "freed before at:"
 * and "the block, N bytes, was allocated at:" with theirs when known. */
static int put_invalid_body(FILE *out, const struct bad_free *b, const char *cwd,
                            void (*quote)(FILE *, const char *))
{
	char line[128], size[64];
	int rc = put_backtrace(out, &b->call, 1, cwd, quote);
	if (!rc && b->v->freed) {
		quote(out, "\nfreed before at:");
		rc = put_backtrace(out, &b->freed, 1, cwd, quote);
	}
	if (!rc && b->v->block) {
		snprintf(line, sizeof(line),
		         "\nthe block, %s, was allocated at:", ct_fmt_bytes(size, sizeof(size), b->size));
		quote(out, line);
		rc = put_backtrace(out, &b->alloc, 1, cwd, quote);
	}
	return rc;
}

/* ---- JUnit XML ---- */

struct junit {
	FILE *out;
	const struct ct_report *r;
	char *cwd;
	char **names; /* the invalid frees' testcase names so far (malloc'd), to keep them unique */
	size_t nnames;
	int err_open; /* <system-err> was opened */
};

static void xml_attr(FILE *out, const char *name, const char *value)
{
	fprintf(out, " %s=\"", name);
	ct_xml_text(out, value);
	fputc('"', out);
}

static void raw_text(FILE *out, const char *s)
{
	fputs(s, out);
}

/* A testcase's name: "function at file:line" of frame f, "??" when f is NULL; unquoted and
 * malloc'd, or NULL (no memory). *path: f's file as shown (malloc'd), or NULL when it has none. */
static char *case_name(const struct junit *j, const struct ct_frame *f, char **path)
{
	char *name = NULL;
	size_t len;
	int rel;
	*path = f && f->file ? shown_path(f->file, j->cwd, &rel) : NULL;
	FILE *mem = (!f || !f->file || *path) ? open_memstream(&name, &len) : NULL;
	if (!mem) {
		free(*path);
		return *path = NULL;
	}
	if (f)
		put_frame_name(mem, f, *path, raw_text);
	else
		fputs("??", mem);
	if (fclose(mem)) {
		free(name), free(*path);
		return *path = NULL;
	}
	return name;
}

/* Opens a testcase: its name (then " #number" when number is not 0), its class, and the file and
 * line of its frame f when known. */
static void case_open(FILE *out, const char *name, size_t number, const char *classname,
                      const struct ct_frame *f, const char *path)
{
	fputs("    <testcase name=\"", out);
	ct_xml_text(out, name);
	if (number)
		fprintf(out, " #%zu", number);
	fputc('"', out);
	xml_attr(out, "classname", classname);
	if (path) {
		xml_attr(out, "file", path);
		fprintf(out, " line=\"%u\"", f->line);
	}
}

static int junit_case(void *ctx, const struct leak *l, size_t i)
{
	const struct junit *j = ctx;
	FILE *out = j->out;
	char msg[256], type[64] = "leak", *path;
	const struct ct_frame *f = l->bt.n ? &l->bt.v[0] : NULL;
	char *name = case_name(j, f, &path);
	if (!name)
		return -ENOMEM;
	/* one site may be several entries: names stay unique */
	case_open(out, name, j->r->group == CT_GROUP_BACKTRACE ? i + 1 : 0, "ctrack.leaks", f, path);
	free(name), free(path);
	leak_message(msg, sizeof(msg), l);
	if (l->kind)
		snprintf(type, sizeof(type), "leak.%s", l->kind);
	fputs(">\n      <failure", out);
	xml_attr(out, "message", msg);
	xml_attr(out, "type", type);
	fputc('>', out);
	int rc = put_backtrace(out, &l->bt, l->backtraces, j->cwd, ct_xml_text);
	fputs("\n</failure>\n    </testcase>\n", out);
	return rc;
}

/* An invalid free's testcase, named after the call's first frame; two at the same frame (freeing
 * other blocks, or freed before elsewhere) are told apart by a number. */
static int junit_invalid(void *ctx, const struct bad_free *b, size_t i)
{
	(void)i;
	struct junit *j = ctx;
	FILE *out = j->out;
	char msg[384], type[64], *path;
	const struct ct_frame *f = b->call.n ? &b->call.v[0] : NULL;
	char *name = case_name(j, f, &path);
	if (!name)
		return -ENOMEM;
	size_t same = 0;
	for (size_t k = 0; k < j->nnames; k++)
		same += !strcmp(j->names[k], name);
	case_open(out, name, same ? same + 1 : 0, "ctrack.invalid_frees", f, path);
	j->names[j->nnames++] = name;
	free(path);
	invalid_message(msg, sizeof(msg), b->v);
	snprintf(type, sizeof(type), "invalid_free.%s", ct_invalid_name(b->v->kind));
	fputs(">\n      <failure", out);
	xml_attr(out, "message", msg);
	xml_attr(out, "type", type);
	fputc('>', out);
	int rc = put_invalid_body(out, b, j->cwd, ct_xml_text);
	fputs("\n</failure>\n    </testcase>\n", out);
	return rc;
}

/* A warning, one line of the testsuite's system-err. */
static int junit_warning(void *ctx, const char *text)
{
	struct junit *j = ctx;
	fputs(j->err_open ? "" : "    <system-err>", j->out);
	j->err_open = 1;
	fputs("warning: ", j->out);
	ct_xml_text(j->out, text);
	fputc('\n', j->out);
	return 0;
}

int ct_write_junit(FILE *out, const struct ct_report *r, int level)
{
	char why[400];
	int damaged;
	const char *problem = trace_problem(r->m, why, sizeof(why), &damaged);
	long n = count_leaks(r, level);
	if (n < 0)
		return (int)n;
	struct junit j = {out, r, current_dir(), calloc(r->m->ninvalid + 1, sizeof(char *)), 0, 0};
	if (!j.names) {
		free(j.cwd);
		return -ENOMEM;
	}
	long failures = n + (long)r->m->ninvalid, errors = problem ? 1 : 0;
	long tests = failures + errors + !(failures || errors); /* "no leaks" when nothing else */
	fprintf(out,
	        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	        "<testsuites name=\"ctrack\" tests=\"%ld\" failures=\"%ld\" errors=\"%ld\">\n  <testsuite",
	        tests, failures, errors);
	xml_attr(out, "name", r->path);
	fprintf(out, " tests=\"%ld\" failures=\"%ld\" errors=\"%ld\" skipped=\"0\">\n", tests, failures,
	        errors);
	if (problem) {
		fputs("    <testcase name=\"trace\" classname=\"ctrack.trace\">\n      <error", out);
		xml_attr(out, "message", problem);
		xml_attr(out, "type", damaged ? "trace.damaged" : "trace.incomplete");
		fputs("/>\n    </testcase>\n", out);
	}
	int rc = each_invalid(r, junit_invalid, &j);
	if (!rc)
		rc = each_leak(r, level, junit_case, &j, NULL);
	if (!rc && !(failures || errors))
		fputs("    <testcase name=\"no leaks\" classname=\"ctrack.leaks\"/>\n", out);
	if (!rc)
		rc = each_warning(r->m, junit_warning, &j);
	fputs(j.err_open ? "</system-err>\n" : "", out);
	fputs("  </testsuite>\n</testsuites>\n", out);
	for (size_t k = 0; k < j.nnames; k++)
		free(j.names[k]);
	free(j.names);
	free(j.cwd);
	return rc;
}

/* ---- SARIF 2.1.0 ---- */

struct sarif {
	FILE *out;
	char *cwd;
	size_t results;       /* written so far: a comma before each but the first */
	size_t notifications; /* the same for the invocation's */
};

/* path as a URI reference: bytes other than RFC 3986's unreserved ones and '/' percent-encoded;
 * an absolute path as a file:// URI. */
static void put_uri(FILE *out, const char *path)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(path), k = 0;
	char *s = malloc(3 * n + 8);
	if (!s) { /* still a valid document: JSON quoting alone */
		ct_json_cstring(out, path);
		return;
	}
	if (path[0] == '/')
		k = (size_t)sprintf(s, "file://");
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr("-._~/", *p)) {
			s[k++] = (char)*p;
		} else {
			s[k++] = '%', s[k++] = hex[*p >> 4], s[k++] = hex[*p & 15];
		}
	}
	s[k] = 0;
	ct_json_cstring(out, s);
	free(s);
}

/* A location object: the frame's file and line (relative ones against %SRCROOT%), its function as a
 * logical location, and a message naming it. */
static int sarif_location(const struct sarif *x, const struct ct_frame *f)
{
	FILE *out = x->out;
	fputs("{", out);
	if (f->file) {
		int rel;
		char *path = shown_path(f->file, x->cwd, &rel);
		if (!path)
			return -ENOMEM;
		fputs("\"physicalLocation\": {\"artifactLocation\": {\"uri\": ", out);
		put_uri(out, path);
		fputs(rel ? ", \"uriBaseId\": \"SRCROOT\"}" : "}", out);
		if (f->line)
			fprintf(out, ", \"region\": {\"startLine\": %u}", f->line);
		fputs("}, ", out);
		free(path);
	}
	fputs("\"logicalLocations\": [{\"name\": ", out);
	ct_json_cstring(out, f->function);
	fputs(", \"kind\": \"function\"}], \"message\": {\"text\": ", out);
	ct_json_cstring(out, f->function);
	fputs(f->inlined ? "}, \"properties\": {\"inlined\": true}}" : "}}", out);
	return 0;
}

/* A result's "locations": b's first frame with a source file, if any. */
static int sarif_locations(const struct sarif *x, const struct bt *b)
{
	if (b->located == b->n)
		return 0;
	fputs(",\n     \"locations\": [", x->out);
	int rc = sarif_location(x, &b->v[b->located]);
	fputs("]", x->out);
	return rc;
}

/* A result's "codeFlows": b as the program ran, from the outermost frame to the call (a thread
 * flow has at least one location: none without frames). */
static int sarif_flow(const struct sarif *x, const struct bt *b)
{
	FILE *out = x->out;
	int rc = 0;
	if (!b->n)
		return 0;
	fputs(",\n     \"codeFlows\": [{\"threadFlows\": [{\"locations\": [", out);
	for (size_t k = b->n; k-- > 0 && !rc;) {
		fprintf(out, "%s\n       {\"nestingLevel\": %zu, \"location\": ", k + 1 < b->n ? "," : "",
		        b->n - 1 - k);
		rc = sarif_location(x, &b->v[k]);
		fputs("}", out);
	}
	fputs("]}]}]", out);
	return rc;
}

/* A stack object: b innermost first, under message what. */
static int sarif_stack(const struct sarif *x, const char *what, const struct bt *b)
{
	FILE *out = x->out;
	int rc = 0;
	fputs("{\"message\": {\"text\": ", out);
	ct_json_cstring(out, what);
	fputs("}, \"frames\": [", out);
	for (size_t k = 0; k < b->n && !rc; k++) {
		fputs(k ? ",\n       {\"location\": " : "\n       {\"location\": ", out);
		rc = sarif_location(x, &b->v[k]);
		if (b->v[k].module) {
			fputs(", \"module\": ", out);
			ct_json_cstring(out, b->v[k].module);
		}
		fprintf(out, ", \"properties\": {\"address\": \"0x%" PRIx64 "\"}}", b->v[k].address);
	}
	fputs("]}", out);
	return rc;
}

/* A result's opening: its rule, level error and message. */
static void sarif_open(struct sarif *x, const char *rule, const char *msg)
{
	fprintf(x->out, "%s\n    {\"ruleId\": ", x->results++ ? "," : "");
	ct_json_cstring(x->out, rule);
	fputs(", \"level\": \"error\", \"message\": {\"text\": ", x->out);
	ct_json_cstring(x->out, msg);
	fputs("}", x->out);
}

static int sarif_result(void *ctx, const struct leak *l, size_t i)
{
	(void)i;
	struct sarif *x = ctx;
	char msg[256], rule[64];
	leak_message(msg, sizeof(msg), l);
	snprintf(rule, sizeof(rule), RULE_ID "%s%s", l->kind ? "/" : "", l->kind ? l->kind : "");
	sarif_open(x, rule, msg);
	int rc = sarif_locations(x, &l->bt);
	if (!rc)
		rc = sarif_flow(x, &l->bt);
	fputs(",\n     \"stacks\": [", x->out);
	if (!rc)
		rc = sarif_stack(x, "allocation", &l->bt);
	fputs("]}", x->out);
	return rc;
}

/* An invalid free: at the call, its backtrace the code flow; the call's, the earlier free's and the
 * block's allocation's backtraces as stacks (those known); its kind, call and count as properties. */
static int sarif_invalid(void *ctx, const struct bad_free *b, size_t i)
{
	(void)i;
	struct sarif *x = ctx;
	FILE *out = x->out;
	char msg[384];
	invalid_message(msg, sizeof(msg), b->v);
	sarif_open(x, INVALID_RULE_ID, msg);
	int rc = sarif_locations(x, &b->call);
	if (!rc)
		rc = sarif_flow(x, &b->call);
	const struct {
		const char *what;
		const struct bt *bt;
	} stacks[] = {{"invalid free", &b->call}, {"freed before", &b->freed}, {"allocation", &b->alloc}};
	size_t shown = 0;
	for (size_t k = 0; k < sizeof(stacks) / sizeof(stacks[0]) && !rc; k++) {
		if (!stacks[k].bt->n)
			continue;
		fputs(shown++ ? ",\n      " : ",\n     \"stacks\": [", out);
		rc = sarif_stack(x, stacks[k].what, stacks[k].bt);
	}
	fputs(shown ? "]" : "", out);
	fputs(",\n     \"properties\": {\"kind\": ", out);
	ct_json_cstring(out, ct_invalid_name(b->v->kind));
	fputs(", \"call\": ", out);
	ct_json_cstring(out, ct_invalid_call(b->v->call));
	fprintf(out, ", \"count\": %" PRIu64 "}}", b->v->count);
	return rc;
}

/* One of the invocation's notifications. */
static void sarif_notification(struct sarif *x, const char *level, const char *text)
{
	fprintf(x->out, "%s\n   {\"level\": \"%s\", \"message\": {\"text\": ", x->notifications++ ? "," : "",
	        level);
	ct_json_cstring(x->out, text);
	fputs("}}", x->out);
}

static int sarif_warning(void *ctx, const char *text)
{
	sarif_notification(ctx, "warning", text);
	return 0;
}

/* The invocation: whether the trace is whole (executionSuccessful), and when not, why (an error
 * notification), then the shim's warnings. A whole trace without warnings says no more. */
static void sarif_invocation(struct sarif *x, const struct ct_model *m)
{
	char why[400];
	int damaged;
	const char *problem = trace_problem(m, why, sizeof(why), &damaged);
	fprintf(x->out, " \"invocations\": [{\"executionSuccessful\": %s", problem ? "false" : "true");
	if (problem || m->warnings || m->invalid_others) {
		fputs(", \"toolExecutionNotifications\": [", x->out);
		if (problem)
			sarif_notification(x, "error", problem);
		each_warning(m, sarif_warning, x);
		fputs("]", x->out);
	}
	fputs("}],\n", x->out);
}

int ct_write_sarif(FILE *out, const struct ct_report *r, int level)
{
	struct sarif x = {out, current_dir(), 0, 0};
	fputs("{\"$schema\": \"https://json.schemastore.org/sarif-2.1.0.json\", \"version\": \"2.1.0\",\n"
	      "\"runs\": [{\"tool\": {\"driver\": {\"name\": \"ctrack\", \"version\": \"" CTRACK_VERSION
	      "\",\n"
	      "  \"rules\": [{\"id\": \"" RULE_ID "\", \"name\": \"MemoryLeak\", "
	      "\"shortDescription\": {\"text\": \"Memory allocated and never freed\"}, "
	      "\"defaultConfiguration\": {\"level\": \"error\"}},\n"
	      "   {\"id\": \"" INVALID_RULE_ID "\", \"name\": \"InvalidFree\", "
	      "\"shortDescription\": {\"text\": \"free() or realloc() of an address that is no live heap "
	      "block (memcheck's Invalid free())\"}, "
	      "\"defaultConfiguration\": {\"level\": \"error\"}}]}},\n",
	      out);
	if (x.cwd) {
		fputs(" \"originalUriBaseIds\": {\"SRCROOT\": {\"uri\": ", out);
		put_uri(out, x.cwd);
		fputs("}},\n", out);
	}
	fputs(" \"artifacts\": [{\"location\": {\"uri\": ", out);
	put_uri(out, r->path);
	fputs("}, \"description\": {\"text\": \"the trace\"}}],\n", out);
	sarif_invocation(&x, r->m);
	fputs(" \"results\": [", out);
	int rc = each_invalid(r, sarif_invalid, &x);
	if (!rc)
		rc = each_leak(r, level, sarif_result, &x, NULL);
	fputs(x.results ? "\n ]}]}\n" : "]}]}\n", out);
	free(x.cwd);
	return rc;
}

/* ---- GitHub workflow commands ---- */

/* A command's message: %, CR and LF percent-encoded. */
static void gh_message(FILE *out, const char *s)
{
	for (; s && *s; s++)
		if (*s == '%' || *s == '\r' || *s == '\n')
			fprintf(out, "%%%02X", (unsigned char)*s);
		else
			fputc(*s, out);
}

/* A property's value: also ',' and ':'. */
static void gh_property(FILE *out, const char *s)
{
	for (; s && *s; s++)
		if (strchr("%\r\n,:", *s))
			fprintf(out, "%%%02X", (unsigned char)*s);
		else
			fputc(*s, out);
}

/* A command's start, up to its message: "::error file=F,line=L,title=T::" (file and line those of
 * b's first frame with a source file, when it has one). Returns 0 or -ENOMEM. */
static int gh_open(const struct sarif *x, const char *command, const struct bt *b, const char *title)
{
	FILE *out = x->out;
	fprintf(out, "::%s ", command);
	if (b && b->located < b->n) {
		const struct ct_frame *f = &b->v[b->located];
		int rel;
		char *path = shown_path(f->file, x->cwd, &rel);
		if (!path)
			return -ENOMEM;
		fputs("file=", out);
		gh_property(out, path);
		if (f->line)
			fprintf(out, ",line=%u", f->line);
		fputc(',', out);
		free(path);
	}
	fputs("title=", out);
	gh_property(out, title);
	fputs("::", out);
	return 0;
}

static int github_line(void *ctx, const struct leak *l, size_t i)
{
	(void)i;
	const struct sarif *x = ctx; /* its stream and directory */
	char msg[256], title[96];
	leak_message(msg, sizeof(msg), l);
	snprintf(title, sizeof(title), "ctrack: memory leak%s%s%s", l->kind ? " (" : "",
	         l->kind ? l->kind : "", l->kind ? ")" : "");
	int rc = gh_open(x, "error", &l->bt, title);
	if (rc)
		return rc;
	gh_message(x->out, msg);
	rc = put_backtrace(x->out, &l->bt, l->backtraces, x->cwd, gh_message);
	fputc('\n', x->out);
	return rc;
}

static int github_invalid(void *ctx, const struct bad_free *b, size_t i)
{
	(void)i;
	const struct sarif *x = ctx;
	char msg[384], title[96];
	invalid_message(msg, sizeof(msg), b->v);
	snprintf(title, sizeof(title), "ctrack: invalid free (%s)", ct_invalid_name(b->v->kind));
	int rc = gh_open(x, "error", &b->call, title);
	if (rc)
		return rc;
	gh_message(x->out, msg);
	rc = put_invalid_body(x->out, b, x->cwd, gh_message);
	fputc('\n', x->out);
	return rc;
}

static int github_warning(void *ctx, const char *text)
{
	const struct sarif *x = ctx;
	gh_open(x, "warning", NULL, "ctrack: tracing warning"); /* no frame: no allocation */
	gh_message(x->out, text);
	fputc('\n', x->out);
	return 0;
}

/* The trace's state first (GitHub shows the first 10 errors of a step), then the shim's warnings,
 * the invalid frees and the leaks. */
int ct_write_github(FILE *out, const struct ct_report *r, int level)
{
	struct sarif x = {out, current_dir(), 0, 0};
	char why[400];
	int damaged;
	const char *problem = trace_problem(r->m, why, sizeof(why), &damaged);
	if (problem) {
		gh_open(&x, "error", NULL, "ctrack: trace incomplete");
		gh_message(out, problem);
		fputc('\n', out);
	}
	int rc = each_warning(r->m, github_warning, &x);
	if (!rc)
		rc = each_invalid(r, github_invalid, &x);
	if (!rc)
		rc = each_leak(r, level, github_line, &x, NULL);
	free(x.cwd);
	return rc;
}
