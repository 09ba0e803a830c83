/* SPDX-License-Identifier: MIT */
/* What ctrack --sample is measured against (tests/e2e/test_sample.py): sites whose figures are known
 * exactly, and the frees, reallocs, threads and fork a sampler must keep consistent. Output goes
 * through write(2) only, so stdio allocates nothing.
 *
 * `sample_sites sites`, one thread, three sites (each a noinline function: frame 0 of its stack):
 *   small_site: 300000 blocks of 48 bytes, each freed at once (300000 temporary allocations);
 *   mid_site:   20000 blocks of 2000 bytes, all live together, freed after big_site's;
 *   big_site:   200 blocks of 262144 bytes, live together with mid_site's, then 150 freed and 50
 *               left leaked at exit (13107200 bytes).
 *   gap_site:   100000 blocks of 48 bytes, none temporary: before each is freed comes another
 *               allocation (filler_site's) or the free of another block (filler_site's last);
 *   filler_site: 100001 blocks of 48 bytes, 50000 of them temporary (those allocated between a
 *               gap_site block and its free; the others live until after the next gap_site block).
 *   The peak is when the last big block is allocated: 20000 * 2000 + 200 * 262144 = 92428800 bytes
 *   (plus the C runtime's own few blocks). The program makes no other allocation.
 *
 * `sample_sites churn`, four threads, each 20000 rounds of: a block of a size from a fixed cycle
 *   (16 bytes to 64 KiB) handed to the next thread, which reallocs it (bigger, then smaller) and frees
 *   it; realloc(NULL) and realloc to 0 among them; then the main thread forks, and the child frees
 *   the blocks it inherited and makes and frees its own. Every block the program allocates is freed:
 *   with sampling, none may be reported leaked nor any free invalid or unmatched. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SMALL_N 300000
#define SMALL_SIZE 48
#define MID_N 20000
#define MID_SIZE 2000
#define BIG_N 200
#define BIG_SIZE 262144
#define BIG_LEAKED 50
#define GAP_N 100000

static void *volatile sink; /* keeps the compiler from pairing up malloc and free */

static __attribute__((noinline)) void *small_site(void)
{
	return malloc(SMALL_SIZE);
}

static __attribute__((noinline)) void *mid_site(void)
{
	return malloc(MID_SIZE);
}

static __attribute__((noinline)) void *big_site(void)
{
	return malloc(BIG_SIZE);
}

static __attribute__((noinline)) void *gap_site(void)
{
	return malloc(SMALL_SIZE);
}

static __attribute__((noinline)) void *filler_site(void)
{
	return malloc(SMALL_SIZE);
}

static void *mid[MID_N], *big[BIG_N];

/* Blocks a sampler sees freed by the thread's next recorded event though the thread's next call came
 * between: an allocation (odd rounds) or a free (even rounds) that sampling nearly always leaves out. */
static void gaps(void)
{
	void *prev = filler_site();
	for (int i = 0; i < GAP_N; i++) {
		void *p = gap_site();
		if (i & 1) {
			sink = filler_site(); /* temporary */
			free(sink);
		} else {
			free(prev);
		}
		free(p);
		if (!(i & 1))
			prev = filler_site(); /* lives past the next gap_site allocation */
	}
	free(prev);
}

static int sites(void)
{
	for (int i = 0; i < SMALL_N; i++) {
		sink = small_site();
		free(sink);
	}
	gaps();
	for (int i = 0; i < MID_N; i++)
		mid[i] = mid_site();
	for (int i = 0; i < BIG_N; i++)
		big[i] = big_site();
	for (int i = BIG_LEAKED; i < BIG_N; i++)
		free(big[i]);
	for (int i = 0; i < MID_N; i++)
		free(mid[i]);
	return 0;
}

/* ---- churn ---- */

#define THREADS 4
#define ROUNDS 20000
#define SLOTS 64

struct mailbox {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	void *slot[SLOTS];
	size_t size[SLOTS];
	unsigned head, tail;
};
static struct mailbox box[THREADS];

static size_t cycle_size(unsigned i)
{
	static const size_t sizes[] = {16, 100, 700, 4000, 20000, 65536, 33, 1500};
	return sizes[i % (sizeof(sizes) / sizeof(sizes[0]))];
}

static void post(struct mailbox *b, void *p, size_t size)
{
	pthread_mutex_lock(&b->lock);
	while (b->tail - b->head == SLOTS)
		pthread_cond_wait(&b->cond, &b->lock);
	b->slot[b->tail % SLOTS] = p;
	b->size[b->tail % SLOTS] = size;
	b->tail++;
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

static void *take(struct mailbox *b, size_t *size)
{
	pthread_mutex_lock(&b->lock);
	while (b->tail == b->head)
		pthread_cond_wait(&b->cond, &b->lock);
	void *p = b->slot[b->head % SLOTS];
	*size = b->size[b->head % SLOTS];
	b->head++;
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
	return p;
}

/* Another thread's block: grown, shrunk, freed (by realloc to 0 every 16th). */
static void finish(void *p, size_t size, unsigned i)
{
	p = realloc(p, size * 2 + 1);
	memset(p, 1, size);
	p = realloc(p, size / 2 + 1);
	if (i % 16 == 0)
		p = realloc(p, 0); /* glibc frees it and returns NULL */
	free(p);
}

static void *worker(void *arg)
{
	unsigned me = (unsigned)(size_t)arg;
	for (unsigned i = 0; i < ROUNDS; i++) {
		size_t size = cycle_size(i + me);
		void *p = i % 8 == 0 ? realloc(NULL, size) : i % 8 == 1 ? calloc(1, size) : malloc(size);
		memset(p, 2, size);
		post(&box[(me + 1) % THREADS], p, size);
		size_t got;
		void *q = take(&box[me], &got);
		finish(q, got, i);
	}
	return NULL;
}

static int churn(void)
{
	pthread_t t[THREADS];
	for (unsigned i = 0; i < THREADS; i++) {
		pthread_mutex_init(&box[i].lock, NULL);
		pthread_cond_init(&box[i].cond, NULL);
	}
	for (unsigned i = 1; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)(size_t)i);
	worker(0);
	for (unsigned i = 1; i < THREADS; i++)
		pthread_join(t[i], NULL);
	void *kept[256];
	for (unsigned i = 0; i < 256; i++)
		kept[i] = malloc(cycle_size(i) * 4);
	pid_t pid = fork();
	if (pid == 0) {
		for (unsigned i = 0; i < 256; i++)
			free(kept[i]); /* the parent's blocks, inherited */
		for (unsigned i = 0; i < 20000; i++) {
			void *p = malloc(cycle_size(i));
			p = realloc(p, cycle_size(i + 3));
			free(p);
		}
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	for (unsigned i = 0; i < 256; i++)
		free(kept[i]);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	int rc = argc > 1 && !strcmp(argv[1], "sites")   ? sites()
	         : argc > 1 && !strcmp(argv[1], "churn") ? churn()
	                                                 : 2;
	if (!rc && write(1, "done\n", 5) != 5)
		rc = 1;
	return rc;
}
