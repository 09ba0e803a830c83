/* SPDX-License-Identifier: MIT */
/* Fast backtraces from CFI rules cached per return address, plus a memo of the thread's last walk;
 * signal frames stepped through the kernel's ucontext. No malloc, no lock when warm, errno kept. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ucontext.h>
#include <unistd.h>

#include "arena.h"
#include "cfi.h"
#include "cfirows.h"
#include "procmaps.h"
#include "rules.h"
#include "threadslot.h"
#include "unwind.h"

/* Rules are cfi.h's, cached per ip, plus two kinds of the walker's own. RULE_FP: code with no
 * unwind information at all (JIT code, V8's builtins, hand-written assembly): a frame-pointer
 * frame is assumed (CFA = RBP+16, RBP saved at CFA-16), as perf and libunwind do, but stepped
 * only while every word it reads lies in the thread's stack, where RBP may hold anything.
 * RULE_FP_ANON: the same for code outside every module, never cached: a library loaded later may
 * be mapped where that code was. */
enum { RULE_FP = CT_CFI_KINDS, RULE_FP_ANON };

/* Linux's x86_64 signal trampoline (glibc's __restore_rt, the sa_restorer the kernel returns to):
 * mov $15, %rax; syscall (rt_sigreturn). Its CFI says 'S'; the bytes are checked as well, since
 * the register layout below is this trampoline's: at the stack pointer of its frame lies the
 * ucontext_t of the interrupted code. */
static const unsigned char restorer[9] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};

/* The rule cache: 4096 entries in sets of two (the newest rule first), 64 KiB a thread. cc1's walks
 * meet some 7,400 return addresses: 1024 direct-mapped entries missed on a third of its walks (git's
 * 630 on one in seven, by conflict), and a miss runs a binary search and a CFA program (2,000-6,000
 * instructions). */
#define CACHE_BITS 12
#define CACHE_SIZE (1u << CACHE_BITS)
/* The big rule cache behind it, for the threads that miss it often: cc1 meets 6,600 return
 * addresses, and 4096 entries missed 12,700 times, each miss a binary search and a CFA program run
 * from the function's start (3,600 instructions each, most of them cache misses into .eh_frame).
 * A thread maps it (256 KiB) after BIG_AFTER misses; every rule computed after that goes into both,
 * and a hit in the big one comes back into the small one. */
#define BIG_BITS 14
#define BIG_SIZE (1u << BIG_BITS)
#define BIG_AFTER CACHE_SIZE
#define HOT_BITS 9
#define HOT_SIZE (1u << HOT_BITS)
/* The bytes below RSP that signal delivery leaves alone (the x86_64 ABI's red zone). */
#define RED_ZONE 128
/* A step that moves the stack pointer further than this is taken as a corrupt frame. */
#define MAX_FRAME_SPAN ((uintptr_t)64 << 20)

struct entry {
	uintptr_t ip; /* 0 = empty or being written */
	struct ct_cfi_rule rule;
};

static _Atomic unsigned generation;
/* The thread's words are in its slot (threadslot.h: the shim has no thread-local storage):
 * walk.depth   walks in progress: a nested one (signal handler) reads the cache, never writes;
 * walk.shared  how many outer frames the last walk took from the memo (ct_unwind_shared), known
 *              only when the memo described the walk before: a walk cut at max, cut short or
 *              through a signal frame leaves the memo of an older one (memo_current 0);
 * walk.cuts    walks cut short at a frame no rule steps (read by the unit tests);
 * unwind       the rule cache and memo below. */
/* Walks cut short in all threads, for the trace's note. */
static _Atomic unsigned long all_cuts;

/* The previous walk of the thread, reused when the next one ends the same way (see walk()). */
#define MEMO_FRAMES 64
/* Replays (ct_unwind_replay): a thread's walks kept by their first frame, and the stack words each
 * read. A walk that read more is not kept: its check would cost a good part of a walk. */
#define REPLAY_BITS 7
#define REPLAYS (1u << REPLAY_BITS)
#define REPLAY_WORDS 28
/* A first frame whose walks differed from the kept one twice in a row (cc1: the same allocator's frame
 * at the same depth under many callers) is checked and kept again only every REPLAY_RETRY walks: a
 * failed check and a new copy cost more than its walk saves. */
#define REPLAY_RETRY 64

/* A frame of the walk in progress. */
struct fresh_frame {
	uintptr_t ip, sp, bp;
	uintptr_t rbp_slot; /* where the step to the caller's frame read RBP, 0 = kept */
	unsigned flags;
};

/* A frame of the memo: the same, but for the RBP its caller's frame depends on, bp_at points to
 * the stack word it was read from, or to the caller's memo frame's own bp when it does not matter
 * or was kept: either way the word must still equal the caller's bp. So checking a frame never
 * branches on its kind. */
struct memo_frame {
	uintptr_t ip, sp, bp;
	const uintptr_t *bp_at;
	unsigned flags;
};

enum { MEMO_CFA_RBP = 1, MEMO_KEEPS_RBP = 2, MEMO_NEEDS_BP = 4 };

_Static_assert(sizeof(struct fresh_frame) == sizeof(struct memo_frame) &&
                   offsetof(struct fresh_frame, ip) == offsetof(struct memo_frame, ip) &&
                   offsetof(struct fresh_frame, sp) == offsetof(struct memo_frame, sp) &&
                   offsetof(struct fresh_frame, bp) == offsetof(struct memo_frame, bp) &&
                   offsetof(struct fresh_frame, flags) == offsetof(struct memo_frame, flags),
               "memo_store copies a fresh frame's bytes into a memo frame");

/* A walk kept for a replay: its first frame (ip, sp, and bp when the walk depends on it), how many
 * frames it had, and the stack words it read (return addresses, saved RBPs that mattered) with their
 * values then. The tag is its caller's (ct_unwind_keep); gen the rule cache's generation; misses the
 * walks from that frame since one was this walk again (REPLAY_RETRY). ip is 0 while the entry is
 * written. */
struct replay {
	uintptr_t ip, sp, bp;
	uint64_t tag;
	unsigned gen, misses;
	int needs_bp, frames, words;
	struct {
		uintptr_t at, value;
	} word[REPLAY_WORDS];
};

/* A thread's rule cache, memo and replays: mapped on its first walk (about 140 KiB, of which a
 * thread touches the pages it uses: threads that never allocate pay nothing). The memo is kept outermost
 * frame first, so that a walk which ends like the previous one writes only its own inner frames: the outer
 * ones are already in place. */
