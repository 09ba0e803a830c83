/* SPDX-License-Identifier: MIT */
/* Internal interfaces of the shim: the data path hook -> tracker -> ring -> writer -> file.
 * Everything declared here may run inside the program's malloc: no malloc, no stdio, no errno change. */
#ifndef CTRACK_SHIM_H
#define CTRACK_SHIM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CT_MAX_DEPTH 256
#define CT_DEFAULT_DEPTH 64

#define CT_HIDDEN __attribute__((visibility("hidden")))
#define CT_LIKELY(x) __builtin_expect(!!(x), 1)
#define CT_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- hooks.c: the allocator the program would have had without us ---- */
struct ct_real {
	void *(*malloc)(size_t);
	void (*free)(void *);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	size_t (*malloc_usable_size)(void *);
};
extern struct ct_real ct_real CT_HIDDEN;

/* ---- arena.c: the shim's own memory, straight from mmap (zeroed). NULL on failure. ---- */
void *ct_arena_map(size_t size) CT_HIDDEN;
void ct_arena_unmap(void *p, size_t size) CT_HIDDEN;
/* Moves *p (old_bytes in use) to a new mapping of new_bytes. 0, or -1 with *p untouched. */
int ct_arena_grow(void **p, size_t old_bytes, size_t new_bytes) CT_HIDDEN;

/* ---- ring.c: one single-producer single-consumer ring per thread ----
 * The owning thread appends events and publishes them (release) one by one; the writer thread
 * consumes them. Publication order is the hook order, which makes cross-thread address reuse
 * decidable: a free is published before the real free runs, an allocation after the real
 * allocation returns. Rings are never unmapped: a dead thread's ring is recycled. */
#define CT_RING_WORDS (1u << 15) /* 256 KiB */
#define CT_RING_MASK (CT_RING_WORDS - 1)

/* ACTIVE: owned by a live thread; DEAD: its thread exited, the writer drains it; FREE: drained,
 * ready for a new thread; CLAIMED: being handed to a new thread. */
enum ct_ring_state { CT_RING_ACTIVE = 1, CT_RING_DEAD, CT_RING_FREE, CT_RING_CLAIMED };

/* Events in a ring: word 0 is (kind << 56 | address); x86_64 user addresses fit in 56 bits.
 * Every event that changes whether an address is live carries that address's sequence number. */
enum ct_event {
	CT_EV_ALLOC = 1,  /* | kind,ptr | size | stack id | seq << 32 |  a block was allocated */
	CT_EV_FREE = 2,   /* | kind,ptr | seq |   about to be freed */
	CT_EV_RBEGIN = 3, /* | kind,old | seq |   realloc(old, n) starts: old may go away */
	CT_EV_RFAIL = 4,  /* | kind,old | seq |   that realloc failed, old is live again */
	CT_EV_RFREE = 5,  /* | kind,old |         that realloc freed old (n == 0) */
};
#define CT_EV_SHIFT 56
#define CT_EV_PTR(w) ((w) & ((1ull << CT_EV_SHIFT) - 1))
#define CT_EV_KIND(w) ((unsigned)((w) >> CT_EV_SHIFT))

/* Per-address order. Rings are drained one after another, so without help the writer could see
 * thread B's free of p (which ends the block thread C allocated at p after thread A freed it)
 * before A's free. Each address hashes to a counter; every event on the address takes the next
 * number (after the real allocation, before the real free), and the writer applies each
 * counter's events in number order. Coherence of the atomic counter makes the numbers follow
 * the allocator's own order. */
#define CT_SEQ_BITS 16
#define CT_SEQ_BUCKETS (1u << CT_SEQ_BITS)
extern _Atomic uint32_t ct_seq[CT_SEQ_BUCKETS] CT_HIDDEN;

static inline uint32_t ct_seq_bucket(uint64_t p)
{
	return (uint32_t)(((p >> 4) * 0x9E3779B97F4A7C15ull) >> (64 - CT_SEQ_BITS));
}

