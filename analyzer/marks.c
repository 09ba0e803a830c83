/* SPDX-License-Identifier: MIT */
/* Marks in the model (MARK records, from ctrack_mark() in the traced program), and windows of the
 * run: --between FROM,TO (two marks) and --from T1 --to T2 (two times), the allocations and the
 * leaks narrowed to the stretch between the bounds. A bound snapshots every info when a mark or the
 * clock reaches it: O(infos) once per bound, nothing per event. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

enum { AT_LIVE, AT_ALLOCATIONS, AT_TEMPORARY, AT_LIVE_END };

static int named(const struct ct_bytes *name, const char *s)
{
	return name->len == strlen(s) && !memcmp(name->data, s, name->len);
}

/* FROM: every info's figures as they stand. */
static int snapshot(struct ct_model *m, struct ct_between *b)
{
	b->at = calloc(m->ninfos ? m->ninfos : 1, sizeof(*b->at));
	if (!b->at)
		return -ENOMEM;
	b->n = m->ninfos;
	for (size_t i = 0; i < b->n; i++) {
		const struct ct_info *info = &m->infos[i];
		b->at[i][AT_LIVE] = info->live;
		b->at[i][AT_ALLOCATIONS] = info->allocations;
		b->at[i][AT_TEMPORARY] = info->temporary;
	}
	b->frees = m->t.frees;
	b->from_us = m->t.now_us;
	return 0;
}

/* TO: the changes since FROM (infos defined since then had nothing at FROM). */
static int changes(struct ct_model *m, struct ct_between *b)
{
	uint64_t(*at)[4] = realloc(b->at, (m->ninfos ? m->ninfos : 1) * sizeof(*at));
	if (!at)
		return -ENOMEM;
	memset(at + b->n, 0, (m->ninfos - b->n) * sizeof(*at));
	for (size_t i = 0; i < m->ninfos; i++) {
		const struct ct_info *info = &m->infos[i];
		at[i][AT_LIVE] = info->live > at[i][AT_LIVE] ? info->live - at[i][AT_LIVE] : 0;
		at[i][AT_ALLOCATIONS] = info->allocations - at[i][AT_ALLOCATIONS];
		at[i][AT_TEMPORARY] = info->temporary - at[i][AT_TEMPORARY];
		at[i][AT_LIVE_END] = info->live;
	}
	b->at = at;
	b->n = m->ninfos;
	b->frees = m->t.frees - b->frees;
	b->to_us = m->t.now_us;
	return 0;
}

int ct_model_mark(struct ct_model *m, struct ct_bytes name)
{
	struct ct_between *b = m->between;
	int rc = 0;
	if (b && b->from && b->state == 0 && named(&name, b->from))
		rc = snapshot(m, b), b->state = 1;
	else if (b && b->from && b->state == 1 && named(&name, b->to))
		rc = changes(m, b), b->state = 2;
	m->marks_total++;
	if (rc < 0 || m->nmarks == CT_MARKS_MAX) {
		free(name.data);
		return rc;
	}
	if (!m->marks && !(m->marks = calloc(CT_MARKS_MAX, sizeof(*m->marks)))) {
		free(name.data);
		return -ENOMEM;
	}
	m->marks[m->nmarks++] = (struct ct_mark){.name = name, .time_us = m->t.now_us};
	return 0;
}

int ct_model_between(struct ct_model *m, const char *from, const char *to)
{
	if (!(m->between = calloc(1, sizeof(*m->between))))
		return -ENOMEM;
	m->between->from = from;
	m->between->to = to;
	return 0;
}

int ct_model_window(struct ct_model *m, uint64_t from_us, uint64_t to_us)
{
	struct ct_between *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	m->between = b;
	b->from_at = from_us;
	b->to_at = to_us;
	if (from_us) /* else open from the start: nothing was live or allocated before */
		return 0;
	b->state = 1;
	return snapshot(m, b);
}

void ct_model_window_time(struct ct_model *m)
{
	struct ct_between *b = m->between;
	if (b->from || b->failed)
		return;
	/* One TIME record may pass both bounds: the window is then empty. */
	if (b->state == 0 && m->t.now_us >= b->from_at)
		b->failed = snapshot(m, b) < 0, b->state = 1;
	if (!b->failed && b->state == 1 && m->t.now_us >= b->to_at)
		b->failed = changes(m, b) < 0, b->state = 2;
}

/* A window by time whose bounds the clock did not reach closes at the end of the run (a bound past
 * it is flagged); the bounds become the times asked, clamped to the run. */
static int window_end(struct ct_model *m, struct ct_between *b)
{
	uint64_t end = ct_model_runtime_us(m);
	b->from_past_end = b->from_at > end;
	b->to_past_end = b->to_at != UINT64_MAX && b->to_at > end;
	if (b->state == 0 && snapshot(m, b) < 0)
		return -ENOMEM;
	if (b->state < 2 && changes(m, b) < 0)
		return -ENOMEM;
	b->state = 2;
	b->from_us = b->from_at < end ? b->from_at : end;
	b->to_us = b->to_at < end ? b->to_at : end;
	return 0;
}

int ct_model_between_apply(struct ct_model *m, char *err, size_t errlen)
{
	struct ct_between *b = m->between;
	if (b->failed || (!b->from && window_end(m, b) < 0)) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (b->state == 0) {
		snprintf(err, errlen, "no mark '%s' in the trace (%llu marks in it)", b->from,
		         (unsigned long long)m->marks_total);
		return -1;
	}
	if (b->state == 1) {
		snprintf(err, errlen, "no mark '%s' after mark '%s' in the trace", b->to, b->from);
		return -1;
	}
	struct ct_totals *t = &m->t;
	t->allocations = t->bytes_allocated = t->temporary = t->current = t->live_allocations = 0;
	b->live_blocks = b->live_bytes = 0;
	for (size_t i = 0; i < m->ninfos; i++) {
		struct ct_info *info = &m->infos[i];
		const uint64_t *at = i < b->n ? b->at[i] : (const uint64_t[4]){0};
		info->live = at[AT_LIVE];
		info->allocations = at[AT_ALLOCATIONS];
		info->temporary = at[AT_TEMPORARY];
		memset(info->classes, 0, sizeof(info->classes));
		t->allocations += info->allocations;
		t->bytes_allocated += info->allocations * info->size;
		t->temporary += info->temporary;
		t->current += info->live * info->size;
		t->live_allocations += info->live;
		b->live_blocks += at[AT_LIVE_END];
		b->live_bytes += at[AT_LIVE_END] * info->size;
	}
	t->frees = b->frees;
	m->classified = 0;
	return 0;
}

void ct_model_marks_release(struct ct_model *m)
{
	for (size_t i = 0; i < m->nmarks; i++)
		free(m->marks[i].name.data);
	free(m->marks);
	if (m->between)
		free(m->between->at);
	free(m->between);
	m->marks = NULL, m->between = NULL, m->nmarks = 0;
}
