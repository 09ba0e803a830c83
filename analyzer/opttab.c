/* SPDX-License-Identifier: MIT */
/* The option tables' generic half (opttab.h): finding and applying a row, and the three texts written
 * from the rows: --help (wrapped under CT_OPT_HELP_WIDTH columns), the man page (man(7) macros, every
 * byte escaped so groff warns about nothing) and the bash completion function. */
#include <stdint.h>
#include <string.h>

#include "opttab.h"

#define HELP_COLUMN 24 /* where an option's help starts in --help */

const struct ct_opt *ct_opt_find(const struct ct_opttab *t, size_t nt, const char *a,
                                 const struct ct_opttab **in)
{
	int is_long = a[0] == '-' && a[1] == '-' && a[2];
	int is_short = a[0] == '-' && a[1] && a[1] != '-' && !a[2];
	size_t len = is_long ? strcspn(a + 2, "=") : 0;
	for (size_t k = 0; k < nt; k++)
		for (size_t i = 0; i < t[k].n; i++) {
			const struct ct_opt *r = &t[k].v[i];
			int hit = is_long ? r->name && strlen(r->name) == len && !strncmp(a + 2, r->name, len)
			                  : is_short && r->letter && r->letter == a[1];
			if (hit) {
				*in = &t[k];
				return r;
			}
		}
	return NULL;
}

int ct_opt_apply(const struct ct_opt *r, const struct ct_opttab *in, void *o, const char *arg, char *err,
                 size_t errlen)
{
	char *ctx = (char *)o + in->ctx_offset;
	*err = '\0';
	if (r->kind == CT_OPT_FLAG) {
		*(int *)(void *)(ctx + r->offset) = 1;
		return CT_OPT_GO_ON;
	}
	return r->call(ctx, r, arg, err, errlen);
}

/* "--name N" or "-x, --name N" into buf: how --help names the row. */
static void label_of(const struct ct_opt *r, char *buf, size_t len)
{
	char name[64] = "";
	if (r->letter && r->name)
		snprintf(name, sizeof(name), "-%c, --%s", r->letter, r->name);
	else if (r->letter)
		snprintf(name, sizeof(name), "-%c", r->letter);
	else
		snprintf(name, sizeof(name), "--%s", r->name);
	snprintf(buf, len, "%s%s%s", name, r->arg ? " " : "", r->arg ? r->arg : "");
}

/* Display columns of the n bytes at s (UTF-8: continuation bytes take none). */
static size_t columns(const char *s, size_t n)
{
	size_t c = 0;
	for (size_t i = 0; i < n; i++)
		c += ((unsigned char)s[i] & 0xc0) != 0x80;
	return c;
}

/* Writes text from column col (already reached) wrapped before CT_OPT_HELP_WIDTH, continuation
 * lines indented to indent; ends the line. */
static void put_wrapped(FILE *out, const char *text, size_t col, size_t indent)
{
	size_t start = col;
	while (*text) {
		size_t n = strcspn(text, " "), w = columns(text, n);
		if (col > start && col + 1 + w >= CT_OPT_HELP_WIDTH)
			col = (size_t)fprintf(out, "\n%*s", (int)indent, "") - 1, start = col;
		else if (col > start)
			fputc(' ', out), col++;
		fwrite(text, 1, n, out);
		col += w;
		text += n;
		text += strspn(text, " ");
	}
	fputc('\n', out);
}

static int visible(const struct ct_opt *r)
{
	return !(r->flags & CT_OPT_HIDDEN);
}

