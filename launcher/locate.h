/* SPDX-License-Identifier: MIT */
/* Finding executables: the program to trace, searched on PATH as execvp would, and the launcher's
 * companions (the shim, the analyzer), looked for beside the launcher's own executable first so that
 * build/ctrack runs in place. Paths go to the caller's buffer; a path that does not fit is an error,
 * never another file. */
#ifndef CTRACK_LOCATE_H
#define CTRACK_LOCATE_H

#include <stddef.h>

/* The file exec would run for name: name itself when it has a '/', else the first executable
 * candidate on PATH. Returns 0 with the path in buf, or the errno exec would most likely give,
 * negated: -ENOENT, -EACCES (not executable; on PATH it beats -ENOENT, as in execvp), -EISDIR,
 * -ENAMETOOLONG. */
int ct_locate_program(const char *name, char *buf, size_t len);

/* The shim: CTRACK_SHIM_NAME beside the launcher, else in CTRACK_SHIM_DIR. Returns 0 with its
 * path in buf, -ENOENT or -ENAMETOOLONG. */
int ct_locate_shim(char *buf, size_t len);

/* The command that runs the analyzer, for the closing message: the ctrack-analyze beside the
 * launcher (run in place from the build tree), or the bare name when there is none there or PATH
 * finds that very file anyway. Always fills buf. */
void ct_locate_analyzer(char *buf, size_t len);

#endif
