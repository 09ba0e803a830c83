/* SPDX-License-Identifier: MIT */
/* How the analyzer's documents quote text: JSON strings (valid whatever the bytes), XML/HTML text and
 * attributes, and byte counts for people. Every reporter and exporter writes through these. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "markup.h"

/* Length of the valid UTF-8 sequence at s (n bytes left), or 0 if it is not one. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;
	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0; /* ASCII is handled by the caller; 0x80..0xc1 never start a character */
	len = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	if (len > n)
		return 0;
	cp = s[0] & (0x7f >> len);
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
	if (cp < min[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0; /* overlong, out of range or a surrogate */
	return len;
}

void ct_json_string(FILE *out, const char *data, size_t n)
{
	const unsigned char *s = (const unsigned char *)data;
	fputc('"', out);
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t len;
		if (c == '"' || c == '\\') {
			fprintf(out, "\\%c", c);
		} else if (c == '\n') {
			fputs("\\n", out);
		} else if (c == '\t') {
			fputs("\\t", out);
		} else if (c < 0x20 || c == 0x7f) {
			fprintf(out, "\\u%04x", c);
		} else if (c < 0x80) {
			fputc(c, out);
		} else if ((len = utf8_len(s + i, n - i))) {
			fwrite(s + i, 1, len, out);
			i += len;
			continue;
		} else {
			fprintf(out, "\\u%04x", c);
		}
		i++;
	}
	fputc('"', out);
}

void ct_json_cstring(FILE *out, const char *s)
{
	if (s)
		ct_json_string(out, s, strlen(s));
	else
		fputs("null", out);
}

/* "1234 bytes (1.2 KiB)": the exact count, then a readable one when it differs. */
const char *ct_fmt_bytes(char *buf, size_t len, uint64_t n)
{
	static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	if (n < 1024) {
		snprintf(buf, len, "%" PRIu64 " bytes", n);
		return buf;
	}
	double v = (double)n / 1024;
	int u = 0;
	while (v >= 1024 && u < 5)
		v /= 1024, u++;
	snprintf(buf, len, "%" PRIu64 " bytes (%.1f %s)", n, v, units[u]);
	return buf;
}

void ct_xml_text(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	for (size_t n = strlen((const char *)p), i = 0; i < n; i++) {
		size_t len;
		switch (p[i]) {
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '&':
			fputs("&amp;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		case '\'':
			fputs("&#39;", out);
			break;
		default:
			/* Well-formed XML: no control characters but tab and newline, only valid UTF-8. */
			if (p[i] == '\t' || p[i] == '\n' || (p[i] >= 0x20 && p[i] < 0x7f)) {
				fputc(p[i], out);
			} else if (p[i] >= 0x80 && (len = utf8_len(p + i, n - i))) {
				fwrite(p + i, 1, len, out);
				i += len - 1;
			} else {
				fputc('?', out);
			}
		}
	}
}
