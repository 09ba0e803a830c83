/* SPDX-License-Identifier: MIT */
/* The exported entry points of libctrack.so: each calls the real function and reports to the
 * tracker. The rules that keep the host program safe live here, in one place:
 *  - bootstrap: dlsym() may call calloc/malloc before the real functions are known; those calls
 *    are served from a static pool, never counted, and freeing them is a no-op;
 *  - recursion: ct_in_shim is set while the shim runs, so its own allocations go straight through;
 *  - signal handlers: a hook entered while its thread is reporting (the guard is CT_GUARD_HOOK)
 *    belongs to a handler that interrupted the report; its event waits in the thread's buffer
 *    (defer.h) and the interrupted report writes it before it returns;
 *  - ordering: a free is reported before the real free (the address cannot be reused in between),
 *    an allocation after the real allocation returns;
 *  - errno: the value the real function left is the value the program sees;
 *  - the stack: the frames below a hook's hold copies of the block's address once a report
 *    returns (the real allocator's, the tracker's saved registers); the hook zeroes them, since the
 *    leak scan reads a stopped thread's stack from below its pointer (scrub_dead_frames);
 *  - memory: an allocation that fails for want of memory the shim holds is tried again once the
 *    shim has stopped tracing and given that memory back, so the program gets what it would have
 *    had untraced (a memory limit such as ulimit -v).
 * Nothing here allocates or uses stdio. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "attach.h"
#include "defer.h"
#include "lsan.h"
#include "sample.h"
#include "shim.h"

#define EXPORT __attribute__((visibility("default")))
/* A hook that makes no call but by a jump needs no frame of its own: without one, it reaches the real
 * function in a few instructions, and its return address is found at the stack pointer. (The shim is
 * built with frame pointers, which CT_CALLER() and the walk through the shim's frames use.) */
#define FRAMELESS __attribute__((optimize("omit-frame-pointer")))

struct ct_real ct_real;

/* ---- bootstrap pool ---- */

#define BOOT_SIZE (64 * 1024)
static _Alignas(64) char boot_pool[BOOT_SIZE];
static _Atomic size_t boot_used;

static int is_boot(const void *p)
{
	return (const char *)p >= boot_pool && (const char *)p < boot_pool + BOOT_SIZE;
}

/* Each block is preceded by its size, in the 16 bytes before it. */
static void *boot_alloc(size_t size, size_t align)
{
	if (align < 16)
		align = 16;
	if (size > BOOT_SIZE)
		return NULL;
	size_t need = (size + 16 + align - 1) & ~(align - 1);
	size_t at = atomic_fetch_add(&boot_used, need + align);
	if (at + need + align > BOOT_SIZE)
		return NULL;
	uintptr_t p = ((uintptr_t)boot_pool + at + 16 + align - 1) & ~(uintptr_t)(align - 1);
	((size_t *)p)[-1] = size;
	return (void *)p; /* the pool is zero-initialized and never reused: calloc needs no memset */
}

static size_t boot_size(const void *p)
{
	return ((const size_t *)p)[-1];
}

/* ---- finding the real functions ---- */

static _Atomic int resolve_state; /* 0 not yet, 1 in progress, 2 done */

/* ---- errno without a call ----
 * errno is libc's thread-local variable, in libc's static TLS block (libc is loaded with the
 * program): its address is the thread pointer plus an offset that is the same in every thread.
 * resolve() learns the offset before any hook reports, so the hooks' saves and restores of errno
 * (two an event) skip the call to __errno_location through the PLT. */
static uintptr_t errno_offset;

/* The calling thread's errno. Only once resolve() has returned 1 (in any thread). */
static inline int *errno_at(void)
{
	return (int *)(ct_slot_tp() + errno_offset);
}

static int resolve_slow(void);

/* 1 when ct_real is usable, without resolving: for a hook's fast path, which leaves the rest to the
 * general one. */
static inline int resolved(void)
{
	return atomic_load_explicit(&resolve_state, memory_order_acquire) == 2;
}

/* Returns 1 when ct_real is usable; 0 while dlsym is running (the caller uses the pool). Inline: the
 * first thing every hook does. */
static inline int resolve(void)
{
	return CT_LIKELY(resolved()) ? 1 : resolve_slow();
}

static __attribute__((noinline)) int resolve_slow(void)
{
	int expected = 0;
	if (!atomic_compare_exchange_strong(&resolve_state, &expected, 1))
		return atomic_load(&resolve_state) == 2;
	int saved = errno;
	struct ct_real r;
	ct_bind_next(&r.malloc, "malloc");
	ct_bind_next(&r.free, "free");
	ct_bind_next(&r.calloc, "calloc");
	ct_bind_next(&r.realloc, "realloc");
	ct_bind_next(&r.posix_memalign, "posix_memalign");
	ct_bind_next(&r.aligned_alloc, "aligned_alloc");
	ct_bind_next(&r.memalign, "memalign");
	ct_bind_next(&r.valloc, "valloc");
	ct_bind_next(&r.pvalloc, "pvalloc");
	ct_bind_next(&r.malloc_usable_size, "malloc_usable_size");
	ct_real = r;
	errno = saved;
	errno_offset = (uintptr_t)&errno - ct_slot_tp();
	atomic_store_explicit(&resolve_state, 2, memory_order_release);
	return 1;
}

