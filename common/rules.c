/* SPDX-License-Identifier: MIT */
/* The shared rules of rules.h: depth, trace names. Runs inside the shim's hooks: no malloc, no
 * stdio, errno untouched. */
#include <errno.h>
#include <string.h>

#include "rules.h"

int ct_parse_depth(const char *s, int *depth)
{
	long v = 0;
	if (!s || !*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > CT_DEPTH_MAX)
			return -EINVAL;
		v = v * 10 + (*s - '0');
	}
	if (v < 1 || v > CT_DEPTH_MAX)
		return -EINVAL;
	*depth = (int)v;
	return 0;
}

const char *ct_basename(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* Appends src at *at; -1 once the buffer is full. */
static int append(char *dst, size_t *at, size_t cap, const char *src)
{
	size_t n = strlen(src);
	if (*at + n >= cap)
		return -1;
	memcpy(dst + *at, src, n + 1);
	*at += n;
	return 0;
}

static int append_uint(char *dst, size_t *at, size_t cap, unsigned long v)
{
	char tmp[24];
	int i = sizeof(tmp) - 1;
	tmp[i] = 0;
	do
		tmp[--i] = (char)('0' + v % 10);
	while ((v /= 10) && i > 0);
	return append(dst, at, cap, tmp + i);
}

int ct_trace_name(char *buf, size_t len, const char *dir, const char *program, pid_t pid, unsigned attempt)
{
	size_t at = 0;
	int rc = 0;
	if (!len)
		return -ENAMETOOLONG;
	buf[0] = 0;
	if (dir && *dir)
		rc |= append(buf, &at, len, dir) | append(buf, &at, len, "/");
	rc |= append(buf, &at, len, "ctrack.") | append(buf, &at, len, ct_basename(program));
	rc |= append(buf, &at, len, ".") | append_uint(buf, &at, len, (unsigned long)pid);
	if (attempt)
		rc |= append(buf, &at, len, ".") | append_uint(buf, &at, len, attempt);
	rc |= append(buf, &at, len, ".zst");
	return rc ? -ENAMETOOLONG : 0;
}
