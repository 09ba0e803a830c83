/* SPDX-License-Identifier: MIT */
/* Parsing sizes with units (size.h), exactly: integer arithmetic, no strtod, so "1.5GiB" is
 * 1610612736 on every machine. */
#include <errno.h>
#include <strings.h>

#include "size.h"

__extension__ typedef unsigned __int128 u128;

static const struct {
	const char *name;
	uint64_t factor;
} units[] = {
    {"", 1},
    {"b", 1},
    {"k", 1000ull},
    {"kb", 1000ull},
    {"m", 1000000ull},
    {"mb", 1000000ull},
    {"g", 1000000000ull},
    {"gb", 1000000000ull},
    {"t", 1000000000000ull},
    {"tb", 1000000000000ull},
    {"kib", 1ull << 10},
    {"mib", 1ull << 20},
    {"gib", 1ull << 30},
    {"tib", 1ull << 40},
};

static int unit_factor(const char *s, uint64_t *factor)
{
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcasecmp(s, units[i].name)) {
			*factor = units[i].factor;
			return 0;
		}
	return -EINVAL;
}

int ct_parse_size(const char *s, uint64_t *bytes)
{
	uint64_t whole = 0, frac = 0, scale = 1, factor;
	const char *p = s;
	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		uint64_t digit = (uint64_t)(*p - '0');
		if (whole > (UINT64_MAX - digit) / 10)
			return -ERANGE;
		whole = whole * 10 + digit;
	}
	if (*p == '.') {
		if (p[1] < '0' || p[1] > '9')
			return -EINVAL;
		for (p++; *p >= '0' && *p <= '9'; p++)
			if (scale <
			    1000000000000000000ull) { /* 18 digits are plenty: the rest is below a byte */
				frac = frac * 10 + (uint64_t)(*p - '0');
				scale *= 10;
			}
	}
	if (unit_factor(p, &factor) < 0 || (scale > 1 && factor == 1))
		return -EINVAL; /* an unknown unit, or a fraction of a byte */
	if (whole > UINT64_MAX / factor)
		return -ERANGE;
	/* frac / scale of the unit, rounded down; frac < scale <= 10^18 and factor <= 2^40 overflow 64
	 * bits together, not 128. */
	uint64_t part = (uint64_t)((u128)frac * factor / scale);
	if (whole * factor > UINT64_MAX - part)
		return -ERANGE;
	*bytes = whole * factor + part;
	return 0;
}
