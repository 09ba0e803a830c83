/* SPDX-License-Identifier: MIT */
/* Rankings of allocation sites and the walk of a stack's frames (inline chains expanded, allocator
 * plumbing folded), for both reporters. Sites are grouped by their first shown frame or by their
 * folded backtrace. Ties break on the next key, then on the stack id: the order never depends on qsort. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/format.h"
#include "report.h"
#include "shortname.h"

#define NRANKS 4

/* Sites with one key summed; best[by] is the member whose backtrace stands for the group in the
 * ranking `by` (the most of that ranking's figures, then the lowest stack id). */
struct ct_group {
	struct ct_site sum;
	const struct ct_site *best[NRANKS];
	/* the key: the first shown frame (--group site), or all the shown frames (--group backtrace):
	 * their hash, and the stack of the first member, whose frames they are */
	const char *function, *file, *module;
	unsigned line;
	uint64_t offset;
	uint64_t frames_hash;
	uint32_t stack;
	uint32_t members; /* the first member site (its index); the rest through next_member() */
};

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

/* <0 when x ranks before y for `by`. A classified trace's leaks come in memcheck's order, the
 * most severe kind first (definitely, indirectly, possibly lost, still reachable, unscanned: the
 * kinds' numbers), each kind's by bytes: a real leak is never listed after the runtime's buffers. */
static int cmp_by(const struct ct_site *x, const struct ct_site *y, enum ct_rank by)
{
	if (by == CT_BY_LEAKED && x->kind != y->kind && x->kind && y->kind)
		return x->kind < y->kind ? -1 : 1;
	uint64_t kx[2], ky[2];
	keys(x, by, kx);
	keys(y, by, ky);
	for (int i = 0; i < 2; i++)
		if (kx[i] != ky[i])
			return kx[i] > ky[i] ? -1 : 1;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return x->kind < y->kind ? -1 : x->kind > y->kind;
}

static int cmp_sites(const void *a, const void *b, void *by)
{
	return cmp_by(*(const struct ct_site *const *)a, *(const struct ct_site *const *)b,
	              *(enum ct_rank *)by);
}

_Static_assert(CT_KIND_UNSCANNED == CT_CLASSES, "the kinds are the CLASSES record's, then unscanned");

const char *ct_kind_name(int kind)
{
	static const char *const names[CT_KINDS] = {"definite", "indirect", "possible", "reachable",
	                                            "unscanned"};
	return kind >= 1 && kind <= CT_KINDS ? names[kind - 1] : NULL;
}

const char *ct_kind_label(int kind)
{
	static const char *const labels[CT_KINDS] = {"definitely lost", "indirectly lost", "possibly lost",
	                                             "still reachable", "live, never scanned"};
	return kind >= 1 && kind <= CT_KINDS ? labels[kind - 1] : "leaked";
}

const char *ct_invalid_name(unsigned kind)
{
	static const char *const names[CT_INVALID_KINDS] = {"double_free", "static", "stack",
	                                                    "not_allocated"};
	return kind < CT_INVALID_KINDS ? names[kind] : "invalid";
}

const char *ct_invalid_label(unsigned kind)
{
	static const char *const labels[CT_INVALID_KINDS] = {
	    "of a block already freed (a double free)",
	    "of an address in a loaded object (a global or a constant), no heap block",
	    "of an address on the stack, no heap block",
	    "of an address never allocated, which the allocator refused (the program died in the call)",
	};
	return kind < CT_INVALID_KINDS ? labels[kind] : "of an address that was no live block";
}

const char *ct_invalid_call(unsigned call)
{
	return call == CT_INVALID_REALLOC ? "realloc" : "free";
}

static int cmp_invalid(const void *a, const void *b)
{
	const struct ct_invalid *x = *(const struct ct_invalid *const *)a,
	                        *y = *(const struct ct_invalid *const *)b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x < y ? -1 : x > y; /* in the order they came */
}

long ct_report_invalid(const struct ct_report *r, const struct ct_invalid ***out)
{
	size_t n = r->m->ninvalid;
	*out = NULL;
	if (!n)
		return 0;
	const struct ct_invalid **v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		v[i] = &r->m->invalid[i];
	qsort(v, n, sizeof(*v), cmp_invalid);
	*out = v;
	return (long)n;
}

/* s with its leaked figures those of one leak kind (CT_CLASS_* + 1); kind 0 leaves them. */
static struct ct_site of_kind(const struct ct_site *s, int kind)
{
	struct ct_site k = *s;
	if (kind) {
		k.leaked_allocations = s->class_allocations[kind - 1];
		k.leaked_bytes = s->class_bytes[kind - 1];
		k.kind = kind;
	}
	return k;
}

