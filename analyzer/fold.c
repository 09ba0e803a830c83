/* SPDX-License-Identifier: MIT */
/* Folding of allocator plumbing: the built-in pattern table (documented in docs/fold.md, keep the
 * two in step), user patterns from --fold files, and the match of a frame's bare function name. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fold.h"

/* Prefix patterns on the name without return type and parameters; '*' matches any run. */
static const char *const builtin[] = {
    /* C++: the global allocation functions and libstdc++'s allocator layers */
    "operator new",
    "std::allocator",
    "std::__new_allocator",
    "__gnu_cxx::new_allocator",
    "__gnu_cxx::__alloc_traits",
    "std::__allocated_ptr",
    "std::__allocate_guarded",
    /* C++: member functions of the standard containers, which allocate for their caller */
    "std::_Vector_base",
    "std::vector<*>::",
    "std::__cxx11::basic_string<*>::",
    "std::basic_string<*>::",
    "std::_Deque_base",
    "std::deque<*>::",
    "std::_List_base",
    "std::__cxx11::_List_base",
    "std::list<*>::",
    "std::__cxx11::list<*>::",
    "std::_Rb_tree<*>::",
    "std::map<*>::",
    "std::set<*>::",
    "std::multimap<*>::",
    "std::multiset<*>::",
    "std::_Hashtable<*>::",
    "std::__detail::_Hashtable_alloc",
    "std::__detail::_Map_base",
    "std::unordered_map<*>::",
    "std::unordered_set<*>::",
    "std::__shared_count",
    "std::__shared_ptr",
    "std::shared_ptr<*>::shared_ptr",
    "std::allocate_shared",
    "std::make_shared",
    "std::make_unique",
    /* Rust: the global allocator and the std types that allocate for their caller */
    "__rust_alloc",
    "__rust_realloc",
    "__rdl_alloc",
    "__rdl_realloc",
    "__rg_alloc",
    "__rg_realloc",
    "alloc::alloc::",
    "<alloc::alloc::Global>::",
    "<alloc::alloc::Global as *>::",
    "std::alloc::",
    "alloc::raw_vec::",
    "<alloc::raw_vec::",
    "alloc::vec::Vec<*>::with_capacity",
    "<alloc::vec::Vec<*>>::with_capacity",
    "<alloc::vec::Vec<*> as *>::with_capacity",
    "alloc::boxed::Box<*>::new",
    "<alloc::boxed::Box<*>>::new",
    "alloc::string::String::from",
    "<alloc::string::String as core::convert::From<*>>::from",
    "<alloc::string::String>::from",
    "alloc::string::String::with_capacity",
    "<alloc::string::String>::with_capacity",
    /* GLib's checked malloc wrappers (libc's own, such as strdup, are real sites: never folded) */
    "g_malloc",
    "g_realloc",
    "g_try_malloc",
    "g_try_realloc",
};

/* Source files of allocator code: with line tables only (Rust debug = 1), their inlined frames carry
 * bare names ("alloc"), so the file says what they are. Prefix patterns on the frame's file. */
static const char *const builtin_files[] = {
    "/rustc/*/library/alloc/src/alloc.rs",
    "/rustc/*/library/alloc/src/raw_vec",
    "/rustc/*/library/std/src/alloc.rs",
};

struct ct_fold {
	char **user; /* patterns of --fold files, owned */
	size_t nuser, cap;
};

struct ct_fold *ct_fold_new(void)
{
	return calloc(1, sizeof(struct ct_fold));
}

void ct_fold_free(struct ct_fold *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nuser; i++)
		free(f->user[i]);
	free(f->user);
	free(f);
}

