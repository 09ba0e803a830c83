/* SPDX-License-Identifier: MIT */
/* ctrack trace format: the one specification of the bytes in a trace file.
 * The shim's writer and the analyzer's reader both include this header; nothing else knows the encoding.
 *
 * A trace file is a sequence of zstd frames (`zstd -d` turns it into the record stream); frames
 * the shim writes without a compressor are made of raw blocks (ctrack/zraw.h). The writer
 * flushes (ZSTD_e_flush) at least every 100 ms, so a killed process leaves every record up to its
 * last flush readable; late records after the last END are appended as extra frames.
 *
 * The decompressed stream is a file header followed by records until the end of the stream.
 *
 * The summary trailer (ctrack/trailer.h, the one encoder and decoder). After its END, the writer may
 * end the file with a zstd skippable frame (magic 0x184D2A5C, which every zstd decoder skips) that
 * gives the figures a reader's model counts from the records before it, so that a summary reads the
 * file's last bytes instead of every record:
 *   | magic u32 | size u32 (bytes that follow) | version v (1) | at v (the frame's file offset) |
 *   | allocations v | frees v | bytes_allocated v | temporary v | peak v | live_bytes v | live_blocks v |
 *   | runtime_us v | classified v (0 or 1) | when classified: 4 x (blocks v, bytes v), by leak class |
 *   | file_hash u64 | check u64 (FNV-1a 64 of every byte before it) | length u32 (of the whole frame) |
 *   | "CSM1" |
 * (u32 and u64 little-endian.) file_hash is ct_file_hash (trailer.h) of the file's bytes before the
 * frame, as the writer wrote them. allocations counts ALLOC and TEMP records, frees FREE, RECENT, TEMP
 * and TEMPFREE records, temporary TEMP and TEMPFREE records; bytes are their alloc infos' sizes; peak
 * is the highest sum of the live blocks' sizes, counting a TEMP's block as live at its record;
 * runtime_us the clock at END. With classified 1, the last CLASSES record's blocks and their bytes by
 * class follow, and no event record comes after that CLASSES record. A writer puts a trailer only
 * where those are all of a summary: one lane, not sampled, not aggregated, no INVALID record and no
 * warning NOTE. A trailer counts only as the file's last bytes, at the offset it names, with its
 * check right and the bytes before it hashing to its file_hash: a file that goes on after it (late
 * records), was cut, was joined to another or changed since holds none a reader may use. Fields may be added
 * before the check; a reader ignores those it does not know, and a trailer of another version.
 *
 * File header (little-endian, explicit, never a struct on disk):
 *   | magic 8 bytes: 0x89 'C' 'T' 'R' 'A' 'C' 'K' '\n'                      |
 *   | version u16 | min_version u16 | header_size u16 | pointer_size u8 | flags u8 | features u32 |
 *   version:      CTRACK_FORMAT_VERSION of the writer.
 *   min_version:  the oldest reader version that can read this file; a reader whose version is
 *                 below it refuses the file, naming both versions. (Version 2 added RECENT,
 *                 version 3 the optional CLASSES, version 4 BATCH: a version 4 writer writes
 *                 min_version 4; version 5 the optional EXACT, which a version 4 reader skips:
 *                 a version 5 writer still writes min_version 4; version 6 EPOCH, which only a
 *                 trace written by several lanes holds: such a trace said min_version 6;
 *                 version 7 ZEPOCH, which such a trace holds instead: it says min_version 7;
 *                 version 8 AGGREGATE and AGG_SNAPSHOT, which only an aggregated trace holds:
 *                 it says min_version 8.)
 *   header_size:  bytes from the first magic byte to the first record (>= CT_HEADER_SIZE); a
 *                 reader skips header bytes it does not know.
 *   pointer_size: 8 on x86_64.  flags, features: 0 in this version.
 *
 * Integers in records are LEB128 varints (`v`, at most 10 bytes for 64 bits); signed values are
 * zigzag-encoded first (`z`). Byte strings are `s` = | length v | bytes |, any bytes at all (an
 * argument may hold newlines or NULs-free binary data; nothing is escaped).
 *
 * Records start with a tag byte. The tag decides how the record is framed:
 *   0x01..0x0f  core events: fixed layout given below, no length. They are nearly all of a trace,
 *               so they carry no framing; a reader that meets an unknown core tag stops with an
 *               error (the version check should have prevented it).
 *   0x10..0x3f  framed, required:  | tag | length v | payload (length bytes) |
 *   0x40..0x7f  framed, optional:  same framing; a reader that does not know the tag skips it.
 *   0x80..0xff  short events: ALLOC, FREE and TEMP in one byte, plus a varint for larger ids.
 *   0x00        invalid: the file is corrupt.
 * A framed record's payload may grow in later versions: readers ignore trailing bytes they do not
 * know, writers only append fields.
 *
 * Identifiers are implicit and dense, assigned in stream order:
 *   stack node ids: 0 is the root (empty stack), 1 is the "truncated" root (the real stack was
 *                   deeper than the capture depth; the frames above were cut); FRAME records
 *                   define 2, 3, 4, ...
 *   alloc info ids: INFO records define 0, 1, 2, ...
 *   module ids:     given in the MODULE record (dense, never reused within a trace).
 * A record only refers to ids defined before it.
 *
 * Addresses: a FRAME's ip is a return address (the call instruction's next byte), except that the
 * innermost frame of a stack is the return address into the program from the allocation function,
 * and that a node an EXACT record names holds an exact ip: the instruction a signal interrupted
 * (the frame below a signal handler's trampoline), which may be a function's first byte.
 * Symbolizers look up ip - 1, the call, for a return address: module, function, file, line and
 * inline chain (a call that is the last instruction of a function, or of a module's code, returns
 * to the next one's first byte); an exact ip they look up at ip itself. A frame belongs to the
 * module whose segment [base + vaddr, base + vaddr + memsz) held the address looked up (ip - 1, or
 * ip when exact) when the FRAME record (its EXACT record) was read (modules come and go with
 * MODULE/UNMODULE records, always written before the frames that need them).
 *
 * Time: TIME records advance the clock (microseconds since the process started, the PROCESS
 * record's start time); every record after a TIME happened at or after that time.
 */
