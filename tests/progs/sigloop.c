/* SPDX-License-Identifier: MIT */
/* Allocates in a signal handler while the program allocates: SIGALRM every 200 us (setitimer); the
 * handler keeps handler_block malloc(24) each time it did not interrupt libc or the loader (whose
 * malloc must not be entered twice), until it holds 1000: one block a time, or with the argument
 * "burst" 40 at a time (25 times: more than ctrack keeps for one interruption of its own work).
 * Meanwhile main_loop does malloc(16) and free, over and over. Then it writes "loop N\n" (N:
 * main_loop's pairs) on stdout, with write().
 * Figures: N + 1000 allocations, N frees, 16 N + 24000 bytes; 24000 bytes leaked in 1000 blocks
 * (handler_block). Exit 0, 2 on failure. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "interrupted.h"

#define NOINLINE __attribute__((noinline))
#define HANDLER_BLOCKS 1000
#define BURST 40

static void *volatile blocks[HANDLER_BLOCKS];
static volatile sig_atomic_t held;
static int burst = 1; /* blocks per handler run */

NOINLINE static void handler_block(void)
{
	if (!(blocks[held] = malloc(24)))
		_exit(2);
	held++;
}

static void on_alarm(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si;
	if (interrupted_libc(uc))
		return;
	for (int i = 0; i < burst && held < HANDLER_BLOCKS; i++)
		handler_block();
}

NOINLINE static unsigned long main_loop(void)
{
	unsigned long n = 0;
	while (held < HANDLER_BLOCKS) {
		void *volatile p = malloc(16);
		if (!p)
			_exit(2);
		free(p);
		n++;
	}
	return n;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "burst"))
		burst = BURST;
	if (interrupted_init() < 0)
		return 2;
	struct sigaction sa = {.sa_sigaction = on_alarm, .sa_flags = SA_SIGINFO | SA_RESTART};
	sigemptyset(&sa.sa_mask);
	struct itimerval every = {{0, 200}, {0, 200}}, off = {{0, 0}, {0, 0}};
	if (sigaction(SIGALRM, &sa, NULL) != 0 || setitimer(ITIMER_REAL, &every, NULL) != 0)
		return 2;
	unsigned long n = main_loop();
	setitimer(ITIMER_REAL, &off, NULL);
	char buf[32] = "loop ", digits[24];
	int len = 5, d = 0;
	do
		digits[d++] = (char)('0' + n % 10);
	while ((n /= 10));
	while (d)
		buf[len++] = digits[--d];
	buf[len++] = '\n';
	return write(1, buf, (size_t)len) == len ? 0 : 2;
}
