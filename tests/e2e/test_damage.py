# SPDX-License-Identifier: MIT
# A damaged trace reads like a truncated one (issue 23, nothing silent). tests/progs/trickle.c's real
# trace (600 allocations over 0.6 s: a hundred zstd blocks) with bytes changed:
# - a block zstd refuses (its header's type made the reserved one) at the start, the middle and the
#   end: exit 0, one warning "corrupt trace near byte N" naming that block, and exactly the report of
#   the trace cut there (a prefix of the whole trace's);
# - a byte flipped at the start, the middle and the end: exit 0, the warning, N within the file,
#   "complete": false, the JSON "damaged" and the text report's first line saying so. Damage zstd
#   cannot see (a raw block's data) shows in the records decoded from it, so their figures are not
#   checked against the whole's here: a changed byte may still decode as a record (README), even
#   as a SUPPRESSIONS record, whose text the warning then says was left out;
# - the frame's checksum: every figure, and the checksum named;
# - the zstd magic and the block holding the file header: one-line errors, as a foreign file.
# A check (--max-peak, --fail-on) on a damaged trace never passes: one line says it is incomplete,
# exit 1 (23 when the part read already breaks a rule); ctrack --check on a trace damaged while it
# was written says so in its closing message and does not check it (exit 1). The zstd layout is read here from RFC 8878,
# not from the code under test.
import json
import os
import re
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
trickle = env.progs[0]
d = env.fresh_dir("damage")
FIGURES = ("allocations", "frees", "bytes_allocated", "leaked_bytes", "peak_heap_bytes")
TRICKLE = {"allocations": 600, "frees": 600, "bytes_allocated": 239700}  # tests/progs/trickle.c
WARNING = re.compile(r"ctrack-analyze: warning: (.*): corrupt trace near byte (\d+) \((.+)\); "
                     r"figures cover what was read before it"
                     r"( \(the program's suppressions, which do not parse, left out\))?\n")
INCOMPLETE = (r"^check incomplete: %s is damaged near byte \d+: its figures cover only what was read "
              r"before it, and a damaged trace never passes$")


def blocks(data):
    """The first zstd frame's blocks, [(offset, type, size in the file)], and its checksum's offset."""
    fhd = data[4]
    single, has_sum, dict_id, fcs = (fhd >> 5) & 1, (fhd >> 2) & 1, fhd & 3, fhd >> 6
    p = 4 + 1 + (0 if single else 1) + (0, 1, 2, 4)[dict_id] + ((1 if single else 0), 2, 4, 8)[fcs]
    out = []
    while True:
        h = int.from_bytes(data[p:p + 3], "little")
        kind = (h >> 1) & 3
        size = 1 if kind == 1 else h >> 3
        out.append((p, kind, 3 + size))
        p += 3 + size
        if h & 1:
            return out, (p if has_sum else None)


def write(name, data):
    path = os.path.join(d, name)
    with open(path, "wb") as out:
        out.write(data)
    return path


def changed(name, data, pos, mask=0xff):
    f = bytearray(data)
    f[pos] ^= mask
    return write(name, f)


def damaged_report(label, path, size):
    """The report of a damaged trace: exit 0, the one warning, "complete": false and "damaged",
    the text report's first line; (summary, byte named), or (None, None)."""
    r = env.run_analyze(path, "--json")
    err = r.stderr.decode(errors="replace")
    if not env.eq(label + ": exit 0", r.returncode, 0):
        print(err)
        return None, None
    m = WARNING.fullmatch(err)
    if not env.check(label + ": one warning line, corrupt trace near byte N", m, repr(err)):
        return None, None
    near = int(m.group(2))
    print("%s: %s" % (label, err.strip()))
    env.eq(label + ": the warning names the trace", m.group(1), path)
    env.check(label + ": byte %d is within the file's %d" % (near, size), 0 <= near < size)
    doc = json.loads(r.stdout.decode("utf-8", "surrogateescape"))
    env.eq(label + ": complete", doc["complete"], False)
    env.eq(label + ": JSON damaged: the byte and why", doc.get("damaged"),
           {"near_byte": near, "why": m.group(3)})
    text = env.run_analyze(path)
    env.eq(label + ": text report: exit 0 and the same warning", (text.returncode, text.stderr),
           (0, r.stderr))
    env.eq(label + ": text report's first line says so", text.stdout.decode(errors="replace").split("\n")[0],
           "trace: %s (damaged near byte %d: read up to there)" % (path, near))
    return doc["summary"], near


def cut_summary(data, n):
    """The summary of data cut at n bytes: the trace as far as the damage lets it be read."""
    r = env.run_analyze(write("cut.zst", data[:n]), "--json")
    return json.loads(r.stdout)["summary"] if r.returncode == 0 else None


trace = os.path.join(d, "trickle.zst")
r, _ = env.run_ctrack([trickle], d, opts=("-o", trace))
env.eq("trickle traced", r.returncode, 0)
with open(trace, "rb") as f:
    data = f.read()
whole = env.report(trace)
if not whole:
    env.finish()
env.eq("the whole trace: the program's figures", {k: whole["summary"][k] for k in TRICKLE}, TRICKLE)
env.eq("the whole trace: not damaged", (whole["complete"], whole.get("damaged")), (True, None))
bl, checksum = blocks(data)
print("%d bytes, %d zstd blocks (%d raw), checksum at %s" % (len(data), len(bl),
                                                           sum(b[1] == 0 for b in bl), checksum))
if not env.check("the trace has a checksum and blocks to damage", checksum and len(bl) > 10, repr(bl)):
    env.finish()

