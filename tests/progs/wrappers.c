/* SPDX-License-Identifier: MIT */
/* Allocator wrappers, functions that allocate for themselves, and a thread, for the report's sites
 * (tests/e2e/test_sites.py). Everything leaks; no stdio. Exit 0, or 1 if an allocation failed.
 *
 * Wrappers, each reached from three or more functions, passing their callers' sizes on:
 *   xmalloc(n): malloc(n) (LINE XMALLOC). Called by
 *     parse_a: 1 x xmalloc(100) (LINE CALL_A)   100 bytes in 1
 *     parse_b: 2 x xmalloc(200) (LINE CALL_B)   400 bytes in 2
 *     parse_c: 3 x xmalloc(300) (LINE CALL_C)   900 bytes in 3
 *     parse_d: 4 x xmalloc(400) (LINE CALL_D)  1600 bytes in 4
 *   so 3000 bytes in 10 allocations at LINE XMALLOC.
 *   xmalloc2(n) calls xmalloc_impl(n) (LINE XMALLOC2), its only caller, which mallocs (LINE IMPL):
 *     load_a: 5 x xmalloc2(10) (LINE LOAD_A)     50 bytes in 5
 *     load_b: 6 x xmalloc2(20) (LINE LOAD_B)    120 bytes in 6
 *     load_c: 7 x xmalloc2(30) (LINE LOAD_C)    210 bytes in 7
 *   so 380 bytes in 18 allocations at LINE IMPL.
 * Functions that allocate for themselves (not wrappers):
 *   make_node(name): a constructor: calloc(1, 48) (LINE NODE), then strdup(name) (LINE NAME), a
 *     4-byte name "abc". Called by new_a once (LINE NEW_A), new_b twice (LINE NEW_B), new_c three
 *     times (LINE NEW_C): at LINE NODE 48 / 96 / 144 bytes, 288 bytes in 6 allocations; strdup
 *     4 / 8 / 12, 24 bytes in 6.
 *   make_buf(n): malloc(24), a header of fixed size (LINE BUF_HEAD), then malloc(n) (LINE BUF_DATA).
 *     Called by buf_a with n = 8 (LINE BUF_A), buf_b with 16 (LINE BUF_B), buf_c with 32 (LINE BUF_C),
 *     once each: 72 bytes in 3 at BUF_HEAD, 56 bytes in 3 at BUF_DATA.
 *   single_use(n): malloc(n) (LINE SINGLE), called from one place, run_single (LINE RUN_SINGLE),
 *     with n = 1, 2, 3: 6 bytes in 3.
 * A thread: thread_main calls thread_leak, which mallocs 77 bytes (LINE THREAD_LEAK).
 * Program's own figures: 10 + 18 + 12 + 6 + 3 + 1 = 50 allocations, 3000 + 380 + 312 + 128 + 6 + 77 =
 * 3903 bytes, all leaked (glibc's thread creation allocates a little more: its TLS vector). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

static int bad;
static void *volatile sink;

static void keep(void *p)
{
	if (!p)
		bad = 1;
	sink = p;
}

NOINLINE static void *xmalloc(size_t n)
{
	void *p = malloc(n); /* LINE XMALLOC */
	if (!p)
		abort();
	return p;
}

NOINLINE static void parse_a(void)
{
	keep(xmalloc(100)); /* LINE CALL_A */
}

NOINLINE static void parse_b(void)
{
	for (int i = 0; i < 2; i++)
		keep(xmalloc(200)); /* LINE CALL_B */
}

NOINLINE static void parse_c(void)
{
	for (int i = 0; i < 3; i++)
		keep(xmalloc(300)); /* LINE CALL_C */
}

NOINLINE static void parse_d(void)
{
	for (int i = 0; i < 4; i++)
		keep(xmalloc(400)); /* LINE CALL_D */
}

NOINLINE static void *xmalloc_impl(size_t n)
{
	void *p = malloc(n); /* LINE IMPL */
	if (!p)
		abort();
	return p;
}

NOINLINE static void *xmalloc2(size_t n)
{
	return xmalloc_impl(n); /* LINE XMALLOC2 */
}

NOINLINE static void load_a(void)
{
	for (int i = 0; i < 5; i++)
		keep(xmalloc2(10)); /* LINE LOAD_A */
}

NOINLINE static void load_b(void)
{
	for (int i = 0; i < 6; i++)
		keep(xmalloc2(20)); /* LINE LOAD_B */
}

NOINLINE static void load_c(void)
{
	for (int i = 0; i < 7; i++)
		keep(xmalloc2(30)); /* LINE LOAD_C */
}

struct node {
	char *name;
	char pad[40];
};

NOINLINE static struct node *make_node(const char *name)
{
	struct node *n = calloc(1, sizeof(*n)); /* LINE NODE */
	if (!n)
		abort();
	n->name = strdup(name); /* LINE NAME */
	return n;
}

NOINLINE static void new_a(void)
{
	keep(make_node("abc")); /* LINE NEW_A */
}

NOINLINE static void new_b(void)
{
	for (int i = 0; i < 2; i++)
		keep(make_node("abc")); /* LINE NEW_B */
}

NOINLINE static void new_c(void)
{
	for (int i = 0; i < 3; i++)
		keep(make_node("abc")); /* LINE NEW_C */
}

struct buf {
	char *data;
	size_t len, cap;
};

NOINLINE static struct buf *make_buf(size_t n)
{
	struct buf *b = malloc(sizeof(*b)); /* LINE BUF_HEAD */
	if (!b)
		abort();
	b->data = malloc(n); /* LINE BUF_DATA */
	b->len = 0, b->cap = n;
	return b;
}

NOINLINE static void buf_a(void)
{
	keep(make_buf(8)); /* LINE BUF_A */
}

NOINLINE static void buf_b(void)
{
	keep(make_buf(16)); /* LINE BUF_B */
}

NOINLINE static void buf_c(void)
{
	keep(make_buf(32)); /* LINE BUF_C */
}

NOINLINE static void *single_use(size_t n)
{
	return malloc(n); /* LINE SINGLE */
}

NOINLINE static void run_single(void)
{
	for (size_t n = 1; n <= 3; n++)
		keep(single_use(n)); /* LINE RUN_SINGLE */
}

NOINLINE static void thread_leak(void)
{
	keep(malloc(77)); /* LINE THREAD_LEAK */
}

static void *thread_main(void *arg)
{
	(void)arg;
	thread_leak();
	return NULL;
}

int main(void)
{
	parse_a();
	parse_b();
	parse_c();
	parse_d();
	load_a();
	load_b();
	load_c();
	new_a();
	new_b();
	new_c();
	buf_a();
	buf_b();
	buf_c();
	run_single();
	pthread_t t;
	if (pthread_create(&t, NULL, thread_main, NULL) || pthread_join(t, NULL))
		return 1;
	return bad;
}
