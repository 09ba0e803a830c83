/* SPDX-License-Identifier: MIT */
/* Folded stacks for flamegraph.pl and inferno: "main;load_config;parse_entry 480", root first.
 * Inlined frames carry flamegraph.pl's "_[i]" suffix; stacks that read the same are merged. A tree
 * keyed by line names each frame's line as py-spy's folded output does: "main (prog.c:12)". */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"

struct line {
	char *text; /* the stack, root first */
	uint64_t cost;
};

struct lines {
	struct line *v;
	size_t n, cap;
};

/* s as part of a folded field: ';' separates frames and a line ends at '\n', so neither may appear
 * inside a name. */
static void put_field(FILE *out, const char *s)
{
	for (const char *p = s; *p; p++)
		fputc(*p == ';' ? ':' : *p == '\n' || *p == '\r' ? ' ' : *p, out);
}

/* One frame's name; by line, with its file's name and line. The "_[i]" mark ends the field, where
 * flamegraph.pl looks for it. */
static void put_name(FILE *out, const struct ct_tree *t, const struct ct_frame *f)
{
	put_field(out, f->function);
	if (!t->by_function && f->file && f->line) {
		const char *slash = strrchr(f->file, '/');
		fputs(" (", out);
		put_field(out, slash ? slash + 1 : f->file);
		fprintf(out, ":%u)", f->line);
	}
	if (f->inlined)
		fputs("_[i]", out);
}

/* The stack of node n, root first, as a malloc'd string in *out. */
static int render(const struct ct_tree *t, uint32_t n, char **out)
{
	size_t len = 0;
	FILE *f = open_memstream(out, &len);
	if (!f)
		return -ENOMEM;
	uint32_t path[t->max_depth + 1];
	size_t depth = 0;
	for (uint32_t i = n; i; i = t->nodes[i].parent)
		path[depth++] = i;
	while (depth--) {
		put_name(f, t, &t->nodes[path[depth]].frame);
		if (depth)
			fputc(';', f);
	}
	return fclose(f) ? -ENOMEM : 0;
}

static int push(struct lines *l, char *text, uint64_t cost)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		struct line *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		l->v = v, l->cap = cap;
	}
	l->v[l->n++] = (struct line){text, cost};
	return 0;
}

static int by_text(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->text, ((const struct line *)b)->text);
}

int ct_write_folded(FILE *out, const struct ct_tree *t, enum ct_cost cost)
{
	struct lines l = {0};
	enum ct_fig fig = ct_cost_fig(cost);
	int rc = 0;
	for (uint32_t n = 1; n < t->n && !rc; n++) {
		uint64_t c = ct_tree_self(t, n, 0)[fig];
		char *text = NULL;
		if (!c)
			continue;
		rc = render(t, n, &text);
		if (!rc && (rc = push(&l, text, c)) < 0)
			free(text);
	}
	if (!rc && l.n) /* nothing of that cost: no array, and qsort's base must not be NULL */
		qsort(l.v, l.n, sizeof(*l.v), by_text);
	for (size_t i = 0; i < l.n && !rc; i++) {
		uint64_t c = l.v[i].cost;
		while (i + 1 < l.n && !strcmp(l.v[i].text, l.v[i + 1].text))
			c += l.v[++i].cost;
		fprintf(out, "%s %" PRIu64 "\n", l.v[i].text, c);
	}
	for (size_t i = 0; i < l.n; i++)
		free(l.v[i].text);
	free(l.v);
	return rc;
}
