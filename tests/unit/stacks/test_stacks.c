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

/* Stacks deeper than the tracker's walks go (the writer interns what the matcher asks, of any
 * depth), and stacks that share outer frames with the one interned before (interning starts from
 * its path): each interned twice, in turns, must keep its id and give back its frames. */
#define DEEP (CT_DEPTH_MAX + 40)
#define SHARED (CT_DEPTH_MAX - 20)

static void check_deep(void)
{
	static uintptr_t a[DEEP], b[DEEP], back[DEEP + 1];
	uint32_t first_a = 0, first_b = 0, before = ct_stacks_count();
	for (int i = 0; i < DEEP; i++) { /* innermost first; b differs from a in its inner frames */
		a[i] = 0x600000 + 16 * (uintptr_t)i;
		b[i] = i >= DEEP - SHARED ? a[i] : 0x700000 + 16 * (uintptr_t)i;
	}
	for (int round = 0; round < 2; round++) {
		uint32_t ida = ct_stacks_intern(a, DEEP, 0), idb = ct_stacks_intern(b, DEEP, 0);
		if (round == 0) {
			first_a = ida, first_b = idb;
			/* a's frames, then b's own: the shared outer frames are a's nodes */
			if (ct_stacks_count() - before != 2 * DEEP - SHARED) {
				printf("FAIL deep stacks made %u nodes, want %d\n",
				       ct_stacks_count() - before, 2 * DEEP - SHARED);
				failures++;
			}
		} else if (ida != first_a || idb != first_b) {
			printf("FAIL deep stacks interned again as %u and %u, first as %u and %u\n", ida, idb,
			       first_a, first_b);
			failures++;
		}
		const uintptr_t *want[2] = {a, b};
		uint32_t ids[2] = {ida, idb};
		for (int k = 0; k < 2; k++) {
			int n = frames_of(ids[k], back, DEEP + 1), same = n == DEEP;
			for (int i = 0; same && i < DEEP; i++)
				same = back[i] == want[k][i];
			if (!same) {
				printf("FAIL deep stack %c: node %u gives %d frames, not its %d\n", "ab"[k],
				       ids[k], n, DEEP);
				failures++;
			}
		}
	}
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
	check_deep();
	printf("%s: %d call paths through one helper, deep stacks, %d failure(s)\n", failures ? "FAIL" : "ok",
	       CALLERS, failures);
	return failures ? 1 : 0;
}
