/* SPDX-License-Identifier: MIT */
/* A lost block whose address the program held only in RBP, as code without frame pointers may hold
 * anything there: hold() keeps it in RBP (and nowhere else) while the allocation below it is walked,
 * then restores the caller's RBP and returns; main drops its copy and exits at once, with no other
 * allocation after. Nothing of the program holds the block: definitely lost, 4,096 bytes in 1 block,
 * memcheck's and LeakSanitizer's verdict. The shim's walk kept that RBP in its memo of the walk, in
 * memory of its own that the leak scan read as the program's: "still reachable". x86_64 only. */
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) void *inner(void)
{
	void *q = malloc(8);
	__asm__ volatile("" : : "r"(q) : "memory");
	return q;
}

void *hold(void *p);
__asm__(".text\n"
        ".globl hold\n"
        ".type hold, @function\n"
        "hold:\n"
        ".cfi_startproc\n"
        "pushq %rbp\n"
        ".cfi_def_cfa_offset 16\n"
        ".cfi_offset %rbp, -16\n"
        "movq %rdi, %rbp\n" /* the block's address, in RBP only */
        "xorl %edi, %edi\n"
        "call inner\n"
        "popq %rbp\n"
        ".cfi_def_cfa_offset 8\n"
        "ret\n"
        ".cfi_endproc\n"
        ".size hold, .-hold\n");

int main(void)
{
	void *p = malloc(4096);
	void *q = hold(p);
	p = NULL;
	__asm__ volatile("" : : "r"(p) : "memory");
	free(q);
	_exit(0);
}