#ifndef CTRACK_FORMAT_H
#define CTRACK_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define CTRACK_MAGIC \
	"\x89" \
	"CTRACK\n"
#define CT_MAGIC_SIZE 8
#define CTRACK_FORMAT_VERSION 8
#define CTRACK_FORMAT_MIN_VERSION 1  /* oldest file version this reader accepts */
#define CTRACK_FORMAT_READER_MIN 4   /* min_version this writer writes: readers older than 4 lack BATCH */
#define CTRACK_FORMAT_EPOCH_MIN 6    /* the min_version of a trace that may hold EPOCH records */
#define CTRACK_FORMAT_ZEPOCH_MIN 7   /* ... and of one that may hold ZEPOCH records */
#define CTRACK_FORMAT_AGG_MIN 8      /* ... and of an aggregated one (AGGREGATE, AGG_SNAPSHOT) */
#define CTRACK_FORMAT_SAMPLING_MIN 8 /* ... and of a sampled one (SAMPLING) */
#define CTRACK_FORMAT_ATTACH_MIN 8   /* ... and of one that starts at an attach (ATTACH) */
#define CT_HEADER_SIZE 20            /* magic + version..features */

#define CT_SAMPLING_RATE_MAX (UINT64_C(1) << 26) /* SAMPLING's largest rate in bytes (64 MiB) */

#define CT_STACK_ROOT 0      /* node id of the empty stack */
#define CT_STACK_TRUNCATED 1 /* root of stacks cut at the capture depth */
#define CT_STACK_FIRST 2     /* id of the first FRAME record */
#define CT_RECENT_WINDOW 32  /* largest age of a RECENT record: the one-byte form's range */

