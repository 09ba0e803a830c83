/* SPDX-License-Identifier: MIT */
/* ct_unwind against libunwind from varied stacks (plain calls, callee-saved RBP, VLAs, deep
 * recursion, realigned stacks, signal handlers, nested and on sigaltstack, longjmp, swapcontext,
 * threads, after invalidation, code with no unwind information); "bench" times both on a warm
 * cache. */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>

#include "capture.h"
#include "check.h"

#define NOINLINE __attribute__((noinline))

/* A volatile read after each call keeps the compiler from turning calls into jumps or loops. */
static volatile int keep = 1;

static NOINLINE int chain(int depth, int max)
{
	if (depth == 0) {
		ctt_check("chain", max);
		return 0;
	}
	int r = chain(depth - 1, max);
	return r + keep;
}

/* Enough values live across the call that RBP becomes a callee-saved register (saved at CFA-k). */
static NOINLINE long heavy(int depth, const long *v)
{
	long a = v[0] * 3, b = v[1] * 5, c = v[2] * 7, d = v[3] * 11, e = v[4] * 13, f = v[5] * 17;
	if (depth == 0)
		ctt_check("heavy", 64);
	else
		a += heavy(depth - 1, v);
	return a * b + c * d + e * f + keep;
}

/* A VLA: the frame size is dynamic, so its CFA is RBP-based even with -fomit-frame-pointer. */
static NOINLINE int vla(int depth, int size)
{
	volatile char buf[size];
	buf[0] = (char)depth;
	if (depth == 0)
		ctt_check("vla", 64);
	else
		vla(depth - 1, size * 2 + 1);
	return buf[0] + keep;
}

/* A frame that saves its caller's RBP in its own frame (pushed as a callee-saved register, or as
 * the frame pointer), like heavy(). */
static NOINLINE long rbp_saver(const volatile long *v)
{
	long a = v[0] * 3, b = v[1] * 5, c = v[2] * 7, d = v[3] * 11, e = v[4] * 13, f = v[5] * 17;
	ctt_check("vla alias, RBP saved below", 64);
	return a * b + c * d + e * f + keep;
}

/* Two stacks that meet at the same stack pointer and ip with different frame pointers: a VLA
 * frame under callers of different sizes, big_caller's then small_caller's. check 1: the walk
 * starts in the VLA frame; 2: below it, in rbp_saver's, where the two stacks differ only in the
 * RBP that rbp_saver saved. Then the words that held big_caller's return address and RBP lie
 * unchanged inside small_caller's VLA: a walk that took the memo of the first stack past that
 * saved RBP would find them and report big_caller. */
static NOINLINE uintptr_t vla_leaf(int size, int check)
{
	volatile char buf[size];
	buf[0] = 0;
	if (check == 1)
		ctt_check("vla alias", 64);
	if (check == 2) {
		static const volatile long v[6] = {1, 2, 3, 4, 5, 6};
		buf[0] = (char)rbp_saver(v);
	}
	return (uintptr_t)__builtin_frame_address(0) + (uintptr_t)buf[0] * 0;
}

static NOINLINE uintptr_t small_caller(int size, int check)
{
	return vla_leaf(size, check) * (uintptr_t)keep;
}

static NOINLINE uintptr_t big_caller(int size, int check)
{
	volatile char pad[512];
	pad[0] = 0;
	return vla_leaf(size, check) + (uintptr_t)pad[0];
}

static NOINLINE void vla_alias(void)
{
	static uintptr_t (*const volatile callers[2])(int, int) = {big_caller, small_caller};
	int size = 4096, shift = (int)(small_caller(size, 0) - big_caller(size, 0));
	int sizes[2] = {size - shift, size};
	/* One call site, so that both stacks return to the same place: k hidden from the compiler,
	 * which would otherwise peel the loop. */
	for (int k = 0; k < 4 * keep; k++) {
		__asm__("" : "+r"(k));
		callers[k & 1](sizes[k & 1], 1 + (k >> 1));
	}
}

/* A frame that realigns the stack (an over-aligned local in a function that may be entered with
 * any alignment): its CFA comes from RBP, whatever RSP became. */
static NOINLINE __attribute__((force_align_arg_pointer)) int realigned(int depth)
{
	_Alignas(32) volatile char buf[32];
	buf[0] = (char)depth;
	if (depth == 0)
		ctt_check("realigned stack", 64);
	else
		realigned(depth - 1);
	return buf[0] + keep;
}

static __thread volatile sig_atomic_t nest_signal;

