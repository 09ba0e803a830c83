/* SPDX-License-Identifier: MIT */
/* The CI check's rules (check.h). The leak rule sums the counted classes' bytes over the alloc infos
 * (the model's class totals), so the verdict's figures are the JSON summary's; the entries listed
 * under it are the leak ranking's of those kinds. A trace without leak classes can only be checked
 * on all its leaked bytes (--fail-on=reachable or any): the others refuse it (ct_check_needs_classes). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ctrack/format.h"
#include "fold.h"
#include "markup.h"
#include "opttab.h"
#include "reader.h"
#include "size.h"
#include "suppress.h"
#include "symbolize.h"

int ct_check_parse_level(const char *s)
{
	if (!strcmp(s, "definite"))
		return CT_FAIL_DEFINITE;
	if (!strcmp(s, "possible"))
		return CT_FAIL_POSSIBLE;
	if (!strcmp(s, "reachable") || !strcmp(s, "any"))
		return CT_FAIL_REACHABLE;
	return -1;
}

int ct_check_needs_classes(const struct ct_check *c, const struct ct_model *m)
{
	return !m->classified && (c->fail_on == CT_FAIL_DEFINITE || c->fail_on == CT_FAIL_POSSIBLE);
}

int ct_check_counts(enum ct_fail_on level, int kind)
{
	switch (kind) {
	case 0:
		return level == CT_FAIL_REACHABLE;
	case CT_CLASS_DEFINITE + 1:
	case CT_CLASS_INDIRECT + 1:
		return level >= CT_FAIL_DEFINITE;
	case CT_CLASS_POSSIBLE + 1:
		return level >= CT_FAIL_POSSIBLE;
	default:
		return level >= CT_FAIL_REACHABLE;
	}
}

const char *ct_check_level_words(enum ct_fail_on level, int classified)
{
	switch (level) {
	case CT_FAIL_DEFINITE:
		return "definitely or indirectly lost";
	case CT_FAIL_POSSIBLE:
		return "definitely, indirectly or possibly lost";
	default:
		return classified ? "leaked (lost or still reachable)" : "leaked";
	}
}

/* The counted classes' bytes and blocks. */
static void leaked(const struct ct_model *m, enum ct_fail_on level, uint64_t *bytes, uint64_t *blocks)
{
	if (!m->classified) {
		*bytes = m->t.current, *blocks = m->t.live_allocations;
		return;
	}
	uint64_t nb[CT_KINDS], nbytes[CT_KINDS];
	ct_model_class_totals(m, nb, nbytes);
	*bytes = *blocks = 0;
	for (int k = 0; k < CT_KINDS; k++)
		if (ct_check_counts(level, k + 1))
			*bytes += nbytes[k], *blocks += nb[k];
}

/* The first `limit` entries of ranking `by`; of the leaks, only the kinds that count at level. */
static int put_entries(const struct ct_report *r, enum ct_rank by, enum ct_fail_on level, size_t limit)
{
	const struct ct_site **v;
	long n = ct_report_rank(r, by, &v);
	int rc = n < 0 ? (int)n : 0;
	size_t shown = 0;
	for (long i = 0; i < n && !rc && shown < limit; i++)
		if (by != CT_BY_LEAKED || ct_check_counts(level, v[i]->kind))
			rc = ct_report_text_entry(r, by, v[i]), shown++;
	free(v);
	return rc;
}

/* Invalid frees are errors, as memcheck's "Invalid free()" are, whatever the rules: the verdict's
 * first lines, each free as the text report shows it. Returns 0 or -ENOMEM. */
static int put_invalid(const struct ct_report *r, FILE *out)
{
	const struct ct_invalid **v;
	uint64_t n = r->m->t.invalid_frees;
	long k = ct_report_invalid(r, &v);
	fprintf(out, "check failed: %" PRIu64 " invalid free%s (memcheck's \"Invalid free()\")\n", n,
	        n == 1 ? "" : "s");
	int rc = k < 0 ? (int)k : 0;
	for (long i = 0; i < k && !rc; i++)
		rc = ct_report_text_invalid(r, v[i]);
	fputs(rc ? "" : "\n", out);
	free(v);
	return rc;
}

