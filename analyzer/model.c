/* SPDX-License-Identifier: MIT */
/* The model: applies records to alloc infos, stack nodes, modules and totals, in O(1) per event.
 * Invariant: peak contribution per info is exact without a scan per peak (see touch()). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctrack/format.h"
#include "grow.h"
#include "model.h"
#include "sampling.h"

/* Grows *arr (element size elem) so index `need - 1` fits. */
static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 64;
	while (n < need)
		n *= 2;
	void *p = realloc(*arr, n * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = n;
	return 0;
}

int ct_model_init(struct ct_model *m)
{
	memset(m, 0, sizeof(*m));
	m->last_module = CT_NO_MODULE;
	m->series_width_us = 1000;
	m->series = calloc(CT_SERIES_MAX, sizeof(*m->series));
	if (!m->series || ct_timeline_init(&m->tl) < 0 ||
	    grow((void **)&m->nodes, &m->cap_nodes, CT_STACK_FIRST, sizeof(*m->nodes)) < 0) {
		ct_model_destroy(m);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < CT_STACK_FIRST; i++)
		m->nodes[i] = (struct ct_node){.parent = i, .module = CT_NO_MODULE, .ip = 0};
	m->nnodes = CT_STACK_FIRST;
	m->nseries = 1;
	return 0;
}

static void free_module(struct ct_module *mod)
{
	free(mod->path);
	free(mod->build_id);
	free(mod->segs);
}

void ct_model_destroy(struct ct_model *m)
{
	for (size_t i = 0; i < m->nmodules; i++)
		free_module(&m->modules[i]);
	for (size_t i = 0; i < m->proc.argc; i++)
		free(m->proc.argv[i].data);
	free(m->proc.argv);
	free(m->proc.exe.data);
	free(m->exec_path.data);
	free(m->suppressions.data);
	free(m->holders);
	ct_model_marks_release(m);
	ct_model_invalid_release(m);
	for (size_t i = 0; i < m->nnotes; i++)
		free(m->notes[i].text.data);
	free(m->notes);
	free(m->modules);
	free(m->infos);
	free(m->weights);
	free(m->nodes);
	free(m->exact);
	free(m->series);
	ct_timeline_release(&m->tl);
	memset(m, 0, sizeof(*m));
}

/* ---- notes ---- */

/* FNV-1a of the level and the text. */
static uint64_t note_hash(int warning, const char *text, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)warning;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)text[i]) * 0x100000001b3ull;
	return h;
}

_Static_assert(CT_NOTES_MAX == 64, "CT_NOTE_OTHERS names the bound");

/* The length of a text of len bytes as kept: cut at CT_NOTE_TEXT_MAX, then "...". */
static size_t note_kept_len(size_t len)
{
	return len > CT_NOTE_TEXT_MAX ? CT_NOTE_TEXT_MAX + 3 : len;
}

/* A new entry for the text, kept NUL-terminated; NULL when out of memory. */
static struct ct_note *note_add(struct ct_model *m, int warning, const char *text, size_t len, uint64_t hash)
{
	size_t n = note_kept_len(len), keep = len > CT_NOTE_TEXT_MAX ? CT_NOTE_TEXT_MAX : len;
	char *copy = malloc(n + 1);
	if (!copy)
		return NULL;
	memcpy(copy, text, keep);
	memcpy(copy + keep, "...", n - keep);
	copy[n] = 0;
	struct ct_note *note = &m->notes[m->nnotes++];
	*note = (struct ct_note){.warning = warning, .text = {copy, n}, .hash = hash};
	return note;
}

/* The kept entry for this level and text, or NULL. Repeats are found by the text as kept: texts
 * alike in their first CT_NOTE_TEXT_MAX bytes, both longer, are one. */
static struct ct_note *note_find(struct ct_model *m, int warning, const char *text, size_t len, uint64_t hash)
{
	size_t n = note_kept_len(len), keep = len > CT_NOTE_TEXT_MAX ? CT_NOTE_TEXT_MAX : len;
	for (size_t i = 0; i < m->nnotes && i < CT_NOTES_MAX; i++) {
		struct ct_note *note = &m->notes[i];
		if (note->hash == hash && note->warning == warning && note->text.len == n &&
		    !memcmp(note->text.data, text, keep))
			return note;
	}
	return NULL;
}

