/* SPDX-License-Identifier: MIT */
/* Following a trace being written (follow.h): the reader's follow hook (reader.h) decides at each end
 * of the bytes so far whether the trace ended, its writer is gone (one more read then, for what it
 * flushed last) or to wait there, a tenth of a second at a time, for the view's keys; and it has the
 * view draw about once a second, with the rates of allocations and frees since the last draw. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "follow.h"
#include "procstat.h"
#include "reader.h"

#define WAIT_MS 100                 /* a wait at the end of the bytes: the shim flushes every 100 ms */
#define DRAW_NS 1000000000ull       /* the view is drawn about once a second */
#define NO_WRITER_NS 10000000000ull /* a trace that names no writer after 10 s: nobody writes it */
#define PID_SLACK_NS 1000000000ull  /* /proc's start time is in clock ticks, the trace's in ns */

struct follow {
	const struct ct_follow_view *v;
	struct ct_model *m;
	struct ct_follow_status *st;
	uint64_t hint;     /* the writer's pid as the caller knows it, or 0 */
	uint64_t began_ns; /* wall clock when the following began */
	uint64_t drawn_ns; /* ... when the view last drew */
	uint64_t drawn_us; /* the trace's clock then */
	uint64_t drawn_allocs, drawn_frees;
	unsigned draws;
	int live_since_draw; /* the reader caught up since the last draw: rates by the wall clock */
	int gone_once;       /* the writer was found gone at the end: one more read, then the end */
	int quit;            /* the view asked to stop */
};

static uint64_t clock_ns(clockid_t id)
{
	struct timespec t;
	clock_gettime(id, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Whether process pid is gone: no such process, its zombie, or (start_ns given) a later process
 * that took its pid. */
static int process_gone(uint64_t pid, uint64_t start_ns)
{
	uint64_t ppid, start;
	int rc = ct_proc_stat(pid, &ppid, &start);
	if (rc < 0)
		return rc == -ENOENT; /* another error (no permission): it may run */
	return start_ns && start > start_ns + PID_SLACK_NS;
}

/* 1 when the trace's writer is gone, 0 when it runs or is not known yet, -1 (err) when the trace has
 * named none for NO_WRITER_NS. */
static int writer_gone(struct follow *f, char *err, size_t errlen)
{
	const struct ct_process *p = &f->m->proc;
	f->st->writer = f->hint ? f->hint : p->seen ? p->pid : 0;
	if (f->st->writer)
		return process_gone(f->st->writer, f->hint ? 0 : p->start_unix_ns);
	if (clock_ns(CLOCK_MONOTONIC) - f->began_ns < NO_WRITER_NS)
		return 0;
	snprintf(err, errlen, "'%s' names no process writing it after %llu s: is it being written?",
	         f->st->path, NO_WRITER_NS / 1000000000ull);
	return -1;
}

/* The figures that change between draws into st. */
static void update(struct follow *f)
{
	struct ct_follow_status *st = f->st;
	const struct ct_model *m = f->m;
	uint64_t now = clock_ns(CLOCK_MONOTONIC), wall = clock_ns(CLOCK_REALTIME);
	const struct ct_totals *t = &m->t;
	double secs = f->live_since_draw && f->draws ? (double)(now - f->drawn_ns) / 1e9
	                                             : (double)(t->now_us - f->drawn_us) / 1e6;
	if (st->state != CT_FOLLOW_LIVE) /* over the whole run */
		secs = (double)ct_model_runtime_us(m) / 1e6, f->drawn_allocs = f->drawn_frees = 0;
	st->alloc_rate = secs > 0 ? (double)(t->allocations - f->drawn_allocs) / secs : 0;
	st->free_rate = secs > 0 ? (double)(t->frees - f->drawn_frees) / secs : 0;
	int running = st->state == CT_FOLLOW_LIVE && st->caught_up && m->proc.seen;
	st->elapsed_us = running && wall > m->proc.start_unix_ns ? (wall - m->proc.start_unix_ns) / 1000
	                                                         : ct_model_runtime_us(m);
	f->drawn_ns = now, f->drawn_us = t->now_us;
	f->drawn_allocs = t->allocations, f->drawn_frees = t->frees;
	f->live_since_draw = 0;
	f->draws++;
}

static void draw(struct follow *f)
{
	update(f);
	f->v->draw(f->v->arg, f->m, f->st);
}

/* Waits up to ms for the view's keys and acts on them. 1 when the view asked to stop, else 0. */
static int wait_keys(struct follow *f, int ms)
{
	const struct ct_follow_view *v = f->v;
	struct pollfd pfd = {.fd = v->key_fd, .events = POLLIN};
	int n = poll(&pfd, v->key_fd >= 0, ms);
	int rc = n > 0 ? v->keys(v->arg) : 0;
	int again = v->redraw && *v->redraw;
	if (again)
		*v->redraw = 0;
	if (rc == 2 || again) /* the figures of the last draw: rates over a keystroke's time are noise */
		v->draw(v->arg, f->m, f->st);
	f->quit |= rc == 1 || (v->stop && *v->stop);
	return f->quit;
}

/* The reader's hook (reader.h). */
static int tick(void *arg, int at_end, int ended, char *err, size_t errlen)
{
	struct follow *f = arg;
	if (ended) {
		f->st->state = CT_FOLLOW_ENDED;
		return 1;
	}
	if (!at_end) {
		f->gone_once = 0;
		if (wait_keys(f, 0))
			return 1;
	} else {
		f->st->caught_up = f->live_since_draw = 1;
		int gone = writer_gone(f, err, errlen);
		if (gone < 0)
			return -1;
		if (gone && f->gone_once) {
			f->st->state = CT_FOLLOW_GONE;
			return 1;
		}
		f->gone_once = gone;
		if (!gone && wait_keys(f, WAIT_MS))
			return 1;
	}
	if (clock_ns(CLOCK_MONOTONIC) - f->drawn_ns >= DRAW_NS)
		draw(f);
	return 0;
}

int ct_follow_run(const char *path, uint64_t writer, struct ct_model *m, const struct ct_follow_view *v,
                  struct ct_follow_status *st, char *err, size_t errlen)
{
	*st = (struct ct_follow_status){.path = path, .state = CT_FOLLOW_LIVE, .writer = writer};
	struct follow f = {.v = v, .m = m, .st = st, .hint = writer, .began_ns = clock_ns(CLOCK_MONOTONIC)};
	f.drawn_ns = f.began_ns;
	const struct ct_follow_hooks hooks = {tick, &f};
	int rc = ct_read_trace_follow(path, m, err, errlen, &hooks);
	struct stat sb;
	if (f.quit)
		st->state = CT_FOLLOW_STOPPED;
	if (rc < 0 && f.quit && !m->proc.seen) /* quit before the trace began: nothing to say */
		return 0;
	if (rc < 0 && st->state == CT_FOLLOW_GONE && stat(path, &sb) == 0 && sb.st_size == 0)
		snprintf(err, errlen, "'%s' is empty: its writer (pid %llu) is gone without writing to it",
		         path, (unsigned long long)st->writer);
	if (rc < 0)
		return -1;
	if (m->damaged)
		st->state = CT_FOLLOW_DAMAGED;
	else if (st->state == CT_FOLLOW_LIVE) /* the end of a FIFO's bytes */
		st->state = m->complete ? CT_FOLLOW_ENDED : CT_FOLLOW_GONE;
	st->caught_up = 1;
	draw(&f);
	return 0;
}
