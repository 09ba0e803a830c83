/* SPDX-License-Identifier: MIT */
/* The live view (liveview.h). On a terminal: the controlling terminal (/dev/tty) in raw mode on the
 * alternate screen, each draw one write of the whole screen (ANSI escapes: home, clear to the end of
 * each line, reverse video for the selection), restored on every way out: the end, q, an error, the
 * stopping signals (own_signals) and the fatal ones (restored from the handler, then the signal
 * raised again). Without a terminal: one plain line per draw, key=value, for scripts. The sites are
 * ranked again only when the model or the sort changed (livesites.c). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "liveview.h"
#include "livesites.h"
#include "markup.h"

#define ENTER_SCREEN "\033[?1049h\033[?25l" /* alternate screen, no cursor */
#define LEAVE_SCREEN "\033[?25h\033[?1049l"
#define HEAD_ROWS 6 /* title, heap, rates, RSS, blank, column heads */
#define FOOT_ROWS 1 /* the keys */

/* ---- the terminal: static, for the signal handlers that restore it ---- */

static int term_fd = -1;
static struct termios term_saved;
static volatile sig_atomic_t term_raw, stop_signal, resized;

/* Async-signal-safe: the screen and the modes as they were. */
static void term_restore(void)
{
	if (!term_raw)
		return;
	term_raw = 0;
	ssize_t n = write(term_fd, LEAVE_SCREEN, sizeof(LEAVE_SCREEN) - 1);
	(void)n; /* a terminal gone: nothing to restore */
	tcsetattr(term_fd, TCSADRAIN, &term_saved);
}

static void on_fatal(int sig)
{
	term_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void on_stop(int sig)
{
	stop_signal = sig;
}

static void on_winch(int sig)
{
	(void)sig;
	resized = 1;
}

/* The terminal in raw mode on its alternate screen: its descriptor, or -1 (plain lines then). Keys
 * come unprocessed (Ctrl-C is a key, not a signal) and output keeps its newline handling. */
static int term_open(void)
{
	int fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
	struct termios raw;
	if (fd < 0)
		return -1;
	if (tcgetattr(fd, &term_saved) < 0) {
		close(fd);
		return -1;
	}
	raw = term_saved;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO | ISIG | IEXTEN);
	raw.c_iflag &= ~(tcflag_t)(IXON | ICRNL);
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	term_fd = fd;
	if (tcsetattr(fd, TCSADRAIN, &raw) < 0) {
		close(fd);
		return term_fd = -1;
	}
	term_raw = 1;
	ssize_t n = write(fd, ENTER_SCREEN, sizeof(ENTER_SCREEN) - 1);
	(void)n;
	return fd;
}

static void term_close(void)
{
	term_restore();
	if (term_fd >= 0)
		close(term_fd);
	term_fd = -1;
}

/* The signals the view handles, and what they did before. */
static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define NFATAL (sizeof(fatal_signals) / sizeof(fatal_signals[0]))
#define NSTOP (sizeof(stop_signals) / sizeof(stop_signals[0]))
struct saved_signals {
	struct sigaction winch, fatal[NFATAL], stop[NSTOP];
	int own;
};

static void set_handler(int sig, void (*fn)(int), int flags, struct sigaction *old)
{
	struct sigaction sa = {.sa_handler = fn, .sa_flags = flags};
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, old);
}

/* No SA_RESTART for the stopping signals and SIGWINCH: the wait at the trace's end (poll) returns. */
static void signals_install(struct saved_signals *s, int own)
{
	stop_signal = resized = 0;
	s->own = own;
	set_handler(SIGWINCH, on_winch, 0, &s->winch);
	for (size_t i = 0; i < NFATAL; i++)
		set_handler(fatal_signals[i], on_fatal, SA_RESETHAND, &s->fatal[i]);
	for (size_t i = 0; own && i < NSTOP; i++)
		set_handler(stop_signals[i], on_stop, 0, &s->stop[i]);
}

static void signals_restore(const struct saved_signals *s)
{
	sigaction(SIGWINCH, &s->winch, NULL);
	for (size_t i = 0; i < NFATAL; i++)
		sigaction(fatal_signals[i], &s->fatal[i], NULL);
	for (size_t i = 0; s->own && i < NSTOP; i++)
		sigaction(stop_signals[i], &s->stop[i], NULL);
}

