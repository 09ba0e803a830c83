/* SPDX-License-Identifier: MIT */
/* Sizes as people write them on a command line ("4096", "10KiB", "2MB", "1.5GiB"), for the limits
 * a CI check sets (--max-leaked, --max-peak, --max-growth). Shared by ctrack and ctrack-analyze. */
#ifndef CTRACK_SIZE_H
#define CTRACK_SIZE_H

#include <stdint.h>

/* Parses s into bytes: a decimal number (a fraction allowed with a unit), then optionally a unit:
 * B; K, KB, M, MB, G, GB, T, TB (powers of 1000); KiB, MiB, GiB, TiB (powers of 1024). Units are
 * case-insensitive, no space before them. A fraction is rounded down to whole bytes. Returns 0 with
 * *bytes set, -EINVAL for anything else, -ERANGE past 2^64 - 1. */
int ct_parse_size(const char *s, uint64_t *bytes);

#endif
