/* SPDX-License-Identifier: MIT */
/* AddressSanitizer's defaults for ctrack built with -Dsanitize=true (built into it then only).
 * ctrack is run with the user's LD_PRELOAD in its environment, because the traced program must get
 * it; the loader then loads that library into ctrack too, before libasan, and ASan refuses to start
 * when its runtime is not first (it would miss what an earlier library's malloc did). ctrack only
 * passes LD_PRELOAD on, so the check is left out; ASAN_OPTIONS still overrides this. */

const char *__asan_default_options(void);

const char *__asan_default_options(void)
{
	return "verify_asan_link_order=0";
}
