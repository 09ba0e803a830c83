/* SPDX-License-Identifier: MIT */
/* Unit test of the source lines (analyzer/source.c): the lines around a line of a real file, cut
 * long lines, CRLF and a last line without a newline, and every file that must not be read or must
 * not block: a FIFO without a writer, /dev/zero, a directory, an unreadable file, a binary file, a
 * file over the size limit, a line past the end; the cache's bounds. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "source.h"

static int failures;

static void check(const char *what, int ok)
{
	printf("%s %s\n", ok ? "ok  " : "FAIL", what);
	failures += !ok;
}

static void write_file(const char *path, const char *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, n, f) != n || fclose(f)) {
		perror(path);
		exit(2);
	}
}

int main(void)
{
	char dir[] = "/tmp/ct-source-XXXXXX", path[256];
	struct ct_source_line out[16];
	struct ct_sources *s = ct_sources_new();
	if (!mkdtemp(dir) || !s)
		return 2;

	snprintf(path, sizeof(path), "%s/a.c", dir);
	write_file(path, "one\ntwo\r\nthree\nfour\nfive", 24);
	int n = ct_source_lines(s, path, 3, 1, out, 16);
	check("lines 2..4 around 3", n == 3 && out[0].number == 2 && !strcmp(out[0].text, "two") &&
	                                 !strcmp(out[1].text, "three") && out[2].number == 4 &&
	                                 !strcmp(out[2].text, "four"));
	n = ct_source_lines(s, path, 1, 2, out, 16);
	check("clipped at the first line", n == 3 && out[0].number == 1 && !strcmp(out[0].text, "one"));
	n = ct_source_lines(s, path, 5, 2, out, 16);
	check("the last line without a newline",
	      n == 3 && out[2].number == 5 && !strcmp(out[2].text, "five"));
	n = ct_source_lines(s, path, 5, 2, out, 2);
	check("at most max lines", n == 2);
	check("a line past the end: none", ct_source_lines(s, path, 6, 2, out, 16) == 0);
	check("line 0: none", ct_source_lines(s, path, 0, 2, out, 16) == 0);
	check("no path: none", ct_source_lines(s, NULL, 1, 2, out, 16) == 0);

	char long_line[1000];
	memset(long_line, 'x', sizeof(long_line));
	long_line[sizeof(long_line) - 1] = '\n';
	snprintf(path, sizeof(path), "%s/long.c", dir);
	write_file(path, long_line, sizeof(long_line));
	n = ct_source_lines(s, path, 1, 0, out, 16);
	check("a long line is cut", n == 1 && out[0].cut && strlen(out[0].text) == CT_SOURCE_LINE_MAX);
	/* a UTF-8 character across the cut is not split */
	memcpy(long_line + CT_SOURCE_LINE_MAX - 1, "\xe2\x80\xa6", 3);
	snprintf(path, sizeof(path), "%s/utf8.c", dir);
	write_file(path, long_line, sizeof(long_line));
	n = ct_source_lines(s, path, 1, 0, out, 16);
	check("a cut never splits a UTF-8 character",
	      n == 1 && strlen(out[0].text) == CT_SOURCE_LINE_MAX - 1);

	snprintf(path, sizeof(path), "%s/bin", dir);
	write_file(path, "ab\0cd\n", 6);
	check("a binary file: none", ct_source_lines(s, path, 1, 1, out, 16) == 0);

	snprintf(path, sizeof(path), "%s/fifo", dir);
	check("a FIFO without a writer: none, at once",
	      mkfifo(path, 0600) == 0 && ct_source_lines(s, path, 1, 1, out, 16) == 0);
	check("/dev/zero: none", ct_source_lines(s, "/dev/zero", 1, 1, out, 16) == 0);
	check("a directory: none", ct_source_lines(s, dir, 1, 1, out, 16) == 0);
	check("nothing there: none", ct_source_lines(s, "/nonexistent/x.c", 1, 1, out, 16) == 0);

	snprintf(path, sizeof(path), "%s/secret.c", dir);
	write_file(path, "hidden\n", 7);
	chmod(path, 0);
	int readable = access(path, R_OK) == 0; /* root reads it all the same */
	check("an unreadable file: none", readable ? ct_source_lines(s, path, 1, 0, out, 16) == 1
	                                           : ct_source_lines(s, path, 1, 0, out, 16) == 0);

	snprintf(path, sizeof(path), "%s/big.c", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	check("a file over the limit: none", fd >= 0 && ftruncate(fd, CT_SOURCE_FILE_MAX + 1) == 0 &&
	                                         ct_source_lines(s, path, 1, 0, out, 16) == 0);
	close(fd);

	/* more files than the cache keeps: the oldest go, and come back when asked */
	for (int i = 0; i < CT_SOURCE_FILES + 8; i++) {
		char text[32];
		snprintf(path, sizeof(path), "%s/f%d.c", dir, i);
		int len = snprintf(text, sizeof(text), "file %d", i);
		write_file(path, text, (size_t)len);
		n = ct_source_lines(s, path, 1, 0, out, 16);
		if (n != 1 || strcmp(out[0].text, text)) {
			check("many files: each read", 0);
			break;
		}
	}
	snprintf(path, sizeof(path), "%s/f0.c", dir);
	n = ct_source_lines(s, path, 1, 0, out, 16);
	check("many files: the first again, after it went", n == 1 && !strcmp(out[0].text, "file 0"));

	ct_sources_free(s);
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "chmod -R u+rwx %s; rm -rf %s", dir, dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	printf("%s\n", failures ? "FAIL" : "ok   all source checks");
	return failures ? 1 : 0;
}