/* One malloc'd block: n pointers, then n sites they point to (free(block) frees both). */
static const struct ct_site **alloc_ranking(size_t n, struct ct_site **copies)
{
	size_t head = (n * sizeof(void *) + _Alignof(struct ct_site) - 1) & ~(_Alignof(struct ct_site) - 1);
	char *block = malloc(head + (n ? n : 1) * sizeof(struct ct_site));
	*copies = block ? (struct ct_site *)(block + head) : NULL;
	return (const struct ct_site **)block;
}

long ct_report_rank(const struct ct_report *r, enum ct_rank by, const struct ct_site ***out)
{
	size_t total = r->groups ? r->ngroups : r->nsites, n = 0;
	/* A classified trace's leaks: one entry per site and leak kind it has blocks of. */
	int kinds = by == CT_BY_LEAKED && r->m->classified ? CT_KINDS : 0;
	struct ct_site *copies;
	const struct ct_site **v = alloc_ranking(total * (kinds ? (size_t)kinds : 1), &copies);
	*out = NULL;
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < total; i++) {
		const struct ct_site *site = r->groups ? &r->groups[i].sum : &r->sites[i];
		for (int kind = kinds ? 1 : 0; kind <= kinds; kind++) {
			const struct ct_site s = of_kind(site, kind);
			uint64_t k[2];
			keys(&s, by, k);
			if (!k[0] && !(kind && s.leaked_allocations)) /* a kind's blocks of size 0 count */
				continue;
			copies[n] = s;
			copies[n].group = r->groups ? (uint32_t)i + 1 : 0;
			if (r->groups)
				copies[n].stack = r->groups[i].best[by]->stack;
			v[n] = &copies[n];
			n++;
		}
	}
	qsort_r(v, n, sizeof(*v), cmp_sites, &by);
	*out = v;
	return (long)n;
}

/* ---- what follows from a frame, kept by its id ---- */

/* A frame's hash as the shown frames' keys take it, whether it is a runtime start frame, main itself,
 * a wrapper found, and whether the fold list folds it: the same for every walk through it, worked out
 * once. */
struct ct_frame_memo {
	uint16_t *flags; /* MEMO_* */
	uint64_t *hash;
	size_t cap;
	int fold_set;
	const struct ct_fold *fold; /* the list MEMO_FOLDED answers for */
	int wrappers_set;
	const struct ct_wrapper *wrappers; /* the wrappers MEMO_WRAPPER answers for */
	/* per stack node: the hash of its shown frames (for_key 0), under the settings in `walk` */
	uint64_t *stack_hash;
	uint8_t *stack_known;
	int walk_set;
	struct walk_settings {
		const struct ct_fold *fold;
		const struct ct_wrapper *wrappers;
		size_t nwrappers;
		int all_frames, full_stacks;
	} walk;
};

enum {
	MEMO_RUNTIME_KNOWN = 1,
	MEMO_RUNTIME = 2,
	MEMO_FOLD_KNOWN = 4,
	MEMO_FOLDED = 8,
	MEMO_HASH_KNOWN = 16,
	MEMO_MAIN_KNOWN = 32,
	MEMO_MAIN = 64,
	MEMO_WRAPPER_KNOWN = 128,
	MEMO_WRAPPER = 256,
};

static struct ct_frame_memo *memo_grow(struct ct_frame_memo *m, uint32_t id);

/* r's memo with room for id, or NULL: no memo, a frame the symbolizer did not make, no memory. */
static inline struct ct_frame_memo *memo_for(const struct ct_report *r, uint32_t id)
{
	struct ct_frame_memo *m = r->memo;
	if (!m || !id)
		return NULL;
	return id < m->cap ? m : memo_grow(m, id);
}

static struct ct_frame_memo *memo_grow(struct ct_frame_memo *m, uint32_t id)
{
	size_t cap = m->cap ? m->cap : 1024;
	while (cap <= id)
		cap *= 2;
	uint16_t *flags = realloc(m->flags, cap * sizeof(*flags));
	if (!flags)
		return NULL;
	memset(flags + m->cap, 0, (cap - m->cap) * sizeof(*flags));
	m->flags = flags;
	uint64_t *hash = realloc(m->hash, cap * sizeof(*hash));
	if (!hash)
		return NULL; /* m->cap stays: the flags past it are zeroed again next time */
	m->hash = hash, m->cap = cap;
	return m;
}

