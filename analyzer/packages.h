/* SPDX-License-Identifier: MIT */
/* Which Debian package owns a file, from dpkg's file lists, named as the package that holds its
 * debug info; the answers are kept between runs beside the debug cache (debugcache.h).
 *
 * dpkg keeps a list per package of the files it installed (/var/lib/dpkg/info/PACKAGE.list, 839
 * files and 9 MB here), and the lists name no file twice, so the owner is the one list naming it:
 * finding it reads them all on average (a readdir order), over a tenth of a second. The answers,
 * that no package owns a file included, hold while that directory is unchanged: dpkg writes every
 * list it adds or changes under another name and renames it into place, which changes the
 * directory's modification time, and the kept answers are of one such time. */
#ifndef CTRACK_PACKAGES_H
#define CTRACK_PACKAGES_H

#include <stddef.h>

struct ct_package_query {
	const char *path;    /* a file, as a trace or a user names it */
	char *debug_package; /* out, malloc'd: "zlib1g-dbgsym" (libc6's is libc6-dbg), or NULL: none */
};

/* Sets debug_package in each of q[0..n) whose file a package owns (also when the file is named
 * through a symlink, or with /usr merged). No dpkg: none is set. Returns 0, or -ENOMEM (what was
 * set then is the caller's to free either way). */
int ct_packages_find(struct ct_package_query *q, size_t n);

#endif
