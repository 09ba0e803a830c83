/* SPDX-License-Identifier: MIT */
/* Takes argv[1] KiB of heap in 64 KiB blocks, each written to, through the four ways that can fail
 * for want of memory and be tried again (block i by i % 4): malloc, calloc, realloc of a 16-byte
 * block, posix_memalign (64-byte alignment); then frees every other block. N = KiB / 64 blocks
 * (a multiple of 4): N + N / 4 allocations (the 16-byte blocks too), N / 4 + N / 2 frees (the
 * realloc'd 16-byte blocks, every other big block), N * 65536 + N / 4 * 16 bytes.
 * Writes "blocks: N\n" and exits 0 when every allocation succeeded; writes "failed at block I\n" and
 * exits 3 at the first that did not, so a program that ctrack deprived of memory says so.
 * No stdio (its buffer would be one allocation more). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK (64 * 1024)
#define MAX_BLOCKS 4096 /* 256 MiB */

static void *v[MAX_BLOCKS];

static void say(const char *what, unsigned long n)
{
	char buf[64], digits[24];
	size_t len = strlen(what), k = 0;
	do
		digits[k++] = (char)('0' + n % 10);
	while ((n /= 10));
	memcpy(buf, what, len);
	while (k)
		buf[len++] = digits[--k];
	buf[len++] = '\n';
	if (write(1, buf, len) < 0)
		_exit(2);
}

static void *block(unsigned long i)
{
	void *p = NULL;
	switch (i % 4) {
	case 0:
		return malloc(BLOCK);
	case 1:
		return calloc(1, BLOCK);
	case 2:
		p = malloc(16);
		if (!p)
			return NULL;
		void *q = realloc(p, BLOCK);
		if (!q)
			free(p);
		return q;
	default:
		return posix_memalign(&p, 64, BLOCK) == 0 ? p : NULL;
	}
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) / 64 / 4 * 4 : 0;
	if (!n || n > MAX_BLOCKS)
		return 2;
	for (unsigned long i = 0; i < n; i++) {
		if (!(v[i] = block(i))) {
			say("failed at block ", i);
			return 3;
		}
		memset(v[i], (int)i, BLOCK);
	}
	for (unsigned long i = 0; i < n; i += 2)
		free(v[i]);
	say("blocks: ", n);
	return 0;
}
