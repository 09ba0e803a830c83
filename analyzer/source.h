/* SPDX-License-Identifier: MIT */
/* Source lines for reports (source.c): the lines around a frame's line, read from the source file
 * when it is a readable regular text file of a bounded size, so a report can show the code it
 * points at. Bounded in every way: lines cut at CT_SOURCE_LINE_MAX bytes, at most CT_SOURCE_FILES
 * files kept, CT_SOURCE_BUDGET bytes kept in all, files over CT_SOURCE_FILE_MAX refused. */
#ifndef CTRACK_SOURCE_H
#define CTRACK_SOURCE_H

#include <stddef.h>

#define CT_SOURCE_LINE_MAX 200        /* bytes of a line kept; the rest is cut */
#define CT_SOURCE_FILE_MAX (4u << 20) /* a larger file is not read */
#define CT_SOURCE_FILES 64            /* files kept read at once (the least recently used go) */
#define CT_SOURCE_BUDGET (32u << 20)  /* bytes kept read in all */

/* One line of source: its number (from 1), its text without the newline (NUL-terminated, at most
 * CT_SOURCE_LINE_MAX bytes), and whether it was longer. */
struct ct_source_line {
	unsigned number;
	int cut;
	char text[CT_SOURCE_LINE_MAX + 1];
};

/* The files read so far, and those that could not be (asked again, they are not tried again). */
struct ct_sources;

/* NULL when out of memory. */
struct ct_sources *ct_sources_new(void);
void ct_sources_free(struct ct_sources *s);

/* The lines from line - context to line + context (those the file has) of the file at path into
 * out (max elements), in order. Returns how many, 0 when the file cannot be shown (not a regular
 * file, unreadable, larger than CT_SOURCE_FILE_MAX, holding a NUL byte, or shorter than line; line
 * 0), or -ENOMEM. The file is opened without following a FIFO's or a device's wait (O_NONBLOCK) and
 * read once; out owns its text. */
int ct_source_lines(struct ct_sources *s, const char *path, unsigned line, unsigned context,
                    struct ct_source_line *out, size_t max);

#endif