/* ---- when to track ---- */

enum { TRACK_NO, TRACK_NOW, TRACK_DEFER };

/* TRACK_NOW when this call should be reported (tracing is on, or in its late phase, and the shim
 * is not already running on this thread); TRACK_DEFER when it is a signal handler's, made in the
 * middle of a report of its thread, whose ring and backtrace buffer are in use; TRACK_NO for the
 * shim's own calls. The first call ever starts tracing. slot: the calling thread's (ct_slot()),
 * looked up once per hook and passed down. */
static inline int tracking_on(const struct ct_slot *slot)
{
	int guard = slot->in_shim;
	if (guard)
		return CT_UNLIKELY(guard == CT_GUARD_HOOK) ? TRACK_DEFER : TRACK_NO;
	int s = atomic_load_explicit(&ct_state, memory_order_relaxed);
	if (CT_LIKELY(s == CT_ACTIVE))
		return TRACK_NOW;
	if (s == CT_UNINIT) {
		ct_init();
		s = atomic_load_explicit(&ct_state, memory_order_relaxed);
	}
	return s == CT_ACTIVE || s == CT_LATE ? TRACK_NOW : TRACK_NO;
}

static inline int tracking(void)
{
	return tracking_on(ct_slot());
}

/* A report starts: the guard keeps the shim's own calls out, and tells a signal handler's hook
 * that the thread's ring and buffers are in use. */
static inline void report_begin(struct ct_slot *s)
{
	s->in_shim = CT_GUARD_HOOK;
	atomic_signal_fence(memory_order_seq_cst);
}

/* A report ends: the guard is lifted, then the events that signal handlers deferred meanwhile
 * are written, after the report's own (tracker.c's push_own says why that order is sound), under
 * the guard again, until none is left. Handlers defer only under the guard, so none is left once
 * the buffer is seen empty after the lift; one that comes between the lift and that look reports
 * its events itself, after writing those still waiting that must precede them (push_own). */
static inline void report_end(struct ct_slot *s)
{
	for (;;) {
		atomic_signal_fence(memory_order_seq_cst);
		s->in_shim = 0;
		atomic_signal_fence(memory_order_seq_cst);
		if (CT_LIKELY(!ct_defer_pending(s)))
			return;
		s->in_shim = CT_GUARD_HOOK;
		atomic_signal_fence(memory_order_seq_cst);
		ct_track_deferred();
	}
}

static inline __attribute__((always_inline)) void report_alloc(struct ct_slot *s, void *p, size_t size,
                                                               const struct ct_caller *c, int how)
{
	int *ep = errno_at(), e = *ep;
	if (CT_UNLIKELY(how == TRACK_DEFER)) {
		ct_track_defer_alloc(p, size, c);
	} else {
		report_begin(s);
		ct_track_alloc(s, p, size, c);
		report_end(s);
	}
	if (CT_UNLIKELY(s->lsan_disabled)) /* __lsan_disable: no leak */
		ct_lsan_ignore(p);
	*ep = e;
}

/* A free of p, called at ra (the return address into its caller). */
static inline __attribute__((always_inline)) void report_free(struct ct_slot *s, void *p, uintptr_t ra,
                                                              int how)
{
	int *ep = errno_at(), e = *ep;
	if (CT_UNLIKELY(how == TRACK_DEFER)) {
		ct_track_defer_event(CT_EV_FREE, p, ra);
	} else {
		report_begin(s);
		ct_track_free(s, p, ra);
		report_end(s);
	}
	*ep = e;
}

/* ---- the allocation functions ---- */

/* Zeroes the stack just below the caller's frame, where the dead frames of the real allocator and
 * of the report hold copies of the block's address. The leak scan reads a stopped thread's stack
 * from 128 bytes below its pointer (memcheck's red zone, where a leaf function keeps data): a thread
 * stopped right after malloc returned would otherwise keep a block it lost "still reachable" through
 * the shim's frames. Called by a hook after its report, so its frame lies right below the hook's. */
static __attribute__((noinline)) void scrub_dead_frames(void)
{
	/* The 128 bytes below this leaf function's stack pointer (its red zone, which it may write), in
	 * eight 16-byte stores: with the hook's own frame above, more than the 128 bytes the scan reads.
	 * (A memset of a local array became rep stos: twice the instructions, and slow to start.) */
	__asm__ volatile("pxor %%xmm0, %%xmm0\n\t"
	                 "movups %%xmm0, -16(%%rsp)\n\t"
	                 "movups %%xmm0, -32(%%rsp)\n\t"
	                 "movups %%xmm0, -48(%%rsp)\n\t"
	                 "movups %%xmm0, -64(%%rsp)\n\t"
	                 "movups %%xmm0, -80(%%rsp)\n\t"
	                 "movups %%xmm0, -96(%%rsp)\n\t"
	                 "movups %%xmm0, -112(%%rsp)\n\t"
	                 "movups %%xmm0, -128(%%rsp)"
	                 :
	                 :
	                 : "xmm0", "memory");
}

