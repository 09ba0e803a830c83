/* SPDX-License-Identifier: MIT */
/* For the test programs whose signal handlers allocate (sigloop.c, sigdefer.c): whether a signal
 * interrupted libc or the loader, whose malloc (and locks) must not be entered again from the
 * handler. Anything else may be interrupted: the program's own code, and ctrack's shim, which
 * must cope. Call interrupted_init() once, before the signals start. */
#ifndef CTRACK_TEST_INTERRUPTED_H
#define CTRACK_TEST_INTERRUPTED_H

#include <link.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>

static uintptr_t avoid_lo[2], avoid_hi[2]; /* libc's and ld.so's spans */

static int find_avoided(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size, (void)arg;
	int k = strstr(info->dlpi_name, "/libc.so") ? 0 : strstr(info->dlpi_name, "/ld-linux") ? 1 : -1;
	if (k < 0)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type != PT_LOAD)
			continue;
		if (!avoid_lo[k] || lo < avoid_lo[k])
			avoid_lo[k] = lo;
		if (lo + ph->p_memsz > avoid_hi[k])
			avoid_hi[k] = lo + ph->p_memsz;
	}
	return 0;
}

/* 0, or -1 when libc or ld.so was not found. */
static int interrupted_init(void)
{
	dl_iterate_phdr(find_avoided, NULL);
	return avoid_hi[0] && avoid_hi[1] ? 0 : -1;
}

/* Whether the code the signal (handler argument uc) interrupted lies in libc or ld.so. */
static int interrupted_libc(const void *uc)
{
	uintptr_t ip = (uintptr_t)((const ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
	for (int k = 0; k < 2; k++)
		if (ip >= avoid_lo[k] && ip < avoid_hi[k])
			return 1;
	return 0;
}

#endif
