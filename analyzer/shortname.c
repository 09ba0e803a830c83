/* SPDX-License-Identifier: MIT */
/* Readable C++ names (shortname.h). The name is read once, left to right, at a nesting depth counted
 * over (), <> and {}; an operator's symbols are copied as they are, so the '<' of operator<< opens
 * nothing. The parameter list is the last top-level (...) group; the function's name starts after
 * the last top-level space before it, or at the qualified name that holds "operator" (conversion
 * operators and operator new have spaces of their own). */
#include <string.h>

#include "shortname.h"

#define ELLIPSIS "\xe2\x80\xa6" /* U+2026, UTF-8 */

/* Whether `s` at p starts the keyword operator (a whole word). */
static int at_operator(const char *s, const char *p)
{
	return !strncmp(p, "operator", 8) && (p == s || p[-1] == ':' || p[-1] == ' ') &&
	       !(p[8] == '_' || (p[8] >= 'a' && p[8] <= 'z') || (p[8] >= 'A' && p[8] <= 'Z') ||
	         (p[8] >= '0' && p[8] <= '9'));
}

/* The end of the operator symbol that follows "operator" at p (its brackets open no nesting): the
 * longest of C++'s operator tokens, so operator+<char> is operator+ then a template list. Any other
 * text (new, delete[], a conversion's type) is the name's own and is read as such. */
static const char *operator_end(const char *p)
{
	static const char *const tokens[] = {
	    "<=>", "<<=", ">>=", "->*", "()", "[]", "<<", ">>", "<=", ">=", "==", "!=", "&&",
	    "||",  "++",  "--",  "->",  "+=", "-=", "*=", "/=", "%=", "^=", "&=", "|=", "+",
	    "-",   "*",   "/",   "%",   "^",  "&",  "|",  "~",  "!",  "=",  "<",  ">",  ","};
	p += 8;
	for (size_t i = 0; i < sizeof(tokens) / sizeof(tokens[0]); i++)
		if (!strncmp(p, tokens[i], strlen(tokens[i])))
			return p + strlen(tokens[i]);
	return p;
}

/* Where the last top-level parameter list of [s, end) opens, or NULL (a name without one). */
static const char *parameters(const char *s, const char *end)
{
	const char *open = NULL;
	int depth = 0;
	for (const char *p = s; p < end; p++) {
		if (at_operator(s, p)) {
			p = operator_end(p) - 1;
			continue;
		}
		if (*p == '(' || *p == '<' || *p == '{' || *p == '[') {
			if (*p == '(' && !depth)
				open = p;
			depth++;
		} else if ((*p == ')' || *p == '>' || *p == '}' || *p == ']') && depth) {
			depth--;
		}
	}
	/* "(anonymous namespace)" opens a group but lists no parameters: a name ends with its list */
	return open && open > s && !strncmp(open, "(anonymous namespace)", 21) ? NULL : open;
}

/* Where the function's qualified name starts in [s, end): after the last top-level space, or at the
 * start of the qualified name holding "operator". */
static const char *name_start(const char *s, const char *end)
{
	const char *start = s;
	int depth = 0;
	for (const char *p = s; p < end; p++) {
		if (!depth && at_operator(s, p)) {
			const char *q = p;
			while (q > s && q[-1] != ' ')
				q--;
			return q > start ? q : start;
		}
		if (*p == '(' || *p == '<' || *p == '{' || *p == '[')
			depth++;
		else if ((*p == ')' || *p == '>' || *p == '}' || *p == ']') && depth)
			depth--;
		else if (*p == ' ' && !depth)
			start = p + 1;
	}
	return start;
}

struct out {
	char *buf;
	size_t len, n;
};

static void put(struct out *o, const char *p, size_t n)
{
	size_t room = o->len - 1 - o->n;
	memcpy(o->buf + o->n, p, n < room ? n : room);
	o->n += n < room ? n : room;
}

/* "<…>" for the template or generic argument list that opens at p: where the list ends. */
static const char *collapse(struct out *o, const char *p, const char *end)
{
	int depth = 0; /* template arguments: skipped to their matching '>' */
	do {
		depth += *p == '<' || *p == '(';
		depth -= (*p == '>' && p[-1] != '-') || *p == ')';
		p++;
	} while (p < end && depth);
	put(o, "<" ELLIPSIS ">", sizeof("<" ELLIPSIS ">") - 1);
	return p;
}

/* The short form of the C++ name [full, end of string) into o. */
static void short_cxx(struct out *o, const char *full)
{
	const char *end = full + strlen(full), *open = parameters(full, end);
	if (open)
		end = open;
	const char *p = name_start(full, end);
	while (p < end) {
		if (at_operator(full, p)) {
			const char *q = operator_end(p);
			put(o, p, (size_t)(q - p));
			p = q;
		} else if (*p == '<') {
			p = collapse(o, p, end);
		} else {
			put(o, p++, 1);
		}
	}
}

/* Where the qualified-self prefix of a Rust path (the "<Type as Trait>" of "<Type as Trait>::f")
 * that opens at s ends (after its '>'), or NULL when it does not close. */
static const char *qualifier_end(const char *s)
{
	int depth = 0;
	for (const char *p = s; *p; p++) {
		depth += *p == '<';
		depth -= *p == '>' && p > s && p[-1] != '-'; /* fn() -> T */
		if (!depth)
			return p + 1;
	}
	return NULL;
}

/* A type or trait of a Rust qualifier, [p, end), as its last path segment ("alloc::vec::Vec<T>" ->
 * "Vec<…>", "&mut alloc::string::String" -> "&mut String", "Vec<T> as core::clone::Clone" ->
 * "Vec<…> as Clone"): what precedes a path ("&mut ", "dyn ", " as ") is kept, the modules go. */
static void short_rust_types(struct out *o, const char *p, const char *end)
{
	size_t path = o->n; /* where the path being read starts in the output */
	while (p < end) {
		if (*p == '<') {
			p = collapse(o, p, end);
		} else if (p[0] == ':' && p[1] == ':') {
			o->n = path, p += 2; /* a module: the path so far goes */
		} else {
			int boundary = strchr(" &*[(,;", *p) != NULL;
			put(o, p++, 1);
			path = boundary ? o->n : path;
		}
	}
}

const char *ct_short_name(const char *full, char *buf, size_t len)
{
	if (!len)
		return buf;
	struct out o = {buf, len, 0};
	/* No demangled C++ name starts with '<'; Rust's qualified paths do, and they name the
	 * function by the type and trait inside, so those are kept (shortened), not collapsed. */
	const char *close = full[0] == '<' ? qualifier_end(full) : NULL;
	if (close) {
		put(&o, "<", 1);
		short_rust_types(&o, full + 1, close - 1);
		put(&o, ">", 1);
		full = close;
	}
	short_cxx(&o, full);
	buf[o.n] = '\0';
	return buf;
}
