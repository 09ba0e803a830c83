/* SPDX-License-Identifier: MIT */
/* Leak classes by reachability, as memcheck defines them: which live blocks the program can still
 * reach from its roots (data and bss, stacks, TLS, registers), through which kind of pointers.
 *
 * Contract. The caller gives every live block (start, size), sorted by start and not overlapping,
 * and scans its roots with ct_reach_root*(); ct_reach_finish() then gives each block its class:
 *  - CT_REACH_REACHABLE ("still reachable"): a chain of start pointers from a root leads to it (an
 *    interior pointer that a heuristic recognises counts as a start pointer);
 *  - CT_REACH_POSSIBLE ("possibly lost"): reached only through a chain with an interior pointer;
 *  - CT_REACH_DEFINITE ("definitely lost"): not reached from any root, and not reached from another
 *    lost block first; ct_reach_lost_through() gives the bytes of the lost blocks reached from it;
 *  - CT_REACH_INDIRECT ("indirectly lost"): not reached from any root, but from a lost block (a
 *    cycle of lost blocks has one definite block, the lowest address, which memcheck picks too).
 * Words are read where they are aligned, 8 bytes at a time; the caller guarantees that root ranges
 * are readable, and marks each block that is not wholly readable (`partial`: a page of it made
 * PROT_NONE, a coroutine stack's guard page) and gives the readable ranges, of which only those
 * blocks' parts are read. A pointer to a block counts whether or not the block can be read there
 * (LeakSanitizer's rule; memcheck ignores a pointer into an unreadable page). Nothing here allocates, locks
 * or touches errno: the caller provides the mark stack (one entry per block) and the index's memory.
 *
 * Two threads may mark at once (ct_reach_help): the classes are a fixed point of the roots and the
 * heap (a block's class only rises, and a block is scanned again whenever it rises while it is not
 * on a stack), so they do not depend on which thread reached what first. The lost blocks' cliques
 * are grouped by the thread that called ct_reach_finish alone, in address order. */
#ifndef CTRACK_REACH_H
#define CTRACK_REACH_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

enum ct_reach_class {
	CT_REACH_DEFINITE = 0, /* the state of a block no root reached: the start */
	CT_REACH_INDIRECT,
	CT_REACH_POSSIBLE,
	CT_REACH_REACHABLE,
};

/* memcheck's heuristics (--leak-check-heuristics, all on by default since valgrind 3.11): interior
 * pointers at these places count as start pointers. */
enum {
	CT_REACH_STDSTRING = 1, /* + 24 into | length | capacity | refcount | chars |: old std::string */
	CT_REACH_LENGTH64 = 2,  /* + 8 into a block that starts with its own size - 8 (sqlite3) */
	CT_REACH_NEWARRAY = 4,  /* + 8 into new[]'s block, after a plausible element count */
	CT_REACH_MULTIPLE = 8,  /* at a second base's vtable pointer, the first's at the start (C++
	                           multiple inheritance): needs is_vtable */
	CT_REACH_HEURISTICS = CT_REACH_STDSTRING | CT_REACH_LENGTH64 | CT_REACH_NEWARRAY | CT_REACH_MULTIPLE,
};

/* 32 bytes: the scan holds one per live block. */
struct ct_reach_block {
	uintptr_t start;
	uint64_t size;
	uint32_t tag; /* the caller's (its alloc info, say) */
	/* Where the allocator's header of the next chunk starts inside the block, or 0: glibc's malloc
	 * lets the next chunk's first word overlap a block's last, and its own state points there (the
	 * top chunk, a bin). A root word pointing exactly there is the allocator's, not the program's:
	 * memcheck, whose allocator is its own, never sees it. */
	uint32_t allocator_edge;
	uint32_t leader; /* CT_REACH_INDIRECT: the block whose clique took it (ct_reach_leader) */
	uint8_t state;   /* enum ct_reach_class once finished */
	uint8_t pending; /* on the mark stack */
	uint8_t partial; /* the caller's: not wholly readable, only its parts in `readable` are read */
};

/* An address range [lo, hi). */
struct ct_reach_span {
	uintptr_t lo, hi;
};

#define CT_REACH_REGION_BITS 20 /* the filter's grain: 1 MiB of address space */
#define CT_REACH_FILTER_BITS 12 /* 4096 bits */
#define CT_REACH_SHARE 512      /* blocks handed from one marking thread to the other at a time */

/* The index that finds the block holding an address: blocks no more than 1 MiB apart form a
 * segment, cut into buckets of 2^shift bytes (about one per block of the segment); a bucket holds
 * the first block that ends in or after it. */
struct ct_reach_seg {
	uintptr_t lo, hi; /* [lo, hi): from the first block's start to the last one's end */
	uint32_t *bucket; /* (hi - 1 - lo) >> shift + 2 entries: the last is one past the segment */
	unsigned shift;
};

/* A second marking thread's work (ct_reach_help): blocks handed over CT_REACH_SHARE at a time. All
 * fields but v are used with atomic operations. */
struct ct_reach_share {
	uint32_t v[CT_REACH_SHARE];
	int full;        /* SHARE_EMPTY, _FILLING, _FULL or _TAKING (reach.c) */
	int joined;      /* a helper is there: blocks are handed over only then */
	int busy;        /* the helper has blocks on its stack */
	int done;        /* marking is over: the helper leaves */
	uint64_t takes;  /* handovers taken so far: tells a quiet moment from a handover */
	uint32_t *stack; /* the helper's mark stack: room for n entries */
	uint64_t helped; /* blocks the helper scanned (for the figures) */
};

