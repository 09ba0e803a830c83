/* SPDX-License-Identifier: MIT */
/* The writer thread: drains the per-thread rings, maps each freed address to the allocation it
 * ends (so the trace holds no addresses), interns (size, stack) pairs, and streams the records of
 * format.h through zstd into the trace file. It alone owns the file, the zstd context and its maps.
 * Cross-thread order: events on one address are applied in the order of their sequence numbers
 * (shim.h), so a block freed by one thread and handed out again to another is never confused. */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "ctrack/format.h"
#include "shim.h"

#define OUT_COMPRESS_AT (256u << 10)
#define TIME_STEP_NS 1000000ull     /* TIME records: 1 ms resolution */
#define SAMPLE_NS 100000000ull      /* RSS samples: every 100 ms ... */
#define SAMPLE_BYTES (4ull << 20)   /* ... and every 4 MiB allocated */
#define FLUSH_NS 100000000ull       /* the file is at most 100 ms behind */
#define IDLE_WAIT_NS 2000000        /* an idle writer looks again after 2 ms */
#define BATCH_WAIT_NS 200000        /* a writer with little to do lets events pile up for 0.2 ms: */
#define BATCH_EVENTS 4096           /* reading ring heads less often keeps them in their threads' caches */
#define STALL_NS 2000000000ull      /* 2 s without progress: a sequence number never came */

enum { DONE, BLOCKED };
enum { REQ_NONE, REQ_SYNC, REQ_EXEC, REQ_FINISH };

static struct {
	int fd;
	int failed;            /* the file cannot be written: keep draining, write nothing */
	ZSTD_CCtx *zc;
	uint8_t *zbuf;
	size_t zcap;
	struct ct_out out;
	struct ct_live_map live;
	struct ct_info_map infos;
	uint32_t *expect;       /* per sequence bucket: the number of the next event to apply */
	uint64_t stalled_since;  /* when rings started waiting with nothing else to do, or 0 */
	int stuck;              /* the last pass left a ring waiting for a sequence number */
	struct ct_stream late;  /* events after the thread stopped (late destructors) */
	uint32_t frames;        /* stack nodes written so far */
	uint32_t alloc_records; /* ALLOC records written so far (mod 2^32), to name blocks by age */
	uintptr_t last_ip;
	uint64_t start_ns, time_us, last_time_ns, last_sample_ns, last_flush_ns, bytes_since_sample;
	uint64_t allocations, frees, bytes, unmatched, lost;
	dev_t dev;              /* the trace file's identity */
	ino_t ino;
	pthread_t thread;
	int running;
	_Atomic int wake, sleeping;
	_Atomic uint32_t req, done;
	int req_op;
	const char *req_path;
} w = {.fd = -1};

static pthread_mutex_t req_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t late_lock = PTHREAD_MUTEX_INITIALIZER;

uint64_t ct_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ALLOC, FREE and TEMP records, in their short form. */
static void emit_event(unsigned tag, uint64_t info)
{
	struct ct_out *o = &w.out;
	if (ct_out_reserve(o, 1 + CT_VARINT_MAX) == 0)
		o->len += ct_put_short_event(o->buf + o->len, tag, info);
}

static void emit(unsigned tag, uint64_t v)
{
	struct ct_out *o = &w.out;
	if (ct_out_reserve(o, 1 + CT_VARINT_MAX) < 0)
		return;
	o->buf[o->len++] = (uint8_t)tag;
	o->len += ct_put_varint(o->buf + o->len, v);
}

/* ---- the file ---- */

/* Programs close descriptors they did not open (daemons close them all) and may get the number
 * back for a file of their own: write only while the descriptor is still the trace file. */