/* The records: name, tag. Tags are on-disk numbers: never renumber or reuse one.
 *
 * ALLOC   0x01  | tag | info v |
 *   One allocation (malloc, calloc, new, the new block of a realloc, ...) of alloc info `info`:
 *   its size and stack. Example: info 5 -> 01 05.
 * FREE    0x02  | tag | info v |
 *   One live allocation of alloc info `info` was freed (free, delete, the old block of a realloc).
 *   The writer maps addresses to allocations, so the trace holds no heap addresses.
 * TEMP    0x03  | tag | info v |
 *   An allocation of `info` that the same thread freed as its very next allocation event: an
 *   ALLOC and its FREE in one record (heaptrack's "temporary allocation"). Example: 03 05.
 * INFO    0x04  | tag | size v | stack v |
 *   Defines the next alloc info id: a (size in bytes, stack node id) pair. Example: 04 80 01 07
 *   = size 128 at stack node 7.
 * FRAME   0x05  | tag | parent v | ip delta z |
 *   Defines the next stack node id: the frame `ip` called from the stack `parent` (outermost frames
 *   are nearest the root). ip = previous FRAME record's ip + delta (0 before the first FRAME).
 *   A stack is identified by its innermost node. Example: 05 00 <zigzag ip> = outermost frame.
 * TIME    0x06  | tag | delta_us v |
 *   The clock advanced by delta_us microseconds.
 * TEMPFREE 0x07 | tag | info v |
 *   Like FREE, and the allocation it frees was temporary: its ALLOC was written before the thread's
 *   next event was known (the writer flushes to the file every 100 ms). Example: 07 05.
 * RECENT  0x08  | tag | age v |   (since version 2)
 *   Like FREE, naming the allocation by position instead of by info: it is the one written by the
 *   age-th most recent ALLOC record (age 1 is the last ALLOC before this record; 1 <= age <=
 *   CT_RECENT_WINDOW, so a reader keeps the infos of the last CT_RECENT_WINDOW ALLOCs). Programs
 *   free what they allocated shortly before; the age repeats where the info does not (a ring of
 *   16 buffers of random sizes frees at age 16 every time), so it compresses to almost nothing.
 *   Only ALLOC records count, not TEMP. Example: 08 10 = free the block of the 16th last ALLOC.
 *
 * PROCESS 0x10  | pid v | ppid v | start_unix_ns v | exe s | argc v | argv s... |
 *   The traced process; the first record of a trace. argv is exactly the process's arguments.
 * MODULE  0x11  | id v | base v | path s | build_id s | nseg v | nseg x (vaddr v, memsz v,
 *                offset v, prot u8 (1 read, 2 write, 4 exec)) |
 *   A loaded ELF object (executable, shared library, vdso): `base` is the load bias (runtime
 *   address = base + ELF vaddr), segments are its PT_LOAD program headers.
 * UNMODULE 0x12 | id v |
 *   The module was unloaded (dlclose); its address range may be reused by a later MODULE.
 * END     0x13  | allocations v | frees v | bytes_allocated v | unmatched_frees v |
 *                lost_allocations v | end_us v |
 *   Totals as counted by the writer; the trace is complete. Frees of addresses that were no block
 *   ctrack saw allocated are `unmatched_frees`, not `frees`: blocks allocated before it started,
 *   and the invalid frees INVALID records name (a reader subtracts those for the former; one that
 *   skips INVALID counts all as the former, as readers did before it); `lost_allocations` are
 *   blocks that the allocator returned again without ctrack seeing them freed; end_us is the
 *   clock at the end. Late events (destructors that run after
 *   ctrack's teardown) may follow in extra frames, each batch closed by a new END that supersedes
 *   the previous one.
 * EXEC    0x14  | path s |
 *   The process is replacing its image with execve(path): like END, the trace is complete if this
 *   is its last record (if the exec fails, tracing goes on and more records follow).
 * BATCH   0x15  | len v x CT_COLUMNS | the columns' bytes, one after the other |   (since version 4)
 *   A run of records (any but BATCH itself), stored by columns rather than one after the other:
 *   the same records, read in the same order, as if they stood here. Column 0 holds one byte per
 *   record, the others the rest of their fields; include/ctrack/columns.h says which byte goes
 *   where and is the one splitter and joiner. A field's bytes sit next to the same field of
 *   the records around it, so zstd's entropy coder sees the alloc info ids, the record kinds and
 *   the definitions as separate alphabets (the live benchmark's trace: 10.1 -> 7.7 MB).
 *   Example: 15 0a 02 01 00 00 00 00 00 a0 80 01 = ALLOC of info 1 (column 0: a0, column 1: 01),
 *   then RECENT of age 1 (column 0: 80).
 * EPOCH   0x16  | lanes v | len v x lanes | marks_len v x lanes | lane 0's records (len[0] bytes) |
 *                 ... | lane lanes-1's records | lane 0's marks (marks_len[0] bytes) | ... |
 *                 (since version 6)
 *   The records a writer with several lanes (matcher threads that split the addresses between
 *   them) made in one stretch of the program's events, each lane's in its own run, and where each
 *   stands: as if they stood here one after the other in the order the marks give. A lane's marks
 *   are pairs | key delta v | bytes v |: the next `bytes` bytes of its run (whole records) have the
 *   key of its previous mark plus `key delta` (the first mark's delta counts from 0, the same
 *   starting point for every lane of the EPOCH). The records are read mark by mark, the mark with
 *   the lowest key first, the lower lane's first between equal keys; the bytes of a run after its
 *   last mark come last, lane by lane. The runs hold records of any kind but BATCH and EPOCH.
 *   RECENT counts the ALLOC records of its own lane only: lane 0's are its runs' and every ALLOC
 *   record outside an EPOCH; lane l's (l >= 1) those of lane l's runs of all EPOCH records so far.
 *   1 <= lanes <= 8. Example: 16 0e 02 02 01 04 02 a1 80 a2 00 01 02 01 01 01 = lane 0's ALLOC of
 *   info 1 (its mark 00 01: key 0, 1 byte), lane 1's ALLOC of info 2 (01 01: key 1), then lane 0's
 *   RECENT of age 1 (02 01: key 2), which frees lane 0's last ALLOC, info 1.
 * ZEPOCH  0x17  | lanes v | field v x lanes | lane 0's bytes | ... | lane lanes-1's bytes |
 *                 (since version 7)
 *   An EPOCH whose lanes compressed their own parts, each on its own thread. Lane l's field is
 *   zlen << 1 | fresh: its bytes are the next zlen bytes of the record, which continue lane l's own
 *   stream of zstd frames or, when fresh is 1, start a new frame of it (a reader starts a new
 *   decoder: the lane's first part is fresh, and a part after one that was lost). They decompress
 *   to exactly this record's part of lane l (the writer flushed there):
 *   | len v x CT_COLUMNS | the columns' bytes | the marks (the rest) |, that is, the lane's run as a
 *   BATCH payload, its records by columns (ctrack/columns.h), then its marks: an EPOCH's (key
 *   delta, bytes), in one byte each where they fit (ct_put_zmark: a lane makes about 1.5 marks an
 *   event, nearly all a delta below 32 and a few bytes). zlen 0: the lane made nothing. The records are then
 * read as an EPOCH's: by mark, RECENT per lane. The runs hold records of any kind but BATCH, EPOCH and
 * ZEPOCH; 1 <= lanes <= 8. A trace holds ZEPOCH or EPOCH records, not both.
 *
 * AGGREGATE 0x18 | interval_us v |   (since version 8)
 *   The trace is aggregated (ctrack --aggregate): the writer kept each alloc info's figures in the
 *   process and wrote them as AGG_SNAPSHOT records, about every interval_us microseconds and before
 *   every record that must see them (MARK, CLASSES, EXEC, CRASH, END), instead of one record per
 *   event: such a trace holds no ALLOC, FREE, TEMP, TEMPFREE nor RECENT records, and a reader's
 *   memory over time has the snapshots' resolution. Everything else (PROCESS, MODULE, FRAME, INFO,
 *   THREAD, TIME, NOTE, MARK, CLASSES, INVALID, CRASH, END, ...) is written as in a full trace.
 *   Written once, after PROCESS; the file says min_version 8. Example: 18 03 c0 84 3d = every 1 s.
 * AGG_SNAPSHOT 0x19 | heap_max v | rss v | rss_max v | n v | n x (info delta z, allocations v,
 *                     temporary v, live delta z) | peak v | [peak_us v | m v | m x (info delta z,
 *                     at_peak v)], when peak != 0 |   (since version 8)
 *   What changed since the previous AGG_SNAPSHOT (or the start), at the clock's time: the n alloc
 *   infos whose figures changed, each as the allocations made of it (ALLOC + TEMP), those of them
 *   and of earlier ones that ended as temporary allocations (TEMP, TEMPFREE) and the change of its
 *   live blocks; its frees are allocations - live delta. Info ids increase: each is the previous
 *   entry's id plus the delta (the first counts from 0). heap_max: the highest heap in use (bytes)
 *   since the previous snapshot; rss and rss_max: the resident set size now and its highest sample
 *   since.
 *   peak: 0 when the global peak of the heap in use did not rise since the previous snapshot; else
 *   the new peak (bytes), its time (microseconds, the clock's) and the m infos whose live blocks at
 *   that peak differ from their live blocks after this snapshot, with their blocks live at the peak
 *   (ids delta-coded as above); every other info had as many live at the peak as after this
 *   snapshot. A snapshot is applied whole or not at all: a trace cut inside one ends at the
 *   previous. The figures are exactly a full trace's of the same run (its records, in the same
 *   order, summed). Example: 19 0a 80 01 00 00 01 0a 02 00 02 00 = heap_max 128, no RSS, info 5:
 *   2 allocations, none temporary, 1 live block more; the peak did not rise.
 *
 * Short events 0x80..0xff  | 1 k k c i i i i | [info >> 4 v, when c = 1] |
 *   What the writer uses for ALLOC (kk = 1), FREE (kk = 2) and TEMP (kk = 3), the bulk of a trace:
 *   iiii is info & 15, and c says whether the varint (info >> 4) follows. One byte instead of two
 *   for the 16 lowest ids, two instead of three up to 2047.
 *   kk = 0 is RECENT in one byte, | 1 0 0 a a a a a |: age = aaaaa + 1 (since version 2).
 *   Examples: TEMP of info 5 -> e5; ALLOC of info 300 -> bc 12 (300 = 18 * 16 + 12);
 *   RECENT of age 16 -> 8f.
 *
 * THREAD  0x40  | tid v | state u8 (0 started, 1 exited) |   optional
 *   A thread made its first allocation event, or exited.
 * SAMPLE  0x41  | rss_bytes v |   optional
 *   Resident set size at the current time (heap totals are computed by the reader itself).
 * NOTE    0x42  | level u8 (0 info, 1 warning) | text s |   optional
 *   A message from the shim for the person reading the report (e.g. tracing stopped early).
 * CLASSES 0x43  | n v | n x (info v, definite v, indirect v, possible v, reachable v) |   optional,
 *                since version 3 (a version 2 reader skips it)
 *   The live blocks by leak class, as memcheck defines the classes, from a reachability scan of the
 *   program's memory: for each alloc info with live blocks, how many are definitely lost, indirectly
 *   lost, possibly lost and still reachable (their sum is the info's live count when the scan ran).
 *   Written before END (the scan at exit), and wherever the program asked for a scan
 *   (ctrack_check_leaks()); a later CLASSES record supersedes an earlier one. Blocks allocated after
 *   the last one (a process that died after a check) were never scanned.
 *   Example: 43 06 01 05 02 00 00 01 = one info, 5, of which 2 definite and 1 reachable.
 * SUPPRESSIONS 0x44 | text s |   optional, since version 3
 *   Leak suppressions the program carries: what its __lsan_default_suppressions() returned
 *   (LeakSanitizer's syntax, `leak:PATTERN` lines). Example: 44 0a 09 "leak:foo\n".
 * MARK    0x45  | name s |   optional, since version 3
 *   A named point in the program's run, from ctrack_mark() (include/ctrack/ctrack.h): every event
 *   the program made before the call precedes it (events of other threads that raced with the call
 *   may fall on either side). Names may repeat. Example: 45 04 03 "req".
 * EXACT   0x46  | (no payload) |   optional, since version 5 (a version 4 reader skips it)
 *   The stack node the last FRAME record before it defined has an exact ip (see Addresses): the
 *   instruction a signal interrupted, looked up at ip itself rather than at ip - 1. Written right
 *   after that FRAME record; a trace without EXACT records has return addresses only, and a reader
 *   that skips them looks every frame up at ip - 1. Example: 05 03 40 46 00 = a node under node 3,
 *   32 bytes past the last FRAME's ip, and that ip is exact.
 * INVALID 0x47  | kind u8 | call u8 | stack v | freed v | block v |   optional, since version 5
 *   An invalid free, memcheck's "Invalid free()", one of END's unmatched_frees: a free (call 0:
 *   free, delete, ...) or realloc (call 1: realloc, reallocarray) of an address that was no live
 *   block. kind 0: a double free, the address was freed before and nothing was allocated there since;
 *   1: the address lies in a loaded object (a global, a static, a constant: no heap block); 2: in the
 *   main thread's stack; 3: ctrack never saw it allocated, and the program died of a signal inside
 *   the call (the allocator refused it: glibc's "free(): invalid pointer"). A reader shows a kind it
 *   does not know as an invalid free. `stack`: the call's backtrace, the node of its call site alone
 *   under the truncated root when only that is known, the whole backtrace when the program died in
 *   the call (the CRASH record's stack from the call site outward). `freed`: for a double free, the
 *   stack node of the call that freed the address before (its call site), else 0. `block`: for a
 *   double free of a block ctrack saw allocated, its alloc info + 1 (size and allocation stack),
 *   else 0. Example: 47 05 00 00 09 07 03 = a double free by free() at node 9 of a block of alloc
 *   info 2 freed before at node 7.
 * CRASH   0x48  | signal v | stack v |   optional, since version 5
 *   The program died of signal `signal` (its Linux number) where the shim's handler stood in for
 *   the default action: `stack` is the backtrace of the thread that took it, from the instruction
 *   the signal interrupted (an exact ip, EXACT) outward; 0 when it could not be walked. Written
 *   before the END of a crash. Example: 48 02 06 0c = SIGABRT, stack node 12.
 * HOLDERS 0x49  | n v | n x (info v, holder v, count v) |   optional, since version 5
 *   Follows a CLASSES record, for its indirectly lost blocks: `count` blocks of alloc info `info`
 *   are lost through a definitely lost block of alloc info `holder`, the one that leads their
 *   clique (memcheck's grouping). A check that suppresses the holder's blocks suppresses these too,
 *   as LeakSanitizer drops what only a suppressed block reaches. A CLASSES record without HOLDERS
 *   says nothing of who holds its indirectly lost blocks. Example: 49 01 07 05 02 = 2 indirectly
 *   lost blocks of info 7 are held by a definitely lost block of info 5.
 * SAMPLING 0x4A | rate v | seed v |   optional, since version 8
 *   The trace is sampled (ctrack --sample=BYTES): the shim recorded one allocation per `rate` bytes
 *   allocated on average, chosen by a Poisson process over the bytes each thread allocates (an
 *   allocation of s bytes is recorded with probability p(s) = 1 - exp(-s / rate), independently of
 *   the others), and a free only when it ends a recorded block. So every count and byte figure of
 *   the trace's records is a sample: a reader weighs each allocation of an alloc info of size s as
 *   1 / p(s) allocations and s / p(s) bytes (s = 0 counts as 1 byte), which makes its totals, sites,
 *   peak and charts unbiased estimates. A sampled trace has no CLASSES (the leak scan needs every
 *   block) and its TEMP records are blocks freed by the thread's next recorded event. `seed`: the
 *   seed of the shim's random draws (CTRACK_SAMPLE_SEED, or one it chose), to repeat the run's
 *   choice. Written once, right after PROCESS, before any event; the file says min_version 8, since
 *   a reader that skipped this record would take the sample for every allocation.
 *   Example: 4a 04 80 80 20 2a = one allocation per 512 KiB, seed 42.
 * ATTACH  0x4B  | unix_ns v | ordinal v |   optional, since version 8
 *   The trace starts at an attach (ctrack -p PID): the shim was loaded into a process that had run
 *   for a while, at unix_ns (Unix time, nanoseconds; the trace's clock starts there), and this is
 *   the ordinal-th attach into that process (1 for the first; each later one follows a detach).
 *   Blocks allocated before the attach were never seen: the trace's figures cover what was
 *   allocated while attached, and END's unmatched_frees less the INVALID records count the frees
 *   (and reallocs) of blocks allocated before the attach, whose bytes are not known. The trace ends
 *   at the detach (END, with the leak classes of the blocks allocated while attached, the program
 *   running on) or at the process's exit. Written once, right after PROCESS, before any event; the
 *   file says min_version 8, so that no reader takes it for a whole run.
 *   Example: 4b 0a 80 80 a8 b1 e3 9f e7 cb 17 01 = at 1,700,000,000 s (Unix time), the first attach.
 */