void ct_opt_help(FILE *out, const struct ct_optdoc *d, const struct ct_opttab *t, size_t nt)
{
	char label[96];
	for (size_t i = 0; d->synopsis[i]; i++)
		fprintf(out, "%s %s %s\n", i ? "      " : "Usage:", d->prog, d->synopsis[i]);
	fprintf(out, "%s\n", d->summary);
	for (size_t g = 0; d->groups[g]; g++) {
		fprintf(out, "\n%s:\n", d->groups[g]);
		for (size_t k = 0; k < nt; k++)
			for (size_t i = 0; i < t[k].n; i++) {
				const struct ct_opt *r = &t[k].v[i];
				if (!visible(r) || strcmp(r->group, d->groups[g]))
					continue;
				label_of(r, label, sizeof(label));
				int col = fprintf(out, "  %s", label);
				if (col > HELP_COLUMN - 2)
					col = fprintf(out, "\n") - 1;
				fprintf(out, "%*s", HELP_COLUMN - col, "");
				put_wrapped(out, r->help, HELP_COLUMN, HELP_COLUMN);
			}
	}
	for (size_t i = 0; d->notes && d->notes[i]; i++) {
		fputc('\n', out);
		put_wrapped(out, d->notes[i], 0, 0);
	}
	if (d->examples && d->examples[0].command)
		fputs("\nExamples:\n", out);
	for (size_t i = 0; d->examples && d->examples[i].command; i++) {
		fprintf(out, "  %s\n      ", d->examples[i].command);
		put_wrapped(out, d->examples[i].what, 6, 6);
	}
}

/* ---- the man page ---- */

/* s escaped for groff: backslashes, minus signs (an option's dashes must stay ASCII when copied
 * from the page), a control character at a line's start, and UTF-8 as \[uXXXX]. */
static void man_text(FILE *out, const char *s)
{
	int line_start = 1;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (line_start && (*p == '.' || *p == '\''))
			fputs("\\&", out);
		line_start = *p == '\n';
		if (*p == '\\') {
			fputs("\\e", out);
		} else if (*p == '-') {
			fputs("\\-", out);
		} else if (*p < 0x80) {
			fputc(*p, out);
		} else {
			int more = *p >= 0xf0 ? 3 : *p >= 0xe0 ? 2 : 1;
			uint32_t c = *p & (0x3f >> more);
			for (; more && (p[1] & 0xc0) == 0x80; more--)
				c = c << 6 | (*++p & 0x3f);
			fprintf(out, "\\[u%04X]", (unsigned)c);
		}
	}
}

static void man_label(FILE *out, const struct ct_opt *r)
{
	if (r->letter)
		fprintf(out, "\\fB\\-%c\\fR%s", r->letter, r->name ? ", " : "");
	if (r->name) {
		fputs("\\fB\\-\\-", out);
		man_text(out, r->name);
		fputs("\\fR", out);
	}
	if (r->arg) {
		fputs(" \\fI", out);
		man_text(out, r->arg);
		fputs("\\fR", out);
	}
	fputc('\n', out);
}

static void man_paragraphs(FILE *out, const char *head, const char *const *v)
{
	if (!v || !v[0])
		return;
	fprintf(out, ".SH %s\n", head);
	for (size_t i = 0; v[i]; i++) {
		fputs(i ? ".PP\n" : "", out);
		man_text(out, v[i]);
		fputc('\n', out);
	}
}

void ct_opt_man(FILE *out, const struct ct_optdoc *d, const struct ct_opttab *t, size_t nt)
{
	char title[64];
	size_t i;
	for (i = 0; d->prog[i] && i + 1 < sizeof(title); i++)
		title[i] =
		    (char)(d->prog[i] >= 'a' && d->prog[i] <= 'z' ? d->prog[i] - 'a' + 'A' : d->prog[i]);
	title[i] = '\0';
	fprintf(out, ".\\\" Generated from the option table of %s: do not edit.\n", d->prog);
	fprintf(out, ".TH %s 1 \"\" \"ctrack %s\" \"User Commands\"\n.ad l\n.nh\n.SH NAME\n", title,
	        d->version);
	man_text(out, d->prog);
	fputs(" \\- ", out);
	man_text(out, d->brief);
	fputs("\n.SH SYNOPSIS\n", out);
	for (i = 0; d->synopsis[i]; i++) {
		fprintf(out, "%s.B %s\n", i ? ".br\n" : "", d->prog);
		man_text(out, d->synopsis[i]);
		fputc('\n', out);
	}
	man_paragraphs(out, "DESCRIPTION", d->description);
	for (i = 0; d->notes && d->notes[i]; i++) {
		fputs(".PP\n", out);
		man_text(out, d->notes[i]);
		fputc('\n', out);
	}
	fputs(".SH OPTIONS\n", out);
	for (size_t g = 0; d->groups[g]; g++) {
		fputs(".SS ", out);
		man_text(out, d->groups[g]);
		fputc('\n', out);
		for (size_t k = 0; k < nt; k++)
			for (size_t j = 0; j < t[k].n; j++) {
				const struct ct_opt *r = &t[k].v[j];
				if (!visible(r) || strcmp(r->group, d->groups[g]))
					continue;
				fputs(".TP\n", out);
				man_label(out, r);
				man_text(out, r->help);
				fputc('\n', out);
			}
	}
	if (d->examples && d->examples[0].command)
		fputs(".SH EXAMPLES\n", out);
	for (i = 0; d->examples && d->examples[i].command; i++) {
		fputs(".PP\n", out);
		man_text(out, d->examples[i].what);
		fputs("\n.PP\n.RS 4\n.EX\n", out);
		man_text(out, d->examples[i].command);
		fputs("\n.EE\n.RE\n", out);
	}
	man_paragraphs(out, "EXIT STATUS", d->exit_status);
	if (d->see_also) {
		fputs(".SH SEE ALSO\n", out);
		man_text(out, d->see_also);
		fputc('\n', out);
	}
}

