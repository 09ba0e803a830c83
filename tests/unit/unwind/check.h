/* SPDX-License-Identifier: MIT */
/* The comparison shared by the unwinder test programs (C and C++): one walk of each kind from the
 * same call site must give identical arrays; failures are counted, thread-safely. */
#ifndef CTU_CHECK_H
#define CTU_CHECK_H

#ifdef __cplusplus
extern "C" {
#endif

enum ctt_expect { CTT_FAST, CTT_FALLBACK, CTT_EITHER };

/* Compares ct_unwind with ct_unwind_slow here; expect says whether libunwind must (not) be used. */
void ctt_check(const char *where, int max, enum ctt_expect expect);
/* Prints the totals; returns the exit status (0 when every check passed and there was one). */
int ctt_report(const char *name);

#ifdef __cplusplus
}
#endif
#endif
