/* SPDX-License-Identifier: MIT */
/* Invalid frees and the fatal signal in the model (INVALID and CRASH records): each distinct invalid
 * free once, with how often it came; a hostile trace's flood of them is bounded (CT_INVALID_MAX),
 * and the work of finding a repeat is counted like the reader's other per-record work. */
#include <errno.h>
#include <stdlib.h>

#include "ctrack/format.h"
#include "model.h"

/* A stack node id a record may name: the empty stack, or a node defined before it. */
static int defined_node(const struct ct_model *m, uint64_t id)
{
	return id == CT_STACK_ROOT || (id >= CT_STACK_FIRST && id < m->nnodes);
}

static int same(const struct ct_invalid *a, const struct ct_invalid *b)
{
	return a->kind == b->kind && a->call == b->call && a->stack == b->stack && a->freed == b->freed &&
	       a->block == b->block;
}

int ct_model_invalid(struct ct_model *m, unsigned kind, unsigned call, uint64_t stack, uint64_t freed,
                     uint64_t block)
{
	if (!defined_node(m, stack) || !defined_node(m, freed) || block > m->ninfos)
		return -EINVAL;
	struct ct_invalid v = {kind, call, (uint32_t)stack, (uint32_t)freed, block, 1};
	m->t.invalid_frees++;
	m->work += m->ninvalid;
	for (size_t i = 0; i < m->ninvalid; i++)
		if (same(&m->invalid[i], &v)) {
			m->invalid[i].count++;
			return 0;
		}
	if (m->ninvalid == CT_INVALID_MAX) {
		m->invalid_others++;
		return 0;
	}
	if (m->ninvalid == m->cap_invalid) {
		size_t cap = m->cap_invalid ? 2 * m->cap_invalid : 8;
		struct ct_invalid *p = realloc(m->invalid, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		m->invalid = p;
		m->cap_invalid = cap;
	}
	m->invalid[m->ninvalid++] = v;
	return 0;
}

int ct_model_crash(struct ct_model *m, uint64_t signal, uint64_t stack)
{
	if (!defined_node(m, stack))
		return -EINVAL;
	m->crashed = 1;
	m->crash_signal = signal;
	m->crash_stack = (uint32_t)stack;
	return 0;
}

uint64_t ct_model_frees_before_tracing(const struct ct_model *m)
{
	/* END counts every free of an address that was no live block; the invalid ones are INVALID's.
	 * A trace cut before its END has no count to take them from. */
	return m->t.unmatched_frees > m->t.invalid_frees ? m->t.unmatched_frees - m->t.invalid_frees : 0;
}

void ct_model_invalid_release(struct ct_model *m)
{
	free(m->invalid);
	m->invalid = NULL;
	m->ninvalid = m->cap_invalid = 0;
}