int ct_check_run(const struct ct_report *r, const struct ct_check *c, FILE *out)
{
	const struct ct_model *m = r->m;
	struct ct_report to = *r;
	char b[64], lim[64];
	int broken = 0, rc = 0;
	to.out = out;
	if (c->supp)
		ct_supp_put(c->supp, out);
	uint64_t bytes = 0, blocks = 0;
	if (m->t.invalid_frees) {
		broken = 1;
		rc = put_invalid(&to, out);
	}
	if (!rc && c->fail_on) {
		leaked(m, c->fail_on, &bytes, &blocks);
		/* No allowance means no block at all: a lost malloc(0) is lost memory all the same. */
		if (bytes > c->max_leaked || (!c->max_leaked && blocks)) {
			broken = 1;
			fprintf(out, "check failed: %s in %" PRIu64 " block%s %s",
			        ct_fmt_bytes(b, sizeof(b), bytes), blocks, blocks == 1 ? "" : "s",
			        ct_check_level_words(c->fail_on, m->classified));
			if (c->max_leaked)
				fprintf(out, ", more than --max-leaked %s\n",
				        ct_fmt_bytes(lim, sizeof(lim), c->max_leaked));
			else
				fputs("; none allowed (--max-leaked 0)\n", out);
			rc = put_entries(&to, CT_BY_LEAKED, c->fail_on, SIZE_MAX);
			fputs(rc ? "" : "\n", out);
		}
	}
	if (!rc && c->peak_rule && m->t.peak > c->max_peak) {
		broken = 1;
		fprintf(
		    out,
		    "check failed: peak heap %s, more than --max-peak %s; the largest sites at the peak:\n",
		    ct_fmt_bytes(b, sizeof(b), m->t.peak), ct_fmt_bytes(lim, sizeof(lim), c->max_peak));
		rc = put_entries(&to, CT_BY_PEAK, c->fail_on, r->top);
		fputs(rc ? "" : "\n", out);
	}
	if (rc || broken)
		return rc ? rc : 1;
	fputs("check passed:", out);
	if (c->fail_on)
		fprintf(out, " %s in %" PRIu64 " block%s %s, at most %s", ct_fmt_bytes(b, sizeof(b), bytes),
		        blocks, blocks == 1 ? "" : "s", ct_check_level_words(c->fail_on, m->classified),
		        ct_fmt_bytes(lim, sizeof(lim), c->max_leaked));
	if (c->peak_rule)
		fprintf(out, "%s peak heap %s, at most %s", c->fail_on ? ";" : "",
		        ct_fmt_bytes(b, sizeof(b), m->t.peak), ct_fmt_bytes(lim, sizeof(lim), c->max_peak));
	fputc('\n', out);
	return 0;
}