/* ---- bash completion ---- */

/* The words of the rows that pass want, space-separated: "--json --top -h --help". */
static void put_words(FILE *out, const struct ct_opttab *t, size_t nt, int (*want)(const struct ct_opt *))
{
	const char *sep = "";
	for (size_t k = 0; k < nt; k++)
		for (size_t i = 0; i < t[k].n; i++) {
			const struct ct_opt *r = &t[k].v[i];
			if (!visible(r) || !want(r))
				continue;
			if (r->letter)
				fprintf(out, "%s-%c", sep, r->letter), sep = " ";
			if (r->name)
				fprintf(out, "%s--%s", sep, r->name), sep = " ";
		}
}

static int any(const struct ct_opt *r)
{
	return 1;
}
static int takes_arg(const struct ct_opt *r)
{
	return r->arg != NULL;
}
static int takes_file(const struct ct_opt *r)
{
	return r->arg && r->flags & CT_OPT_FILE;
}
static int takes_dir(const struct ct_opt *r)
{
	return r->arg && r->flags & CT_OPT_DIR;
}
static int takes_other(const struct ct_opt *r)
{
	return r->arg && !r->values && !(r->flags & (CT_OPT_FILE | CT_OPT_DIR));
}

/* "a|b|c" of put_words' words, for a case pattern. */
static void put_pattern(FILE *out, const struct ct_opttab *t, size_t nt, int (*want)(const struct ct_opt *))
{
	char buf[4096];
	FILE *m = fmemopen(buf, sizeof(buf), "w");
	if (!m)
		return;
	put_words(m, t, nt, want);
	fclose(m);
	for (char *p = buf; *p; p++)
		*p = *p == ' ' ? '|' : *p;
	fputs(buf, out);
}

/* One arm of the case on the previous word: the options that pass want, then body; none when no
 * option does (an empty pattern is a syntax error). */
static void put_arm(FILE *out, const struct ct_opttab *t, size_t nt, int (*want)(const struct ct_opt *),
                    const char *body)
{
	for (size_t k = 0; k < nt; k++)
		for (size_t i = 0; i < t[k].n; i++)
			if (visible(&t[k].v[i]) && want(&t[k].v[i])) {
				fputc('\t', out);
				put_pattern(out, t, nt, want);
				fprintf(out, ")\n\t\t%sreturn 0 ;;\n", body);
				return;
			}
}

static const char completion_head[] = "\tlocal cur prev i\n"
                                      "\tCOMPREPLY=()\n"
                                      "\tcur=\"${COMP_WORDS[COMP_CWORD]}\"\n"
                                      "\tprev=\"\"\n"
                                      "\t((COMP_CWORD > 0)) && prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
                                      "\t# --opt=value: bash splits it at '=' (COMP_WORDBREAKS)\n"
                                      "\tif [[ $cur == \"=\" ]]; then\n"
                                      "\t\tcur=\"\"\n"
                                      "\telif [[ $prev == \"=\" ]] && ((COMP_CWORD > 1)); then\n"
                                      "\t\tprev=\"${COMP_WORDS[COMP_CWORD-2]}\"\n"
                                      "\tfi\n";