struct ct_unwind_state {
	unsigned cache_generation;
	int memo_n; /* memo[0] the outermost frame, memo[memo_n - 1] the innermost */
	/* The memo (memo_of()) after a sentinel frame: its sp, UINTPTR_MAX (set when the state is
	 * mapped), ends the search for a frame's depth, which needs no bound then. */
	struct memo_frame memo_[1 + MEMO_FRAMES];
	/* The walk's frames until it meets the memo, innermost first. */
	struct fresh_frame fresh[MEMO_FRAMES];
	/* Set when the thread's walk in progress (its outermost one) stepped a frame through an
	 * RBP-based CFA: without one, memo_store() computes no RBP dependencies. It may be set by a
	 * frame that was not recorded in the end (its step failed): memo_store then takes the long way. */
	int fresh_rbp;
	/* The hot rules: a direct-mapped copy of rules of the cache below, which the common loop
	 * (rule_word_for) reads first. The cache's 64 KiB are more than L1 holds beside the program's
	 * data, so its sets are mostly L2 reads; the few hundred return addresses a program's usual
	 * walks step through fit here (8 KiB). A rule never changes for its ip within a generation, so
	 * a copy is never stale; only the outermost walk reads and writes it. */
	_Alignas(64) struct entry hot[HOT_SIZE];
	_Alignas(64) struct entry cache[CACHE_SIZE]; /* a set within one cache line */
	struct entry *big;    /* BIG_SIZE entries in sets of two, NULL until mapped; only the outermost walk
	                       * maps, unmaps or writes it */
	unsigned misses;      /* rule_miss's computations, until big is mapped */
	unsigned memo_stores; /* memo_store()s so far: a replay kept while a handler's walk stored is not */
	/* The replays' first frames, hashed (replay_key): read first, so that a walk no replay can stand
	 * for costs one load of these 1 KiB, not a miss in the 64 KiB of replays; and a walk is kept only
	 * when its first frame was seen before (its key is here), so that walks made once write none. */
	uint64_t replay_key[REPLAYS];
	struct replay replay[REPLAYS];
	uintptr_t stack_lo, stack_hi; /* the mapping that held the stack pointer when last looked up */
	int no_maps;                  /* /proc/self/maps could not be read: not tried again */
	/* Where the outermost walk makes an FDE's row table (cfirows.h); its pages are touched only by
	 * the largest functions. */
	struct ct_cfi_row rows[CT_CFIROWS_SCRATCH];
};

static _Atomic uintptr_t self_lo, self_hi;

static inline struct memo_frame *memo_of(struct ct_unwind_state *st)
{
	return st->memo_ + 1;
}

/* Whether a signal trampoline's FDE covers the code at ip, in the module [lo, hi), is Linux's: ip is
 * the byte before it (a return address, less one: glibc's FDE starts with a nop for that), its
 * first instruction or its syscall (an exact ip, in a frame a signal interrupted). */
static int is_restorer(uintptr_t ip, uintptr_t lo, uintptr_t hi)
{
	static const int starts[] = {1, 0, -7};

	for (size_t i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
		uintptr_t p = ip + (uintptr_t)(intptr_t)starts[i];
		if (p >= lo && p <= hi - sizeof(restorer) &&
		    !memcmp((const void *)p, restorer, sizeof(restorer)))
			return 1;
	}
	return 0;
}

/* Whether ip, which no FDE covers, is the byte before one's first: the call a return address there
 * would follow is not there, so the address was planted as a context's first frame (makecontext's
 * __start_context, whose CFI does not say it is the outermost). */
static int before_fde(const uint8_t *eh_frame_hdr, uintptr_t ip)
{
	struct ct_cfi_rule r;
	return ct_cfi_lookup(eh_frame_hdr, ip + 1, &r) != -ENOENT;
}

/* The rule at ip: its CFI's, or a frame-pointer guess where no CFI covers ip. The cache's miss
 * path: kept out of line, so the walk's loop stays as small as when the decoder lived here. With
 * scratch (the outermost walk's), the FDE's row table is made and kept when it has none (cfirows.h). */
static __attribute__((noinline)) struct ct_cfi_rule compute_rule(uintptr_t ip, struct ct_cfi_row *scratch)
{
	static const struct ct_cfi_rule none = {0, 0, 0, CT_CFI_NONE}, fp = {16, -16, CT_CFI_RBP, RULE_FP},
	                                fp_anon = {16, -16, CT_CFI_RBP, RULE_FP_ANON},
	                                end = {0, 0, 0, CT_CFI_END};
	struct dl_find_object obj;
	struct ct_cfi_rule r;

	if (_dl_find_object((void *)ip, &obj) != 0) /* code outside every module: JIT code */
		return fp_anon;
	if (!obj.dlfo_eh_frame) /* no .eh_frame_hdr (.debug_frame only): the walk stops here */
		return none;
	const uint8_t *fde;
	int rc = ct_cfi_find_fde(obj.dlfo_eh_frame, ip, &fde);
	if (!rc)
		rc = ct_cfirows_rule(fde, ip, atomic_load_explicit(&generation, memory_order_relaxed),
		                     scratch, &r);
	if (rc == -ENOENT) /* no FDE covers ip */
		return before_fde(obj.dlfo_eh_frame, ip) ? end : fp;
	if (!rc && r.kind == CT_CFI_SIGNAL &&
	    !is_restorer(ip, (uintptr_t)obj.dlfo_map_start, (uintptr_t)obj.dlfo_map_end))
		return none; /* another system's trampoline: its frame's layout is unknown */
	return rc ? none : r;
}

/* ---- the per-thread rule cache ----------------------------------------------------------- */

/* The set of ip: two entries, the newer first. */
static struct entry *set_of(struct ct_slot *me, uintptr_t ip)
{
	return &me->unwind->cache[((ip * 0x9e3779b97f4a7c15ull) >> (64 - CACHE_BITS)) & ~(uintptr_t)1];
}

/* Empties the big cache: unmapped, and counted from zero again. A nested walk that reads st->big
 * meanwhile sees the old mapping whole or NULL. */
static void big_unmap(struct ct_unwind_state *st)
{
	struct entry *big = st->big;
	st->big = NULL;
	st->misses = 0;
	atomic_signal_fence(memory_order_seq_cst);
	ct_arena_unmap(big, BIG_SIZE * sizeof(*big));
}

/* Whether the thread's cache is mapped and current: what cache_usable() makes it. */
static inline int cache_current(const struct ct_slot *me)
{
	unsigned gen = atomic_load_explicit(&generation, memory_order_relaxed);
	return __builtin_expect(me->unwind && gen == me->unwind->cache_generation, 1);
}

/* The outermost walk of a thread owns the cache: it maps it on first use (ct_arena_map is
 * async-signal-safe) and clears it when the generation moved. The arena's, so that the leak scan
 * never reads it: the memo holds the RBP of every frame, which code without frame pointers uses
 * for anything, a heap address too (it kept a lost block reachable). A nested walk (signal handler)
 * of a missing or stale cache bypasses it. Returns whether it may be used. */