/* The real allocation of size bytes failed for want of memory: when the shim's own memory might make
 * it succeed, tracing stops and that memory goes back (tracker.c). 1: call again, with errno set back
 * to errno_before (a call that succeeds at once leaves errno alone); 0: the failure stands, errno as
 * the real function left it. */
static int retry_after_oom(size_t size, int errno_before)
{
	if (ct_in_shim || atomic_load_explicit(&ct_state, memory_order_relaxed) != CT_ACTIVE)
		return 0;
	int e = errno;
	ct_in_shim = 1;
	int again = ct_track_out_of_memory(size);
	ct_in_shim = 0;
	errno = again ? errno_before : e;
	return again;
}

#define OUT_OF_MEMORY(p) (CT_UNLIKELY(!(p)) && errno == ENOMEM)

/* The real allocation, tried again after a failure for want of memory the shim holds. A macro, so
 * that call may be any allocation function (it may be evaluated twice). */
#define ALLOCATED(call, size) \
	__extension__({ \
		int e_ = *errno_at(); \
		void *q_ = (call); \
		if (OUT_OF_MEMORY(q_) && retry_after_oom((size), e_)) \
			q_ = (call); \
		q_; \
	})

/* ---- sampling's fast path ----
 * While sampling (sample.h) most allocations are left out, and most frees end a block that was left
 * out. The hooks decide that first and go on to the real function without a report's preparations
 * (the slot's and the guard's checks after the call, the prefetches, the scrub: nothing of the
 * block's address is left in the shim's frames but the real function's, as untraced). */

/* What the countdown says of an allocation of size bytes, before the real call. SAMPLE_SKIP: left
 * out, its bytes taken. SAMPLE_CROSSED: its bytes took the countdown to zero (*n of them): the caller
 * asks ct_sample_cross whether to record it, and records it after the call (CROSSED). The take is
 * one instruction, as after the call (sample.h), so a signal handler's allocation comes wholly
 * before or after it. SAMPLE_GENERAL: nothing taken, the thread is reporting or tracing is not on;
 * TRACKED decides everything, as without sampling. */
enum { SAMPLE_GENERAL, SAMPLE_SKIP, SAMPLE_CROSSED };

static inline int sample_before(size_t size, uint32_t *n)
{
	struct ct_slot *s = ct_slot_at_hash(ct_slot_tp());
	if (CT_UNLIKELY(!s) || CT_UNLIKELY(s->in_shim) ||
	    CT_UNLIKELY(atomic_load_explicit(&ct_state, memory_order_relaxed) != CT_ACTIVE))
		return SAMPLE_GENERAL;
	*n = ct_sample_bytes(size);
	return CT_LIKELY(!ct_sample_take(s, *n)) ? SAMPLE_SKIP : SAMPLE_CROSSED;
}

/* The blocks the countdown left out: out of line, for the FRAMELESS hooks' jump. */
static __attribute__((noinline)) FRAMELESS void *malloc_unrecorded(size_t size)
{
	return ALLOCATED(ct_real.malloc(size), size);
}

/* While sampling, 1 when free(p) is certainly no recorded block's end and needs nothing of the shim
 * but the real free: p is the heap's (neither the bootstrap pool's nor a cell), no
 * __lsan_ignore_object may name it, and the sampled set's filter has no entry where p hashes. */
static inline int sample_skips_free(const void *p)
{
	return ct_sample_unrecorded(p) && CT_LIKELY(!is_boot(p)) && CT_LIKELY(resolved()) &&
	       CT_LIKELY(!ct_is_cell(p)) &&
	       CT_LIKELY(!atomic_load_explicit(&ct_lsan_ignoring, memory_order_relaxed));
}

/* Reports a block the real allocator returned (NULL: nothing happened) and hands it on, when recorded
 * (an expression of the thread's slot s_ and the block p_) says so; called from caller. A macro, so
 * that CT_CALLER() reads the frame of the exported function the program called; call may be
 * evaluated twice (ALLOCATED). */
#define TRACKED_AS(call, size, caller, recorded) \
	__extension__({ \
		void *p_ = ALLOCATED(call, size); \
		int how_; \
		struct ct_slot *s_; \
		if (p_ && (how_ = tracking_on(s_ = ct_slot())) != TRACK_NO && (recorded)) { \
			struct ct_caller c_ = caller; \
			report_alloc(s_, p_, (size), &c_, how_); \
			scrub_dead_frames(); \
		} \
		p_; \
	})

#define TRACKED(call, size) TRACKED_AS(call, size, CT_CALLER(), ct_sample_alloc(s_, p_, (size)))

/* An allocation whose n bytes took the countdown to zero before the call (SAMPLE_CROSSED): recorded
 * when ct_sample_cross says so and the block goes into the set. */
