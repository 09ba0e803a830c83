/* SPDX-License-Identifier: MIT */
/* A program annotated for LeakSanitizer, as code bases are: its calls declared weak, so it builds
 * and runs without a sanitizer. Under ctrack it must get LSan's verdicts. Modes (argv[1]):
 *  - "plain": a malloc(1337) lost (definitely lost); a malloc(400) lost while the check is disabled
 *    (__lsan_disable) and a malloc(274) lost but ignored (__lsan_ignore_object), which holds the only
 *    pointer to a malloc(99): none of those is a leak for LSan. A read-only anonymous page (no
 *    program's mapping ctrack scans on its own) registered as a root region holds the only pointer to
 *    a malloc(55): reachable. Another holds a malloc(66), registered and unregistered again: lost.
 *    LSan: 1,403 bytes lost in 2 blocks (1337 + 66).
 *  - "recoverable": __lsan_do_recoverable_leak_check() with nothing lost (prints 0), with a
 *    malloc(78) lost but ignored (prints 0), then with a malloc(77) lost (prints 1).
 *  - "final": __lsan_do_leak_check() with nothing lost; then a malloc(88) lost after it, which LSan
 *    never checks (its exit check does not run): the verdict passes.
 * Without a shim exporting the interface the calls are skipped (the weak symbols are NULL). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void __lsan_disable(void) __attribute__((weak));
void __lsan_enable(void) __attribute__((weak));
void __lsan_ignore_object(const void *p) __attribute__((weak));
void __lsan_register_root_region(const void *p, size_t size) __attribute__((weak));
void __lsan_unregister_root_region(const void *p, size_t size) __attribute__((weak));
void __lsan_do_leak_check(void) __attribute__((weak));
int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

static void *volatile sink;

static __attribute__((noinline)) void lose(size_t size)
{
	sink = malloc(size);
	sink = NULL;
}

/* A read-only anonymous page whose first word is a malloc(size), registered as a root region (and
 * unregistered again with unregister). */
static __attribute__((noinline)) int root_page(size_t size, int unregister)
{
	void **page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return -1;
	page[0] = malloc(size);
	if (mprotect(page, 4096, PROT_READ))
		return -1;
	if (__lsan_register_root_region)
		__lsan_register_root_region(page, 4096);
	if (unregister && __lsan_unregister_root_region)
		__lsan_unregister_root_region(page, 4096);
	return 0;
}

static int plain(void)
{
	lose(1337);
	if (__lsan_disable)
		__lsan_disable();
	lose(400);
	if (__lsan_enable)
		__lsan_enable();
	void **ignored = malloc(274);
	memset(ignored, 0, 274);
	ignored[0] = malloc(99);
	if (__lsan_ignore_object)
		__lsan_ignore_object(ignored);
	ignored = NULL;
	return root_page(55, 0) || root_page(66, 1);
}

static int recoverable(void)
{
	if (!__lsan_do_recoverable_leak_check)
		return 0;
	setvbuf(stdout, NULL, _IONBF, 0); /* LSan ends a leaking program without flushing stdio */
	printf("%d\n", __lsan_do_recoverable_leak_check());
	void **p = malloc(78);
	if (__lsan_ignore_object)
		__lsan_ignore_object(p);
	sink = p;
	p = NULL;
	sink = NULL;
	printf("%d\n", __lsan_do_recoverable_leak_check());
	lose(77);
	printf("%d\n", __lsan_do_recoverable_leak_check());
	return 0;
}

static int final(void)
{
	if (__lsan_do_leak_check)
		__lsan_do_leak_check();
	lose(88);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "plain";
	if (!strcmp(mode, "recoverable"))
		return recoverable();
	if (!strcmp(mode, "final"))
		return final();
	return plain();
}
