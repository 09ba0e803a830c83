/* SPDX-License-Identifier: MIT */
/* The analyzer's model of a trace: alloc infos, stack nodes, modules, totals and a time series.
 * Fed one record at a time by the reader; memory grows with distinct stacks and infos, never with events. */
#ifndef CTRACK_MODEL_H
#define CTRACK_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "ctrack/format.h"
#include "timeline.h"

#define CT_NO_MODULE UINT32_MAX

struct ct_info {
	uint64_t size;
	uint32_t stack;
	uint32_t site;        /* its stack's index in the timeline (timeline.h), in stack's padding */
	uint64_t live;        /* allocations not freed yet */
	uint64_t peak_live;   /* live at the global peak, valid when version == the model's peak version */
	uint64_t version;     /* peak version at which peak_live was last brought up to date */
	uint64_t allocations; /* ALLOC + TEMP */
	uint64_t temporary;   /* TEMP */
	uint64_t classes[CT_CLASSES]; /* live blocks by leak class, when the trace has CLASSES */
	uint64_t suppressed;          /* live blocks a suppression took out of the classes (suppress.c) */
};

/* A sampled trace's (sampling.h), per alloc info: the weight of one of its allocations and the
 * ALLOC, FREE and TEMP records read of it, whose weighted sums the info's counts are. Beside the
 * infos rather than in them: a full trace has none, and they were a quarter of an info's bytes
 * (cc1's report holds tens of thousands of infos). */
struct ct_info_weight {
	uint64_t weight, n_alloc, n_free, n_temp;
};

/* The leak kinds of a classified trace's live blocks: memcheck's four classes (CT_CLASS_*), then
 * the blocks no scan saw: allocated after the last one (a process that ended without its exit scan,
 * after a ctrack_check_leaks()). */
#define CT_KIND_UNSCANNED 4
#define CT_KINDS 5

struct ct_node {
	uint32_t parent;
	uint32_t module; /* module id holding ip - 1 (the call), or ip when it is exact (ct_model_node_exact),
	                  * when the node was defined, or CT_NO_MODULE */
	uint64_t ip;
};

struct ct_segment {
	uint64_t vaddr, memsz, offset;
	uint8_t prot;
};

struct ct_module {
	uint32_t id;
	int loaded;
	uint64_t loaded_unix_ns; /* wall clock when its MODULE record came (the trace's start + its
	                          * clock), or 0 without a PROCESS record */
	uint64_t base;
	char *path;
	uint8_t *build_id;
	size_t build_id_len;
	struct ct_segment *segs;
	size_t nseg;
	int framed; /* a stack frame lies in it (module_framed was called) */
};

struct ct_bytes {
	char *data; /* NUL-terminated copy; may hold any other byte */
	size_t len;
};

struct ct_process {
	int seen;
	uint64_t pid, ppid, start_unix_ns;
	struct ct_bytes exe;
	struct ct_bytes *argv;
	size_t argc;
};

struct ct_point {
	uint64_t time_us, heap, rss; /* heap and rss: the highest values within the point's bucket */
	uint64_t allocations, temporary, alloc_bytes; /* made within the bucket (temporary: freed in it) */
};

struct ct_totals {
	uint64_t allocations, frees, bytes_allocated, temporary;
	uint64_t invalid_frees; /* INVALID records (invalid.c) */
	uint64_t current, live_allocations;
	uint64_t peak, peak_time_us, peak_rss;
	uint64_t now_us;
	/* From the last END record (the writer's own counts), if any. */
	int ended;
	uint64_t end_us, unmatched_frees, lost_allocations;
};

/* NOTE records: a message from the shim (a dropped event, a write error, a clamped setting). A
 * hostile trace may hold any number, so the model keeps at most CT_NOTES_MAX distinct ones (by level
 * and text) and counts repeats; the records beyond those go to one more entry, CT_NOTE_OTHERS. */
