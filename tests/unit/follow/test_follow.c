/* SPDX-License-Identifier: MIT */
/* The reader's follow mode (reader.h's ct_read_trace_follow), against a whole read: a trace written
 * a few bytes at a time (its records and zstd blocks cut at every length the steps give) is read to
 * the same model, with no damage, and ends at its END record; a trace whose writing stops short is
 * a cut, not damage. Usage: test-follow GEN_TRACE (tests/unit/reader's generator, --bench). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model.h"
#include "reader.h"

static int failures;

#define CHECK(what, cond) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "FAIL %s: %s (%s)\n", label, what, #cond); \
			failures++; \
		} \
	} while (0)

/* The writer this test plays: the source's bytes appended to the followed file, `step` at a time
 * at each end the reader reaches, up to `upto`; after that the reader is told to stop (a writer gone). */
struct writer {
	const unsigned char *src;
	size_t len, done, upto, step;
	FILE *out;
	unsigned ends, ticks;
	int ended; /* the reader said the trace ended */
};

static int tick(void *arg, int at_end, int ended, char *err, size_t errlen)
{
	struct writer *w = arg;
	(void)err, (void)errlen;
	w->ticks++;
	if (!at_end)
		return 0;
	w->ends++;
	if (ended)
		return w->ended = 1;
	if (w->done >= w->upto)
		return 1; /* nothing more will come */
	size_t n = w->upto - w->done < w->step ? w->upto - w->done : w->step;
	if (fwrite(w->src + w->done, 1, n, w->out) != n || fflush(w->out))
		return -1;
	w->done += n;
	return 0;
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	long n = f && !fseek(f, 0, SEEK_END) ? ftell(f) : -1;
	if (n > 0 && !fseek(f, 0, SEEK_SET) && (buf = malloc((size_t)n)) &&
	    fread(buf, 1, (size_t)n, f) != (size_t)n)
		free(buf), buf = NULL;
	if (f)
		fclose(f);
	*len = n > 0 ? (size_t)n : 0;
	return buf;
}

/* Follows a file fed `step` bytes at a time up to `upto` of src; compares with whole (when whole). */
static void follow(const char *label, const char *path, const unsigned char *src, size_t len, size_t upto,
                   size_t step, const struct ct_model *whole)
{
	struct writer w = {.src = src, .len = len, .upto = upto, .step = step, .out = fopen(path, "wb")};
	struct ct_model m;
	char err[512] = "";
	const struct ct_follow_hooks hooks = {tick, &w};
	if (!w.out || ct_model_init(&m) < 0) {
		fprintf(stderr, "FAIL %s: cannot set up\n", label);
		failures++;
		return;
	}
	int rc = ct_read_trace_follow(path, &m, err, sizeof(err), &hooks);
	fclose(w.out);
	CHECK("read without error", rc == 0);
	if (rc)
		fprintf(stderr, "  error: %s\n", err);
	CHECK("no damage", !m.damaged);
	CHECK("it waited at ends", w.ends >= (upto + step - 1) / step);
	if (whole) {
		CHECK("it saw the END record", w.ended);
		CHECK("complete", m.complete);
		CHECK("the same totals", !memcmp(&m.t, &whole->t, sizeof(m.t)));
		CHECK("the same infos and nodes", m.ninfos == whole->ninfos && m.nnodes == whole->nnodes);
	} else {
		CHECK("cut: not complete", !m.complete);
		CHECK("cut: not ended", !w.ended);
	}
	ct_model_destroy(&m);
}

int main(int argc, char **argv)
{
	const char *label = "setup";
	char dir[] = "/tmp/ctrack-follow-XXXXXX", trace[64], followed[64], cmd[512];
	if (argc != 2 || !mkdtemp(dir))
		return fprintf(stderr, "usage: test-follow GEN_TRACE\n"), 2;
	snprintf(trace, sizeof(trace), "%s/whole.zst", dir);
	snprintf(followed, sizeof(followed), "%s/followed.zst", dir);
	snprintf(cmd, sizeof(cmd), "'%s' --bench 200000 '%s'", argv[1], trace);
	size_t len = 0;
	unsigned char *src = system(cmd) == 0 ? slurp(trace, &len) : NULL;
	struct ct_model whole;
	char err[512];
	CHECK("the generator's trace", src && len > 1000);
	CHECK("a whole read", src && ct_model_init(&whole) == 0 &&
	                          ct_read_trace(trace, &whole, err, sizeof(err)) == 0 && whole.complete);
	if (failures)
		return 1;
	static const size_t steps[] = {1, 7, 100, 4093, 1 << 20};
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		char name[64];
		snprintf(name, sizeof(name), "whole, %zu bytes at a time", steps[i]);
		label = name;
		if (steps[i] == 1 && len > 200000)
			continue; /* a byte at a time costs a read per byte: the smaller steps cover it */
		follow(name, followed, src, len, len, steps[i], &whole);
		snprintf(name, sizeof(name), "cut at %zu, %zu bytes at a time", len * 2 / 3, steps[i]);
		follow(name, followed, src, len, len * 2 / 3, steps[i], NULL);
	}
	ct_model_destroy(&whole);
	free(src);
	unlink(trace);
	unlink(followed);
	rmdir(dir);
	printf("%d failures\n", failures);
	return failures != 0;
}
