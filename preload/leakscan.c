/* SPDX-License-Identifier: MIT */
/* The leak classes at exit: the live blocks from the matcher, the program's roots (its modules'
 * writable data and bss, the exiting thread's stack, registers and static TLS), reach.c's flood
 * fill, and one CLASSES record per trace. The exiting thread captures its roots (prepare) and
 * waits; the writer runs the scan after its last drain, before END, and the waiting thread marks
 * blocks with it meanwhile (ct_leakscan_help).
 * Other threads still running at exit are stopped for the scan (stopworld.c: by ptrace, else by a
 * signal whose handler saves their registers and waits), and their stacks, registers and TLS are
 * roots too; a thread that could not be stopped (it blocks the signal) is left running and counted
 * in a NOTE. The program's anonymous mappings are
 * roots too, as memcheck has them (LeakSanitizer does not): not malloc's heaps, not the shim's.
 * LeakSanitizer's interface adds the blocks the program ignores and the regions it registers
 * (lsan.c), and a CLASSES record is followed by HOLDERS (who holds each indirectly lost block).
 * No malloc (memory from the arena), no stdio; every read of the program's memory is clamped to
 * readable mappings (root ranges, and blocks with a page nobody may read). When the scan cannot
 * learn its roots (no descriptor for /proc/self/maps), it gives no classes and says why: a verdict
 * from a scan with missing roots would call reachable blocks lost. */
#include <dirent.h>
#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <ucontext.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "leakscan.h"
#include "lsan.h"
#include "mallocmap.h"
#include "match.h"
#include "procmaps.h"
#include "reach.h"
#include "shim.h"
#include "stopworld.h"
#include "text.h"
#include "unwind.h"
#include "writer.h"

static struct {
	uintptr_t sp, tp; /* the exiting thread's, captured by prepare */
	pid_t tid;
	const char *suppressions; /* what the program's __lsan_default_suppressions() returned */
	size_t tls_size;          /* glibc's static TLS size, 0 when unknown */
	int prepared;
	uint64_t threads_not_scanned; /* other threads alive at the scan */
	const char *failure;          /* why the last scan gave no classes, or NULL */
	int failure_errno;
	int last_done;                          /* the program made its last scan (__lsan_do_leak_check) */
	uint64_t ignored_blocks, ignored_bytes; /* by the program's word, at the last scan */
	int has_regs; /* a signal's roots: the interrupted registers and stack pointer */
	uintptr_t regs[NGREG], signal_sp;
} roots;

/* ---- readable mappings, from /proc/self/maps ---- */

struct range {
	uintptr_t lo, hi;
	uint8_t anon_rw;   /* writable, and no file or kernel name: the program's own memory, or the heap's */
	uint8_t shared_rw; /* writable memory a file names: shared anonymous memory, memfd, POSIX or SysV
	                    * shared memory (memory_file) */
	uint8_t file;      /* a file's mapping */
	uint8_t exec;      /* executable */
	uint8_t main_stack; /* [stack]: the main thread's */
};

struct maps {
	struct range *v;
	size_t n, cap;
	int safe; /* read through copies (struct ct_reach's safe) */
};

static void add_range(struct maps *m, uintptr_t lo, uintptr_t hi)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 512;
		if (ct_arena_grow((void **)&m->v, m->cap * sizeof(*m->v), cap * sizeof(*m->v)) < 0)
			return;
		m->cap = cap;
	}
	m->v[m->n++] = (struct range){.lo = lo, .hi = hi};
}

/* Whether a mapping's name is that of memory rather than of a file on a disk: the kernel names a
 * shared anonymous mapping /dev/zero (deleted), a memfd /memfd:NAME, SysV shared memory /SYSVKEY;
 * POSIX shared memory lives in /dev/shm. memcheck reads them as the program's memory, and a pointer
 * kept there holds its block; a disk file's mapping is not read (a database's would be gigabytes). */
static int memory_file(const char *name)
{
	static const char *const prefixes[] = {"/dev/zero", "/memfd:", "/SYSV", "/dev/shm/"};
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return 1;
	return 0;
}

static int maps_add(const char *line, void *arg)
{
	struct maps *m = arg;
	uintptr_t lo, hi;
	const char *p = ct_procmaps_range(line, &lo, &hi), *perms = p;
	if (!p || *p != 'r')
		return 0;
	int writable = p[1] == 'w';
	/* perms, offset, device, inode, then the name after spaces: none for anonymous memory */
	for (int field = 0; field < 4 && *p; field++) {
		while (*p && *p != ' ')
			p++;
		while (*p == ' ')
			p++;
	}
	add_range(m, lo, hi);
	if (m->n && m->v[m->n - 1].lo == lo) {
		struct range *g = &m->v[m->n - 1];
		g->anon_rw = writable && !*p;
		g->shared_rw = writable && memory_file(p);
		g->file = *p == '/';
		g->exec = perms[2] == 'x';
		g->main_stack = !strcmp(p, "[stack]");
	}
	return 0;
}

/* The readable mappings, in address order (the kernel lists them so). 0, or -1 when /proc/self/maps
 * cannot be read (roots.failure says why). */
static int maps_read(struct maps *m)
{
	int fd = ct_proc_open("/proc/self/maps", 1);
	if (fd < 0) {
		roots.failure = "cannot open /proc/self/maps";
		roots.failure_errno = errno;
		return -1;
	}
	ct_procmaps_read(fd, maps_add, m);
	close(fd);
	if (!m->n) {
		roots.failure = "cannot read /proc/self/maps";
		roots.failure_errno = 0;
		return -1;
	}
	return 0;
}