/* Values carried in records' fields (on disk: never renumbered). */
enum { CT_THREAD_STARTED = 0, CT_THREAD_EXITED = 1 }; /* THREAD's state */
enum { CT_NOTE_INFO = 0, CT_NOTE_WARNING = 1 };       /* NOTE's level */
/* CLASSES' counts, in their order on disk: memcheck's four leak classes. */
enum { CT_CLASS_DEFINITE, CT_CLASS_INDIRECT, CT_CLASS_POSSIBLE, CT_CLASS_REACHABLE, CT_CLASSES };
/* INVALID's kind (what the freed address was) and call. */
enum { CT_INVALID_DOUBLE, CT_INVALID_STATIC, CT_INVALID_STACK, CT_INVALID_NOT_ALLOCATED, CT_INVALID_KINDS };
enum { CT_INVALID_FREE, CT_INVALID_REALLOC };

#define CT_RECORDS(X) \
	X(ALLOC, 0x01) \
	X(FREE, 0x02) \
	X(TEMP, 0x03) \
	X(INFO, 0x04) \
	X(FRAME, 0x05) \
	X(TIME, 0x06) \
	X(TEMPFREE, 0x07) \
	X(RECENT, 0x08) \
	X(PROCESS, 0x10) \
	X(MODULE, 0x11) \
	X(UNMODULE, 0x12) \
	X(END, 0x13) \
	X(EXEC, 0x14) \
	X(BATCH, 0x15) \
	X(EPOCH, 0x16) \
	X(ZEPOCH, 0x17) \
	X(AGGREGATE, 0x18) \
	X(AGG_SNAPSHOT, 0x19) \
	X(THREAD, 0x40) \
	X(SAMPLE, 0x41) \
	X(NOTE, 0x42) \
	X(CLASSES, 0x43) \
	X(SUPPRESSIONS, 0x44) \
	X(MARK, 0x45) \
	X(EXACT, 0x46) \
	X(INVALID, 0x47) \
	X(CRASH, 0x48) \
	X(HOLDERS, 0x49) \
	X(SAMPLING, 0x4A) \
	X(ATTACH, 0x4B)

