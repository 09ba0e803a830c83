/* SPDX-License-Identifier: MIT */
/* The check of every trace of the run (verdict.h). Each trace is read through a descriptor on its
 * very file (family.h), handed to the analysis library as /proc/self/fd/N. The program's verdict
 * prints as it always has; a descendant's only when it fails, under a line that names it, and a
 * last line sums them all up. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verdict.h"

/* The processes a failing check names on its last line; the rest are counted. */
#define NAMED 10

/* The tally of a run's checks. */
struct tally {
	size_t checked, failed, errors;
	const struct ct_member *named[NAMED]; /* the first that failed */
};

/* err names the descriptor as the reader was given it ('/proc/self/fd/N'): name the trace. */
static void rename_in(char *err, size_t len, const char *proc, const char *name)
{
	char quoted[96], tail[512];
	snprintf(quoted, sizeof(quoted), "'%s'", proc);
	char *at = strstr(err, quoted);
	if (!at)
		return;
	snprintf(tail, sizeof(tail), "%s", at + strlen(quoted));
	snprintf(at, len - (size_t)(at - err), "'%s'%s", name, tail);
}

/* The rules for one trace: the suppressions a program carries, and what each suppression took,
 * are that trace's own, so each starts from the user's rules with their files read again. */
static int fresh_rules(struct ct_check *c, const struct ct_check *rules, const char *const *files,
                       size_t nfiles, char *err, size_t len)
{
	*c = *rules;
	c->supp = NULL;
	c->supp_files = 0;
	for (size_t i = 0; i < nfiles; i++)
		if (ct_check_add_suppressions(c, files[i], err, len) < 0)
			return -1;
	return 0;
}

/* m's check, its verdict into out: 0 (passed), 1 (failed), or -1 with err. */
static int check_one(const struct ct_family *f, const struct ct_member *m, const struct ct_check *rules,
                     const char *const *files, size_t nfiles, FILE *out, char *err, size_t len)
{
	struct ct_check c;
	char proc[64];
	if (m->ok && m->s.damaged) { /* a check of the part before the damage would be incomplete */
		snprintf(err, len, "corrupt trace near byte %" PRIu64 " of '%s' (%s): not checked",
		         m->s.damaged_at, m->path, m->s.damage);
		return -1;
	}
	int fd = ct_family_open(f, m);
	if (fd < 0) {
		snprintf(err, len, "cannot read '%s' (%s)%s", m->path, strerror(-fd),
		         m == &f->parent && f->moved ? ": its file was replaced, and another's is not checked"
		                                     : "");
		return -1;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	int rc = fresh_rules(&c, rules, files, nfiles, err, len);
	if (rc == 0)
		rc = ct_check_trace(proc, &c, out, err, len);
	if (rc < 0)
		rename_in(err, len, proc, m->path);
	ct_check_release(&c);
	close(fd);
	return rc;
}

/* "e2e-family (pid 123), trace /dir/ctrack.e2e-family.123.zst" */
static void print_who(const struct ct_member *m)
{
	fprintf(stderr, "%s (pid %" PRIu64 "), trace %s", m->s.program[0] ? m->s.program : "?", m->pid,
	        m->path);
}

/* Whether m is checked, else says why not: a process that went on in another image (exec) is
 * checked there; one that still runs, or was killed, had no check at exit (neither does
 * LeakSanitizer's). The program's own trace is always checked, as it was before. */
static int checkable(const struct ct_family *f, const struct ct_member *m)
{
	if (m->ok && m->s.exec_path[0] && f->children)
		return 0;
	if (m == &f->parent)
		return 1;
	if (m->running || !m->ok || !m->s.complete) {
		fputs("ctrack: not checked: ", stderr);
		print_who(m);
		fprintf(stderr, ": %s\n",
		        m->running     ? "it still runs"
		        : m->s.damaged ? "its trace is damaged"
		        : m->ok        ? "its trace is cut short (killed?)"
		                       : m->err);
		return 0;
	}
	return 1;
}

static void check_member(const struct ct_family *f, const struct ct_member *m, const struct ct_check *rules,
                         const char *const *files, size_t nfiles, struct tally *t)
{
	char err[512], *text = NULL;
	size_t len = 0;
	if (!checkable(f, m))
		return;
	FILE *out = open_memstream(&text, &len);
	int rc = out ? check_one(f, m, rules, files, nfiles, out, err, sizeof(err)) : -1;
	if (!out)
		snprintf(err, sizeof(err), "out of memory");
	if (out)
		fclose(out);
	t->checked++;
	if (rc < 0) {
		t->errors++;
		if (m == &f->parent && !f->children) {
			fprintf(stderr, "ctrack: cannot check the leaks: %s\n", err);
		} else {
			fputs("ctrack: cannot check the leaks of ", stderr);
			print_who(m);
			fprintf(stderr, ": %s\n", err);
		}
	}
	if (rc > 0 && t->failed < NAMED)
		t->named[t->failed] = m;
	t->failed += rc > 0;
	if (rc > 0 && f->children) {
		fputs("ctrack: check failed for ", stderr);
		print_who(m);
		fputs(":\n", stderr);
	}
	if (rc >= 0 && (rc > 0 || m == &f->parent))
		fwrite(text, 1, len, stderr);
	free(text);
}

/* The last line, with --follow-children: how many processes were checked, which failed. */
static void print_tally(const struct tally *t)
{
	if (!t->failed) {
		fprintf(stderr, "ctrack: check %s: %zu traced process%s checked%s\n",
		        t->errors ? "incomplete" : "passed", t->checked, t->checked == 1 ? "" : "es",
		        t->errors ? ", some could not be" : ", none failed");
		return;
	}
	fprintf(stderr, "ctrack: check failed in %zu of %zu traced processes checked: ", t->failed,
	        t->checked);
	for (size_t i = 0; i < t->failed && i < NAMED; i++) {
		const struct ct_member *m = t->named[i];
		fprintf(stderr, "%s%s (pid %" PRIu64 ")", i ? ", " : "", m->s.program[0] ? m->s.program : "?",
		        m->pid);
	}
	if (t->failed > NAMED)
		fprintf(stderr, " and %zu more", t->failed - NAMED);
	fputc('\n', stderr);
}

int ct_verdict(const struct ct_family *f, const struct ct_check *rules, const char *const *files,
               size_t nfiles, int status)
{
	struct tally t = {0};
	check_member(f, &f->parent, rules, files, nfiles, &t);
	for (size_t i = 0; f->children && i < f->nkids; i++)
		check_member(f, &f->kids[i], rules, files, nfiles, &t);
	if (f->children && t.checked)
		print_tally(&t);
	if (f->children && !t.checked) {
		fputs("ctrack: cannot check the leaks: no trace of the run ends at its process's exit\n",
		      stderr);
		t.errors++;
	}
	if (status)
		return status;
	return t.failed ? CT_CHECK_EXIT : t.errors ? 1 : 0;
}
