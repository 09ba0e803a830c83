/* SPDX-License-Identifier: MIT */
/* The shim's per-thread words without thread-local storage: a table keyed by the thread pointer.
 * A shim with a PT_TLS segment makes glibc size every thread's TLS vector (calloc'ed in the
 * program's name) one module larger: the shim would change what the program allocates.
 *
 * Contract: ct_slot() returns the calling thread's slot, claimed on its first call, zero-filled
 * then; never NULL (a thread that finds every table full and no memory for another gets a shared
 * slot that keeps the shim out of it). It works wherever the thread pointer is set: before libc is
 * initialized, in hooks that ld.so calls while it creates or ends a thread, in signal handlers (a handler
 * that interrupts the thread's first claim finds or claims the same slot), after fork. No lock, no malloc,
 * errno untouched. Only the owning thread (and its signal handlers) touches its slot's fields; a slot lives
 * until ct_slot_release() at the thread's end, or ct_slot_after_fork(). */
#ifndef CTRACK_THREADSLOT_H
#define CTRACK_THREADSLOT_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

struct ct_thread;
struct ct_unwind_state;

/* Per thread: each module's words, zero when the slot is claimed. */
struct ct_slot {
	_Alignas(64) _Atomic uintptr_t owner; /* the owner's thread pointer; 0 never used, 1 free */
	int in_shim;                          /* hooks.c: the recursion guard */
	struct {                              /* unwind.c: */
		int depth;                    /* walks in progress on the thread */
		uint8_t shared;               /* see ct_unwind_shared (at most the memo's 64 frames) */
		uint8_t memo_current, memo_was_current;
		unsigned cuts; /* walks cut short (the unit tests read it) */
	} walk;
	/* sample.h: the thread's last recorded event is an allocation, and it has freed nothing since
	 * (sample_window), when its countdown was sample_mark (an allocation since moved it); it made a
	 * call sampling left out since its last recorded event (sample_gap, taken by the next: CT_EV_GAP) */
	uint8_t sample_window, sample_gap;
	uint32_t sample_mark;
	struct ct_thread *thread;       /* tracker.c: the thread's ring and caches */
	struct ct_unwind_state *unwind; /* unwind.c: the thread's rule cache and memo */
	struct {                        /* defer.c: positions in the thread's deferred events */
		_Atomic uint32_t tail;  /* claimed by signal handlers (compare-and-swap: they nest) */
		uint32_t head;          /* the first not yet written, moved by the report they wait for */
	} defer;
	int lsan_disabled;    /* lsan.c: __lsan_disable calls not yet enabled again */
	uint32_t sample_left; /* sample.c: bytes to the thread's next sampled allocation (0: not drawn) */
	/* The second cache line: words no allocation or free reads. */
	/* epollwait.c: the timed epoll wait the thread is in, its end (CLOCK_MONOTONIC nanoseconds, 0:
	 * none; CT_EPOLL_PENDING: an epoll_pwait2's, begun + its timespec, read at its first stop) and the
	 * timeout argument passed on (epoll_pwait2's: the timespec's address; `left` once restarted) */
	_Alignas(64) struct {
		uint64_t deadline;
		uintptr_t arg;
		uint64_t begun;
		struct timespec left;
	} epoll;
};
_Static_assert(sizeof(struct ct_slot) == 128, "two cache lines per thread, the first the hooks'");

#define CT_SLOT_BITS 12
#define CT_SLOT_COUNT (1u << CT_SLOT_BITS) /* per table; more tables are mapped when one is full */

extern struct ct_slot ct_slot_table[CT_SLOT_COUNT] __attribute__((visibility("hidden")));

/* The slow path of ct_slot(): the probe past the first slot, and the claim. */
struct ct_slot *ct_slot_find(uintptr_t tp) __attribute__((visibility("hidden")));
/* The slot the thread whose thread pointer is tp has claimed, or NULL: no claim (another thread's
 * slot, looked up while that thread is stopped). */
struct ct_slot *ct_slot_lookup(uintptr_t tp) __attribute__((visibility("hidden")));
/* The calling thread ends: its slot is emptied and freed, when nothing is left in it (the owner's
 * modules cleared their words). A hook that runs later in the same thread claims a new one. */
void ct_slot_release(void) __attribute__((visibility("hidden")));
/* In a fork child (one thread): every slot but the caller's is freed, emptied. */
void ct_slot_after_fork(void) __attribute__((visibility("hidden")));
/* Calls fn(slot, arg) with every claimed slot, other threads' included: fn may write only a word
 * that no owner is using meanwhile (the caller says why; sample.c's countdowns while no hook
 * samples). */
void ct_slot_each(void (*fn)(struct ct_slot *, void *), void *arg) __attribute__((visibility("hidden")));

/* x86_64: the TCB's first word points to itself (the TLS ABI); glibc's struct pthread begins
 * there, so it is unique among live threads and constant for a thread's life. */
static inline uintptr_t ct_slot_tp(void)
{
	return (uintptr_t)__builtin_thread_pointer();
}

static inline uint32_t ct_slot_hash(uintptr_t tp)
{
	return (uint32_t)(((tp >> 6) * 0x9E3779B97F4A7C15ull) >> (64 - CT_SLOT_BITS));
}

/* The slot of the thread whose thread pointer is tp when it is the one tp hashes to, else NULL: no
 * call (a frameless hook's fast path takes its general path then). */
static inline struct ct_slot *ct_slot_at_hash(uintptr_t tp)
{
	struct ct_slot *s = &ct_slot_table[ct_slot_hash(tp)];
	if (__builtin_expect(atomic_load_explicit(&s->owner, memory_order_relaxed) == tp, 1))
		return s;
	return NULL;
}

/* The hot path: one load of the thread pointer, one of the slot it hashes to. */
static inline struct ct_slot *ct_slot(void)
{
	uintptr_t tp = ct_slot_tp();
	struct ct_slot *s = ct_slot_at_hash(tp);
	if (__builtin_expect(s != NULL, 1))
		return s;
	return ct_slot_find(tp);
}

#endif
