/* SPDX-License-Identifier: MIT */
/* The files the analyzer reads by a name it was given or found in a trace (the trace, modules,
 * binaries to check) are read only when they are regular files: a FIFO would block the open or
 * the read forever, a device could stream without end. */
#ifndef CTRACK_REGFILE_H
#define CTRACK_REGFILE_H

#include <sys/types.h>

/* What a file of this mode is, for messages: "a FIFO", "a character device", "a directory", ...;
 * NULL for a regular file. */
const char *ct_file_kind(mode_t mode);

/* Opens path read-only and close-on-exec, without waiting for a FIFO's writer, and keeps it only if
 * it is a regular file. Returns the descriptor (the caller closes it), or a negative errno: open's
 * or fstat's, -EISDIR for a directory, -EINVAL for any other kind (*kind then says which, when kind
 * is not NULL). */
int ct_regfile_open(const char *path, const char **kind);

#endif