static int add_text(struct ct_check *c, const char *text, size_t len, const char *origin, char *err,
                    size_t errlen)
{
	if (!c->supp && !(c->supp = calloc(1, sizeof(*c->supp)))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	int rc = ct_supp_parse(c->supp, text, len, origin, err, errlen);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	return rc ? -1 : 0;
}

/* The rest of f, in a heap block of *len bytes (the caller frees it), or NULL: no memory. */
static char *read_all(FILE *f, size_t *len)
{
	char *text = NULL;
	size_t cap = 0;
	*len = 0;
	for (;;) {
		if (cap - *len < 2) {
			char *t = realloc(text, cap = cap ? cap * 2 : 4096);
			if (!t) {
				free(text);
				return NULL;
			}
			text = t;
		}
		size_t k = fread(text + *len, 1, cap - *len - 1, f);
		if (!k)
			return text;
		*len += k;
	}
}

int ct_check_add_suppressions(struct ct_check *c, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	size_t len;
	char *text = read_all(f, &len);
	int bad = ferror(f);
	fclose(f);
	if (!text || bad) {
		free(text);
		snprintf(err, errlen, "cannot read '%s'", path);
		return -1;
	}
	int rc = add_text(c, text, len, path, err, errlen);
	free(text);
	c->supp_files++;
	return rc;
}

void ct_check_release(struct ct_check *c)
{
	if (c->supp)
		ct_supp_release(c->supp);
	free(c->supp);
	c->supp = NULL;
}

static int has_builtin(const struct ct_check *c)
{
	return c->supp && c->supp->n && c->supp->v[c->supp->n - 1].builtin;
}

int ct_check_suppress(struct ct_check *c, struct ct_model *m, char *err, size_t errlen)
{
	if (m->suppressions.len && add_text(c, m->suppressions.data, m->suppressions.len,
	                                    "__lsan_default_suppressions", err, errlen) < 0)
		return -1;
	if (c->builtin && m->classified && !has_builtin(c)) { /* last: the others take theirs first */
		if (!c->supp && !(c->supp = calloc(1, sizeof(*c->supp))))
			return snprintf(err, errlen, "out of memory"), -1;
		if (ct_supp_add_builtin(c->supp) < 0)
			return snprintf(err, errlen, "out of memory"), -1;
	}
	if (!c->supp || !c->supp->n || (!m->classified && c->report_only && !c->supp_files))
		return 0; /* the program's own list, on a report without classes: nothing to name */
	if (!m->classified) {
		snprintf(err, errlen,
		         "suppressions need the trace's leak classes (a ctrack that scans the heap at exit)");
		return -1;
	}
	struct ct_symbolizer *sym = ct_symbolizer_new();
	int rc = sym ? ct_supp_apply(c->supp, m, sym, !c->report_only) : -ENOMEM;
	ct_symbolizer_free(sym);
	if (rc)
		snprintf(err, errlen, "out of memory");
	return rc ? -1 : 0;
}

int ct_check_trace(const char *path, struct ct_check *c, FILE *out, char *err, size_t errlen)
{
	struct ct_model m;
	if (ct_model_init(&m) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	int rc = ct_read_trace(path, &m, err, errlen);
	if (!rc)
		rc = ct_check_suppress(c, &m, err, errlen);
	if (!rc && ct_check_needs_classes(c, &m)) {
		snprintf(err, errlen,
		         "'%s' has no leak classes (the program ended before ctrack's scan at exit?)", path);
		rc = -1;
	}
	struct ct_fold *fold = rc ? NULL : ct_fold_new();
	struct ct_report r = {.top = 10, .out = out, .fold = fold, .group = CT_GROUP_SITE, .callers = 3};
	if (!rc && (!fold || ct_report_open(&r, path, &m, 0) < 0 || (rc = ct_check_run(&r, c, out)) < 0)) {
		snprintf(err, errlen, "out of memory");
		rc = -1;
	}
	ct_report_close(&r);
	ct_fold_free(fold);
	ct_model_destroy(&m);
	return rc;
}

/* ---- the check options, shared by both commands ---- */

static int opt_fail_on(void *ctx, const struct ct_opt *self, const char *arg, char *err, size_t len)
{
	struct ct_check_args *a = ctx;
	int level = ct_check_parse_level(arg);
	if (level < 0)
		return snprintf(err, len, "--fail-on needs definite, possible, reachable or any, not '%s'",
		                arg),
		       2;
	a->check.fail_on = (enum ct_fail_on)level;
	a->rules = 1;
	return CT_OPT_GO_ON;
}

static int opt_max(void *ctx, const struct ct_opt *self, const char *arg, char *err, size_t len)
{
	struct ct_check_args *a = ctx;
	int peak = !strcmp(self->name, "max-peak");
	if (ct_parse_size(arg, peak ? &a->check.max_peak : &a->check.max_leaked) < 0)
		return snprintf(err, len, "--%s needs a size (4096, 10KiB, 1.5MB), not '%s'", self->name,
		                arg),
		       2;
	a->check.peak_rule |= peak;
	a->max_leaked |= !peak;
	a->rules = 1;
	return CT_OPT_GO_ON;
}

static int opt_suppressions(void *ctx, const struct ct_opt *self, const char *arg, char *err, size_t len)
{
	struct ct_check_args *a = ctx;
	char why[512];
	if (ct_check_add_suppressions(&a->check, arg, why, sizeof(why)) < 0)
		return snprintf(err, len, "--suppressions: %s", why), 2;
	a->supp_files[a->nsupp++] = arg;
	return CT_OPT_GO_ON;
}

const struct ct_opt ct_check_options[] = {
    {.name = "fail-on",
     .arg = "LEVEL",
     .group = CT_CHECK_GROUP,
     .help = "check the leaks: exit 23 when a block is definitely or indirectly lost "
             "(definite, the default when --max-leaked is given alone), or also possibly lost "
             "(possible), or leaked at all (reachable, any); a trace without leak classes fails "
             "definite and possible (exit 1), and a damaged trace never passes",
     .kind = CT_OPT_CALL,
     .call = opt_fail_on,
     .values = "definite possible reachable any"},
    {.name = "max-leaked",
     .arg = "SIZE",
     .group = CT_CHECK_GROUP,
     .help = "the bytes of those classes allowed (default 0: no block, not even of 0 bytes). "
             "SIZE: 4096, 10KiB, 1.5MB, ...",
     .kind = CT_OPT_CALL,
     .call = opt_max},
    {.name = "max-peak",
     .arg = "SIZE",
     .group = CT_CHECK_GROUP,
     .help = "the highest peak heap allowed: exit 23 above it",
     .kind = CT_OPT_CALL,
     .call = opt_max},
    {.name = "suppressions",
     .arg = "FILE",
     .group = CT_CHECK_GROUP,
     .help = "leaks the checks leave out, LeakSanitizer's leak:PATTERN lines (the program's own "
             "__lsan_default_suppressions too); repeatable",
     .kind = CT_OPT_CALL,
     .call = opt_suppressions,
     .flags = CT_OPT_FILE},
    {.name = "no-builtin-suppressions",
     .group = CT_CHECK_GROUP,
     .help = "the checks count what the C runtime, the loader and libstdc++ keep until exit by "
             "design too",
     .kind = CT_OPT_FLAG,
     .offset = offsetof(struct ct_check_args, no_builtin)},
};
const size_t ct_check_noptions = sizeof(ct_check_options) / sizeof(ct_check_options[0]);