static inline uint32_t ct_seq_take(uint64_t p)
{
	return atomic_fetch_add_explicit(&ct_seq[ct_seq_bucket(p)], 1, memory_order_relaxed);
}

/* The writer's view of one thread's event stream (writer-private). */
struct ct_stream {
	uint64_t held_ptr;     /* last allocation, not yet written: it may turn out temporary */
	uint64_t held;         /* its block: alloc info, and its ALLOC record's number once written */
	uint64_t pending;      /* block a realloc is replacing, while the realloc runs */
	uint8_t has_held, has_pending, pending_temp;
	uint8_t held_written, pending_written; /* its ALLOC is already in the file (see TEMPFREE) */
};

struct ct_ring {
	_Alignas(64) _Atomic uint64_t head; /* producer: words published */
	_Alignas(64) _Atomic uint64_t tail; /* writer: words consumed */
	_Alignas(64) uint64_t cached_tail;  /* producer's last look at tail */
	int prefetchw;                      /* the CPU has PREFETCHW */
	_Atomic int state;
	pid_t tid;
	struct ct_ring *next; /* all rings, newest first; never unlinked */
	_Alignas(64) struct ct_stream st; /* writer-private from here on, on lines of its own */
	uint8_t announced, blocked;
	_Alignas(64) uint64_t words[CT_RING_WORDS];
};

struct ct_ring *ct_ring_acquire(pid_t tid) CT_HIDDEN; /* NULL if out of memory */
void ct_ring_release(struct ct_ring *r) CT_HIDDEN;    /* the thread exited */
struct ct_ring *ct_ring_list(void) CT_HIDDEN;         /* newest first */
void ct_ring_forget_all(void) CT_HIDDEN;              /* after fork: drop other threads' rings */
void ct_ring_push(struct ct_ring *r, const uint64_t *w, unsigned n) CT_HIDDEN;

/* ---- stacks.c: every distinct backtrace interned once, in a trie of return addresses ----
 * Node ids follow format.h (0 root, 1 truncated root, then one per FRAME record, in order). */
uint32_t ct_stacks_intern(const uintptr_t *ips, int n, int truncated) CT_HIDDEN; /* 0 on failure */
uint32_t ct_stacks_count(void) CT_HIDDEN; /* nodes defined so far (acquire) */
void ct_stacks_node(uint32_t id, uint32_t *parent, uintptr_t *ip) CT_HIDDEN;
/* After dlclose: addresses may now mean another library's code, so later stacks get new nodes
 * (written after the new MODULE record). Existing ids stay valid. */
void ct_stacks_reset_index(void) CT_HIDDEN;
void ct_stacks_lock(void) CT_HIDDEN;   /* around fork */
void ct_stacks_unlock(void) CT_HIDDEN;

/* ---- modules.c: the loaded ELF objects, as MODULE/UNMODULE records ---- */
struct ct_out;
void ct_modules_mark_dirty(void) CT_HIDDEN;              /* a library was unloaded */
int ct_modules_dirty(void) CT_HIDDEN;
void ct_modules_sync(struct ct_out *o) CT_HIDDEN;        /* writes records for what changed */
int ct_modules_covers(uintptr_t ip) CT_HIDDEN;           /* ip inside a module already written */
void ct_modules_reset(void) CT_HIDDEN;                   /* new trace file: all modules unwritten */

/* ---- maps.c: the writer's maps (writer thread only) ---- */
/* Live blocks: address -> value (the writer's block: alloc info id and ALLOC record number). Key 0
 * marks an empty slot. */
struct ct_live_slot {
	uint64_t key, val;
};
struct ct_live_map {
	struct ct_live_slot *slots;
	uint64_t cap, count; /* cap: a power of two */
};
int ct_live_init(struct ct_live_map *m, uint64_t cap) CT_HIDDEN; /* 0 or -1 (no memory) */
uint64_t *ct_live_find(struct ct_live_map *m, uint64_t p) CT_HIDDEN; /* the value, or NULL */
void ct_live_insert(struct ct_live_map *m, uint64_t p, uint64_t v) CT_HIDDEN; /* p not present */
void ct_live_erase(struct ct_live_map *m, uint64_t *val) CT_HIDDEN; /* val from ct_live_find */

