/* SPDX-License-Identifier: MIT */
/* The rules the launcher and the shim must apply alike, defined once: the backtrace depth limit,
 * the default trace file name, the settings the launcher hands the shim (CTRACK_* variables).
 * Safe inside malloc: nothing here allocates, locks, uses stdio or changes errno. */
#ifndef CTRACK_RULES_H
#define CTRACK_RULES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Backtrace depth: frames kept per allocation. Deeper stacks are cut and marked (format.h's
 * truncated root). The one maximum: a larger request is an error, never a silent clamp. */
#define CT_DEPTH_DEFAULT 64
#define CT_DEPTH_MAX 256

/* The environment the launcher hands the shim, with their defaults:
 *   CTRACK_DEPTH   backtrace depth, 1..CT_DEPTH_MAX (CT_DEPTH_DEFAULT)
 *   CTRACK_FOLLOW  "1": forked and exec'd children are traced too (not followed)
 *   CTRACK_DIR     directory for the traces of followed children (the current directory)
 *   CTRACK_FD      FD:DEV:INO of the trace file the launcher created (the shim creates its own)
 *   CTRACK_SHIM    path of the shim, to take out of LD_PRELOAD for children that are not traced
 *   CTRACK_STATUS  PATH:DEV:INO of the launcher's status page (status.h); set with CTRACK_FOLLOW=1
 *                  only, whose runs keep every CTRACK_* variable (the shim forgets them otherwise) */
#define CT_ENV_DEPTH "CTRACK_DEPTH"
#define CT_ENV_FOLLOW "CTRACK_FOLLOW"
#define CT_ENV_DIR "CTRACK_DIR"
#define CT_ENV_FD "CTRACK_FD"
#define CT_ENV_SHIM "CTRACK_SHIM"
#define CT_ENV_STATUS "CTRACK_STATUS"
#define CT_ENV_LANES "CTRACK_LANES" /* the matcher's lanes (ct_parse_lanes); unset: 1 */
/* "signal": the leak scan stops the program's threads with a signal, never with ptrace (the
 * fallback, preload/stopworld.h; for tests). */
#define CT_ENV_SCAN_STOP "CTRACK_SCAN_STOP"
#define CT_LANES_MAX 4
/* Sampling (preload/sample.h): one allocation per CTRACK_SAMPLE bytes on average is recorded
 * (ct_parse_sample; unset: every allocation). CTRACK_SAMPLE_SEED (a whole number) makes the choice
 * repeatable: the same program and seed sample the same allocations (one thread's, at least). */
#define CT_ENV_SAMPLE "CTRACK_SAMPLE"
#define CT_ENV_SAMPLE_SEED "CTRACK_SAMPLE_SEED"
#define CT_SAMPLE_MAX (64ull << 20) /* format.h's CT_SAMPLING_RATE_MAX; a thread's countdown is 32 bits */
/* Aggregated tracing (ctrack --aggregate): the snapshot interval in milliseconds
 * (ct_parse_snapshot_ms); unset: a full trace, every event. */
#define CT_ENV_AGGREGATE "CTRACK_AGGREGATE"
#define CT_SNAPSHOT_MS_DEFAULT 1000
#define CT_SNAPSHOT_MS_MIN 10
#define CT_SNAPSHOT_MS_MAX 86400000 /* a day */

/* Parses a depth ("64"): 0 with *depth set, or -EINVAL for anything but a whole number from 1
 * to CT_DEPTH_MAX. */
int ct_parse_depth(const char *s, int *depth);

/* Parses a number of lanes ("2"): 0 with *lanes set, or -EINVAL for anything but 1, 2 or 4
 * (CT_LANES_MAX). One lane is the writer thread alone; with more, the writer orders the events and
 * that many threads of the shim's match them, each for its share of the addresses (ARCHITECTURE.md). */
int ct_parse_lanes(const char *s, int *lanes);

/* Parses a snapshot interval in milliseconds ("1000"): 0 with *ms set, or -EINVAL for anything but
 * a whole number from CT_SNAPSHOT_MS_MIN to CT_SNAPSHOT_MS_MAX. */
int ct_parse_snapshot_ms(const char *s, unsigned *ms);

/* Parses a sampling rate, a size as ct_parse_size takes it ("512KiB", "4096"): 0 with *bytes set,
 * or -EINVAL for anything else, 0 and rates above CT_SAMPLE_MAX included. */
int ct_parse_sample(const char *s, uint64_t *bytes);
/* Parses CTRACK_SAMPLE_SEED, a whole number ("42"): 0 with *seed set, or -EINVAL. */
int ct_parse_seed(const char *s, uint64_t *seed);

/* The last component of path (path itself when it has no '/'). */
const char *ct_basename(const char *path);

/* The default trace name: [DIR/]ctrack.NAME.PID.zst, NAME the program's file name, and
 * ctrack.NAME.PID.NN.zst for attempt NN > 0, two digits at least (.01, .02, ... .10: they sort in
 * order; an exec'd image keeps its pid, so its name may be taken). dir may be NULL or "" for the
 * current directory. Returns 0, or -ENAMETOOLONG when it does not fit in len bytes (buf then holds
 * no usable name). */
int ct_trace_name(char *buf, size_t len, const char *dir, const char *program, pid_t pid, unsigned attempt);

#endif
