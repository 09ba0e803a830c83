/* SPDX-License-Identifier: MIT */
/* The trace file the launcher makes for the program: its name (-o, or common/rules.h's default),
 * its directory (where the shim writes the traces of followed children), its creation, which
 * never overwrites a file or follows a symlink unless told to replace it, and reading it back
 * through the descriptor made then, whatever its name names by the end of the run. */
#ifndef CTRACK_TRACEFILE_H
#define CTRACK_TRACEFILE_H

#include <stddef.h>
#include <sys/types.h>

/* The trace's name: output (-o) when not NULL, else ct_trace_name's ctrack.NAME.PID.zst in the
 * current directory, NAME the file name of program (argv[0] as typed). Returns 0, or
 * -ENAMETOOLONG when it does not fit in len (buf then holds output cut short, for messages only). */
int ct_tracefile_name(char *buf, size_t len, const char *output, const char *program, pid_t pid);

/* The absolute directory of the file named name, into buf of PATH_MAX bytes. Returns 0 or a
 * negative errno (realpath's, or -ENAMETOOLONG). */
int ct_tracefile_dir(const char *name, char *buf);

/* Creates name O_EXCL|O_NOFOLLOW, mode 0600 (a umask can only take bits away), close-on-exec, on a
 * descriptor above 2. With force, an existing regular file or symlink (the link itself, never its
 * target) is unlinked first; anything else (ct_tracefile_special) is never unlinked nor opened.
 * Returns the descriptor, owned by the caller, or a negative errno (-EEXIST: the name exists, a
 * dangling symlink too, or it is special). */
int ct_tracefile_create(const char *name, int force);

/* What an existing name is when it is neither a regular file nor a symlink: "a FIFO", "a character
 * device", "a directory", ...; NULL when it is one of those two, or absent. */
const char *ct_tracefile_special(const char *name);

/* Writes into the trace open for writing on fd, when it is still an empty regular file, a trace
 * made of the file header, a warning NOTE with text and END (a zstd frame of raw blocks): the shim
 * never wrote to it (it was not loaded, or did not start), and the reports say so. 0, or a
 * negative errno. */
int ct_tracefile_fill_empty(int fd, const char *text);

/* A read-only descriptor (close-on-exec, from offset 0) on the file that fd, open for writing
 * only, is open on, through /proc/self/fd: that file, even when its name was removed or now names
 * another. Returns it, owned by the caller, or a negative errno. */
int ct_tracefile_reopen(int fd);

/* What became of name, the name of the file open on fd: NULL when it still names that file (or
 * cannot be told), "removed" or "replaced by another file". */
const char *ct_tracefile_moved(const char *name, int fd);

#endif
