/* SPDX-License-Identifier: MIT */
/* Code no module describes, as a JIT writes it (tests/e2e/test_jit.py): main calls eight bytes of
 * machine code in an anonymous executable page (push rbp; mov rbp, rsp; call rdi; pop rbp; ret),
 * which calls jit_leak: malloc(123), leaked. 1 allocation, 123 bytes, leaked 123 bytes in 1.
 * Its backtrace: jit_leak, an address in no module, main. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef void generated_fn(void (*callback)(void));

static void *volatile leaked;

__attribute__((noinline)) static void jit_leak(void)
{
	leaked = malloc(123); /* LINE alloc */
}

int main(void)
{
	static const unsigned char code[] = {0x55, 0x48, 0x89, 0xe5, 0xff, 0xd7, 0x5d, 0xc3};
	void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	generated_fn *fn;
	if (page == MAP_FAILED)
		return 1;
	memcpy(page, code, sizeof(code));
	if (mprotect(page, 4096, PROT_READ | PROT_EXEC))
		return 1;
	memcpy(&fn, &page, sizeof(fn)); /* ISO C has no cast from data to function pointers */
	fn(jit_leak);                   /* LINE call */
	return leaked ? 0 : 1;
}
