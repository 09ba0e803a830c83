/* SPDX-License-Identifier: MIT */
/* Unit tests of the analyzer's model (analyzer/model.c), driven without a trace: its O(1) peak
 * bookkeeping against a plain replay that copies every live count at each new peak, over random
 * events; temporaries that make a peak; refused events; sites; modules; the time series; invalid
 * frees and the fatal signal. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/format.h"
#include "model.h"

static int failures;

static void check(const char *what, int ok)
{
	if (!ok) {
		printf("FAIL %s\n", what);
		failures++;
	}
}

#define EQ(what, got, want) \
	do { \
		unsigned long long g_ = (got), w_ = (want); \
		if (g_ != w_) { \
			printf("FAIL %s: got %llu, want %llu\n", what, g_, w_); \
			failures++; \
		} \
	} while (0)

/* ---- the peak, against a replay ---- */

#define INFOS 40
#define EVENTS 200000

struct replay {
	uint64_t size[INFOS], live[INFOS], at_peak[INFOS];
	uint64_t heap, peak, allocations, frees, temporary, bytes;
};

/* A new high: every info's live count is its value at the peak (the slow, obvious way). */
static void replay_heap(struct replay *r, uint64_t heap)
{
	if (heap <= r->peak)
		return;
	r->peak = heap;
	memcpy(r->at_peak, r->live, sizeof(r->live));
}

/* infos: how many of the INFOS take part; waves: how often the heap's drift turns over. */
static void random_events(int infos, int waves, unsigned seed)
{
	struct ct_model m;
	struct replay r = {0};
	unsigned x = seed;
	if (ct_model_init(&m) < 0)
		exit(1);
	for (int i = 0; i < INFOS; i++) {
		r.size[i] = 1 + (uint64_t)(i * 7919 % 4000);
		check("INFO", ct_model_info(&m, r.size[i], CT_STACK_ROOT) == 0);
	}
	for (int e = 0; e < EVENTS; e++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		int id = (int)(x % (unsigned)infos), kind = (int)(x >> 8) % 10;
		/* drift: more allocations than frees in the first half of each wave, fewer in the second */
		int grow = e % (EVENTS / waves) < EVENTS / waves / 2 ? kind < 6 : kind < 4;
		if (kind == 9) { /* a temporary: live for an instant */
			check("TEMP", ct_model_temp(&m, (uint64_t)id) == 0);
			r.live[id]++;
			replay_heap(&r, r.heap + r.size[id]);
			r.live[id]--;
			r.allocations++, r.frees++, r.temporary++, r.bytes += r.size[id];
		} else if (grow || !r.live[id]) {
			check("ALLOC", ct_model_alloc(&m, (uint64_t)id) == 0);
			r.live[id]++, r.heap += r.size[id], r.allocations++, r.bytes += r.size[id];
			replay_heap(&r, r.heap);
		} else {
			check("FREE", ct_model_free(&m, (uint64_t)id) == 0);
			r.live[id]--, r.heap -= r.size[id], r.frees++;
		}
	}
	EQ("peak bytes", m.t.peak, r.peak);
	EQ("current bytes", m.t.current, r.heap);
	EQ("allocations", m.t.allocations, r.allocations);
	EQ("frees", m.t.frees, r.frees);
	EQ("temporary", m.t.temporary, r.temporary);
	EQ("bytes allocated", m.t.bytes_allocated, r.bytes);
	uint64_t at_peak_bytes = 0;
	for (int i = 0; i < INFOS; i++) {
		char what[64];
		snprintf(what, sizeof(what), "info %d live at the peak", i);
		EQ(what, ct_info_at_peak(&m, &m.infos[i]), r.at_peak[i]);
		snprintf(what, sizeof(what), "info %d live at the end", i);
		EQ(what, m.infos[i].live, r.live[i]);
		at_peak_bytes += ct_info_at_peak(&m, &m.infos[i]) * r.size[i];
	}
	EQ("the infos' bytes at the peak add up to the peak", at_peak_bytes, r.peak);
	printf("%s random events: %d over %d infos in %d waves, peak %llu bytes\n",
	       failures ? "FAIL" : "ok  ", EVENTS, infos, waves, (unsigned long long)r.peak);
	ct_model_destroy(&m);
}