int ct_model_note(struct ct_model *m, unsigned level, const char *text, size_t len)
{
	int warning = level != CT_NOTE_INFO;
	if (!m->notes && !(m->notes = calloc(CT_NOTES_MAX + 1, sizeof(*m->notes))))
		return -ENOMEM;
	m->warnings += (uint64_t)warning;
	uint64_t hash = note_hash(warning, text, len < CT_NOTE_TEXT_MAX ? len : CT_NOTE_TEXT_MAX);
	struct ct_note *note = note_find(m, warning, text, len, hash);
	if (!note && m->nnotes < CT_NOTES_MAX)
		note = note_add(m, warning, text, len, hash);
	else if (!note && m->nnotes == CT_NOTES_MAX)
		note = note_add(m, warning, CT_NOTE_OTHERS, sizeof(CT_NOTE_OTHERS) - 1, 0);
	else if (!note)
		note = &m->notes[CT_NOTES_MAX];
	if (!note)
		return -ENOMEM;
	note->warning |= warning; /* the others' entry is a warning when any of them is */
	note->count++;
	return 0;
}

/* ---- time series ---- */

/* Halves the series by merging neighbouring points, keeping each pair's highest values. */
static void series_halve(struct ct_model *m)
{
	size_t n = 0;
	for (size_t i = 0; i < m->nseries; i += 2, n++) {
		struct ct_point p = m->series[i];
		if (i + 1 < m->nseries) {
			const struct ct_point *q = &m->series[i + 1];
			p.heap = q->heap > p.heap ? q->heap : p.heap;
			p.rss = q->rss > p.rss ? q->rss : p.rss;
			p.allocations += q->allocations;
			p.temporary += q->temporary;
			p.alloc_bytes += q->alloc_bytes;
		}
		m->series[n] = p;
	}
	m->nseries = n;
	m->series_width_us *= 2;
}

/* Starts a new point when the clock leaves the current point's bucket. */
static void series_tick(struct ct_model *m)
{
	struct ct_point *last = &m->series[m->nseries - 1];
	if (m->t.now_us < last->time_us + m->series_width_us)
		return;
	if (m->nseries == CT_SERIES_MAX) {
		series_halve(m);
		last = &m->series[m->nseries - 1];
		if (m->t.now_us < last->time_us + m->series_width_us)
			return;
	}
	uint64_t rss = last->rss;
	last = &m->series[m->nseries++];
	*last = (struct ct_point){.time_us = m->t.now_us, .heap = m->t.current, .rss = rss};
}

/* n allocations of bytes in all (temporary: as many of them freed at once, or 0) brought the heap
 * to heap: the series' last point and the timeline's current slice count them and keep their
 * highest heap. */
static inline void series_alloc(struct ct_model *m, uint64_t heap, uint64_t n, uint64_t bytes,
                                uint64_t temporary)
{
	struct ct_point *last = &m->series[m->nseries - 1];
	if (heap > last->heap)
		last->heap = heap;
	last->allocations += n;
	last->temporary += temporary;
	last->alloc_bytes += bytes;
	struct ct_slice_total *s = ct_timeline_total(&m->tl);
	if (heap > s->heap)
		s->heap = heap;
	s->allocations += n;
	s->temporary += temporary;
	s->alloc_bytes += bytes;
}

/* ---- events ---- */

/* Brings info's peak_live up to date before its live count changes: if a new peak happened since
 * the info was last touched, its live count then is its live count now. */
static inline void touch(const struct ct_model *m, struct ct_info *info)
{
	if (info->version != m->peak_version) {
		info->peak_live = info->live;
		info->version = m->peak_version;
	}
}

/* Records a new peak of `heap` bytes; every info's value at the peak becomes its live count. */
static inline void new_peak(struct ct_model *m, uint64_t heap)
{
	m->t.peak = heap;
	m->t.peak_time_us = m->t.now_us;
	m->peak_version++;
}

/* The current site slice's entry of info's stack, or NULL when out of memory. */
static inline struct ct_slice *timeline_entry(struct ct_model *m, const struct ct_info *info)
{
	struct ct_slice *e = &m->tl.acc[info->site];
	return e->slice == m->tl.site_cur ? e : ct_timeline_start(m, info->site);
}

static inline struct ct_info *info_at(struct ct_model *m, uint64_t id)
{
	return id < m->ninfos ? &m->infos[id] : NULL;
}

enum weighed { WEIGH_ALLOC, WEIGH_FREE, WEIGH_TEMP };

/* The number of allocations (or frees) one record of info of kind `what` stands for, given the
 * info's count of records of that kind so far (moved on; ALLOC and FREE share a sequence, TEMP has
 * its own): 1 in a full trace. The one place a sampled trace's weights enter the figures
 * (sampling.h): every count below adds it, every byte figure it times the size. */