int ct_report_is_runtime(const struct ct_report *r, const struct ct_frame *f)
{
	struct ct_frame_memo *m = memo_for(r, f->id);
	if (!m)
		return ct_report_is_runtime_frame(f);
	if (!(m->flags[f->id] & MEMO_RUNTIME_KNOWN))
		m->flags[f->id] |= MEMO_RUNTIME_KNOWN | (ct_report_is_runtime_frame(f) ? MEMO_RUNTIME : 0);
	return (m->flags[f->id] & MEMO_RUNTIME) != 0;
}

static int is_folded(const struct ct_report *r, const struct ct_frame *f)
{
	struct ct_frame_memo *m = memo_for(r, f->id);
	if (m && !m->fold_set)
		m->fold = r->fold, m->fold_set = 1;
	if (!m || m->fold != r->fold) /* a copy of the report with another list */
		return ct_fold_match(r->fold, f);
	if (!(m->flags[f->id] & MEMO_FOLD_KNOWN))
		m->flags[f->id] |= MEMO_FOLD_KNOWN | (ct_fold_match(r->fold, f) ? MEMO_FOLDED : 0);
	return (m->flags[f->id] & MEMO_FOLDED) != 0;
}

/* ct_report_is_wrapper, kept by frame id for the wrappers r has. */
static int is_wrapper(const struct ct_report *r, const struct ct_frame *f)
{
	if (!r->nwrappers)
		return 0;
	struct ct_frame_memo *m = memo_for(r, f->id);
	if (m && !m->wrappers_set)
		m->wrappers = r->wrappers, m->wrappers_set = 1;
	if (!m || m->wrappers != r->wrappers)
		return ct_report_is_wrapper(r, f);
	if (!(m->flags[f->id] & MEMO_WRAPPER_KNOWN))
		m->flags[f->id] |= MEMO_WRAPPER_KNOWN | (ct_report_is_wrapper(r, f) ? MEMO_WRAPPER : 0);
	return (m->flags[f->id] & MEMO_WRAPPER) != 0;
}

/* A frame of main itself (not inlined into another), which ends a cut stack. */
static int is_main(const struct ct_report *r, const struct ct_frame *f)
{
	struct ct_frame_memo *m = memo_for(r, f->id);
	if (!m)
		return !f->inlined && !strcmp(f->function, "main");
	if (!(m->flags[f->id] & MEMO_MAIN_KNOWN))
		m->flags[f->id] |=
		    MEMO_MAIN_KNOWN | (!f->inlined && !strcmp(f->function, "main") ? MEMO_MAIN : 0);
	return (m->flags[f->id] & MEMO_MAIN) != 0;
}

/* ---- the frame walk ---- */

/* A walk over a stack's frames: the innermost ones matching the fold list are hidden, but the last
 * of them is shown when nothing else would be. */
struct walk {
	const struct ct_report *r;
	ct_frame_fn fn;     /* NULL: count only */
	ct_node_fn at_node; /* or NULL */
	void *ctx;
	int folding;
	unsigned index, hidden;
	struct ct_frame held;  /* the last hidden frame */
	struct ct_frame first; /* the first shown frame */
	int cutting;           /* stacks end at main or at the thread's start routine (not --full-stacks) */
	int ended;             /* main was shown: the frames outside it are not */
	unsigned npending;     /* runtime start frames seen last, shown only if a frame follows them */
	struct ct_frame pending[8];
};

static int show(struct walk *w, const struct ct_frame *f)
{
	if (!w->index)
		w->first = *f;
	unsigned index = w->index++;
	return w->fn ? w->fn(w->ctx, f, index) : 0;
}

/* Is name `want`, or `want` with a compiler suffix (".isra.0", ".cold")? */
static int named(const char *name, const char *want)
{
	size_t n = strlen(want);
	return !strncmp(name, want, n) && (!name[n] || name[n] == '.');
}

static int in_runtime_library(const char *module)
{
	static const char *const libs[] = {"libc.so", "libpthread.so", "ld-linux", "ld64.so", "ld-musl"};
	const char *base = module ? strrchr(module, '/') : NULL;
	base = base ? base + 1 : module;
	for (size_t i = 0; base && i < sizeof(libs) / sizeof(libs[0]); i++)
		if (!strncmp(base, libs[i], strlen(libs[i])))
			return 1;
	return 0;
}

int ct_report_is_runtime_frame(const struct ct_frame *f)
{
	static const char *const names[] = {
	    "__libc_start_call_main",
	    "__libc_start_main",
	    "__libc_start_main_impl",
	    "start_thread",
	    "__clone3",
	    "__clone",
	    "clone",
	    "clone3",
	    "__clone_internal",
	    "libc_start_main_stage2",
	};
	if (f->inlined)
		return 0;
	if (named(f->function, "_start"))
		return 1;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (named(f->function, names[i]))
			return in_runtime_library(f->module);
	return 0;
}

