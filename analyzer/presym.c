/* SPDX-License-Identifier: MIT */
/* Symbolization while the trace is read (presym.h). The reader's thread copies each new node's module
 * and address into a batch and hands full batches over under a lock, with a copy of every module read
 * so far: the model's arrays move as they grow, so the thread never reads the model itself. Each node
 * is resolved as ct_symbolize_node resolves a node that is not exact (an exact node, marked after it
 * was read, is resolved again when asked): the cache then answers the reports' walks. A node whose
 * module's debug file is still being decompressed is put off until it is ready, so that the other
 * modules' nodes are resolved meanwhile. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "debuginfo.h"
#include "presym.h"

#define BATCH 1024 /* nodes handed over at once */

struct item {
	uint32_t module; /* in the model, or CT_NO_MODULE */
	uint64_t ip;
	const struct ct_module *mod; /* the thread's copy, set when handed over */
};

struct ct_presym {
	struct ct_symbolizer *s;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t more;
	/* the reader's thread only */
	struct item batch[BATCH];
	size_t nbatch;
	int failed; /* out of memory: nodes are no longer handed over */
	/* under lock */
	struct item *queue;
	size_t nqueue, capqueue;
	struct ct_module **mods; /* copies of the model's modules (their strings are the model's) */
	size_t nmods, capmods;
	int done;
};

/* Copies m's modules not copied yet. Under p->lock. Returns 0 or -ENOMEM. */
static int copy_modules(struct ct_presym *p, const struct ct_model *m)
{
	if (m->nmodules > p->capmods) {
		size_t cap = p->capmods ? 2 * p->capmods : 16;
		while (cap < m->nmodules)
			cap *= 2;
		struct ct_module **v = realloc(p->mods, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		p->mods = v, p->capmods = cap;
	}
	for (; p->nmods < m->nmodules; p->nmods++) {
		if (!(p->mods[p->nmods] = malloc(sizeof(**p->mods))))
			return -ENOMEM;
		*p->mods[p->nmods] = m->modules[p->nmods];
	}
	return 0;
}

/* Hands the batch over to the thread. */
static void hand_over(struct ct_presym *p, const struct ct_model *m)
{
	pthread_mutex_lock(&p->lock);
	int rc = copy_modules(p, m);
	if (!rc && p->nqueue + p->nbatch > p->capqueue) {
		size_t cap = p->capqueue ? 2 * p->capqueue : 4 * BATCH;
		while (cap < p->nqueue + p->nbatch)
			cap *= 2;
		struct item *v = realloc(p->queue, cap * sizeof(*v));
		rc = v ? 0 : -ENOMEM;
		if (v)
			p->queue = v, p->capqueue = cap;
	}
	for (size_t i = 0; !rc && i < p->nbatch; i++) {
		struct item *it = &p->queue[p->nqueue++];
		*it = p->batch[i];
		it->mod = it->module < p->nmods ? p->mods[it->module] : NULL;
	}
	p->failed |= rc < 0;
	p->nbatch = 0;
	pthread_cond_signal(&p->more);
	pthread_mutex_unlock(&p->lock);
}

static void frame_added(struct ct_model *m, uint32_t node, void *arg)
{
	struct ct_presym *p = arg;
	if (p->failed)
		return;
	p->batch[p->nbatch++] = (struct item){m->nodes[node].module, m->nodes[node].ip, NULL};
	if (p->nbatch == BATCH)
		hand_over(p, m);
}

/* Nodes put off: their module's debug file is still being copied (debuginfo.h). */
struct later {
	struct item *v;
	size_t n, cap;
};

/* Whether resolving a node of mod now would wait for its debug file, asked once per module in a row
 * (*last: the module asked last and its answer, for one pass over the nodes; an answer can only turn
 * from waiting to not). */
struct asked {
	const struct ct_module *mod;
	int wait;
};

static int would_wait(const struct ct_module *mod, struct asked *last)
{
	if (!mod)
		return 0;
	if (mod != last->mod)
		*last = (struct asked){mod, ct_debuginfo_pending(mod->build_id, mod->build_id_len)};
	return last->wait;
}

/* Resolves work[0..n), putting off into l the nodes that would wait (resolved now when l cannot
 * grow). A node that cannot be resolved (-ENOMEM) is resolved again when asked. */
static void resolve(struct ct_presym *p, const struct item *work, size_t n, struct later *l)
{
	struct asked last = {0};
	for (size_t i = 0; i < n; i++) {
		if (would_wait(work[i].mod, &last)) {
			if (l->n == l->cap) {
				size_t cap = l->cap ? 2 * l->cap : BATCH;
				struct item *v = realloc(l->v, cap * sizeof(*v));
				if (v)
					l->v = v, l->cap = cap;
			}
			if (l->n < l->cap) {
				l->v[l->n++] = work[i];
				continue;
			}
		}
		ct_symbolize_prepare(p->s, work[i].mod, work[i].ip);
	}
}

/* Resolves the nodes put off whose debug file is ready now, or all of them when all is set. */
static void resolve_later(struct ct_presym *p, struct later *l, int all)
{
	size_t kept = 0;
	struct asked last = {0};
	for (size_t i = 0; i < l->n; i++) {
		if (!all && would_wait(l->v[i].mod, &last))
			l->v[kept++] = l->v[i];
		else
			ct_symbolize_prepare(p->s, l->v[i].mod, l->v[i].ip);
	}
	l->n = kept;
}

static void *presym_main(void *arg)
{
	struct ct_presym *p = arg;
	struct item *work = NULL;
	size_t cap = 0;
	struct later l = {0};
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->nqueue && !p->done)
			pthread_cond_wait(&p->more, &p->lock);
		if (!p->nqueue)
			break;
		/* take the whole queue, leaving the emptied buffer for the reader to refill meanwhile */
		struct item *v = p->queue;
		size_t n = p->nqueue, vcap = p->capqueue;
		p->queue = work, p->capqueue = cap, p->nqueue = 0;
		work = v, cap = vcap;
		pthread_mutex_unlock(&p->lock);
		resolve(p, work, n, &l);
		resolve_later(p, &l, 0);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	resolve_later(p, &l, 1); /* the trace is read: now wait for the debug files */
	free(l.v);
	free(work);
	return NULL;
}

struct ct_presym *ct_presym_start(struct ct_model *m)
{
	struct ct_presym *p = calloc(1, sizeof(*p));
	if (!p || !(p->s = ct_symbolizer_new())) {
		free(p);
		return NULL;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->more, NULL);
	if (pthread_create(&p->thread, NULL, presym_main, p) != 0) {
		pthread_mutex_destroy(&p->lock);
		pthread_cond_destroy(&p->more);
		ct_symbolizer_free(p->s);
		free(p);
		return NULL;
	}
	m->frame_added = frame_added;
	m->frame_arg = p;
	return p;
}

struct ct_symbolizer *ct_presym_finish(struct ct_presym *p, struct ct_model *m)
{
	if (!p)
		return NULL;
	if (p->nbatch && !p->failed)
		hand_over(p, m);
	m->frame_added = NULL;
	m->frame_arg = NULL;
	pthread_mutex_lock(&p->lock);
	p->done = 1;
	pthread_cond_signal(&p->more);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	struct ct_symbolizer *s = p->s;
	for (size_t i = 0; i < p->nmods; i++)
		free(p->mods[i]);
	free(p->mods);
	free(p->queue);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->more);
	free(p);
	return s;
}