/* The readable mapping that holds p, or NULL (the mappings are in address order). */
static const struct range *maps_find(const struct maps *m, uintptr_t p)
{
	size_t lo = 0, hi = m->n;
	while (lo < hi) { /* the first mapping that ends above p */
		size_t mid = lo + (hi - lo) / 2;
		if (m->v[mid].hi <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->n && m->v[lo].lo <= p ? &m->v[lo] : NULL;
}

/* reach.h's is_vtable, on the mappings: memcheck's test of a C++ vtable. */
static int is_vtable(const void *arg, uintptr_t p)
{
	const struct maps *m = arg;
	const struct range *g = maps_find(m, p);
	if (!g || !g->file)
		return 0;
	uintptr_t last = p + 20 * sizeof(uintptr_t) < g->hi - sizeof(uintptr_t) ? p + 20 * sizeof(uintptr_t)
	                                                                        : g->hi - sizeof(uintptr_t);
	int functions = 0;
	for (uintptr_t a = p; a <= last; a += sizeof(uintptr_t)) {
		uintptr_t fn;
		if (!ct_reach_read(&fn, a, sizeof(fn), m->safe))
			return 0;
		if (!fn)
			continue;
		const struct range *code = maps_find(m, fn);
		if (!code || !code->file || !code->exec)
			return 0;
		if (++functions == 2)
			return 1;
	}
	return 0;
}

/* Scans [lo, hi) as roots, only where it is readable. */
static void root_outside_shim(struct ct_reach *r, uintptr_t lo, uintptr_t hi,
                              void (*scan)(struct ct_reach *r, uintptr_t lo, uintptr_t hi));

static void root_all(struct ct_reach *r, uintptr_t lo, uintptr_t hi)
{
	ct_reach_root(r, (const void *)lo, hi - lo);
}

/* Scans what of [lo, hi) is mapped, less the shim's own memory (a thread's TLS window may reach
 * past its stack into the next mapping, a ring or a lane's stack full of heap addresses). */
static void root_range(struct ct_reach *r, const struct maps *m, uintptr_t lo, uintptr_t hi)
{
	for (size_t i = 0; i < m->n && lo < hi; i++) {
		uintptr_t a = lo > m->v[i].lo ? lo : m->v[i].lo, b = hi < m->v[i].hi ? hi : m->v[i].hi;
		if (a < b)
			root_outside_shim(r, a, b, root_all);
	}
}

/* ---- the roots ---- */

struct modules_ctx {
	struct maps *data; /* the modules' writable segments, collected before threads stop */
	uintptr_t self;    /* an address inside the shim: its own data is no root */
};

static int visit_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct modules_ctx *c = arg;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && c->self - lo < ph->p_memsz)
			return 0; /* the shim */
	}
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		add_range(c->data, lo, lo + ph->p_memsz);
	}
	return 0;
}

/* A thread's stack from `from` (its stack pointer) up: to the end of the stack's mapping, or of the
 * heap block that holds sp when the thread runs on one (a coroutine's stack from malloc), since the
 * rest of that mapping is the heap, whose lost blocks it would make reachable. */
static void root_stack(struct ct_reach *r, const struct maps *m, uintptr_t sp, uintptr_t from)
{
	long in = ct_reach_block_at(r, sp);
	const struct range *stack = in < 0 ? maps_find(m, sp) : NULL;
	uintptr_t lo = in >= 0 ? r->blocks[in].start : stack ? stack->lo : sp;
	uintptr_t hi = in >= 0 ? r->blocks[in].start + r->blocks[in].size : stack ? stack->hi : sp;
	root_range(r, m, from > lo ? from : lo, hi);
}

/* A thread's static TLS and control block around its thread pointer tp (glibc keeps the TLS below
 * it and the TCB above, x86_64's variant II), within the mapping that holds them, and never below
 * floor, where the thread's live stack ends: the size glibc reports counts the TCB too, so tp minus
 * it reaches into the top of a thread's stack, where a shallow one has its dead frames (a signal's
 * frame used to overwrite them; a ptrace stop leaves them as they were). */
static void root_tls(struct ct_reach *r, const struct maps *m, uintptr_t tp, uintptr_t floor)
{
	const struct range *g = roots.tls_size ? maps_find(m, tp) : NULL;
	if (!g)
		return;
	uintptr_t lo = tp - g->lo > roots.tls_size ? tp - roots.tls_size : g->lo;
	if (floor > lo && floor < tp)
		lo = floor;
	uintptr_t hi = g->hi - tp > roots.tls_size ? tp + roots.tls_size : g->hi;
	root_range(r, m, lo, hi);
}

/* The scanning thread's stack from its pointer up, and its TLS (root_tls). Interrupted by the signal that
 * ends the program: its registers as the signal found them, and its stack from the interrupted stack pointer
 * (its red zone below it too), not from the shim's handler, whose frames lie below that (or on an alternate
 * stack) and overlay dead frames of the program's: a lost block's address in a stale slot there kept it
 * "reachable" in 3 runs of 5 of tests/progs/scan_killed.c, where memcheck, which runs no handler,
 * found it lost. */
static void root_thread(struct ct_reach *r, const struct maps *m)
{
	uintptr_t sp = roots.sp;
	if (roots.has_regs) {
		sp = roots.signal_sp - 128;
		root_stack(r, m, roots.signal_sp, sp);
		for (int k = 0; k < NGREG; k++)
			ct_reach_root_word(r, roots.regs[k]);
	} else {
		root_stack(r, m, sp, sp);
	}
	root_tls(r, m, roots.tp, sp);
}

