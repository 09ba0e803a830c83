/* SPDX-License-Identifier: MIT */
/* Rankings of allocation sites and the walk of a stack's frames (inline chains expanded), for both
 * reporters. Ties break on the next key, then on the stack id: the order never depends on qsort. */
#include <errno.h>
#include <stdlib.h>

#include "ctrack/format.h"
#include "report.h"

/* The two keys a ranking sorts on, most significant first. */
static void keys(const struct ct_site *s, enum ct_rank by, uint64_t k[2])
{
	k[0] = k[1] = 0;
	switch (by) {
	case CT_BY_LEAKED:
		k[0] = s->leaked_bytes, k[1] = s->leaked_allocations;
		break;
	case CT_BY_PEAK:
		k[0] = s->peak_bytes, k[1] = s->peak_allocations;
		break;
	case CT_BY_ALLOCATIONS:
		k[0] = s->allocations, k[1] = s->bytes_allocated;
		break;
	case CT_BY_TEMPORARY:
		k[0] = s->temporary, k[1] = s->allocations;
		break;
	}
}

static int cmp_sites(const void *a, const void *b, void *by)
{
	const struct ct_site *x = *(const struct ct_site *const *)a, *y = *(const struct ct_site *const *)b;
	uint64_t kx[2], ky[2];
	keys(x, *(enum ct_rank *)by, kx);
	keys(y, *(enum ct_rank *)by, ky);
	for (int i = 0; i < 2; i++)
		if (kx[i] != ky[i])
			return kx[i] > ky[i] ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

long ct_report_rank(const struct ct_report *r, enum ct_rank by, const struct ct_site ***out)
{
	*out = NULL;
	const struct ct_site **v = malloc((r->nsites ? r->nsites : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < r->nsites; i++) {
		uint64_t k[2];
		keys(&r->sites[i], by, k);
		if (k[0])
			v[n++] = &r->sites[i];
	}
	qsort_r(v, n, sizeof(*v), cmp_sites, &by);
	*out = v;
	return (long)n;
}

int ct_report_frames(const struct ct_report *r, uint32_t stack, ct_frame_fn fn, void *ctx, int *truncated)
{
	unsigned index = 0;
	uint32_t node = stack;
	/* Parents are defined before their children, so the walk ends at a root. */
	for (; node >= CT_STACK_FIRST && node < r->m->nnodes; node = r->m->nodes[node].parent) {
		struct ct_frame frames[CT_SYMBOLIZE_MAX];
		int n = ct_symbolize(r->sym, ct_model_node_module(r->m, node), r->m->nodes[node].ip, frames,
		                     CT_SYMBOLIZE_MAX);
		if (n < 0)
			return n;
		for (int i = 0; i < n; i++) {
			int rc = fn(ctx, &frames[i], index++);
			if (rc)
				return rc;
		}
	}
	if (truncated)
		*truncated = node == CT_STACK_TRUNCATED;
	return 0;
}
