/* SPDX-License-Identifier: MIT */
/* Dynamically linked programs the shim cannot see into, told apart before the run so that a trace is
 * never silently empty or wrong: set-user-ID and set-group-ID programs (refused), programs that
 * define malloc themselves and Go programs (a warning). Reads the file's mode and ELF sections. */
#ifndef CTRACK_UNTRACEABLE_H
#define CTRACK_UNTRACEABLE_H

#include <stddef.h>

enum ct_traceable {
	CT_TRACEABLE,
	CT_TRACE_WARN,  /* traced, but the trace misses allocations: why says which */
	CT_TRACE_REFUSE /* the shim would never load: the trace would be empty */
};

/* What ctrack can see of the program at path (an executable file, found by ct_locate_program).
 * Fills why with one line (no program name, no newline) unless CT_TRACEABLE. Anything that cannot
 * be read or is not ELF is CT_TRACEABLE: exec will tell. Static programs are elf_static.h's. */
enum ct_traceable ct_untraceable(const char *path, char *why, size_t len);

#endif