/* Calls fn(tid, arg) for each thread of the process (getdents64: no malloc, as opendir would);
 * returns how many calls returned 1 (with fn NULL: how many threads there are), or -1 when the list
 * cannot be read (roots.failure says why). */
static long each_task(int (*fn)(pid_t tid, void *arg), void *arg)
{
	char buf[2048];
	long n = 0;
	int fd = ct_proc_open("/proc/self/task", 1);
	if (fd < 0) {
		roots.failure = "cannot open /proc/self/task";
		roots.failure_errno = errno;
		return -1;
	}
	for (long k; (k = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0;)
		for (long off = 0; off < k;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			off += d->d_reclen;
			long tid = d->d_name[0] == '.' ? 0 : strtol(d->d_name, NULL, 10);
			if (tid > 0)
				n += fn ? fn((pid_t)tid, arg) == 1 : 1;
		}
	close(fd);
	return n;
}

/* 1 unless the thread has ended: a main thread that called pthread_exit stays in the task list as
 * a zombie until the process ends, and never answers a signal. */
static int task_alive(pid_t tid, void *arg)
{
	(void)arg;
	char path[64], buf[512];
	ct_proc_task_path(path, sizeof(path), tid, "stat");
	const char *state = ct_procstat_fields_at(path, buf, sizeof(buf), 1);
	return !state || (*state != 'Z' && *state != 'X'); /* unreadable: alive, to be safe */
}

/* A thread of the program's that has not ended (the matcher's lanes are the shim's). */
static int program_alive(pid_t tid, void *arg)
{
	return !ct_lanes_is_lane(tid) && task_alive(tid, arg);
}

/* Threads of the process other than this one and the exiting one. */
static uint64_t other_threads(void)
{
	long n = each_task(program_alive, NULL);
	return n > 2 ? (uint64_t)n - 2 : 0;
}

/* ---- stopping the other threads (stopworld.c) ---- */

static void sleep_ms(long ms)
{
	struct timespec ts = {0, ms * 1000000};
	nanosleep(&ts, NULL);
}

/* The threads to stop: the program's, but this one and the exiting one (it waits for the scan). A
 * thread that a running one creates after the list was read is in the next list: the list is read
 * again until it holds no new thread (once all stand still, none can create another), or
 * STOP_ROUNDS times (a thread that cannot be stopped may go on creating them). */
#define STOP_ROUNDS 8

static struct {
	pid_t seen[CT_STOP_MAX]; /* every thread listed so far */
	size_t nseen;
	pid_t batch[CT_STOP_MAX]; /* the new ones of this list */
	size_t n;
	pid_t self, exiting;
} to_stop;

static int list_one(pid_t tid, void *arg)
{
	(void)arg;
	if (tid == to_stop.self || tid == to_stop.exiting || to_stop.nseen + to_stop.n == CT_STOP_MAX)
		return 0;
	for (size_t i = 0; i < to_stop.nseen; i++)
		if (to_stop.seen[i] == tid)
			return 0;
	if (!program_alive(tid, NULL))
		return 0;
	to_stop.batch[to_stop.n++] = tid;
	return 1;
}

/* Stops the program's threads but this one and skip: how many stand still, their roots in *v; -1
 * when the threads cannot be listed. */
static long stop_threads(pid_t skip, const struct ct_stopped **v)
{
	to_stop.nseen = 0;
	to_stop.self = (pid_t)syscall(SYS_gettid);
	to_stop.exiting = skip;
	*v = NULL;
	long stopped = 0;
	for (int round = 0; round < STOP_ROUNDS; round++) {
		to_stop.n = 0;
		if (each_task(list_one, NULL) < 0)
			return round ? stopped : -1;
		if (round && !to_stop.n)
			break;
		stopped = (long)(round ? ct_world_more(to_stop.batch, to_stop.n)
		                       : ct_world_stop(to_stop.batch, to_stop.n, v));
		memcpy(to_stop.seen + to_stop.nseen, to_stop.batch, to_stop.n * sizeof(pid_t));
		to_stop.nseen += to_stop.n;
		if (!to_stop.n)
			break;
	}
	return stopped;
}

/* The stacks (from below the red zone a signal handler leaves, where memcheck starts too: a leaf
 * function keeps data there; the shim's hooks leave nothing of theirs in it, hooks.c), registers
 * and TLS of the stopped threads. */
static void root_stopped(struct ct_reach *r, const struct maps *m, const struct ct_stopped *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct ct_stopped *t = &v[i];
		root_stack(r, m, t->sp, t->sp - 128);
		for (int k = 0; k < CT_STOP_REGS; k++)
			ct_reach_root_word(r, t->regs[k]);
		root_tls(r, m, t->tp, t->sp - 128);
	}
}

/* ---- the program's anonymous memory ----
 * memcheck scans every valid word outside heap blocks; so does this, in the program's anonymous
 * writable mappings (its own mmap buffers, the stacks glibc keeps for threads that ended), but not
 * where that would read the allocator's or the shim's memory: malloc's thread heaps and mmapped
 * chunks (mallocmap.h: free chunks hold the program's stale pointers), a thread's stack (scanned
 * from its stack pointer), and the shim's own mappings, each cut out of whatever the kernel merged
 * it with. */

/* The shim's mappings, collected once per scan. */
static struct maps shim_maps;

static void add_shim_mapping(uintptr_t lo, uintptr_t hi, void *arg)
{
	(void)arg;
	add_range(&shim_maps, lo, hi);
}

