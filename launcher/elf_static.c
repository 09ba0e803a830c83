/* SPDX-License-Identifier: MIT */
/* Static and static-pie detection from the program headers and the dynamic section. Every read is
 * checked; a short or failed read means "not known to be static", never an error. */
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "elf_static.h"

/* Where the program header table is, in either ELF class. */
struct phdr_table {
	int is64;
	uint64_t off;
	unsigned num;
	unsigned entsize;
};

/* One program header, reduced to what the check needs. */
struct phdr {
	uint64_t type;
	uint64_t offset;
	uint64_t filesz;
};

static int read_at(int fd, void *buf, size_t len, off_t off)
{
	return pread(fd, buf, len, off) == (ssize_t)len ? 0 : -1;
}

/* 0 with *t filled when fd is an ELF file with a usable program header table, else -1. */
static int read_table(int fd, struct phdr_table *t)
{
	Elf64_Ehdr eh;
	if (read_at(fd, &eh, EI_NIDENT, 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG))
		return -1;
	t->is64 = eh.e_ident[EI_CLASS] == ELFCLASS64;
	if (t->is64) {
		if (read_at(fd, &eh, sizeof(eh), 0))
			return -1;
		*t = (struct phdr_table){1, eh.e_phoff, eh.e_phnum, eh.e_phentsize};
		return t->entsize < sizeof(Elf64_Phdr) ? -1 : 0;
	}
	Elf32_Ehdr e32;
	if (read_at(fd, &e32, sizeof(e32), 0))
		return -1;
	*t = (struct phdr_table){0, e32.e_phoff, e32.e_phnum, e32.e_phentsize};
	return t->entsize < sizeof(Elf32_Phdr) ? -1 : 0;
}

static int read_phdr(int fd, const struct phdr_table *t, unsigned i, struct phdr *ph)
{
	off_t off = (off_t)(t->off + (uint64_t)i * t->entsize);
	if (t->is64) {
		Elf64_Phdr p;
		if (read_at(fd, &p, sizeof(p), off))
			return -1;
		*ph = (struct phdr){p.p_type, p.p_offset, p.p_filesz};
		return 0;
	}
	Elf32_Phdr p;
	if (read_at(fd, &p, sizeof(p), off))
		return -1;
	*ph = (struct phdr){p.p_type, p.p_offset, p.p_filesz};
	return 0;
}

/* Tag and value of the dynamic entry at file offset at; -1 when unreadable. */
static int read_dyn(int fd, int is64, uint64_t at, uint64_t *tag, uint64_t *val)
{
	if (is64) {
		Elf64_Dyn d;
		if (read_at(fd, &d, sizeof(d), (off_t)at))
			return -1;
		*tag = (uint64_t)d.d_tag, *val = d.d_un.d_val;
		return 0;
	}
	Elf32_Dyn d;
	if (read_at(fd, &d, sizeof(d), (off_t)at))
		return -1;
	*tag = (uint64_t)(int64_t)d.d_tag, *val = d.d_un.d_val;
	return 0;
}

/* 1 when the dynamic section dyn marks a PIE: DT_FLAGS_1 & DF_1_PIE. */
static int dynamic_is_pie(int fd, int is64, const struct phdr *dyn)
{
	const size_t entsize = is64 ? sizeof(Elf64_Dyn) : sizeof(Elf32_Dyn);
	for (uint64_t at = dyn->offset; at + entsize <= dyn->offset + dyn->filesz; at += entsize) {
		uint64_t tag, val;
		if (read_dyn(fd, is64, at, &tag, &val) || tag == DT_NULL)
			return 0;
		if (tag == DT_FLAGS_1)
			return (val & DF_1_PIE) != 0;
	}
	return 0;
}

static int fd_is_static(int fd)
{
	struct phdr_table t;
	struct phdr ph, dyn = {0};
	if (read_table(fd, &t))
		return 0;
	for (unsigned i = 0; i < t.num; i++) {
		if (read_phdr(fd, &t, i, &ph) || ph.type == PT_INTERP)
			return 0;
		if (ph.type == PT_DYNAMIC)
			dyn = ph;
	}
	return dyn.type != PT_DYNAMIC || dynamic_is_pie(fd, t.is64, &dyn);
}

int ct_elf_is_static(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int is_static = fd_is_static(fd);
	close(fd);
	return is_static;
}
