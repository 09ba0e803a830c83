/* SPDX-License-Identifier: MIT */
/* A sparse anonymous mapping, as runtimes and databases reserve address space: GIB GiB, readable and
 * writable, without reserve (MAP_NORESERVE), of which 16 pages spread over it are written; then a
 * 100-byte block lost before it returns. The exit scan asks the kernel which pages of it are in memory
 * (mincore) and reads those: 16 TiB are 4 billion pages, which 256 a call took 44 s. Definitely lost:
 * 100 bytes in 1 block. Usage: scan_sparse GIB. Exit 77 when the kernel refuses the mapping, 0
 * otherwise. */
#include <stdlib.h>
#include <sys/mman.h>

int main(int argc, char **argv)
{
	size_t len = (size_t)(argc > 1 ? atol(argv[1]) : 1) << 30;
	char *region =
	    mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (region == MAP_FAILED)
		return 77;
	for (size_t at = 0; at < len; at += len / 16)
		region[at] = 1;
	void *p = malloc(100);
	__asm__ volatile("" : : "r"(p) : "memory"); /* allocated, then forgotten */
	return 0;
}
