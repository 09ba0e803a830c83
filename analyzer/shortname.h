/* SPDX-License-Identifier: MIT */
/* Readable C++ names (shortname.c): a demangled name as a person scans it in a report, its template
 * arguments collapsed, its parameter list and return type dropped. */
#ifndef CTRACK_SHORTNAME_H
#define CTRACK_SHORTNAME_H

#include <stddef.h>

/* The short form of the demangled name `full` into buf (len bytes, NUL-terminated, cut to fit):
 * every outermost template argument list becomes "<…>" ("std::vector<int, std::allocator<int> >"
 * -> "std::vector<…>"), the parameter list and what follows it (" const", " [clone .cold]") go, and
 * so does a return type ("std::string std::operator+<…>(…)" -> "std::operator+<…>"). Operator names
 * keep their symbols (operator<<, operator(), operator->), lambdas and "(anonymous namespace)"
 * stay. A name that is no C++ name (a C function, Rust's) comes back as it is. Returns buf. */
const char *ct_short_name(const char *full, char *buf, size_t len);

#endif
