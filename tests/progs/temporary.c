/* SPDX-License-Identifier: MIT */
/* Temporary allocations: 1000 x (p = malloc(64); free(p)) are temporary; interleaved, every 10th
 * round first keeps a malloc(32) (100 kept, freed at the end in allocation order: none is freed
 * by the event right after it); then 50 x (a = malloc(48); b = malloc(48); free(a); free(b)):
 * neither a nor b is freed by the very next event, so these 100 are not temporary.
 * 1200 allocations, 1200 frees, 64000 + 3200 + 4800 = 72000 bytes, 1000 temporary, no leak. */
#include <stdlib.h>

static void *kept[100];

int main(void)
{
	int bad = 0;
	for (int i = 0; i < 1000; i++) {
		if (i % 10 == 0)
			bad |= !(kept[i / 10] = malloc(32));
		void *p = malloc(64);
		bad |= !p;
		free(p);
	}
	for (int i = 0; i < 50; i++) {
		void *a = malloc(48), *b = malloc(48);
		bad |= !a || !b;
		free(a);
		free(b);
	}
	for (int i = 0; i < 100; i++)
		free(kept[i]);
	return bad;
}