static void on_signal(int sig)
{
	/* The stack crosses __restore_rt: the walk reads the interrupted registers from its ucontext. */
	ctt_check("signal", 64);
	chain(3, 64);
	if (sig == SIGUSR1 && nest_signal) /* a signal in a handler, on the alternate stack: two frames */
		raise(SIGUSR2);
}

static NOINLINE int raise_here(int depth, int sig)
{
	if (depth == 0)
		raise(sig);
	else
		raise_here(depth - 1, sig);
	return keep;
}

/* Handlers run on an alternate stack for SIGUSR2: the walk jumps from it back to the thread's. */
static void install_handlers(void)
{
	static char altstack[1 << 16] __attribute__((aligned(16)));
	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof(altstack)};
	struct sigaction sa = {.sa_handler = on_signal};

	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_flags = SA_ONSTACK;
	sigaltstack(&ss, NULL);
	sigaction(SIGUSR2, &sa, NULL);
}

/* Calls of the allocator made while allocation_watch is set: ct_unwind must make none. */
extern void *__libc_malloc(size_t), *__libc_calloc(size_t, size_t), *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
static __thread int allocation_watch, allocations;

void *malloc(size_t n)
{
	allocations += allocation_watch;
	return __libc_malloc(n);
}
void *calloc(size_t n, size_t m)
{
	allocations += allocation_watch;
	return __libc_calloc(n, m);
}
void *realloc(void *p, size_t n)
{
	allocations += allocation_watch;
	return __libc_realloc(p, n);
}
void free(void *p)
{
	allocations += allocation_watch;
	__libc_free(p);
}

static NOINLINE int fast_walk_allocates(void)
{
	uintptr_t ips[64];
	int truncated;

	allocation_watch = 1;
	ctu_fast(ips, 64, &truncated);
	allocation_watch = 0;
	if (allocations)
		fprintf(stderr, "FAIL ct_unwind called the allocator %d times\n", allocations);
	return allocations != 0;
}

/* Walks from `depth` calls below one caller; returns ct_unwind_shared() and the frame count. */
static NOINLINE int walk_shares(int depth, int *n)
{
	if (depth > 0)
		return walk_shares(depth - 1, n) * keep;
	uintptr_t ips[64];
	int truncated;
	*n = ctu_fast(ips, 64, &truncated);
	return ctu_shared();
}

/* A walk from 3 calls down, then one from 1 call down, from one call site: the second differs from
 * the first only in its innermost frame (there walk_shares calls ct_unwind, where the first's
 * called itself), so it must take the rest from the memo. The checks verify what it takes. */
static NOINLINE int memo_shares(void)
{
	int n = 0, shared = 0;

	for (int i = 0, depth = 3; i < 2 * keep; i++, depth -= 2) /* not unrolled: one call site */
		shared = walk_shares(depth, &n);
	if (shared == n - 1)
		return 0;
	fprintf(stderr, "FAIL memo: the walk shared %d of its %d frames with the one before, not %d\n",
	        shared, n, n - 1);
	return 1;
}

/* ---- code with no unwind information, as a JIT writes it ---- */

typedef void jit_fn(void (*callback)(void), uintptr_t rbp);

/* push rbp; mov rbp, rsp (frame) or mov rbp, rsi (rbp = the second argument); call rdi; pop rbp; ret */
static jit_fn *make_jit(int frame, uintptr_t *page)
{
	const unsigned char code[] = {0x55, 0x48, 0x89, frame ? 0xe5 : 0xf5, 0xff, 0xd7, 0x5d, 0xc3};
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	jit_fn *fn = NULL;
	if (p == MAP_FAILED)
		return NULL;
	memcpy(p, code, sizeof(code));
	*page = (uintptr_t)p;
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC) == 0)
		memcpy(&fn, &p, sizeof(fn)); /* ISO C has no cast from data to function pointers */
	return fn;
}

static jit_fn *jit_frame, *jit_clobber;
static uintptr_t frame_page, clobber_page;

static void jit_callback(void)
{
	ctt_check("jit frame", 64);
}

/* A frame-pointer frame in code no module describes: stepped by the fast walk, like libunwind. */
static NOINLINE void through_jit(void)
{
	if (jit_frame)
		jit_frame(jit_callback, 0);
	keep = keep + 0;
}

/* The same code with RBP pointing just past the thread's stack, into a PROT_NONE page: a
 * frame-pointer step there would fault; the fast walk must stop at the JIT frame instead. */
static struct {
	int n, cut, truncated, last_in_jit;
} clobbered;

static void clobber_callback(void)
{
	uintptr_t ips[64];
	int truncated;
	unsigned long before = ctu_cuts();
	clobbered.n = ctu_fast(ips, 64, &truncated);
	clobbered.cut = ctu_cuts() != before;
	clobbered.truncated = truncated;
	clobbered.last_in_jit = clobbered.n > 0 && ips[clobbered.n - 1] - clobber_page < 4096;
}

