/* SPDX-License-Identifier: MIT */
/* libFuzzer target for the trace reader and the model (reader.c, model.c): any input must give a
 * model or a one-line error, never a crash, a hang or memory beyond the reader's bounds. The first
 * byte picks what the rest is: even, a record stream (header and records), compressed here so the
 * fuzzer's mutations reach the record decoder; odd, the file's bytes as they are (zstd framing,
 * foreign files). The seeds in tests/fuzz/corpus are real traces of both kinds. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "model.h"
#include "reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fd = -1;
static char path[64];

/* The input as a file: one memfd, rewritten for each input (the reader opens it by path). */
static int put(const void *p, size_t n)
{
	if (fd < 0) {
		fd = memfd_create("fuzz-trace", MFD_CLOEXEC);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	return fd < 0 || ftruncate(fd, 0) < 0 || pwrite(fd, p, n, 0) != (ssize_t)n ? -1 : 0;
}

static void read_it(void)
{
	struct ct_model m;
	struct ct_site *sites = NULL;
	char err[512];
	if (ct_model_init(&m) < 0)
		return;
	if (ct_read_trace(path, &m, err, sizeof(err)) == 0 && ct_model_sites(&m, &sites) >= 0)
		free(sites);
	ct_model_destroy(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] & 1) {
		if (put(data + 1, size - 1) == 0)
			read_it();
		return 0;
	}
	static ZSTD_CCtx *cctx; /* one for every input: a context per call would dominate the time */
	size_t cap = ZSTD_compressBound(size - 1);
	void *z = malloc(cap);
	if (!cctx)
		cctx = ZSTD_createCCtx();
	size_t n = z && cctx ? ZSTD_compressCCtx(cctx, z, cap, data + 1, size - 1, 1) : 0;
	if (z && cctx && !ZSTD_isError(n) && put(z, n) == 0)
		read_it();
	free(z);
	return 0;
}