/* ---- small cases ---- */

static void temporary_peak(void)
{
	struct ct_model m;
	ct_model_init(&m);
	ct_model_info(&m, 100, CT_STACK_ROOT);
	ct_model_info(&m, 10, CT_STACK_ROOT);
	ct_model_alloc(&m, 1);
	ct_model_temp(&m, 0); /* 110 for an instant: the peak, with info 0 live once */
	ct_model_alloc(&m, 1);
	EQ("temporary peak bytes", m.t.peak, 110);
	EQ("temporary live at the peak", ct_info_at_peak(&m, &m.infos[0]), 1);
	EQ("its neighbour at the peak", ct_info_at_peak(&m, &m.infos[1]), 1);
	EQ("the neighbour now", m.infos[1].live, 2);
	ct_model_destroy(&m);
}

static void refused(void)
{
	struct ct_model m;
	ct_model_init(&m);
	check("an event of an undefined info is refused", ct_model_alloc(&m, 0) == -EINVAL);
	ct_model_info(&m, 8, CT_STACK_ROOT);
	check("a free of an info with nothing live is refused", ct_model_free(&m, 0) == -EINVAL);
	check("an INFO of an undefined stack is refused", ct_model_info(&m, 8, 99) == -EINVAL);
	check("a FRAME under an undefined parent is refused", ct_model_frame(&m, 99, 0) == -EINVAL);
	ct_model_destroy(&m);
}

static void sites_and_modules(void)
{
	struct ct_model m;
	ct_model_init(&m);
	struct ct_segment *seg = calloc(1, sizeof(*seg));
	*seg = (struct ct_segment){.vaddr = 0x1000, .memsz = 0x1000, .prot = CT_SEG_READ | CT_SEG_EXEC};
	struct ct_module mod = {.id = 0, .base = 0x400000, .path = strdup("/bin/x"), .segs = seg, .nseg = 1};
	check("MODULE", ct_model_module(&m, &mod) == 0);
	ct_model_frame(&m, CT_STACK_ROOT, 0x401010); /* node 2, in the module */
	ct_model_frame(&m, 2, 0x10);                 /* node 3 = 0x401020, in it too */
	ct_model_unmodule(&m, 0);
	ct_model_frame(&m, 2, 0x10); /* node 4 = 0x401030, after the module went */
	check("a frame in a module", ct_model_node_module(&m, 3) == &m.modules[0]);
	check("a frame after its module was unloaded", ct_model_node_module(&m, 4) == NULL);
	ct_model_info(&m, 16, 3);
	ct_model_info(&m, 32, 3); /* same stack: one site */
	ct_model_info(&m, 16, 4);
	for (int i = 0; i < 3; i++)
		ct_model_alloc(&m, 0);
	ct_model_alloc(&m, 1);
	ct_model_free(&m, 0);
	ct_model_temp(&m, 2);
	struct ct_site *s;
	long n = ct_model_sites(&m, &s);
	EQ("sites", n, 2);
	if (n == 2) {
		EQ("site of node 3: allocations", s[0].allocations, 4);
		EQ("site of node 3: bytes", s[0].bytes_allocated, 3 * 16 + 32);
		EQ("site of node 3: leaked bytes", s[0].leaked_bytes, 2 * 16 + 32);
		EQ("site of node 3: peak bytes", s[0].peak_bytes, 3 * 16 + 32);
		EQ("site of node 4: temporary", s[1].temporary, 1);
		EQ("site of node 4: peak allocations", s[1].peak_allocations, 0);
	}
	free(s);
	ct_model_destroy(&m);
}