static inline uint64_t weigh(struct ct_model *m, const struct ct_info *info, enum weighed what)
{
	size_t id = (size_t)(info - m->infos);
	if (__builtin_expect(id >= m->cap_weights, 1))
		return 1;
	struct ct_info_weight *w = &m->weights[id];
	uint64_t *n = what == WEIGH_TEMP ? &w->n_temp : what == WEIGH_FREE ? &w->n_free : &w->n_alloc;
	return w->weight ? ct_sampling_step(n, w->weight, (uint64_t)id * 2 + (what == WEIGH_TEMP)) : 1;
}

int ct_model_alloc(struct ct_model *m, uint64_t id)
{
	struct ct_info *info = info_at(m, id);
	if (!info)
		return -EINVAL;
	struct ct_slice *e = timeline_entry(m, info);
	if (!e)
		return -ENOMEM;
	uint64_t k = weigh(m, info, WEIGH_ALLOC), bytes = k * info->size;
	e->allocations += k;
	e->alloc_bytes += bytes;
	touch(m, info);
	info->live += k;
	info->allocations += k;
	m->t.allocations += k;
	m->t.bytes_allocated += bytes;
	m->t.live_allocations += k;
	m->t.current += bytes;
	if (m->t.current > m->t.peak)
		new_peak(m, m->t.current);
	series_alloc(m, m->t.current, k, bytes, 0);
	return 0;
}

/* A block freed after the leak classes were taken (a late destructor): the program held a pointer to
 * it, so it was reachable, or found through an interior pointer at worst. Its class count goes. */
static void unclassify_one(struct ct_info *info)
{
	uint64_t sum = 0;
	for (int k = 0; k < CT_CLASSES; k++)
		sum += info->classes[k];
	for (int k = CT_CLASSES - 1; k >= 0 && sum > info->live; k--)
		if (info->classes[k]) {
			info->classes[k]--;
			return;
		}
}

/* A free of info id: the frees it stands for into *k. 0, -EINVAL (no live block: in a sampled
 * trace, more FREE records than ALLOC records), -ENOMEM. */
static int free_weighed(struct ct_model *m, uint64_t id, uint64_t *k)
{
	struct ct_info *info = info_at(m, id);
	if (!info || !info->live) /* weighted: live when more ALLOCs than FREEs were read of it */
		return -EINVAL;
	struct ct_slice *e = timeline_entry(m, info);
	if (!e)
		return -ENOMEM;
	*k = weigh(m, info, WEIGH_FREE);
	e->frees += *k;
	e->free_bytes += *k * info->size;
	touch(m, info);
	info->live -= *k;
	if (m->classified)
		unclassify_one(info);
	m->t.frees += *k;
	m->t.live_allocations -= *k;
	m->t.current -= *k * info->size;
	return 0;
}

int ct_model_free(struct ct_model *m, uint64_t id)
{
	uint64_t k;
	return free_weighed(m, id, &k);
}

int ct_model_free_temp(struct ct_model *m, uint64_t id)
{
	uint64_t k;
	int rc = free_weighed(m, id, &k);
	if (rc < 0)
		return rc;
	m->infos[id].temporary += k;
	m->t.temporary += k;
	m->tl.acc[m->infos[id].site].temporary += k; /* the free made it the current slice's entry */
	m->series[m->nseries - 1].temporary += k;
	ct_timeline_total(&m->tl)->temporary += k;
	return 0;
}

int ct_model_temp(struct ct_model *m, uint64_t id)
{
	struct ct_info *info = info_at(m, id);
	if (!info)
		return -EINVAL;
	struct ct_slice *e = timeline_entry(m, info);
	if (!e)
		return -ENOMEM;
	uint64_t k = weigh(m, info, WEIGH_TEMP), bytes = k * info->size;
	e->allocations += k, e->frees += k, e->temporary += k;
	e->alloc_bytes += bytes, e->free_bytes += bytes;
	touch(m, info);
	info->allocations += k;
	info->temporary += k;
	m->t.allocations += k;
	m->t.frees += k;
	m->t.temporary += k;
	m->t.bytes_allocated += bytes;
	uint64_t heap = m->t.current + bytes;
	if (heap > m->t.peak) {
		/* The blocks were live at the peak: the info's value there is k more than now. */
		new_peak(m, heap);
		info->peak_live = info->live + k;
		info->version = m->peak_version;
	}
	series_alloc(m, heap, k, bytes, k);
	return 0;
}

