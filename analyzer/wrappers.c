/* SPDX-License-Identifier: MIT */
/* Allocator wrappers found from the trace (the rule and its limits: docs/fold.md). A function is
 * one when every allocation it takes part in it makes itself or through wrappers, from at most two
 * call points that each pass on more than one size, and when it is called from three functions or
 * more (or from one wrapper only: xmalloc -> xmalloc_impl). Its frames then fold like the fold
 * list's, so the site is its caller. Looks only at the innermost frames of each stack, as shown
 * after the fold list and with the stacks cut at main: memory grows with sites, not with depth. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "report.h"
#include "symbolize.h"

#define DEPTH 10  /* frames kept per site: a wrapper further out than this is not looked for */
#define POINTS 2  /* call points a wrapper may have */
#define CALLERS 3 /* calling functions that make a wrapper */
#define ROUNDS 8  /* wrapper levels found at most */
#define BODY 256  /* bytes of machine code a wrapper's symbol may have at most */
#define NO_FN UINT32_MAX

enum state { NONE, PASS, WRAPPER }; /* PASS: called by one function only, a wrapper if that one is */

struct point {
	uint64_t key; /* file and line, or the return address without a line */
	uint64_t size;
	int sizes; /* distinct sizes seen, counted up to 2 */
};

struct fn {
	const char *function, *module;
	int eligible; /* named, not in libc, not main */
	int blocked;  /* seen too deep, at the outer end of a stack, or with too many call points */
	enum state state;
	uint32_t caller; /* the first calling function seen */
	size_t callers;  /* distinct calling functions */
	struct point points[POINTS];
	int npoints;
	uint64_t address; /* a return address inside it, in a frame of its own (not inlined) */
	int sized; /* 0: not asked yet, 1: small enough (or only ever inlined), -1: too big or unknown */
	uint32_t first_occ; /* occurrences: a list through struct occ.next */
};

struct occ {
	uint32_t site, pos, next;
};

struct finder {
	const struct ct_report *r;
	struct fn *fns;
	size_t nfns, capfns;
	uint32_t *slots; /* open addressing over fns by (function, module) */
	size_t nslots;
	uint64_t *pairs; /* open addressing: (callee << 32 | caller) seen, UINT64_MAX empty */
	size_t npairs, npair_slots;
	struct occ *occs;
	size_t nocc, capocc;
	uint32_t *frames; /* DEPTH per site: function ids, NO_FN past the end */
	uint8_t *len;     /* frames kept per site */
	uint8_t *run;     /* per site: innermost frames that are wrappers or PASS */
	uint8_t *deep;    /* per stack node: a walk reached it DEPTH frames or more from its site */
	/* the site being collected */
	size_t site;
	uint64_t size;
	int sizes;
	uint32_t prev; /* the previous frame's function */
	int prev_pos;
	/* per frame (ct_frame.id): its function's id + 1 (0: not interned yet) and call point key */
	struct known *known;
	size_t nknown;
};

struct known {
	uint32_t fn; /* + 1 */
	uint64_t point;
};

/* Where a hash table of this file puts a key: only where, never in what order anything is found, so
 * quicker than ct_mix's byte-wise FNV (which made a tenth of a large program's wrapper search). */
static uint64_t slot_hash(uint64_t h)
{
	h *= 0x9e3779b97f4a7c15ull;
	return h ^ h >> 29;
}

/* A function's name, eight bytes at a time; not its module: the same name in two modules only shares
 * a probe sequence. */
static uint64_t fn_hash(const char *function)
{
	size_t n = strlen(function);
	uint64_t h = n, w;
	for (; n >= 8; n -= 8, function += 8) {
		memcpy(&w, function, 8);
		h = slot_hash(h ^ w);
	}
	w = 0;
	memcpy(&w, function, n);
	return slot_hash(h ^ w);
}