/* The first page from i on that mincore's vec says is resident (pages when none is), over the
 * others 8 at a time: a sparse mapping of a TiB is 268 million pages, nearly all of them absent. */
static size_t next_resident(const unsigned char *vec, size_t i, size_t pages)
{
	for (uint64_t v; i + 8 <= pages && (memcpy(&v, vec + i, 8), !(v & 0x0101010101010101ull));)
		i += 8;
	while (i < pages && !(vec[i] & 1))
		i++;
	return i;
}

static void root_pages(struct ct_reach *r, uintptr_t lo, uintptr_t hi, int copied)
{
	if (copied)
		ct_reach_root_copied(r, lo, hi - lo);
	else
		ct_reach_root(r, (const void *)lo, hi - lo);
}

/* Scans the pages of [lo, hi) that were ever touched: an anonymous page that is not resident was
 * never written (or was swapped out: rare, and then it is missed) and holds only zeros. mincore
 * answers for 64 MiB a call (the writer's stack holds the 16 KiB of its answer). copied: read
 * through copies, which a page gone meanwhile cannot fault. */
static void resident_pages(struct ct_reach *r, uintptr_t lo, uintptr_t hi, int copied)
{
	const uintptr_t page = 4096;
	unsigned char vec[16384];
	uintptr_t start = lo; /* nothing below it is scanned, though mincore starts at its page */
	lo &= ~(page - 1);
	while (lo < hi) {
		uintptr_t end = hi - lo > sizeof(vec) * page ? lo + sizeof(vec) * page : hi;
		size_t pages = (end - lo + page - 1) / page;
		if (mincore((void *)lo, end - lo, vec) < 0) {
			root_pages(r, lo > start ? lo : start, end, copied);
			lo = end;
			continue;
		}
		for (size_t i = next_resident(vec, 0, pages); i < pages; i = next_resident(vec, i, pages)) {
			size_t j = i;
			while (j < pages && (vec[j] & 1))
				j++;
			uintptr_t a = lo + i * page, b = lo + j * page < end ? lo + j * page : end;
			root_pages(r, a > start ? a : start, b, copied);
			i = j;
		}
		lo = end;
	}
}

static void root_resident(struct ct_reach *r, uintptr_t lo, uintptr_t hi)
{
	resident_pages(r, lo, hi, 0);
}

/* A memory file's mapping (memory_file): another process may cut the file short under the scan. */
static void root_shared(struct ct_reach *r, uintptr_t lo, uintptr_t hi)
{
	resident_pages(r, lo, hi, 1);
}

/* Scans [lo, hi) less every shim mapping in it, with scan. */
static void root_outside_shim(struct ct_reach *r, uintptr_t lo, uintptr_t hi,
                              void (*scan)(struct ct_reach *r, uintptr_t lo, uintptr_t hi))
{
	while (lo < hi) {
		uintptr_t next = hi, skip_to = 0;
		for (size_t i = 0; i < shim_maps.n; i++) {
			const struct range *s = &shim_maps.v[i];
			if (s->lo <= lo && lo < s->hi)
				skip_to = s->hi > skip_to ? s->hi : skip_to;
			else if (s->lo > lo && s->lo < next)
				next = s->lo;
		}
		if (skip_to) {
			lo = skip_to;
			continue;
		}
		scan(r, lo, next);
		lo = next;
	}
}

/* The lowest address from lo up such that every page from it to hi is in memory (hi when the last
 * one is not). The scan reads no other page of an anonymous mapping: one never touched may be a
 * userfaultfd region's, whose handler thread is stopped (the read would wait for ever: the program
 * never ended), or a hugetlb mapping's with no huge page left (SIGBUS). */
static uintptr_t resident_from(uintptr_t lo, uintptr_t hi)
{
	unsigned char vec[256];
	uintptr_t first = lo & ~(uintptr_t)4095;
	size_t pages = (hi - first + 4095) / 4096;
	if (pages > sizeof(vec)) {
		first = (hi - sizeof(vec) * 4096 + 4095) & ~(uintptr_t)4095;
		pages = (hi - first + 4095) / 4096;
	}
	if (mincore((void *)first, hi - first, vec) < 0)
		return hi;
	while (pages && (vec[pages - 1] & 1))
		pages--;
	uintptr_t from = first + pages * 4096;
	return from > lo ? from : lo;
}

/* A thread's control block in [lo, hi): glibc's struct pthread starts with the TCB head, whose first
 * and third words point to itself (x86_64). A thread that ended leaves its stack mapping in glibc's
 * cache with the block at its top; memcheck forgets the dead thread's stack frames but still reads
 * the block (and the TLS below it). Sought in the mapping's top pages that are in memory (the block
 * was written when the thread began: resident_from). 0 when there is none. */
static uintptr_t find_tcb(uintptr_t lo, uintptr_t hi, int safe)
{
	uintptr_t floor = (hi - lo > 4 * roots.tls_size ? hi - 4 * roots.tls_size : lo) & ~(uintptr_t)7;
	floor = resident_from(floor, hi);
	if (floor >= hi)
		return 0;
	const uintptr_t *w = (const uintptr_t *)floor; /* w[i]: the word at floor + 8 i */
	uintptr_t *copy = NULL, found = 0;
	if (safe) { /* threads run: the mapping may be gone (then no block of it is read either) */
		copy = ct_arena_map(hi - floor);
		if (!copy || ct_reach_copy(copy, floor, hi - floor) != hi - floor) {
			ct_arena_unmap(copy, hi - floor);
			return 0;
		}
		w = copy;
	}
	for (uintptr_t p = (hi - 3 * sizeof(uintptr_t)) & ~(uintptr_t)7; p >= floor && p > lo; p -= 8)
		if (w[(p - floor) / 8] == p && w[(p - floor) / 8 + 2] == p) {
			found = p;
			break;
		}
	ct_arena_unmap(copy, hi - floor);
	return found;
}

