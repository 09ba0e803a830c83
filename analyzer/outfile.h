/* SPDX-License-Identifier: MIT */
/* The files ctrack-analyze writes. Before: a path that would destroy what the run reads (one of its
 * inputs, by any name) or another trace is refused. While: a stream that keeps the errno of the
 * first write that failed, since stdio keeps only an error flag and errno is long overwritten
 * (libdw's lookups, malloc) when a writer or fclose notices, so a full disk was told as "Input/output
 * error". */
#ifndef CTRACK_OUTFILE_H
#define CTRACK_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

struct ct_outfile {
	FILE *f;
	int fd;  /* what f writes to */
	int own; /* fd was opened here: closed with f */
	int err; /* the errno of the first write that failed, or 0 */
};

/* Opens path for writing, created or truncated ("-": standard output, whose descriptor stays open;
 * a terminal keeps stdout itself, whose descriptor the text report's colours look at). Returns 0,
 * or -errno (open's, or ENOMEM). */
int ct_outfile_open(struct ct_outfile *o, const char *path);

/* Flushes and closes o (standard output is flushed only). Returns 0, or -errno: the first failed
 * write's, else fflush's or close's. */
int ct_outfile_close(struct ct_outfile *o);

/* What writing path would destroy, if anything: 0 nothing (path does not exist, or is none of the
 * following), 1 the file inputs[*which] names (the same device and inode, by whatever name), 2 a
 * ctrack trace (a regular file whose decompressed stream starts with the trace magic). */
int ct_outfile_clobbers(const char *path, const char *const *inputs, size_t n, size_t *which);

#endif
