/* SPDX-License-Identifier: MIT */
/* The leaks as CI servers read them: JUnit XML (one failing testcase per leak site, one passing
 * testcase when nothing leaked), SARIF 2.1.0 (one result per leak site, located at its first frame
 * with a source file, the backtrace as a code flow and a stack) and GitHub workflow commands (one
 * ::error line per leak site). A leak site is an entry of the leaked ranking, as in the text and
 * JSON reports; its backtrace is that of its largest caller. Source paths under the current
 * directory (the repository's root in CI) are written relative to it, so that CI servers can tie
 * them to the repository's files. */
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

/* The leak class of a site ("definite", "indirect", ...), or NULL when the trace does not tell.
 * The one place that knows: every format below names the class only through it. */
static const char *leak_kind(const struct ct_report *r, const struct ct_site *s)
{
	(void)r;
	return s->kind ? ct_kind_name(s->kind) : NULL;
}

/* One leak site as the formats show it: its figures, kind and shown frames, innermost first. */
struct leak {
	const struct ct_site *s;
	const char *kind;   /* leak_kind's */
	struct ct_frame *v; /* the frames of its largest backtrace; strings owned by the symbolizer */
	size_t n, cap;
	size_t located;    /* index of the first frame with a source file; n when there is none */
	size_t backtraces; /* how many backtraces the site gathers */
	int truncated;     /* the backtrace was cut at the capture depth */
};

static int keep_frame(void *ctx, const struct ct_frame *f, unsigned index)
{
	(void)index;
	struct leak *l = ctx;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 32;
		struct ct_frame *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		l->v = v, l->cap = cap;
	}
	l->v[l->n++] = *f;
	return 0;
}

/* Fills l (whose v it reuses) for site s. Returns 0 or -ENOMEM. */
static int leak_load(const struct ct_report *r, const struct ct_site *s, struct leak *l)
{
	struct ct_callers c;
	int rc = ct_report_callers(r, CT_BY_LEAKED, s, &c);
	if (rc < 0)
		return rc;
	l->s = s, l->kind = leak_kind(r, s), l->n = 0, l->backtraces = c.n;
	rc = ct_report_frames(r, c.v[0].stack, keep_frame, l, &l->truncated);
	free(c.v);
	for (l->located = 0; l->located < l->n && !l->v[l->located].file; l->located++)
		;
	return rc;
}

/* Calls fn for every leak site, biggest first, with l filled. Returns 0, fn's first non-zero result
 * or -ENOMEM. */
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
	free(l.v);
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

/* The backtrace as text lines, each after a newline ("\n#0 function at file:line [inlined]"),
 * through quote. */