/* Where a dead thread's static TLS starts, below its control block at tcb in a cached stack g:
 * glibc puts the TCB at the top of the stack mapping and the static TLS (the size it reports
 * includes the TCB) right below it, then the stack. When g reaches further up than that (the kernel
 * merged it with the mapping above), only the TCB up. */
static uintptr_t static_tls(const struct range *g, uintptr_t tcb)
{
	if (g->hi - tcb > roots.tls_size || g->hi - g->lo < roots.tls_size)
		return tcb;
	return g->hi - roots.tls_size;
}

/* A piece of an anonymous mapping g that is the program's (mallocmap.h). A mapping that is one piece
 * (nothing of malloc's in it) may be a cached thread stack: only its TLS and control block are read.
 * Or the stack of a thread that is alive (it holds a thread slot) but that no stop reached (it blocks
 * the stop's signal): it runs on, and its stack is read whole as it is then (its registers cannot
 * be), rather than what it alone holds counted lost. */
struct anon_piece {
	struct ct_reach *r;
	const struct range *g;
};

static void root_piece(uintptr_t lo, uintptr_t hi, void *arg)
{
	const struct anon_piece *a = arg;
	if (lo == a->g->lo && hi == a->g->hi && roots.tls_size) {
		uintptr_t tcb = find_tcb(lo, hi, a->r->safe);
		lo = tcb && !ct_slot_lookup(tcb) ? static_tls(a->g, tcb) : lo;
	}
	root_outside_shim(a->r, lo, hi, root_resident);
}

/* The shim's mappings as they are now (the scan's own buffers included). */
static void collect_shim_maps(void)
{
	shim_maps.n = 0;
	ct_arena_mappings(add_shim_mapping, NULL);
}

/* The anonymous mappings and the memory files' (memory_file), but the stacks the scan reads from a
 * known stack pointer (sps); and the main thread's stack (whole, as it is) when it holds none of
 * those: main runs on, blocking the stop's signal, as root_piece's threads do. */
static void root_anonymous(struct ct_reach *r, const struct maps *m, const uintptr_t *sps, size_t nsp)
{
	collect_shim_maps(); /* again: the scan mapped more since */
	for (size_t i = 0; i < m->n; i++) {
		const struct range *g = &m->v[i];
		int stack = 0;
		for (size_t k = 0; k < nsp && !stack; k++)
			stack = sps[k] >= g->lo && sps[k] < g->hi;
		if (g->main_stack && !stack && task_alive(getpid(), NULL))
			root_outside_shim(r, g->lo, g->hi, root_resident);
		if (g->shared_rw && !stack)
			root_outside_shim(r, g->lo, g->hi, root_shared);
		if (!g->anon_rw || stack)
			continue;
		struct anon_piece a = {r, g};
		ct_mallocmap_walk(r->blocks, r->n, g->lo, g->hi, r->safe, root_piece, &a);
	}
}

/* ---- the scan ---- */

struct fill {
	struct ct_reach_block *v;
	size_t n, cap;
};

static void add_block(uint64_t p, uint64_t size, uint32_t info, void *arg)
{
	struct fill *f = arg;
	if (f->n >= f->cap)
		return;
	f->v[f->n++] = (struct ct_reach_block){.start = p, .size = size, .tag = info};
}

/* glibc: an in-use chunk's usable size reaches 8 bytes into the next chunk, whose header starts
 * there (a block's last word is the next chunk's prev_size). Asked with the threads stopped, for the
 * blocks sorted (the chunk headers are read in address order, not the live table's), but not of a
 * block being freed: its memory may be gone (a large block's is unmapped at once), and reading its
 * header killed the program (tests/progs/check_deferred.c). The live set is taken before the stop,
 * so a block freed since is one of those (freed_unmatched made them reachable already). */
static int headers_untrusted; /* ct_leakscan_untrusted */

/* glibc's malloc_usable_size of the live block at p; while threads run (safe), which may free it
 * meanwhile, from its chunk's header read through a copy. */
static size_t usable_size(uintptr_t p, int safe)
{
	return safe ? ct_mallocmap_usable_size(p) : ct_real.malloc_usable_size((void *)p);
}

static void set_edges(struct ct_reach *r)
{
	for (size_t i = 0; i < r->n; i++) {
		struct ct_reach_block *b = &r->blocks[i];
		if (b->state == CT_REACH_REACHABLE || !ct_real.malloc_usable_size || headers_untrusted) {
			b->allocator_edge = 0;
			continue;
		}
		size_t usable = usable_size(b->start, r->safe);
		b->allocator_edge = usable >= 16 && usable - 8 < b->size ? (uint32_t)(usable - 8) : 0;
	}
}

/* Per alloc info, its blocks by class, as CLASSES records them (infos without live blocks left out),
 * in the order the blocks first name them. Only the infos the blocks name are touched: a program
 * that made a million infos and kept ten blocks would otherwise pay for a page fault per 100 infos
 * at exit, with the program waiting. */
