/* SPDX-License-Identifier: MIT */
/* What the C runtime and the loader keep until exit by design, and one leak of the program's own:
 * stdio's buffer (printf), locale data (setlocale), time zone data (localtime), NSS state and
 * getpwuid's static buffer, a library's link map (dlopen, never closed), and the thread vector of a
 * thread still running at exit. The program itself loses OWN bytes in one block (LINE OWN) and keeps
 * nothing else. */
#include <dlfcn.h>
#include <locale.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define OWN 40

static void *sleeper(void *arg)
{
	for (;;)
		pause();
	return arg;
}

__attribute__((noinline)) static void lose(void)
{
	void *volatile p = malloc(OWN); /* LINE OWN */
	p = NULL;
	(void)p;
}

int main(void)
{
	setlocale(LC_ALL, "C.UTF-8");
	time_t now = time(NULL);
	struct tm *tm = localtime(&now);
	struct passwd *pw = getpwuid(0);
	void *lib = dlopen("libz.so.1", RTLD_NOW);
	pthread_t t;
	if (pthread_create(&t, NULL, sleeper, NULL))
		return 1;
	usleep(20000);
	lose();
	printf("%d %s %s\n", tm ? tm->tm_year > 100 : 0, pw ? pw->pw_name : "?", lib ? "lib" : "nolib");
	return 0;
}
