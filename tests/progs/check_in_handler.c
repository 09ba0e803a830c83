/* SPDX-License-Identifier: MIT */
/* ctrack_check_leaks() from a signal handler ("dump leaks on a signal") while main checks over and
 * over: SIGALRM every 2 ms, its handler checks too. main loses one block of LEAK_SIZE bytes, checks
 * CHECKS times and prints
 *   main: CHECKS of CHECKS answered LEAK_SIZE; handler: every answer LEAK_SIZE: yes, some: yes
 * main's first check comes before the signals (include/ctrack/ctrack.h looks the shim up on a
 * function's first call, with dlsym, which a handler must not interrupt). A handler that interrupts
 * main's own check waits for it to be served, then makes its own. With
 * `check_in_handler exit` the handler calls exit(3) instead, over main's checks: the exit's leak
 * scan runs as usual. Before 2026-12-07 such a handler waited for ever for the lock its own thread
 * held (every run hung, both ways), and the first check after a handler's sometimes answered 0: a
 * dead word under setjmp's buffer in the shim's frame, scanned as a root, held the lost block. */
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>

#include "ctrack/ctrack.h"

#define CHECKS 200
#define LEAK_SIZE 100

#include "lose.h"

static volatile sig_atomic_t handled, odd, exits;

static void on_alarm(int sig)
{
	(void)sig;
	if (exits)
		exit(3);
	long long r = ctrack_check_leaks();
	handled++;
	odd += r != LEAK_SIZE;
}

int main(int argc, char **argv)
{
	exits = argc > 1 && argv[1][0] == 'e';
	struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = SA_RESTART};
	struct itimerval every = {{0, 2000}, {0, 2000}}, off = {{0, 0}, {0, 0}};
	lose();
	/* The first check before the signals: it looks the shim up with dlsym, which a handler's check
	 * must not interrupt (it would wait for the loader's lock; later calls make none). */
	int answered = ctrack_check_leaks() == LEAK_SIZE;
	if (sigaction(SIGALRM, &sa, NULL) != 0 || setitimer(ITIMER_REAL, &every, NULL) != 0)
		return 1;
	for (int i = 1; i < CHECKS || exits; i++)
		answered += ctrack_check_leaks() == LEAK_SIZE;
	setitimer(ITIMER_REAL, &off, NULL);
	printf("main: %d of %d answered %d; handler: every answer %d: %s, some: %s\n", answered, CHECKS,
	       LEAK_SIZE, LEAK_SIZE, odd ? "no" : "yes", handled ? "yes" : "no");
	return 0;
}