static int cache_usable(struct ct_slot *me)
{
	unsigned gen = atomic_load_explicit(&generation, memory_order_relaxed);
	if (__builtin_expect(me->unwind && gen == me->unwind->cache_generation, 1))
		return 1;
	if (me->walk.depth > 1)
		return 0;
	if (!me->unwind) {
		void *p = ct_arena_map(sizeof(*me->unwind));
		if (!p)
			return 0;
		me->unwind = p; /* zero-filled: an empty cache, no memo (not cleared: untouched pages) */
		me->unwind->memo_[0].sp = UINTPTR_MAX;
	} else {
		memset(me->unwind->cache, 0, sizeof(me->unwind->cache));
		memset(me->unwind->hot, 0, sizeof(me->unwind->hot));
		big_unmap(me->unwind);
		me->unwind->memo_n = 0;
	}
	me->unwind->cache_generation = gen;
	return 1;
}

void ct_unwind_thread_exit(void)
{
	struct ct_slot *me = ct_slot();

	if (!me->unwind || me->walk.depth)
		return;
	big_unmap(me->unwind);
	ct_arena_unmap(me->unwind, sizeof(*me->unwind));
	me->unwind = NULL;
}

/* Fills one entry. It is emptied first, so a signal handler walking meanwhile (a nested walk, which
 * only reads the cache) never sees a half-written one. */
static void entry_set(struct entry *e, uintptr_t ip, struct ct_cfi_rule r)
{
	e->ip = 0;
	atomic_signal_fence(memory_order_seq_cst);
	e->rule = r;
	atomic_signal_fence(memory_order_seq_cst);
	e->ip = ip;
	atomic_signal_fence(memory_order_seq_cst);
}

/* The set of ip in the big cache. */
static struct entry *big_set_of(struct entry *big, uintptr_t ip)
{
	return &big[((ip * 0x9e3779b97f4a7c15ull) >> (64 - BIG_BITS)) & ~(uintptr_t)1];
}

/* Keeps rule r of ip as the first entry of its set (the set's first moves to the second). */
static void set_put(struct entry *set, uintptr_t ip, struct ct_cfi_rule r)
{
	if (set[0].ip)
		entry_set(&set[1], set[0].ip, set[0].rule);
	entry_set(&set[0], ip, r);
}

/* The big cache's rule of ip into *r, or 0 when it has none. */
static int big_find(const struct ct_unwind_state *st, uintptr_t ip, struct ct_cfi_rule *r)
{
	const struct entry *big = st->big;
	if (!big)
		return 0;
	const struct entry *set = big_set_of((struct entry *)big, ip);
	if (set[0].ip == ip)
		*r = set[0].rule;
	else if (set[1].ip == ip)
		*r = set[1].rule;
	else
		return 0;
	return 1;
}

/* Maps the big cache once the thread has missed BIG_AFTER times (outermost walk only). Without
 * memory the thread keeps the small one alone, and is not asked again. */
static void big_count_miss(struct ct_unwind_state *st)
{
	if (st->big || ++st->misses != BIG_AFTER)
		return;
	st->big = ct_arena_map(BIG_SIZE * sizeof(struct entry));
}

/* The cache's miss: the rule from the big cache, or computed, and kept unless a nested walk or JIT
 * code asked, as the set's first entry (its first moves to the second). Out of line, so that
 * rule_for's hit stays a few instructions in the walk's loop. */
static __attribute__((noinline)) struct ct_cfi_rule rule_miss(struct ct_slot *me, struct entry *set,
                                                              uintptr_t ip, int use_cache)
{
	struct ct_unwind_state *st = me->unwind;
	struct ct_cfi_rule r;
	if (use_cache && big_find(st, ip, &r)) {
		if (me->walk.depth <= 1)
			set_put(set, ip, r);
		return r;
	}
	int owner = use_cache && me->walk.depth <= 1;
	r = compute_rule(ip, owner ? st->rows : NULL);
	if (!owner || r.kind == RULE_FP_ANON)
		return r;
	set_put(set, ip, r);
	if (st->big)
		set_put(big_set_of(st->big, ip), ip, r);
	else
		big_count_miss(st);
	return r;
}

static inline __attribute__((always_inline)) struct ct_cfi_rule rule_for(struct ct_slot *me, uintptr_t ip,
                                                                         int use_cache)
{
	struct entry *set = set_of(me, ip);
	if (__builtin_expect(use_cache && set[0].ip == ip, 1))
		return set[0].rule;
	return use_cache && set[1].ip == ip ? set[1].rule : rule_miss(me, set, ip, use_cache);
}

/* ---- walking ------------------------------------------------------------------------------ */

struct frame {
	uintptr_t ip, sp, bp;
};

/* Inlined: the walk's hot path. */
static inline __attribute__((always_inline)) void self_range(uintptr_t *lo, uintptr_t *hi)
{
	struct dl_find_object obj;

	*hi = atomic_load_explicit(&self_hi, memory_order_acquire);
	if (*hi) {
		*lo = atomic_load_explicit(&self_lo, memory_order_relaxed);
		return;
	}
	*lo = *hi = 0;
	if (_dl_find_object((void *)(uintptr_t)&ct_unwind, &obj) != 0)
		return;
	*lo = (uintptr_t)obj.dlfo_map_start;
	*hi = (uintptr_t)obj.dlfo_map_end;
	atomic_store_explicit(&self_lo, *lo, memory_order_relaxed);
	atomic_store_explicit(&self_hi, *hi, memory_order_release);
}

/* Whether ip is the shim's own code. */
static inline __attribute__((always_inline)) int in_self_range(uintptr_t ip)
{
	uintptr_t lo, hi;

	self_range(&lo, &hi);
	return ip - lo < hi - lo;
}

struct holder {
	uintptr_t sp, lo, hi;
};

static int holds(const char *line, void *arg)
{
	struct holder *h = arg;
	uintptr_t lo, hi;
	if (!ct_procmaps_range(line, &lo, &hi) || h->sp < lo || h->sp >= hi)
		return 0;
	h->lo = lo, h->hi = hi;
	return 1;
}

/* The mapping that holds sp, from /proc/self/maps, read with no allocation (this runs inside
 * malloc). Returns 0, or -1 when it cannot be read. */
static int find_mapping(uintptr_t sp, uintptr_t *lo, uintptr_t *hi)
{
	struct holder h = {sp, 0, 0};
	if (ct_procmaps_each(holds, &h) != 1)
		return -1;
	*lo = h.lo, *hi = h.hi;
	return 0;
}

/* Whether [sp, end) lies in the thread's stack: 1, or 0 (also when the stack cannot be known:
 * /proc unreadable). Only the outermost walk (no thread state: any walk) remembers the mapping; a
 * nested one (a signal handler's) may find the outer one halfway through storing it. */
