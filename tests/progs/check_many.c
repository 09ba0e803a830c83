/* SPDX-License-Identifier: MIT */
/* ctrack_check_leaks() many times, as a server that checks every minute does in a week: each check
 * maps the scan's tables and unmaps them, and the shim's registry of its own memory, which the scan
 * must never read as the program's, must have room for every check's. Main loses one block of
 * LEAK_SIZE bytes, checks as often as argv[1] says and prints:
 *   checks: N answered LEAK_SIZE, 0 otherwise
 * Every check after the 9,355th answered 0 before 2026-12-07 (the registry full, the scan read its
 * own list of live blocks as a root); the first wrong answers go to stderr. */
#include <stdio.h>
#include <stdlib.h>

#include "ctrack/ctrack.h"

#define LEAK_SIZE 100
#define SHOWN 5 /* wrong answers said on stderr */

#include "lose.h"

int main(int argc, char **argv)
{
	int checks = argc > 1 ? atoi(argv[1]) : 1, wrong = 0;
	lose();
	for (int i = 0; i < checks; i++) {
		long long lost = ctrack_check_leaks();
		if (lost != LEAK_SIZE && wrong++ < SHOWN)
			fprintf(stderr, "check %d answered %lld\n", i, lost);
	}
	printf("checks: %d answered %d, %d otherwise\n", checks - wrong, LEAK_SIZE, wrong);
	return 0;
}
