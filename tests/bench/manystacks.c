/* SPDX-License-Identifier: MIT */
/* A big trace for the reports' scale (scripts/html-scale): OPS malloc/free pairs from 32,768 distinct
 * stacks (five levels of eight functions each, chosen by the site number's octal digits), a block freed
 * thousands of events after its allocation, the live set growing in four phases. Usage: manystacks OPS. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define LEVELS 5
#define SITES (1u << (3 * LEVELS))
#define SLOTS 8192
#define PHASES 4

static void *descend(unsigned site, unsigned level, size_t size);

/* Each level's function: the call is not a tail call (the result is checked after it), so every
 * level keeps its frame. */
#define LEVEL_FN(n) \
	__attribute__((noinline)) static void *level_##n(unsigned site, unsigned level, size_t size) \
	{ \
		void *p = descend(site, level + 1, size + (n)); \
		if (!p) \
			abort(); \
		return p; \
	}
LEVEL_FN(0)
LEVEL_FN(1)
LEVEL_FN(2)
LEVEL_FN(3)
LEVEL_FN(4)
LEVEL_FN(5)
LEVEL_FN(6)
LEVEL_FN(7)

static void *(*const levels[8])(unsigned, unsigned, size_t) = {level_0, level_1, level_2, level_3,
                                                               level_4, level_5, level_6, level_7};

static void *descend(unsigned site, unsigned level, size_t size)
{
	if (level == LEVELS)
		return malloc(size);
	return levels[(site >> (3 * level)) & 7](site, level, size);
}

static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

int main(int argc, char **argv)
{
	long ops = argc > 1 ? atol(argv[1]) : 1000000;
	static void *slots[SLOTS * PHASES];
	uint64_t s = 88172645463325252ull;
	for (long i = 0; i < ops; i++) {
		/* Phase p uses the first (p + 1) * SLOTS slots: the heap steps up four times. */
		long phase = i * PHASES / (ops ? ops : 1);
		uint64_t r = next(&s);
		size_t slot = (size_t)(r % ((uint64_t)(phase + 1) * SLOTS));
		free(slots[slot]);
		slots[slot] = descend((unsigned)(r >> 32) % SITES, 0, 16 + (size_t)(r >> 52));
	}
	/* The last phase's slots are freed, the others leak: sites with leaks of every size. */
	for (size_t i = (PHASES - 1) * SLOTS; i < PHASES * SLOTS; i++)
		free(slots[i]);
	return 0;
}