static int in_stack(struct ct_slot *me, uintptr_t sp, uintptr_t end)
{
	if (me->unwind && sp >= me->unwind->stack_lo && sp < me->unwind->stack_hi)
		return end <= me->unwind->stack_hi;
	if (me->unwind && me->unwind->no_maps)
		return 0;
	uintptr_t lo, hi;
	int saved_errno = errno, rc = find_mapping(sp, &lo, &hi);
	errno = saved_errno;
	if (!me->unwind || me->walk.depth > 1)
		return rc == 0 && end <= hi;
	if (rc < 0) {
		me->unwind->no_maps = 1;
		return 0;
	}
	/* A signal handler's walk may read these between two stores: it must see an empty range. */
	me->unwind->stack_hi = 0;
	atomic_signal_fence(memory_order_seq_cst);
	me->unwind->stack_lo = lo;
	atomic_signal_fence(memory_order_seq_cst);
	me->unwind->stack_hi = hi;
	return end <= hi;
}

/* Applies a rule, refusing anything that does not look like a caller's frame. *rbp_slot: where
 * the caller's RBP was read, 0 when it was kept. Returns 0, or -EFAULT or -ENOENT: the walk ends. */
static inline __attribute__((always_inline)) int step(struct ct_slot *me, struct frame *f,
                                                      struct ct_cfi_rule r, uintptr_t *rbp_slot)
{
	uintptr_t cfa = (r.cfa_reg == CT_CFI_RSP ? f->sp : f->bp) + (uintptr_t)(intptr_t)r.cfa_off;
	uintptr_t slot = r.rbp_off ? cfa + (uintptr_t)(intptr_t)r.rbp_off : 0;

	if (cfa <= f->sp || (cfa & 7) || cfa - f->sp > MAX_FRAME_SPAN)
		return -EFAULT;
	/* gcc's epilogues leave the rules of the registers they pop: in a frame a signal interrupted
	 * there, the slot lies below RSP, in the red zone, which the kernel keeps intact. */
	if (slot && slot + RED_ZONE < f->sp)
		return -EFAULT;
	if ((r.kind == RULE_FP || r.kind == RULE_FP_ANON) && !in_stack(me, f->sp, cfa))
		return -EFAULT;
	uintptr_t ip = *(const uintptr_t *)(cfa - 8);
	if (!ip)
		return -ENOENT;
	if (slot)
		f->bp = *(const uintptr_t *)slot;
	f->ip = ip;
	f->sp = cfa;
	*rbp_slot = slot;
	return 0;
}

/* Steps from the trampoline's frame to the frame the signal interrupted, whose registers the kernel
 * saved in the ucontext_t at the frame's stack pointer. That frame's ip is exact, not a return
 * address, and its stack may be another one (the handler ran on sigaltstack). */
static int signal_step(struct frame *f)
{
	const ucontext_t *uc = (const ucontext_t *)f->sp;
	const greg_t *g = uc->uc_mcontext.gregs;

	if (!g[REG_RIP] || !g[REG_RSP])
		return -ENOENT;
	f->ip = (uintptr_t)g[REG_RIP];
	f->sp = (uintptr_t)g[REG_RSP];
	f->bp = (uintptr_t)g[REG_RBP];
	return 0;
}

/* ---- the memo of the previous walk --------------------------------------------------------
 * Consecutive walks of a thread share their outer frames. A walk is a function of its register
 * state at a frame and of the stack words it reads from there on (return addresses, saved RBPs);
 * so when a frame's state matches one of the previous walk's and those words are unchanged, the
 * rest of the previous walk is the rest of this one. The checks are independent loads, not the
 * chain of dependent loads a walk is. Only walks that reached the outermost frame are kept. */

/* The walk's m fresh frames become the memo's frames inside frame `base` - 1 (all of it when base
 * is 0): the memo describes this walk now. A frame's outcome depends on its RBP when its CFA is
 * RBP-based, or when it keeps RBP for its caller whose outcome depends on it: known from the
 * outermost frame in, so only the new frames are computed. */
static void memo_store(struct ct_slot *me, int base, int m)
{
	_Static_assert(MEMO_CFA_RBP == 1 && MEMO_KEEPS_RBP == 2 && MEMO_NEEDS_BP == 4,
	               "needs is computed in bits");
	struct ct_unwind_state *st = me->unwind;
	struct memo_frame *to = memo_of(st) + base;
	/* 1 when the caller's outcome depends on its RBP (the sentinel's flags are 0). */
	unsigned needs = to[-1].flags >> 2 & 1;

	if (!(needs | st->fresh_rbp)) {
		/* No frame's outcome depends on its RBP: nothing but return addresses to check. A fresh
		 * frame is a memo frame but for rbp_slot, where bp_at goes: one copy of its bytes. */
		for (int k = m - 1; k >= 0; k--, to++) {
			memcpy(to, &st->fresh[k], sizeof(*to));
			to->bp_at = &to[-1].bp;
		}
		st->memo_n = base + m;
		st->memo_stores++;
		me->walk.memo_current = 1;
		return;
	}
	/* by index: a pointer below fresh[0], where the loop would end, is none C allows */
	for (int k = m - 1; k >= 0; k--, to++) {
		const struct fresh_frame *fr = &st->fresh[k];
		const uintptr_t *slot = (const uintptr_t *)fr->rbp_slot;
		unsigned flags = fr->flags;
		/* The caller's RBP matters and was read from the stack: that word must stay. Otherwise
		 * the caller's own bp, which equals itself. */
		to->bp_at = needs && slot ? slot : &to[-1].bp;
		/* This frame's outcome depends on its RBP: its CFA is RBP-based, or it keeps RBP for a
		 * caller whose outcome does. */
		needs = (flags & MEMO_CFA_RBP) | (flags >> 1 & needs);
		to->ip = fr->ip;
		to->sp = fr->sp;
		to->bp = fr->bp;
		to->flags = flags | needs << 2;
	}
	st->memo_n = base + m;
	st->memo_stores++;
	me->walk.memo_current = 1;
}

/* Whether the frame (ip, sp, bp) is the memo's frame fr, and then the walk from it is the memo's
 * from fr out, when the stack words the steps read (return addresses, saved RBPs that matter) are
 * unchanged. Returns the number of those frames, the first `room` of them stored in ips, innermost
 * first; or 0 (ips past what the walk stored may have been written). */
