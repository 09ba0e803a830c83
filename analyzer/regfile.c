/* SPDX-License-Identifier: MIT */
/* Regular files only: checked by name before the open, opened O_NONBLOCK (a FIFO swapped in
 * meanwhile does not block the open), checked again on the descriptor itself, then made blocking
 * again for the reads. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "regfile.h"

const char *ct_file_kind(mode_t mode)
{
	if (S_ISREG(mode))
		return NULL;
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	return S_ISLNK(mode) ? "a symbolic link" : "not a regular file";
}

/* 0 for a regular file, else -EISDIR or -EINVAL (with *kind). */
static int regular(const struct stat *st, const char **kind)
{
	if (S_ISREG(st->st_mode))
		return 0;
	if (kind)
		*kind = ct_file_kind(st->st_mode);
	return S_ISDIR(st->st_mode) ? -EISDIR : -EINVAL;
}

int ct_regfile_open(const char *path, const char **kind)
{
	struct stat st;
	/* A device is not even opened: opening some has effects of its own (a tape rewinds). */
	if (stat(path, &st) < 0)
		return -errno;
	int rc = regular(&st, kind);
	if (rc < 0)
		return rc;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	rc = fstat(fd, &st) < 0 ? -errno : regular(&st, kind);
	if (rc == 0 && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
		rc = -errno;
	if (rc < 0) {
		close(fd);
		return rc;
	}
	return fd;
}
