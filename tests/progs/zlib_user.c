/* SPDX-License-Identifier: MIT */
/* Allocations made inside the system's zlib (built by tests/e2e/test_debugpkg.py with -lz), so the
 * report's symbol section judges libz.so.1, a distribution library whose debug info is in another
 * package. deflateInit allocates its state and windows and is never ended: they leak. Exit 0, or 1
 * if deflateInit failed. */
#include <string.h>
#include <zlib.h>

int main(void)
{
	z_stream s;
	memset(&s, 0, sizeof(s));
	return deflateInit(&s, Z_DEFAULT_COMPRESSION) != Z_OK;
}
