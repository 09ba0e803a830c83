/* SPDX-License-Identifier: MIT */
/* Separate debug files with compressed DWARF, copied decompressed (debugimage.h) into the cache
 * (debugcache.h), or a memfd without it: the sections laid out again in their order at their
 * alignments, the headers rewritten to match. The inflated sections are written through a shared
 * mapping of their place in the copy, unmapped as soon as each is done, the rest with pwrite: only
 * the pages libdw later reads stay in the analyzer's memory. */
#include <elf.h>
#include <elfutils/libdwelf.h>
#include <libelf.h>
#include <libdeflate.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debugcache.h"
#include "debugimage.h"

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_DATA ELFDATA2LSB
#else
#define HOST_DATA ELFDATA2MSB
#endif

/* DEFLATE expands at most about 1032 times; a bigger claim is a damaged header. */
#define MAX_RATIO 1032

/* DWARF the analyzer never reads (location lists: where variables live), left empty. */
static const char *const unread[] = {".debug_loc", ".debug_loclists"};

/* One section of the copy. */
struct sec {
	Elf64_Shdr sh;            /* as written: the copy's offset, size and flags */
	const unsigned char *src; /* its bytes in the file (inflate: the zlib stream after the Chdr) */
	size_t src_len;
	int inflate;  /* src inflates to sh.sh_size bytes */
	int worker;   /* the thread that inflates it: 0 (the caller) or 1 */
	int assigned; /* worker is chosen */
};

struct image {
	const unsigned char *file; /* the file, mapped */
	size_t size;
	Elf64_Ehdr eh;     /* the copy's */
	uint64_t in_phoff; /* the file's program headers */
	struct sec *secs;
	size_t n;
	int fd;     /* the copy */
	int failed; /* a worker failed: the copy is not used */
};

static int in_file(const struct image *im, uint64_t off, uint64_t len)
{
	return off <= im->size && len <= im->size - off;
}

static int header_ok(const Elf64_Ehdr *eh)
{
	return !memcmp(eh->e_ident, ELFMAG, SELFMAG) && eh->e_ident[EI_CLASS] == ELFCLASS64 &&
	       eh->e_ident[EI_DATA] == HOST_DATA && eh->e_shentsize == sizeof(Elf64_Shdr) && eh->e_shnum &&
	       eh->e_shstrndx < eh->e_shnum && eh->e_phnum != PN_XNUM &&
	       (!eh->e_phnum || eh->e_phentsize == sizeof(Elf64_Phdr));
}

/* Section i's name, or NULL when it is not inside the string table. */
static const char *name_of(const struct image *im, const Elf64_Shdr *strtab, const Elf64_Shdr *sh)
{
	if (sh->sh_name >= strtab->sh_size)
		return NULL;
	const char *s = (const char *)im->file + strtab->sh_offset + sh->sh_name;
	return memchr(s, 0, strtab->sh_size - sh->sh_name) ? s : NULL;
}

static int unread_section(const char *name)
{
	for (size_t i = 0; i < sizeof(unread) / sizeof(unread[0]); i++)
		if (!strcmp(name, unread[i]))
			return 1;
	return 0;
}

/* Sets s (whose sh is the file's header) for a zlib-compressed section; 1 when it is one, 0 when it
 * is stored otherwise (another compression: copied as it is), -1 when its header is damaged. */
static int compressed(struct sec *s, const unsigned char *data)
{
	Elf64_Chdr ch;
	if (s->sh.sh_size < sizeof(ch))
		return -1;
	memcpy(&ch, data, sizeof(ch));
	if (ch.ch_type != ELFCOMPRESS_ZLIB)
		return 0;
	s->src = data + sizeof(ch);
	s->src_len = s->sh.sh_size - sizeof(ch);
	if (ch.ch_size / MAX_RATIO > s->src_len || ch.ch_size > SIZE_MAX / 2)
		return -1;
	s->inflate = 1;
	s->sh.sh_size = ch.ch_size;
	s->sh.sh_addralign = ch.ch_addralign;
	s->sh.sh_flags &= ~(Elf64_Xword)SHF_COMPRESSED;
	return 1;
}

