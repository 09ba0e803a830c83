/* SPDX-License-Identifier: MIT */
/* Unit test of size parsing (common/size.c): each row a string and the bytes it means, worked out
 * by hand, or the error it must give. */
#include <errno.h>
#include <stdio.h>

#include "size.h"

static const struct {
	const char *text;
	int rc;
	unsigned long long bytes;
} rows[] = {
    {"0", 0, 0},
    {"4096", 0, 4096},
    {"4096B", 0, 4096},
    {"10KiB", 0, 10240},
    {"10kib", 0, 10240},
    {"10K", 0, 10000},
    {"2MB", 0, 2000000},
    {"2MiB", 0, 2097152},
    {"1.5GiB", 0, 1610612736},
    {"1.5GB", 0, 1500000000},
    {"0.5KiB", 0, 512},
    {"1.0001KiB", 0, 1024}, /* 1024.1024 rounded down */
    {"3TiB", 0, 3298534883328ull},
    {"18446744073709551615", 0, 18446744073709551615ull},
    {"18446744073709551616", -ERANGE, 0},
    {"16777216TiB", -ERANGE, 0}, /* 2^24 * 2^40 */
    {"", -EINVAL, 0},
    {"KiB", -EINVAL, 0},
    {"-1", -EINVAL, 0},
    {"1.5", -EINVAL, 0}, /* a fraction of a byte */
    {"1.", -EINVAL, 0},
    {"10 KiB", -EINVAL, 0},
    {"10KiBs", -EINVAL, 0},
    {"10XB", -EINVAL, 0},
    {" 10", -EINVAL, 0},
};

int main(void)
{
	int failures = 0;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint64_t bytes = 0;
		int rc = ct_parse_size(rows[i].text, &bytes);
		if (rc != rows[i].rc || (rc == 0 && bytes != rows[i].bytes)) {
			printf("FAIL '%s': rc %d bytes %llu, want rc %d bytes %llu\n", rows[i].text, rc,
			       (unsigned long long)bytes, rows[i].rc, rows[i].bytes);
			failures++;
		}
	}
	printf("%s: %zu sizes, %d failure(s)\n", failures ? "FAIL" : "ok", sizeof(rows) / sizeof(rows[0]),
	       failures);
	return failures ? 1 : 0;
}
