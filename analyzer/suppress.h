/* SPDX-License-Identifier: MIT */
/* Leak suppressions in LeakSanitizer's syntax: lines `leak:PATTERN`, `#` comments and blank lines;
 * a pattern matches a function, source file or module name of any frame of a leak's backtrace,
 * anywhere in the name unless anchored (`^` at its start, `$` at its end), with `*` for any run of
 * characters. Each suppression counts the blocks and bytes it matched, so reports can name the
 * ones that matched nothing. A built-in list covers what the C runtime, the loader and libstdc++
 * allocate once and never free by design. */
#ifndef CTRACK_SUPPRESS_H
#define CTRACK_SUPPRESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct ct_suppression {
	char *pattern;          /* owned */
	char *origin;           /* "FILE:LINE", or the source's name: owned */
	uint64_t blocks, bytes; /* matched so far */
	int builtin;            /* from the built-in list: matching nothing is no news */
};

struct ct_suppressions {
	struct ct_suppression *v;
	size_t n;
	int applied; /* ct_supp_apply took the blocks out of the classes; else it only counted them */
	/* Indirectly lost blocks no suppression matched: those that hang from suppressed blocks only
	 * (LeakSanitizer leaves them out too, so they go with them), and those that may (they count). */
	uint64_t held_blocks, held_bytes;
	uint64_t unsure_blocks, unsure_bytes;
};

/* Adds the suppressions in text (len bytes) read from `origin` (a file name, or a description such
 * as "__lsan_default_suppressions"). Returns 0, -ENOMEM, or -EINVAL with a one-line reason in err
 * naming origin and line (a line that is not `leak:PATTERN`; LeakSanitizer's other types are
 * refused, not ignored, so a typo never silently suppresses nothing). */
int ct_supp_parse(struct ct_suppressions *s, const char *text, size_t len, const char *origin, char *err,
                  size_t errlen);
void ct_supp_release(struct ct_suppressions *s);

/* Adds the built-in list (origin "built-in"; README, "Suppressions"). 0 or -ENOMEM. */
int ct_supp_add_builtin(struct ct_suppressions *s);

/* 1 when pattern matches name by the rules above. */
int ct_supp_match(const char *pattern, const char *name);

struct ct_model;
struct ct_symbolizer;
/* Suppresses the leaks of m whose allocation stack has a frame (any: allocator and runtime frames
 * too) whose function, source file or module matches a suppression: the first suppression that
 * matches counts them and, when `take`, their blocks leave every leak class (m must be classified;
 * they stay live). The indirectly lost blocks that suppressed ones hold are suppressed with them,
 * as LeakSanitizer does (held_*): the trace's HOLDERS say which site's definitely lost block holds
 * them. A trace without HOLDERS says only that each hangs from a definitely lost block, so that is
 * known only when every definitely lost block is suppressed; otherwise those that may are counted
 * (unsure_*) and stay. Returns 0 or -ENOMEM. */
int ct_supp_apply(struct ct_suppressions *s, struct ct_model *m, struct ct_symbolizer *sym, int take);

/* What the suppressions matched, one line each on out ("suppressed by leak:P (ORIGIN): 64 bytes in
 * 1 block"; "suppressed in checks by" when they were not applied), the indirectly lost blocks that
 * went with them, a note for those that may have, and when applied, a warning for each suppression
 * (not a built-in one) that matched nothing. */
void ct_supp_put(const struct ct_suppressions *s, FILE *out);

#endif