/* Reads the section headers into im->secs. Returns how many sections inflate, or -1. */
static int parse(struct image *im)
{
	const Elf64_Ehdr *eh = &im->eh;
	if (im->size < sizeof(*eh))
		return -1;
	memcpy(&im->eh, im->file, sizeof(im->eh));
	im->in_phoff = eh->e_phoff;
	if (!header_ok(eh) || !in_file(im, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr)) ||
	    !in_file(im, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr)))
		return -1;
	im->n = eh->e_shnum;
	if (!(im->secs = calloc(im->n, sizeof(*im->secs))))
		return -1;
	for (size_t i = 0; i < im->n; i++)
		memcpy(&im->secs[i].sh, im->file + eh->e_shoff + i * sizeof(Elf64_Shdr), sizeof(Elf64_Shdr));
	const Elf64_Shdr strtab = im->secs[eh->e_shstrndx].sh;
	if (strtab.sh_type != SHT_STRTAB || !in_file(im, strtab.sh_offset, strtab.sh_size))
		return -1;
	int inflating = 0;
	for (size_t i = 1; i < im->n; i++) {
		struct sec *s = &im->secs[i];
		const char *name = name_of(im, &strtab, &s->sh);
		if (s->sh.sh_type == SHT_NOBITS)
			continue;
		if (!name || !in_file(im, s->sh.sh_offset, s->sh.sh_size))
			return -1;
		s->src = im->file + s->sh.sh_offset;
		s->src_len = s->sh.sh_size;
		if (strncmp(name, ".debug_", 7))
			continue;
		if (unread_section(name)) {
			s->src_len = s->sh.sh_size = 0;
			s->sh.sh_flags &= ~(Elf64_Xword)SHF_COMPRESSED;
			continue;
		}
		int rc = s->sh.sh_flags & SHF_COMPRESSED ? compressed(s, s->src) : 0;
		if (rc < 0)
			return -1;
		inflating += rc;
	}
	return inflating;
}

static uint64_t align_up(uint64_t off, uint64_t align)
{
	return align > 1 ? (off + align - 1) / align * align : off;
}

/* Places the program headers and the sections, in their order, then the section headers. */
static void lay_out(struct image *im)
{
	uint64_t off = sizeof(Elf64_Ehdr);
	im->eh.e_phoff = im->eh.e_phnum ? off : 0;
	off += (uint64_t)im->eh.e_phnum * sizeof(Elf64_Phdr);
	for (size_t i = 1; i < im->n; i++) {
		Elf64_Shdr *sh = &im->secs[i].sh;
		if (sh->sh_type != SHT_NOBITS && sh->sh_size)
			off = align_up(off, sh->sh_addralign);
		sh->sh_offset = off;
		if (sh->sh_type != SHT_NOBITS)
			off += sh->sh_size;
	}
	im->eh.e_shoff = align_up(off, 8);
}

static int write_at(int fd, const void *buf, size_t len, uint64_t off)
{
	const unsigned char *p = buf;
	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);
		if (n <= 0)
			return -1;
		p += n, len -= (size_t)n, off += (uint64_t)n;
	}
	return 0;
}

/* Inflates s into the copy: straight into a shared mapping of its place in the copy (sized by
 * write_copy), unmapped at once, so its pages are neither cleared and copied twice nor kept in this
 * process's memory; through a buffer and pwrite where it cannot be mapped. Returns 0 or -1. */
static int inflate_one(struct image *im, struct libdeflate_decompressor *d, const struct sec *s)
{
	long page = sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096;
	uint64_t skip = s->sh.sh_offset % (uint64_t)page; /* the mapping starts at a page */
	unsigned char *map = mmap(NULL, s->sh.sh_size + skip, PROT_READ | PROT_WRITE, MAP_SHARED, im->fd,
	                          (off_t)(s->sh.sh_offset - skip));
	if (map != MAP_FAILED) {
		int rc = libdeflate_zlib_decompress(d, s->src, s->src_len, map + skip, s->sh.sh_size, NULL);
		munmap(map, s->sh.sh_size + skip);
		return rc == LIBDEFLATE_SUCCESS ? 0 : -1;
	}
	unsigned char *out = malloc(s->sh.sh_size);
	int failed = !out ||
	             libdeflate_zlib_decompress(d, s->src, s->src_len, out, s->sh.sh_size, NULL) !=
	                 LIBDEFLATE_SUCCESS ||
	             write_at(im->fd, out, s->sh.sh_size, s->sh.sh_offset) < 0;
	free(out);
	return failed ? -1 : 0;
}

/* Inflates and writes worker's sections. */
static void inflate_own(struct image *im, int worker)
{
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
	int failed = !d;
	for (size_t i = 0; i < im->n && !failed; i++) {
		const struct sec *s = &im->secs[i];
		if (!s->inflate || s->worker != worker || !s->sh.sh_size)
			continue;
		failed = inflate_one(im, d, s) < 0;
	}
	if (d)
		libdeflate_free_decompressor(d);
	if (failed)
		__atomic_store_n(&im->failed, 1, __ATOMIC_RELAXED);
}

