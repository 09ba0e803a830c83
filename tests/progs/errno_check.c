/* SPDX-License-Identifier: MIT */
/* The hooks must not touch errno on success, and must report ENOMEM on failure like glibc.
 * Allocates: malloc(10) freed, calloc(3, 4) = 12 then realloc to 100, freed:
 *   3 allocations, 3 frees, 122 bytes, nothing leaked. Failed calls (calloc overflow, huge malloc,
 *   posix_memalign with a bad alignment) count nothing.
 * Exit status = number of failed checks; each failure is named on stderr (write(2), no stdio). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures;
static volatile size_t half = SIZE_MAX / 2; /* volatile: keeps gcc from flagging the overflow */

static void expect(int ok, const char *what)
{
	if (ok)
		return;
	failures++;
	if (write(2, what, strlen(what)) < 0 || write(2, "\n", 1) < 0)
		failures++;
}

int main(void)
{
	errno = 1234; /* the very first allocation of the process: the shim starts here */
	char *p = malloc(10);
	expect(p && errno == 1234, "malloc changed errno");
	free(p);
	expect(errno == 1234, "free changed errno");
	char *q = calloc(3, 4);
	expect(q && errno == 1234, "calloc changed errno");
	q = realloc(q, 100);
	expect(q && errno == 1234, "realloc changed errno");
	free(q);
	expect(errno == 1234, "free after realloc changed errno");
	free(NULL);
	expect(errno == 1234, "free(NULL) changed errno");

	errno = 0;
	expect(calloc(half, 3) == NULL && errno == ENOMEM, "calloc overflow: want NULL + ENOMEM");
	errno = 0;
	expect(malloc(half) == NULL && errno == ENOMEM, "huge malloc: want NULL + ENOMEM");
	void *r = NULL;
	errno = 1234;
	expect(posix_memalign(&r, 3, 16) == EINVAL && errno == 1234, "posix_memalign bad alignment");
	return failures;
}
