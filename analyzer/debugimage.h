/* SPDX-License-Identifier: MIT */
/* Separate debug files with compressed DWARF, opened decompressed: libdw 0.188 inflates every
 * compressed .debug_* section with zlib when it opens a file (libc6-dbg's 4 MiB become 10 MiB: about
 * 35 ms, more than the rest of a small trace's report), the location lists the analyzer never reads
 * included. This does it once with libdeflate, on two threads, and leaves those lists out. */
#ifndef CTRACK_DEBUGIMAGE_H
#define CTRACK_DEBUGIMAGE_H

/* Takes fd, an ELF file open for reading. Returns a descriptor of an in-memory copy of it whose
 * zlib-compressed .debug_* sections are stored uncompressed and whose .debug_loc and
 * .debug_loclists are empty (every other byte, section index, header and name as in the file), or
 * fd itself when it has no such section or the copy cannot be made (not ELF64 of this machine's byte
 * order, damaged, no memory): libdw then reads the file as it would have. Never fails. */
int ct_debugimage_open(int fd);

#endif