static inline int memo_follow(struct ct_unwind_state *st, const struct memo_frame *fr, uintptr_t ip,
                              uintptr_t sp, uintptr_t bp, uintptr_t *ips, int room)
{
	const struct memo_frame *memo = memo_of(st), *up;
	int j = (int)(fr - memo);

	if (fr->sp != sp || fr->ip != ip || ((fr->flags & MEMO_NEEDS_BP) && fr->bp != bp))
		return 0;
	if (__builtin_expect(j < room, 1)) { /* every frame fits: checked and stored in one pass */
		*ips++ = ip;
		for (up = fr - 1; up >= memo; up--) {
			uintptr_t upip = up->ip;
			if ((*(const uintptr_t *)(up->sp - 8) ^ upip) | (*up[1].bp_at ^ up->bp))
				return 0;
			*ips++ = upip;
		}
		return j + 1;
	}
	for (up = fr - 1; up >= memo; up--)
		if ((*(const uintptr_t *)(up->sp - 8) ^ up->ip) | (*up[1].bp_at ^ up->bp))
			return 0;
	for (int k = 0; k < room; k++) /* room <= j: the innermost room frames */
		ips[k] = fr[-k].ip;
	return j + 1;
}

/* This walk's frames so far are ips[0, n), m of them in `fresh`; the memo's `tail` outermost
 * frames follow, copied into ips as far as max allowed. */
static inline int memo_reuse(struct ct_slot *me, int tail, int m, int n, int max, int *truncated)
{
	int copied = tail < max - n ? tail : max - n;

	*truncated = copied < tail;
	/* A walk cut at max leaves the memo to the older one, which still describes a whole stack. */
	if (*truncated || tail + m > MEMO_FRAMES)
		return n + copied;
	me->walk.shared = me->walk.memo_was_current ? tail : 0;
	if (m || tail != me->unwind->memo_n)
		memo_store(me, tail, m);
	me->walk.memo_current = 1;
	return n + copied;
}

/* Where the walk meets the memo: *j moves out to the memo's frame at f's depth, and when f is that
 * frame and the stack words above it are unchanged, the walk ends with the memo's outer frames.
 * Returns the walk's frame count then, or -1. */
static inline __attribute__((always_inline)) int memo_meet(struct ct_slot *me, int *j, const struct frame *f,
                                                           uintptr_t *ips, int n, int m, int max,
                                                           int *truncated)
{
	struct ct_unwind_state *st = me->unwind;
	while (*j >= 0 && memo_of(st)[*j].sp < f->sp)
		(*j)--;
	int tail = *j >= 0 ? memo_follow(st, &memo_of(st)[*j], f->ip, f->sp, f->bp, ips + n, max - n) : 0;
	return tail ? memo_reuse(me, tail, m, n, max, truncated) : -1;
}

static void memo_record(struct fresh_frame *fr, const struct frame *f, struct ct_cfi_rule r)
{
	fr->ip = f->ip;
	fr->sp = f->sp;
	fr->bp = f->bp;
	fr->rbp_slot = 0;
	fr->flags = (r.cfa_reg == CT_CFI_RBP ? MEMO_CFA_RBP : 0u) | (r.rbp_off ? 0u : MEMO_KEEPS_RBP);
}

/* ld.so's: the stack pointer the kernel gave the process (where argc is). */
extern void *__libc_stack_end;

/* Whether a frame whose stack pointer is sp is one of the process's first: the loader's entry code
 * that runs the constructors (_dl_start_user) and _start sit a few words below __libc_stack_end,
 * and their code does not mark itself outermost, so a walk that cannot step them is complete. */
static int at_process_start(uintptr_t sp)
{
	uintptr_t end = (uintptr_t)__libc_stack_end;
	return end && sp <= end && end - sp < 256;
}

/* The walk cannot step its frame at sp: it ends there, truncated, and counts as cut
 * (ct_unwind_cuts), unless that frame is one of the process's first. */
static int cut_short(uintptr_t sp, int n, int *truncated, int *cut)
{
	if (at_process_start(sp))
		return n;
	*truncated = *cut = 1;
	return n;
}

/* The walk ends where a step failed: a return address of 0 marks the outermost frame, as some
 * runtimes leave it; a frame that does not look like a caller's (a frame-pointer guess in code that
 * keeps none, a corrupt stack) cuts it short. */
static int stopped(int rc, uintptr_t sp, int n, int *truncated, int *cut)
{
	return rc == -ENOENT ? n : cut_short(sp, n, truncated, cut);
}

/* What a walk drops besides its leading frames inside the shim: past a signal frame, the shim's
 * frames the signal interrupted, or (DROP_REPORT: the walk of a handler that interrupted a report)
 * the report's frames as a whole, with the functions it had called. */
enum drop { DROP_SHIM, DROP_REPORT };

/* Past a signal frame, whose interrupted frames start at ips[ctx]: whether the frame at ip is the
 * shim's work, not the program's. The shim's own frames are; and while *report holds, the frames
 * stored since ctx once a frame of the shim follows them: they are what the report called. */
static int shim_work(uintptr_t ip, uintptr_t lo, uintptr_t hi, int ctx, int *report, int *n)
{
	if (ip - lo >= hi - lo)
		return 0;
	if (*report)
		*n = ctx;
	*report = 0;
	return 1;
}

/* ---- the common loop ------------------------------------------------------------------------
 * Nearly every frame of a walk is the program's code at a return address, with a cached CFI rule
 * of kind CT_CFI_OK, while the memo is in use. common_loop() takes those frames with the walk's
 * state in registers: the rule as one 64-bit word (struct ct_cfi_rule's bytes), whose usual shape
 * (CFA = RSP + k) is told by one comparison and checked by two; no call but a miss of the rule
 * cache. Any other frame goes back to walk()'s general steps, which take it from its start. Measured
 * on deep (tests/cost): 833 instructions a walk before (4.6 frames stepped, 7 followed), 693 now. */

/* The walk's state that common_loop() takes and gives back. */
struct cursor {
	uintptr_t ip;
	uintptr_t last_pc; /* the pc whose rule r is */
	uintptr_t sp, bp;
	struct ct_cfi_rule r;
	int n, m, j; /* frames in ips, frames in fresh, the memo's frame to compare with */
};

_Static_assert(sizeof(struct ct_cfi_rule) == 8 && offsetof(struct ct_cfi_rule, rbp_off) == 4 &&
                   offsetof(struct ct_cfi_rule, cfa_reg) == 6 && offsetof(struct ct_cfi_rule, kind) == 7,
               "a rule is read as one little-endian word");
/* The upper half of a rule's word: kind, CFA register, RBP offset. */
#define RULE_SHAPE(kind, reg, rbp_off) ((uint32_t)(kind) << 24 | (uint32_t)(reg) << 16 | (uint16_t)(rbp_off))
/* CFA = RSP + cfa_off, RA at CFA-8, RBP kept: leaf-like code, and any code built without frame
 * pointers, between its prologue and epilogue. */
#define SHAPE_SP RULE_SHAPE(CT_CFI_OK, CT_CFI_RSP, 0)

