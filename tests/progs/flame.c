/* A program with a known call tree, for the graphical outputs (flame graphs, exports, HTML, diff).
 * Every figure the tests expect is stated here; build with -DNEW_BUILD for the diff's second build. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define INLINE static inline __attribute__((always_inline))

/* Figures of the base build (valgrind's total heap usage agrees):
 *   parse_entry:  PARSE_COUNT x 48 bytes, leaked (10 x 48 = 480 in the base build, 12 x 48 in the new)
 *   intern_name:  5 x 32 bytes leaked, inlined into load_config (its own frame, marked inlined)
 *   build_cache:  16 x 65536 bytes, all live at the peak, freed by drop_cache
 *   scratch:      1000 x 100 bytes, each freed at once: 1000 temporary allocations
 *   new build only, remember: 4 x 256 bytes leaked (a site the base build does not have)
 * Base: 1031 allocations, 1016 frees, 1149216 bytes allocated, 640 bytes leaked in 15 allocations,
 *       peak heap 1049216 bytes (the cache and the leaks so far).
 * New:  1037 allocations, 1016 frees, 1150336 bytes allocated, 1760 bytes leaked in 21 allocations,
 *       peak heap 1050336 bytes. Lines are the same in both builds (see NEW). */
#ifdef NEW_BUILD /* the two builds keep every line where it is, so sites match by file:line */
#define PARSE_COUNT 12
#define NEW 1
#else
#define PARSE_COUNT 10
#define NEW 0
#endif

static void *volatile sink;
static void *cache[16];

NOINLINE void *xmalloc(size_t n)
{
	return malloc(n); /* LINE XMALLOC */
}

NOINLINE void parse_entry(void)
{
	sink = xmalloc(48); /* LINE PARSE */
}

INLINE void intern_name(void)
{
	sink = xmalloc(32); /* LINE INTERN */
}

NOINLINE void load_config(void)
{
	for (int i = 0; i < PARSE_COUNT; i++)
		parse_entry(); /* LINE LOAD_PARSE */
	for (int i = 0; i < 5; i++)
		intern_name(); /* LINE LOAD_INTERN */
}

NOINLINE void build_cache(void)
{
	for (int i = 0; i < 16; i++) {
		cache[i] = xmalloc(65536);  /* LINE CACHE */
		memset(cache[i], i, 65536); /* resident, so RSS grows with the heap */
		usleep(20000);              /* the heap grows over 0.3 s: a chart with a slope */
	}
}

NOINLINE void drop_cache(void)
{
	for (int i = 0; i < 16; i++)
		free(cache[i]);
}

NOINLINE void scratch(void)
{
	for (int i = 0; i < 1000; i++) {
		char *p = malloc(100); /* LINE SCRATCH */
		p[0] = (char)i;
		sink = p;
		free(p);
	}
}

NOINLINE void remember(void)
{
	for (int i = 0; i < 4; i++)
		sink = xmalloc(256); /* LINE REMEMBER */
}

int main(void)
{
	load_config(); /* LINE MAIN_LOAD */
	if (NEW)
		remember(); /* LINE MAIN_REMEMBER */
	build_cache();      /* LINE MAIN_CACHE */
	drop_cache();
	scratch(); /* LINE MAIN_SCRATCH */
	return 0;
}