static int put_backtrace(FILE *out, const struct leak *l, const char *cwd,
                         void (*quote)(FILE *, const char *))
{
	for (size_t i = 0; i < l->n; i++) {
		const struct ct_frame *f = &l->v[i];
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
	if (l->truncated)
		quote(out, "\n... (deeper frames were not captured)");
	if (l->backtraces > 1) {
		char more[96];
		snprintf(more, sizeof(more), "\n(the largest of %zu backtraces)", l->backtraces);
		quote(out, more);
	}
	return 0;
}

/* ---- JUnit XML ---- */

struct junit {
	FILE *out;
	const struct ct_report *r;
	char *cwd;
};

static void xml_attr(FILE *out, const char *name, const char *value)
{
	fprintf(out, " %s=\"", name);
	ct_xml_text(out, value);
	fputc('"', out);
}

static int junit_case(void *ctx, const struct leak *l, size_t i)
{
	const struct junit *j = ctx;
	FILE *out = j->out;
	char msg[256], type[64] = "leak";
	const struct ct_frame *f = l->n ? &l->v[0] : NULL;
	int rel;
	char *path = f && f->file ? shown_path(f->file, j->cwd, &rel) : NULL;
	if (f && f->file && !path)
		return -ENOMEM;
	fputs("    <testcase name=\"", out);
	if (f)
		put_frame_name(out, f, path, ct_xml_text);
	else
		fputs("??", out);
	if (j->r->group == CT_GROUP_BACKTRACE) /* one site may be several entries: names stay unique */
		fprintf(out, " #%zu", i + 1);
	fputc('"', out);
	xml_attr(out, "classname", "ctrack.leaks");
	if (path) {
		xml_attr(out, "file", path);
		fprintf(out, " line=\"%u\"", f->line);
	}
	free(path);
	leak_message(msg, sizeof(msg), l);
	if (l->kind)
		snprintf(type, sizeof(type), "leak.%s", l->kind);
	fputs(">\n      <failure", out);
	xml_attr(out, "message", msg);
	xml_attr(out, "type", type);
	fputc('>', out);
	int rc = put_backtrace(out, l, j->cwd, ct_xml_text);
	fputs("\n</failure>\n    </testcase>\n", out);
	return rc;
}

int ct_write_junit(FILE *out, const struct ct_report *r, int level)
{
	long n = count_leaks(r, level);
	if (n < 0)
		return (int)n;
	struct junit j = {out, r, current_dir()};
	long tests = n ? n : 1;
	fprintf(out,
	        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	        "<testsuites name=\"ctrack\" tests=\"%ld\" failures=\"%ld\" errors=\"0\">\n  <testsuite",
	        tests, n);
	xml_attr(out, "name", r->path);
	fprintf(out, " tests=\"%ld\" failures=\"%ld\" errors=\"0\" skipped=\"0\">\n", tests, n);
	int rc = each_leak(r, level, junit_case, &j, NULL);
	if (!n)
		fputs("    <testcase name=\"no leaks\" classname=\"ctrack.leaks\"/>\n", out);
	fputs("  </testsuite>\n</testsuites>\n", out);
	free(j.cwd);
	return rc;
}

/* ---- SARIF 2.1.0 ---- */

struct sarif {
	FILE *out;
	char *cwd;
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

static int sarif_result(void *ctx, const struct leak *l, size_t i)
{
	const struct sarif *x = ctx;
	FILE *out = x->out;
	char msg[256], rule[64];
	int rc = 0;
	leak_message(msg, sizeof(msg), l);
	snprintf(rule, sizeof(rule), RULE_ID "%s%s", l->kind ? "/" : "", l->kind ? l->kind : "");
	fprintf(out, "%s\n    {\"ruleId\": ", i ? "," : "");
	ct_json_cstring(out, rule);
	fputs(", \"level\": \"error\", \"message\": {\"text\": ", out);
	ct_json_cstring(out, msg);
	fputs("}", out);
	if (l->located < l->n) {
		fputs(",\n     \"locations\": [", out);
		rc = sarif_location(x, &l->v[l->located]);
		fputs("]", out);
	}
	/* The code flow runs as the program did, from the outermost frame to the allocation; the stack
	 * is innermost first. */
	fputs(",\n     \"codeFlows\": [{\"threadFlows\": [{\"locations\": [", out);
	for (size_t k = l->n; k-- > 0 && !rc;) {
		fprintf(out, "%s\n       {\"nestingLevel\": %zu, \"location\": ", k + 1 < l->n ? "," : "",
		        l->n - 1 - k);
		rc = sarif_location(x, &l->v[k]);
		fputs("}", out);
	}
	fputs("]}]}],\n     \"stacks\": [{\"message\": {\"text\": \"allocation\"}, \"frames\": [", out);
	for (size_t k = 0; k < l->n && !rc; k++) {
		fputs(k ? ",\n       {\"location\": " : "\n       {\"location\": ", out);
		rc = sarif_location(x, &l->v[k]);
		if (l->v[k].module) {
			fputs(", \"module\": ", out);
			ct_json_cstring(out, l->v[k].module);
		}
		fprintf(out, ", \"properties\": {\"address\": \"0x%" PRIx64 "\"}}", l->v[k].address);
	}
	fputs("]}]}", out);
	return rc;
}

int ct_write_sarif(FILE *out, const struct ct_report *r, int level)
{
	struct sarif x = {out, current_dir()};
	fputs("{\"$schema\": \"https://json.schemastore.org/sarif-2.1.0.json\", \"version\": \"2.1.0\",\n"
	      "\"runs\": [{\"tool\": {\"driver\": {\"name\": \"ctrack\", \"version\": \"" CTRACK_VERSION
	      "\",\n"
	      "  \"rules\": [{\"id\": \"" RULE_ID "\", \"name\": \"MemoryLeak\", "
	      "\"shortDescription\": {\"text\": \"Memory allocated and never freed\"}, "
	      "\"defaultConfiguration\": {\"level\": \"error\"}}]}},\n",
	      out);
	if (x.cwd) {
		fputs(" \"originalUriBaseIds\": {\"SRCROOT\": {\"uri\": ", out);
		put_uri(out, x.cwd);
		fputs("}},\n", out);
	}
	fputs(" \"artifacts\": [{\"location\": {\"uri\": ", out);
	put_uri(out, r->path);
	fputs("}, \"description\": {\"text\": \"the trace\"}}],\n \"results\": [", out);
	size_t n;
	int rc = each_leak(r, level, sarif_result, &x, &n);
	fputs(n ? "\n ]}]}\n" : "]}]}\n", out);
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

static int github_line(void *ctx, const struct leak *l, size_t i)
{
	(void)i;
	const struct sarif *x = ctx; /* its stream and directory */
	FILE *out = x->out;
	char msg[256], title[96];
	leak_message(msg, sizeof(msg), l);
	snprintf(title, sizeof(title), "ctrack: memory leak%s%s%s", l->kind ? " (" : "",
	         l->kind ? l->kind : "", l->kind ? ")" : "");
	fputs("::error ", out);
	if (l->located < l->n) {
		const struct ct_frame *f = &l->v[l->located];
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
	gh_message(out, msg);
	int rc = put_backtrace(out, l, x->cwd, gh_message);
	fputc('\n', out);
	return rc;
}

int ct_write_github(FILE *out, const struct ct_report *r, int level)
{
	struct sarif x = {out, current_dir()};
	int rc = each_leak(r, level, github_line, &x, NULL);
	free(x.cwd);
	return rc;
}