enum ct_record_tag {
#define CT_TAG_ENUM(name, tag) CT_REC_##name = tag,
	CT_RECORDS(CT_TAG_ENUM)
#undef CT_TAG_ENUM
};

#define CT_TAG_CORE_MAX 0x0f
#define CT_TAG_FRAMED_MIN 0x10
#define CT_TAG_OPTIONAL_MIN 0x40
#define CT_TAG_MAX 0x7f
#define CT_TAG_SHORT_MIN 0x80

#define CT_SEG_READ 1
#define CT_SEG_WRITE 2
#define CT_SEG_EXEC 4

/* Longest encoding of a 64-bit varint. */
#define CT_VARINT_MAX 10

/* Name of a record tag, or NULL for an unknown one. */
static inline const char *ct_record_name(unsigned tag)
{
	switch (tag) {
#define CT_TAG_NAME(name, tag) \
	case tag: \
		return #name;
		CT_RECORDS(CT_TAG_NAME)
#undef CT_TAG_NAME
	}
	return NULL;
}

static inline int ct_tag_is_core(unsigned tag)
{
	return tag >= 0x01 && tag <= CT_TAG_CORE_MAX;
}
static inline int ct_tag_is_framed(unsigned tag)
{
	return tag >= CT_TAG_FRAMED_MIN && tag <= CT_TAG_MAX;
}
static inline int ct_tag_is_optional(unsigned tag)
{
	return tag >= CT_TAG_OPTIONAL_MIN && tag <= CT_TAG_MAX;
}
static inline int ct_tag_is_short(unsigned tag)
{
	return tag >= CT_TAG_SHORT_MIN;
}

