/* SPDX-License-Identifier: MIT */
/* Unit test of --max-growth (analyzer/baseline.c): each row a growth, a base and the most the base
 * may become, worked out by hand in decimal. A share's allowance is never smaller than the share
 * says (a fraction of a byte rounds up) and never a byte larger (floating point would make 16.1% of
 * 1000 bytes 161.00000000000003, so 162). */
#include <stdint.h>
#include <stdio.h>

#include "baseline.h"

static const struct {
	const char *growth;
	uint64_t base, allowed;
} rows[] = {
    {"10%", 1000, 1100},
    {"9.95%", 1000, 1100}, /* 99.5 bytes: 100 */
    {"9.9%", 1000, 1099},
    {"16.1%", 1000, 1161},
    {"0.07%", 100000, 100070},
    {"0.001%", 1, 2}, /* a hundred-thousandth of a byte is still more than nothing */
    {"0%", 1000, 1000},
    {"5%", 0, 0},
    {"0.000000000000000001%", 100, 101},
    {"200%", UINT64_MAX / 2, UINT64_MAX}, /* more than can be said: all */
    {"100", 1000, 1100},
    {"1KiB", 1000, 2024},
    {"1KiB", UINT64_MAX - 10, UINT64_MAX},
};

static const char *const bad[] = {
    "", "%", "5 %", "-5%", ".5%", "5.%", "1e1%", "0x10%", "5%%", "nan%", "1234567890123456789%", "lots"};

int main(void)
{
	int failures = 0;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct ct_growth g;
		uint64_t got = 0;
		int rc = ct_growth_parse(rows[i].growth, &g);
		if (!rc)
			got = ct_growth_allowed(rows[i].base, &g);
		if (rc || got != rows[i].allowed) {
			printf("FAIL %s of %llu: rc %d, allowed %llu, want %llu\n", rows[i].growth,
			       (unsigned long long)rows[i].base, rc, (unsigned long long)got,
			       (unsigned long long)rows[i].allowed);
			failures++;
		}
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ct_growth g;
		if (ct_growth_parse(bad[i], &g) != -1) {
			printf("FAIL '%s' parsed, want an error\n", bad[i]);
			failures++;
		}
	}
	printf("%d failures\n", failures);
	return failures != 0;
}