static void *clobber_thread(void *guard)
{
	jit_clobber(clobber_callback, (uintptr_t)guard + 64);
	return NULL;
}

static int run_clobbered(void)
{
	const size_t size = 256 << 10;
	char *region = mmap(NULL, size + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_attr_t attr;
	pthread_t t;
	if (!jit_clobber || region == MAP_FAILED || mprotect(region + size, 4096, PROT_NONE) ||
	    pthread_attr_init(&attr) || pthread_attr_setstack(&attr, region, size) ||
	    pthread_create(&t, &attr, clobber_thread, region + size) || pthread_join(t, NULL))
		return fprintf(stderr, "FAIL clobbered RBP: setup\n"), 1;
	/* ips: the return into clobber_callback, then the one into the JIT code, and no further: the
	 * stack goes on (clobber_thread, start_thread), so the walk is cut short, marked truncated. */
	if (clobbered.n != 2 || !clobbered.cut || !clobbered.truncated || !clobbered.last_in_jit) {
		fprintf(stderr,
		        "FAIL clobbered RBP: %d frames, cut %d, truncated %d, last in the JIT code %d\n",
		        clobbered.n, clobbered.cut, clobbered.truncated, clobbered.last_in_jit);
		return 1;
	}
	printf("clobbered RBP: the walk stopped at the JIT frame, cut short and marked truncated\n");
	return 0;
}

/* longjmp out of deep frames: the memo of the walk made down there must not outlive them. */
static __thread jmp_buf jump_back;

static NOINLINE int jump_from(int depth)
{
	if (depth > 0)
		return jump_from(depth - 1) + keep;
	ctt_check("before longjmp", 64);
	if (keep)
		longjmp(jump_back, 1);
	return 0;
}

static NOINLINE void after_longjmp(void)
{
	if (setjmp(jump_back) == 0)
		jump_from(5);
	ctt_check("after longjmp", 64);
	chain(2, 64);
}

/* A context of its own (makecontext), one per thread: its walk ends at __start_context, the
 * outermost frame. */
static __thread ucontext_t main_context, other_context;
/* From the context's end to the main context's resumption: glibc's __start_context (both walks take
 * the word above its frame for one more frame; ct_unwind then marks the walk cut, libunwind ends it)
 * and the tail of setcontext (its CFA is based on RDX, which ct_unwind does not follow through a signal
 * frame), where a timer signal's checks have no single answer to compare (on_timer; seen in about 1
 * run in 20 of each variant on a loaded machine). */
static __thread volatile sig_atomic_t ending_context;

static void in_context(void)
{
	chain(3, 64);
	swapcontext(&other_context, &main_context);
	ctt_check("resumed context", 64);
	ending_context = 1;
}

static NOINLINE void on_other_stack(void)
{
	const size_t size = 64 << 10;
	void *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stack == MAP_FAILED)
		return;
	getcontext(&other_context);
	other_context.uc_stack.ss_sp = stack;
	other_context.uc_stack.ss_size = size;
	other_context.uc_link = &main_context;
	makecontext(&other_context, in_context, 0);
	swapcontext(&main_context, &other_context); /* runs in_context up to its swapcontext */
	ctt_check("back from the context", 64);
	swapcontext(&main_context, &other_context); /* ... and to its end */
	ending_context = 0;
	ctt_check("after the context ended", 64);
	munmap(stack, size);
}

static void scenarios(void)
{
	static const long v[6] = {1, 2, 3, 4, 5, 6};

	chain(1, 64);
	chain(6, 64);
	chain(6, 3);     /* truncated after 3 */
	chain(300, 64);  /* deep recursion, truncated */
	chain(300, 400); /* deep recursion, whole */
	heavy(4, v);
	vla(5, 17);
	vla_alias();
	realigned(2);
	raise_here(2, SIGUSR1);
	raise_here(1, SIGUSR2); /* on the alternate stack */
	nest_signal = 1;
	raise_here(1, SIGUSR1); /* ... and then SIGUSR2 from its handler */
	nest_signal = 0;
	chain(6, 64); /* the signals left no trace in the cache */
	through_jit();
	after_longjmp();
	on_other_stack();
}

/* Profiling signals land anywhere, in the middle of walks too: nested walks must not disturb them. */
static void on_timer(int sig, siginfo_t *info, void *context)
{
	/* In code with no unwind information, only a frame-pointer guess goes on, and at the JIT
	 * code's push or pop RBP is the caller's: libunwind guesses (and skips a frame), ct_unwind
	 * stops. Nothing to compare there. */
	uintptr_t ip = (uintptr_t)((const ucontext_t *)context)->uc_mcontext.gregs[REG_RIP];
	if (ip - frame_page < 4096 || ip - clobber_page < 4096 || ending_context)
		return;
	ctt_check("timer signal", 64);
}

