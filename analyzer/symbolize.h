/* SPDX-License-Identifier: MIT */
/* The symbolizer: return address (or exact address) -> frames (function, file, line, module), with
 * libdwfl: the inline chain of the address, innermost first, then its real function. Each module is
 * opened once and each (module, address) resolved once; strings live as long as the symbolizer. */
#ifndef CTRACK_SYMBOLIZE_H
#define CTRACK_SYMBOLIZE_H

#include <stdint.h>

#include "model.h"

struct ct_frame {
	uint64_t address;     /* the recorded return address */
	uint64_t offset;      /* address - the module's load base (the address when no module held it): where
	                       * the frame is, whatever the address the module was loaded at */
	const char *function; /* never NULL: demangled name without compiler suffixes (.isra.0, .cold, ...),
	                       * raw name, "module+0xoffset" or "??" */
	const char *symbol;   /* the name as the binary spells it (mangled, suffixes, @version), NULL when
	                       * function is none */
	const char *file;     /* NULL when unknown */
	unsigned line;        /* 0 when unknown */
	const char *module;   /* path of the module, NULL when no module held the address */
	int inlined;          /* 1 for a frame inlined into the next one (outer) */
	uint32_t id;          /* from 1, one per distinct frame a symbolizer made (0: made elsewhere): a key
	                       * for callers' caches of what follows from the fields above */
};

/* Frames one address resolves to at most: deeper inline chains lose their innermost frames. */
#define CT_SYMBOLIZE_MAX 32

struct ct_symbolizer;

/* Separate debug info is looked for as debuginfo.h says. */
struct ct_symbolizer *ct_symbolizer_new(void);
void ct_symbolizer_free(struct ct_symbolizer *s);

/* Resolves ip (a return address inside mod, which may be NULL) into at most max frames, innermost
 * first: an address inside inlined code gives one frame per inlined function (inlined = 1, the
 * line inside it), then the real function (at the line of the call inlined there); all share ip.
 * Returns the number of frames (>= 1 when max >= 1; the outermost ones when there are more than
 * max), or -ENOMEM. */
int ct_symbolize(struct ct_symbolizer *s, const struct ct_module *mod, uint64_t ip, struct ct_frame *out,
                 int max);
/* The frames of stack node `node` of m, as ct_symbolize gives them for its module and ip, except that
 * an exact ip (ct_model_node_exact: the instruction a signal interrupted) is resolved at itself
 * rather than at its call: a function's first byte is that function's. */
int ct_symbolize_node(struct ct_symbolizer *s, const struct ct_model *m, uint32_t node, struct ct_frame *out,
                      int max);

/* Resolves return address ip in mod (NULL: none) into the cache, as ct_symbolize would: mod may be a
 * copy of the model's module (the same id and strings). Returns 0 or -ENOMEM. */
int ct_symbolize_prepare(struct ct_symbolizer *s, const struct ct_module *mod, uint64_t ip);

/* The frames of stack node `node` of m as ct_symbolize_node gives them with max CT_SYMBOLIZE_MAX, not
 * copied: *frames points into the symbolizer's cache, valid as long as it. Remembered per node (a walk
 * of many stacks visits their shared nodes again). Returns the count (>= 1) or -ENOMEM. */
int ct_symbolize_node_frames(struct ct_symbolizer *s, const struct ct_model *m, uint32_t node,
                             const struct ct_frame **frames);

/* Gives back to the kernel the pages of the modules' files (and their debug files) this process
 * mapped and read, unchanged: what is read later is read again from the files, the same bytes. For
 * when the frames are resolved and the reports still to be built need memory more than those pages. */
void ct_symbolizer_give_back(struct ct_symbolizer *s);

/* The size in bytes of the symbol (function) that holds the call before return address ip in mod,
 * or 0 when no sized symbol holds it (no symbols, a label, a module that cannot be opened). */
uint64_t ct_symbolize_symbol_size(struct ct_symbolizer *s, const struct ct_module *mod, uint64_t ip);

/* What is at a traced module's path now, compared with the MODULE record (build-id, PT_LOAD
 * segments) and the time the module was loaded. Only CT_FILE_SAME and CT_FILE_NEWER are read: a
 * file that is not the traced one would give wrong names, so its frames are shown as addresses. */
enum ct_module_file {
	CT_FILE_SAME,        /* the traced file, as far as can be told */
	CT_FILE_NEWER,       /* no build-id in the trace, the same segments, but modified after it was
	                      * loaded: read, though it may not be the code that ran */
	CT_FILE_NONE,        /* not a file at all (the vdso), or never opened */
	CT_FILE_GONE,        /* nothing at the path */
	CT_FILE_UNREADABLE,  /* it cannot be opened (ct_symbolizer_module's *err) */
	CT_FILE_NOT_ELF,     /* not a regular file, or not ELF */
	CT_FILE_REBUILT,     /* ELF with another build-id than the traced one */
	CT_FILE_NO_BUILD_ID, /* the traced file had a build-id, this one has none */
	CT_FILE_RELAID,      /* no build-id in the trace, and PT_LOAD segments unlike the traced ones */
};

/* The libdwfl module the symbolizer opened for mod (opened now if it was not yet), or NULL when
 * *file says it is not the traced one or cannot be read (*err: the errno of CT_FILE_UNREADABLE).
 * Owned by the symbolizer; the symbol checks reuse it. */
struct Dwfl_Module;
struct Dwfl_Module *ct_symbolizer_module(struct ct_symbolizer *s, const struct ct_module *mod,
                                         enum ct_module_file *file, int *err);

#endif