static int grow_slots(struct finder *x)
{
	size_t n = x->nslots ? 2 * x->nslots : 1024;
	uint32_t *slots = malloc(n * sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	memset(slots, 0xff, n * sizeof(*slots));
	for (size_t i = 0; i < x->nfns; i++) {
		size_t s = fn_hash(x->fns[i].function) & (n - 1);
		while (slots[s] != NO_FN)
			s = (s + 1) & (n - 1);
		slots[s] = (uint32_t)i;
	}
	free(x->slots);
	x->slots = slots, x->nslots = n;
	return 0;
}

/* "prog+0x1234" or "??": a frame without a symbol, whose function is not known. */
static int unnamed(const char *function)
{
	const char *plus = strstr(function, "+0x");
	return !strcmp(function, "??") ||
	       (plus && plus[3] && !plus[3 + strspn(plus + 3, "0123456789abcdef")]);
}

static int in_libc(const char *module)
{
	const char *base = module ? strrchr(module, '/') : NULL;
	base = base ? base + 1 : module;
	return base && !strncmp(base, "libc.so", 7);
}

/* The id of f's function, added when new; NO_FN when out of memory. */
static uint32_t intern(struct finder *x, const struct ct_frame *f)
{
	if ((x->nfns + 1) * 2 > x->nslots && grow_slots(x) < 0)
		return NO_FN;
	size_t s = fn_hash(f->function) & (x->nslots - 1);
	for (; x->slots[s] != NO_FN; s = (s + 1) & (x->nslots - 1)) {
		const struct fn *g = &x->fns[x->slots[s]];
		if (ct_same_str(g->function, f->function) && ct_same_str(g->module, f->module))
			return x->slots[s];
	}
	if (x->nfns == x->capfns) {
		size_t cap = x->capfns ? 2 * x->capfns : 256;
		struct fn *v = realloc(x->fns, cap * sizeof(*v));
		if (!v || cap >= NO_FN)
			return NO_FN;
		x->fns = v, x->capfns = cap;
	}
	x->fns[x->nfns] = (struct fn){
	    .function = f->function,
	    .module = f->module,
	    .eligible = !unnamed(f->function) && !in_libc(f->module) && strcmp(f->function, "main"),
	    .first_occ = NO_FN,
	};
	x->slots[s] = (uint32_t)x->nfns;
	return (uint32_t)x->nfns++;
}

static uint64_t point_key(const struct ct_frame *f)
{
	if (!f->file)
		return ct_mix(CT_MIX_SEED, &f->address, sizeof(f->address));
	return ct_mix(ct_mix_str(CT_MIX_SEED, f->file), &f->line, sizeof(f->line));
}

/* Where fn is called inward from in this site: its call points, with the sizes passed. */
static void add_point(struct fn *g, uint64_t key, uint64_t size, int sizes)
{
	for (int i = 0; i < g->npoints; i++)
		if (g->points[i].key == key) {
			struct point *p = &g->points[i];
			if (p->sizes < 2 && (sizes > 1 || p->size != size))
				p->sizes = 2;
			return;
		}
	if (g->npoints == POINTS) {
		g->blocked = 1;
		return;
	}
	g->points[g->npoints++] = (struct point){key, size, sizes};
}

/* Counts caller among the distinct calling functions of callee (a set of pairs). */
static int add_caller(struct finder *x, uint32_t callee, uint32_t caller)
{
	uint64_t pair = (uint64_t)callee << 32 | caller;
	if ((x->npairs + 1) * 2 > x->npair_slots) {
		size_t n = x->npair_slots ? 2 * x->npair_slots : 4096;
		uint64_t *v = malloc(n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memset(v, 0xff, n * sizeof(*v));
		for (size_t i = 0; i < x->npair_slots; i++)
			if (x->pairs[i] != UINT64_MAX) {
				size_t s = slot_hash(x->pairs[i]) & (n - 1);
				while (v[s] != UINT64_MAX)
					s = (s + 1) & (n - 1);
				v[s] = x->pairs[i];
			}
		free(x->pairs);
		x->pairs = v, x->npair_slots = n;
	}
	size_t s = slot_hash(pair) & (x->npair_slots - 1);
	for (; x->pairs[s] != UINT64_MAX; s = (s + 1) & (x->npair_slots - 1))
		if (x->pairs[s] == pair)
			return 0;
	x->pairs[s] = pair;
	x->npairs++;
	struct fn *g = &x->fns[callee];
	if (!g->callers++)
		g->caller = caller;
	return 0;
}

/* What a frame the symbolizer made stands for, kept by its id (NULL: a frame made elsewhere, or no
 * memory: worked out every time). */
static struct known *known(struct finder *x, const struct ct_frame *f)
{
	if (!f->id || ct_grow_zeroed((void **)&x->known, &x->nknown, f->id, sizeof(*x->known), 1024) < 0)
		return NULL;
	return &x->known[f->id];
}

/* intern and point_key, once per frame. */
static uint32_t frame_fn(struct finder *x, const struct ct_frame *f, uint64_t *point)
{
	struct known *k = known(x, f);
	if (k && k->fn) {
		*point = k->point;
		return k->fn - 1;
	}
	uint32_t id = intern(x, f);
	*point = point_key(f);
	if (k && id != NO_FN)
		k->fn = id + 1, k->point = *point;
	return id;
}

static int collect(void *ctx, const struct ct_frame *f, unsigned index)
{
	struct finder *x = ctx;
	uint64_t point;
	uint32_t id = frame_fn(x, f, &point);
	if (id == NO_FN)
		return -ENOMEM;
	if (x->prev != NO_FN && add_caller(x, x->prev, id) < 0)
		return -ENOMEM;
	x->prev = id;
	struct fn *g = &x->fns[id];
	if (!f->inlined)
		g->address = f->address;
	if (index >= DEPTH) {
		g->blocked = 1;
		return 0;
	}
	if (x->capocc == x->nocc) {
		size_t cap = x->capocc ? 2 * x->capocc : 1024;
		struct occ *v = realloc(x->occs, cap * sizeof(*v));
		if (!v || cap >= NO_FN)
			return -ENOMEM;
		x->occs = v, x->capocc = cap;
	}
	x->occs[x->nocc] = (struct occ){(uint32_t)x->site, index, g->first_occ};
	g->first_occ = (uint32_t)x->nocc++;
	x->frames[x->site * DEPTH + index] = id;
	x->len[x->site] = (uint8_t)(index + 1);
	add_point(g, point, x->size, x->sizes);
	return 0;
}

#define STOPPED 1 /* at_node ended the walk: the rest of it is an earlier site's */

/* A walk that comes DEPTH frames or more from its site to a node an earlier walk came to as deep has
 * nothing left to learn but the call from its last frame into the node: every frame from there on
 * only blocks its function (seen too deep) and adds the callers it added then, and the outermost
 * was blocked then (the frames shown from a node on depend on the node alone: ct_report_frames_nodes).
 * Deep stacks share their outer frames, so this walks each of those once, not once per site. */
static int at_node(void *ctx, uint32_t node, unsigned index)
{
	struct finder *x = ctx;
	if (index < DEPTH || node >= x->r->m->nnodes)
		return 0;
	if (!x->deep[node]) {
		x->deep[node] = 1;
		return 0;
	}
	const struct ct_frame *frames;
	int n = ct_symbolize_node_frames(x->r->sym, x->r->m, node, &frames);
	if (n <= 0 || ct_report_is_runtime(x->r, &frames[0])) /* a frame the walk might hold back */
		return n < 0 ? n : 0;
	int rc = collect(x, &frames[0], index);
	return rc ? rc : STOPPED;
}

/* Sizes per site: its first size, and whether it has more than one. */
static int site_sizes(const struct ct_report *r, uint64_t *size, uint8_t *multi)
{
	const struct ct_model *m = r->m;
	uint32_t *at = malloc((m->nnodes ? m->nnodes : 1) * sizeof(*at)); /* stack node -> site */
	if (!at)
		return -ENOMEM;
	for (size_t i = 0; i < r->nsites; i++)
		if (r->sites[i].stack < m->nnodes)
			at[r->sites[i].stack] = (uint32_t)i, size[i] = UINT64_MAX;
	for (size_t i = 0; i < m->ninfos; i++) {
		const struct ct_info *in = &m->infos[i];
		if (in->stack >= m->nnodes || !in->allocations)
			continue;
		uint32_t s = at[in->stack];
		if (s >= r->nsites || r->sites[s].stack != in->stack)
			continue;
		if (size[s] == UINT64_MAX)
			size[s] = in->size;
		else if (size[s] != in->size)
			multi[s] = 1;
	}
	free(at);
	return 0;
}

/* Is g's body small, by its symbol's size? The one question asked of libdwfl here: the trace does not
 * tell how much work a function does, its size bounds it. A function seen only inlined has no
 * symbol of its own and passes. */
static int small_body(const struct finder *x, struct fn *g)
{
	if (g->sized)
		return g->sized > 0;
	g->sized = -1;
	if (!g->address) {
		g->sized = 1;
		return 1;
	}
	const struct ct_model *m = x->r->m;
	const struct ct_module *mod = NULL;
	for (size_t i = 0; i < m->nmodules && !mod; i++)
		if (m->modules[i].path == g->module)
			mod = &m->modules[i];
	uint64_t size = ct_symbolize_symbol_size(x->r->sym, mod, g->address);
	if (size && size <= BODY)
		g->sized = 1;
	return g->sized > 0;
}

/* Is every occurrence of g just outside its site's run of wrappers? */
static int on_run(const struct finder *x, const struct fn *g)
{
	for (uint32_t o = g->first_occ; o != NO_FN; o = x->occs[o].next)
		if (x->occs[o].pos != x->run[x->occs[o].site])
			return 0;
	return 1;
}

/* g became a wrapper: so did every PASS function inside it, its only caller being in the chain. */
static void promote(struct finder *x, const struct fn *g)
{
	for (uint32_t o = g->first_occ; o != NO_FN; o = x->occs[o].next)
		for (uint32_t p = 0; p < x->occs[o].pos; p++)
			x->fns[x->frames[x->occs[o].site * DEPTH + p]].state = WRAPPER;
}

static int round_once(struct finder *x)
{
	int changed = 0;
	for (size_t i = 0; i < x->nfns; i++) {
		struct fn *g = &x->fns[i];
		if (g->state != NONE || !g->eligible || g->blocked || !on_run(x, g))
			continue;
		int each_varies = g->npoints > 0;
		for (int k = 0; k < g->npoints; k++)
			each_varies &= g->points[k].sizes > 1;
		if (!each_varies || (g->callers != 1 && g->callers < CALLERS) || !small_body(x, g))
			continue;
		if (g->callers >= CALLERS) {
			g->state = WRAPPER;
			promote(x, g);
			changed = 1;
		} else if (g->callers == 1 && g->caller != i) {
			g->state = PASS;
			changed = 1;
		}
	}
	for (size_t s = 0; s < x->r->nsites; s++)
		while (x->run[s] < x->len[s] && x->fns[x->frames[s * DEPTH + x->run[s]]].state != NONE)
			x->run[s]++;
	return changed;
}

static int by_function(const void *a, const void *b)
{
	const struct ct_wrapper *x = a, *y = b;
	int c = strcmp(x->function, y->function);
	return c ? c : strcmp(x->module ? x->module : "", y->module ? y->module : "");
}

static int find(struct finder *x, struct ct_report *r)
{
	size_t n = r->nsites ? r->nsites : 1;
	uint64_t *size = malloc(n * sizeof(*size));
	uint8_t *multi = calloc(n, 1);
	x->frames = malloc(n * DEPTH * sizeof(*x->frames));
	x->len = calloc(n, 1);
	x->run = calloc(n, 1);
	x->deep = calloc(r->m->nnodes ? r->m->nnodes : 1, 1);
	int rc =
	    size && multi && x->frames && x->len && x->run && x->deep ? site_sizes(r, size, multi) : -ENOMEM;
	/* the stacks as shown with the fold list alone, cut at main */
	struct ct_report plain = *r;
	plain.nwrappers = 0, plain.full_stacks = 0, plain.all_frames = 0;
	for (size_t s = 0; !rc && s < r->nsites; s++) {
		x->site = s, x->size = size[s], x->sizes = multi[s] ? 2 : 1, x->prev = NO_FN;
		int truncated = 0;
		rc = ct_report_frames_nodes(&plain, r->sites[s].stack, collect, at_node, x, &truncated);
		/* the outermost frame shown has no caller: a root (main, a thread's routine) or a cut stack
		 */
		if (rc == STOPPED)
			rc = 0;
		else if (!rc && x->prev != NO_FN)
			x->fns[x->prev].blocked = 1;
	}
	free(size);
	free(multi);
	for (int i = 0; !rc && i < ROUNDS && round_once(x); i++)
		;
	size_t count = 0;
	for (size_t i = 0; !rc && i < x->nfns; i++)
		count += x->fns[i].state == WRAPPER;
	if (!rc && count && !(r->wrappers = malloc(count * sizeof(*r->wrappers))))
		rc = -ENOMEM;
	for (size_t i = 0; !rc && i < x->nfns; i++)
		if (x->fns[i].state == WRAPPER)
			r->wrappers[r->nwrappers++] =
			    (struct ct_wrapper){x->fns[i].function, x->fns[i].module, x->fns[i].callers};
	if (r->nwrappers)
		qsort(r->wrappers, r->nwrappers, sizeof(*r->wrappers), by_function);
	return rc;
}

int ct_report_find_wrappers(struct ct_report *r)
{
	struct finder x = {.r = r};
	r->wrappers = NULL, r->nwrappers = 0;
	int rc = find(&x, r);
	free(x.fns);
	free(x.slots);
	free(x.pairs);
	free(x.occs);
	free(x.frames);
	free(x.len);
	free(x.run);
	free(x.deep);
	free(x.known);
	return rc;
}

int ct_report_is_wrapper(const struct ct_report *r, const struct ct_frame *f)
{
	if (!r->nwrappers)
		return 0;
	struct ct_wrapper key = {f->function, f->module, 0};
	return bsearch(&key, r->wrappers, r->nwrappers, sizeof(key), by_function) != NULL;
}