static void interrupted_scenarios(void)
{
	struct sigaction sa = {.sa_sigaction = on_timer, .sa_flags = SA_RESTART | SA_SIGINFO};
	struct itimerval every = {{0, 200}, {0, 200}}, stop = {{0, 0}, {0, 0}};

	sigaction(SIGPROF, &sa, NULL);
	setitimer(ITIMER_PROF, &every, NULL);
	for (int i = 0; i < 100; i++)
		scenarios();
	setitimer(ITIMER_PROF, &stop, NULL);
}

static void *thread_main(void *arg)
{
	for (int i = 0; i < 200; i++) {
		scenarios();
		if (i % 50 == 0)
			ctu_invalidate();
	}
	return arg;
}

static int run_threads(int count)
{
	pthread_t t[8];
	for (int i = 0; i < count; i++)
		if (pthread_create(&t[i], NULL, thread_main, NULL))
			return -1;
	for (int i = 0; i < count; i++)
		pthread_join(t[i], NULL);
	return 0;
}

typedef int walker_fn(uintptr_t *, int, int *);

/* Walks from `depth` frames further down, so alternating depths defeats the memo of the last walk. */
static NOINLINE int walk_at(walker_fn *walker, int depth, uintptr_t *ips, int *truncated)
{
	if (depth > 0)
		return walk_at(walker, depth - 1, ips, truncated) * keep;
	return walker(ips, 64, truncated);
}

enum bench_stacks { SAME, ALTERNATING, RANDOM };

/* The depth of walk i: always 0, 0 and 2 in turn, or 0..15 at random like the live benchmark's
 * (tests/bench/live.c), whose consecutive stacks share a varying number of outer frames. */
static int bench_depth(enum bench_stacks stacks, long i)
{
	if (stacks != RANDOM)
		return stacks == ALTERNATING ? (int)(i & 1) * 2 : 0;
	uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull;
	return (int)((x ^ x >> 29) >> 60);
}

static double ns_per_walk(walker_fn *walker, long walks, enum bench_stacks stacks, int *frames)
{
	uintptr_t ips[64];
	int truncated;
	struct timespec a, b;

	double best = 0;

	*frames = walk_at(walker, 0, ips, &truncated);
	/* The fastest of 10 rounds: a round that other processes interrupted or slowed is not one. */
	for (long round = 0, per = walks / 10; round < 10; round++) {
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (long i = round * per; i < (round + 1) * per; i++)
			walk_at(walker, bench_depth(stacks, i), ips, &truncated);
		clock_gettime(CLOCK_MONOTONIC, &b);
		double ns = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / per;
		best = round == 0 || ns < best ? ns : best;
	}
	return best;
}

static NOINLINE int bench(int depth)
{
	if (depth > 0)
		return bench(depth - 1) * keep;
	int nf, na, nr, ns;
	double fast = ns_per_walk(ctu_bench, 1000000, SAME, &nf);
	double alt = ns_per_walk(ctu_bench, 1000000, ALTERNATING, &na);
	double rnd = ns_per_walk(ctu_bench, 1000000, RANDOM, &nr);
	double slow = ns_per_walk(ctu_slow, 200000, SAME, &ns);
	printf("bench: %d frames: ct_unwind %.1f ns/walk (same stack), %.1f ns/walk (alternating "
	       "stacks, %d/%d frames), %.1f ns/walk (random stacks, %d..%d frames); libunwind %.1f "
	       "ns/walk; cut walks %lu\n",
	       nf, fast, alt, na, na + 2, rnd, nr, nr + 15, slow, ctu_cuts());
	return nf == ns && fast < slow && alt < slow && rnd < slow ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "bench") == 0)
		return bench(3);
	install_handlers();
	jit_frame = make_jit(1, &frame_page);
	jit_clobber = make_jit(0, &clobber_page);
	if (!jit_frame || !jit_clobber)
		return fprintf(stderr, "FAIL: no executable page for the JIT code\n"), 1;
	for (int i = 0; i < 3; i++)
		scenarios();
	ctu_invalidate();
	scenarios();
	if (run_threads(4))
		return 1;
	interrupted_scenarios();
	ctu_invalidate(); /* the cold path (rule computation) must not allocate either */
	int bad = fast_walk_allocates() | run_clobbered() | memo_shares();
	return ctt_report(argv[0]) || bad;
}