#define CROSSED(call, size, n, caller) \
	(ct_sample_cross(ct_slot(), (n)) ? TRACKED_AS(call, size, caller, ct_sample_enter(s_, p_)) \
	                                 : ALLOCATED(call, size))

/* malloc past sampling's fast path. FRAMELESS malloc jumps here (a sibling call), so that this
 * frame is where the exported function's would be, and CT_CALLER() reads the program's. Were the
 * compiler to make it a call instead, the walk would step through the FRAMELESS frame first and drop
 * it with the shim's other leading frames (unwind.h): the same backtrace, by a slower walk. (Handing
 * the program's frame over in registers instead kept three more words alive across the real call:
 * with UBSan's checks, the block's address was spilled into this frame, where the leak scan later
 * read it below the program's stack pointer and kept a lost block reachable.) */
static __attribute__((noinline)) void *malloc_traced(size_t size)
{
	if (CT_UNLIKELY(!resolve()))
		return boot_alloc(size, 16);
	return TRACKED(ct_real.malloc(size), size);
}

static __attribute__((noinline)) void *malloc_crossed(size_t size, uint32_t n)
{
	return CROSSED(ct_real.malloc(size), size, n, CT_CALLER());
}

EXPORT FRAMELESS void *malloc(size_t size)
{
	if (CT_UNLIKELY(ct_sampler.rate) && CT_LIKELY(resolved())) {
		uint32_t n;
		int v = sample_before(size, &n);
		if (CT_LIKELY(v == SAMPLE_SKIP))
			return malloc_unrecorded(size);
		if (v == SAMPLE_CROSSED)
			return malloc_crossed(size, n);
	}
	return malloc_traced(size);
}

/* free(p) past sampling's fast path, p not NULL, called at ra (the return address into the
 * program). */
static __attribute__((noinline)) void free_traced(void *p, uintptr_t ra)
{
	/* The block's header, which the real free reads, and its address's counter, which the report's
	 * locked add waits for: a block freed long after its allocation has both out of the cache, and
	 * asked for together here the two misses overlap instead of following each other (perl's hash
	 * freed: three quarters of the hook's time was that add). A prefetch never faults. */
	__builtin_prefetch((const char *)p - sizeof(size_t), 1, 3);
	ct_seq_prefetch((uintptr_t)p);
	if (CT_UNLIKELY(is_boot(p)) || CT_UNLIKELY(!resolve()))
		return;
	if (CT_UNLIKELY(ct_is_cell(p))) { /* glibc frees a piece of the shim's (tracker.c) */
		ct_track_cell_free(p);
		return;
	}
	if (CT_UNLIKELY(atomic_load_explicit(&ct_lsan_ignoring, memory_order_relaxed)))
		ct_lsan_forget(p);
	struct ct_slot *s = ct_slot();
	int how = tracking_on(s);
	/* The call site goes with the event: an invalid free gets a place in the program without a walk
	 * of the stack, which would double a free's cost (match.c). */
	if (how != TRACK_NO && ct_sample_free(s, p))
		report_free(s, p, ra, how);
	ct_real.free(p);
}

/* Without a frame (the only calls are jumps): sampling's fast path ends in the real free after a few
 * loads, and ra is read here, at the entry, where the return address is the program's. */
EXPORT FRAMELESS void free(void *p)
{
	/* free(NULL) is no call to note: free_traced is not called either */
	if (CT_UNLIKELY(ct_sampler.rate) && p && sample_skips_free(p)) {
		if (CT_LIKELY(!ct_sample_windows_open())) {
			ct_real.free(p);
			return;
		}
		struct ct_slot *s = ct_slot_at_hash(ct_slot_tp());
		if (CT_LIKELY(s != NULL)) { /* else free_traced ends the window */
			ct_sample_window_end(s, 1);
			ct_real.free(p);
			return;
		}
	}
	if (p)
		free_traced(p, (uintptr_t)__builtin_return_address(0));
}

EXPORT void *calloc(size_t n, size_t m)
{
	size_t total;
	int overflow = __builtin_mul_overflow(n, m, &total);
	if (CT_UNLIKELY(!resolve()))
		return overflow ? NULL : boot_alloc(total, 16);
	if (CT_UNLIKELY(ct_in_shim == CT_GUARD_CELL) && !overflow) { /* glibc's, for the shim */
		void *cell = ct_track_cell(total);
		if (cell)
			return cell;
	}
	size_t size = overflow ? SIZE_MAX : total;
	uint32_t bytes;
	int v = CT_UNLIKELY(ct_sampler.rate) ? sample_before(size, &bytes) : SAMPLE_GENERAL;
	if (CT_LIKELY(v == SAMPLE_GENERAL))
		return TRACKED(ct_real.calloc(n, m), size);
	if (v == SAMPLE_SKIP)
		return ALLOCATED(ct_real.calloc(n, m), size);
	return CROSSED(ct_real.calloc(n, m), size, bytes, CT_CALLER());
}

/* glibc reallocs a piece of the shim's pool of cells (a thread vector of one of the shim's threads,
 * tracker.c): it stays the shim's, in the pool or, too large for it, in the heap untracked. */