/* The outer end of a stack: main ends it; the C runtime's start frames (below main, or below a
 * thread's start routine) are held back and dropped when nothing but such frames follows. */
static int cut(struct walk *w, const struct ct_frame *f)
{
	if (!w->cutting)
		return show(w, f);
	if (w->ended)
		return 0;
	if (ct_report_is_runtime(w->r, f)) {
		if (w->npending == sizeof(w->pending) / sizeof(w->pending[0]))
			w->npending = 0; /* more than libc's few: none of them is shown */
		w->pending[w->npending++] = *f;
		/* libc's frames that call main or a thread's routine: what lies outside them is the
		 * runtime too, named or not (a stripped program's _start is "prog+0x..."). */
		w->ended = !named(f->function, "_start") && strncmp(f->function, "__clone", 7) &&
		           strncmp(f->function, "clone", 5);
		return 0;
	}
	int rc = 0;
	for (unsigned i = 0; i < w->npending && !rc; i++)
		rc = show(w, &w->pending[i]);
	w->npending = 0;
	w->ended = is_main(w->r, f);
	return rc ? rc : show(w, f);
}

static int step(struct walk *w, const struct ct_frame *f)
{
	if (w->folding && (is_folded(w->r, f) || is_wrapper(w->r, f))) {
		w->held = *f;
		w->hidden++;
		return 0;
	}
	w->folding = 0;
	return cut(w, f);
}

/* Returns 0, the callback's first non-zero result, or -ENOMEM. Groups always fold (their key is the
 * first user frame); the frames shown fold unless --all-frames. */
static int walk(struct walk *w, uint32_t stack, int *truncated, int for_key)
{
	const struct ct_report *r = w->r;
	uint32_t node = stack;
	int rc = 0;
	w->folding = (r->fold || r->nwrappers) && (for_key || !r->all_frames);
	w->cutting = !r->full_stacks;
	/* Parents are defined before their children, so the walk ends at a root. */
	for (; !rc && !w->ended && node >= CT_STACK_FIRST && node < r->m->nnodes;
	     node = r->m->nodes[node].parent) {
		if (w->at_node && !w->folding && !w->npending && (rc = w->at_node(w->ctx, node, w->index)))
			return rc;
		const struct ct_frame *frames;
		int n = ct_symbolize_node_frames(r->sym, r->m, node, &frames);
		if (n < 0)
			return n;
		for (int i = 0; i < n && !rc; i++)
			rc = step(w, &frames[i]);
	}
	if (rc)
		return rc;
	if (!w->index && w->hidden) {
		w->hidden--;
		rc = show(w, &w->held);
	}
	/* A stack of nothing but runtime frames (an allocation of libc's start) keeps them. */
	for (unsigned i = 0, none = !w->index; none && i < w->npending && !rc; i++)
		rc = show(w, &w->pending[i]);
	if (truncated)
		*truncated = !w->ended && node == CT_STACK_TRUNCATED;
	return rc;
}

int ct_report_frames(const struct ct_report *r, uint32_t stack, ct_frame_fn fn, void *ctx, int *truncated)
{
	return ct_report_frames_nodes(r, stack, fn, NULL, ctx, truncated);
}

int ct_report_frames_nodes(const struct ct_report *r, uint32_t stack, ct_frame_fn fn, ct_node_fn at_node,
                           void *ctx, int *truncated)
{
	struct walk w = {.r = r, .fn = fn, .at_node = at_node, .ctx = ctx};
	return walk(&w, stack, truncated, 0);
}

long ct_report_folded(const struct ct_report *r, uint32_t stack)
{
	struct walk w = {.r = r};
	int rc = walk(&w, stack, NULL, 0);
	return rc < 0 ? rc : (long)w.hidden;
}

const char *ct_frame_short_name(const struct ct_frame *f, char *buf, size_t len)
{
	/* C names have neither template arguments nor parameter lists: as they are, uncut */
	return strpbrk(f->function, "<(") ? ct_short_name(f->function, buf, len) : f->function;
}

const char *ct_frame_display_name(const struct ct_report *r, const struct ct_frame *f, char *buf, size_t len)
{
	return r->full_names ? f->function : ct_frame_short_name(f, buf, len);
}

/* ---- hashes ---- */

static int stop(void *ctx, const struct ct_frame *f, unsigned index)
{
	(void)ctx, (void)f, (void)index;
	return 1;
}