#define CT_NOTES_MAX 64
#define CT_NOTE_TEXT_MAX 1024 /* bytes of a text kept; a longer one is cut and ends in "..." */
#define CT_NOTE_OTHERS "(more notes, not shown: only the first 64 distinct texts are kept)"

struct ct_note {
	int warning;          /* level 1, warning (or a level a newer writer added); 0: info */
	struct ct_bytes text; /* as the shim wrote it (any bytes), cut at CT_NOTE_TEXT_MAX */
	uint64_t count;       /* NOTE records with this level and text */
	uint64_t hash;        /* of level and kept text: a repeat is found without comparing texts */
};

/* INVALID records: invalid frees (memcheck's "Invalid free()"), each distinct one (kind, call and
 * stacks, block) once with its count. A hostile trace may hold any number: the model keeps the first
 * CT_INVALID_MAX distinct ones and counts the records of the others (invalid_others). */
#define CT_INVALID_MAX 1024
struct ct_invalid {
	unsigned kind, call;   /* CT_INVALID_* of ctrack/format.h; a later writer's kind is shown plainly */
	uint32_t stack, freed; /* the call's backtrace; the earlier free's call site (0: unknown) */
	uint64_t block;        /* the block's alloc info + 1 (0: unknown) */
	uint64_t count;        /* INVALID records like this one */
};

/* MARK records: named points in the run (ctrack_mark()). A hostile trace may hold any number: the
 * model keeps the first CT_MARKS_MAX and counts the rest. */
#define CT_MARKS_MAX 1024
struct ct_mark {
	struct ct_bytes name;
	uint64_t time_us;
};

/* A window of the run (marks.c): --between FROM,TO narrows the figures to the stretch between two
 * marks, --from T1 --to T2 to the times [T1, T2) (an event is at the clock's time: the last TIME
 * record's). The same machinery: FROM snapshots every info, TO takes the changes since. */
struct ct_between {
	const char *from, *to;   /* the marks' names, as asked; NULL for a window by time */
	uint64_t from_at, to_at; /* by time: the bounds asked, us (0: the start; UINT64_MAX: the end) */
	int state;               /* 0: before FROM, 1: between, 2: TO seen */
	int failed;              /* out of memory at a bound reached by the clock (said at apply) */
	int from_past_end, to_past_end; /* by time: a bound past the run's end (the end is used) */
	uint64_t from_us, to_us;        /* when the stretch began and ended (by time: the bounds, clamped) */
	/* Per info, at FROM: live blocks, allocations, temporary ones, -; at TO, the changes since FROM
	 * and the blocks live at TO. */
	uint64_t (*at)[4];
	size_t n;
	uint64_t frees;                   /* frees at FROM, then between */
	uint64_t live_blocks, live_bytes; /* after apply: all the blocks live at TO */
};