struct ct_reach {
	struct ct_reach_block *blocks; /* sorted by start */
	size_t n;
	uint32_t *stack; /* the mark stack: room for n entries */
	size_t top;
	unsigned heuristics;
	const struct ct_reach_span *readable; /* sorted: where partial blocks can be read */
	size_t nreadable;
	/* CT_REACH_MULTIPLE: whether the aligned address p (>= 4096) looks like a vtable, memcheck's
	 * way: it lies in a readable file mapping, and of the words from p (20 at most, inside that
	 * mapping) the first two that are not 0 point into executable file mappings. NULL: the
	 * heuristic is off. */
	int (*is_vtable)(const void *arg, uintptr_t p);
	const void *vtable_arg;
	/* Set by ct_reach_begin: [lo, lo + span) holds every block, and the bit of each 1 MiB region
	 * that holds part of one is set (hashed), so most words that point nowhere (zeros, small
	 * numbers, code and stack addresses, free heap memory far from any block) cost no search. */
	uintptr_t lo, span;
	uint64_t regions[(1u << CT_REACH_FILTER_BITS) / 64];
	/* The index's memory, ct_reach_index_bytes() of it, set by the caller before ct_reach_begin;
	 * NULL: blocks are found by binary search. */
	void *index;
	size_t index_bytes;
	struct ct_reach_seg *segs; /* set by ct_reach_begin, in index */
	size_t nsegs;
	/* Set by the caller before any root: a second thread may help mark (ct_reach_help) until
	 * ct_reach_finish has all the blocks marked. NULL: one thread marks. */
	struct ct_reach_share *share;
	/* Set by the caller before any root: threads of the program run during the scan (they could not
	 * be stopped), so memory may be unmapped under it: every read is a copy (ct_reach_copy). */
	int safe;
	/* Set by the caller before any root: whether [lo, hi) is memory no copied read takes a pointer
	 * from (the shim's own, which holds every block's address: a block freed while the scan runs
	 * may have its pages mapped again by the shim, and read there it would reach every block).
	 * Asked of every read through a copy (safe, ct_reach_root_copied); NULL: none. */
	int (*hidden)(uintptr_t lo, uintptr_t hi);
};

/* Copies len bytes at src (this process's memory) to dst, as far as they are mapped and readable,
 * without faulting (process_vm_readv): the bytes copied. errno untouched. */
static inline size_t ct_reach_copy(void *dst, uintptr_t src, size_t len)
{
	int e = errno;
	struct iovec to = {dst, len}, from = {(void *)src, len};
	long n = syscall(SYS_process_vm_readv, getpid(), &to, 1L, &from, 1L, 0L);
	errno = e;
	return n > 0 ? (size_t)n : 0;
}

/* Reads len bytes at src into dst: directly, or (safe: threads of the program run, struct ct_reach's
 * safe) through ct_reach_copy. 1, or 0 when they are gone. */
static inline int ct_reach_read(void *dst, uintptr_t src, size_t len, int safe)
{
	if (!safe) {
		memcpy(dst, (const void *)src, len);
		return 1;
	}
	return ct_reach_copy(dst, src, len) == len;
}
/* Sorts blocks by start, in place (radix sort: no allocation). */
void ct_reach_sort(struct ct_reach_block *blocks, size_t n);
/* The bytes of memory the index of these blocks (sorted) takes. */
size_t ct_reach_index_bytes(const struct ct_reach_block *blocks, size_t n);
/* Starts a scan: every block unreached; the index built when r->index has room for it. */
void ct_reach_begin(struct ct_reach *r);
/* A root range [p, p + len): every aligned word in it is a possible pointer. */
void ct_reach_root(struct ct_reach *r, const void *p, size_t len);
/* The index of the block that holds address p, or -1. */
long ct_reach_block_at(const struct ct_reach *r, uintptr_t p);
/* A root range [p, p + len) read through copies whatever safe says, skipping what r->hidden names:
 * memory that may be gone (a block freed since the caller found it). */
void ct_reach_root_copied(struct ct_reach *r, uintptr_t p, size_t len);
/* One root word (a register's value). */
void ct_reach_root_word(struct ct_reach *r, uintptr_t word);
/* The block that starts at p was freed by the program (its free not matched yet when the live set
 * was taken): it is no leak, and its memory is not read, as it is the allocator's again (unmapped,
 * or mapped again by anyone: by the shim, with every block's address in it). Before the roots, or
 * after them for a free reported while the scan ran. */
void ct_reach_freed(struct ct_reach *r, uintptr_t p);
/* After the roots: lost blocks grouped (definite and indirect), every state final. With r->share,
 * it first waits until the helper has no block left, then tells it to leave (share->done). */
void ct_reach_finish(struct ct_reach *r);
/* On a second thread, while r->share is set and not done: marks the blocks handed over, and hands
 * blocks back when it has many; returns once share->done is set, after which it must not touch r. */
void ct_reach_help(struct ct_reach *r);
/* After finish, for an indirectly lost block i: the definitely lost block that leads its clique. A
 * leader taken into a later clique passes its blocks on; the chain is shortened as it is followed. */
size_t ct_reach_leader(struct ct_reach *r, size_t i);
/* After finish, for a definitely lost block i: the bytes of the indirectly lost blocks of its clique
 * (memcheck's "indirect" figure of a loss record). Goes through every block. */
uint64_t ct_reach_lost_through(struct ct_reach *r, size_t i);

#endif
