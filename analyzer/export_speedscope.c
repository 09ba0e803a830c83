/* SPDX-License-Identifier: MIT */
/* speedscope's file format (https://www.speedscope.app/file-format-schema.json): the root-first call
 * tree as one "sampled" profile per cost, each tree node with a self cost one sample weighing it. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack-config.h"
#include "export.h"
#include "markup.h"

/* Indexed by enum ct_cost. */
static const char *const profile_names[CT_NCOSTS] = {
    "leaked bytes",          "peak heap bytes", "allocations",
    "temporary allocations", "bytes allocated", "lost bytes (definitely or indirectly)"};

static int put_frame(FILE *out, const struct ct_frame *f, int first)
{
	fputs(first ? "\n  {\"name\": " : ",\n  {\"name\": ", out);
	if (f->inlined) {
		/* speedscope has no notion of inlining: the name says it. */
		char *name;
		if (asprintf(&name, "%s (inlined)", f->function) < 0)
			return -ENOMEM;
		ct_json_cstring(out, name);
		free(name);
	} else {
		ct_json_cstring(out, f->function);
	}
	if (f->file) {
		fputs(", \"file\": ", out);
		ct_json_cstring(out, f->file);
	}
	if (f->line)
		fprintf(out, ", \"line\": %u", f->line);
	fputc('}', out);
	return 0;
}

/* Writes shared.frames: one per distinct (function, file, line, inlined), however many tree nodes
 * show it, so speedscope's sandwich view sums a function over its callers. frame_of[node] gets the
 * node's frame index. */
static int put_frames(FILE *out, const struct ct_tree *t, uint32_t *frame_of)
{
	uint32_t *order = ct_tree_by_frame(t);
	if (!order)
		return -ENOMEM;
	uint32_t next = 0;
	int rc = 0;
	fputs("\"shared\": {\"frames\": [", out);
	for (size_t i = 0; i + 1 < t->n && !rc; i++) {
		const struct ct_frame *f = &t->nodes[order[i]].frame;
		if (i > 0 && !ct_frame_cmp(&t->nodes[order[i - 1]].frame, f)) {
			frame_of[order[i]] = frame_of[order[i - 1]];
			continue;
		}
		frame_of[order[i]] = next;
		rc = put_frame(out, f, !next++);
	}
	fputs("]},\n", out);
	free(order);
	return rc;
}

/* The node after n in depth-first order, 0 at the end. */
static uint32_t dfs_next(const struct ct_tree *t, uint32_t n)
{
	if (ct_tree_first(t, n))
		return ct_tree_first(t, n);
	while (n && !ct_tree_next(t, n))
		n = t->nodes[n].parent;
	return n ? ct_tree_next(t, n) : 0;
}

struct samples {
	FILE *out;
	const struct ct_tree *t;
	const uint32_t *frame_of;
	uint32_t *path; /* max_depth slots */
	enum ct_fig fig;
};

/* A sample's stack, root first, as frame indexes (the root "all" is no frame). */
static void put_stack(const struct samples *s, uint32_t n)
{
	size_t depth = 0;
	for (; n; n = s->t->nodes[n].parent)
		s->path[depth++] = s->frame_of[n];
	fputc('[', s->out);
	for (size_t i = depth; i-- > 0;)
		fprintf(s->out, i + 1 < depth ? ",%" PRIu32 : "%" PRIu32, s->path[i]);
	fputc(']', s->out);
}

/* The samples (weights = 0) or weights (weights = 1) of one profile, in depth-first order. */
static void put_samples(const struct samples *s, int weights)
{
	int first = 1;
	fputc('[', s->out);
	for (uint32_t n = 0;;) {
		uint64_t w = ct_tree_self(s->t, n, 0)[s->fig];
		if (w) {
			fputs(first ? "" : ", ", s->out);
			first = 0;
			if (weights)
				fprintf(s->out, "%" PRIu64, w);
			else
				put_stack(s, n);
		}
		if (!(n = dfs_next(s->t, n)))
			break;
	}
	fputc(']', s->out);
}

static void put_profile(struct samples *s, enum ct_cost c)
{
	FILE *out = s->out;
	s->fig = ct_cost_fig(c);
	fprintf(out, "  {\"type\": \"sampled\", \"name\": \"%s\", \"unit\": \"%s\", \"startValue\": 0, ",
	        profile_names[c], ct_cost_is_bytes(c) ? "bytes" : "none");
	fprintf(out, "\"endValue\": %" PRIu64 ",\n   \"samples\": ", ct_tree_total(s->t, 0, 0)[s->fig]);
	put_samples(s, 0);
	fputs(",\n   \"weights\": ", out);
	put_samples(s, 1);
	fputc('}', out);
}

/* The command line, its arguments joined by spaces, as one JSON string. */
static int put_command(FILE *out, const struct ct_process *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *cmd = open_memstream(&buf, &len);
	if (!cmd)
		return -ENOMEM;
	for (size_t i = 0; i < p->argc; i++) {
		if (i)
			fputc(' ', cmd);
		fwrite(p->argv[i].data, 1, p->argv[i].len, cmd);
	}
	if (!p->argc && p->exe.data)
		fwrite(p->exe.data, 1, p->exe.len, cmd);
	if (fclose(cmd)) {
		free(buf);
		return -ENOMEM;
	}
	ct_json_string(out, buf, len);
	free(buf);
	return 0;
}

static int put_file(FILE *out, const struct ct_report *r, const struct ct_tree *t, uint32_t *frame_of)
{
	fputs("{\"$schema\": \"https://www.speedscope.app/file-format-schema.json\",\n", out);
	fputs("\"name\": ", out);
	int rc = put_command(out, &r->m->proc);
	if (!rc) {
		fputs(",\n\"exporter\": \"ctrack-analyze " CTRACK_VERSION "\",\n\"activeProfileIndex\": 0,\n",
		      out);
		rc = put_frames(out, t, frame_of);
	}
	if (rc)
		return rc;
	struct samples s = {.out = out, .t = t, .frame_of = frame_of};
	s.path = malloc((t->max_depth + 1) * sizeof(*s.path));
	if (!s.path)
		return -ENOMEM;
	fputs("\"profiles\": [\n", out);
	for (int c = 0; c < CT_NCOSTS; c++) {
		fputs(c ? ",\n" : "", out);
		put_profile(&s, (enum ct_cost)c);
	}
	fputs("\n]}\n", out);
	free(s.path);
	return 0;
}

int ct_write_speedscope(FILE *out, const struct ct_report *r)
{
	struct ct_tree t;
	int rc = ct_tree_build(&t, r, 0);
	if (rc)
		return rc;
	uint32_t *frame_of = calloc(t.n, sizeof(*frame_of));
	rc = frame_of ? put_file(out, r, &t, frame_of) : -ENOMEM;
	free(frame_of);
	ct_tree_destroy(&t);
	return rc;
}
