/* SPDX-License-Identifier: MIT */
/* The library of tests/progs/dlreuse.c, built twice by tests/e2e/test_dlreuse.py: -DWHO=alpha gives
 * libalpha.so, whose dlreuse_entry(n) leaks malloc(n) in alpha_leak; -DWHO=beta gives libbeta.so,
 * the same in beta_leak. Same code, same size: the kernel maps one where the other was unloaded. */
#include <stdlib.h>

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

__attribute__((noinline)) void *CAT(WHO, _leak)(size_t n)
{
	return malloc(n); /* LINE leak */
}

void *dlreuse_entry(size_t n)
{
	return CAT(WHO, _leak)(n); /* LINE entry */
}