/* The number of varints after a core record's tag (2 for INFO and FRAME), or 0 for a tag that is
 * not a core record's. */
static inline int ct_core_fields(unsigned tag)
{
	if (!ct_tag_is_core(tag) || !ct_record_name(tag))
		return 0;
	return tag == CT_REC_INFO || tag == CT_REC_FRAME ? 2 : 1;
}

/* Writes v as LEB128 at p (room for CT_VARINT_MAX bytes); returns the bytes written. */
static inline size_t ct_put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/* Reads a LEB128 varint from [p, end). Returns the bytes consumed, 0 if the input ends inside
 * it (truncated), or -1 if it is longer than 64 bits (corrupt). */
static inline int ct_get_varint(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	uint64_t r = 0;
	for (int i = 0; i < CT_VARINT_MAX; i++) {
		if (p + i >= end)
			return 0;
		uint8_t b = p[i];
		if (i == 9 && b > 1)
			return -1;
		r |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			*v = r;
			return i + 1;
		}
	}
	return -1;
}

/* Writes the short form of an ALLOC, FREE or TEMP record (tag) of alloc info `info` at p (room for
 * 1 + CT_VARINT_MAX bytes); returns the bytes written. */
static inline size_t ct_put_short_event(uint8_t *p, unsigned tag, uint64_t info)
{
	p[0] = (uint8_t)(CT_TAG_SHORT_MIN | tag << 5 | (info >= 16 ? 0x10 : 0) | (info & 15));
	return info >= 16 ? 1 + ct_put_varint(p + 1, info >> 4) : 1;
}

