/* SPDX-License-Identifier: MIT */
/* A program that serves page faults itself (userfaultfd, as QEMU's postcopy migration and some
 * databases do): 64 MiB registered for missing pages, of which it touches one, a thread that serves
 * the faults, then a 100-byte block lost before it returns. The exit scan stops that thread, so any
 * read of an untouched page of the region would wait for ever: the program never ended under ctrack,
 * which read the top of every anonymous mapping for a dead thread's control block. Definitely lost:
 * 100 bytes in 1 block (memcheck cannot run it: valgrind has no userfaultfd). Prints the byte it read
 * through the handler (7). Exit 77 when the kernel refuses a userfaultfd (a seccomp filter,
 * vm.unprivileged_userfaultfd), 0 otherwise. */
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define REGION ((size_t)64 << 20)

static int uffd;

/* Fills each missing page with 7s. */
static void *serve(void *arg)
{
	static char page[4096];
	(void)arg;
	for (int i = 0; i < 4096; i++)
		page[i] = 7;
	for (;;) {
		struct uffd_msg msg;
		if (read(uffd, &msg, sizeof(msg)) != sizeof(msg) || msg.event != UFFD_EVENT_PAGEFAULT)
			continue;
		struct uffdio_copy copy = {.dst = msg.arg.pagefault.address & ~(__u64)4095,
		                           .src = (__u64)(uintptr_t)page,
		                           .len = 4096};
		ioctl(uffd, UFFDIO_COPY, &copy);
	}
	return NULL;
}

int main(void)
{
	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
	if (uffd < 0)
		uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	struct uffdio_api api = {.api = UFFD_API};
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api) < 0)
		return 77;
	char *region = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct uffdio_register reg = {.range = {(__u64)(uintptr_t)region, REGION},
	                              .mode = UFFDIO_REGISTER_MODE_MISSING};
	if (region == MAP_FAILED || ioctl(uffd, UFFDIO_REGISTER, &reg) < 0)
		return 77;
	pthread_t t;
	if (pthread_create(&t, NULL, serve, NULL))
		return 1;
	printf("%d\n", region[4096]); /* one page through the handler */
	void *p = malloc(100);
	__asm__ volatile("" : : "r"(p) : "memory"); /* allocated, then forgotten */
	return 0;
}