/* Writes the copy's headers and the sections stored as they are (not inflated). Returns 0 or -1. */
static int write_plain(struct image *im)
{
	int rc = write_at(im->fd, &im->eh, sizeof(im->eh), 0);
	if (!rc && im->eh.e_phnum)
		rc = write_at(im->fd, im->file + im->in_phoff, (size_t)im->eh.e_phnum * sizeof(Elf64_Phdr),
		              im->eh.e_phoff);
	for (size_t i = 1; i < im->n && !rc; i++) {
		const struct sec *s = &im->secs[i];
		if (!s->inflate && s->sh.sh_type != SHT_NOBITS && s->src_len)
			rc = write_at(im->fd, s->src, s->src_len, s->sh.sh_offset);
	}
	for (size_t i = 0; i < im->n && !rc; i++)
		rc = write_at(im->fd, &im->secs[i].sh, sizeof(Elf64_Shdr),
		              im->eh.e_shoff + i * sizeof(Elf64_Shdr));
	return rc;
}

/* The helper inflates its sections, then writes the rest: the caller inflates the biggest section
 * from the start, the one the copy waits for. */
static void *helper_main(void *arg)
{
	struct image *im = arg;
	inflate_own(im, 1);
	if (write_plain(im) < 0)
		__atomic_store_n(&im->failed, 1, __ATOMIC_RELAXED);
	return NULL;
}

/* Splits the sections to inflate between two threads, the biggest first to the less loaded. */
static void share_out(struct image *im)
{
	uint64_t load[2] = {0, 0};
	for (;;) {
		struct sec *big = NULL;
		for (size_t i = 0; i < im->n; i++) {
			struct sec *s = &im->secs[i];
			if (s->inflate && !s->assigned && (!big || s->sh.sh_size > big->sh.sh_size))
				big = s;
		}
		if (!big)
			return;
		big->worker = load[1] < load[0];
		big->assigned = 1;
		load[big->worker] += big->sh.sh_size;
	}
}

static int write_copy(struct image *im)
{
	/* the copy's whole size first: the inflating threads map their sections' places in it */
	if (ftruncate(im->fd, (off_t)(im->eh.e_shoff + (uint64_t)im->n * sizeof(Elf64_Shdr))) < 0)
		return -1;
	share_out(im);
	pthread_t helper;
	int threaded = pthread_create(&helper, NULL, helper_main, im) == 0, rc = 0;
	if (!threaded)
		for (size_t i = 0; i < im->n; i++)
			im->secs[i].worker = 0;
	inflate_own(im, 0);
	if (threaded)
		pthread_join(helper, NULL);
	else
		rc = write_plain(im);
	return rc || im->failed ? -1 : 0;
}

/* The cache's name for a copy of the debug file open on fd (stat st): from its build-id, read by
 * libelf. 0 when it has none (such a copy is not kept). */
static int entry_name(int fd, const struct stat *st, char name[CT_DEBUGCACHE_NAME])
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *id;
	ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, &id) : -1;
	if (n > 0)
		ct_debugcache_name(name, id, (size_t)n, st);
	if (elf)
		elf_end(elf);
	return n > 0;
}

/* The copy's size, and its section headers (the end of the copy) into *tail. */
static uint64_t copy_size(const struct image *im, Elf64_Shdr **tail)
{
	if ((*tail = malloc(im->n * sizeof(**tail))))
		for (size_t i = 0; i < im->n; i++)
			(*tail)[i] = im->secs[i].sh;
	return im->eh.e_shoff + (uint64_t)im->n * sizeof(Elf64_Shdr);
}

/* The copy of the file open on fd (stat st), made or found in the cache: its descriptor, or -1. */
static int copy_of(struct image *im, int fd, const struct stat *st)
{
	Elf64_Shdr *tail;
	uint64_t size = copy_size(im, &tail);
	char name[CT_DEBUGCACHE_NAME];
	int named = tail && entry_name(fd, st, name);
	if (named)
		im->fd = ct_debugcache_get(name, size, &im->eh, sizeof(im->eh), tail, im->n * sizeof(*tail));
	free(tail);
	if (im->fd >= 0)
		return im->fd;
	int cached = named && (im->fd = ct_debugcache_create(size)) >= 0;
	if (!cached)
		im->fd = memfd_create("ctrack-debuginfo", MFD_CLOEXEC);
	if (im->fd < 0 || write_copy(im) < 0) {
		if (im->fd >= 0)
			close(im->fd);
		return -1;
	}
	if (cached)
		ct_debugcache_keep(im->fd, name);
	return im->fd;
}

int ct_debugimage_open(int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0)
		return fd;
	struct image im = {.size = (size_t)st.st_size, .fd = -1};
	void *map = mmap(NULL, im.size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return fd;
	im.file = map;
	int copy = -1;
	if (parse(&im) > 0) {
		lay_out(&im);
		copy = copy_of(&im, fd, &st);
	}
	munmap(map, im.size);
	free(im.secs);
	if (copy < 0)
		return fd;
	close(fd);
	return copy;
}
