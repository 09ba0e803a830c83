/* SPDX-License-Identifier: MIT */
/* Where libdwfl finds debug info: the one search path of this process (libdwfl's default, then each
 * --debug-dir) and the callbacks every Dwfl of the analyzer is opened with. */
#ifndef CTRACK_DEBUGINFO_H
#define CTRACK_DEBUGINFO_H

#include <elfutils/libdwfl.h>

/* debug_dirs: NULL, or a colon-separated list of absolute directories searched for separate debug
 * info (DIR/.build-id/xx/yyyy.debug, and by .gnu_debuglink) after the standard ones. Call before
 * opening any Dwfl. Returns 0 or -ENOMEM. */
int ct_debuginfo_set_dirs(const char *debug_dirs);

/* Looks for the separate debug file of the module with this build-id now (a few opens), and starts
 * copying its compressed DWARF decompressed (debugimage.h) on a thread of its own: the debug info
 * libdwfl then asks for by that build-id is ready, or nearer to it. Call after
 * ct_debuginfo_set_dirs; a build-id given again, or past the first 64, is ignored. Never fails:
 * without a thread, nothing is done ahead. */
void ct_debuginfo_prefetch(const unsigned char *build_id, size_t len);

/* ct_debuginfo_prefetch for the C library this process runs with, before any trace is read: a trace
 * made on this machine has its frames in that very file (same build-id), and its debug file is the
 * biggest to decompress, so the copy starts at once rather than at its first frame. A trace of
 * another libc only leaves the copy unused. */
void ct_debuginfo_prefetch_own_libc(void);

/* 1 while the debug file of this build-id is being copied ahead (libdwfl asking for it now would
 * wait), else 0. */
int ct_debuginfo_pending(const unsigned char *build_id, size_t len);

/* Waits until no debug file is being copied ahead (returns at once when none is). */
void ct_debuginfo_wait_copies(void);

/* 1 when ct_debuginfo_prefetch found the separate debug file of this build-id, else 0 (none, or
 * never asked). */
int ct_debuginfo_found(const unsigned char *build_id, size_t len);

/* Frees what ct_debuginfo_set_dirs and ct_debuginfo_prefetch keep (after the last Dwfl is closed),
 * waiting for the thread of the latter. */
void ct_debuginfo_free(void);

/* Callbacks for dwfl_begin: offline files, separate debug info found the standard ways
 * (build-id, .gnu_debuglink, debuginfod when DEBUGINFOD_URLS is set). */
const Dwfl_Callbacks *ct_debuginfo_callbacks(void);

/* The file libdebuginfod caches a build-id's (lowercase hex) debug info in, or NULL when it is not
 * there. Returns a malloc'd path. */
char *ct_debuginfod_cache_file(const char *build_id);

#endif