uint64_t ct_mix(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

uint64_t ct_mix_str(uint64_t h, const char *s)
{
	return s ? ct_mix(h, s, strlen(s) + 1) : ct_mix(h, "", 1);
}

int ct_same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Where a frame without a source line is: its module and the offset in it, the same however often
 * and wherever the module was loaded (a library opened and closed in a loop comes back elsewhere). */
static uint64_t frame_place(uint64_t h, const struct ct_frame *f)
{
	h = ct_mix_str(h, f->module);
	return ct_mix(h, &f->offset, sizeof(f->offset));
}

static int same_place(const struct ct_frame *a, const struct ct_frame *b)
{
	return a->offset == b->offset && ct_same_str(a->module, b->module);
}

/* The frames of a stack as shown, hashed (the place only for frames without a line, as the site key). */
struct shown {
	const struct ct_report *r;
	struct ct_frame *v;
	size_t n, cap;
	size_t limit; /* frames wanted, the first ones (0: all) */
	uint64_t hash;
};

static uint64_t frame_hash(const struct ct_frame *f)
{
	uint64_t h = ct_mix_str(ct_mix_str(CT_MIX_SEED, f->function), f->file);
	h = ct_mix(h, &f->line, sizeof(f->line));
	h = ct_mix(h, &f->inlined, sizeof(f->inlined));
	return f->file ? h : frame_place(h, f);
}

static uint64_t memo_hash(const struct ct_report *r, const struct ct_frame *f)
{
	struct ct_frame_memo *m = memo_for(r, f->id);
	if (!m)
		return frame_hash(f);
	if (!(m->flags[f->id] & MEMO_HASH_KNOWN)) {
		m->hash[f->id] = frame_hash(f);
		m->flags[f->id] |= MEMO_HASH_KNOWN;
	}
	return m->hash[f->id];
}

static int same_frame(const struct ct_frame *a, const struct ct_frame *b)
{
	return ct_same_str(a->function, b->function) && ct_same_str(a->file, b->file) && a->line == b->line &&
	       a->inlined == b->inlined && (a->file || same_place(a, b));
}

static int keep_frame(void *ctx, const struct ct_frame *f, unsigned index)
{
	(void)index;
	struct shown *p = ctx;
	if (p->limit && p->n == p->limit)
		return 1; /* enough: the walk stops */
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		struct ct_frame *v = realloc(p->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		p->v = v, p->cap = cap;
	}
	p->v[p->n++] = *f;
	uint64_t h = (p->hash ^ memo_hash(p->r, f)) * 0x9e3779b97f4a7c15ull;
	p->hash = h ^ h >> 29;
	return 0;
}

/* The shown frames of stack into p; for_key: folded as a group's key is, whatever --all-frames. */
static int shown_frames(const struct ct_report *r, uint32_t stack, struct shown *p, int *truncated,
                        int for_key)
{
	struct walk w = {.r = r, .fn = keep_frame, .ctx = p};
	p->r = r, p->n = 0, p->hash = CT_MIX_SEED;
	int rc = walk(&w, stack, truncated, for_key);
	p->hash = ct_mix(p->hash, truncated, sizeof(*truncated));
	return rc;
}

/* The hash of stack's shown frames as shown_frames gives it (x: scratch), worked out once per stack
 * while the settings the walk follows stay the same. Returns 0 or -ENOMEM. */
static int shown_hash(const struct ct_report *r, uint32_t stack, struct shown *x, uint64_t *hash)
{
	struct ct_frame_memo *m = r->memo;
	const struct walk_settings now = {r->fold, r->wrappers, r->nwrappers, r->all_frames, r->full_stacks};
	if (m && !m->walk_set && r->m->nnodes) {
		m->stack_hash = malloc(r->m->nnodes * sizeof(*m->stack_hash));
		m->stack_known = calloc(r->m->nnodes, 1);
		m->walk = now, m->walk_set = 1;
	}
	int memo = m && m->stack_known && m->stack_hash && stack < r->m->nnodes && now.fold == m->walk.fold &&
	           now.wrappers == m->walk.wrappers && now.nwrappers == m->walk.nwrappers &&
	           now.all_frames == m->walk.all_frames && now.full_stacks == m->walk.full_stacks;
	if (memo && m->stack_known[stack]) {
		*hash = m->stack_hash[stack];
		return 0;
	}
	int truncated, rc = shown_frames(r, stack, x, &truncated, 0);
	*hash = x->hash;
	if (!rc && memo)
		m->stack_hash[stack] = x->hash, m->stack_known[stack] = 1;
	return rc;
}

/* 1 when stacks a and b show the same frames (x and y: scratch), 0 if not, or -ENOMEM. */
static int same_shown(const struct ct_report *r, uint32_t a, uint32_t b, struct shown *x, struct shown *y,
                      int for_key)
{
	int ta, tb;
	int rc = shown_frames(r, a, x, &ta, for_key);
	if (!rc)
		rc = shown_frames(r, b, y, &tb, for_key);
	if (rc)
		return rc;
	if (x->n != y->n || ta != tb)
		return 0;
	for (size_t i = 0; i < x->n; i++)
		if (!same_frame(&x->v[i], &y->v[i]))
			return 0;
	return 1;
}

/* ---- grouping ---- */

/* The key of a group: --group site, the first shown frame's function, file and line (its module
 * and offset when there is no line); --group backtrace, every shown frame, as same_shown compares
 * them: the hash of the site's, and the site's stack to compare with. Returns 0 or -ENOMEM. */
static int set_key(const struct ct_report *r, struct ct_group *g, uint32_t stack, struct shown *x)
{
	if (r->group == CT_GROUP_BACKTRACE) {
		int truncated;
		int rc = shown_frames(r, stack, x, &truncated, 1);
		g->frames_hash = x->hash, g->stack = stack;
		return rc;
	}
	struct walk w = {.r = r, .fn = stop};
	int rc = walk(&w, stack, NULL, 1);
	if (rc < 0 || !w.index)
		return rc < 0 ? rc : 0;
	g->function = w.first.function, g->file = w.first.file, g->line = w.first.line;
	g->module = w.first.file ? NULL : w.first.module;
	g->offset = w.first.file ? 0 : w.first.offset;
	return 0;
}

static uint64_t mix_word(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0x9e3779b97f4a7c15ull;
	return h ^ h >> 29;
}

/* A name into a group key's hash 8 bytes at a time: the hash only places the key in the table (the
 * groups keep the order their first sites come in), so any hash that equal names share will do. */
static uint64_t mix_name(uint64_t h, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	for (; n >= 8; s += 8, n -= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h = mix_word(h, w);
	}
	uint64_t tail = n;
	for (size_t i = 0; i < n; i++)
		tail = tail << 8 | (unsigned char)s[i];
	return mix_word(h, tail);
}

static uint64_t hash_key(const struct ct_group *g)
{
	uint64_t h = mix_name(mix_name(mix_name(CT_MIX_SEED, g->function), g->file), g->module);
	h = ct_mix(h, &g->line, sizeof(g->line));
	h = ct_mix(h, &g->offset, sizeof(g->offset));
	return ct_mix(h, &g->frames_hash, sizeof(g->frames_hash));
}

/* 1 when a and b are one group's key, 0 if not, or -ENOMEM (x, y: scratch). */
static int same_key(const struct ct_report *r, const struct ct_group *a, const struct ct_group *b,
                    struct shown *x, struct shown *y)
{
	if (r->group == CT_GROUP_BACKTRACE)
		return a->frames_hash != b->frames_hash ? 0 : same_shown(r, a->stack, b->stack, x, y, 1);
	return ct_same_str(a->function, b->function) && ct_same_str(a->file, b->file) &&
	       ct_same_str(a->module, b->module) && a->line == b->line && a->offset == b->offset;
}

/* Adds s's figures to t. */
static void sum_into(struct ct_site *t, const struct ct_site *s)
{
	t->leaked_bytes += s->leaked_bytes, t->leaked_allocations += s->leaked_allocations;
	t->peak_bytes += s->peak_bytes, t->peak_allocations += s->peak_allocations;
	t->allocations += s->allocations, t->bytes_allocated += s->bytes_allocated;
	t->temporary += s->temporary;
	for (int k = 0; k < CT_KINDS; k++) {
		t->class_allocations[k] += s->class_allocations[k];
		t->class_bytes[k] += s->class_bytes[k];
	}
}

static void add_site(struct ct_group *g, const struct ct_site *s)
{
	sum_into(&g->sum, s);
	for (int by = 0; by < NRANKS; by++)
		if (cmp_by(s, g->best[by], (enum ct_rank)by) < 0)
			g->best[by] = s;
}

/* The group of key k in the open-addressing table slots (size a power of two): found or new, into
 * *out. Returns 0 or -ENOMEM. */
static int find_group(struct ct_report *r, long *slots, size_t size, const struct ct_group *k,
                      const struct ct_site *s, struct shown *x, struct shown *y, struct ct_group **out)
{
	for (size_t i = hash_key(k) & (size - 1);; i = (i + 1) & (size - 1)) {
		if (slots[i] < 0) {
			struct ct_group *g = &r->groups[r->ngroups];
			*g = *k;
			g->members = UINT32_MAX;
			g->sum = (struct ct_site){.stack = s->stack};
			for (int by = 0; by < NRANKS; by++)
				g->best[by] = s;
			slots[i] = (long)r->ngroups++;
			*out = g;
			return 0;
		}
		int same = same_key(r, &r->groups[slots[i]], k, x, y);
		if (same < 0)
			return same;
		if (same) {
			*out = &r->groups[slots[i]];
			return 0;
		}
	}
}

/* The groups and, after them in the same block, each site's next member in its group. */

static uint32_t *next_member(const struct ct_report *r)
{
	return (uint32_t *)(r->groups + (r->nsites ? r->nsites : 1));
}

int ct_report_group(struct ct_report *r)
{
	size_t size = 16, n = r->nsites ? r->nsites : 1;
	while (size < 2 * r->nsites)
		size *= 2;
	long *slots = malloc(size * sizeof(*slots));
	struct shown x = {0}, y = {0};
	int rc = 0;
	r->groups = malloc(n * sizeof(*r->groups) + n * sizeof(uint32_t));
	r->ngroups = 0;
	if (slots && r->groups)
		memset(slots, 0xff, size * sizeof(*slots)); /* -1: empty */
	else
		rc = -ENOMEM;
	for (size_t i = 0; !rc && i < r->nsites; i++) {
		const struct ct_site *s = &r->sites[i];
		struct ct_group k = {0}, *g;
		if ((rc = set_key(r, &k, s->stack, &x)) ||
		    (rc = find_group(r, slots, size, &k, s, &x, &y, &g)))
			break;
		add_site(g, s);
		next_member(r)[i] = g->members;
		g->members = (uint32_t)i;
	}
	free(slots);
	free(x.v);
	free(y.v);
	if (rc)
		free(r->groups), r->groups = NULL;
	return rc;
}

/* ---- the backtraces of an entry ---- */

static int cmp_callers(const void *a, const void *b, void *by)
{
	return cmp_by(a, b, *(enum ct_rank *)by);
}

void ct_callers_rest(const struct ct_callers *c, size_t from, struct ct_site *sum)
{
	*sum = (struct ct_site){0};
	for (size_t i = from; i < c->n; i++)
		sum_into(sum, &c->v[i]);
}

/* merge_members' callers by the hash of their shown frames: an open-addressing table of each hash's
 * first caller, and per caller the next one with the same hash (frames that differ), in the order
 * they were found. A group of thousands of backtraces (a compiler's recursion) is then not compared
 * with every caller found before it. */
struct by_hash {
	uint32_t *slots; /* caller indexes; UINT32_MAX empty */
	size_t size;
	uint32_t *next; /* per caller */
	uint64_t *hashes;
	size_t n, cap;
};

static size_t hash_slot(const struct by_hash *t, uint64_t h)
{
	size_t i = (size_t)(h >> 17) & (t->size - 1);
	while (t->slots[i] != UINT32_MAX && t->hashes[t->slots[i]] != h)
		i = (i + 1) & (t->size - 1);
	return i;
}

/* The first caller with hash h, or UINT32_MAX. */
static uint32_t first_with(const struct by_hash *t, uint64_t h)
{
	return t->size ? t->slots[hash_slot(t, h)] : UINT32_MAX;
}

/* Adds caller t->n with hash h after those with the same hash. Returns 0 or -ENOMEM. */
static int add_hash(struct by_hash *t, uint64_t h)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 8;
		uint64_t *hv = realloc(t->hashes, cap * sizeof(*hv));
		if (hv)
			t->hashes = hv;
		uint32_t *nv = hv ? realloc(t->next, cap * sizeof(*nv)) : NULL;
		if (!nv)
			return -ENOMEM;
		t->next = nv, t->cap = cap;
	}
	if (2 * (t->n + 1) > t->size) {
		size_t size = t->size ? 2 * t->size : 16;
		uint32_t *v = malloc(size * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memset(v, 0xff, size * sizeof(*v));
		free(t->slots);
		t->slots = v, t->size = size;
		for (uint32_t j = 0; j < t->n; j++) /* each hash's first caller, in order */
			if (t->slots[hash_slot(t, t->hashes[j])] == UINT32_MAX)
				t->slots[hash_slot(t, t->hashes[j])] = j;
	}
	uint32_t j = (uint32_t)t->n++;
	t->hashes[j] = h, t->next[j] = UINT32_MAX;
	size_t i = hash_slot(t, h);
	if (t->slots[i] == UINT32_MAX) {
		t->slots[i] = j;
		return 0;
	}
	uint32_t k = t->slots[i];
	while (t->next[k] != UINT32_MAX)
		k = t->next[k];
	t->next[k] = j;
	return 0;
}