int ct_model_info(struct ct_model *m, uint64_t size, uint64_t stack)
{
	if (stack >= m->nnodes)
		return -EINVAL;
	uint32_t site;
	if (grow((void **)&m->infos, &m->cap_infos, m->ninfos + 1, sizeof(*m->infos)) < 0 ||
	    ct_timeline_site(&m->tl, (uint32_t)stack, &site) < 0)
		return -ENOMEM;
	/* SAMPLING comes before any INFO (ct_model_sampling): a sampled trace weighs every info */
	if (m->sample_rate) {
		if (ct_grow_zeroed((void **)&m->weights, &m->cap_weights, m->ninfos, sizeof(*m->weights),
		                   1024) < 0)
			return -ENOMEM;
		m->weights[m->ninfos].weight = ct_sampling_weight(size, m->sample_rate);
	}
	m->infos[m->ninfos++] = (struct ct_info){.size = size, .stack = (uint32_t)stack, .site = site};
	return 0;
}

int ct_model_sampling(struct ct_model *m, uint64_t rate, uint64_t seed)
{
	if (!rate || rate > CT_SAMPLING_RATE_MAX || (m->sample_rate && m->sample_rate != rate) ||
	    (!m->sample_rate && m->ninfos))
		return -EINVAL;
	m->sample_rate = rate;
	m->sample_seed = seed;
	return 0;
}