static inline uint64_t rule_word(struct ct_cfi_rule r)
{
	uint64_t w;
	memcpy(&w, &r, sizeof(w));
	return w;
}

static inline struct ct_cfi_rule word_rule(uint64_t w)
{
	struct ct_cfi_rule r;
	memcpy(&r, &w, sizeof(r));
	return r;
}

/* The cached rule of pc as a word: rule_for's, for a walk that uses the cache. */
static inline __attribute__((always_inline)) uint64_t rule_word_for(struct ct_slot *me, uintptr_t pc)
{
	uint64_t k = pc * 0x9e3779b97f4a7c15ull;
	struct entry *hot = &me->unwind->hot[k >> (64 - HOT_BITS)];
	struct entry *set = &me->unwind->cache[(k >> (64 - CACHE_BITS)) & ~(uint64_t)1];
	uint64_t w;

	if (__builtin_expect(hot->ip == pc, 1)) {
		memcpy(&w, &hot->rule, sizeof(w));
		return w;
	}
	if (set[0].ip == pc) {
		memcpy(&w, &set[0].rule, sizeof(w));
	} else if (set[1].ip == pc) {
		memcpy(&w, &set[1].rule, sizeof(w));
	} else {
		w = rule_word(rule_miss(me, set, pc, 1));
		if (set[0].ip != pc) /* not cached (JIT code): nor here */
			return w;
	}
	hot->ip = pc;
	memcpy(&hot->rule, &w, sizeof(w));
	return w;
}

/* Steps c's frames while they are common: returns the walk's frame count when it met the memo
 * (memo_meet), or -1 with c at the first frame it did not take (which may be the limit: max
 * frames, or MEMO_FRAMES fresh ones). Steps exactly as walk()'s general steps would, with the
 * same checks (step()), in the same order: a frame whose step would fail is left to them. */
static inline __attribute__((always_inline)) int common_loop(struct ct_slot *me, struct cursor *c,
                                                             uintptr_t *ips, int max, int *truncated)
{
	/* Pointers rather than indices, and nothing the loop does not use: everything in registers. */
	struct ct_unwind_state *st = me->unwind;
	const struct memo_frame *at = &memo_of(st)[c->j]; /* the sentinel ends the search */
	struct fresh_frame *fr = &st->fresh[c->m];
	uintptr_t *out = ips + c->n;
	uintptr_t *const end = max - c->n < MEMO_FRAMES - c->m ? ips + max : out + (MEMO_FRAMES - c->m);
	uintptr_t ip = c->ip, sp = c->sp, bp = c->bp, last_pc = c->last_pc;
	uint64_t w = rule_word(c->r);

	for (;;) {
		while (at->sp < sp)
			at--;
		if (at->sp == sp) {
			int n = (int)(out - ips), m = (int)(fr - st->fresh);
			int tail = memo_follow(st, at, ip, sp, bp, out, max - n);
			if (tail)
				return memo_reuse(me, tail, m, n, max, truncated);
		}
		if (out == end)
			break;
		if (ip - 1 != last_pc) {
			last_pc = ip - 1;
			w = rule_word_for(me, last_pc);
		}
		uint32_t shape = (uint32_t)(w >> 32);
		int32_t off = (int32_t)w;
		int16_t rbp_off = (int16_t)shape;
		uintptr_t cfa, slot = 0;
		unsigned flags;
		if (__builtin_expect(shape >> 16 == SHAPE_SP >> 16, 1)) {
			/* step()'s checks: cfa above sp, by MAX_FRAME_SPAN at most, and aligned. */
			cfa = sp + (uintptr_t)(intptr_t)off;
			if ((uint32_t)off - 1u >= MAX_FRAME_SPAN || (cfa & 7))
				break;
			flags = MEMO_KEEPS_RBP;
		} else {
			if (shape >> 24 != CT_CFI_OK)
				break;
			cfa = bp + (uintptr_t)(intptr_t)off; /* CT_CFI_RBP: make_rule() gives no other */
			if (cfa <= sp || (cfa & 7) || cfa - sp > MAX_FRAME_SPAN)
				break;
			flags = MEMO_CFA_RBP | MEMO_KEEPS_RBP;
			st->fresh_rbp = 1;
		}
		if (rbp_off) {
			slot = cfa + (uintptr_t)(intptr_t)rbp_off;
			if (slot + RED_ZONE < sp)
				break;
			flags &= ~(unsigned)MEMO_KEEPS_RBP;
		}
		uintptr_t ra = *(const uintptr_t *)(cfa - 8);
		*out++ = ip;
		fr->ip = ip;
		fr->sp = sp;
		fr->bp = bp;
		fr->flags = flags;
		fr->rbp_slot = slot;
		fr++;
		if (!ra) /* the outermost frame, as some runtimes mark it: the walk is complete */
			return (int)(out - ips);
		if (slot)
			bp = *(const uintptr_t *)slot;
		ip = ra;
		sp = cfa;
	}
	c->ip = ip;
	c->sp = sp;
	c->bp = bp;
	c->last_pc = last_pc;
	c->r = word_rule(w);
	c->n = (int)(out - ips);
	c->m = (int)(fr - st->fresh);
	c->j = (int)(at - memo_of(st));
	return -1;
}

/* A walk's start in the common loop (its first frame: nothing stepped yet), the cursor given back in
 * *c when it stops there. */
static __attribute__((noinline)) int first_steps(struct ct_slot *me, uintptr_t ip, uintptr_t sp, uintptr_t bp,
                                                 uintptr_t *ips, int max, int *truncated, struct cursor *c)
{
	/* A copy whose address goes nowhere until the end: in registers, its start constants. */
	struct cursor start = {ip, 0, sp, bp, {0, 0, 0, CT_CFI_NONE}, 0, 0, me->unwind->memo_n - 1};
	me->unwind->fresh_rbp = 0; /* no frame recorded yet */
	int n = common_loop(me, &start, ips, max, truncated);

	if (n < 0)
		*c = start;
	return n;
}

/* The same for walk()'s general steps, once a frame they took leaves the common ones again. */
static __attribute__((noinline)) int common_steps(struct ct_slot *me, struct cursor *c, uintptr_t *ips,
                                                  int max, int *truncated)
{
	return common_loop(me, c, ips, max, truncated);
}

/* Returns the frame count; *truncated = 1 when the stack had more frames than max, or when a frame
 * could not be stepped (*cut = 1 then). The outermost walk of a thread (not one nested in a signal
 * handler) uses and renews the memo, unless it crosses a signal frame. from: the first frame
 * (n, m 0), or with resumed set, where common_steps() stopped (the program's code, the cache and
 * the memo in use). */
