/* SPDX-License-Identifier: MIT */
/* The shim's hot path: what the program's threads run inside malloc (hooks -> tracker -> unwind,
 * stacks -> ring). Everything declared here may run inside the program's malloc: no malloc, no
 * stdio, no errno change. The writer thread's side of the shim is in writer.h. */
#ifndef CTRACK_SHIM_H
#define CTRACK_SHIM_H

#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include "arena.h"
#include "event.h"
#include "rules.h"
#include "threadslot.h"

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

/* Stores the next definition of name (after this object) in the function pointer at slot.
 * (ISO C has no cast from dlsym's void * to a function pointer; memcpy is the portable way.) */
static inline void ct_bind_next(void *slot, const char *name)
{
	void *sym = dlsym(RTLD_NEXT, name);
	memcpy(slot, &sym, sizeof(sym));
}

/* ---- the clock: monotonic nanoseconds (clock_gettime is a vDSO call: no system call, no lock) ---- */
static inline uint64_t ct_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- ring.c: one single-producer single-consumer ring per thread ----
 * The owning thread appends events and publishes them (release) one by one; the writer thread
 * consumes them. Publication order is the hook order, which makes cross-thread address reuse
 * decidable: a free is published before the real free runs, an allocation after the real
 * allocation returns. Rings are never unmapped: a dead thread's ring is recycled. */
#define CT_RING_WORDS (1u << 15) /* 256 KiB */
#define CT_RING_MASK (CT_RING_WORDS - 1)
#define CT_RING_CONSUMER_BYTES 1024 /* a drain for each of the matcher's lanes (drain.h) */

/* ACTIVE: owned by a live thread; DEAD: its thread exited, the writer drains it; FREE: drained,
 * ready for a new thread; CLAIMED: being handed to a new thread. */
enum ct_ring_state { CT_RING_ACTIVE = 1, CT_RING_DEAD, CT_RING_FREE, CT_RING_CLAIMED };

struct ct_ring {
	_Alignas(64) _Atomic uint64_t head; /* producer: words published */
	_Alignas(64) _Atomic uint64_t tail; /* writer: words consumed */
	_Alignas(64) uint64_t cached_tail;  /* producer's last look at tail */
	/* The event the producer waits to push (the ring full), on its stack, or NULL: a leak scan
	 * with the thread stopped there takes the free it reports as done (writer.h). */
	_Atomic(const uint64_t *) inflight;
	int prefetchw; /* the CPU has PREFETCHW */
	_Atomic int state;
	pid_t tid;
	struct ct_ring *next; /* all rings, newest first; never unlinked */
	/* The consumer's own state for this ring, opaque here: set up by the consumer on first sight
	 * (consumer_ready), kept (and reset by the consumer) when the ring is recycled. In the ring, so
	 * that reading a ring never waits for memory the consumer might not get. */
	_Alignas(64) unsigned char consumer[CT_RING_CONSUMER_BYTES];
	int consumer_ready;
	_Alignas(64) uint64_t words[CT_RING_WORDS];
};

struct ct_ring *ct_ring_acquire(pid_t tid) CT_HIDDEN; /* NULL if out of memory */
void ct_ring_release(struct ct_ring *r) CT_HIDDEN;    /* the thread exited */
struct ct_ring *ct_ring_list(void) CT_HIDDEN;         /* newest first */
void ct_ring_forget_all(void) CT_HIDDEN;              /* after fork: drop other threads' rings */
/* Appends the n words of one event and publishes them. CT_RING_FULL: nothing was written, the
 * consumer must make room first; CT_RING_NUDGE: written, and the ring is now half full, so the
 * consumer should be woken before the producer has to wait for it; CT_RING_OK: written. */