struct ct_model {
	struct ct_info *infos;
	size_t ninfos, cap_infos;
	struct ct_info_weight *weights; /* by info id, a sampled trace's only (cap_weights 0 in a full one) */
	size_t cap_weights;
	struct ct_node *nodes; /* index = stack node id; 0 and 1 are the two roots */
	size_t nnodes, cap_nodes;
	/* The nodes with an exact ip (EXACT records), increasing: they are few (frames signals
	 * interrupted), so a list rather than a field every node would carry. */
	uint32_t *exact;
	size_t nexact, cap_exact;
	struct ct_module *modules; /* index = module id; ids are dense */
	size_t nmodules, cap_modules;
	uint64_t last_ip;
	uint64_t peak_version;
	struct ct_totals t;
	struct ct_process proc;
	int complete;   /* the last record read was END or EXEC */
	int classified; /* a CLASSES record gave every info's live blocks their leak classes */
	/* AGGREGATE: the trace holds AGG_SNAPSHOT records every aggregate_us (0: a full trace), and
	 * its memory over time has that resolution (aggregated.h). */
	uint64_t aggregate_us;
	/* SAMPLING: one allocation per sample_rate bytes was recorded (0: every one), and every count
	 * and byte figure of the model is an estimate (sampling.h); sample_seed: the shim's seed. */
	uint64_t sample_rate, sample_seed;
	/* ATTACH: the trace starts at the attach_ordinal-th attach into its process (ctrack -p), at
	 * attach_unix_ns; 0: it starts with its process. */
	uint64_t attach_unix_ns, attach_ordinal;
	size_t attach_note; /* ... and the index in notes of the note that says so */
	/* Damage after the file header (a zstd block that cannot be decoded, a record that cannot be, a
	 * frame checksum that does not match): the reader stopped there, complete is 0. damaged_at: the
	 * file offset near which decoding failed; damage: what was wrong, one line. */
	int damaged;
	uint64_t damaged_at;
	char damage[200];
	/* HOLDERS after the last CLASSES: indirectly lost blocks by the info of the definitely lost
	 * block that holds them; has_holders: the record came (a trace may say nothing of them). */
	struct ct_holder {
		uint64_t info, holder, count;
	} * holders;
	size_t nholders, cap_holders;
	int has_holders;
	struct ct_bytes suppressions; /* the program's own (SUPPRESSIONS), empty when none */
	int exec_last; /* ... and it was EXEC: the process went on as exec_path, in another trace or none */
	struct ct_bytes exec_path; /* the last EXEC record's path */
	uint32_t last_module;      /* lookup cache: module that held the previous FRAME's ip - 1 */
	/* Steps of the work a record can cause beyond its own bytes (a FRAME's module lookup: each
	 * segment looked at; a CLASSES record: each info cleared). The reader bounds it by the input. */
	uint64_t work;
	/* Distinct notes in the order they first came (at most CT_NOTES_MAX + 1: see struct ct_note). */
	struct ct_note *notes;
	size_t nnotes;
	uint64_t warnings;     /* NOTE records of level warning, repeats and those not kept included */
	struct ct_mark *marks; /* in the order they came, at most CT_MARKS_MAX */
	size_t nmarks;
	uint64_t marks_total;       /* MARK records, those not kept included */
	struct ct_between *between; /* --between asked (NULL: not), owned */
	/* Invalid frees (invalid.c) in the order they came, and the INVALID records past the
	 * CT_INVALID_MAX kept. */
	struct ct_invalid *invalid;
	size_t ninvalid, cap_invalid;
	uint64_t invalid_others;
	/* CRASH: the program died of signal crash_signal, taken by a thread at stack crash_stack. */
	int crashed;
	uint64_t crash_signal;
	uint32_t crash_stack;
	/* Downsampled time series: at most CT_SERIES_MAX points, buckets of series_width_us. */
	struct ct_point *series;
	size_t nseries;
	uint64_t series_width_us;
	struct ct_timeline tl; /* per-site activity per time slice (timeline.h) */
	/* Called with each module the first time a stack frame read lies in it (NULL: not), with
	 * module_arg: a module no frame lies in is never symbolized, so its debug info is never needed. */
	void (*module_framed)(const struct ct_module *mod, void *arg);
	void *module_arg;
	/* Called with each stack node as the model gets it (NULL: not), with frame_arg; its module is
	 * the one holding ip - 1 (ct_model_exact may change it after). */
	void (*frame_added)(struct ct_model *m, uint32_t node, void *arg);
	void *frame_arg;
};

#define CT_SERIES_MAX 1024

/* Initialises an empty model; returns 0 or -ENOMEM. */
int ct_model_init(struct ct_model *m);
void ct_model_destroy(struct ct_model *m);

/* Events. Each returns 0, -EINVAL when the record refers to an undefined id or breaks an invariant
 * (the trace is corrupt), or -ENOMEM. */