/* The members of a group with a non-zero first key, merged by shown backtrace: c->v, one stack each
 * (the lowest id). */
static int merge_members(const struct ct_report *r, enum ct_rank by, const struct ct_group *g, int kind,
                         struct ct_callers *c, struct shown *x, struct shown *y)
{
	size_t cap = 0;
	struct by_hash t = {0};
	int rc = 0;
	for (uint32_t i = g->members; !rc && i != UINT32_MAX; i = next_member(r)[i]) {
		const struct ct_site member = of_kind(&r->sites[i], kind), *s = &member;
		uint64_t k[2];
		keys(s, by, k);
		if (!k[0] && !(kind && s->leaked_allocations))
			continue;
		uint64_t h;
		if ((rc = shown_hash(r, s->stack, x, &h)))
			break;
		uint32_t j = first_with(&t, h);
		for (; j != UINT32_MAX; j = t.next[j])
			if ((rc = same_shown(r, c->v[j].stack, s->stack, y, x, 0)) != 0)
				break;
		if (rc < 0)
			break;
		rc = 0;
		if (j == UINT32_MAX) {
			if (c->n == cap) {
				cap = cap ? 2 * cap : 8;
				struct ct_site *v = realloc(c->v, cap * sizeof(*v));
				if (!v) {
					rc = -ENOMEM;
					break;
				}
				c->v = v;
			}
			if ((rc = add_hash(&t, h)))
				break;
			j = (uint32_t)c->n++;
			c->v[j] = (struct ct_site){.stack = s->stack, .kind = kind};
		}
		sum_into(&c->v[j], s);
		if (s->stack < c->v[j].stack)
			c->v[j].stack = s->stack;
	}
	free(t.slots);
	free(t.next);
	free(t.hashes);
	return rc;
}