static void write_classes(struct ct_rec_buf *out, const struct ct_reach_block *b, size_t n)
{
	uint32_t ninfos = ct_match_infos();
	size_t index_bytes = (size_t)ninfos * sizeof(uint32_t), bytes = n * sizeof(struct ct_rec_classes);
	uint32_t *at = ninfos && n ? ct_arena_map(index_bytes) : NULL; /* info -> 1 + its place in v */
	struct ct_rec_classes *v = at ? ct_arena_map(bytes) : NULL;
	size_t k = 0;
	for (size_t i = 0; v && i < n; i++) {
		if (b[i].tag >= ninfos)
			continue;
		if (!at[b[i].tag]) {
			v[k].info = b[i].tag;
			at[b[i].tag] = (uint32_t)++k;
		}
		v[at[b[i].tag] - 1].count[b[i].state]++;
	}
	ct_rec_classes(out, v, k);
	ct_arena_unmap(v, bytes);
	ct_arena_unmap(at, index_bytes);
}

/* For the indirectly lost blocks, how many of each alloc info each alloc info of definitely lost
 * blocks holds (the leaders of their cliques): one HOLDERS record, so a check that suppresses a
 * holder can suppress what hangs from it. Counted in a table of at least twice as many slots as
 * there are such blocks (open addressing; a slot is free while its count is 0). */
