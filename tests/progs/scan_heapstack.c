/* SPDX-License-Identifier: MIT */
/* A program that exits while it runs on a heap-allocated stack (a coroutine started with
 * makecontext on a malloc(65536) kept in a global: still reachable). The coroutine loses a list
 * it built after its stack was allocated: a malloc(200) that holds the only pointer to a
 * malloc(100) (definitely 200, indirectly 100), and a malloc(64) (definitely lost). Then it calls
 * exit(0) on its own stack. The scan must read that stack only up to the end of its block, not
 * the rest of the heap above it, where the lost blocks lie: definitely lost 264 bytes in 2 blocks,
 * indirectly lost 100 bytes in 1 block. */
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

static ucontext_t main_ctx, coro_ctx;
static void *coro_stack;

static __attribute__((noinline)) void lose(void)
{
	void **head = malloc(200);
	memset(head, 0, 200);
	head[0] = malloc(100);
	void *volatile other = malloc(64);
	(void)other;
}

static __attribute__((noinline)) void scrub(void)
{
	volatile char pad[512];
	memset((char *)pad, 0, sizeof(pad));
}

static void coroutine(void)
{
	lose();
	scrub(); /* the dead frames of lose() hold its pointers; the exit's frames go below them anyway */
	exit(0);
}

int main(void)
{
	coro_stack = malloc(65536);
	if (!coro_stack || getcontext(&coro_ctx))
		return 2;
	coro_ctx.uc_stack.ss_sp = coro_stack;
	coro_ctx.uc_stack.ss_size = 65536;
	coro_ctx.uc_link = &main_ctx;
	makecontext(&coro_ctx, coroutine, 0);
	swapcontext(&main_ctx, &coro_ctx);
	return 1; /* not reached: the coroutine exits */
}
