# SPDX-License-Identifier: MIT
# Reading ahead (analyzer/readahead.c) changes nothing a reader can see: every trace gen_trace writes
# (whole, cut, damaged, newer, foreign), its bombs (small files that ask for much) and the fuzz
# target's seeds are read by ctrack-analyze with CTRACK_READ_AHEAD=1 (a thread reads ahead whatever
# the size) and =0 (one thread), and the exit status, the report and every message must be the same
# bytes: the same figures, the same warnings naming the same offsets.
import os
import subprocess
import sys
import tempfile

gen, analyze, corpus = sys.argv[1:4]
failed = checked = 0


def run(path, ahead, *opts):
    e = dict(os.environ, CTRACK_READ_AHEAD=ahead)
    r = subprocess.run([analyze, *opts, path], capture_output=True, env=e, timeout=60)
    return r.returncode, r.stdout, r.stderr


with tempfile.TemporaryDirectory() as d:
    subprocess.run([gen, d], check=True, stdout=subprocess.DEVNULL)
    os.mkdir(os.path.join(d, "bombs"))
    subprocess.run([gen, "--bombs", os.path.join(d, "bombs")], check=True, stdout=subprocess.DEVNULL)
    paths = [os.path.join(d, n) for n in sorted(os.listdir(d)) if n != "bombs"]
    paths += [os.path.join(d, "bombs", n) for n in sorted(os.listdir(os.path.join(d, "bombs")))]
    paths += [os.path.join(corpus, n) for n in sorted(os.listdir(corpus))]
    for path in paths:
        for opts in ((), ("--json",)):
            one, two = run(path, "0", *opts), run(path, "1", *opts)
            checked += 1
            if one != two:
                failed += 1
                print("FAIL %s %s: %r against %r" % (os.path.basename(path), " ".join(opts),
                                                    (one[0], one[2][-300:]), (two[0], two[2][-300:])))
print("%d runs compared, %d differ" % (checked, failed))
sys.exit(1 if failed or checked < 100 else 0)