static void *realloc_cell(void *old, size_t size)
{
	size_t had = ct_track_cell_size(old);
	void *p = ct_track_cell(size);
	if (!p) {
		ct_in_shim++;
		p = ct_real.malloc(size);
		ct_in_shim--;
	}
	if (p) {
		memcpy(p, old, had < size ? had : size);
		ct_track_cell_free(old);
	}
	return p;
}

/* A block from the bootstrap pool moves to the real heap; the move counts as a new allocation. */
static void *realloc_boot(void *old, size_t size)
{
	void *p = malloc(size);
	if (p) {
		size_t n = boot_size(old);
		memcpy(p, old, n < size ? n : size);
	}
	return p;
}

/* A signal handler's realloc of a block, in the middle of a report of its thread: both events
 * deferred, in a pair of entries claimed before the real call, so that its end always has room.
 * When sampling leaves the new block out, the realloc's end is the old block's (RFREE). */
static void *realloc_deferred(struct ct_slot *s, void *old, size_t size, const struct ct_caller *c)
{
	int e = errno;
	int64_t pair = ct_track_defer_pair();
	if (pair >= 0)
		ct_track_defer_start(pair, old, c->ra);
	errno = e;
	void *p = ct_real.realloc(old, size);
	e = errno;
	int recorded = p && ct_sample_alloc(s, p, size);
	if (pair >= 0)
		ct_track_defer_end(pair, old, p && !recorded ? NULL : p, p && !recorded ? 0 : size, c);
	if (!p && size)
		ct_sample_keep(old); /* live again */
	errno = e;
	return p;
}

/* Sampling, and the old block was not recorded: nothing of it is, and the new block is an allocation
 * like any other, recorded when the sampler chooses it (sample.h). */
static void *realloc_unsampled(struct ct_slot *s, void *old, size_t size, const struct ct_caller *c, int how,
                               int errno_before)
{
	void *p = ct_real.realloc(old, size);
	if (OUT_OF_MEMORY(p) && size && retry_after_oom(size, errno_before))
		p = ct_real.realloc(old, size);
	if (p && ct_sample_alloc(s, p, size))
		report_alloc(s, p, size, c, how);
	return p;
}

/* realloc and reallocarray: the old block is reported before the real call, since the real call
 * may free it and another thread may get the address back before this one reports anything. The
 * report spans the real call: nothing of the thread's own comes between the start and the end in
 * the ring, only the deferred events of signal handlers that ran during the call, where their
 * numbers put them (after the end of a realloc that failed: defer.h). */
static void *realloc_tracked(void *old, size_t size, const struct ct_caller *c)
{
	int e = errno;
	if (!old) {
		void *p = ct_real.realloc(NULL, size);
		if (OUT_OF_MEMORY(p) && retry_after_oom(size, e))
			p = ct_real.realloc(NULL, size);
		int how;
		struct ct_slot *s = ct_slot();
		if (p && (how = tracking_on(s)) != TRACK_NO && ct_sample_alloc(s, p, size))
			report_alloc(s, p, size, c, how);
		return p;
	}
	if (CT_UNLIKELY(atomic_load_explicit(&ct_lsan_ignoring, memory_order_relaxed)))
		ct_lsan_forget(old); /* a new block, ignored only if this thread has the check disabled */
	struct ct_slot *s = ct_slot();
	int how = tracking_on(s);
	if (how == TRACK_NO)
		return ct_real.realloc(old, size);
	if (CT_UNLIKELY(!ct_sample_free(s, old)))
		return realloc_unsampled(s, old, size, c, how, e);
	if (CT_UNLIKELY(how == TRACK_DEFER))
		return realloc_deferred(s, old, size, c);
	report_begin(s);
	ct_track_event(CT_EV_RBEGIN, old, c->ra);
	errno = e;
	void *p = ct_real.realloc(old, size);
	int after = errno;
	if (p && ct_sample_alloc(s, p, size))
		ct_track_alloc(s, p, size, c);
	else if (p) /* sampling left the new block out: the old one ends here */
		ct_track_event(CT_EV_RFREE, old, 0);
	if (p && CT_UNLIKELY(s->lsan_disabled))
		ct_lsan_ignore(p);
	if (!p)
		/* the old block is freed, or live again */
		ct_track_event(size == 0 ? CT_EV_RFREE : CT_EV_RFAIL, old, 0);
	if (!p && size)
		ct_sample_keep(old);
	report_end(s);
	errno = after;
	if (!p && size && after == ENOMEM && retry_after_oom(size, e))
		p = ct_real.realloc(old, size); /* untraced now */
	return p;
}