static void series(void)
{
	struct ct_model m;
	ct_model_init(&m);
	ct_model_info(&m, 1000, CT_STACK_ROOT);
	/* 3000 points' worth of time, 1 ms apart, one allocation each: the series halves to stay
	 * within CT_SERIES_MAX and keeps every bucket's highest heap */
	for (int i = 0; i < 3000; i++) {
		ct_model_time(&m, 1000);
		ct_model_alloc(&m, 0);
	}
	check("the series stays within its bound", m.nseries <= CT_SERIES_MAX);
	EQ("the last point holds the final heap", m.series[m.nseries - 1].heap, 3000 * 1000);
	int rising = 1;
	for (size_t i = 1; i < m.nseries; i++)
		rising &=
		    m.series[i].heap >= m.series[i - 1].heap && m.series[i].time_us > m.series[i - 1].time_us;
	check("the series rises with a rising heap, in time order", rising);
	ct_model_destroy(&m);
}

/* INVALID and CRASH records (invalid.c): repeats counted once, undefined ids refused, the flood
 * bounded, and END's unmatched frees split into invalid ones and those allocated before tracing. */
static void invalid_frees(void)
{
	struct ct_model m;
	ct_model_init(&m);
	check("FRAME", ct_model_frame(&m, CT_STACK_ROOT, 0x401000) == 0); /* node 2 */
	check("INFO", ct_model_info(&m, 32, 2) == 0);                     /* info 0 */
	check("INVALID", ct_model_invalid(&m, 0, 0, 2, 2, 1) == 0);
	check("the same again", ct_model_invalid(&m, 0, 0, 2, 2, 1) == 0);
	check("another kind", ct_model_invalid(&m, 1, 0, 2, 0, 0) == 0);
	check("a later writer's kind", ct_model_invalid(&m, 9, 0, CT_STACK_ROOT, 0, 0) == 0);
	EQ("distinct invalid frees", m.ninvalid, 3);
	EQ("the repeat counted", m.invalid[0].count, 2);
	EQ("every record counted", m.t.invalid_frees, 4);
	check("an undefined stack is refused", ct_model_invalid(&m, 0, 0, 3, 0, 0) == -EINVAL);
	check("the truncated root is no stack",
	      ct_model_invalid(&m, 0, 0, CT_STACK_TRUNCATED, 0, 0) == -EINVAL);
	check("an undefined freed stack is refused", ct_model_invalid(&m, 0, 0, 2, 7, 0) == -EINVAL);
	check("an undefined block is refused", ct_model_invalid(&m, 0, 0, 2, 0, 2) == -EINVAL);
	ct_model_end(&m, 10, 0, 100);
	EQ("frees of blocks allocated before tracing: END's less the invalid",
	   ct_model_frees_before_tracing(&m), 6);
	ct_model_end(&m, 3, 0, 100);
	EQ("... never below zero", ct_model_frees_before_tracing(&m), 0);
	for (unsigned i = 0; i < CT_INVALID_MAX + 10; i++)
		check("a flood", ct_model_invalid(&m, 100 + i, 0, 2, 0, 0) == 0);
	EQ("a flood is bounded", m.ninvalid, CT_INVALID_MAX);
	EQ("... and the rest counted", m.invalid_others, 13);
	check("CRASH",
	      ct_model_crash(&m, 6, 2) == 0 && m.crashed && m.crash_signal == 6 && m.crash_stack == 2);
	check("a CRASH of an undefined stack is refused", ct_model_crash(&m, 11, 9) == -EINVAL);
	ct_model_destroy(&m);
}

/* ---- the timeline (timeline.c) ---- */

/* Every stack's slices increase within the run's site slices, and add up to its site's figures; the
 * whole heap's slices add up to the totals and reach the peak. */
