/* SPDX-License-Identifier: MIT */
/* Naming, locating, creating and reading back the trace file. Runs in the forked child too
 * (create), so it reports errors as negative errnos and prints nothing. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctrack/record.h"
#include "ctrack/zraw.h"
#include "regfile.h"
#include "rules.h"
#include "tracefile.h"

int ct_tracefile_name(char *buf, size_t len, const char *output, const char *program, pid_t pid)
{
	if (!output)
		return ct_trace_name(buf, len, NULL, program, pid, 0);
	int n = snprintf(buf, len, "%s", output);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int ct_tracefile_dir(const char *name, char *buf)
{
	char dir[PATH_MAX] = ".";
	const char *slash = strrchr(name, '/');
	if (slash) {
		size_t n = slash == name ? 1 : (size_t)(slash - name); /* "/x" is in the root */
		if (n >= sizeof(dir))
			return -ENAMETOOLONG;
		memcpy(dir, name, n);
		dir[n] = '\0';
	}
	return realpath(dir, buf) ? 0 : -errno;
}

const char *ct_tracefile_special(const char *name)
{
	struct stat st;
	if (lstat(name, &st) < 0 || S_ISLNK(st.st_mode))
		return NULL;
	return ct_file_kind(st.st_mode);
}

/* --force replaces a regular file or a symlink, nothing else: as root, `-o /dev/null` would
 * otherwise unlink the device and leave a regular file in its place. Whoever could swap the name
 * for a device between the check and the unlink can write to the directory, and so could unlink
 * it themselves. */
static int replace(const char *name)
{
	if (ct_tracefile_special(name))
		return -EEXIST;
	return unlink(name) < 0 && errno != ENOENT ? -errno : 0;
}

int ct_tracefile_create(const char *name, int force)
{
	int rc = force ? replace(name) : 0;
	if (rc < 0)
		return rc;
	int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (fd > STDERR_FILENO)
		return fd;
	/* stdio was closed: keep the trace off fds 0-2, which the program may reopen */
	int moved = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
	int err = errno;
	close(fd);
	return moved < 0 ? -err : moved;
}

int ct_tracefile_fill_empty(int fd, const char *text)
{
	uint8_t rec[1024], out[sizeof(rec) + CT_ZRAW_FRAME_HEADER + CT_ZRAW_BLOCK_HEADER];
	struct ct_rec_buf b = {.data = rec, .cap = sizeof(rec)};
	const struct ct_rec_end e = {0};
	struct stat st;
	ct_rec_header(&b);
	ct_rec_note(&b, CT_NOTE_WARNING, text, strlen(text));
	ct_rec_end(&b, &e);
	if (b.dropped)
		return -ENAMETOOLONG;
	size_t n = ct_zraw_frame(out);
	n += ct_zraw_block(out + n, b.len, 1);
	memcpy(out + n, rec, b.len);
	n += b.len;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size != 0)
		return -EEXIST; /* written to meanwhile: left alone */
	if (pwrite(fd, out, n, 0) == (ssize_t)n)
		return 0;
	int rc = errno ? -errno : -ENOSPC;
	if (ftruncate(fd, 0) < 0) /* a short write leaves it empty again, not half a frame */
		rc = -errno;
	return rc;
}

int ct_tracefile_reopen(int fd)
{
	char path[64];
	struct stat held, st;
	if (fstat(fd, &held) < 0)
		return -errno;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	int rd = open(path, O_RDONLY | O_CLOEXEC);
	if (rd < 0)
		return -errno;
	if (fstat(rd, &st) == 0 && st.st_dev == held.st_dev && st.st_ino == held.st_ino)
		return rd;
	close(rd);
	return -ESTALE;
}

const char *ct_tracefile_moved(const char *name, int fd)
{
	struct stat held, st;
	if (fstat(fd, &held) < 0)
		return NULL; /* nothing to compare with */
	if (lstat(name, &st) < 0)
		return errno == ENOENT ? "removed" : NULL;
	return st.st_dev == held.st_dev && st.st_ino == held.st_ino ? NULL : "replaced by another file";
}