# Blocks zstd refuses: the exact prefix before each. A raw block's type 0 or a compressed one's 2
# becomes the reserved 3.
for label, frac in (("start", 0.1), ("middle", 0.5), ("end", 0.9)):
    off, kind, _ = min(bl[1:], key=lambda b: abs(b[0] - len(data) * frac))
    label = "%s: the block at byte %d (type %d) refused" % (label, off, kind)
    s, near = damaged_report(label, changed("refused.zst", data, off, 0x06 if kind == 0 else 0x02), len(data))
    if s:
        env.eq(label + ": the warning names the block", near, off)
        want = cut_summary(data, off)
        env.eq(label + ": figures: the trace cut there", {k: s[k] for k in FIGURES},
               {k: want[k] for k in FIGURES} if want else None)
        for k in TRICKLE:
            env.check("%s: %s %d within [0, %d]" % (label, k, s[k], TRICKLE[k]), 0 <= s[k] <= TRICKLE[k])



def in_data(pos):
    """pos, or the first byte after it when it falls on a block's 3-byte header: a changed header can
    claim a block longer than the file, which reads as a file cut short (zstd: "premature end")."""
    for off, _, _ in bl:
        if off <= pos < off + 3:
            return off + 3
    return pos


# A byte flipped at the start (the first byte past the header's block), the middle (of a block's
# data), the end (the last block's last byte).
for label, pos in (("start", bl[1][0] + 3), ("middle", in_data(len(data) // 2)), ("end", checksum - 1)):
    damaged_report("%s: byte %d of %d flipped" % (label, pos, len(data)), changed("flip.zst", data, pos),
                   len(data))

# The checksum alone: every record was read, and the warning names the checksum.
label = "checksum's last byte flipped"
s, near = damaged_report(label, changed("sum.zst", data, len(data) - ct.trailer_size(data) - 1), len(data))
if s:
    env.eq(label + ": every figure", {k: s[k] for k in FIGURES}, {k: whole["summary"][k] for k in FIGURES})
    env.eq(label + ": the byte named is the checksum's", near, checksum)

# The zstd magic, and the block that holds the file header: errors, as a foreign file is.
for label, pos, mask in (("byte 0 (the zstd magic) flipped", 0, 0xff),
                         ("the header's block refused", bl[0][0], 0x06 if bl[0][1] == 0 else 0x02)):
    r = env.run_analyze(changed("head.zst", data, pos, mask), "--json")
    lines = r.stderr.decode(errors="replace").splitlines()
    env.eq(label + ": exit 1, nothing on stdout", (r.returncode, r.stdout), (1, b""))
    env.check(label + ": one line `ctrack-analyze: ...`",
              len(lines) == 1 and lines[0].startswith("ctrack-analyze: "), repr(lines))

# Checks on a damaged trace: never a silent pass. In the middle, blocks are still live.
off = min(bl[1:], key=lambda b: abs(b[0] - len(data) // 2))
path = changed("check.zst", data, off[0], 0x06 if off[1] == 0 else 0x02)
for label, opts, want in (("--max-peak 1GiB (holds on what was read)", ("--max-peak", "1GiB"), 1),
                          ("--fail-on=reachable (broken by what was read)", ("--fail-on=reachable",), 23)):
    r = env.run_analyze(path, *opts)
    out = r.stdout.decode(errors="replace")
    env.eq("check %s on a damaged trace: exit %d" % (label, want), r.returncode, want)
    env.check("check %s: says it is incomplete" % label, re.search(INCOMPLETE % re.escape(path), out, re.M),
              out)

# ctrack --check on a trace damaged while it is written (the program overwrites 64 bytes of it, past
# the header's block, with 0xff: a block header there becomes the reserved type): the closing
# message says where, and the check is not made on the part before it.
SRC = os.path.join(d, "selfdamage.c")
with open(SRC, "w") as f:
    f.write("""#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
static void *keep[200];
int main(int argc, char **argv)
{
	struct timespec ms = {0, 2000000};
	for (int i = 0; i < 200; i++) {
		keep[i] = malloc(16 + i);
		nanosleep(&ms, NULL);
		if (i != 150)
			continue;
		int fd = open(argv[1], O_WRONLY);
		struct stat st;
		unsigned char junk[64];
		memset(junk, 0xff, sizeof(junk));
		if (fd < 0 || fstat(fd, &st) < 0 || pwrite(fd, junk, sizeof(junk), st.st_size * 3 / 4) != 64)
			return 2;
		close(fd);
	}
	return 0;
}
""")
prog = env.cc(SRC, os.path.join(d, "selfdamage"))
self_trace = os.path.join(d, "self.zst")
r = subprocess.run([env.ctrack, "-o", self_trace, "--check", prog, self_trace], cwd=d, capture_output=True,
                   timeout=60) if prog else None
if r:
    err = r.stderr.decode(errors="replace")
    print(err)
    env.eq("ctrack --check, trace damaged: exit 1 (not checked)", r.returncode, 1)
    env.check("ctrack --check: the summary says damaged", re.search(r"^ctrack: .* \(trace is damaged\)$", err, re.M), err)
    env.check("ctrack --check: where", re.search(r"^ctrack: warning: corrupt trace near byte \d+ \(.*\); figures "
                                                 r"cover what was read before it$", err, re.M), err)
    env.check("ctrack --check: not checked",
              re.search(r"^ctrack: cannot check the leaks: corrupt trace near byte \d+ of '%s' \(.*\): not "
                        r"checked$" % re.escape(self_trace), err, re.M), err)
env.finish()
