/* SPDX-License-Identifier: MIT */
/* The shared rules of rules.h: depth, trace names. Runs inside the shim's hooks: no malloc, no
 * stdio, errno untouched. */
#include <errno.h>
#include <string.h>

#include "rules.h"
#include "size.h"
#include "text.h"

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

int ct_parse_lanes(const char *s, int *lanes)
{
	if (!s || !s[0] || s[1] || (s[0] != '1' && s[0] != '2' && s[0] != '4'))
		return -EINVAL;
	*lanes = s[0] - '0';
	return 0;
}

int ct_parse_snapshot_ms(const char *s, unsigned *ms)
{
	unsigned long v = 0;
	if (!s || !*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > CT_SNAPSHOT_MS_MAX)
			return -EINVAL;
		v = v * 10 + (unsigned long)(*s - '0');
	}
	if (v < CT_SNAPSHOT_MS_MIN || v > CT_SNAPSHOT_MS_MAX)
		return -EINVAL;
	*ms = (unsigned)v;
	return 0;
}

int ct_parse_sample(const char *s, uint64_t *bytes)
{
	uint64_t v;
	if (!s || ct_parse_size(s, &v) < 0 || v == 0 || v > CT_SAMPLE_MAX)
		return -EINVAL;
	*bytes = v;
	return 0;
}

int ct_parse_seed(const char *s, uint64_t *seed)
{
	uint64_t r = 0;
	if (!s || !*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || r > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		r = r * 10 + (uint64_t)(*s - '0');
	}
	*seed = r;
	return 0;
}

const char *ct_basename(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

int ct_trace_name(char *buf, size_t len, const char *dir, const char *program, pid_t pid, unsigned attempt)
{
	if (!len)
		return -ENAMETOOLONG;
	struct ct_text t = ct_text_in(buf, len);
	if (dir && *dir) {
		ct_text_add(&t, dir);
		ct_text_add(&t, "/");
	}
	ct_text_add(&t, "ctrack.");
	ct_text_add(&t, ct_basename(program));
	ct_text_add(&t, ".");
	ct_text_add_uint(&t, (uint64_t)pid);
	if (attempt) {
		/* Two digits at least, so that a directory listing sorts .01 ... .09 before .10 */
		ct_text_add(&t, attempt < 10 ? ".0" : ".");
		ct_text_add_uint(&t, attempt);
	}
	ct_text_add(&t, ".zst");
	return t.cut ? -ENAMETOOLONG : 0;
}