static void timeline_sums(const struct ct_model *m, const char *what)
{
	struct ct_site *sites;
	long n = ct_model_sites(m, &sites);
	uint32_t nslices = ct_timeline_nslices(m), nsite = ct_timeline_site_nslices(m);
	uint64_t w = ct_timeline_width_us(m), sw = ct_timeline_site_width_us(m);
	int ordered = 1, sums = 1;
	check(what, n >= 0 && nslices <= CT_TIMELINE_SLICES);
	check("the site width is the heap's times a power of two",
	      sw >= w && sw % w == 0 && !((sw / w) & (sw / w - 1)));
	EQ("the site slices span the heap's", nsite, (nslices - 1) / (sw / w) + 1);
	for (long i = 0; i < n; i++) {
		size_t k;
		const struct ct_slice *v = ct_timeline_slices(m, sites[i].stack, &k);
		uint64_t a = 0, f = 0, t = 0, ab = 0, fb = 0;
		for (size_t j = 0; j < k; j++) {
			ordered &= (j == 0 || v[j].slice > v[j - 1].slice) && v[j].slice < nsite;
			a += v[j].allocations, f += v[j].frees, t += v[j].temporary;
			ab += v[j].alloc_bytes, fb += v[j].free_bytes;
		}
		const struct ct_site *s = &sites[i];
		sums &= a == s->allocations && t == s->temporary && ab == s->bytes_allocated &&
		        f == s->allocations - s->leaked_allocations && ab - fb == s->leaked_bytes;
	}
	const struct ct_slice_total *tot = ct_timeline_totals(m);
	uint64_t a = 0, t = 0, ab = 0, heap = 0;
	for (uint32_t j = 0; j < nslices; j++) {
		a += tot[j].allocations, t += tot[j].temporary, ab += tot[j].alloc_bytes;
		heap = tot[j].heap > heap ? tot[j].heap : heap;
	}
	check("slices increase within the run", ordered);
	check("per stack, the slices add up to the site's allocations, frees, temporary, bytes", sums);
	EQ("whole heap: allocations", a, m->t.allocations);
	EQ("whole heap: temporary", t, m->t.temporary);
	EQ("whole heap: bytes", ab, m->t.bytes_allocated);
	EQ("whole heap: the highest slice is the peak", heap, m->t.peak);
	EQ("whole heap: the last slice holds the heap in use", tot[nslices - 1].heap >= m->t.current, 1);
	check("the entries stay within the budget", m->tl.entries <= ct_timeline_budget(&m->tl));
	free(sites);
}

/* Random events over 5 s with random steps of the clock, and queries while reading: the width
 * doubles as the run grows and the slices keep every sum. */
static void timeline_random(void)
{
	struct ct_model m;
	unsigned x = 99;
	ct_model_init(&m);
	for (int i = 0; i < 30; i++) {
		ct_model_frame(&m, CT_STACK_ROOT, 0x1000 + i);
		ct_model_info(&m, 8 + i, (uint64_t)(CT_STACK_FIRST + i / 2)); /* two infos per stack */
	}
	EQ("the width starts at 1 us", ct_timeline_width_us(&m), 1);
	uint64_t now = 0;
	for (int i = 0; i < 200000; i++) {
		x = x * 1103515245u + 12345u;
		unsigned id = (x >> 8) % 30, op = (x >> 16) % 8;
		if (op == 0 && now < 5000000) {
			uint64_t step = (x >> 20) % 200;
			ct_model_time(&m, step), now += step;
		} else if (op < 4 || !m.infos[id].live) {
			ct_model_alloc(&m, id);
		} else if (op == 4) {
			ct_model_temp(&m, id);
		} else if (op == 5) {
			ct_model_free_temp(&m, id);
		} else {
			ct_model_free(&m, id);
		}
		if (i % 50000 == 25000) { /* a query mid-slice: the slice's later events join its entry */
			size_t k;
			ct_timeline_slices(&m, CT_STACK_FIRST, &k);
		}
	}
	ct_model_end(&m, 0, 0, now + 777);
	uint64_t w = ct_timeline_width_us(&m);
	check("the width is a power of two", w && !(w & (w - 1)));
	check("the slices span the run",
	      w * ct_timeline_nslices(&m) > now + 777 && w * (ct_timeline_nslices(&m) - 1) <= now + 777);
	timeline_sums(&m, "random: the run's slices");
	size_t k;
	check("a stack without an info has no slices", !ct_timeline_slices(&m, CT_STACK_ROOT, &k) && k == 0);
	ct_model_destroy(&m);
}

/* 2000 stacks busy in each of 1000 microseconds: 2M entries at 1 us, over the budget of 2^20, so the
 * sites' width doubles early (the whole heap's stays); the sums hold. */
