/* SPDX-License-Identifier: MIT */
/* The status page: how a followed process that could not get a trace of its own tells the launcher,
 * without a word on its stderr or a descriptor of its own (it may have none left). With
 * --follow-children the launcher maps a small shared file and names it to the shim
 * (CTRACK_STATUS=PATH:DEV:INO, common/rules.h); each traced process maps it when its writer
 * starts, and a forked child inherits the mapping. A child that cannot create its trace claims a
 * slot and writes who it is and the errno; the launcher reads the slots after the run. The shim's
 * side is safe inside malloc: nothing here allocates, locks, uses stdio or changes errno. */
#ifndef CTRACK_STATUS_H
#define CTRACK_STATUS_H

#include <stdint.h>

#define CT_STATUS_SIZE 4096
#define CT_STATUS_MAGIC 0x31545343u /* "CST1" */
#define CT_STATUS_NAME 40

/* One process that could not be traced. */
struct ct_status_slot {
	uint32_t ready; /* set last (release): the fields below are whole */
	int32_t pid, ppid;
	int32_t err;               /* why its trace could not be created: an errno, 0 if unknown */
	uint64_t start_unix_ns;    /* when it found out */
	char name[CT_STATUS_NAME]; /* its program's file name, cut to fit */
};

#define CT_STATUS_SLOTS ((CT_STATUS_SIZE - 16) / sizeof(struct ct_status_slot))

struct ct_status_page {
	uint32_t magic;
	uint32_t claimed; /* slots claimed so far (atomically); those past CT_STATUS_SLOTS are counted */
	uint64_t reserved;
	struct ct_status_slot slot[CT_STATUS_SLOTS];
};

/* The shim's side. Maps the page that spec (CTRACK_STATUS's value) names, once its device and
 * inode are checked (a name left from a launcher that is gone names nothing, or something else):
 * the page, or NULL. */
struct ct_status_page *ct_status_attach(const char *spec);

/* Says in p that this process runs untraced because its trace could not be created (err). */
void ct_status_note(struct ct_status_page *p, int err);

#endif