/* Writes the one-byte RECENT record of age 1..CT_RECENT_WINDOW at p; returns 1. */
static inline size_t ct_put_recent(uint8_t *p, uint32_t age)
{
	p[0] = (uint8_t)(CT_TAG_SHORT_MIN | (age - 1));
	return 1;
}

/* Reads a short event at p (p[0] >= CT_TAG_SHORT_MIN) into its record tag (CT_REC_ALLOC, _FREE,
 * _TEMP or _RECENT) and info (the age, for RECENT). Returns the bytes consumed, 0 if the input
 * ends inside it, -1 if it is corrupt. */
static inline int ct_get_short_event(const uint8_t *p, const uint8_t *end, unsigned *tag, uint64_t *info)
{
	*tag = (p[0] >> 5) & 3;
	*info = p[0] & 15;
	if (!*tag) {
		*tag = CT_REC_RECENT;
		*info = (p[0] & 31u) + 1;
		return 1;
	}
	if (!(p[0] & 0x10))
		return 1;
	uint64_t high;
	int k = ct_get_varint(p + 1, end, &high);
	if (k <= 0)
		return k;
	if (high >> 60)
		return -1;
	*info |= high << 4;
	return 1 + k;
}

/* Reads an EPOCH mark (| key delta v | bytes v |, record.h's ct_put_epoch_mark) at [p, end): its length,
 * or 0 when it is cut short. */