static void timeline_budget(void)
{
	struct ct_model m;
	ct_model_init(&m);
	enum { STACKS = 2000 };
	for (int i = 0; i < STACKS; i++) {
		ct_model_frame(&m, CT_STACK_ROOT, 0x1000 + i);
		ct_model_info(&m, 16, (uint64_t)(CT_STACK_FIRST + i));
	}
	for (int t = 0; t < 1000; t++) {
		ct_model_time(&m, 1);
		for (int i = 0; i < STACKS; i++)
			if (ct_model_alloc(&m, (uint64_t)i) < 0 ||
			    (t % 2 && ct_model_free(&m, (uint64_t)i) < 0))
				check("budget: events", 0);
	}
	check("budget: the sites' width grew although the run spans 1000 us",
	      ct_timeline_site_width_us(&m) >= 2);
	EQ("budget: the whole heap's stayed at 1 us", ct_timeline_width_us(&m), 1);
	EQ("budget: entries within it", m.tl.entries <= CT_TIMELINE_BUDGET, 1);
	timeline_sums(&m, "budget: the run's slices");
	ct_model_destroy(&m);
}

/* 4096 stacks busy all through a 3 s run (1 ms steps, every stack allocating at each, freeing at
 * every other): 12M site entries at the heap's width, over the budget of 2^20, so the sites'
 * slices coarsen while the whole heap keeps its full resolution (over 512 slices); each heap slice's
 * allocations are those of its steps, and the sums hold. */
static void timeline_many_stacks(void)
{
	enum { STACKS = 4096, STEPS = 3000, STEP_US = 1000 };
	static uint32_t per_slice[CT_TIMELINE_SLICES * 2];
	struct ct_model m;
	ct_model_init(&m);
	for (int i = 0; i < STACKS; i++) {
		ct_model_frame(&m, CT_STACK_ROOT, 0x1000 + i);
		ct_model_info(&m, 16, (uint64_t)(CT_STACK_FIRST + i));
	}
	for (int t = 0; t < STEPS; t++) {
		ct_model_time(&m, STEP_US);
		for (int i = 0; i < STACKS; i++)
			if (ct_model_alloc(&m, (uint64_t)i) < 0 ||
			    (t % 2 && ct_model_free(&m, (uint64_t)i) < 0))
				check("many stacks: events", 0);
	}
	ct_model_end(&m, 0, 0, (uint64_t)STEPS * STEP_US + 1);
	uint64_t w = ct_timeline_width_us(&m), sw = ct_timeline_site_width_us(&m);
	uint32_t n = ct_timeline_nslices(&m);
	check("many stacks: the whole heap keeps its resolution (512 to 1024 slices)",
	      n > 512 && n <= CT_TIMELINE_SLICES);
	EQ("many stacks: its width is the run's", w, 4096);
	check("many stacks: the sites' slices coarsened", sw > w && ct_timeline_site_nslices(&m) < n);
	EQ("many stacks: entries within the budget", m.tl.entries <= CT_TIMELINE_BUDGET, 1);
	memset(per_slice, 0, sizeof(per_slice));
	for (int t = 0; t < STEPS; t++) /* step t's events are at (t + 1) ms */
		per_slice[(uint64_t)(t + 1) * STEP_US / w] += STACKS;
	const struct ct_slice_total *tot = ct_timeline_totals(&m);
	int exact = 1;
	for (uint32_t j = 0; j < n; j++)
		exact &= tot[j].allocations == per_slice[j];
	check("many stacks: each heap slice's allocations are its steps'", exact);
	timeline_sums(&m, "many stacks: the run's slices");
	printf("ok   many stacks: %u heap slices of %llu us, %u site slices of %llu us, %llu entries\n", n,
	       (unsigned long long)w, ct_timeline_site_nslices(&m), (unsigned long long)sw,
	       (unsigned long long)m.tl.entries);
	ct_model_destroy(&m);
}

int main(void)
{
	invalid_frees();
	random_events(INFOS, 1, 12345);
	random_events(3, 7, 777);
	random_events(2, 50, 4242);
	temporary_peak();
	refused();
	sites_and_modules();
	series();
	timeline_random();
	timeline_budget();
	timeline_many_stacks();
	if (failures)
		printf("%d check(s) failed\n", failures);
	else
		printf("ok   all model checks\n");
	return failures ? 1 : 0;
}