int ct_model_attach(struct ct_model *m, uint64_t unix_ns, uint64_t ordinal)
{
	if (!ordinal || m->attach_ordinal || m->ninfos)
		return -EINVAL;
	m->attach_unix_ns = unix_ns;
	m->attach_ordinal = ordinal;
	char when[64] = "an unknown time", text[320];
	time_t t = (time_t)(unix_ns / 1000000000u);
	struct tm tm;
	if (unix_ns / 1000000000u <= (uint64_t)INT32_MAX * 4 && gmtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	int n = snprintf(text, sizeof(text),
	                 "trace starts at an attach at %s (ctrack -p, the process's attach number %" PRIu64
	                 "); blocks allocated before it are not counted (their frees are counted apart, "
	                 "as frees of blocks allocated before tracing)",
	                 when, ordinal);
	int rc = ct_model_note(m, CT_NOTE_INFO, text, (size_t)n);
	m->attach_note = m->nnotes ? m->nnotes - 1 : 0;
	return rc;
}

static int module_holds(struct ct_model *m, const struct ct_module *mod, uint64_t ip)
{
	m->work += 1 + (mod->loaded ? mod->nseg : 0);
	if (!mod->loaded)
		return 0;
	for (size_t i = 0; i < mod->nseg; i++) {
		uint64_t lo = mod->base + mod->segs[i].vaddr;
		if (ip >= lo && ip - lo < mod->segs[i].memsz)
			return 1;
	}
	return 0;
}

/* The module holding addr. A frame's is the one holding ip - 1, its call: a call that ends a module's
 * code returns to the first byte past it (format.h). */
static uint32_t find_module(struct ct_model *m, uint64_t addr)
{
	if (m->last_module != CT_NO_MODULE && module_holds(m, &m->modules[m->last_module], addr))
		return m->last_module;
	for (size_t i = 0; i < m->nmodules; i++) {
		if (module_holds(m, &m->modules[i], addr)) {
			m->last_module = (uint32_t)i;
			return (uint32_t)i;
		}
	}
	return CT_NO_MODULE;
}

/* find_module for a stack frame's address: the first frame in a module is told to module_framed. */
static uint32_t frame_module(struct ct_model *m, uint64_t addr)
{
	uint32_t i = find_module(m, addr);
	if (i == CT_NO_MODULE || m->modules[i].framed)
		return i;
	m->modules[i].framed = 1;
	if (m->module_framed)
		m->module_framed(&m->modules[i], m->module_arg);
	return i;
}

int ct_model_frame(struct ct_model *m, uint64_t parent, int64_t ip_delta)
{
	if (parent >= m->nnodes || m->nnodes >= UINT32_MAX)
		return -EINVAL;
	if (grow((void **)&m->nodes, &m->cap_nodes, m->nnodes + 1, sizeof(*m->nodes)) < 0)
		return -ENOMEM;
	m->last_ip += (uint64_t)ip_delta;
	m->nodes[m->nnodes++] = (struct ct_node){
	    .parent = (uint32_t)parent, .module = frame_module(m, m->last_ip - 1), .ip = m->last_ip};
	if (m->frame_added)
		m->frame_added(m, (uint32_t)(m->nnodes - 1), m->frame_arg);
	return 0;
}

int ct_model_exact(struct ct_model *m)
{
	if (m->nnodes <= CT_STACK_FIRST)
		return -EINVAL;
	uint32_t node = (uint32_t)(m->nnodes - 1);
	if (m->nexact && m->exact[m->nexact - 1] == node)
		return 0;
	if (grow((void **)&m->exact, &m->cap_exact, m->nexact + 1, sizeof(*m->exact)) < 0)
		return -ENOMEM;
	m->exact[m->nexact++] = node;
	m->nodes[node].module = frame_module(m, m->nodes[node].ip);
	return 0;
}

void ct_model_time(struct ct_model *m, uint64_t delta_us)
{
	m->t.now_us += delta_us;
	series_tick(m);
	ct_timeline_time(m, m->t.now_us);
	if (m->between)
		ct_model_window_time(m);
}

void ct_model_sample(struct ct_model *m, uint64_t rss)
{
	if (rss > m->t.peak_rss)
		m->t.peak_rss = rss;
	struct ct_point *last = &m->series[m->nseries - 1];
	if (rss > last->rss)
		last->rss = rss;
	struct ct_slice_total *s = ct_timeline_total(&m->tl);
	if (rss > s->rss)
		s->rss = rss;
}

/* Takes ownership of mod's blocks, also on error. */
int ct_model_module(struct ct_model *m, const struct ct_module *mod)
{
	struct ct_module copy = *mod;
	if (mod->id != m->nmodules) { /* ids are dense and never reused */
		free_module(&copy);
		return -EINVAL;
	}
	/* Grown by doubling, not by one: a realloc that cannot extend in place (ASan's never does)
	 * copies the whole array, and a trace may hold millions of modules. */
	if (grow((void **)&m->modules, &m->cap_modules, m->nmodules + 1, sizeof(*m->modules)) < 0) {
		free_module(&copy);
		return -ENOMEM;
	}
	copy.loaded = 1;
	copy.framed = 0;
	m->modules[m->nmodules++] = copy;
	return 0;
}

int ct_model_unmodule(struct ct_model *m, uint64_t id)
{
	if (id >= m->nmodules)
		return -EINVAL;
	m->modules[id].loaded = 0;
	if (m->last_module == id)
		m->last_module = CT_NO_MODULE;
	return 0;
}

void ct_model_end(struct ct_model *m, uint64_t unmatched_frees, uint64_t lost, uint64_t end_us)
{
	m->t.ended = 1;
	m->t.unmatched_frees = unmatched_frees;
	m->t.lost_allocations = lost;
	m->t.end_us = end_us;
	/* The slices span the run to its end (ct_model_runtime_us). */
	if (end_us > m->t.now_us)
		ct_timeline_time(m, end_us);
}

void ct_model_process(struct ct_model *m, uint64_t pid, uint64_t ppid, uint64_t start_ns, struct ct_bytes exe,
                      struct ct_bytes *argv, size_t argc)
{
	struct ct_process *p = &m->proc;
	for (size_t i = 0; i < p->argc; i++)
		free(p->argv[i].data);
	free(p->argv);
	free(p->exe.data);
	*p = (struct ct_process){.seen = 1,
	                         .pid = pid,
	                         .ppid = ppid,
	                         .start_unix_ns = start_ns,
	                         .exe = exe,
	                         .argv = argv,
	                         .argc = argc};
}

/* ---- leak classes ---- */

void ct_model_classes_begin(struct ct_model *m)
{
	m->work += m->ninfos;
	/* Four stores, not a memset call per info: a trace can ask this of millions of infos many
	 * times over, and an interposed memset (AddressSanitizer's) made that 3 times as slow. */
	for (size_t i = 0; i < m->ninfos; i++)
		for (int k = 0; k < CT_CLASSES; k++)
			m->infos[i].classes[k] = 0;
	m->classified = 1;
	m->nholders = 0; /* they were the superseded record's */
	m->has_holders = 0;
}

int ct_model_holder(struct ct_model *m, uint64_t id, uint64_t holder, uint64_t count)
{
	const struct ct_info *info = info_at(m, id);
	if (!info || !info_at(m, holder) || !m->classified || count > info->classes[CT_CLASS_INDIRECT])
		return -EINVAL;
	m->has_holders = 1;
	if (!count)
		return 0;
	if (m->nholders == m->cap_holders) {
		size_t cap = m->cap_holders ? 2 * m->cap_holders : 64;
		struct ct_holder *v = realloc(m->holders, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		m->holders = v, m->cap_holders = cap;
	}
	m->holders[m->nholders++] = (struct ct_holder){id, holder, count};
	return 0;
}

int ct_model_classes(struct ct_model *m, uint64_t id, const uint64_t count[CT_CLASSES])
{
	struct ct_info *info = info_at(m, id);
	uint64_t sum = 0;
	for (int k = 0; k < CT_CLASSES; k++) {
		if (count[k] > UINT64_MAX - sum)
			return -EINVAL;
		sum += count[k];
	}
	if (!info || sum > info->live)
		return -EINVAL;
	memcpy(info->classes, count, sizeof(info->classes));
	return 0;
}

/* ---- queries ---- */

void ct_info_kinds(const struct ct_model *m, const struct ct_info *info, uint64_t kinds[CT_KINDS])
{
	uint64_t seen = info->suppressed;
	for (int k = 0; k < CT_KIND_UNSCANNED; k++) {
		kinds[k] = m->classified ? info->classes[k] : 0;
		seen += kinds[k];
	}
	kinds[CT_KIND_UNSCANNED] = m->classified && info->live > seen ? info->live - seen : 0;
}

void ct_model_class_totals(const struct ct_model *m, uint64_t blocks[CT_KINDS], uint64_t bytes[CT_KINDS])
{
	for (int k = 0; k < CT_KINDS; k++)
		blocks[k] = bytes[k] = 0;
	for (size_t i = 0; i < m->ninfos; i++) {
		uint64_t kinds[CT_KINDS];
		ct_info_kinds(m, &m->infos[i], kinds);
		for (int k = 0; k < CT_KINDS; k++) {
			blocks[k] += kinds[k];
			bytes[k] += kinds[k] * m->infos[i].size;
		}
	}
}

uint64_t ct_info_at_peak(const struct ct_model *m, const struct ct_info *info)
{
	return info->version != m->peak_version ? info->live : info->peak_live;
}

uint64_t ct_model_runtime_us(const struct ct_model *m)
{
	if (m->complete && m->t.ended && m->t.end_us > m->t.now_us)
		return m->t.end_us;
	return m->t.now_us;
}

const struct ct_module *ct_model_node_module(const struct ct_model *m, uint32_t node)
{
	if (node >= m->nnodes || m->nodes[node].module == CT_NO_MODULE)
		return NULL;
	return &m->modules[m->nodes[node].module];
}

int ct_model_node_exact(const struct ct_model *m, uint32_t node)
{
	size_t lo = 0, hi = m->nexact;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->exact[mid] < node)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->nexact && m->exact[lo] == node;
}

long ct_model_sites(const struct ct_model *m, struct ct_site **out)
{
	uint32_t *slot = calloc(m->nnodes, sizeof(*slot)); /* node id -> site index + 1 */
	struct ct_site *sites = calloc(m->ninfos ? m->ninfos : 1, sizeof(*sites));
	if (!slot || !sites) {
		free(slot);
		free(sites);
		return -ENOMEM;
	}
	size_t n = 0;
	for (size_t i = 0; i < m->ninfos; i++) {
		const struct ct_info *info = &m->infos[i];
		if (!slot[info->stack]) {
			sites[n].stack = info->stack;
			slot[info->stack] = (uint32_t)++n;
		}
		struct ct_site *s = &sites[slot[info->stack] - 1];
		uint64_t at_peak = ct_info_at_peak(m, info);
		s->leaked_allocations += info->live;
		s->leaked_bytes += info->live * info->size;
		s->peak_allocations += at_peak;
		s->peak_bytes += at_peak * info->size;
		s->allocations += info->allocations;
		s->bytes_allocated += info->allocations * info->size;
		s->temporary += info->temporary;
		uint64_t kinds[CT_KINDS];
		ct_info_kinds(m, info, kinds);
		for (int k = 0; k < CT_KINDS; k++) {
			s->class_allocations[k] += kinds[k];
			s->class_bytes[k] += kinds[k] * info->size;
		}
	}
	free(slot);
	*out = sites;
	return (long)n;
}

/* ---- for aggregated.c ---- */

void ct_model_touch(const struct ct_model *m, struct ct_info *info)
{
	touch(m, info);
}

struct ct_slice *ct_model_slice(struct ct_model *m, const struct ct_info *info)
{
	return timeline_entry(m, info);
}