EXPORT void *realloc(void *old, size_t size)
{
	/* Sampling, and the old block was not recorded: the realloc is an allocation like any other
	 * (realloc_unsampled), decided before the call. (A size of 0 frees: the general path, which
	 * never retries it.) */
	uint32_t n;
	int v = CT_UNLIKELY(ct_sampler.rate) && size && sample_skips_free(old) ? sample_before(size, &n)
	                                                                       : SAMPLE_GENERAL;
	if (v == SAMPLE_SKIP)
		return ALLOCATED(ct_real.realloc(old, size), size);
	if (v == SAMPLE_CROSSED)
		return CROSSED(ct_real.realloc(old, size), size, n, CT_CALLER());
	if (CT_UNLIKELY(!resolve()))
		return old ? NULL : boot_alloc(size, 16);
	if (CT_UNLIKELY(is_boot(old)))
		return realloc_boot(old, size);
	if (CT_UNLIKELY(ct_is_cell(old)))
		return realloc_cell(old, size);
	struct ct_caller c = CT_CALLER();
	void *p = realloc_tracked(old, size, &c);
	scrub_dead_frames();
	return p;
}

EXPORT void *reallocarray(void *old, size_t n, size_t m)
{
	size_t size;
	if (CT_UNLIKELY(!resolve()))
		return NULL;
	if (__builtin_mul_overflow(n, m, &size)) {
		errno = ENOMEM; /* what glibc does, and the block stays as it was */
		return NULL;
	}
	if (CT_UNLIKELY(is_boot(old)))
		return realloc_boot(old, size);
	/* glibc's reallocarray is realloc behind an overflow check, and calls realloc through the
	 * PLT (that is, us): calling it would count the call twice. */
	struct ct_caller c = CT_CALLER();
	void *p = realloc_tracked(old, size, &c);
	scrub_dead_frames();
	return p;
}

EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	if (CT_UNLIKELY(!resolve())) {
		*out = boot_alloc(size, align);
		return *out ? 0 : ENOMEM;
	}
	int e = errno;
	int rc = ct_real.posix_memalign(out, align, size);
	int how;
	if (rc == ENOMEM && retry_after_oom(size, e))
		rc = ct_real.posix_memalign(out, align, size);
	struct ct_slot *s = ct_slot();
	if (rc == 0 && (how = tracking_on(s)) != TRACK_NO && ct_sample_alloc(s, *out, size)) {
		struct ct_caller c = CT_CALLER();
		report_alloc(s, *out, size, &c, how);
		scrub_dead_frames();
	}
	return rc;
}

EXPORT void *aligned_alloc(size_t align, size_t size)
{
	if (CT_UNLIKELY(!resolve()))
		return boot_alloc(size, align);
	return TRACKED(ct_real.aligned_alloc(align, size), size);
}

EXPORT void *memalign(size_t align, size_t size)
{
	if (CT_UNLIKELY(!resolve()))
		return boot_alloc(size, align);
	return TRACKED(ct_real.memalign(align, size), size);
}

EXPORT void *valloc(size_t size)
{
	if (CT_UNLIKELY(!resolve()))
		return boot_alloc(size, 4096);
	return TRACKED(ct_real.valloc(size), size);
}

EXPORT void *pvalloc(size_t size)
{
	if (CT_UNLIKELY(!resolve()))
		return boot_alloc(size, 4096);
	return TRACKED(ct_real.pvalloc(size), size);
}

EXPORT size_t malloc_usable_size(void *p)
{
	if (!p)
		return 0;
	if (is_boot(p))
		return boot_size(p);
	if (CT_UNLIKELY(!resolve()))
		return 0;
	return ct_real.malloc_usable_size(p);
}

/* ---- process and library life cycle ---- */

/* 1 when after_exec must follow the exec's return: no leak scan runs meanwhile (writer.h). */
static int before_exec(const char *path)
{
	int held = 0;
	if (!ct_in_shim && atomic_load(&ct_state) == CT_ACTIVE) {
		int e = errno;
		ct_in_shim = 1;
		held = ct_track_before_exec(path);
		ct_in_shim = 0;
		errno = e;
	}
	return held;
}

/* The exec failed (rc, with errno): scans may run again. */
static int after_exec(int held, int rc)
{
	if (held) {
		int e = errno;
		ct_track_exec_failed();
		errno = e;
	}
	return rc;
}

