/* SPDX-License-Identifier: MIT */
/* Measuring launcher for scripts/bench: runs PROGRAM ARGS... and reports its wall time and peak RSS on fd 3.
 * Python cannot do this itself: a child spawned from it starts with the interpreter's RSS in ru_maxrss. */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RESULT_FD 3
#define EXIT_USAGE 2
#define EXIT_CANNOT_EXEC 127

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The exit code as a shell reports it: 128 + N for death by signal N. */
static int exit_code(int status)
{
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

/* Reaps whatever the program left behind (as subreaper we inherit its orphans, e.g. heaptrack_interpret),
 * so the wall time covers their work too. Returns the largest ru_maxrss among them, in KiB. */
static long reap_orphans(void)
{
	long maxrss = 0;
	for (;;) {
		struct rusage ru;
		if (wait4(-1, NULL, 0, &ru) < 0) {
			if (errno == EINTR)
				continue;
			return maxrss; /* ECHILD: none left */
		}
		if (ru.ru_maxrss > maxrss)
			maxrss = ru.ru_maxrss;
	}
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: runner PROGRAM [ARGS...]   (results on fd %d)\n", RESULT_FD);
		return EXIT_USAGE;
	}
	FILE *out = fdopen(RESULT_FD, "w");
	if (!out) {
		fprintf(stderr, "runner: fd %d: %s\n", RESULT_FD, strerror(errno));
		return EXIT_USAGE;
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		fprintf(stderr, "runner: cannot become subreaper: %s\n", strerror(errno));
	double start = now();
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "runner: fork: %s\n", strerror(errno));
		return EXIT_CANNOT_EXEC;
	}
	if (pid == 0) {
		fclose(out);
		execvp(argv[1], argv + 1);
		fprintf(stderr, "runner: cannot run %s: %s\n", argv[1], strerror(errno));
		_exit(EXIT_CANNOT_EXEC);
	}
	int status;
	struct rusage ru;
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "runner: wait4: %s\n", strerror(errno));
			return EXIT_CANNOT_EXEC;
		}
	long orphans = reap_orphans();
	double wall = now() - start;
	/* exit code, wall seconds, peak RSS (KiB) of the child's tree as wait4 sees it, and of orphans */
	fprintf(out, "%d %.6f %ld %ld\n", exit_code(status), wall, ru.ru_maxrss, orphans);
	return fclose(out) ? EXIT_CANNOT_EXEC : 0;
}
