/* SPDX-License-Identifier: MIT */
/* The shim's own UndefinedBehaviorSanitizer runtime, built into libctrack.so by -Dsanitize=true only:
 * the handlers gcc's -fsanitize=undefined -fno-sanitize-recover=undefined checks call, each writing
 * "libctrack.so: UndefinedBehaviorSanitizer: WHAT at FILE:LINE:COLUMN" on stderr, then aborting.
 *
 * Why not libubsan: loaded as the shim's dependency it would change what the traced program does,
 * which the e2e tests (rightly) compare with valgrind: it needs libstdc++, whose start-up mallocs a
 * 72 KiB exception pool in the program's name, and both have a PT_TLS segment, so glibc callocs
 * every thread's TLS vector larger (threadslot.h). clang's -fsanitize-minimal-runtime has neither,
 * but its handlers have other names (and give no source location), and the project's compiler is
 * gcc. So the shim brings the few handlers itself: no TLS, no malloc, no stdio, nothing loaded;
 * the link uses -z defs, so a check whose handler is missing here fails the build, not a run.
 * Hidden like every name of the shim: a traced program that loads libubsan keeps its own. */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "text.h"

/* glibc's sigaction under its other exported name (crash.c): never the shim's sigaction hook. */
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);

/* What every check passes first (its data begins with it): the UBSan ABI's SourceLocation. */
struct ub_location {
	const char *file;
	uint32_t line, column;
};

/* Says what went wrong where, then aborts with SIGABRT at its default action: the crash handler
 * (crash.c) would have the writer flush, and the writer may be the thread that failed. */
__attribute__((noreturn, cold, no_sanitize("undefined"))) static void fail(const char *what,
                                                                           const struct ub_location *at)
{
	char buf[512];
	struct ct_text t = ct_text_in(buf, sizeof(buf));
	ct_text_add(&t, "libctrack.so: UndefinedBehaviorSanitizer: ");
	ct_text_add(&t, what);
	ct_text_add(&t, " at ");
	ct_text_add(&t, at && at->file ? at->file : "?");
	ct_text_add(&t, ":");
	ct_text_add_uint(&t, at ? at->line : 0);
	ct_text_add(&t, ":");
	ct_text_add_uint(&t, at ? at->column : 0);
	ct_text_add(&t, "\n");
	ssize_t n = write(STDERR_FILENO, buf, t.len);
	(void)n; /* nowhere else to say it */
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigemptyset(&dfl.sa_mask);
	__sigaction(SIGABRT, &dfl, NULL);
	abort();
}

/* Each handler by the number of pointer arguments gcc passes (its sanitizer.def), the data first.
 * Hidden by the shim's -fvisibility=hidden; gcc declares them itself (noreturn, and so on). */
#define HANDLER1(name, what) \
	void __ubsan_handle_##name(void *data) \
	{ \
		fail(what, data); \
	}
#define HANDLER2(name, what) \
	void __ubsan_handle_##name(void *data, void *a) \
	{ \
		(void)a; \
		fail(what, data); \
	}
#define HANDLER3(name, what) \
	void __ubsan_handle_##name(void *data, void *a, void *b) \
	{ \
		(void)a; \
		(void)b; \
		fail(what, data); \
	}

HANDLER1(builtin_unreachable, "__builtin_unreachable reached")
HANDLER1(invalid_builtin_abort, "invalid argument to a builtin (ctz or clz of 0)")
HANDLER1(nonnull_arg_abort, "null pointer passed as an argument declared never null")
HANDLER2(type_mismatch_v1_abort, "null, misaligned or too small object accessed")
HANDLER2(negate_overflow_abort, "signed integer overflow in a negation")
HANDLER2(out_of_bounds_abort, "array index out of bounds")
HANDLER2(vla_bound_not_positive_abort, "variable length array of bound not positive")
HANDLER2(load_invalid_value_abort, "invalid value loaded (bool or enum)")
HANDLER2(float_cast_overflow_abort, "floating-point value out of its integer type's range")
HANDLER3(add_overflow_abort, "signed integer overflow in an addition")
HANDLER3(sub_overflow_abort, "signed integer overflow in a subtraction")
HANDLER3(mul_overflow_abort, "signed integer overflow in a multiplication")
HANDLER3(divrem_overflow_abort, "division by zero or signed overflow in a division")
HANDLER3(shift_out_of_bounds_abort, "shift exponent or base out of bounds")
HANDLER3(pointer_overflow_abort, "pointer arithmetic overflowed")

/* Its data is the attribute's location; the failing return's is the second argument. */
void __ubsan_handle_nonnull_return_v1_abort(void *data, void *at)
{
	(void)data;
	fail("null pointer returned from a function declared never to return null", at);
}
