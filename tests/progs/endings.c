/* SPDX-License-Identifier: MIT */
/* Every way a program can end (argv[1] names one), each right after its last allocation.
 * Always: a constructor keeps ctor_block malloc(7); main keeps kept_blocks 1000 x malloc(100) and
 * frees 10 x malloc(50): 1011 allocations, 10 frees, 100507 bytes, 100007 bytes live in 1001.
 * Then, by mode (the figures above unless said):
 *   return, _exit, exit_thread (a second thread calls exit(0) while main waits; glibc allocates for
 *     the thread: compare with valgrind), exit_race (RACERS threads and main call exit(0) at once,
 *     past a barrier: glibc runs the exit handlers on all of them, and the first to find none left
 *     ends the process; glibc allocates for the threads: valgrind), atexit (an atexit handler frees the first
 * kept block: 11 frees, 99907 bytes live in 1000), quick_exit (the same with at_quick_exit and
 * quick_exit(0)), pthread_exit: main ends with pthread_exit; its two threads sleep 100 ms, then each keeps
 *     thread_blocks 100 x malloc(10) (2000 bytes more; glibc allocates for the threads: valgrind),
 *   execl, execlp, execle, execv, fexecve, execveat: the image becomes /bin/true (exit 0),
 *   segv (a store to NULL), bus (a read past the end of a mapped empty file), fpe (an integer
 *     division by zero), ill (ud2), abort, term (kill SIGTERM), int (kill SIGINT): dies of it,
 *   own_handler: checks that sigaction and signal show SIG_DFL for SIGSEGV and SIGTERM, installs
 *     its own SIGSEGV handler, which _exits 42, and raises SIGSEGV,
 *   kill: then keeps timed_blocks, one malloc(100) per millisecond (CLOCK_MONOTONIC) for 580 ms,
 *     writes "started NS\n" then "stopped NS\n" (the clock at the first and after the last) on
 *     stdout, and raises SIGKILL: 1591 allocations, 158507 bytes if nothing is lost.
 * Exit 2 on a bad argument or a failed call. No stdio. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define KEPT 1000

static void *volatile kept[KEPT];
static void *volatile early;
static volatile int zero, one = 1;

extern char **environ;

__attribute__((constructor)) static void ctor_block(void)
{
	early = malloc(7);
}

NOINLINE static void kept_blocks(void)
{
	for (int i = 0; i < KEPT; i++)
		if (!(kept[i] = malloc(100)))
			_exit(2);
}

NOINLINE static void freed_blocks(void)
{
	for (int i = 0; i < 10; i++) {
		void *volatile p = malloc(50);
		free(p);
	}
}

static void free_first(void)
{
	free(kept[0]);
}

static void *exiting_thread(void *arg)
{
	(void)arg;
	exit(0);
}

#define RACERS 4
static pthread_barrier_t start_line;

static void *racing_thread(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&start_line);
	exit(0);
}

NOINLINE static void thread_blocks(void)
{
	for (int i = 0; i < 100; i++)
		if (!malloc(10))
			_exit(2);
}

static void *late_thread(void *arg)
{
	(void)arg;
	struct timespec ts = {0, 100000000};
	nanosleep(&ts, NULL);
	thread_blocks();
	return NULL;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void say(const char *what, uint64_t v)
{
	char buf[64], digits[24];
	int n = 0;
	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < 23);
	size_t len = strlen(what);
	memcpy(buf, what, len);
	while (n)
		buf[len++] = digits[--n];
	buf[len++] = '\n';
	if (write(1, buf, len) != (ssize_t)len)
		_exit(2);
}

NOINLINE static void timed_blocks(void)
{
	uint64_t start = now_ns();
	say("started ", start);
	for (int i = 0; i < 580; i++) {
		while (now_ns() < start + (uint64_t)i * 1000000u) {
			struct timespec ts = {0, 100000};
			nanosleep(&ts, NULL);
		}
		if (!malloc(100))
			_exit(2);
	}
	say("stopped ", now_ns());
}

static void segv_exit(int sig)
{
	(void)sig;
	_exit(42);
}

/* SIG_DFL as the program sees it, through sigaction and signal, though ctrack may handle it. */
static int shows_default(int sig)
{
	struct sigaction old;
	if (sigaction(sig, NULL, &old) != 0 || old.sa_handler != SIG_DFL)
		return 0;
	void (*prev)(int) = signal(sig, SIG_DFL);
	return prev == SIG_DFL;
}