static inline int ct_get_epoch_mark(const uint8_t *p, const uint8_t *end, uint64_t *delta, uint64_t *bytes)
{
	int k = ct_get_varint(p, end, delta), m;
	if (k <= 0 || (m = ct_get_varint(p + k, end, bytes)) <= 0)
		return 0;
	return k + m;
}

/* A mark of a ZEPOCH part: one byte | d d d d d b b b | for a key delta d below 32 and 1 to 7 bytes
 * b, nearly every mark; else | 00 | key delta v | bytes v |. Returns its length. */
#define CT_ZMARK_MAX (1 + 2 * CT_VARINT_MAX)
static inline size_t ct_put_zmark(uint8_t *p, uint64_t delta, uint64_t bytes)
{
	if (delta < 32 && bytes - 1 < 7) {
		*p = (uint8_t)(delta << 3 | bytes);
		return 1;
	}
	p[0] = 0;
	size_t n = 1 + ct_put_varint(p + 1, delta);
	return n + ct_put_varint(p + n, bytes);
}

/* Reads a ZEPOCH mark at [p, end): its length, or 0 when it is cut short or no mark (b = 0 with d
 * not 0). */
static inline int ct_get_zmark(const uint8_t *p, const uint8_t *end, uint64_t *delta, uint64_t *bytes)
{
	if (p >= end || (*p && !(*p & 7)))
		return 0;
	if (*p) {
		*delta = *p >> 3;
		*bytes = *p & 7;
		return 1;
	}
	int n = ct_get_epoch_mark(p + 1, end, delta, bytes);
	return n ? 1 + n : 0;
}

static inline uint64_t ct_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}
static inline int64_t ct_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static inline void ct_put_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}
static inline void ct_put_u32(uint8_t *p, uint32_t v)
{
	ct_put_u16(p, (uint16_t)v);
	ct_put_u16(p + 2, (uint16_t)(v >> 16));
}
static inline uint16_t ct_get_u16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}
static inline uint32_t ct_get_u32(const uint8_t *p)
{
	return ct_get_u16(p) | (uint32_t)ct_get_u16(p + 2) << 16;
}
static inline void ct_put_u64(uint8_t *p, uint64_t v)
{
	ct_put_u32(p, (uint32_t)v);
	ct_put_u32(p + 4, (uint32_t)(v >> 32));
}
static inline uint64_t ct_get_u64(const uint8_t *p)
{
	return ct_get_u32(p) | (uint64_t)ct_get_u32(p + 4) << 32;
}

/* Writes the file header (CT_HEADER_SIZE bytes) at p, for readers from min_version on. */
static inline size_t ct_put_header_min(uint8_t *p, uint16_t min_version)
{
	memcpy(p, CTRACK_MAGIC, CT_MAGIC_SIZE);
	ct_put_u16(p + 8, CTRACK_FORMAT_VERSION);
	ct_put_u16(p + 10, min_version);
	ct_put_u16(p + 12, CT_HEADER_SIZE);
	p[14] = (uint8_t)sizeof(void *);
	p[15] = 0;
	ct_put_u32(p + 16, 0);
	return CT_HEADER_SIZE;
}

/* The same for every reader that knows BATCH (a trace without EPOCH records). */
static inline size_t ct_put_header(uint8_t *p)
{
	return ct_put_header_min(p, CTRACK_FORMAT_READER_MIN);
}

#endif /* CTRACK_FORMAT_H */
