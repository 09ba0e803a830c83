/* SPDX-License-Identifier: MIT */
/* Symbol-quality diagnostics: per module, whether it has a symbol table, line tables and inline
 * records, the file its DWARF came from, and one line of advice (NULL when the module is fine). */
#ifndef CTRACK_DIAGNOSE_H
#define CTRACK_DIAGNOSE_H

#include <stddef.h>
#include <stdio.h>

#include "model.h"

struct ct_quality {
	char *path;
	char *build_id;      /* lowercase hex, or NULL */
	const char *symbols; /* "symtab", "minidebuginfo", "dynsym" or "none" (static strings) */
	int line_tables;     /* a CU's line table is readable */
	int inline_info;     /* some DW_TAG_inlined_subroutine was found */
	char *
	    debug_file; /* the file the DWARF was read from (the module itself or a separate file), or NULL */
	char *advice;   /* NULL when inline attribution works */
	int split_debug; /* the advice is to find debug info split off the file (a package, debuginfod) */
	char *package;   /* the debug package that holds it ("zlib1g-dbgsym", known from dpkg), or NULL */
};

struct ct_quality_list {
	struct ct_quality *v;
	size_t n, cap;
};

void ct_quality_list_free(struct ct_quality_list *l);

/* Appends the verdict of the ELF file at path (separate debug info looked for as debuginfo.h says).
 * Returns 0, -ENOENT (or another negative errno) when the file cannot be read as ELF, or -ENOMEM. */
int ct_diagnose_file(struct ct_quality_list *l, const char *path);

/* Appends the verdict of every module that holds a frame of some stack of m (each once). */
struct ct_symbolizer;
int ct_diagnose_model(struct ct_quality_list *l, const struct ct_model *m, struct ct_symbolizer *s);

/* Starts looking up, on a thread of its own, the packages that own the files of m's modules that hold
 * a frame (dpkg's file lists), which ct_diagnose_model's advice names: the answers it then takes are
 * the ones it would find itself. Call once m is read; never fails (without a thread, nothing is done
 * ahead). ct_diagnose_prefetch_free waits for the thread and frees what it found. */
void ct_diagnose_prefetch(const struct ct_model *m);
void ct_diagnose_prefetch_free(void);

/* Appends the verdicts of the shared libraries path needs (DT_NEEDED, recursively, found through
 * RUNPATH/RPATH and the usual library directories; ones not found are skipped). */
int ct_diagnose_needed(struct ct_quality_list *l, const char *path);

/* Printers (report_text.c, report_json.c). Text: one line per module, only those with advice when
 * problems_only; JSON: the "modules" array (schema: docs/json-schema.md). */
void ct_quality_text(FILE *out, const struct ct_quality_list *l, int problems_only);
void ct_quality_json(FILE *out, const struct ct_quality_list *l);

#endif