/* Alloc infos: (size, stack) -> dense id from 0, in order of first sight. */
struct ct_info_slot {
	uint64_t size;
	uint32_t stack, id1; /* id + 1, 0 = empty */
};
struct ct_info_map {
	struct ct_info_slot *slots;
	uint32_t cap, count;
};
int ct_info_init(struct ct_info_map *m, uint32_t cap) CT_HIDDEN;
/* The id of (size, stack); *is_new = 1 when this call assigned it. */
uint32_t ct_info_intern(struct ct_info_map *m, uint64_t size, uint32_t stack, int *is_new) CT_HIDDEN;

/* ---- output.c: the record buffer ---- */
struct ct_out {
	uint8_t *buf;
	size_t len, cap;
};
int ct_out_reserve(struct ct_out *o, size_t n) CT_HIDDEN; /* room for n more bytes: 0, or -1 */
void ct_out_varint(struct ct_out *o, uint64_t v) CT_HIDDEN;
void ct_out_bytes(struct ct_out *o, const void *p, size_t n) CT_HIDDEN;
void ct_out_string(struct ct_out *o, const void *p, size_t n) CT_HIDDEN;
/* Starts a framed record; ct_out_end_framed fills in its length. Returns the position to pass on. */
size_t ct_out_begin_framed(struct ct_out *o, unsigned tag) CT_HIDDEN;
void ct_out_end_framed(struct ct_out *o, size_t at) CT_HIDDEN;

/* ---- writer.c: the background thread that owns the trace file ---- */

int ct_writer_start(int fd) CT_HIDDEN;     /* 0 or -errno */
void ct_writer_wake(void) CT_HIDDEN;       /* a ring is filling up */
void ct_writer_sync(void) CT_HIDDEN;       /* wait until all published events are written */
void ct_writer_exec(const char *path) CT_HIDDEN; /* sync, EXEC record, flush to the file */
void ct_writer_finish(void) CT_HIDDEN;     /* drain, END record, stop the thread */
void ct_writer_late(const uint64_t *w, unsigned n, struct ct_ring *r) CT_HIDDEN; /* after finish */
void ct_writer_after_fork_child(int fd) CT_HIDDEN; /* fd < 0: the child is not traced */

/* ---- tracker.c: what the hooks call ---- */

/* Where the program called the hook: its return address, stack pointer and frame pointer, read from
 * the hook's own frame (the shim is built with frame pointers). The unwinder starts there. */
struct ct_caller {
	uintptr_t ra, sp, bp;
};
#define CT_CALLER() \
	__extension__({ \
		uintptr_t *fp_ = __builtin_frame_address(0); \
		(struct ct_caller){fp_[1], (uintptr_t)(fp_ + 2), fp_[0]}; \
	})

enum ct_state { CT_UNINIT = 0, CT_ACTIVE, CT_OFF, CT_LATE };
extern _Atomic int ct_state CT_HIDDEN;
extern int ct_depth CT_HIDDEN;

void ct_init(void) CT_HIDDEN;
void ct_track_alloc(void *p, size_t size, const struct ct_caller *c) CT_HIDDEN;
void ct_track_event(enum ct_event kind, void *p) CT_HIDDEN;
void ct_track_before_exec(const char *path) CT_HIDDEN;
void ct_track_before_dlclose(void) CT_HIDDEN;
void ct_track_after_dlclose(void) CT_HIDDEN;
void ct_track_finish(void) CT_HIDDEN;

/* The recursion guard: set while the shim itself runs, so its own allocations (and those of
 * libunwind, libzstd, pthread_create) go straight to the real allocator, uncounted. */
extern __thread int ct_in_shim CT_HIDDEN;

/* Monotonic clock in nanoseconds. */
uint64_t ct_now_ns(void) CT_HIDDEN;

#endif
