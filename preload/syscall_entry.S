/* SPDX-License-Identifier: MIT */
/* syscall(2)'s entry in the shim (epollwait.h): a timed epoll wait made through it goes to
 * ct_syscall_epoll, which notes it as the epoll hooks note theirs; every other call jumps to libc's
 * syscall with its registers and stack as the program left them (no frame of the shim's between). */
#include <cet.h> /* GCC's: ENDBR, and the CET property note, when built with -fcf-protection */
#include <sys/syscall.h>

#ifndef SYS_epoll_pwait2
#define SYS_epoll_pwait2 441
#endif

	.text
	.p2align 4
	.globl syscall
	.type syscall, @function
	.globl ct_hook_syscall /* attach mode's (attach.c): the same entry, for the GOT entries it rewrites */
	.hidden ct_hook_syscall
	.type ct_hook_syscall, @function
syscall:
ct_hook_syscall:
	.cfi_startproc
	_CET_ENDBR
	cmp $SYS_epoll_wait, %rdi
	je 1f
	cmp $SYS_epoll_pwait, %rdi
	je 1f
	cmp $SYS_epoll_pwait2, %rdi
	je 1f
	mov ct_real_syscall(%rip), %rax
	test %rax, %rax
	jz 1f /* not found yet (a call before the shim's start): made by ct_syscall_epoll */
	jmp *%rax
1:	jmp ct_syscall_epoll
	.cfi_endproc
	.size syscall, .-syscall
	.size ct_hook_syscall, .-ct_hook_syscall

	.section .note.GNU-stack, "", @progbits
