/* SPDX-License-Identifier: MIT */
/* Unit test of the symbol index (analyzer/symtab.c) and of the decompressed copies of debug files
 * (analyzer/debugimage.c), against libdwfl and libelf on this machine's own binaries: for each module,
 * the name and size ct_symtab_name gives equal dwfl_module_addrinfo's at every alias group (C++
 * constructors, versioned names) and at points spread over the symbols (start, inside, last byte,
 * end, past the end); libc's separate debug file (libc6-dbg), copied, has the file's sections with
 * the compressed ones as libelf decompresses them and the location lists empty; files that are not
 * such (no compressed section, not ELF, cut short) come back as they are. */
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debugimage.h"
#include "debuginfo.h"
#include "symtab.h"

/* libdwfl's own answers cost a scan of every symbol: probes per module are bounded by this many
 * symbols looked at in all. */
#define SCAN_BUDGET 15000000L

static int failures;

static void check(const char *what, int ok)
{
	printf("%s %s\n", ok ? "ok  " : "FAIL", what);
	failures += !ok;
}

static Dwfl_Module *open_module(Dwfl **dwfl, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	*dwfl = dwfl_begin(ct_debuginfo_callbacks());
	dwfl_report_begin(*dwfl);
	Dwfl_Module *mod = dwfl_report_elf(*dwfl, path, path, fd, 0, false);
	dwfl_report_end(*dwfl, NULL, NULL);
	if (!mod)
		close(fd);
	return mod;
}

/* Whether the index and libdwfl agree at addr; prints the first few disagreements. */
static int agree(struct ct_symtab *t, Dwfl_Module *mod, GElf_Addr addr, int *shown)
{
	GElf_Off off;
	GElf_Sym sym;
	GElf_Xword size;
	const char *want = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);
	const char *got = ct_symtab_name(t, mod, addr, &size);
	int same = (want == got || (want && got && !strcmp(want, got))) && size == (want ? sym.st_size : 0);
	if (!same && (*shown)++ < 5)
		printf("     at %#lx: libdwfl %s (%lu), index %s (%lu)\n", (unsigned long)addr,
		       want ? want : "-", want ? (unsigned long)sym.st_size : 0ul, got ? got : "-",
		       (unsigned long)size);
	return same;
}

/* Whether symbol i has an alias: another sized symbol with its start and end. */
static int aliased(Dwfl_Module *mod, int n, int i, const GElf_Sym *s, GElf_Addr a)
{
	for (int j = 1; j < n; j++) {
		GElf_Sym o;
		GElf_Addr b;
		if (j != i && dwfl_module_getsym_info(mod, j, &o, &b, NULL, NULL, NULL) && b == a &&
		    o.st_size == s->st_size)
			return 1;
	}
	return 0;
}

static void test_module(const char *path)
{
	Dwfl *dwfl = NULL;
	Dwfl_Module *mod = open_module(&dwfl, path);
	char what[512];
	if (!mod) {
		printf("skip %s: cannot be opened\n", path);
		if (dwfl)
			dwfl_end(dwfl);
		return;
	}
	int n = dwfl_module_getsymtab(mod);
	struct ct_symtab *t = ct_symtab_build(mod);
	long probes = n > 1 ? SCAN_BUDGET / n : 0, done = 0, bad = 0;
	int shown = 0, aliases = 0;
	/* alias groups first (a bounded number of them: the whole scan is quadratic), then a stride */
	for (int i = 1; i < n && done < probes / 4 && aliases < 64; i++) {
		GElf_Sym s;
		GElf_Addr a;
		if (!dwfl_module_getsym_info(mod, i, &s, &a, NULL, NULL, NULL) || !s.st_size ||
		    GELF_ST_TYPE(s.st_info) != STT_FUNC || !aliased(mod, n, i, &s, a))
			continue;
		aliases++;
		bad += !agree(t, mod, a, &shown) + !agree(t, mod, a + s.st_size / 2, &shown);
		done += 2;
	}
	int stride = probes > 0 && n / (probes / 6 + 1) > 1 ? (int)(n / (probes / 6 + 1)) : 1;
	for (int i = 1; i < n && done < probes; i += stride) {
		GElf_Sym s;
		GElf_Addr a;
		if (!dwfl_module_getsym_info(mod, i, &s, &a, NULL, NULL, NULL))
			continue;
		const GElf_Addr at[] = {
		    a, a + 1, a + s.st_size / 2, a + s.st_size - 1, a + s.st_size, a + s.st_size + 7};
		for (size_t k = 0; k < sizeof(at) / sizeof(at[0]); k++)
			bad += !agree(t, mod, at[k], &shown);
		done += 6;
	}
	snprintf(what, sizeof(what), "%s: the index names %ld addresses (%d alias groups) as libdwfl does",
	         path, done, aliases);
	check(what, done > 0 && !bad);
	ct_symtab_free(t);
	dwfl_end(dwfl);
}

/* ---- debug files ---- */

static Elf_Scn *section(Elf *elf, size_t i)
{
	return elf_getscn(elf, i);
}

