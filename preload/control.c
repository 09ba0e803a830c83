/* SPDX-License-Identifier: MIT */
/* What a traced program reaches through include/ctrack/ctrack.h: a named mark in the trace, and the
 * leak scan on demand. Called by the program outside any hook; each waits for the writer. */
#include <errno.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>

#include "control.h"
#include "shim.h"
#include "writer.h"

#define CT_EXPORTED __attribute__((visibility("default")))

/* The names CTRACK_SHIM_MARK and CTRACK_SHIM_CHECK_LEAKS of include/ctrack/ctrack.h. */
CT_EXPORTED void ctrack_shim_mark_v1(const char *name);
CT_EXPORTED long long ctrack_shim_check_leaks_v1(void);

void ctrack_shim_mark_v1(const char *name)
{
	int e = errno;
	if (ct_track_owns())
		ct_writer_mark(name ? name : "");
	errno = e;
}

__attribute__((noinline)) int ct_control_check(uint64_t lost[CT_CLASSES], uint64_t blocks[CT_CLASSES])
{
	/* The caller's callee-saved registers may hold its only pointer to a block: those this frame
	 * has not pushed yet are spilled here, and the scan takes this frame and all above it. Zeroed
	 * first: setjmp leaves the buffer's signal mask (128 bytes) as the stack held it, and a dead
	 * word there (a signal frame's saved register, say) made a lost block reachable. */
	jmp_buf regs;
	memset(regs, 0, sizeof(regs));
	setjmp(regs);
	return ct_track_owns() ? ct_writer_check(regs, lost, blocks) : -1;
}

long long ctrack_shim_check_leaks_v1(void)
{
	int e = errno;
	uint64_t lost[CT_CLASSES] = {0}, blocks[CT_CLASSES] = {0}; /* scanned as roots: no stale words */
	long long lost_bytes = -1;
	if (ct_control_check(lost, blocks) == 0)
		lost_bytes = (long long)(lost[CT_CLASS_DEFINITE] + lost[CT_CLASS_INDIRECT]);
	errno = e;
	return lost_bytes;
}
