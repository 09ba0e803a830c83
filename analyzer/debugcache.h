/* SPDX-License-Identifier: MIT */
/* The inflated copies of debug files (debugimage.h) kept between runs, as perf keeps its build-id
 * cache and debuginfod's client its downloads: libc6-dbg's copy took half of a small trace's report.
 *
 * Where: $CTRACK_CACHE_DIR, else $XDG_CACHE_HOME/ctrack/debug, else $HOME/.cache/ctrack/debug, those
 * two only when the directory named is this user's (not under `sudo`, which keeps the user's HOME);
 * CTRACK_CACHE_DIR set empty turns the cache off. The directory is made 0700 and used only when it
 * is this user's own, not a symlink, and writable by no one else; entries are 0600. It holds at most
 * $CTRACK_CACHE_MAX bytes (a K, M or G suffix counts 1024s; default 1G): the entries used longest ago
 * go first, and a copy bigger than a quarter of that is not kept. An entry is named by its file's build-id,
 * size and modification time, and is taken only when its size, ELF header and section headers are those the
 * copy would have (an entry cut short by a crash before its pages reached the disk is not). */
#ifndef CTRACK_DEBUGCACHE_H
#define CTRACK_DEBUGCACHE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* An entry's name, from its debug file's build-id and stat. */
#define CT_DEBUGCACHE_NAME 192
void ct_debugcache_name(char name[CT_DEBUGCACHE_NAME], const unsigned char *build_id, size_t len,
                        const struct stat *st);

/* The entry `name` of size bytes that starts with head (head_len bytes) and holds tail (tail_len
 * bytes) at its end: a read-only descriptor, marked as used now, or -1 when there is none such. */
int ct_debugcache_get(const char *name, uint64_t size, const void *head, size_t head_len, const void *tail,
                      size_t tail_len);

/* A new file without a name in the cache's directory, open for reading and writing, with room for a
 * copy of size bytes taken on the disk; -1 when there is no cache, the copy is too big for it, or
 * the disk has no room. */
int ct_debugcache_create(uint64_t size);

/* Names the copy written into fd (from ct_debugcache_create) `name`, unless another run did first,
 * then drops the entries used longest ago while the cache holds more than its size. */
void ct_debugcache_keep(int fd, const char *name);

/* The cache's own small files beside the copies (never trimmed: a name without the copies'
 * suffix). ct_debugcache_open_file: the file `name`, open for reading, or -1 (none, or not a regular
 * file of this user's). ct_debugcache_put_file: writes it whole or not at all (under another name,
 * renamed over it), readable by this user only. */
int ct_debugcache_open_file(const char *name);
void ct_debugcache_put_file(const char *name, const void *data, size_t len);

#endif
