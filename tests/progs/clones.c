/* SPDX-License-Identifier: MIT */
/* Allocating functions that gcc -O2 clones under suffixed names, built at -O2 -g by
 * tests/e2e/test_clones.py (which reads the clones' names from nm): sized_alloc.isra.0,
 * tagged_alloc.constprop.0.isra.0, get_buffer.part.0 and checksum.cold. Shown as sized_alloc,
 * tagged_alloc, get_buffer and checksum, as addr2line and gdb name them.
 * `clones` leaks 25 bytes (sized_alloc, 1 block), 56 (tagged_alloc, 2), 40 (get_buffer, 1) and 16
 * (checksum, 1); nothing is freed. `clones intl` instead looks up a message of a missing catalog
 * (LANGUAGE=fr): glibc's _nl_make_l10nflist.localalias allocates. Exit 0. */
#include <libintl.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>

static void *volatile sink;

struct request {
	int kind;
	char name[32];
	size_t size;
};

/* IPA-SRA: only r->size is read, so gcc passes it alone to sized_alloc.isra.0. */
static __attribute__((noinline)) void *sized_alloc(const struct request *r)
{
	void *p = malloc(r->size); /* LINE isra */
	sink = p;
	return p;
}

/* IPA-CP: every call passes tag 16, so gcc clones tagged_alloc.constprop.0 for it. */
static __attribute__((noinline)) void *tagged_alloc(size_t n, int tag)
{
	char *p = malloc(n + (size_t)tag); /* LINE constprop */
	sink = p;
	return p;
}

/* Partial inlining: the check of buffer is inlined into callers, the rest is get_buffer.part.0. */
static char *buffer;

static char *get_buffer(size_t n)
{
	if (buffer)
		return buffer;
	buffer = malloc(n); /* LINE part */
	for (size_t i = 0; i < n; i++)
		buffer[i] = (char)(i * 7 + (i >> 3));
	memset(buffer, (int)n, n / 2);
	return buffer;
}

__attribute__((cold, noinline)) void note_zero(void)
{
	sink = NULL;
}

/* The branch that calls a cold function is moved to checksum.cold, another symbol (zeros take it). */
__attribute__((noinline)) unsigned checksum(const char *s, size_t n)
{
	unsigned h = 0;
	for (size_t i = 0; i < n; i++)
		h = h * 31 + (unsigned char)s[i];
	if (h == 0) {
		sink = malloc(n); /* LINE cold */
		note_zero();
	}
	return h;
}

int main(int argc, char **argv)
{
	if (argc == 2) {
		setlocale(LC_ALL, "");
		bindtextdomain("ctrack-clones", "/nonexistent");
		textdomain("ctrack-clones");
		return gettext(argv[1])[0] != argv[1][0]; /* LINE intl */
	}
	struct request r = {.kind = argc, .size = 24 + (size_t)argc};
	sized_alloc(&r);
	tagged_alloc((size_t)argc * 8, 16);
	tagged_alloc((size_t)argc * 16, 16);
	sink = get_buffer((size_t)argc * 40);
	sink = get_buffer((size_t)argc * 48);
	char zeros[64] = {0};
	return (int)checksum(zeros, (size_t)argc * 16) != 0;
}
