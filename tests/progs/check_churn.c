/* SPDX-License-Identifier: MIT */
/* ctrack_check_leaks() while threads come and go and a timer signal arrives every millisecond: each
 * check stops every other thread (by ptrace, or by its signal where ptrace is refused) while some are
 * being created or are ending and some are stopped delivering SIGALRM, which must reach them once
 * they go on. Two threads create and join short threads that allocate and free; two allocate and
 * free in a loop; main loses one block of LEAK_SIZE bytes, then checks CHECKS times and prints:
 *   checks: CHECKS answered LEAK_SIZE, 0 otherwise; alarms after them: yes
 * (every check answers the bytes lost, the process lives through them all, and the timer's signal
 * still arrives once they are over; without ctrack every check answers -1: "checks: 0 answered 100,
 * 20 otherwise"). A busy thread's block whose free it has reported (after the writer's last drain,
 * or waiting for room in its ring) is no leak: checks answered 164 for it before writer.c's
 * ct_writer_each_unmatched. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

#include "ctrack/ctrack.h"

#define CHECKS 20
#define LEAK_SIZE 100

#include "lose.h"

static atomic_int stop;
static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

/* 1 once three more alarms came after `since` (within 2 s). */
static int alarms_after(sig_atomic_t since)
{
	struct timespec ms = {0, 1000000};
	for (int i = 0; i < 2000 && alarms < since + 3; i++)
		nanosleep(&ms, NULL);
	return alarms >= since + 3;
}

static void *brief(void *arg)
{
	(void)arg;
	free(malloc(32));
	return NULL;
}

static void *spawn(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		pthread_t t;
		if (pthread_create(&t, NULL, brief, NULL) == 0)
			pthread_join(t, NULL);
	}
	return NULL;
}

static void *busy(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		free(malloc(64));
	return NULL;
}

int main(void)
{
	struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = SA_RESTART};
	struct itimerval every_ms = {{0, 1000}, {0, 1000}};
	if (sigaction(SIGALRM, &sa, NULL) != 0 || setitimer(ITIMER_REAL, &every_ms, NULL) != 0)
		return 1;
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, i < 2 ? spawn : busy, NULL) != 0)
			return 1;
	lose();
	int answered = 0;
	for (int i = 0; i < CHECKS; i++)
		answered += ctrack_check_leaks() == LEAK_SIZE;
	atomic_store(&stop, 1);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	int after = alarms_after(alarms);
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	printf("checks: %d answered %d, %d otherwise; alarms after them: %s\n", answered, LEAK_SIZE,
	       CHECKS - answered, after ? "yes" : "no");
	return 0;
}
