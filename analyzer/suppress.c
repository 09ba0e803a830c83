/* SPDX-License-Identifier: MIT */
/* Leak suppressions (suppress.h): parsing LeakSanitizer's syntax and matching its patterns. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/format.h"
#include "markup.h"
#include "model.h"
#include "suppress.h"
#include "symbolize.h"

/* Whether the glob pattern p[0..plen) matches all of s, '*' matching any run. Iterative, with
 * backtracking to the last star only: linear in practice, never exponential. */
static int glob_all(const char *p, size_t plen, const char *s)
{
	size_t i = 0, star = (size_t)-1;
	const char *retry = NULL;
	while (*s) {
		if (i < plen && p[i] == '*') {
			star = i++;
			retry = s;
		} else if (i < plen && p[i] == *s) {
			i++, s++;
		} else if (star != (size_t)-1) {
			i = star + 1;
			s = ++retry;
		} else {
			return 0;
		}
	}
	while (i < plen && p[i] == '*')
		i++;
	return i == plen;
}

int ct_supp_match(const char *pattern, const char *name)
{
	size_t len = strlen(pattern);
	int at_start = len && pattern[0] == '^', at_end = len > (size_t)at_start && pattern[len - 1] == '$';
	const char *p = pattern + at_start;
	size_t plen = len - (size_t)at_start - (size_t)at_end;
	/* An unanchored side is an implicit '*': try the pattern at every start, or only at 0. */
	char buf[1024];
	if (plen + 2 >= sizeof(buf))
		return 0;
	size_t n = 0;
	if (!at_start)
		buf[n++] = '*';
	memcpy(buf + n, p, plen);
	n += plen;
	if (!at_end)
		buf[n++] = '*';
	return glob_all(buf, n, name);
}

static int add(struct ct_suppressions *s, const char *pattern, size_t plen, const char *origin, size_t line)
{
	struct ct_suppression *v = realloc(s->v, (s->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->v = v;
	char where[64];
	snprintf(where, sizeof(where), ":%zu", line);
	struct ct_suppression *e = &v[s->n];
	*e = (struct ct_suppression){.pattern = strndup(pattern, plen),
	                             .origin = malloc(strlen(origin) + strlen(where) + 1)};
	if (!e->pattern || !e->origin) {
		free(e->pattern);
		free(e->origin);
		return -ENOMEM;
	}
	strcat(strcpy(e->origin, origin), where);
	s->n++;
	return 0;
}

/* One line without its newline: 0 (nothing or added), or an error. */
static int parse_line(struct ct_suppressions *s, const char *l, size_t len, const char *origin, size_t line,
                      char *err, size_t errlen)
{
	while (len && (*l == ' ' || *l == '\t'))
		l++, len--;
	while (len && (l[len - 1] == ' ' || l[len - 1] == '\t' || l[len - 1] == '\r'))
		len--;
	if (!len || *l == '#')
		return 0;
	const char *colon = memchr(l, ':', len);
	if (!colon || colon - l != 4 || memcmp(l, "leak", 4) || colon + 1 == l + len) {
		snprintf(err, errlen, "%s:%zu: expected 'leak:PATTERN', got '%.*s'", origin, line,
		         (int)(len > 60 ? 60 : len), l);
		return -EINVAL;
	}
	return add(s, colon + 1, (size_t)(l + len - colon - 1), origin, line);
}

int ct_supp_parse(struct ct_suppressions *s, const char *text, size_t len, const char *origin, char *err,
                  size_t errlen)
{
	size_t line = 1;
	for (const char *p = text, *end = text + len; p < end; line++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (memchr(p, 0, n)) {
			snprintf(err, errlen, "%s:%zu: a NUL byte: not a text file", origin, line);
			return -EINVAL;
		}
		int rc = parse_line(s, p, n, origin, line, err, errlen);
		if (rc < 0)
			return rc;
		p += n + 1;
	}
	return 0;
}

/* What the C runtime, the loader and libstdc++ allocate once and keep until exit by design (memcheck
 * calls them "still reachable" or, for a thread alive at exit, "possibly lost"), named by the
 * function that allocates, anchored: a pattern never names a function that calls the program's own
 * code (a constructor run by dlopen, a cleanup handler), so no leak of the program is hidden. */
static const char builtin[] =
    /* libc: stdio buffers, the locale data setlocale loads, the static buffers of the non-reentrant
     * getpwnam family, the NSS configuration and modules, time zone data, atexit's list */
    "leak:^_IO_file_doallocate$\n"
    "leak:^setlocale$\n"
    "leak:^_nl_find_locale$\n"
    "leak:nss/getXXbyYY.c$\n"
    "leak:^__nss_database_get$\n"
    "leak:^__nss_module_load$\n"
    "leak:^__tzfile_read$\n"
    "leak:^tzset_internal$\n"
    "leak:^__new_exitfn$\n"
    "leak:^__libc_unwind_link_get$\n" /* libgcc_s, loaded to unwind a thread's exit */
    /* ld.so: the link maps, search paths and lookup tables of loaded libraries, TLS vectors of
     * threads still running (LeakSanitizer's own list has *tls_get_addr*) */
    "leak:^_dl_new_object$\n"
    "leak:^_dl_map_object_deps$\n"
    "leak:^_dl_check_map_versions$\n"
    "leak:^_dl_load_cache_lookup$\n"
    "leak:^_dl_find_object_update$\n"
    "leak:^_dl_add_to_slotinfo$\n"
    "leak:^_dl_resize_dtv$\n"
    "leak:^_dl_allocate_tls$\n"
    "leak:tls_get_addr\n"
    /* libstdc++: the emergency exception pool (freed by __gnu_cxx::__freeres where it exists) */
    "leak:eh_alloc.cc$\n";

int ct_supp_add_builtin(struct ct_suppressions *s)
{
	char err[256];
	size_t from = s->n;
	int rc = ct_supp_parse(s, builtin, sizeof(builtin) - 1, "built-in", err, sizeof(err));
	for (size_t i = from; i < s->n; i++)
		s->v[i].builtin = 1;
	return rc;
}

void ct_supp_release(struct ct_suppressions *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].pattern);
		free(s->v[i].origin);
	}
	free(s->v);
	*s = (struct ct_suppressions){0};
}

