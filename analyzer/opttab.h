/* SPDX-License-Identifier: MIT */
/* Command-line option tables: one row per option (its name, argument, group, help and how it is
 * applied), from which each command parses its arguments and writes its --help, its man page and its
 * bash completion, so the four never disagree. Used by ctrack (launcher/main.c) and ctrack-analyze
 * (analyzer/main.c); the check options' rows are shared (check.h). */
#ifndef CTRACK_OPTTAB_H
#define CTRACK_OPTTAB_H

#include <stddef.h>
#include <stdio.h>

/* What a row's apply step returns to go on; anything else is the exit status to stop with. */
#define CT_OPT_GO_ON (-1)

enum ct_opt_kind {
	CT_OPT_FLAG, /* sets the int at offset to 1 */
	CT_OPT_CALL, /* calls the row's call */
};

enum {
	CT_OPT_FILE = 1 << 0,   /* the argument is a file (completion offers files) */
	CT_OPT_DIR = 1 << 1,    /* the argument is a directory */
	CT_OPT_HIDDEN = 1 << 2, /* not in --help, the man page or completion (the generators' modes) */
};

struct ct_opt;

/* A row's parser: ctx is the table's context (ct_opttab.ctx_offset into the command's options),
 * arg the option's argument (NULL for a flag). Returns CT_OPT_GO_ON, or an exit status with a
 * one-line reason in err (0: stop with success, err empty, as --help does). */
typedef int ct_opt_call(void *ctx, const struct ct_opt *self, const char *arg, char *err, size_t errlen);

struct ct_opt {
	const char *name;  /* the long option without its dashes ("top"), or NULL */
	char letter;       /* the short option ('o'), or 0 */
	const char *arg;   /* the argument's name in the help ("N", "FILE"), or NULL for a flag */
	const char *group; /* its heading in --help and the man page (ct_optdoc.groups) */
	const char *help;  /* one paragraph, wrapped by the writers */
	enum ct_opt_kind kind;
	size_t offset;      /* CT_OPT_FLAG: the int's offset in the context */
	ct_opt_call *call;  /* CT_OPT_CALL */
	const char *values; /* the argument's fixed values, space-separated (completion), or NULL */
	unsigned flags;     /* CT_OPT_FILE, CT_OPT_DIR, CT_OPT_HIDDEN */
};

/* A command's options may come from several tables (its own, the check options): each table's rows
 * get the context at ctx_offset bytes into the command's options struct. */
struct ct_opttab {
	const struct ct_opt *v;
	size_t n;
	size_t ctx_offset;
};

struct ct_example {
	const char *command; /* "ctrack-analyze --html report.html ctrack.demo.1234.zst" */
	const char *what;    /* one sentence */
};

/* What the help and the man page say besides the options. */
struct ct_optdoc {
	const char *prog;                  /* "ctrack-analyze" */
	const char *version;               /* the man page's footer */
	const char *brief;                 /* the man page's NAME line: "analyze a ctrack heap trace" */
	const char *const *synopsis;       /* the usage lines after the command's name; NULL ends */
	const char *summary;               /* one line under the usage */
	const char *const *description;    /* the man page's DESCRIPTION paragraphs; NULL ends */
	const char *const *groups;         /* the headings, in order; NULL ends */
	const char *const *notes;          /* paragraphs after the options in --help, and in the man
	                                    * page's DESCRIPTION; NULL ends */
	const struct ct_example *examples; /* NULL command ends */
	const char *const *exit_status;    /* the man page's EXIT STATUS paragraphs; NULL ends */
	const char *see_also;              /* "ctrack(1), valgrind(1)" */
	int operand_is_command;            /* ctrack: the first operand is a program run with its args */
};

/* The rows every command ends its table with: --help (-h), --version, and the hidden modes that
 * print the man page and the bash completion (help_call tells them apart by the row's name). */
/* clang-format off */
#define CT_OPT_STANDARD_ROWS(group_, help_call, version_call)                                          \
	{.name = "help", .letter = 'h', .group = group_, .help = "show this help and exit",           \
	 .kind = CT_OPT_CALL, .call = help_call},                                                     \
	{.name = "version", .group = group_, .help = "show the version and exit",                     \
	 .kind = CT_OPT_CALL, .call = version_call},                                                  \
	{.name = "help-man", .group = group_, .help = "the man page (the build writes it)",           \
	 .kind = CT_OPT_CALL, .call = help_call, .flags = CT_OPT_HIDDEN},                             \
	{.name = "help-completion", .group = group_,                                                  \
	 .help = "the bash completion script (the build writes it)", .kind = CT_OPT_CALL,             \
	 .call = help_call, .flags = CT_OPT_HIDDEN}
/* clang-format on */

#define CT_OPT_HELP_WIDTH 100 /* --help's lines are shorter than this */

/* The row named by a, "--name", "--name=value" or "-x", and its table, or NULL. */
const struct ct_opt *ct_opt_find(const struct ct_opttab *t, size_t nt, const char *a,
                                 const struct ct_opttab **in);

/* Applies row r to the command's options o with arg: CT_OPT_GO_ON or an exit status (err set). */
int ct_opt_apply(const struct ct_opt *r, const struct ct_opttab *in, void *o, const char *arg, char *err,
                 size_t errlen);

/* --help: the usage lines, the summary, the options by group, the examples. */
void ct_opt_help(FILE *out, const struct ct_optdoc *d, const struct ct_opttab *t, size_t nt);
/* The man page, man(7) macros. */
void ct_opt_man(FILE *out, const struct ct_optdoc *d, const struct ct_opttab *t, size_t nt);
/* A bash completion script: a function completing d->prog's options, their values and files. */
void ct_opt_completion(FILE *out, const struct ct_optdoc *d, const struct ct_opttab *t, size_t nt);
/* What the row `self` of CT_OPT_STANDARD_ROWS' help_call prints on stdout: the help, or the man page
 * or the completion for its hidden rows. Returns 0, the exit status. */
int ct_opt_show(const struct ct_opt *self, const struct ct_optdoc *d, const struct ct_opttab *t, size_t nt);

#endif
