/* SPDX-License-Identifier: MIT */
/* Calls that are the last instruction of their function, built at -O2 -g -falign-functions=1 by
 * tests/e2e/test_callsite.py, which checks each premise in the disassembly: fail_with ends with the
 * call to the noreturn die_alloc, so its return address is the first byte of the next function
 * (after); built with -DTAILCALL_LIB -nostartfiles as libtailcall.so, edge_fail ends with the call to
 * edge_die and is the last code of the library, so its return address lies past the library's
 * executable segment.
 * `tailcall` leaks 40 bytes in 1 allocation (die_alloc) and exits 0; `tailcall edge` leaks 24 bytes
 * in 1 allocation (edge_die) and exits 0. The markers name each frame's line. */
#include <stdlib.h>

static void *volatile sink;

#ifdef TAILCALL_LIB

__attribute__((noinline, noreturn)) void edge_die(int code)
{
	sink = malloc(24); /* LINE edge_alloc */
	exit(code - code);
}

__attribute__((noinline, noreturn)) void edge_fail(int argc)
{
	edge_die(argc * 3); /* LINE edge_call */
}

#else

void edge_fail(int argc) __attribute__((noreturn));

__attribute__((noinline, noreturn)) void die_alloc(int code)
{
	sink = malloc(40); /* LINE alloc */
	exit(code - code);
}

__attribute__((noinline, noreturn)) void fail_with(int argc)
{
	die_alloc(argc * 3); /* LINE call */
}

__attribute__((noinline)) int after(int x)
{
	return x * 7 + 1;
}

int main(int argc, char **argv)
{
	(void)argv;
	if (argc == 2)
		edge_fail(argc); /* LINE main_edge */
	if (argc > 2)
		return after(argc);
	fail_with(argc); /* LINE main_call */
}

#endif