/* Whether the copy (on fd) has the file's sections, decompressed as libelf does it. */
static int same_sections(const char *path, int copy)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *a = elf_begin(fd, ELF_C_READ, NULL), *b = elf_begin(copy, ELF_C_READ, NULL);
	size_t na, nb, stra;
	int ok = a && b && elf_getshdrnum(a, &na) == 0 && elf_getshdrnum(b, &nb) == 0 && na == nb &&
	         elf_getshdrstrndx(a, &stra) == 0;
	int inflated = 0;
	for (size_t i = 1; ok && i < na; i++) {
		Elf_Scn *sa = section(a, i), *sb = section(b, i);
		GElf_Shdr ha, hb;
		ok = sa && sb && gelf_getshdr(sa, &ha) && gelf_getshdr(sb, &hb) && ha.sh_name == hb.sh_name &&
		     ha.sh_type == hb.sh_type && ha.sh_addr == hb.sh_addr && ha.sh_link == hb.sh_link &&
		     ha.sh_info == hb.sh_info && ha.sh_entsize == hb.sh_entsize &&
		     (ha.sh_flags & ~(GElf_Xword)SHF_COMPRESSED) == hb.sh_flags;
		const char *name = ok ? elf_strptr(a, stra, ha.sh_name) : NULL;
		if (!ok || !name || ha.sh_type == SHT_NOBITS)
			continue;
		if (!strcmp(name, ".debug_loc") || !strcmp(name, ".debug_loclists")) {
			ok = hb.sh_size == 0;
			continue;
		}
		if (ha.sh_flags & SHF_COMPRESSED) {
			ok = elf_compress(sa, 0, 0) == 1;
			inflated++;
		}
		Elf_Data *da = ok ? elf_rawdata(sa, NULL) : NULL, *db = ok ? elf_rawdata(sb, NULL) : NULL;
		ok = da && db && da->d_size == db->d_size && !memcmp(da->d_buf, db->d_buf, da->d_size);
		if (!ok)
			printf("     section %zu (%s) differs\n", i, name ? name : "?");
	}
	if (a)
		elf_end(a);
	if (b)
		elf_end(b);
	close(fd);
	return ok && inflated > 0;
}

/* libc's debug file by its build-id, or NULL. */
static char *libc_debug_file(const char *libc)
{
	Dwfl *dwfl = NULL;
	Dwfl_Module *mod = open_module(&dwfl, libc);
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n = mod ? dwfl_module_build_id(mod, &bits, &vaddr) : 0;
	char *path = NULL;
	if (n > 1 && (path = malloc(64 + 2 * (size_t)n))) {
		char *p = path + sprintf(path, "/usr/lib/debug/.build-id/%02x/", bits[0]);
		for (int i = 1; i < n; i++)
			p += sprintf(p, "%02x", bits[i]);
		strcpy(p, ".debug");
	}
	if (dwfl)
		dwfl_end(dwfl);
	if (path && access(path, R_OK)) {
		free(path);
		path = NULL;
	}
	return path;
}

/* A file ct_debugimage_open must hand back as it is. */
static void test_unchanged(const char *what, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int got = fd >= 0 ? ct_debugimage_open(fd) : -2;
	check(what, fd >= 0 && got == fd);
	if (got >= 0)
		close(got);
}

static void test_debugimage(const char *libc)
{
	char *debug = libc_debug_file(libc);
	if (!debug) {
		printf("skip the debug file copy: no separate debug file for %s (libc6-dbg)\n", libc);
		return;
	}
	int fd = open(debug, O_RDONLY | O_CLOEXEC), copy = fd >= 0 ? ct_debugimage_open(fd) : -1;
	check("libc's debug file is copied", copy >= 0 && copy != fd);
	check("the copy has the file's sections, decompressed, location lists empty",
	      copy >= 0 && same_sections(debug, copy));
	if (copy >= 0)
		close(copy);
	/* the first 64 KiB of it: section headers past the end */
	char cut[] = "/tmp/ctrack-symtab-XXXXXX";
	int out = mkstemp(cut), in = open(debug, O_RDONLY | O_CLOEXEC);
	char buf[65536];
	ssize_t got = in >= 0 ? read(in, buf, sizeof(buf)) : -1;
	int written = out >= 0 && got > 0 && write(out, buf, (size_t)got) == got;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	if (written)
		test_unchanged("a debug file cut short comes back as it is", cut);
	unlink(cut);
	free(debug);
	test_unchanged("a file without compressed sections comes back as it is", libc);
	test_unchanged("a file that is not ELF comes back as it is", "/etc/passwd");
}

int main(int argc, char **argv)
{
	static const char *const libs[] = {
	    "/lib/x86_64-linux-gnu/libc.so.6",
	    "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
	    "/usr/lib/x86_64-linux-gnu/libdw.so.1",
	    "/usr/lib/gcc/x86_64-linux-gnu/12/cc1",
	};
	elf_version(EV_CURRENT);
	test_module("/proc/self/exe");
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++)
		if (!access(libs[i], R_OK))
			test_module(libs[i]);
	for (int i = 1; i < argc; i++)
		test_module(argv[i]);
	if (!access(libs[0], R_OK))
		test_debugimage(libs[0]);
	return failures ? 1 : 0;
}
