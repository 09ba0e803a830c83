/* SPDX-License-Identifier: MIT */
/* The comparison shared by the unwinder tests: ct_unwind against libunwind from one call site,
 * plus errno preservation and "ips[0] is the return address into this function". */
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>

#include "capture.h"
#include "check.h"

static atomic_int failures, checks;
/* Cut walks of checks run by signal handlers in the middle of another check of the same thread,
 * so the interrupted check does not count them as its own. */
static __thread int depth;
static __thread unsigned long nested_cuts;

static void print_walk(const char *what, const struct ctu_walk *w)
{
	fprintf(stderr, "  %s: n=%d truncated=%d\n", what, w->n, w->truncated);
	for (int i = 0; i < w->n; i++) {
		Dl_info info;
		int found = dladdr((void *)w->ips[i], &info);
		const char *sym = found && info.dli_sname ? info.dli_sname : "?";
		fprintf(stderr, "    #%d %#lx %s (%s+%#lx)\n", i, (unsigned long)w->ips[i], sym,
		        found ? info.dli_fname : "?",
		        found ? (unsigned long)(w->ips[i] - (uintptr_t)info.dli_fbase) : 0ul);
	}
}

static int same_walk(const struct ctu_walk *a, const struct ctu_walk *b)
{
	if (a->n != b->n || a->truncated != b->truncated)
		return 0;
	for (int i = 0; i < a->n; i++)
		if (a->ips[i] != b->ips[i])
			return 0;
	return 1;
}

static const char *verdict(const struct ctu_walk *fast, const struct ctu_walk *slow, int max,
                           unsigned long cut, uintptr_t self)
{
	if (!same_walk(fast, slow))
		return "fast and slow walks differ";
	if (fast->from_differs)
		return "the walk from the caller's frame (ct_unwind_from) differs";
	if (fast->replay_differs)
		return "a replay (ct_unwind_replay) stood for another walk";
	if (fast->shared_wrong)
		return "ct_unwind_shared() counted frames the walk before did not end with";
	if (fast->n < 2 || fast->n > max)
		return "implausible frame count";
	/* The return address into ctt_check, from the call just below: a few dozen bytes in. */
	if (fast->ips[0] <= self || fast->ips[0] - self > 1024)
		return "ips[0] is not the return address into the caller";
	if (cut)
		return "the walk was cut short";
	return NULL;
}

__attribute__((noinline)) void ctt_check(const char *where, int max)
{
	struct ctu_walk fast, slow; /* on the stack: a signal handler may check in the middle */
	unsigned long before = ctu_cuts(), nested_before = nested_cuts;

	depth++;
	errno = 4242;
	ctu_capture(max, &fast, &slow);
	int saved_errno = errno;
	unsigned long all = ctu_cuts() - before, own = all - (nested_cuts - nested_before);
	if (--depth > 0)
		nested_cuts += all;
	const char *bad = verdict(&fast, &slow, max, own, (uintptr_t)&ctt_check);
	if (!bad && saved_errno != 4242)
		bad = "errno changed";
	atomic_fetch_add(&checks, 1);
	if (!bad)
		return;
	if (atomic_fetch_add(&failures, 1) < 5) {
		fprintf(stderr, "FAIL %s (max %d): %s\n", where, max, bad);
		print_walk("fast", &fast);
		print_walk("slow", &slow);
	}
}

int ctt_report(const char *name)
{
	int f = atomic_load(&failures), c = atomic_load(&checks);
	unsigned long r = ctu_replays();
	printf("%s: %d checks, %d failures, %lu replays checked\n", name, c, f, r);
	return f || !c || !r;
}
