/* SPDX-License-Identifier: MIT */
/* Short texts without stdio or malloc (text.h). Safe inside malloc: no allocation, no lock, errno
 * untouched. */
#include <string.h>

#include "text.h"

/* Appends n bytes of s. */
static void add_bytes(struct ct_text *t, const char *s, size_t n)
{
	if (t->len + n >= t->cap) {
		n = t->cap - 1 - t->len;
		t->cut = 1;
	}
	memcpy(t->s + t->len, s, n);
	t->len += n;
	t->s[t->len] = 0;
}

void ct_text_addn(struct ct_text *t, const char *s, size_t n)
{
	add_bytes(t, s, strnlen(s, n));
}
void ct_text_add(struct ct_text *t, const char *s)
{
	add_bytes(t, s, strlen(s));
}

void ct_text_add_uint(struct ct_text *t, uint64_t v)
{
	char digits[21];
	int i = sizeof(digits);
	do
		digits[--i] = (char)('0' + v % 10);
	while ((v /= 10) && i > 0);
	add_bytes(t, digits + i, sizeof(digits) - (size_t)i);
}
