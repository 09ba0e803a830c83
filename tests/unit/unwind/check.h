/* SPDX-License-Identifier: MIT */
/* The comparison shared by the unwinder test programs (C and C++): one walk of each kind from the
 * same call site must give identical arrays; failures are counted, thread-safely. */
#ifndef CTU_CHECK_H
#define CTU_CHECK_H

#ifdef __cplusplus
extern "C" {
#endif

/* Compares ct_unwind with libunwind's walk here; ct_unwind must not cut its walk short. */
void ctt_check(const char *where, int max);
/* Prints the totals; returns the exit status (0 when every check passed and there was one). */
int ctt_report(const char *name);

#ifdef __cplusplus
}
#endif
#endif
