/* SPDX-License-Identifier: MIT */
/* Which dynamically linked programs the shim cannot see into, and why, in one line: the loader's
 * secure-execution mode (ld.so(8): LD_PRELOAD is ignored under AT_SECURE), a malloc the executable
 * itself defines and exports (the loader binds every call to malloc, libc's own included, to the
 * executable's definition before the preloaded shim's), and Go's runtime (its allocator maps memory
 * itself and never calls malloc). Every read is checked; what cannot be read is traceable. */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "untraceable.h"

/* ---- set-ID programs ---- */

/* 1 with why filled when exec would run path in secure mode: it changes the effective user or group
 * (set-ID bits, honoured unless the file system is mounted nosuid), or it grants file capabilities
 * to a user other than root. Root running a root-owned set-user-ID program changes nothing. */
static int secure_exec(const char *path, const struct stat *st, char *why, size_t len)
{
	static const char cannot[] =
	    "the dynamic loader ignores LD_PRELOAD for it, so ctrack cannot trace it";
	struct statvfs fs;
	if (statvfs(path, &fs) == 0 && (fs.f_flag & ST_NOSUID))
		return 0;
	if ((st->st_mode & S_ISUID) && st->st_uid != getuid()) {
		snprintf(why, len,
		         "it is set-user-ID (it runs as uid %u): %s (trace a copy without the bit, or run "
		         "ctrack as uid %u)",
		         (unsigned)st->st_uid, cannot, (unsigned)st->st_uid);
		return 1;
	}
	if ((st->st_mode & S_ISGID) && st->st_gid != getgid()) {
		snprintf(why, len,
		         "it is set-group-ID (it runs as gid %u): %s (trace a copy without the bit)",
		         (unsigned)st->st_gid, cannot);
		return 1;
	}
	if (getuid() != 0 && getxattr(path, "security.capability", NULL, 0) > 0) {
		snprintf(why, len, "it has file capabilities: %s (trace a copy without them)", cannot);
		return 1;
	}
	return 0;
}

/* ---- what the ELF file says ---- */

/* The allocation functions whose definition in the executable takes every call away from the shim
 * (the rest of the family ends up in these, or is rare enough to go with them). */
static const char *const allocator[] = {"malloc", "free", "calloc", "realloc"};
#define N_ALLOCATOR (sizeof(allocator) / sizeof(allocator[0]))

/* Marks in *defined (bit i: allocator[i]) the functions the dynamic symbol table scn defines. */
static void exported_allocator(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, unsigned *defined)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	for (size_t i = 0; data && i < n; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
			continue;
		int type = GELF_ST_TYPE(sym.st_info);
		const char *name = elf_strptr(elf, sh->sh_link, sym.st_name);
		for (size_t k = 0; name && (type == STT_FUNC || type == STT_GNU_IFUNC) && k < N_ALLOCATOR;
		     k++)
			if (!strcmp(name, allocator[k]))
				*defined |= 1u << k;
	}
}

struct elf_facts {
	int is_elf;
	unsigned allocator; /* bit i: the executable defines and exports allocator[i] */
	int go;             /* Go's build-id note or build info: a Go program */
};

static void read_facts(int fd, struct elf_facts *f)
{
	size_t shstrndx;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx) < 0) {
		elf_end(elf);
		return;
	}
	f->is_elf = 1;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && (!strcmp(name, ".note.go.buildid") || !strcmp(name, ".go.buildinfo")))
			f->go = 1;
		if (sh.sh_type == SHT_DYNSYM)
			exported_allocator(elf, scn, &sh, &f->allocator);
	}
	elf_end(elf);
}

/* "malloc, free and calloc" for the bits of defined, into buf. */
static void list_allocator(unsigned defined, char *buf, size_t len)
{
	size_t n = 0, left = (size_t)__builtin_popcount(defined);
	buf[0] = 0;
	for (size_t k = 0; k < N_ALLOCATOR && n < len; k++) {
		if (!(defined & (1u << k)))
			continue;
		left--;
		int w = snprintf(buf + n, len - n, "%s%s", allocator[k],
		                 left > 1 ? ", "
		                 : left   ? " and "
		                          : "");
		n += w > 0 ? (size_t)w : 0;
	}
}

enum ct_traceable ct_untraceable(const char *path, char *why, size_t len)
{
	struct stat st;
	struct elf_facts f = {0};
	char names[64];
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return CT_TRACEABLE;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && elf_version(EV_CURRENT) != EV_NONE)
		read_facts(fd, &f);
	if (fd >= 0)
		close(fd);
	/* Linux ignores set-ID bits on scripts; a program it cannot read may still be ELF. */
	if ((f.is_elf || fd < 0) && secure_exec(path, &st, why, len))
		return CT_TRACE_REFUSE;
	if (f.allocator) {
		list_allocator(f.allocator, names, sizeof(names));
		snprintf(why, len,
		         "it defines %s itself (an allocator linked into the program, such as a static "
		         "jemalloc or tcmalloc): those calls never reach ctrack, so the trace misses them",
		         names);
		return CT_TRACE_WARN;
	}
	if (f.go) {
		snprintf(
		    why, len,
		    "it is a Go program: Go's allocator does not call malloc, so the trace holds only the "
		    "allocations of its C code (cgo and C libraries)");
		return CT_TRACE_WARN;
	}
	return CT_TRACEABLE;
}