/* The first suppression matching a frame of the stack at node, or -1. */
static long match_stack(const struct ct_suppressions *s, const struct ct_model *m, struct ct_symbolizer *sym,
                        uint32_t node)
{
	struct ct_frame f[CT_SYMBOLIZE_MAX];
	for (; node >= CT_STACK_FIRST && node < m->nnodes; node = m->nodes[node].parent) {
		int n = ct_symbolize_node(sym, m, node, f, CT_SYMBOLIZE_MAX);
		for (int i = 0; i < n; i++)
			for (size_t k = 0; k < s->n; k++) {
				const char *p = s->v[k].pattern;
				if ((f[i].function && ct_supp_match(p, f[i].function)) ||
				    (f[i].symbol && ct_supp_match(p, f[i].symbol)) ||
				    (f[i].file && ct_supp_match(p, f[i].file)) ||
				    (f[i].module && ct_supp_match(p, f[i].module)))
					return (long)k;
			}
	}
	return -1;
}

/* The lost blocks the suppressions matched, and all of them, to tell the indirectly lost blocks
 * that hang from suppressed ones. */
struct lost {
	uint64_t definite, definite_taken, taken;
	uint64_t indirect_blocks, indirect_bytes, indirect_taken_blocks, indirect_taken_bytes;
};

/* The indirectly lost blocks no suppression matched. Each hangs from a definitely lost block: when
 * all of those are suppressed, so is every one of them (held_*, out of the classes when taking);
 * else, when a lost block was suppressed, any may hang from it (unsure_*), and they stay. */
static void hang(struct ct_suppressions *s, const struct lost *l, struct ct_model *m, int take)
{
	uint64_t rest = l->indirect_blocks - l->indirect_taken_blocks;
	uint64_t rest_bytes = l->indirect_bytes - l->indirect_taken_bytes;
	if (!rest || !l->taken)
		return;
	if (l->definite_taken != l->definite) {
		s->unsure_blocks = rest, s->unsure_bytes = rest_bytes;
		return;
	}
	s->held_blocks = rest, s->held_bytes = rest_bytes;
	for (size_t i = 0; i < m->ninfos && take; i++) {
		struct ct_info *info = &m->infos[i];
		info->suppressed += info->classes[CT_CLASS_INDIRECT];
		info->classes[CT_CLASS_INDIRECT] = 0;
	}
}

/* The trace says which definitely lost blocks hold each indirectly lost one (HOLDERS): those held by
 * a suppressed block's info go with it (held_*), as LeakSanitizer drops what only suppressed blocks
 * reach; taken[i]: a suppression matched info i. */
