/* SPDX-License-Identifier: MIT */
/* The files ctrack-analyze writes (outfile.h): refusing the paths it must not write, and streams
 * that remember why a write failed. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "ctrack/format.h"
#include "outfile.h"
#include "regfile.h"

/* fopencookie's write: all of buf, or the bytes written before the first error, whose errno is
 * kept (a short count is the stream's error). */
static ssize_t keep_write(void *cookie, const char *buf, size_t n)
{
	struct ct_outfile *o = cookie;
	size_t done = 0;
	while (done < n) {
		ssize_t k = write(o->fd, buf + done, n - done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			o->err = o->err ? o->err : k < 0 ? errno : EIO;
			break;
		}
		done += (size_t)k;
	}
	return (ssize_t)done;
}

int ct_outfile_open(struct ct_outfile *o, const char *path)
{
	*o = (struct ct_outfile){.fd = STDOUT_FILENO};
	if (!strcmp(path, "-") && isatty(STDOUT_FILENO)) {
		o->f = stdout;
		return 0;
	}
	if (strcmp(path, "-")) {
		o->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (o->fd < 0)
			return -errno;
		o->own = 1;
	}
	o->f = fopencookie(o, "w", (cookie_io_functions_t){.write = keep_write});
	if (o->f)
		return 0;
	if (o->own)
		close(o->fd);
	return -ENOMEM;
}

int ct_outfile_close(struct ct_outfile *o)
{
	int err = fflush(o->f) ? errno : ferror(o->f) ? EIO : 0;
	if (o->f != stdout)
		fclose(o->f); /* the cookie's: nothing more to flush, the descriptor is closed below */
	if (o->own && close(o->fd) < 0 && !err)
		err = errno;
	o->f = NULL;
	err = o->err ? o->err : err;
	return err ? -err : 0;
}

/* Whether the regular file at path holds a ctrack trace: its first zstd frame starts the record
 * stream with the magic. Reads at most 256 KiB: the frame's header and first block (128 KiB at most). */
static int holds_trace(const char *path)
{
	int fd = ct_regfile_open(path, NULL);
	ZSTD_DStream *z = fd >= 0 ? ZSTD_createDStream() : NULL;
	uint8_t in[4096], magic[CT_MAGIC_SIZE];
	ZSTD_outBuffer out = {magic, sizeof(magic), 0};
	size_t total = 0;
	int bad = !z;
	while (!bad && out.pos < out.size && total < (256u << 10)) {
		ssize_t k = read(fd, in, sizeof(in));
		ZSTD_inBuffer zin = {in, k > 0 ? (size_t)k : 0, 0};
		bad = k <= 0;
		total += zin.size;
		while (!bad && zin.pos < zin.size && out.pos < out.size)
			bad = ZSTD_isError(ZSTD_decompressStream(z, &out, &zin));
	}
	ZSTD_freeDStream(z);
	if (fd >= 0)
		close(fd);
	return out.pos == out.size && !memcmp(magic, CTRACK_MAGIC, CT_MAGIC_SIZE);
}

int ct_outfile_clobbers(const char *path, const char *const *inputs, size_t n, size_t *which)
{
	struct stat st, in;
	if (stat(path, &st) < 0)
		return 0; /* nothing there (or nothing stat can see: open will say) */
	for (size_t i = 0; i < n; i++)
		if (!stat(inputs[i], &in) && in.st_dev == st.st_dev && in.st_ino == st.st_ino) {
			*which = i;
			return 1;
		}
	return S_ISREG(st.st_mode) && holds_trace(path) ? 2 : 0;
}
