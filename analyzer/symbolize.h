/* SPDX-License-Identifier: MIT */
/* The symbolizer: return address -> frames (function, file, line, module), with libdwfl.
 * Each module is opened once and each (module, address) resolved once; strings live as long as it. */
#ifndef CTRACK_SYMBOLIZE_H
#define CTRACK_SYMBOLIZE_H

#include <stdint.h>

#include "model.h"

struct ct_frame {
	uint64_t address;     /* the recorded return address */
	const char *function; /* never NULL: demangled name, raw name, "module+0xoffset" or "??" */
	const char *file;     /* NULL when unknown */
	unsigned line;        /* 0 when unknown */
	const char *module;   /* path of the module, NULL when no module held the address */
	int inlined;          /* 1 for a frame inlined into the next one (outer) */
};

struct ct_symbolizer;

struct ct_symbolizer *ct_symbolizer_new(void);
void ct_symbolizer_free(struct ct_symbolizer *s);

/* Resolves ip (a return address inside mod, which may be NULL) into at most max frames, innermost
 * first (an address inside inlined code gives several). Returns the number of frames (>= 1 when
 * max >= 1), or -ENOMEM. */
int ct_symbolize(struct ct_symbolizer *s, const struct ct_module *mod, uint64_t ip, struct ct_frame *out, int max);

#endif
