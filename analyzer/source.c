/* SPDX-License-Identifier: MIT */
/* Source lines (source.h): a small cache of whole source files, each with the offsets of its lines,
 * least recently used first to go. A path that could not be shown is remembered as such (data
 * NULL), so a report with thousands of frames in a missing file tries it once. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "source.h"

struct file {
	char *path;
	char *data;     /* the file's bytes, NULL when it cannot be shown */
	size_t size;    /* of data */
	size_t *starts; /* offset of each line's first byte */
	size_t nlines;
	uint64_t used; /* the clock when it was last asked for */
};

struct ct_sources {
	struct file v[CT_SOURCE_FILES];
	size_t n;
	size_t bytes; /* data kept, in all */
	uint64_t clock;
};

struct ct_sources *ct_sources_new(void)
{
	return calloc(1, sizeof(struct ct_sources));
}

static void drop(struct ct_sources *s, size_t i)
{
	struct file *f = &s->v[i];
	s->bytes -= f->data ? f->size : 0;
	free(f->path);
	free(f->data);
	free(f->starts);
	s->v[i] = s->v[--s->n];
}

void ct_sources_free(struct ct_sources *s)
{
	while (s && s->n)
		drop(s, s->n - 1);
	free(s);
}

/* The file's bytes, when it is a regular file of at most CT_SOURCE_FILE_MAX bytes without a NUL
 * (text): 0 with *data set, 1 when it cannot be shown, -ENOMEM. O_NONBLOCK: opening a FIFO with no
 * writer must not wait; fstat then refuses it, a device and a directory alike. */
static int read_text(const char *path, char **data, size_t *size)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	*data = NULL;
	if (fd < 0)
		return 1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > CT_SOURCE_FILE_MAX) {
		close(fd);
		return 1;
	}
	char *buf = malloc((size_t)st.st_size + 1);
	size_t n = 0;
	ssize_t got = 1;
	while (buf && n < (size_t)st.st_size && got > 0) {
		got = read(fd, buf + n, (size_t)st.st_size - n);
		n += got > 0 ? (size_t)got : 0;
		if (got < 0 && errno == EINTR)
			got = 1;
	}
	close(fd);
	if (!buf)
		return -ENOMEM;
	if (got < 0 || memchr(buf, '\0', n)) { /* a read error, or a binary file */
		free(buf);
		return 1;
	}
	*data = buf, *size = n;
	return 0;
}

/* The offsets of f's lines. Returns 0 or -ENOMEM. */
static int index_lines(struct file *f)
{
	size_t n = 1;
	for (size_t i = 0; i + 1 < f->size; i++)
		n += f->data[i] == '\n';
	if (!(f->starts = malloc(n * sizeof(*f->starts))))
		return -ENOMEM;
	f->starts[0] = 0, f->nlines = 1;
	for (size_t i = 0; i + 1 < f->size; i++)
		if (f->data[i] == '\n')
			f->starts[f->nlines++] = i + 1;
	if (!f->size)
		f->nlines = 0;
	return 0;
}

/* Room for a file of size bytes: the least recently used ones go. */
static void make_room(struct ct_sources *s, size_t size)
{
	while (s->n && (s->n == CT_SOURCE_FILES || s->bytes + size > CT_SOURCE_BUDGET)) {
		size_t oldest = 0;
		for (size_t i = 1; i < s->n; i++)
			if (s->v[i].used < s->v[oldest].used)
				oldest = i;
		drop(s, oldest);
	}
}

/* The entry of path, read now if it is not kept: into *out. Returns 0 or -ENOMEM. */
static int lookup(struct ct_sources *s, const char *path, struct file **out)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].path, path)) {
			s->v[i].used = ++s->clock;
			*out = &s->v[i];
			return 0;
		}
	struct file f = {.path = strdup(path), .used = ++s->clock};
	int rc = f.path ? read_text(path, &f.data, &f.size) : -ENOMEM;
	if (rc == 0 && f.size > CT_SOURCE_BUDGET)
		free(f.data), f.data = NULL; /* never kept: a budget smaller than a file */
	if (rc == 0 && f.data)
		rc = index_lines(&f);
	if (rc < 0) {
		free(f.path);
		free(f.data);
		return rc;
	}
	make_room(s, f.data ? f.size : 0);
	s->bytes += f.data ? f.size : 0;
	s->v[s->n] = f;
	*out = &s->v[s->n++];
	return 0;
}

int ct_source_lines(struct ct_sources *s, const char *path, unsigned line, unsigned context,
                    struct ct_source_line *out, size_t max)
{
	struct file *f;
	if (!path || !line)
		return 0;
	int rc = lookup(s, path, &f);
	if (rc < 0)
		return rc;
	if (!f->data || line > f->nlines)
		return 0;
	size_t first = line > context ? line - context : 1, n = 0;
	for (size_t k = first; k <= f->nlines && k <= (size_t)line + context && n < max; k++, n++) {
		size_t start = f->starts[k - 1], end = k < f->nlines ? f->starts[k] - 1 : f->size;
		if (k == f->nlines && end > start && f->data[end - 1] == '\n')
			end--;
		if (end > start && f->data[end - 1] == '\r')
			end--; /* CRLF */
		size_t len = end - start;
		out[n].number = (unsigned)k;
		out[n].cut = len > CT_SOURCE_LINE_MAX;
		len = out[n].cut ? CT_SOURCE_LINE_MAX : len;
		while (out[n].cut && len && ((unsigned char)f->data[start + len] & 0xc0) == 0x80)
			len--; /* not inside a UTF-8 character */
		memcpy(out[n].text, f->data + start, len);
		out[n].text[len] = '\0';
	}
	return (int)n;
}