static int still_ours(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && st.st_dev == w.dev && st.st_ino == w.ino;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	if (n && !still_ours(fd))
		return -1;
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Compresses the record buffer; flush and end also push zstd's buffered blocks to the file. */
static void compress(ZSTD_EndDirective mode)
{
	ZSTD_inBuffer in = {w.out.buf, w.out.len, 0};
	while (!w.failed) {
		ZSTD_outBuffer out = {w.zbuf, w.zcap, 0};
		size_t left = ZSTD_compressStream2(w.zc, &out, &in, mode);
		if (ZSTD_isError(left) || write_all(w.fd, w.zbuf, out.pos) < 0) {
			w.failed = 1;
			atomic_store(&ct_state, CT_OFF);
			break;
		}
		if (mode == ZSTD_e_continue ? in.pos == in.size : left == 0)
			break;
	}
	w.out.len = 0;
}

/* ---- maps ---- */

static int maps_init(void)
{
	if (!w.expect)
		w.expect = ct_arena_map(CT_SEQ_BUCKETS * sizeof(*w.expect));
	if (!w.expect || ct_info_init(&w.infos, 1u << 14) < 0 || ct_live_init(&w.live, 1u << 16) < 0)
		return -1;
	/* A forked child starts where the counters are: numbers taken before the fork are not its. */
	for (uint32_t b = 0; b < CT_SEQ_BUCKETS; b++)
		w.expect[b] = atomic_load_explicit(&ct_seq[b], memory_order_relaxed);
	return 0;
}

/* ---- stacks and modules ---- */

static void emit_frames(void)
{
	uint32_t n = ct_stacks_count();
	int synced = 0;
	struct ct_out *o = &w.out;
	for (; w.frames < n; w.frames++) {
		uint32_t parent;
		uintptr_t ip;
		ct_stacks_node(w.frames, &parent, &ip);
		if (!synced && !ct_modules_covers(ip)) {
			ct_modules_sync(o);
			synced = 1;
		}
		if (ct_out_reserve(o, 1 + 2 * CT_VARINT_MAX) < 0)
			return;
		o->buf[o->len++] = CT_REC_FRAME;
		o->len += ct_put_varint(o->buf + o->len, parent);
		o->len += ct_put_varint(o->buf + o->len, ct_zigzag((int64_t)(ip - w.last_ip)));
		w.last_ip = ip;
	}
}

/* The id of (size, stack); a new pair is written as an INFO record first (after its frames). */
static uint32_t intern_info(uint64_t size, uint32_t stack)
{
	int is_new;
	uint32_t id = ct_info_intern(&w.infos, size, stack, &is_new);
	if (!is_new)
		return id;
	if (stack >= w.frames)
		emit_frames();
	struct ct_out *o = &w.out;
	if (ct_out_reserve(o, 1 + 2 * CT_VARINT_MAX) == 0) {
		o->buf[o->len++] = CT_REC_INFO;
		o->len += ct_put_varint(o->buf + o->len, size);
		o->len += ct_put_varint(o->buf + o->len, stack);
	}
	return id;
}

/* ---- events ---- */

/* A block, as the live map and the streams keep it: its alloc info in the low 32 bits and, once
 * its ALLOC record is written, that record's number (w.alloc_records after it) in the high 32. */
static uint32_t block_info(uint64_t b) { return (uint32_t)b; }

/* Writes the ALLOC record of block b; returns b with the record's number. */
static uint64_t write_alloc(uint64_t b)
{
	emit_event(CT_REC_ALLOC, block_info(b));
	return block_info(b) | (uint64_t)++w.alloc_records << 32;
}

/* Writes the end of written block b: RECENT when its ALLOC is among the last CT_RECENT_WINDOW,
 * which is most frees (a program frees what it just allocated), else FREE. */
static void write_free(uint64_t b)
{
	uint32_t age = w.alloc_records - (uint32_t)(b >> 32) + 1;
	struct ct_out *o = &w.out;
	if (age < 1 || age > CT_RECENT_WINDOW) {
		emit_event(CT_REC_FREE, block_info(b));
		return;
	}
	if (ct_out_reserve(o, 1) == 0)
		o->len += ct_put_recent(o->buf + o->len, age);
}

/* Each stream's latest allocation ("held") lives only in the stream until the stream's next
 * event decides its fate; the live map holds every other live block. So a temporary allocation
 * never touches the map, and most allocations in a churn are temporaries. */

/* Puts a block into the live map. If its address is there already, the allocator handed it out
 * again, so the old block was freed where ctrack could not see: end it. */
static void live_add(uint64_t p, uint64_t b)
{
	uint64_t *v = ct_live_find(&w.live, p);
	if (!v) {
		ct_live_insert(&w.live, p, b);
		return;
	}
	write_free(*v);
	*v = b;
	w.frees++;
	w.lost++;
}

static void flush_held(struct ct_stream *s)
{
	if (!s->has_held)
		return;
	if (!s->held_written)
		s->held = write_alloc(s->held);
	live_add(s->held_ptr, s->held);
	s->has_held = s->held_written = 0;
}

/* Before a flush to the file: write held allocations now, so a killed process loses none, but
 * keep them held, so a free as the thread's next event still counts them temporary (TEMPFREE). */
static void write_held(struct ct_stream *s)
{
	if (s->has_held && !s->held_written) {
		s->held = write_alloc(s->held);
		s->held_written = 1;
	}
}

/* The stream, other than s, whose held allocation is p: a block freed by another thread before
 * its own thread did anything else. Rare, so a scan. */
static struct ct_stream *held_elsewhere(const struct ct_stream *s, uint64_t p)
{
	for (struct ct_ring *r = ct_ring_list(); r; r = r->next)
		if (&r->st != s && r->st.has_held && r->st.held_ptr == p)
			return &r->st;
	return &w.late != s && w.late.has_held && w.late.held_ptr == p ? &w.late : NULL;
}

/* Block b ends: now, or when the realloc it belongs to completes. */
static void end_block(struct ct_stream *s, uint64_t b, int temp, int written, int as_pending)
{
	if (as_pending) {
		s->pending = b;
		s->pending_temp = (uint8_t)temp;
		s->pending_written = (uint8_t)written;
		s->has_pending = 1;
		return;
	}
	if (temp)
		if (written)
			emit(CT_REC_TEMPFREE, block_info(b));
		else
			emit_event(CT_REC_TEMP, block_info(b));
	else
		write_free(b);
	w.frees++;
}

/* The realloc that the current event completes has freed its old block. */
static void settle_pending(struct ct_stream *s)
{
	if (!s->has_pending)
		return;
	s->has_pending = 0;
	end_block(s, s->pending, s->pending_temp, s->pending_written, 0);
}

static void on_alloc(struct ct_stream *s, uint64_t p, uint64_t size, uint32_t stack)
{
	settle_pending(s);
	flush_held(s);
	s->held_ptr = p;
	s->held = intern_info(size, stack);
	s->has_held = 1;
	w.allocations++;
	w.bytes += size;
	w.bytes_since_sample += size;
}

/* free(p), or realloc(p, n) starting (as_pending: its old block ends when the realloc does). */
static void on_free(struct ct_stream *s, uint64_t p, int as_pending)
{
	if (s->has_held && s->held_ptr == p) { /* freed by the thread's very next event */
		int written = s->held_written;
		s->has_held = s->held_written = 0;
		end_block(s, s->held, 1, written, as_pending);
		return;
	}
	flush_held(s);
	uint64_t *v = ct_live_find(&w.live, p);
	if (v) {
		uint64_t b = *v;
		ct_live_erase(&w.live, v);
		end_block(s, b, 0, 0, as_pending);
		return;
	}
	struct ct_stream *o = held_elsewhere(s, p);
	if (!o) {
		w.unmatched++; /* allocated before ctrack started, or by a path it cannot see */
		return;
	}
	if (!o->held_written)
		o->held = write_alloc(o->held);
	o->has_held = o->held_written = 0;
	end_block(s, o->held, 0, 0, as_pending);
}

/* The realloc failed: its old block is live again, exactly as before. */
static void on_realloc_failed(struct ct_stream *s, uint64_t p)
{
	if (!s->has_pending)
		return;
	s->has_pending = 0;
	if (!s->pending_temp) {
		live_add(p, s->pending);
		return;
	}
	flush_held(s);
	s->held_ptr = p;
	s->held = s->pending;
	s->held_written = s->pending_written;
	s->has_held = 1;
}

static unsigned event_words(uint64_t w0)
{
	unsigned kind = CT_EV_KIND(w0);
	return kind == CT_EV_ALLOC ? 3 : kind == CT_EV_RFREE ? 1 : 2;
}

static uint32_t event_seq(const uint64_t *ev)
{
	return CT_EV_KIND(ev[0]) == CT_EV_ALLOC ? (uint32_t)(ev[2] >> 32) : (uint32_t)ev[1];
}

/* Applies one event. With ordered set, an event that carries a sequence number waits (BLOCKED)
 * until every earlier event on its bucket has been applied. */
static int process(struct ct_stream *s, const uint64_t *ev, int ordered)
{
	uint64_t p = CT_EV_PTR(ev[0]);
	unsigned kind = CT_EV_KIND(ev[0]);
	if (kind != CT_EV_RFREE) {
		uint32_t *next = &w.expect[ct_seq_bucket(p)];
		int32_t ahead = (int32_t)(event_seq(ev) - *next);
		if (ordered && ahead > 0)
			return BLOCKED;
		if (ahead >= 0) /* behind: a number skipped after a stall finally came; apply as is */
			*next = event_seq(ev) + 1;
	}
	switch (kind) {
	case CT_EV_ALLOC:
		on_alloc(s, p, ev[1], (uint32_t)ev[2]);
		break;
	case CT_EV_FREE:
		on_free(s, p, 0);
		break;
	case CT_EV_RBEGIN:
		on_free(s, p, 1);
		break;
	case CT_EV_RFAIL:
		on_realloc_failed(s, p);
		break;
	case CT_EV_RFREE:
		settle_pending(s);
		break;
	}
	return DONE;
}

static void fetch(const struct ct_ring *r, uint64_t t, uint64_t ev[3])
{
	ev[0] = r->words[t & CT_RING_MASK];
	for (unsigned i = 1; i < event_words(ev[0]); i++)
		ev[i] = r->words[(t + i) & CT_RING_MASK];
}

static int drain(struct ct_ring *r, int ordered)
{
	uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
	int n = 0;
	r->blocked = 0;
	while (t < h) {
		uint64_t ev[3];
		fetch(r, t, ev);
		if (process(&r->st, ev, ordered) == BLOCKED) {
			r->blocked = 1;
			break;
		}
		ordered = 1;
		t += event_words(ev[0]);
		if ((++n & 4095) == 0)
			atomic_store_explicit(&r->tail, t, memory_order_release);
	}
	atomic_store_explicit(&r->tail, t, memory_order_release);
	return n;
}

static void announce(struct ct_ring *r, int state)
{
	size_t at = ct_out_begin_framed(&w.out, CT_REC_THREAD);
	ct_out_varint(&w.out, (uint64_t)r->tid);
	uint8_t st = (uint8_t)state;
	ct_out_bytes(&w.out, &st, 1);
	ct_out_end_framed(&w.out, at);
}

static void retire(struct ct_ring *r)
{
	flush_held(&r->st);
	settle_pending(&r->st);
	if (r->announced)
		announce(r, 1);
	r->announced = r->blocked = 0;
	atomic_store_explicit(&r->state, CT_RING_FREE, memory_order_release);
}

/* One pass over all rings. A ring that waits for a sequence number that never comes (a thread
 * that died between taking it and publishing) is let through after STALL_NS without progress. */
static int pump(void)
{
	emit_frames();
	int progress = 0, stuck = 0;
	int force = w.stalled_since && ct_now_ns() - w.stalled_since > STALL_NS;
	for (struct ct_ring *r = ct_ring_list(); r; r = r->next) {
		int st = atomic_load_explicit(&r->state, memory_order_acquire);
		if (st == CT_RING_FREE || st == CT_RING_CLAIMED)
			continue;
		if (!r->announced) {
			announce(r, 0);
			r->announced = 1;
		}
		progress += drain(r, !(force && r->blocked));
		if (r->blocked)
			stuck = 1;
		else if (st == CT_RING_DEAD && atomic_load(&r->head) == atomic_load(&r->tail))
			retire(r);
	}
	if (progress || !stuck || force)
		w.stalled_since = 0;
	else if (!w.stalled_since)
		w.stalled_since = ct_now_ns();
	w.stuck = stuck;
	return progress;
}

static void flush_all_held(void)
{
	for (struct ct_ring *r = ct_ring_list(); r; r = r->next) {
		flush_held(&r->st);
		settle_pending(&r->st);
	}
}

/* ---- time, memory samples, flushing ---- */

/* Opened for each sample (ten times a second): a descriptor kept open could be closed by the
 * program and its number reused for one of the program's files. */
static uint64_t rss_bytes(void)
{
	char buf[128];
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	const char *p = strchr(buf, ' ');
	uint64_t pages = 0;
	for (p = p ? p + 1 : buf; *p >= '0' && *p <= '9'; p++)
		pages = pages * 10 + (uint64_t)(*p - '0');
	return pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

static void tick(uint64_t now)
{
	uint64_t us = (now - w.start_ns) / 1000;
	if (us > w.time_us) {
		emit(CT_REC_TIME, us - w.time_us);
		w.time_us = us;
	}
	w.last_time_ns = now;
}

static void sample(uint64_t now)
{
	size_t at = ct_out_begin_framed(&w.out, CT_REC_SAMPLE);
	ct_out_varint(&w.out, rss_bytes());
	ct_out_end_framed(&w.out, at);
	w.last_sample_ns = now;
	w.bytes_since_sample = 0;
}

static void housekeeping(void)
{
	uint64_t now = ct_now_ns();
	if (now - w.last_time_ns >= TIME_STEP_NS)
		tick(now);
	if (ct_modules_dirty())
		ct_modules_sync(&w.out);
	if (now - w.last_sample_ns >= SAMPLE_NS || w.bytes_since_sample >= SAMPLE_BYTES)
		sample(now);
	if (now - w.last_flush_ns >= FLUSH_NS) {
		for (struct ct_ring *r = ct_ring_list(); r; r = r->next)
			write_held(&r->st);
		compress(ZSTD_e_flush);
		w.last_flush_ns = now;
	} else if (w.out.len >= OUT_COMPRESS_AT) {
		compress(ZSTD_e_continue);
	}
}

static void emit_end(void)
{
	uint64_t now = ct_now_ns();
	tick(now);
	sample(now); /* a short run gets its RSS too */
	size_t at = ct_out_begin_framed(&w.out, CT_REC_END);
	ct_out_varint(&w.out, w.allocations);
	ct_out_varint(&w.out, w.frees);
	ct_out_varint(&w.out, w.bytes);
	ct_out_varint(&w.out, w.unmatched);
	ct_out_varint(&w.out, w.lost);
	ct_out_varint(&w.out, w.time_us);
	ct_out_end_framed(&w.out, at);
	compress(ZSTD_e_end);
}

/* ---- the thread ---- */

static void idle_wait(long ns)
{
	atomic_store(&w.sleeping, 1);
	if (!atomic_exchange(&w.wake, 0)) {
		struct timespec ts = {0, ns};
		syscall(SYS_futex, &w.wake, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
	}
	atomic_store(&w.sleeping, 0);
	atomic_store(&w.wake, 0);
}

void ct_writer_wake(void)
{
	if (!atomic_exchange(&w.wake, 1) && atomic_load(&w.sleeping))
		syscall(SYS_futex, &w.wake, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Everything published so far; a ring waiting for a thread that is between taking a sequence
 * number and publishing its event gets up to 50 ms. */
static void drain_everything(void)
{
	for (int i = 0; i < 50; i++) {
		while (pump())
			;
		if (!w.stuck)
			return;
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
}

/* Runs a request from a program thread once every event it published before asking is in. */
static int serve(uint32_t req)
{
	int op = w.req_op;
	drain_everything();
	if (op == REQ_EXEC || op == REQ_FINISH)
		flush_all_held();
	if (op == REQ_EXEC) {
		size_t at = ct_out_begin_framed(&w.out, CT_REC_EXEC);
		ct_out_string(&w.out, w.req_path, strlen(w.req_path));
		ct_out_end_framed(&w.out, at);
		compress(ZSTD_e_end);
	}
	if (op == REQ_FINISH)
		emit_end();
	atomic_store(&w.done, req);
	return op == REQ_FINISH;
}

static void *writer_main(void *arg)
{
	(void)arg;
	ct_in_shim = 1; /* whatever this thread allocates is the shim's, not the program's */
	for (;;) {
		uint32_t req = atomic_load(&w.req);
		int events = pump();
		housekeeping();
		if (req != atomic_load_explicit(&w.done, memory_order_relaxed) && serve(req))
			break;
		if (events < BATCH_EVENTS)
			idle_wait(events ? BATCH_WAIT_NS : IDLE_WAIT_NS);
	}
	return NULL;
}

static void request(int op, const char *path)
{
	if (!w.running)
		return;
	pthread_mutex_lock(&req_lock);
	w.req_op = op;
	w.req_path = path;
	uint32_t ticket = atomic_fetch_add(&w.req, 1) + 1;
	ct_writer_wake();
	for (int i = 0; atomic_load(&w.done) != ticket && i < 100000; i++) {
		struct timespec ts = {0, 50000};
		nanosleep(&ts, NULL);
	}
	pthread_mutex_unlock(&req_lock);
}

/* ---- the first records of a file ---- */

static size_t read_file(const char *path, uint8_t **buf, size_t *cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	if (fd < 0)
		return 0;
	for (;;) {
		if (len == *cap) {
			size_t n = *cap ? *cap * 2 : 4096;
			if (ct_arena_grow((void **)buf, *cap, n) < 0)
				break;
			*cap = n;
		}
		ssize_t k = read(fd, *buf + len, *cap - len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		len += (size_t)k;
	}
	close(fd);
	return len;
}

static void emit_process(void)
{
	struct ct_out *o = &w.out;
	char exe[4096];
	ssize_t exe_len = readlink("/proc/self/exe", exe, sizeof(exe));
	uint8_t *cmd = NULL;
	size_t cap = 0, len = read_file("/proc/self/cmdline", &cmd, &cap);
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);

	size_t at = ct_out_begin_framed(o, CT_REC_PROCESS);
	ct_out_varint(o, (uint64_t)getpid());
	ct_out_varint(o, (uint64_t)getppid());
	ct_out_varint(o, (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec);
	ct_out_string(o, exe, exe_len > 0 ? (size_t)exe_len : 0);
	uint64_t argc = 0;
	for (size_t i = 0; i < len; i++)
		argc += cmd[i] == 0;
	ct_out_varint(o, argc);
	for (size_t i = 0; i < len;) {
		size_t n = strnlen((const char *)cmd + i, len - i);
		ct_out_string(o, cmd + i, n);
		i += n + 1;
	}
	ct_out_end_framed(o, at);
	ct_arena_unmap(cmd, cap);
}

/* Takes the trace file: moved to a high descriptor, out of the way of programs that expect
 * the lowest free numbers, and remembered by identity (still_ours). */
static int open_file(int fd)
{
	struct stat st;
	int high = fcntl(fd, F_DUPFD_CLOEXEC, 512);
	if (high >= 0) {
		close(fd);
		fd = high;
	}
	if (fstat(fd, &st) < 0)
		return -errno;
	w.dev = st.st_dev;
	w.ino = st.st_ino;
	w.fd = fd;
	w.failed = 0;
	w.start_ns = w.last_time_ns = w.last_sample_ns = w.last_flush_ns = ct_now_ns();
	w.time_us = w.bytes_since_sample = 0;
	w.allocations = w.frees = w.bytes = w.unmatched = w.lost = 0;
	w.frames = CT_STACK_FIRST;
	w.alloc_records = 0;
	w.last_ip = 0;
	w.out.len = 0;
	memset(&w.late, 0, sizeof(w.late));
	w.zc = ZSTD_createCCtx();
	w.zcap = ZSTD_CStreamOutSize();
	if (!w.zbuf)
		w.zbuf = ct_arena_map(w.zcap);
	if (!w.zc || !w.zbuf || maps_init() < 0 || ct_out_reserve(&w.out, 1u << 20) < 0)
		return -ENOMEM;
	/* Programs repeat the same sequences of allocations (a loop body, a request) far apart in the
	 * stream: long-distance matching over a 4 MiB window finds them, for little time and memory
	 * (the sqlite3 benchmark's trace: 190 KiB -> 79 KiB). Level 1, not 3: the writer shares the
	 * machine with the program, and level 3 cost the churn benchmark 0.27 -> 0.32 s for traces
	 * at most 6% smaller. */
	ZSTD_CCtx_setParameter(w.zc, ZSTD_c_compressionLevel, 1);
	ZSTD_CCtx_setParameter(w.zc, ZSTD_c_windowLog, 22);
	ZSTD_CCtx_setParameter(w.zc, ZSTD_c_enableLongDistanceMatching, 1);
	ZSTD_CCtx_setParameter(w.zc, ZSTD_c_checksumFlag, 1); /* readers detect damage */
	uint8_t header[CT_HEADER_SIZE];
	ct_out_bytes(&w.out, header, ct_put_header(header));
	emit_process();
	ct_modules_reset();
	ct_modules_sync(&w.out);
	compress(ZSTD_e_flush);
	return w.failed ? -EIO : 0;
}

static int start_thread(void)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* the program's signals are not ours to take */
	int rc = pthread_create(&w.thread, NULL, writer_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return -rc;
	pthread_setname_np(w.thread, "ctrack-writer");
	w.running = 1;
	return 0;
}

int ct_writer_start(int fd)
{
	int rc = open_file(fd);
	return rc < 0 ? rc : start_thread();
}

void ct_writer_after_fork_child(int fd)
{
	pthread_mutex_init(&req_lock, NULL);
	pthread_mutex_init(&late_lock, NULL);
	w.running = 0;
	atomic_store(&w.req, 0);
	atomic_store(&w.done, 0);
	if (w.fd >= 0)
		close(w.fd); /* the parent's file: never written by a child */
	w.fd = -1;
	if (fd < 0)
		return;
	/* Fresh maps and context: what the parent's writer was doing at the fork is not ours. */
	memset(&w.live, 0, sizeof(w.live));
	memset(&w.infos, 0, sizeof(w.infos));
	w.out.buf = NULL;
	w.out.cap = w.out.len = 0;
	if (open_file(fd) < 0 || start_thread() < 0)
		atomic_store(&ct_state, CT_OFF);
}

void ct_writer_sync(void) { request(REQ_SYNC, NULL); }
void ct_writer_exec(const char *path) { request(REQ_EXEC, path); }

void ct_writer_finish(void)
{
	if (!w.running)
		return;
	request(REQ_FINISH, NULL);
	pthread_join(w.thread, NULL);
	w.running = 0;
}

/* After finish: each event is written at once, followed by a new END, as a frame of its own. */
void ct_writer_late(const uint64_t *ev, unsigned n, struct ct_ring *r)
{
	(void)n;
	(void)r;
	pthread_mutex_lock(&late_lock);
	if (w.fd >= 0 && !w.failed) {
		emit_frames();
		process(&w.late, ev, 0);
		flush_held(&w.late);
		emit_end();
	}
	pthread_mutex_unlock(&late_lock);
}
