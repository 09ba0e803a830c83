/* SPDX-License-Identifier: MIT */
/* Benchmark workload "churn" (scripts/bench): one thread, 2,000,000 malloc/free pairs of random sizes 1..4096
 * with 16 blocks live at a time. Usage: churn [PAIRS]; PAIRS - 16 must be even. Exit 0, or 1 on error. */
#include <stdio.h>
#include <string.h>

#include "churn_kernel.h"

int main(int argc, char **argv)
{
	long pairs = count_arg(argc, argv, 1, 2000000);
	if (pairs < 0) {
		fprintf(stderr, "usage: churn [PAIRS]\n");
		return 1;
	}
	int err = run_churn(0x5eed, pairs);
	if (err) {
		fprintf(stderr, "churn: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}
