/* SPDX-License-Identifier: MIT */
/* fork while other threads allocate: 6 worker threads allocate and free (each leaks malloc(200 + i)
 * once) while main forks FORKS children (argument, default 20), 2 ms apart. Each child, alone with
 * the forking thread, allocates 10 blocks of 100 + 10 j bytes (j = 0..9), frees 9 of them (the 190
 * block leaks) and exits with exit(0): 10 allocations, 9 frees, 1450 bytes, leaked 190 in 1.
 * A child that has not ended after 20 s is deadlocked: the parent kills it and fails.
 * Each child prints "child pid=P allocations=... leaked_allocations=N"; the parent, after joining
 * its workers, "parent allocations=... leaked_allocations=N" (its own events, counted with
 * atomics; glibc's TLS vectors are not the program's). write(1), no stdio. Exit 0, 1 on failure. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define WORKERS 6
#define MAX_FORKS 200

static atomic_ullong allocs, frees, bytes, leaked_bytes, leaked_allocs;
static atomic_int stop, failed;

static void say(const char *who, unsigned long long a, unsigned long long f, unsigned long long b,
                unsigned long long lb, unsigned long long la)
{
	char line[200];
	int len =
	    snprintf(line, sizeof line,
	             "%s allocations=%llu frees=%llu bytes=%llu leaked_bytes=%llu leaked_allocations=%llu\n",
	             who, a, f, b, lb, la);
	if (write(1, line, (size_t)len) != len)
		atomic_store(&failed, 1);
}

NOINLINE static void worker_leak(size_t n)
{
	if (!malloc(n))
		atomic_store(&failed, 1);
	atomic_fetch_add(&allocs, 1);
	atomic_fetch_add(&bytes, n);
	atomic_fetch_add(&leaked_bytes, n);
	atomic_fetch_add(&leaked_allocs, 1);
}

static void *worker(void *arg)
{
	worker_leak(200 + (size_t)(long)arg);
	for (unsigned long k = 0; !atomic_load(&stop); k++) {
		size_t n = 16 + k % 500;
		void *p = malloc(n);
		if (!p) {
			atomic_store(&failed, 1);
			return NULL;
		}
		free(p);
		atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&bytes, n, memory_order_relaxed);
		atomic_fetch_add_explicit(&frees, 1, memory_order_relaxed);
		if (k % 64 == 0)
			sched_yield(); /* let main fork in the middle of other threads' allocations */
	}
	return NULL;
}

NOINLINE static void child_leak(size_t n)
{
	if (!malloc(n))
		_exit(1);
}

static void child(void)
{
	void *kept[10];
	unsigned long long b = 0;
	for (int j = 0; j < 10; j++) {
		size_t n = 100 + 10 * (size_t)j;
		b += n;
		if (j == 9) {
			child_leak(n);
			break;
		}
		if (!(kept[j] = malloc(n)))
			_exit(1);
	}
	for (int j = 0; j < 9; j++)
		free(kept[j]);
	char who[40];
	snprintf(who, sizeof who, "child pid=%d", (int)getpid());
	say(who, 10, 9, b, 190, 1);
	exit(0);
}

/* waits for pid for at most 20 s; 0 if it exited with 0 */
static int reap(pid_t pid)
{
	struct timespec ms = {0, 1000000};
	for (int i = 0; i < 20000; i++) {
		int status;
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		if (r < 0)
			return 1;
		nanosleep(&ms, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	say("deadlocked child", 0, 0, 0, 0, 0);
	return 1;
}

int main(int argc, char **argv)
{
	int forks = argc > 1 ? atoi(argv[1]) : 20;
	pthread_t t[WORKERS];
	if (forks < 1 || forks > MAX_FORKS)
		return 1;
	for (long i = 0; i < WORKERS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			return 1;
	struct timespec gap = {0, 2000000};
	for (int k = 0; k < forks; k++) {
		nanosleep(&gap, NULL);
		pid_t pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0)
			child();
		if (reap(pid))
			atomic_store(&failed, 1);
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	say("parent", atomic_load(&allocs), atomic_load(&frees), atomic_load(&bytes),
	    atomic_load(&leaked_bytes), atomic_load(&leaked_allocs));
	return atomic_load(&failed);
}