int ct_report_callers(const struct ct_report *r, enum ct_rank by, const struct ct_site *entry,
                      struct ct_callers *c)
{
	*c = (struct ct_callers){0};
	struct shown x = {0}, y = {0};
	int rc = 0;
	if (r->groups && entry->group)
		rc = merge_members(r, by, &r->groups[entry->group - 1], entry->kind, c, &x, &y);
	if (!rc && !c->n) { /* one backtrace: the entry's own */
		if (!(c->v = malloc(sizeof(*c->v))))
			rc = -ENOMEM;
		else
			c->v[0] = *entry, c->v[0].group = 0, c->n = 1;
	}
	if (!rc)
		qsort_r(c->v, c->n, sizeof(*c->v), cmp_callers, &by);
	/* the frames they share: all of them for a single backtrace */
	int truncated = 0;
	if (!rc)
		rc = shown_frames(r, c->v[0].stack, &x, &truncated, 0);
	c->common = x.n;
	for (size_t i = 1; !rc && i < c->n && c->common; i++) {
		y.limit = c->common; /* only the frames that may still be shared */
		rc = shown_frames(r, c->v[i].stack, &y, &truncated, 0);
		if (rc < 0)
			break;
		rc = 0;
		size_t k = 0;
		while (k < c->common && k < y.n && same_frame(&x.v[k], &y.v[k]))
			k++;
		c->common = k;
	}
	free(x.v);
	free(y.v);
	if (rc) {
		free(c->v);
		*c = (struct ct_callers){0};
	}
	return rc;
}

int ct_report_open(struct ct_report *r, const char *path, const struct ct_model *m, int no_auto_fold)
{
	r->path = path;
	r->m = m;
	long n = ct_model_sites(m, &r->sites);
	r->sym = r->sym ? r->sym : ct_symbolizer_new(); /* one the caller made: the report's from now */
	r->memo = calloc(1, sizeof(*r->memo));
	if (n < 0 || !r->sym || !r->memo)
		return -ENOMEM;
	r->nsites = (size_t)n;
	int rc = no_auto_fold ? 0 : ct_report_find_wrappers(r);
	return rc ? rc : ct_report_group(r);
}

void ct_report_close(struct ct_report *r)
{
	ct_symbolizer_free(r->sym);
	if (r->memo) {
		free(r->memo->flags);
		free(r->memo->hash);
		free(r->memo->stack_hash);
		free(r->memo->stack_known);
		free(r->memo);
	}
	free(r->groups);
	free(r->wrappers);
	free(r->sites);
	r->sym = NULL, r->groups = NULL, r->wrappers = NULL, r->sites = NULL, r->memo = NULL;
}
