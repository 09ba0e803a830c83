/* SPDX-License-Identifier: MIT */
/* A signal that stops a function at its first instruction: first_byte (assembly) starts with ud2,
 * right after the one-byte before_first, so SIGILL interrupts the program exactly at first_byte's
 * address, whose byte before is before_first's. The handler, on_ill, leaks handler_alloc's
 * malloc(40), steps over the ud2 and returns; first_byte returns to call_first. Built by
 * tests/e2e/test_sigexact.py (-no-pie); expected frames from nm and the LINE markers.
 * Figures: one allocation of 40 bytes, leaked. Exit 0, 2 on failure. */
#define _GNU_SOURCE /* REG_RIP */
#include <signal.h>
#include <stdlib.h>
#include <ucontext.h>

#define NOINLINE __attribute__((noinline))

void before_first(void);
void first_byte(void);

__asm__(".text\n"
        ".globl before_first\n"
        ".type before_first, @function\n"
        "before_first:\n"
        ".cfi_startproc\n"
        "\tret\n"
        ".cfi_endproc\n"
        ".size before_first, .-before_first\n"
        ".globl first_byte\n"
        ".type first_byte, @function\n"
        "first_byte:\n"
        ".cfi_startproc\n"
        "\tud2\n"
        "\tret\n"
        ".cfi_endproc\n"
        ".size first_byte, .-first_byte\n");

static void *volatile kept;

NOINLINE static void handler_alloc(void)
{
	kept = malloc(40); /* LINE alloc */
}

static void on_ill(int sig, siginfo_t *si, void *arg)
{
	ucontext_t *uc = arg;
	(void)sig, (void)si;
	handler_alloc();                     /* LINE handler */
	uc->uc_mcontext.gregs[REG_RIP] += 2; /* past the ud2 */
}

NOINLINE static void call_first(void)
{
	first_byte(); /* LINE call */
}

int main(void)
{
	struct sigaction sa = {.sa_sigaction = on_ill, .sa_flags = SA_SIGINFO};
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGILL, &sa, NULL) != 0)
		return 2;
	call_first(); /* LINE main */
	return kept ? 0 : 2;
}
