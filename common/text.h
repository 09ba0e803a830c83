/* SPDX-License-Identifier: MIT */
/* Building a short text in a caller's buffer without stdio or malloc, for code that runs inside
 * the program's malloc or on the shim's writer thread (which must not take the program's stdio
 * locks): trace names, NOTE texts. The text is always NUL-terminated; what does not fit is cut and
 * remembered. */
#ifndef CTRACK_TEXT_H
#define CTRACK_TEXT_H

#include <stddef.h>
#include <stdint.h>

struct ct_text {
	char *s; /* the caller's buffer, cap bytes */
	size_t len, cap;
	int cut; /* something did not fit */
};

/* An empty text in buf (cap >= 1). */
static inline struct ct_text ct_text_in(char *buf, size_t cap)
{
	buf[0] = 0;
	return (struct ct_text){buf, 0, cap, 0};
}

/* Appends the first n bytes of s (up to a NUL). */
void ct_text_addn(struct ct_text *t, const char *s, size_t n);
void ct_text_add(struct ct_text *t, const char *s);
/* Appends v in decimal. */
void ct_text_add_uint(struct ct_text *t, uint64_t v);

#endif