enum ct_ring_push_result { CT_RING_OK, CT_RING_NUDGE, CT_RING_FULL };
/* Whether n more words fit after head h, the consumer's tail read again (the cached one said no). */
int ct_ring_fits(struct ct_ring *r, uint64_t h, unsigned n) CT_HIDDEN;
/* Inline, for the hooks' one or two calls per event: n is a constant there, so the copy unrolls. */
static inline __attribute__((always_inline)) enum ct_ring_push_result
ct_ring_push(struct ct_ring *r, const uint64_t *w, unsigned n)
{
	uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
	if (CT_UNLIKELY(h + n - r->cached_tail > CT_RING_WORDS) && !ct_ring_fits(r, h, n))
		return CT_RING_FULL;
	/* Ask for the line we write 16 lines from now in exclusive state: the consumer has read it since
	 * it was last written, and waiting for that transfer at store time is the ring's main cost. */
	if (CT_LIKELY(r->prefetchw))
		__asm__ volatile("prefetchw %0" ::"m"(r->words[(h + 128) & CT_RING_MASK]));
	uint64_t at = h & CT_RING_MASK;
	if (CT_LIKELY(at + n <= CT_RING_WORDS)) {
		for (unsigned i = 0; i < n; i++)
			r->words[at + i] = w[i];
	} else {
		for (unsigned i = 0; i < n; i++)
			r->words[(h + i) & CT_RING_MASK] = w[i];
	}
	atomic_store_explicit(&r->head, h + n, memory_order_release);
	/* Crossed a half of the ring: the consumer should run before the producer has to wait. */
	return CT_UNLIKELY(((h + n) & (CT_RING_WORDS / 2 - 1)) < n) ? CT_RING_NUDGE : CT_RING_OK;
}
/* ---- stacks.c: every distinct backtrace interned once, in a trie of return addresses ----
 * Node ids follow format.h (0 root, 1 truncated root, then one per FRAME record, in order). */
uint32_t ct_stacks_intern(const uintptr_t *ips, int n, int truncated) CT_HIDDEN; /* 0 on failure */
/* The same for the writer thread: 0 also when the lock stays taken 100 ms (its holder died). */
uint32_t ct_stacks_intern_patient(const uintptr_t *ips, int n, int truncated) CT_HIDDEN;
uint32_t ct_stacks_count(void) CT_HIDDEN; /* nodes defined so far (acquire) */
void ct_stacks_node(uint32_t id, uint32_t *parent, uintptr_t *ip) CT_HIDDEN;
/* After dlclose: addresses may now mean another library's code, so later stacks get new nodes
 * (written after the new MODULE record). Existing ids stay valid. */
void ct_stacks_reset_index(void) CT_HIDDEN;
void ct_stacks_lock(void) CT_HIDDEN; /* around fork */
void ct_stacks_unlock(void) CT_HIDDEN;

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

/* Things the shim could not record, for the NOTE records the writer adds at the end (it reads
 * them; the hot path only counts). */
struct ct_losses {
	_Atomic uint64_t no_ring;   /* events of threads that could get no ring (out of memory) */
	_Atomic uint64_t no_stack;  /* backtraces the stack table had no room for (kept as the root) */
	_Atomic uint64_t in_signal; /* events of signal handlers that interrupted a report and found
	                               no room to wait in (defer.h): dropped */
	const char *bad_setting;    /* a CTRACK_* value the shim refused, e.g. "CTRACK_DEPTH=1024" */
};
extern struct ct_losses ct_losses CT_HIDDEN;

void ct_init(void) CT_HIDDEN;
/* s: the calling thread's slot (ct_slot()), which the hook looked up. */
void ct_track_alloc(struct ct_slot *s, void *p, size_t size, const struct ct_caller *c) CT_HIDDEN;
/* A free, or a realloc's start or end (CT_EV_FREE, _RBEGIN, _RFAIL, _RFREE); ra: the call's return
 * address into its caller, for FREE and RBEGIN (the place an invalid free is shown at). */
void ct_track_event(enum ct_event kind, void *p, uintptr_t ra) CT_HIDDEN;
/* ct_track_event(CT_EV_FREE, p, ra), for free itself. */
void ct_track_free(struct ct_slot *s, void *p, uintptr_t ra) CT_HIDDEN;
/* The same from a signal handler that interrupted a report of its thread (defer.h): the event
 * waits in the thread's buffer, with its sequence number taken now, for the report to write it
 * (ct_track_deferred). Call them where the reporting ones would be called: an allocation after
 * the real one returned, a free before the real free. No room: the event is counted in
 * ct_losses.in_signal and dropped. A realloc of a block takes a pair: ct_track_defer_pair, then
 * its start (CT_EV_RBEGIN) and its end (ALLOC, RFREE or RFAIL) in the pair's two entries. */
void ct_track_defer_alloc(void *p, size_t size, const struct ct_caller *c) CT_HIDDEN;
void ct_track_defer_event(enum ct_event kind, void *p, uintptr_t ra) CT_HIDDEN;
/* A realloc's pair of entries: its position, or -1 (no room: counted and dropped). */
int64_t ct_track_defer_pair(void) CT_HIDDEN;
void ct_track_defer_start(int64_t pair, void *old, uintptr_t ra) CT_HIDDEN;
void ct_track_defer_end(int64_t pair, void *old, void *p, size_t size, const struct ct_caller *c) CT_HIDDEN;
/* Writes the events that signal handlers left while the calling thread was reporting. With the
 * guard set (hooks.c); ct_defer_pending() says whether there are any. */
