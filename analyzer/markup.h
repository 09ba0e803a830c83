/* SPDX-License-Identifier: MIT */
/* Quoting for the analyzer's documents: JSON strings, XML/HTML text and attribute values, and byte
 * counts for people. */
#ifndef CTRACK_MARKUP_H
#define CTRACK_MARKUP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A JSON string with its quotes: valid JSON whatever the bytes (invalid UTF-8 becomes \u00XX). */
void ct_json_string(FILE *out, const char *data, size_t n);
/* The same for a C string; NULL prints null. */
void ct_json_cstring(FILE *out, const char *s);
/* s (NULL: nothing) escaped for XML or HTML text and attribute values (quotes included). */
void ct_xml_text(FILE *out, const char *s);
/* "1234 bytes (1.2 KiB)": the exact count, then a readable one when it differs; returns buf. */
const char *ct_fmt_bytes(char *buf, size_t len, uint64_t n);

#endif