int ct_model_alloc(struct ct_model *m, uint64_t info);
int ct_model_free(struct ct_model *m, uint64_t info);
int ct_model_temp(struct ct_model *m, uint64_t info);
/* FREE of an allocation already written as ALLOC that turned out temporary (TEMPFREE). */
int ct_model_free_temp(struct ct_model *m, uint64_t info);
/* Asks the cache for what an event of info will read: the info, then (once that is in) its stack's
 * timeline entry. Nothing changes; an undefined info is ignored. For a reader that knows its next
 * events: on a trace of many stacks those two reads miss the cache on nearly every event. */
static inline void ct_model_prefetch_info(const struct ct_model *m, uint64_t info)
{
	if (info < m->ninfos)
		__builtin_prefetch(&m->infos[info]);
}
static inline void ct_model_prefetch_entry(const struct ct_model *m, uint64_t info)
{
	if (info < m->ninfos)
		__builtin_prefetch(&m->tl.acc[m->infos[info].site]);
}
int ct_model_info(struct ct_model *m, uint64_t size, uint64_t stack);
/* SAMPLING: -EINVAL when the rate is 0 or above CT_SAMPLING_RATE_MAX, or when alloc infos came before it
 * (their events would have counted unweighted) or another SAMPLING said otherwise. */
int ct_model_sampling(struct ct_model *m, uint64_t rate, uint64_t seed);
/* ATTACH: the trace starts at an attach (ordinal >= 1) at unix_ns, Unix time in nanoseconds; an
 * info note says so in every report. -EINVAL when it comes twice, after an allocation, or with
 * ordinal 0; -ENOMEM. */
int ct_model_attach(struct ct_model *m, uint64_t unix_ns, uint64_t ordinal);
int ct_model_frame(struct ct_model *m, uint64_t parent, int64_t ip_delta);
/* EXACT: the last node a FRAME defined has an exact ip; its module becomes the one holding ip itself.
 * -EINVAL when no FRAME came before. */
int ct_model_exact(struct ct_model *m);
/* HOLDERS: count of info's indirectly lost blocks are held by a definitely lost block of holder.
 * -EINVAL for an unknown info, or more blocks than info's indirectly lost ones; -ENOMEM. */
int ct_model_holder(struct ct_model *m, uint64_t info, uint64_t holder, uint64_t count);
void ct_model_time(struct ct_model *m, uint64_t delta_us);
void ct_model_sample(struct ct_model *m, uint64_t rss);
int ct_model_module(struct ct_model *m, const struct ct_module *mod);
int ct_model_unmodule(struct ct_model *m, uint64_t id);
void ct_model_end(struct ct_model *m, uint64_t unmatched_frees, uint64_t lost, uint64_t end_us);
/* A NOTE record: level (0 info, else warning) and len bytes of text (copied). 0 or -ENOMEM. */
int ct_model_note(struct ct_model *m, unsigned level, const char *text, size_t len);
/* A CLASSES record begins: every info's classes are cleared (a later record supersedes). */
void ct_model_classes_begin(struct ct_model *m);
/* Info `id`'s live blocks by class (definite, indirect, possible, reachable): -EINVAL when the id is
 * undefined or the counts add up to more blocks than are live. */
int ct_model_classes(struct ct_model *m, uint64_t id, const uint64_t count[CT_CLASSES]);
/* Takes ownership of exe and argv (heap blocks). */
void ct_model_process(struct ct_model *m, uint64_t pid, uint64_t ppid, uint64_t start_ns, struct ct_bytes exe,
                      struct ct_bytes *argv, size_t argc);

/* Number of allocations of info live at the global peak. */
uint64_t ct_info_at_peak(const struct ct_model *m, const struct ct_info *info);
/* Runtime in microseconds: END's clock, or the last TIME when the trace was cut. */
uint64_t ct_model_runtime_us(const struct ct_model *m);
/* The module a stack node's ip belongs to, or NULL. */
const struct ct_module *ct_model_node_module(const struct ct_model *m, uint32_t node);
/* Whether a stack node's ip is exact (the instruction a signal interrupted, looked up at itself)
 * rather than a return address (looked up at its call, ip - 1). */