static __attribute__((noinline)) int walk(struct ct_slot *me, const struct cursor *from, int resumed,
                                          uintptr_t adjust, uintptr_t *ips, int max, enum drop drop,
                                          int *truncated, int *cut)
{
	/* A copy whose address goes nowhere: its registers stay in registers, where through the
	 * caller's pointer every store to ips[] or the memo would make the compiler load them again. */
	struct frame here = {from->ip, from->sp, from->bp}, *f = &here;
	uintptr_t lo, hi, scratch, last_pc = from->last_pc;
	struct ct_cfi_rule r = from->r;
	int n = from->n, in_self = !resumed, use_cache = resumed || cache_usable(me), rc;
	int use_memo = use_cache && me->walk.depth == 1, m = from->m;
	struct ct_unwind_state *st = use_memo ? me->unwind : NULL;
	/* the memo's frame to compare with */
	int j = resumed ? from->j : use_memo ? st->memo_n - 1 : -1;
	int ctx = -1, report = 0; /* past a signal frame: where its frames start in ips (shim_work) */

	if (use_memo && !resumed) /* no frame recorded yet (first_steps() did it for a resumed walk) */
		st->fresh_rbp = 0;

	self_range(&lo, &hi);
	for (;;) {
		in_self = in_self && f->ip - lo < hi - lo;
		/* The common frame, in a loop of its own: the program's code, a return address, a cached
		 * plain rule, the memo in use. Anything else leaves for the general steps below, which take
		 * the frame from its start again (the memo comparison finds nothing twice). */
		if (!in_self && use_memo && adjust) {
			struct cursor c = {f->ip, last_pc, f->sp, f->bp, r, n, m, j};
			int met = common_steps(me, &c, ips, max, truncated);
			if (met >= 0)
				return met;
			f->ip = c.ip;
			f->sp = c.sp;
			f->bp = c.bp;
			last_pc = c.last_pc;
			r = c.r;
			n = c.n;
			m = c.m;
			j = c.j;
		}
		if (!in_self && !(ctx >= 0 && shim_work(f->ip, lo, hi, ctx, &report, &n))) {
			int met = memo_meet(me, &j, f, ips, n, m, max, truncated);
			if (met >= 0)
				return met;
			if (n == max) {
				*truncated = 1;
				return n;
			}
			/* Below a signal frame the ip is the interrupted instruction itself. */
			ips[n++] = adjust ? f->ip : f->ip | CT_UNWIND_EXACT;
		}
		/* A return address points after the call; the call itself decides the rule. The frames
		 * of a recursion share it: looked up once. */
		if (f->ip - adjust != last_pc) {
			last_pc = f->ip - adjust;
			r = rule_for(me, last_pc, use_cache);
		}
		if (r.kind == CT_CFI_NONE)
			return cut_short(f->sp, n, truncated, cut);
		if (r.kind == CT_CFI_SIGNAL) {
			/* The memo describes stacks that sp orders, read through return addresses. */
			use_memo = 0;
			j = -1;
			if (signal_step(f))
				return cut_short(f->sp, n, truncated, cut);
			adjust = 0;
			ctx = n;
			report = drop == DROP_REPORT;
			continue;
		}
		use_memo = use_memo && m < MEMO_FRAMES;
		if (use_memo && !in_self) {
			memo_record(&st->fresh[m++], f, r);
			st->fresh_rbp |= r.cfa_reg == CT_CFI_RBP;
		}
		if (r.kind == CT_CFI_END) {
			if (use_memo)
				memo_store(me, 0, m);
			return n;
		}
		/* A frame-pointer guess needs the body of a function: a signal may have stopped code
		 * with no unwind information in its prologue or epilogue, where RBP is the caller's. */
		if (!adjust && r.kind >= RULE_FP)
			return cut_short(f->sp, n, truncated, cut);
		if ((rc = step(me, f, r, use_memo && !in_self ? &st->fresh[m - 1].rbp_slot : &scratch)))
			return stopped(rc, f->sp, n, truncated, cut);
		adjust = 1;
	}
}

/* Every entry point: the walk from frame f (adjust 1 when f->ip is a return address). Inlined into each,
 * so that the tracker's walk (ct_unwind_from_slot) takes its constants with no generic entry: 47 instructions
 * a walk fewer on deep (tests/cost). */
static inline __attribute__((always_inline)) int unwind_frame(struct ct_slot *me, struct frame *f,
                                                              uintptr_t adjust, uintptr_t *ips, int max,
                                                              enum drop drop, int *truncated)
{
	int dummy, n, cut = 0;

	if (!truncated)
		truncated = &dummy;
	*truncated = 0;
	if (max < 0)
		max = 0;
	me->walk.shared = 0;
	me->walk.memo_was_current = me->walk.memo_current;
	me->walk.memo_current = 0;
	me->walk.depth++;
	atomic_signal_fence(memory_order_seq_cst);
	/* The usual walk starts in the common loop straight away: a return address into the program,
	 * the thread's own walk, its cache current. */
	struct cursor c;
	int common = adjust && me->walk.depth == 1 && cache_current(me) && !in_self_range(f->ip);
	if (common) {
		/* A loop allocating from one place: its walk meets the memo at once. */
		struct ct_unwind_state *st = me->unwind;
		const struct memo_frame *top = &memo_of(st)[st->memo_n - 1]; /* the sentinel when empty */
		int tail = top->sp == f->sp ? memo_follow(st, top, f->ip, f->sp, f->bp, ips, max) : 0;
		n = tail ? memo_reuse(me, tail, 0, 0, max, truncated)
		         : first_steps(me, f->ip, f->sp, f->bp, ips, max, truncated, &c);
	} else {
		c = (struct cursor){f->ip, 0, f->sp, f->bp, {0, 0, 0, CT_CFI_NONE}, 0, 0, -1};
		n = -1;
	}
	if (n < 0)
		n = walk(me, &c, common, adjust, ips, max, drop, truncated, &cut);
	atomic_signal_fence(memory_order_seq_cst);
	me->walk.depth--;
	if (cut) {
		me->walk.cuts++;
		atomic_fetch_add_explicit(&all_cuts, 1, memory_order_relaxed);
	}
	return n;
}

/* The registers at one instruction of the calling function, whose CFI row describes them. */
#define HERE(f) \
	__asm__ volatile("1: leaq 1b(%%rip), %0\n\t" \
	                 "movq %%rsp, %1\n\t" \
	                 "movq %%rbp, %2" \
	                 : "=r"((f).ip), "=r"((f).sp), "=r"((f).bp))

__attribute__((noinline)) int ct_unwind(uintptr_t *ips, int max, int *truncated)
{
	struct frame f;

	HERE(f);
	return unwind_frame(ct_slot(), &f, 0, ips, max, DROP_SHIM, truncated);
}

int ct_unwind_from(uintptr_t ra, uintptr_t sp, uintptr_t bp, uintptr_t *ips, int max, int *truncated)
{
	return ct_unwind_from_slot(ct_slot(), ra, sp, bp, ips, max, truncated);
}

