/* SPDX-License-Identifier: MIT */
/* Runtime control of ctrack for the traced program: named marks in the trace and leak checks on
 * demand. Header-only and nothing to link (glibc 2.34 and later has dlsym in libc; older ones need
 * -ldl): each call looks the shim up, and does nothing when the program does not run under ctrack.
 *
 *   ctrack_mark("warm");          ... serve requests ...          ctrack_mark("done");
 *   $ ctrack-analyze --between warm,done trace.zst   # what grew between the two marks
 *
 *   if (ctrack_check_leaks() > 0) ...   # definitely or indirectly lost bytes, as of now
 */
#ifndef CTRACK_CTRACK_H
#define CTRACK_CTRACK_H

#include <dlfcn.h>

/* The shim's entry points behind the calls below (versioned by name: a later change of meaning
 * gets a new name, and an older shim simply lacks it). */
#define CTRACK_SHIM_MARK "ctrack_shim_mark_v1"
#define CTRACK_SHIM_CHECK_LEAKS "ctrack_shim_check_leaks_v1"

/* The shim's function called name, or NULL. The null handle is RTLD_DEFAULT (the global scope) in
 * glibc: spelled out, since RTLD_DEFAULT needs _GNU_SOURCE before the first <dlfcn.h>. Once found it
 * is kept in *cache (a loaded shim is never unloaded): a later call, from a signal handler say,
 * makes no dlsym, which waits for the loader's lock, held by the thread it interrupted in dlsym. */
static inline void *ctrack_lookup_(const char *name, void *volatile *cache)
{
	void *fn = *cache;
	if (!fn)
		*cache = fn = dlsym((void *)0, name);
	return fn;
}

/* Records a named point in the trace (names may repeat; at most 255 bytes are kept). Every
 * allocation and free the program made before the call comes before the mark. */
static inline void ctrack_mark(const char *name)
{
	static void *volatile cache;
	void (*fn)(const char *);
	*(void **)&fn = ctrack_lookup_(CTRACK_SHIM_MARK, &cache);
	if (fn)
		fn(name);
}

/* Runs the reachability scan now (the one ctrack runs at exit) and records its leak classes in the
 * trace. Returns the bytes definitely and indirectly lost (the blocks no pointer in the program's
 * memory leads to), 0 when none, or -1 when the program does not run under ctrack or the scan could
 * not run. Other threads are stopped for the scan's duration (milliseconds per 100 MiB of heap). */
static inline long long ctrack_check_leaks(void)
{
	static void *volatile cache;
	long long (*fn)(void);
	*(void **)&fn = ctrack_lookup_(CTRACK_SHIM_CHECK_LEAKS, &cache);
	return fn ? fn() : -1;
}

#endif
