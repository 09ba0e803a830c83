/* SPDX-License-Identifier: MIT */
/* Allocates in a signal handler only when the signal stopped ctrack's work: SIGALRM every 100 us
 * while main_loop makes malloc(16)/free pairs; the handler keeps handler_block's malloc(24) when the
 * interrupted instruction lies in libctrack.so (a hook, in its report or out of it) or in one of the
 * libc calls the shim makes while it waits for its writer (sched_yield, nanosleep, clock_nanosleep,
 * syscall: never the program's own here), and returns at once otherwise. It stops at 400 blocks (20
 * of them kept for waits) or after 20 s, and prints "shim S wait W loop L": the blocks kept for
 * each kind of interruption and main_loop's pairs. Untraced, it keeps none.
 * Figures: S + W blocks of 24 bytes leaked at handler_block, all of them interruptions of the shim's
 * work in the hooks main_loop called, at LINE alloc or LINE free. Exit 0, 2 on failure. */
#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "shimspan.h"

#define NOINLINE __attribute__((noinline))
#define HANDLER_BLOCKS 400
#define WAITS_WANTED 20
#define WAITS 4

static void *volatile blocks[HANDLER_BLOCKS];
static volatile sig_atomic_t held, in_shim, in_wait;
static uintptr_t shim_lo, shim_hi;
static const char *const waits[WAITS] = {"sched_yield", "nanosleep", "clock_nanosleep", "syscall"};
static uintptr_t wait_lo[WAITS], wait_hi[WAITS];

/* The spans of libc's wait functions, from their symbols' sizes. 0, or -1 when one is missing. */
static int find_waits(void)
{
	for (int i = 0; i < WAITS; i++) {
		Dl_info info;
		const ElfW(Sym) *sym = NULL;
		void *p = dlsym(RTLD_DEFAULT, waits[i]);
		if (!p || !dladdr1(p, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym || !sym->st_size)
			return -1;
		wait_lo[i] = (uintptr_t)info.dli_saddr;
		wait_hi[i] = wait_lo[i] + sym->st_size;
	}
	return 0;
}

static int waiting(uintptr_t ip)
{
	for (int i = 0; i < WAITS; i++)
		if (ip >= wait_lo[i] && ip < wait_hi[i])
			return 1;
	return 0;
}

NOINLINE static void handler_block(void)
{
	if (!(blocks[held] = malloc(24))) /* LINE block */
		_exit(2);
	held++;
}

static void on_alarm(int sig, siginfo_t *si, void *uc)
{
	uintptr_t ip = (uintptr_t)((const ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
	int wait = waiting(ip);
	(void)sig, (void)si;
	if (held >= HANDLER_BLOCKS || (!wait && (ip < shim_lo || ip >= shim_hi)))
		return;
	if (!wait && in_shim >= HANDLER_BLOCKS - WAITS_WANTED)
		return; /* the rest is for waits */
	in_wait += wait;
	in_shim += !wait;
	handler_block(); /* LINE handler */
}

NOINLINE static unsigned long main_loop(void)
{
	struct timespec start, now;
	unsigned long n = 0;
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		for (int i = 0; i < 1000; i++, n++) {
			void *volatile p = malloc(16); /* LINE alloc */
			if (!p)
				_exit(2);
			free(p); /* LINE free */
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (held < HANDLER_BLOCKS && now.tv_sec - start.tv_sec < 20);
	return n;
}

int main(void)
{
	if (find_waits() < 0)
		return 2;
	shim_span(&shim_lo, &shim_hi);
	/* The thread's first event before the signals: a handler that interrupts that one has nowhere
	 * to wait (its event would be dropped, with a NOTE). */
	free(malloc(1));
	struct sigaction sa = {.sa_sigaction = on_alarm, .sa_flags = SA_SIGINFO | SA_RESTART};
	sigemptyset(&sa.sa_mask);
	struct itimerval every = {{0, 100}, {0, 100}}, off = {{0, 0}, {0, 0}};
	if (sigaction(SIGALRM, &sa, NULL) != 0 || setitimer(ITIMER_REAL, &every, NULL) != 0)
		return 2;
	unsigned long n = main_loop();
	setitimer(ITIMER_REAL, &off, NULL);
	printf("shim %d wait %d loop %lu\n", (int)in_shim, (int)in_wait, n);
	return 0;
}
