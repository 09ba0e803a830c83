/* SPDX-License-Identifier: MIT */
/* Blocks held only from shared memory, as pre-forking servers and programs that share buffers keep
 * them: one pointer each in a shared anonymous mapping (named /dev/zero by the kernel), a memfd's
 * mapping, POSIX shared memory (/dev/shm) and SysV shared memory, the last two removed after the
 * mapping (their memory lives while mapped). memcheck reads them all: 100 + 200 + 300 + 400 bytes
 * still reachable, and one 50-byte block definitely lost. The exit scan read only memory no file
 * names: it said the four were definitely lost, and --check failed the build. Exit 0. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>

#define SIZE 65536

static void **shared(int fd)
{
	if (fd >= 0 && ftruncate(fd, SIZE) < 0)
		return NULL;
	void **p =
	    mmap(NULL, SIZE, PROT_READ | PROT_WRITE, fd < 0 ? MAP_SHARED | MAP_ANONYMOUS : MAP_SHARED, fd, 0);
	if (fd >= 0)
		close(fd);
	return p == MAP_FAILED ? NULL : p;
}

int main(void)
{
	char name[64];
	snprintf(name, sizeof(name), "/ctrack-scan-shared-%d", (int)getpid());
	void **anon = shared(-1), **memfd = shared(memfd_create("ctrack-scan-shared", MFD_CLOEXEC));
	void **posix = shared(shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600));
	shm_unlink(name);
	int id = shmget(IPC_PRIVATE, SIZE, IPC_CREAT | 0600);
	void **sysv = id >= 0 ? shmat(id, NULL, 0) : NULL;
	if (id >= 0)
		shmctl(id, IPC_RMID, NULL);
	if (!anon || !memfd || !posix || !sysv || sysv == (void *)-1)
		return 1;
	anon[1] = malloc(100);
	memfd[2] = malloc(200);
	posix[3] = malloc(300);
	sysv[4] = malloc(400);
	void *lost = malloc(50);
	__asm__ volatile("" : : "r"(lost) : "memory"); /* allocated, then forgotten */
	return 0;
}
