/* SPDX-License-Identifier: MIT */
/* Peak heap: keep malloc(1000); malloc(1 MiB) and free it (heap 1049576); keep 3 x malloc(100 KiB)
 * (heap 308200); 3 x malloc(300 KiB) (heap 1229800 = the peak), freed again (heap 308200).
 * 8 allocations, 4 frees, 2278376 bytes; peak 1229800 bytes; leaked 308200 bytes in 4. No stdio. */
#include <stdlib.h>

#define KIB 1024

int main(void)
{
	void *big[3];
	int bad = !malloc(1000);
	void *mib = malloc(1024 * KIB);
	bad |= !mib;
	free(mib);
	for (int i = 0; i < 3; i++)
		bad |= !malloc(100 * KIB);
	for (int i = 0; i < 3; i++)
		bad |= !(big[i] = malloc(300 * KIB));
	for (int i = 0; i < 3; i++)
		free(big[i]);
	return bad;
}