/* ctrack PROGRAM ARGS: the words from the program on are the program's command line. The options
 * that take an argument skip it (their pattern goes between the two halves). */
static const char command_head[] = "\tfor ((i = 1; i < COMP_CWORD; i++)); do\n"
                                   "\t\tcase \"${COMP_WORDS[i]}\" in\n"
                                   "\t\t--)\n"
                                   "\t\t\t((i++))\n"
                                   "\t\t\tbreak ;;\n"
                                   "\t\t=) ;;\n"
                                   "\t\t-*)\n"
                                   "\t\t\tcase \"${COMP_WORDS[i]}\" in\n"
                                   "\t\t\t";
static const char command_tail[] = ") [[ ${COMP_WORDS[i+1]} == \"=\" ]] && ((i++)); ((i++)) ;;\n"
                                   "\t\t\tesac ;;\n"
                                   "\t\t*) break ;;\n"
                                   "\t\tesac\n"
                                   "\tdone\n"
                                   "\tif ((i < COMP_CWORD)); then\n"
                                   "\t\tif declare -F _command_offset >/dev/null; then\n"
                                   "\t\t\t_command_offset \"$i\"\n"
                                   "\t\telse\n"
                                   "\t\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n"
                                   "\t\tfi\n"
                                   "\t\treturn 0\n"
                                   "\tfi\n";

void ct_opt_completion(FILE *out, const struct ct_optdoc *d, const struct ct_opttab *t, size_t nt)
{
	char fn[64];
	size_t i;
	for (i = 0; d->prog[i] && i + 2 < sizeof(fn); i++)
		fn[i] = d->prog[i] == '-' ? '_' : d->prog[i];
	fn[i] = '\0';
	fprintf(out, "# bash completion for %s, generated from its option table: do not edit.\n", d->prog);
	fprintf(out, "_%s()\n{\n%s", fn, completion_head);
	if (d->operand_is_command) {
		fputs(command_head, out);
		put_pattern(out, t, nt, takes_arg);
		fputs(command_tail, out);
	}
	fputs("\tcase \"$prev\" in\n", out);
	for (size_t k = 0; k < nt; k++)
		for (size_t j = 0; j < t[k].n; j++) {
			const struct ct_opt *r = &t[k].v[j];
			if (!visible(r) || !r->arg || !r->values)
				continue;
			fputc('\t', out);
			if (r->letter)
				fprintf(out, "-%c%s", r->letter, r->name ? "|" : "");
			if (r->name)
				fprintf(out, "--%s", r->name);
			fputs(")\n", out);
			fprintf(out, "\t\tCOMPREPLY=($(compgen -W \"%s\" -- \"$cur\"))\n\t\treturn 0 ;;\n",
			        r->values);
		}
	put_arm(out, t, nt, takes_file, "COMPREPLY=($(compgen -f -- \"$cur\"))\n\t\t");
	put_arm(out, t, nt, takes_dir, "COMPREPLY=($(compgen -d -- \"$cur\"))\n\t\t");
	put_arm(out, t, nt, takes_other, "");
	fputs("\tesac\n", out);
	fputs("\tif [[ $cur == -* ]]; then\n\t\tCOMPREPLY=($(compgen -W \"", out);
	put_words(out, t, nt, any);
	fputs("\" -- \"$cur\"))\n\t\treturn 0\n\tfi\n", out);
	fprintf(out, "\tCOMPREPLY=($(compgen -%c -- \"$cur\"))\n}\n", d->operand_is_command ? 'c' : 'f');
	fprintf(out, "complete -o filenames -F _%s %s\n", fn, d->prog);
}

int ct_opt_show(const struct ct_opt *self, const struct ct_optdoc *d, const struct ct_opttab *t, size_t nt)
{
	if (!strcmp(self->name, "help-man"))
		ct_opt_man(stdout, d, t, nt);
	else if (!strcmp(self->name, "help-completion"))
		ct_opt_completion(stdout, d, t, nt);
	else
		ct_opt_help(stdout, d, t, nt);
	return 0;
}