int ct_unwind_from_slot(struct ct_slot *me, uintptr_t ra, uintptr_t sp, uintptr_t bp, uintptr_t *ips, int max,
                        int *truncated)
{
	struct frame f = {ra, sp, bp};
	return unwind_frame(me, &f, 1, ips, max, DROP_SHIM, truncated);
}

int ct_unwind_from_handler(uintptr_t ra, uintptr_t sp, uintptr_t bp, uintptr_t *ips, int max, int *truncated)
{
	struct frame f = {ra, sp, bp};
	int n = unwind_frame(ct_slot(), &f, 1, ips, CT_DEPTH_MAX, DROP_REPORT, truncated);
	if (n <= max)
		return n;
	if (truncated)
		*truncated = 1;
	return max < 0 ? 0 : max;
}

/* ---- replays ----
 * The memo knows the thread's last walk only; a program that allocates from a few places in turn
 * (deep's recursion ends at one of 32 depths and leaves) walks from the frame where the last one
 * differed each time. A walk is a function of its first frame's registers and of the stack words it
 * reads: kept by its first frame with those words, it is this walk again while they are unchanged,
 * checked with independent loads, without a step or a rule. Only the thread's outermost walks read
 * and write its replays (a signal handler's nested in a report neither replays nor keeps). */

/* A first frame's key: its slot is the top bits (replay_key[] and replay[]), the rest tells keys apart. */
static inline uint64_t replay_key(uintptr_t ip, uintptr_t sp)
{
	return ((ip ^ sp * 31) * 0x9e3779b97f4a7c15ull) | 1;
}

static inline unsigned replay_slot(uint64_t key)
{
	return (unsigned)(key >> (64 - REPLAY_BITS));
}

int ct_unwind_replay(struct ct_slot *me, uintptr_t ra, uintptr_t sp, uintptr_t bp, int max, uint64_t *tag)
{
	struct ct_unwind_state *st = me->unwind;
	if (CT_UNLIKELY(!cache_current(me)) || me->walk.depth)
		return 0;
	uint64_t key = replay_key(ra, sp);
	unsigned at = replay_slot(key);
	if (st->replay_key[at] != key)
		return 0;
	struct replay *r = &st->replay[at];
	if (r->ip != ra || r->sp != sp || r->gen != st->cache_generation || r->frames > max)
		return 0;
	uintptr_t differ = r->needs_bp && r->bp != bp;
	if (r->misses > 1 && r->misses % REPLAY_RETRY) { /* not checked: counted as differing */
		r->misses++;
		return 0;
	}
	for (int k = 0; k < r->words; k++)
		differ |= *(const uintptr_t *)r->word[k].at ^ r->word[k].value;
	if (differ) {
		r->misses++;
		return 0;
	}
	r->misses = 0;
	*tag = r->tag;
	return 1;
}

/* The memo's frames from top out, as a replay's words: what memo_follow() checks. 0 when they do
 * not fit. */
static int replay_words(struct replay *r, const struct memo_frame *memo, const struct memo_frame *top)
{
	int k = 0;
	if (top - memo > REPLAY_WORDS)
		return 0;
	for (const struct memo_frame *up = top - 1; up >= memo; up--) {
		int bp_word = up[1].bp_at != &up->bp;
		if (k + 1 + bp_word > REPLAY_WORDS)
			return 0;
		r->word[k].at = up->sp - 8;
		r->word[k++].value = up->ip;
		if (bp_word) {
			r->word[k].at = (uintptr_t)up[1].bp_at;
			r->word[k++].value = up->bp;
		}
	}
	r->words = k;
	return 1;
}

void ct_unwind_keep(struct ct_slot *me, int n, uint64_t tag)
{
	struct ct_unwind_state *st = me->unwind;
	/* the memo is the last walk, all of it, from its first frame */
	if (!st || !me->walk.memo_current || me->walk.depth || n < 1 || st->memo_n != n)
		return;
	unsigned stores = st->memo_stores;
	const struct memo_frame *memo = memo_of(st), *top = &memo[n - 1];
	uint64_t key = replay_key(top->ip, top->sp);
	unsigned at = replay_slot(key);
	if (st->replay_key[at] != key) { /* the first time (lately): kept the next */
		st->replay_key[at] = key;
		return;
	}
	struct replay *r = &st->replay[at];
	/* the same first frame, whose walks keep differing: kept again only after a retry's check */
	int same = r->ip == top->ip && r->sp == top->sp && r->gen == st->cache_generation;
	if (same && r->misses > 1 && r->misses % REPLAY_RETRY != 1)
		return;
	r->misses = same ? r->misses : 0;
	r->ip = 0;
	atomic_signal_fence(memory_order_seq_cst);
	if (!replay_words(r, memo, top))
		return;
	r->sp = top->sp;
	r->bp = top->bp;
	r->needs_bp = (top->flags & MEMO_NEEDS_BP) != 0;
	r->frames = n;
	r->tag = tag;
	r->gen = st->cache_generation;
	atomic_signal_fence(memory_order_seq_cst);
	/* a signal handler's walk in between may have changed the memo: then nothing is kept */
	if (me->walk.memo_current && st->memo_stores == stores)
		r->ip = top->ip;
}

void ct_unwind_invalidate(void)
{
	atomic_fetch_add_explicit(&generation, 1, memory_order_relaxed);
}

unsigned long ct_unwind_cuts(void)
{
	return atomic_load_explicit(&all_cuts, memory_order_relaxed);
}

static int inside_any(uintptr_t ip, const uintptr_t (*ranges)[2], int n)
{
	for (int i = 0; i < n; i++)
		if (ip - ranges[i][0] < ranges[i][1] - ranges[i][0])
			return 1;
	return 0;
}

/* A plain walk, frame by frame, with no cache and no memo: it runs once, at exit, where the frames
 * sought are the first few. */
__attribute__((noinline)) uintptr_t ct_unwind_first_sp_outside(const uintptr_t (*ranges)[2], int n)
{
	int saved_errno = errno;
	uintptr_t adjust = 0, scratch, found = 0;
	struct frame f;

	HERE(f);
	for (int frames = 0; frames < 256; frames++) {
		if (!inside_any(f.ip, ranges, n)) {
			found = f.sp;
			break;
		}
		struct ct_cfi_rule r = compute_rule(f.ip - adjust, NULL);
		int rc = r.kind == CT_CFI_SIGNAL                    ? signal_step(&f)
		         : r.kind == CT_CFI_OK || r.kind >= RULE_FP ? step(ct_slot(), &f, r, &scratch)
		                                                    : -ENOENT;
		if (rc)
			break;
		adjust = r.kind != CT_CFI_SIGNAL;
	}
	errno = saved_errno;
	return found;
}