static int add_pattern(struct ct_fold *f, const char *p, size_t len)
{
	if (f->nuser == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 16;
		char **v = realloc(f->user, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		f->user = v, f->cap = cap;
	}
	if (!(f->user[f->nuser] = strndup(p, len)))
		return -ENOMEM;
	f->nuser++;
	return 0;
}

static int blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

int ct_fold_load(struct ct_fold *f, const char *path, char *err, size_t errlen)
{
	FILE *in = fopen(path, "r");
	if (!in) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = 0;
	while (!rc && (n = getline(&line, &cap, in)) >= 0) {
		char *s = line, *e = line + n;
		while (s < e && blank(*s))
			s++;
		while (e > s && blank(e[-1]))
			e--;
		if (s < e && *s != '#')
			rc = add_pattern(f, s, (size_t)(e - s));
	}
	if (!rc && ferror(in))
		rc = -EIO;
	if (rc)
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
	free(line);
	fclose(in);
	return rc;
}

/* ---- the bare name ---- */

static int starts(const char *s, const char *end, const char *word)
{
	size_t n = strlen(word);
	return (size_t)(end - s) >= n && !memcmp(s, word, n);
}

/* End of name without its parameter list: the last balanced (...) group, after trailing
 * qualifiers (" const", " &", ...), is the parameter list of a demangled C++ name. */
static const char *params_start(const char *name, const char *end)
{
	static const char *const quals[] = {" const", " volatile", " &&", " &", " noexcept"};
	for (int again = 1; again;) {
		again = 0;
		for (size_t i = 0; i < sizeof(quals) / sizeof(quals[0]); i++) {
			size_t n = strlen(quals[i]);
			if ((size_t)(end - name) > n && !memcmp(end - n, quals[i], n))
				end -= n, again = 1;
		}
	}
	if (end == name || end[-1] != ')')
		return end;
	int depth = 0;
	for (const char *p = end - 1; p > name; p--) {
		depth += *p == ')' ? 1 : *p == '(' ? -1 : 0;
		if (!depth)
			return p;
	}
	return end;
}

/* Start of the name after a return type ("void std::vector<int>::_M_realloc_insert<...>"): past
 * the last space outside brackets; an operator's name ("operator new") ends the scan. */
static const char *name_start(const char *name, const char *end)
{
	const char *start = name;
	int depth = 0;
	for (const char *p = name; p < end; p++) {
		if (!depth && starts(p, end, "operator") && (p == name || p[-1] == ':' || p[-1] == ' '))
			break;
		if (strchr("<([{", *p))
			depth++;
		else if (strchr(">)]}", *p) && depth)
			depth--;
		else if (*p == ' ' && !depth)
			start = p + 1;
	}
	return start;
}

/* Does pattern p match a prefix of s[0, n)? '*' matches any run (backtracking to the last '*'). */
static int prefix_glob(const char *p, const char *s, size_t n)
{
	const char *star = NULL;
	size_t i = 0, mark = 0;
	for (;;) {
		if (!*p)
			return 1;
		if (*p == '*') {
			star = ++p, mark = i;
			continue;
		}
		if (i < n && *p == s[i]) {
			p++, i++;
			continue;
		}
		if (!star || mark >= n)
			return 0;
		p = star, i = ++mark;
	}
}

static int in_libc(const char *module)
{
	if (!module)
		return 0;
	const char *base = strrchr(module, '/');
	return !strncmp(base ? base + 1 : module, "libc.so", 7);
}

int ct_fold_match(const struct ct_fold *f, const struct ct_frame *frame)
{
	if (!f || !frame->function || in_libc(frame->module))
		return 0;
	const char *end = frame->function + strlen(frame->function);
	end = params_start(frame->function, end);
	const char *start = name_start(frame->function, end);
	size_t n = (size_t)(end - start);
	for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
		if (prefix_glob(builtin[i], start, n))
			return 1;
	for (size_t i = 0; i < f->nuser; i++)
		if (prefix_glob(f->user[i], start, n))
			return 1;
	for (size_t i = 0; frame->file && i < sizeof(builtin_files) / sizeof(builtin_files[0]); i++)
		if (prefix_glob(builtin_files[i], frame->file, strlen(frame->file)))
			return 1;
	return 0;
}