static void write_holders(struct ct_rec_buf *out, struct ct_reach *r)
{
	size_t lost = 0, cap = 16;
	for (size_t i = 0; i < r->n; i++)
		lost += r->blocks[i].state == CT_REACH_INDIRECT;
	while (cap < 2 * lost)
		cap *= 2;
	size_t bytes = cap * sizeof(struct ct_rec_holder);
	struct ct_rec_holder *t = lost ? ct_arena_map(bytes) : NULL;
	if (!t)
		return;
	for (size_t i = 0; i < r->n; i++) {
		if (r->blocks[i].state != CT_REACH_INDIRECT)
			continue;
		uint64_t info = r->blocks[i].tag, holder = r->blocks[ct_reach_leader(r, i)].tag;
		size_t s = (size_t)(((info << 32 ^ holder) * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
		while (t[s].count && (t[s].info != info || t[s].holder != holder))
			s = (s + 1) & (cap - 1);
		t[s] = (struct ct_rec_holder){info, holder, t[s].count + 1};
	}
	size_t k = 0;
	for (size_t s = 0; s < cap; s++)
		if (t[s].count)
			t[k++] = t[s];
	ct_rec_holders(out, t, k);
	ct_arena_unmap(t, bytes);
}

/* The span of the module that holds address p, as [lo, hi), or [0, 0). */
static void module_span(const void *p, uintptr_t span[2])
{
	struct dl_find_object obj;
	span[0] = span[1] = 0;
	if (p && _dl_find_object((void *)p, &obj) == 0) {
		span[0] = (uintptr_t)obj.dlfo_map_start;
		span[1] = (uintptr_t)obj.dlfo_map_end;
	}
}

/* The spans of the shim, libc and ld.so, and glibc's static TLS size: looked up at start-up, since
 * dlsym may allocate and take the loader's lock, which an exit from a signal handler must not. */
static uintptr_t spans[3][2];
static const char *(*program_suppressions)(void); /* the program's __lsan_default_suppressions */

void ct_leakscan_untrusted(void)
{
	headers_untrusted = 1;
}

void ct_leakscan_init(void)
{
	ct_world_init();
	module_span((const void *)(uintptr_t)&ct_leakscan_init, spans[0]);
	module_span(dlsym(RTLD_DEFAULT, "__libc_start_main"), spans[1]); /* libc ("exit" is the shim's) */
	module_span(dlsym(RTLD_DEFAULT, "__tls_get_addr"), spans[2]); /* ld.so (_dl_find_object is libc's) */
	void *fn = dlsym(RTLD_DEFAULT, "__lsan_default_suppressions");
	memcpy(&program_suppressions, &fn, sizeof(fn));
	void (*info)(size_t *, size_t *);
	void *sym = dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info"); /* GLIBC_PRIVATE, in ld.so */
	memcpy(&info, &sym, sizeof(sym));
	size_t align = 0;
	if (info)
		info(&roots.tls_size, &align);
}

void ct_leakscan_prepare(const void *sp, int at_exit)
{
	/* At exit, the exiting thread's frames of the shim and of the C runtime's exit machinery (exit's
	 * handlers in libc, _dl_fini in ld.so) are no roots: they overlay the program's dead frames,
	 * whose stale slots would keep lost blocks "reachable". The program's frames start above them:
	 * at the caller of exit(), or __libc_start_call_main after main returned. A check asked by the
	 * program keeps every frame: its caller's registers are spilled in the shim's. */
	uintptr_t program_sp =
	    at_exit ? ct_unwind_first_sp_outside((const uintptr_t(*)[2])spans, 3) : (uintptr_t)sp;
	roots.sp = program_sp > (uintptr_t)sp ? program_sp : (uintptr_t)sp;
	roots.tp = (uintptr_t)__builtin_thread_pointer();
	roots.tid = (pid_t)syscall(SYS_gettid);
	roots.suppressions = program_suppressions ? program_suppressions() : NULL;
	roots.has_regs = 0;
	roots.prepared = 1;
}

void ct_leakscan_prepare_signal(const void *sp, const void *ucontext)
{
	ct_leakscan_prepare(sp, 0);
	const ucontext_t *uc = ucontext;
	if (!uc)
		return;
	memcpy(roots.regs, uc->uc_mcontext.gregs, sizeof(roots.regs));
	roots.signal_sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	roots.has_regs = 1;
}

/* Marks the blocks that are not wholly inside readable mappings (a page made PROT_NONE, a guard
 * page), and gives r the readable ranges for them: blocks and mappings are both in address order.
 * The ranges are in *spans (from the arena, *cap entries), NULL when no block needs them. */
static void mark_partial(struct ct_reach *r, const struct maps *m, struct ct_reach_span **spans, size_t *cap)
{
	size_t j = 0, partial = 0;
	for (size_t i = 0; i < r->n; i++) {
		struct ct_reach_block *b = &r->blocks[i];
		uintptr_t lo = b->start, hi = b->start + b->size;
		while (j < m->n && m->v[j].hi <= lo)
			j++;
		for (size_t k = j; k < m->n && m->v[k].lo <= lo && lo < hi; k++)
			lo = m->v[k].hi; /* readable mappings that follow each other without a gap */
		b->partial = lo < hi;
		partial += b->partial;
	}
	*spans = partial ? ct_arena_map(m->n * sizeof(**spans)) : NULL;
	*cap = *spans ? m->n : 0;
	for (size_t k = 0; k < *cap; k++)
		(*spans)[k] = (struct ct_reach_span){m->v[k].lo, m->v[k].hi};
	r->readable = *spans; /* with no memory for them, no part of a partial block is read */
	r->nreadable = *cap;
}

/* ---- the second marking thread ----
 * The thread that asked for the scan (the exiting one, or the one that called ctrack_check_leaks)
 * waits for it anyway: while the writer marks, it marks too (ct_leakscan_help), taking blocks the
 * writer hands over. It joins once the scan is open, and the writer closes the scan (every block
 * marked, share.done set) and waits for it to leave before the blocks' memory goes. */

static struct {
	struct ct_reach *r; /* the scan open to a helper, or NULL */
	int inside;         /* threads in ct_leakscan_help past the check */
	int taken;          /* a helper has joined this scan */
	struct ct_reach_share share;
} help;

void ct_leakscan_help(void)
{
	if (!__atomic_load_n(&help.r, __ATOMIC_SEQ_CST))
		return;
	/* The program's handlers wait until this thread is out: one that allocated on a full ring, or
	 * asked the writer for a check or the exit's scan, would wait for the writer, which waits for
	 * this thread to leave. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	__atomic_fetch_add(&help.inside, 1, __ATOMIC_SEQ_CST);
	struct ct_reach *r = __atomic_load_n(&help.r, __ATOMIC_SEQ_CST);
	if (r && !__atomic_exchange_n(&help.taken, 1, __ATOMIC_SEQ_CST))
		ct_reach_help(r);
	__atomic_fetch_sub(&help.inside, 1, __ATOMIC_SEQ_CST);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* A heap smaller than both takes the writer a few milliseconds at most: not worth a handover (and
 * the cost guard, tests/cost, counts the exiting thread's instructions as the program side's). */
#define HELP_MIN_BLOCKS 32768
#define HELP_MIN_BYTES ((uint64_t)4 << 20)

/* Opens the marking of r to a helper, whose stack (room for n blocks) is mapped here; NULL when
 * there is no memory for it or the heap is small (the writer marks alone). */
static uint32_t *open_help(struct ct_reach *r)
{
	uint64_t bytes = 0;
	for (size_t i = 0; i < r->n && bytes < HELP_MIN_BYTES; i++)
		bytes += r->blocks[i].size;
	if (r->n < HELP_MIN_BLOCKS && bytes < HELP_MIN_BYTES)
		return NULL;
	uint32_t *stack = ct_arena_map(r->n * sizeof(*stack));
	if (!stack)
		return NULL;
	memset(&help.share, 0, sizeof(help.share));
	help.share.stack = stack;
	help.taken = 0;
	r->share = &help.share;
	__atomic_store_n(&help.r, r, __ATOMIC_SEQ_CST);
	return stack;
}

/* Ends the helper's part (share.done, in case the marking never finished) and waits until it has
 * left; then unmaps its stack. */
static void close_help(struct ct_reach *r, uint32_t *stack)
{
	if (!stack)
		return;
	__atomic_store_n(&help.share.done, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&help.r, NULL, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&help.inside, __ATOMIC_SEQ_CST))
		sleep_ms(1);
	r->share = NULL;
	ct_arena_unmap(stack, r->n * sizeof(*stack));
}

/* A block a thread has reported freeing, which the matcher has not seen yet: no leak, and its memory
 * is not read (ct_reach_freed: with the live table's copy mapped where a large block was, reading it
 * made every block reachable, tests/progs/check_bigfree.c). */
static void freed_unmatched(uint64_t p, void *arg)
{
	ct_reach_freed(arg, (uintptr_t)p);
}

/* A block a thread has allocated (size bytes), or made live again (a realloc that failed: its size
 * the live set's), since the live set was taken: not in it, or in it as freed, its words are roots
 * all the same (what it alone holds is not lost: tests/progs/check_reuse.c). Read as it is now,
 * through copies (an event after this one may have freed it, and a large block's pages go at once),
 * and never where the shim's memory is now (r->hidden). */
static void started_unmatched(uint64_t p, uint64_t size, void *arg)
{
	struct ct_reach *r = arg;
	if (!size) {
		long i = ct_reach_block_at(r, (uintptr_t)p);
		size = i >= 0 && r->blocks[i].start == p ? r->blocks[i].size : 0;
	}
	ct_reach_root_copied(r, (uintptr_t)p, size);
}

static void lsan_region(struct ct_reach *r, uintptr_t lo, uintptr_t hi, void *arg)
{
	root_range(r, arg, lo, hi);
}

/* Scans the roots of every thread and the program's memory, with the other threads stopped. 0, or -1
 * when the roots could not be read (roots.failure says why). */
static int scan_roots(struct ct_reach *r)
{
	/* Everything that takes a lock (the loader's, for the module list) before threads stop. */
	struct maps m = {0}, data = {0};
	struct modules_ctx c = {&data, (uintptr_t)&ct_leakscan};
	dl_iterate_phdr(visit_module, &c);
	const struct ct_stopped *stopped;
	long nstopped = stop_threads(roots.tid, &stopped);
	int rc = nstopped < 0 ? -1 : maps_read(&m); /* the stopped threads' stacks are mapped now */
	struct ct_reach_span *spans = NULL;
	size_t nspans = 0;
	/* Threads that could not be stopped (they block the stop's signal) run on: they may unmap what
	 * the scan reads (a large block they free, glibc's heap trimmed), so it reads through copies. */
	uint64_t answered = nstopped > 0 ? (uint64_t)nstopped : 0,
	         alive = nstopped >= 0 ? other_threads() : 0;
	r->safe = m.safe = alive > answered;
	r->hidden = ct_arena_holds; /* the shim's memory, as mapped at each copied read */
	if (!rc) {
		ct_writer_each_unmatched(freed_unmatched, NULL, r); /* before any block is read */
		set_edges(r);
		r->is_vtable = is_vtable;
		r->vtable_arg = &m;
		mark_partial(r, &m, &spans, &nspans);
		uint32_t *helper_stack = open_help(r);
		collect_shim_maps(); /* no root is read from the shim's memory */
		for (size_t i = 0; i < data.n; i++)
			root_range(r, &m, data.v[i].lo, data.v[i].hi);
		root_thread(r, &m);
		root_stopped(r, &m, stopped, (size_t)nstopped);
		uintptr_t sps[CT_STOP_MAX + 2];
		size_t nsp = 0;
		sps[nsp++] = roots.sp;
		sps[nsp++] = (uintptr_t)__builtin_frame_address(0); /* this (the writer's) stack */
		for (long i = 0; i < nstopped; i++)
			sps[nsp++] = stopped[i].sp;
		root_anonymous(r, &m, sps, nsp);
		/* and those the running threads freed since, with the blocks allocated since the live set */
		ct_writer_each_unmatched(freed_unmatched, started_unmatched, r);
		ct_lsan_roots(r, lsan_region, &m, &roots.ignored_blocks, &roots.ignored_bytes);
		ct_reach_finish(r);
		close_help(r, helper_stack);
	}
	/* Counted while the stopped threads stood still: once let go, a detached one may end. */
	roots.threads_not_scanned = alive > answered ? alive - answered : 0;
	if (nstopped >= 0)
		ct_world_resume();
	ct_arena_unmap(spans, nspans * sizeof(*spans));
	ct_arena_unmap(m.v, m.cap * sizeof(*m.v));
	ct_arena_unmap(data.v, data.cap * sizeof(*data.v));
	return rc;
}

int ct_leakscan(struct ct_rec_buf *out, uint64_t lost[CT_CLASSES], uint64_t blocks[CT_CLASSES])
{
	if (!roots.prepared)
		return -1;
	roots.prepared = 0;
	roots.failure = NULL;
	roots.ignored_blocks = roots.ignored_bytes = 0;
	if (roots.last_done)
		return 1;
	if (roots.suppressions) /* LeakSanitizer's way for a program to carry its suppressions */
		ct_rec_suppressions(out, roots.suppressions, strnlen(roots.suppressions, 1u << 16));
	size_t n = ct_match_live_count();
	struct fill f = {.cap = n};
	f.v = n ? ct_arena_map(n * sizeof(*f.v)) : NULL;
	uint32_t *stack = n ? ct_arena_map(n * sizeof(*stack)) : NULL;
	int rc = n && (!f.v || !stack) ? -1 : 0;
	if (rc) {
		roots.failure = "no memory for the scan";
		roots.failure_errno = ENOMEM;
	}
	struct ct_reach r = {.stack = stack, .heuristics = CT_REACH_HEURISTICS};
	if (!rc) {
		ct_match_live(add_block, &f);
		ct_reach_sort(f.v, f.n);
		r.blocks = f.v, r.n = f.n;
		r.index_bytes = ct_reach_index_bytes(f.v, f.n);
		r.index = r.index_bytes ? ct_arena_map(r.index_bytes) : NULL; /* none: binary search */
		ct_reach_begin(&r);
		rc = scan_roots(&r);
	}
	if (!rc) {
		write_classes(out, f.v, f.n);
		write_holders(out, &r);
		memset(lost, 0, CT_CLASSES * sizeof(*lost));
		memset(blocks, 0, CT_CLASSES * sizeof(*blocks));
		for (size_t i = 0; i < f.n; i++) {
			lost[f.v[i].state] += f.v[i].size;
			blocks[f.v[i].state]++;
		}
	}
	ct_arena_unmap(r.index, r.index_bytes);
	ct_arena_unmap(f.v, n * sizeof(*f.v));
	ct_arena_unmap(stack, n * sizeof(*stack));
	return rc;
}

void ct_leakscan_last(void)
{
	roots.last_done = 1;
}

void ct_leakscan_ignored(uint64_t *blocks, uint64_t *bytes)
{
	*blocks = roots.ignored_blocks;
	*bytes = roots.ignored_bytes;
}

const char *ct_leakscan_failure(int *err)
{
	*err = roots.failure_errno;
	return roots.failure;
}

uint64_t ct_leakscan_threads_not_scanned(void)
{
	return roots.threads_not_scanned;
}