#define EXEC_HOOK(name, params, args, first) \
	EXPORT int name params \
	{ \
		static int(*real) params; \
		if (!real) \
			ct_bind_next(&real, #name); \
		int held = before_exec(first); \
		if (!real) { \
			errno = ENOSYS; \
			return after_exec(held, -1); \
		} \
		return after_exec(held, real args); \
	}

EXEC_HOOK(execve, (const char *path, char *const argv[], char *const envp[]), (path, argv, envp), path)
EXEC_HOOK(execv, (const char *path, char *const argv[]), (path, argv), path)
EXEC_HOOK(execvp, (const char *file, char *const argv[]), (file, argv), file)
EXEC_HOOK(execvpe, (const char *file, char *const argv[], char *const envp[]), (file, argv, envp), file)
EXEC_HOOK(execveat, (int dirfd, const char *path, char *const argv[], char *const envp[], int flags),
          (dirfd, path, argv, envp, flags), path)
EXEC_HOOK(fexecve, (int fd, char *const argv[], char *const envp[]), (fd, argv, envp), "(fexecve)")

/* execl, execle and execlp take their arguments as a list, which glibc turns into an argv and hands
 * to its internal execve, out of the hooks' reach: the list is turned into an argv here (on the
 * stack, as glibc does) and goes through the hooks above, by their own addresses (attach.h: in a
 * shim that gdb dlopened, a reference to execve binds to libc's). */

/* The list's length after its first argument, up to its NULL. */
static size_t list_length(va_list ap)
{
	size_t n = 0;
	while (va_arg(ap, char *))
		n++;
	return n;
}

/* argv[0] = first, then the n pointers of the list and its NULL. */
static void list_argv(char **argv, const char *first, size_t n, va_list *ap)
{
	argv[0] = (char *)first;
	for (size_t i = 1; i <= n + 1; i++)
		argv[i] = va_arg(*ap, char *);
}

/* Declares argv, the list that starts at arg, with ap left after its NULL (va_end is the caller's).
 * A macro: the array lives in the exported function's frame, and va_start needs its last parameter. */
#define LIST_ARGV(argv, ap, arg) \
	va_start(ap, arg); \
	size_t argv##_n = list_length(ap); \
	va_end(ap); \
	char *argv[argv##_n + 2]; \
	va_start(ap, arg); \
	list_argv(argv, arg, argv##_n, &ap)

EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	LIST_ARGV(argv, ap, arg);
	va_end(ap);
	return ct_hook_execve(path, argv, environ);
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	LIST_ARGV(argv, ap, arg);
	va_end(ap);
	return ct_hook_execvp(file, argv);
}

/* The environment follows the list's NULL. */
EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	LIST_ARGV(argv, ap, arg);
	char *const *envp = va_arg(ap, char *const *);
	va_end(ap);
	return ct_hook_execve(path, argv, envp);
}

EXPORT int dlclose(void *handle)
{
	static int (*real)(void *);
	if (!real)
		ct_bind_next(&real, "dlclose");
	int tracked = !ct_in_shim && atomic_load(&ct_state) == CT_ACTIVE;
	if (tracked) {
		ct_in_shim = 1;
		ct_track_before_dlclose();
		ct_in_shim = 0;
	}
	int rc = real ? real(handle) : -1;
	if (tracked) {
		int e = errno;
		ct_in_shim = 1;
		ct_track_after_dlclose();
		ct_in_shim = 0;
		errno = e;
	}
	return rc;
}

/* _exit skips destructors: finish the trace here, or it would end without its END record. */
static _Noreturn void exit_now(const char *name, int status)
{
	int tracked = !ct_in_shim && atomic_load(&ct_state) == CT_ACTIVE;
	void (*real)(int);
	ct_in_shim++;
	ct_bind_next(&real, name); /* first: after the trace's end, dlsym's own frees would be counted */
	if (tracked)
		ct_track_finish();
	if (real)
		real(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

EXPORT void _exit(int status)
{
	exit_now("_exit", status);
}

EXPORT _Noreturn void exit(int status)
{
	static void (*real)(int);
	if (!real) {
		ct_in_shim++;
		ct_bind_next(&real, "exit");
		ct_in_shim--;
	}
	if (!ct_in_shim)
		ct_track_exit_begin();
	if (real)
		real(status);
	for (;;)
		syscall(SYS_exit_group, status);
}
EXPORT void _Exit(int status)
{
	exit_now("_Exit", status);
}

/* glibc ends the process when its last thread ends: the writer must know when main has gone. */
EXPORT _Noreturn void pthread_exit(void *value)
{
	void (*real)(void *);
	ct_in_shim++;
	ct_bind_next(&real, "pthread_exit");
	ct_track_main_exit();
	ct_in_shim--;
	if (real)
		real(value);
	for (;;)
		syscall(SYS_exit, 0);
}

/* The program's keys are all its own: when none is left, the shim gives back the one it holds. */
EXPORT int pthread_key_create(pthread_key_t *key, void (*destructor)(void *))
{
	static int (*real)(pthread_key_t *, void (*)(void *));
	if (!real)
		ct_bind_next(&real, "pthread_key_create");
	if (!real)
		return ENOSYS;
	int rc = real(key, destructor);
	if (rc == EAGAIN && !ct_in_shim && ct_track_give_key())
		rc = real(key, destructor);
	return rc;
}

/* ---- signal dispositions: the program sees its own (crash.c) ---- */

EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return ct_crash_sigaction(sig, act, old);
}

/* The System V and BSD signal calls, built here as glibc builds them (sysdeps/posix: signal.c,
 * sysv_signal.c, sigset.c, sigignore.c, siginterrupt.c), on the sigaction above: glibc's own call
 * their internal sigaction, past the hook, so a program that used them would get the shim's handler
 * back as its "previous disposition", see SIG_DFL where it had set its own, and, setting SIG_DFL,
 * take away the handler that completes the trace of a crash. Same flags, masks, checks, errno and
 * return values as glibc's; the signal mask is changed with sigprocmask, as glibc does. */

/* The signals siginterrupt made interrupting: signal() installs their handlers without SA_RESTART
 * (glibc's _sigintr, which its own siginterrupt would set out of the shim's sight). */
static sigset_t interrupting;

static sighandler_t set_handler(int sig, sighandler_t handler, int flags, int block_self)
{
	struct sigaction act = {.sa_handler = handler, .sa_flags = flags}, old;
	sigemptyset(&act.sa_mask);
	if (handler == SIG_ERR || sig <= 0 || sig >= NSIG) {
		errno = EINVAL;
		return SIG_ERR;
	}
	if (block_self)
		sigaddset(&act.sa_mask, sig);
	return sigaction(sig, &act, &old) == 0 ? old.sa_handler : SIG_ERR;
}

static sighandler_t bsd_handler(int sig, sighandler_t handler)
{
	int restart = sig > 0 && sig < NSIG && sigismember(&interrupting, sig) != 1;
	return set_handler(sig, handler, restart ? SA_RESTART : 0, 1);
}

EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	return bsd_handler(sig, handler);
}
EXPORT sighandler_t bsd_signal(int sig, sighandler_t handler)
{
	return bsd_handler(sig, handler);
}
EXPORT sighandler_t ssignal(int sig, sighandler_t handler)
{
	return bsd_handler(sig, handler);
}

/* One-shot, not masked while it runs; SA_INTERRUPT is Linux's historical no-op, passed as glibc does. */
#define SYSV_FLAGS (SA_RESETHAND | SA_NODEFER | SA_INTERRUPT)

EXPORT sighandler_t sysv_signal(int sig, sighandler_t handler)
{
	return set_handler(sig, handler, SYSV_FLAGS, 0);
}
/* What `signal` is in a program built without _DEFAULT_SOURCE (-std=c99): glibc's headers send it
 * here. */
EXPORT sighandler_t __sysv_signal(int sig, sighandler_t handler)
{
	return set_handler(sig, handler, SYSV_FLAGS, 0);
}

/* SIG_HOLD blocks the signal and leaves its disposition; any other disposition is set (no flags,
 * an empty mask) and the signal unblocked. Returns SIG_HOLD when the signal was blocked before,
 * else the previous disposition. */
EXPORT sighandler_t sigset(int sig, sighandler_t disp)
{
	struct sigaction act = {.sa_handler = disp, .sa_flags = 0}, old;
	sigset_t set, was;
	sigemptyset(&set);
	if (sigaddset(&set, sig) < 0)
		return SIG_ERR;
	if (disp == SIG_HOLD) {
		if (sigprocmask(SIG_BLOCK, &set, &was) < 0)
			return SIG_ERR;
		if (sigismember(&was, sig))
			return SIG_HOLD;
		return sigaction(sig, NULL, &old) < 0 ? SIG_ERR : old.sa_handler;
	}
	sigemptyset(&act.sa_mask);
	if (sigaction(sig, &act, &old) < 0 || sigprocmask(SIG_UNBLOCK, &set, &was) < 0)
		return SIG_ERR;
	return sigismember(&was, sig) ? SIG_HOLD : old.sa_handler;
}

EXPORT int sigignore(int sig)
{
	struct sigaction act = {.sa_handler = SIG_IGN, .sa_flags = 0};
	sigemptyset(&act.sa_mask);
	return sigaction(sig, &act, NULL);
}

EXPORT int siginterrupt(int sig, int interrupt)
{
	struct sigaction act;
	if (sigaction(sig, NULL, &act) < 0)
		return -1;
	if (interrupt) {
		sigaddset(&interrupting, sig);
		act.sa_flags &= ~SA_RESTART;
	} else {
		sigdelset(&interrupting, sig);
		act.sa_flags |= SA_RESTART;
	}
	return sigaction(sig, &act, NULL);
}

/* ---- attach mode (attach.c): the entry points by their own addresses, for the GOT entries it
 * rewrites (a reference to `malloc` inside the shim binds to libc's when gdb dlopened it) ---- */
#define HOOK_ADDRESS(name) \
	extern __typeof(name) ct_hook_##name __attribute__((alias(#name), copy(name), visibility("hidden")));
HOOK_ADDRESS(malloc)
HOOK_ADDRESS(free)
HOOK_ADDRESS(calloc)
HOOK_ADDRESS(realloc)
HOOK_ADDRESS(reallocarray)
HOOK_ADDRESS(posix_memalign)
HOOK_ADDRESS(aligned_alloc)
HOOK_ADDRESS(memalign)
HOOK_ADDRESS(valloc)
HOOK_ADDRESS(pvalloc)
HOOK_ADDRESS(malloc_usable_size)
HOOK_ADDRESS(dlclose)
HOOK_ADDRESS(exit)
HOOK_ADDRESS(_exit)
HOOK_ADDRESS(_Exit)
HOOK_ADDRESS(execve)
HOOK_ADDRESS(execv)
HOOK_ADDRESS(execvp)
HOOK_ADDRESS(execvpe)
HOOK_ADDRESS(execveat)
HOOK_ADDRESS(fexecve)
HOOK_ADDRESS(execl)
HOOK_ADDRESS(execle)
HOOK_ADDRESS(execlp)
