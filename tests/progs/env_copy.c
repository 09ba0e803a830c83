/* SPDX-License-Identifier: MIT */
/* Copies its environment, as perl and shells do: one malloc(strlen + 1) per variable, kept. Prints
 * the bytes it allocated (with write: no stdio buffer is allocated), so a run under ctrack can be
 * compared with a plain run: allocations = number of variables, bytes = the printed figure. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

int main(void)
{
	size_t total = 0;
	for (char **e = environ; *e; e++) {
		size_t n = strlen(*e) + 1;
		char *copy = malloc(n);
		if (!copy)
			return 1;
		memcpy(copy, *e, n);
		total += n;
	}
	char buf[24];
	int i = sizeof(buf);
	buf[--i] = '\n';
	do
		buf[--i] = (char)('0' + total % 10);
	while ((total /= 10) && i > 0);
	return write(1, buf + i, sizeof(buf) - (size_t)i) < 0;
}