int ct_model_node_exact(const struct ct_model *m, uint32_t node);

/* Info's live blocks by leak kind (CT_CLASS_*, CT_KIND_UNSCANNED): zeros when the model is not
 * classified. Blocks a suppression took count in no kind. */
void ct_info_kinds(const struct ct_model *m, const struct ct_info *info, uint64_t kinds[CT_KINDS]);
/* The live blocks and their bytes by leak kind, summed over the infos. */
void ct_model_class_totals(const struct ct_model *m, uint64_t blocks[CT_KINDS], uint64_t bytes[CT_KINDS]);

/* ---- invalid.c ---- */
/* An INVALID record (kind, call, the stacks, the block's info + 1): -EINVAL when it names an undefined
 * node or info, or -ENOMEM. */
int ct_model_invalid(struct ct_model *m, unsigned kind, unsigned call, uint64_t stack, uint64_t freed,
                     uint64_t block);
/* A CRASH record: -EINVAL when the stack is undefined. */
int ct_model_crash(struct ct_model *m, uint64_t signal, uint64_t stack);
/* Frees of blocks allocated before tracing: END's unmatched frees less the invalid ones. */
uint64_t ct_model_frees_before_tracing(const struct ct_model *m);
void ct_model_invalid_release(struct ct_model *m);

/* ---- marks.c ---- */
/* A MARK record at the current time; takes ownership of name. 0 or -ENOMEM. */
int ct_model_mark(struct ct_model *m, struct ct_bytes name);
/* Before reading: narrow the figures to what happens between the first mark named from and the
 * first mark named to after it (the strings must outlive m). 0 or -ENOMEM. */
int ct_model_between(struct ct_model *m, const char *from, const char *to);
/* Before reading: narrow the figures to the times [from_us, to_us) (0 and UINT64_MAX: the run's
 * start and end). 0 or -ENOMEM. */
int ct_model_window(struct ct_model *m, uint64_t from_us, uint64_t to_us);
/* The clock moved (ct_model_time): a window by time opens or closes. */
void ct_model_window_time(struct ct_model *m);
/* After reading: applies --between or --from/--to (a bound by time past the run's end: the end, and
 * the flags say so). Each info keeps the allocations made between the marks, and as
 * live blocks those live at TO less those live at FROM (the trace names blocks by site, not by
 * address: at a site whose older blocks were freed between the marks, the growth is smaller than
 * what the stretch left live). The leak classes go (they are the exit scan's), the peak stays the
 * run's. Returns 0, or -1 with a one-line reason in err (a mark not in the trace). */
int ct_model_between_apply(struct ct_model *m, char *err, size_t errlen);
void ct_model_marks_release(struct ct_model *m);

/* ---- model.c, for aggregated.c: an AGG_SNAPSHOT changes the model as its records would ---- */
/* touch() before info's live count changes (its value at the peak kept), and its entry of the
 * current site slice (NULL: out of memory). */
void ct_model_touch(const struct ct_model *m, struct ct_info *info);
struct ct_slice *ct_model_slice(struct ct_model *m, const struct ct_info *info);

/* Allocation sites: alloc infos aggregated by stack node. */
struct ct_site {
	uint32_t stack;
	uint64_t leaked_bytes, leaked_allocations;
	uint64_t peak_bytes, peak_allocations;
	uint64_t allocations, bytes_allocated, temporary;
	/* The leaked blocks and bytes by leak kind (ct_info_kinds), when the model is classified. */
	uint64_t class_allocations[CT_KINDS], class_bytes[CT_KINDS];
	uint32_t group; /* in a report's ranking: its group's index + 1 (report.c); 0 otherwise */
	int kind;       /* in a report's leak ranking of a classified trace: its kind + 1; 0 otherwise */
};

/* Builds the sites (one per stack node that has an alloc info) into *out (caller frees).
 * Returns the number of sites or -ENOMEM. */
long ct_model_sites(const struct ct_model *m, struct ct_site **out);

#endif
