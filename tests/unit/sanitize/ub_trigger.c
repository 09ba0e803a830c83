/* SPDX-License-Identifier: MIT */
/* Undefined behaviour on demand, built with the shim's sanitizer flags and its own runtime
 * (preload/ubsan.c) by -Dsanitize=true: check_sanitize.py runs it and reads what the runtime says.
 * ub-trigger add: a signed addition overflows; ub-trigger shift: a shift past the type's width. */
#include <limits.h>
#include <string.h>

static volatile int big = INT_MAX, wide = 40, result;

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "add") == 0)
		result = big + 1; /* LINE add */
	if (argc > 1 && strcmp(argv[1], "shift") == 0)
		result = 1 << wide; /* LINE shift */
	return 0;
}