void ct_track_deferred(void) CT_HIDDEN;
/* Calls fn with the address of every block that a waiting deferred event ends (its real free may
 * have run), in every thread's buffer: for the leak scan, with the other threads stopped. A thread
 * running on may leave a stale entry: it is only taken as a root. */
void ct_track_each_deferred_end(void (*fn)(uint64_t p, void *arg), void *arg) CT_HIDDEN;
/* Tracing is on and this process owns the trace (not a vfork child or an unfollowed fork). */
int ct_track_owns(void) CT_HIDDEN;
/* Before an exec: 1 when ct_track_exec_failed must follow the exec's return (ct_writer_exec). */
int ct_track_before_exec(const char *path) CT_HIDDEN;
void ct_track_exec_failed(void) CT_HIDDEN;
void ct_track_before_dlclose(void) CT_HIDDEN;
void ct_track_after_dlclose(void) CT_HIDDEN;
/* Finishes the trace (the exit scan, END) once; a thread that calls it while another one finishes
 * it waits until that one is done. */
void ct_track_finish(void) CT_HIDDEN;
/* A thread calls exit(). glibc lets threads exit at once: they share the exit handlers, and the one
 * that finds none left ends the process, though another may still run the last one, where the trace
 * is finished (the shim's destructor): every event since the last flush, the classes and END
 * would be lost. So a thread that calls exit after another one waits until the trace is finished;
 * while no thread has begun to finish it, EXIT_WAIT_MS at most (the first may be waiting for a lock
 * this thread holds: it goes on as without ctrack then). exit from main's return is glibc's own
 * call, out of reach. */
#define EXIT_WAIT_MS 1000
void ct_track_exit_begin(void) CT_HIDDEN;
/* The program's allocation of size bytes failed (hooks.c): when the memory the shim holds might make
 * it succeed, tracing ends with a NOTE and that memory goes back to the system. 1 when the caller
 * should try its allocation again, 0 when nothing changed. */
int ct_track_out_of_memory(size_t size) CT_HIDDEN;
/* From a fatal signal's handler: the trace gets every event published so far, and ends. */
void ct_track_crash(int sig, const void *ucontext) CT_HIDDEN;
/* The main thread calls pthread_exit. */
void ct_track_main_exit(void) CT_HIDDEN;

/* ---- crash.c: the fatal signals the program leaves at their default ---- */
struct sigaction;
void ct_crash_install(void) CT_HIDDEN; /* at start-up: the shim's handler where SIG_DFL is */
/* sigaction as the program must see it: SIG_DFL where the shim's handler stands in for it. */
int ct_crash_sigaction(int sig, const struct sigaction *act, struct sigaction *old) CT_HIDDEN;
/* From a fatal signal's handler: fn(arg), its thread's faults (SIGSEGV, SIGBUS) caught: 0, or -1
 * when fn faulted and was left where it was. */
int ct_crash_guarded(void (*fn)(void *), void *arg) CT_HIDDEN;

/* The recursion guard: set while the shim itself runs, so its own allocations (and those of
 * libzstd, pthread_create) go straight to the real allocator, uncounted. A word of the thread's
 * slot, not a __thread variable: the shim has no thread-local storage (threadslot.h). */
#define ct_in_shim (ct_slot()->in_shim)
/* Its value while a hook reports an event (hooks.c): that code never calls the allocator (the real
 * realloc aside, which never calls the hooks), so a hook that finds exactly this value was entered
 * by a signal handler that interrupted the report; its event is deferred (defer.h). */
#define CT_GUARD_HOOK 0x10000
/* Its value while glibc registers the shim's thread-end handler, or makes a thread of the shim's
 * (tracker.c): the callocs it makes are served from the shim's pool of cells. */
#define CT_GUARD_CELL 0x20000

/* ---- tracker.c: the cells of the thread-end handlers ---- */
#define CT_CELLS_BYTES (1u << 20)
extern uintptr_t ct_cells CT_HIDDEN; /* the pool's address (far above any heap until mapped) */
static inline int ct_is_cell(const void *p)
{
	return (uintptr_t)p - ct_cells < CT_CELLS_BYTES;
}
/* A zeroed piece of size bytes (cells in a row, up to 4 KiB) from the pool (mapped at the first
 * call), or NULL (too big, none left); its size; back to the pool. */
void *ct_track_cell(size_t size) CT_HIDDEN;
size_t ct_track_cell_size(const void *p) CT_HIDDEN;
void ct_track_cell_free(const void *p) CT_HIDDEN;
/* The program found no pthread key left: the shim gives its own back (1), or has none (0). */
int ct_track_give_key(void) CT_HIDDEN;

#endif
