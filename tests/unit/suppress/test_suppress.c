/* SPDX-License-Identifier: MIT */
/* Unit tests of leak suppressions (analyzer/suppress.c): LeakSanitizer's pattern rules, row by row,
 * and the parser's lines, comments and errors. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "suppress.h"

static int failures;

static const struct {
	const char *pattern, *name;
	int match;
} rows[] = {
    {"xmalloc", "xmalloc", 1},
    {"malloc", "xmalloc", 1}, /* unanchored: anywhere in the name */
    {"^malloc", "xmalloc", 0},
    {"^xmal", "xmalloc", 1},
    {"loc$", "xmalloc", 1},
    {"mal$", "xmalloc", 0},
    {"^xmalloc$", "xmalloc", 1},
    {"^xmalloc$", "xmalloc2", 0},
    {"std::*::allocate", "std::__new_allocator<int>::allocate", 1},
    {"^std::*allocate$", "std::vector<int>::allocate_n", 0},
    {"libfoo.so", "/usr/lib/x86_64-linux-gnu/libfoo.so.1", 1},
    {"*", "anything", 1},
    {"^a*b*c$", "aXXbYYc", 1},
    {"^a*b*c$", "aXXcYYb", 0},
    {"a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 0}, /* no blow-up */
    {"src/cache.c", "/home/u/proj/src/cache.c", 1},
};

static void check_parse(const char *name, const char *text, int want_rc, size_t want_n, const char *want_err)
{
	struct ct_suppressions s = {0};
	char err[256] = "";
	int rc = ct_supp_parse(&s, text, strlen(text), "supp.txt", err, sizeof(err));
	int ok = rc == want_rc && s.n == want_n && (!want_err || strstr(err, want_err));
	if (!ok) {
		printf("FAIL parse %s: rc %d, %zu suppressions, err '%s'\n", name, rc, s.n, err);
		failures++;
	}
	if (ok && want_rc == 0 && want_n == 2 &&
	    (strcmp(s.v[0].pattern, "xmalloc") || strcmp(s.v[1].pattern, "^libfoo*") ||
	     strcmp(s.v[1].origin, "supp.txt:4"))) {
		printf("FAIL parse %s: patterns '%s' '%s' from %s\n", name, s.v[0].pattern, s.v[1].pattern,
		       s.v[1].origin);
		failures++;
	}
	ct_supp_release(&s);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (ct_supp_match(rows[i].pattern, rows[i].name) != rows[i].match) {
			printf("FAIL '%s' on '%s': want %s\n", rows[i].pattern, rows[i].name,
			       rows[i].match ? "a match" : "none");
			failures++;
		}
	check_parse("two leaks, a comment, blanks", "leak:xmalloc\n# a comment\n\n  leak:^libfoo*  \n", 0, 2,
	            NULL);
	check_parse("CRLF lines", "leak:xmalloc\r\n\r\n\r\nleak:^libfoo*\r\n", 0, 2, NULL);
	check_parse("another sanitizer's type", "leak:a\nrace:b\n", -EINVAL, 1,
	            "supp.txt:2: expected 'leak:PATTERN'");
	check_parse("an empty pattern", "leak:\n", -EINVAL, 0, "supp.txt:1");
	check_parse("no colon", "xmalloc\n", -EINVAL, 0, "got 'xmalloc'");
	printf("%s: %zu patterns, parser cases, %d failure(s)\n", failures ? "FAIL" : "ok",
	       sizeof(rows) / sizeof(rows[0]), failures);
	return failures ? 1 : 0;
}
