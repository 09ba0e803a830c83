/* SPDX-License-Identifier: MIT */
/* Unit test of the stack trie (preload/stacks.c), built with a hash under which every node of one
 * return address collides, so that only the key comparison tells nodes apart: distinct call paths
 * through the same frames must get distinct ids whose parent chains give back their frames. */
#include <stdio.h>
#include <stdlib.h>

#include "ctrack/format.h"
#include "shim.h"

#define HELPER 0x401000u /* the allocating helper: innermost frame of every stack */
#define MIDDLE 0x402000u /* a frame every path goes through */
#define CALLERS 300      /* distinct callers of MIDDLE */
#define DEPTH 3

static int failures;

/* The frames of node id, innermost first, from its parent chain. Returns the count. */
static int frames_of(uint32_t id, uintptr_t *out, int max)
{
	int n = 0;
	while (id >= CT_STACK_FIRST && n < max) {
		uint32_t parent;
		ct_stacks_node(id, &parent, &out[n++]);
		id = parent;
	}
	return n;
}

int main(void)
{
	uint32_t ids[CALLERS];
	for (int round = 0; round < 2; round++) {
		for (uintptr_t c = 0; c < CALLERS; c++) {
			uintptr_t stack[DEPTH] = {HELPER, MIDDLE, 0x500000 + 16 * c}; /* innermost first */
			uint32_t id = ct_stacks_intern(stack, DEPTH, 0);
			if (round == 0) {
				ids[c] = id;
			} else if (id != ids[c]) {
				printf("FAIL caller %lu: interned again as %u, first as %u\n",
				       (unsigned long)c, id, ids[c]);
				failures++;
			}
			uintptr_t back[DEPTH + 1];
			int n = frames_of(id, back, DEPTH + 1);
			if (n != DEPTH || back[0] != HELPER || back[1] != MIDDLE || back[2] != stack[2]) {
				printf("FAIL caller %lu: node %u gives %d frames, caller %#lx\n",
				       (unsigned long)c, id, n, n > 2 ? (unsigned long)back[2] : 0ul);
				failures++;
			}
		}
	}
	for (int c = 1; c < CALLERS; c++)
		if (ids[c] == ids[c - 1]) {
			printf("FAIL callers %d and %d share node %u\n", c - 1, c, ids[c]);
			failures++;
		}
	/* nodes: per caller one for itself, one for MIDDLE under it, one for HELPER under that */
	uint32_t want = CT_STACK_FIRST + 3 * CALLERS;
	if (ct_stacks_count() != want) {
		printf("FAIL %u nodes, want %u\n", ct_stacks_count(), want);
		failures++;
	}
	printf("%s: %d call paths through one helper, %d failure(s)\n", failures ? "FAIL" : "ok", CALLERS,
	       failures);
	return failures ? 1 : 0;
}