/* ---- the view's state ---- */

struct view {
	const struct ct_liveview_opts *o;
	int tty; /* the terminal, or -1: plain lines */
	struct ct_livesites sites;
	enum ct_live_cost by;
	size_t sel, scroll;
	uint32_t sel_stack; /* the selected site's stack: the selection follows it when the order changes */
	int backtrace;      /* the selected site's backtrace is shown */
	int ranked;         /* sites hold a ranking of the model as seen[] says, by `by` */
	int nomem;
	uint64_t seen[4];
	int ended; /* the following is over: the keys' line says so */
	unsigned rows, cols;
	char *screen; /* the screen being built */
	size_t len, cap;
	const struct ct_model *m; /* what the last draw showed */
	const struct ct_follow_status *st;
};

/* Ranks the sites again when the model changed since (or the sort did). */
static void rank(struct view *v, const struct ct_model *m)
{
	const uint64_t now[4] = {m->t.allocations, m->t.frees, m->ninfos,
	                         (uint64_t)m->nnodes << 1 | m->classified};
	if (v->ranked && !memcmp(now, v->seen, sizeof(now)))
		return;
	v->nomem = ct_livesites_update(&v->sites, v->o->trace, m, v->by) < 0;
	v->ranked = !v->nomem;
	memcpy(v->seen, now, sizeof(now));
	size_t n = v->sites.n;
	for (size_t i = 0; i < n; i++)
		if (v->sites.v[i]->stack == v->sel_stack)
			v->sel = i;
	v->sel = n && v->sel >= n ? n - 1 : v->sel;
	v->sel_stack = n ? v->sites.v[v->sel]->stack : 0;
}

/* The file name of a path ("-" for none). */
static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;
	return s ? s + 1 : path ? path : "-";
}

/* "function  file:line" of a frame, into buf. */
static const char *frame_text(const struct view *v, const struct ct_frame *f, char *buf, size_t len)
{
	char name[512];
	const char *fn = ct_frame_display_name(&v->sites.r, f, name, sizeof(name));
	if (f->file && f->line)
		snprintf(buf, len, "%s  %s:%u", fn, base_name(f->file), f->line);
	else
		snprintf(buf, len, "%s  %s", fn, f->module ? base_name(f->module) : "??");
	return buf;
}

/* The text of site i's first shown frame. */
static const char *site_text(struct view *v, size_t i, char *buf, size_t len)
{
	struct ct_frame f;
	int rc = ct_livesites_first(&v->sites, i, &f);
	if (rc < 0)
		v->nomem = 1;
	return rc ? (rc < 0 ? "(out of memory)" : "(no frame)") : frame_text(v, &f, buf, len);
}

static const char *state_text(const struct ct_follow_status *st, const struct ct_model *m)
{
	switch (st->state) {
	case CT_FOLLOW_LIVE:
		return st->caught_up ? "running" : "reading";
	case CT_FOLLOW_ENDED: /* an EXEC: the program went on as another, which this trace does not hold */
		return m->t.ended || !m->exec_path.data ? "ended" : "ended (exec)";
	case CT_FOLLOW_GONE:
		return "cut (its writer is gone)";
	case CT_FOLLOW_STOPPED:
		return "stopped";
	case CT_FOLLOW_DAMAGED:
		return "damaged";
	}
	return "?";
}

/* ---- plain lines ---- */

static void draw_plain(struct view *v, const struct ct_model *m, const struct ct_follow_status *st)
{
	const struct ct_totals *t = &m->t;
	char top[1024] = "-";
	const struct ct_site *s = v->sites.n ? v->sites.v[0] : NULL;
	const uint64_t rss = m->nseries ? m->series[m->nseries - 1].rss : 0;
	if (s)
		site_text(v, 0, top, sizeof(top));
	fprintf(v->o->plain,
	        "[%.3fs] %s heap=%" PRIu64 " peak=%" PRIu64 " blocks=%" PRIu64 " allocations=%" PRIu64
	        " frees=%" PRIu64 " temporary=%" PRIu64 " alloc_rate=%.1f free_rate=%.1f rss=%" PRIu64
	        " peak_rss=%" PRIu64 " sites=%zu top_live=%" PRIu64 " top_blocks=%" PRIu64
	        " top_allocations=%" PRIu64 " top=%s\n",
	        (double)st->elapsed_us / 1e6, state_text(st, m), t->current, t->peak, t->live_allocations,
	        t->allocations, t->frees, t->temporary, st->alloc_rate, st->free_rate, rss, t->peak_rss,
	        v->sites.n, s ? s->leaked_bytes : 0, s ? s->leaked_allocations : 0, s ? s->allocations : 0,
	        top);
	fflush(v->o->plain);
}