static void hold(struct ct_suppressions *s, struct ct_model *m, const uint8_t *taken, int take)
{
	uint64_t *left = calloc(m->ninfos ? m->ninfos : 1, sizeof(*left)); /* not yet held, by info */
	for (size_t i = 0; left && i < m->ninfos; i++)
		left[i] = taken[i] ? 0 : m->infos[i].classes[CT_CLASS_INDIRECT];
	for (size_t i = 0; left && i < m->nholders; i++) {
		const struct ct_holder *h = &m->holders[i];
		if (!taken[h->holder] || !left[h->info])
			continue;
		uint64_t n = h->count < left[h->info] ? h->count : left[h->info];
		struct ct_info *info = &m->infos[h->info];
		left[h->info] -= n;
		s->held_blocks += n, s->held_bytes += n * info->size;
		if (take) {
			info->classes[CT_CLASS_INDIRECT] -= n;
			info->suppressed += n;
		}
	}
	free(left);
}

int ct_supp_apply(struct ct_suppressions *s, struct ct_model *m, struct ct_symbolizer *sym, int take)
{
	struct lost l = {0};
	uint8_t *taken = m->has_holders ? calloc(m->ninfos ? m->ninfos : 1, 1) : NULL;
	if (m->has_holders && !taken)
		return -ENOMEM;
	s->applied = take;
	for (size_t i = 0; i < m->ninfos && s->n; i++) {
		struct ct_info *info = &m->infos[i];
		uint64_t kinds[CT_KINDS], classified = 0;
		ct_info_kinds(m, info, kinds);
		for (int j = 0; j < CT_KINDS; j++)
			classified += kinds[j];
		l.definite += kinds[CT_CLASS_DEFINITE];
		l.indirect_blocks += kinds[CT_CLASS_INDIRECT];
		l.indirect_bytes += kinds[CT_CLASS_INDIRECT] * info->size;
		if (!classified)
			continue;
		long k = match_stack(s, m, sym, info->stack);
		if (k < 0)
			continue;
		s->v[k].blocks += classified;
		s->v[k].bytes += classified * info->size;
		if (taken)
			taken[i] = 1;
		l.definite_taken += kinds[CT_CLASS_DEFINITE];
		l.taken += kinds[CT_CLASS_DEFINITE] + kinds[CT_CLASS_INDIRECT];
		l.indirect_taken_blocks += kinds[CT_CLASS_INDIRECT];
		l.indirect_taken_bytes += kinds[CT_CLASS_INDIRECT] * info->size;
		if (take) {
			info->suppressed += classified;
			memset(info->classes, 0, sizeof(info->classes));
		}
	}
	if (taken)
		hold(s, m, taken, take);
	else
		hang(s, &l, m, take);
	free(taken);
	return 0;
}

static const char *blocks(uint64_t n)
{
	return n == 1 ? "block" : "blocks";
}

void ct_supp_put(const struct ct_suppressions *s, FILE *out)
{
	const char *verb = s->applied ? "suppressed" : "suppressed in checks";
	char b[64];
	for (size_t i = 0; i < s->n; i++) {
		const struct ct_suppression *e = &s->v[i];
		if (e->blocks)
			fprintf(out, "%s by leak:%s (%s): %s in %" PRIu64 " %s\n", verb, e->pattern,
			        e->origin, ct_fmt_bytes(b, sizeof(b), e->bytes), e->blocks,
			        blocks(e->blocks));
		else if (!e->builtin && s->applied) /* a typo, or a leak fixed since: worth a look */
			fprintf(out, "warning: suppression leak:%s (%s) matched nothing\n", e->pattern,
			        e->origin);
	}
	if (s->held_blocks)
		fprintf(
		    out,
		    "%s with the suppressed blocks that hold them: %s in %" PRIu64 " %s indirectly lost\n",
		    verb, ct_fmt_bytes(b, sizeof(b), s->held_bytes), s->held_blocks, blocks(s->held_blocks));
	if (s->unsure_blocks)
		fprintf(out,
		        "note: %s in %" PRIu64
		        " %s indirectly lost %s: each may hang from a suppressed block "
		        "or from another, and the trace does not say which\n",
		        ct_fmt_bytes(b, sizeof(b), s->unsure_bytes), s->unsure_blocks,
		        blocks(s->unsure_blocks), s->applied ? "still count" : "count in checks");
}