static int own_handler(void)
{
	if (!shows_default(SIGSEGV) || !shows_default(SIGTERM))
		return 3;
	struct sigaction sa = {.sa_handler = segv_exit};
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL) != 0)
		return 2;
	raise(SIGSEGV);
	return 4;
}

static int bus_error(void)
{
	int fd = memfd_create("empty", 0);
	volatile char *p = fd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return 2;
	return p[0];
}

static int via_exec(const char *mode)
{
	char *const argv[] = {"true", NULL};
	if (!strcmp(mode, "execl"))
		execl("/bin/true", "true", (char *)NULL);
	else if (!strcmp(mode, "execlp"))
		execlp("true", "true", (char *)NULL);
	else if (!strcmp(mode, "execle"))
		execle("/bin/true", "true", (char *)NULL, environ);
	else if (!strcmp(mode, "execv"))
		execv("/bin/true", argv);
	else if (!strcmp(mode, "fexecve")) {
		int fd = open("/bin/true", O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			fexecve(fd, argv, environ);
	} else if (!strcmp(mode, "execveat"))
		execveat(AT_FDCWD, "/bin/true", argv, environ, 0);
	return 2;
}

static int end(const char *mode)
{
	pthread_t t[RACERS];
	if (!strcmp(mode, "return"))
		return 0;
	if (!strcmp(mode, "_exit"))
		_exit(0);
	if (!strcmp(mode, "exit_thread")) {
		if (pthread_create(&t[0], NULL, exiting_thread, NULL) == 0)
			pthread_join(t[0], NULL);
		return 2;
	}
	if (!strcmp(mode, "exit_race")) {
		if (pthread_barrier_init(&start_line, NULL, RACERS + 1) != 0)
			return 2;
		for (int i = 0; i < RACERS; i++)
			if (pthread_create(&t[i], NULL, racing_thread, NULL) != 0)
				return 2;
		pthread_barrier_wait(&start_line);
		exit(0);
	}
	if (!strcmp(mode, "atexit"))
		return atexit(free_first) == 0 ? 0 : 2;
	if (!strcmp(mode, "quick_exit") && at_quick_exit(free_first) == 0)
		quick_exit(0);
	if (!strcmp(mode, "pthread_exit")) {
		for (int i = 0; i < 2; i++)
			if (pthread_create(&t[i], NULL, late_thread, NULL) != 0)
				return 2;
		pthread_exit(NULL);
	}
	if (!strncmp(mode, "exec", 4) || !strcmp(mode, "fexecve"))
		return via_exec(mode);
	if (!strcmp(mode, "segv"))
		*(volatile int *)(uintptr_t)zero = 1;
	if (!strcmp(mode, "bus"))
		return bus_error();
	if (!strcmp(mode, "fpe"))
		return one / zero;
	if (!strcmp(mode, "ill"))
		__builtin_trap();
	if (!strcmp(mode, "abort"))
		abort();
	if (!strcmp(mode, "term"))
		kill(getpid(), SIGTERM);
	if (!strcmp(mode, "int"))
		kill(getpid(), SIGINT);
	if (!strcmp(mode, "own_handler"))
		return own_handler();
	if (!strcmp(mode, "kill")) {
		timed_blocks();
		raise(SIGKILL);
	}
	return 2;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	kept_blocks();
	freed_blocks();
	return end(argv[1]);
}