/* ---- the screen ---- */

/* Appends n bytes to the screen; out of memory, the screen is drawn as far as it got. */
static void add(struct view *v, const char *s, size_t n)
{
	if (v->len + n > v->cap) {
		size_t cap = (v->len + n) * 2 + 4096;
		char *p = realloc(v->screen, cap);
		if (!p)
			return;
		v->screen = p, v->cap = cap;
	}
	memcpy(v->screen + v->len, s, n);
	v->len += n;
}

/* One row of the screen, cut at its width (never inside a UTF-8 character), in reverse video when
 * `inverse`. */
static void row(struct view *v, int inverse, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void row(struct view *v, int inverse, const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	size_t n = strlen(line);
	if (n > v->cols) {
		n = v->cols;
		while (n && ((unsigned char)line[n] & 0xc0) == 0x80)
			n--;
	}
	if (inverse)
		add(v, "\033[7m", 4);
	add(v, line, n);
	if (inverse)
		add(v, "\033[m", 3);
	add(v, "\033[K\r\n", 5);
}

static void term_size(struct view *v)
{
	struct winsize ws;
	v->rows = 24, v->cols = 80;
	if (ioctl(v->tty, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col)
		v->rows = ws.ws_row, v->cols = ws.ws_col;
}

static void draw_head(struct view *v, const struct ct_model *m, const struct ct_follow_status *st)
{
	const struct ct_totals *t = &m->t;
	char a[64], b[64];
	const char *prog = m->proc.argc ? m->proc.argv[0].data : m->proc.exe.data;
	row(v, 1, " ctrack live: %s (pid %" PRIu64 ")   %s   %s, %.1f s%s", prog ? base_name(prog) : "?",
	    st->writer, base_name(st->path), state_text(st, m), (double)st->elapsed_us / 1e6,
	    m->sample_rate ? "   sampled: figures are estimates" : "");
	row(v, 0, " heap in use: %s in %" PRIu64 " blocks    peak: %s at %.3f s",
	    ct_fmt_bytes(a, sizeof(a), t->current), t->live_allocations, ct_fmt_bytes(b, sizeof(b), t->peak),
	    (double)t->peak_time_us / 1e6);
	row(v, 0, " allocations: %" PRIu64 " (%.1f/s)    frees: %" PRIu64 " (%.1f/s)    temporary: %" PRIu64,
	    t->allocations, st->alloc_rate, t->frees, st->free_rate, t->temporary);
	if (t->peak_rss)
		row(v, 0, " RSS: %s (peak %s)%s%s",
		    ct_fmt_bytes(a, sizeof(a), m->nseries ? m->series[m->nseries - 1].rss : 0),
		    ct_fmt_bytes(b, sizeof(b), t->peak_rss), v->o->output ? "    program output: " : "",
		    v->o->output ? v->o->output : "");
	else
		row(v, 0, " RSS: not sampled%s%s", v->o->output ? "    program output: " : "",
		    v->o->output ? v->o->output : "");
	row(v, 0, "%s", v->nomem ? " (out of memory: the list may be old)" : "");
	row(v, 0, "   %14s%c %9s%c %11s%c %14s%c %9s%c  site (%zu; sorted by %s)", "LIVE BYTES",
	    v->by == CT_LIVE_BYTES ? '*' : ' ', "BLOCKS", ' ', "ALLOCS",
	    v->by == CT_LIVE_ALLOCATIONS ? '*' : ' ', "ALLOCATED", v->by == CT_LIVE_ALLOCATED ? '*' : ' ',
	    "TEMP", v->by == CT_LIVE_TEMPORARY ? '*' : ' ', v->sites.n, ct_live_cost_name(v->by));
}

/* Rows of sites from v->scroll, `rows` of them. */
static void draw_sites(struct view *v, unsigned rows)
{
	if (v->sel < v->scroll)
		v->scroll = v->sel;
	if (rows && v->sel >= v->scroll + rows)
		v->scroll = v->sel - rows + 1;
	for (unsigned k = 0; k < rows; k++) {
		size_t i = v->scroll + k;
		char text[1024];
		if (i >= v->sites.n) {
			row(v, 0, "%s", "");
			continue;
		}
		const struct ct_site *s = v->sites.v[i];
		row(v, i == v->sel,
		    "%c %14" PRIu64 "  %9" PRIu64 "  %11" PRIu64 "  %14" PRIu64 "  %9" PRIu64 "   %s",
		    i == v->sel ? '>' : ' ', s->leaked_bytes, s->leaked_allocations, s->allocations,
		    s->bytes_allocated, s->temporary, site_text(v, i, text, sizeof(text)));
	}
}

struct bt_rows {
	struct view *v;
	unsigned left; /* rows still free */
};

static int bt_frame(void *ctx, const struct ct_frame *f, unsigned index)
{
	struct bt_rows *b = ctx;
	char text[1024];
	if (!b->left)
		return 1;
	b->left--;
	row(b->v, 0, "   #%-2u %s%s", index, frame_text(b->v, f, text, sizeof(text)),
	    f->inlined ? "  (inlined)" : "");
	return 0;
}

/* One backtrace of the selected site: its figures when it has siblings, then its frames. */
static void draw_caller(struct view *v, const struct ct_site *c, size_t n, struct bt_rows *b)
{
	if (n > 1 && b->left) {
		b->left--;
		row(v, 0,
		    "  %" PRIu64 " bytes live in %" PRIu64 " blocks, %" PRIu64 " allocations, %" PRIu64
		    " temporary:",
		    c->leaked_bytes, c->leaked_allocations, c->allocations, c->temporary);
	}
	if (ct_livesites_frames(&v->sites, c->stack, bt_frame, b) < 0)
		v->nomem = 1;
}

/* The selected site's backtraces in `rows` rows (a heading, then each backtrace, as many as fit). */
static void draw_backtrace(struct view *v, unsigned rows)
{
	struct bt_rows b = {v, rows - 1};
	struct ct_callers c;
	if (ct_livesites_callers(&v->sites, v->sel, v->by, &c) < 0)
		v->nomem = 1;
	row(v, 1, " the selected site's backtrace%s: %zu (Enter hides %s)", c.n == 1 ? "" : "s", c.n,
	    c.n == 1 ? "it" : "them");
	for (size_t k = 0; k < c.n && b.left; k++)
		draw_caller(v, &c.v[k], c.n, &b);
	free(c.v);
	while (b.left--)
		row(v, 0, "%s", "");
}

static void draw_screen(struct view *v, const struct ct_model *m, const struct ct_follow_status *st)
{
	term_size(v);
	v->len = 0;
	add(v, "\033[H", 3);
	draw_head(v, m, st);
	unsigned body = v->rows > HEAD_ROWS + FOOT_ROWS ? v->rows - HEAD_ROWS - FOOT_ROWS : 1;
	unsigned bt = v->backtrace && v->sites.n ? body / 2 : 0;
	draw_sites(v, body - bt);
	if (bt)
		draw_backtrace(v, bt);
	row(v, 1,
	    " %s  up/down or j/k select  Enter backtrace  sort: l live  a allocs  b bytes  t temp  q quit",
	    v->ended ? "the trace ended:" : "keys:");
	v->len -= 2; /* no newline after the last row: the screen would scroll */
	add(v, "\033[J", 3);
	for (size_t off = 0; off < v->len;) {
		ssize_t n = write(v->tty, v->screen + off, v->len - off);
		if (n <= 0 && errno != EINTR)
			break; /* the terminal is gone: nothing to show it on */
		off += n > 0 ? (size_t)n : 0;
	}
}

/* The follow hook's draw (follow.h). */
static void draw(void *arg, const struct ct_model *m, const struct ct_follow_status *st)
{
	struct view *v = arg;
	v->m = m, v->st = st;
	rank(v, m);
	if (v->tty >= 0)
		draw_screen(v, m, st);
	else
		draw_plain(v, m, st);
}

/* ---- keys ---- */

static void move(struct view *v, long by)
{
	long n = (long)v->sites.n, to = (long)v->sel + by;
	to = to >= n ? n - 1 : to;
	v->sel = to < 0 ? 0 : (size_t)to;
	v->sel_stack = v->sites.n ? v->sites.v[v->sel]->stack : 0;
}

static void sort_by(struct view *v, enum ct_live_cost by)
{
	v->by = by;
	v->ranked = 0;
	v->sel = 0; /* the new ranking's best */
	v->sel_stack = 0;
}

/* One key (an escape sequence's last byte as 'A' ... with esc set): 1 quit, 2 draw again, 0 none. */
static int key(struct view *v, int c, int esc)
{
	long page = v->rows > HEAD_ROWS + FOOT_ROWS + 1 ? (long)(v->rows - HEAD_ROWS - FOOT_ROWS - 1) : 1;
	static const char sorts[] = "labt"; /* in enum ct_live_cost's order */
	const char *sort = esc ? NULL : strchr(sorts, c);
	if (esc && (c == 'A' || c == 'B'))
		return move(v, c == 'A' ? -1 : 1), 2;
	if (esc && (c == '5' || c == '6'))
		return move(v, c == '5' ? -page : page), 2;
	if (esc)
		return 0;
	if (c == 'q' || c == 'Q' || c == 3) /* 3: Ctrl-C, a key in raw mode */
		return 1;
	if (c == 'k' || c == 'j')
		return move(v, c == 'k' ? -1 : 1), 2;
	if (c == '\r' || c == '\n')
		return v->backtrace = !v->backtrace, 2;
	if (c && sort)
		return sort_by(v, (enum ct_live_cost)(sort - sorts)), 2;
	if (c == 's')
		return sort_by(v, (enum ct_live_cost)((v->by + 1) % CT_LIVE_COSTS)), 2;
	return 0;
}

/* The follow hook's keys (follow.h): reads what the terminal has. */
static int keys(void *arg)
{
	struct view *v = arg;
	unsigned char b[64];
	ssize_t n = read(v->tty, b, sizeof(b));
	int rc = 0;
	if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
		return 1; /* the terminal hung up */
	for (ssize_t i = 0; i < n && rc != 1; i++) {
		int esc = b[i] == 27 && i + 2 < n && (b[i + 1] == '[' || b[i + 1] == 'O');
		int k = key(v, esc ? b[i + 2] : b[i], esc);
		i += esc ? 2 + (i + 3 < n && b[i + 3] == '~') : 0;
		rc = k > rc ? k : rc;
	}
	if (rc == 2 && !v->ranked && v->m) /* a new sort: ranked before the draw */
		rank(v, v->m);
	return rc;
}

/* After the end, on a terminal: the last figures until q (or a stopping signal). */
static void linger(struct view *v, const struct ct_model *m, const struct ct_follow_status *st)
{
	struct pollfd pfd = {.fd = v->tty, .events = POLLIN};
	v->ended = 1;
	draw(v, m, st);
	while (!stop_signal) {
		/* a second at most: SIGWINCH may go to another thread (the symbolizer's), not this poll */
		int n = poll(&pfd, 1, 1000), rc = n > 0 ? keys(v) : 0;
		if (rc == 1)
			break;
		if (rc == 2 || resized)
			resized = 0, draw(v, m, st);
	}
}

int ct_liveview_run(const struct ct_liveview_opts *o, struct ct_model *m, struct ct_liveview_end *end,
                    char *err, size_t errlen)
{
	struct view v = {.o = o, .tty = -1};
	struct saved_signals saved;
	struct ct_follow_status st;
	*end = (struct ct_liveview_end){0};
	if (ct_livesites_init(&v.sites) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	signals_install(&saved, o->own_signals);
	v.tty = isatty(fileno(o->plain)) ? term_open() : -1;
	const struct ct_follow_view fv = {
	    .key_fd = v.tty, .draw = draw, .keys = keys, .stop = &stop_signal, .redraw = &resized, .arg = &v};
	int rc = ct_follow_run(o->trace, o->writer, m, &fv, &st, err, errlen);
	if (rc == 0 && v.tty >= 0 && o->linger && st.state != CT_FOLLOW_STOPPED)
		linger(&v, m, &st);
	end->terminal = v.tty >= 0;
	term_close();
	signals_restore(&saved);
	end->state = st.state;
	end->signal = stop_signal;
	end->writer = st.writer;
	ct_livesites_free(&v.sites);
	free(v.screen);
	return rc;
}
