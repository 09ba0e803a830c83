# SPDX-License-Identifier: MIT
# Runs the reader's libFuzzer target (fuzz_reader.c) for SECONDS from the seed corpus (read-only:
# new inputs go to SCRATCH), with a 10 s limit per input and libFuzzer's 2 GiB memory limit. Any
# crash, sanitizer report, timeout or memory blow-up fails the test, the input saved in SCRATCH.
# Usage: run_fuzz.py FUZZER CORPUS SCRATCH SECONDS
import os
import re
import shutil
import subprocess
import sys

fuzzer, corpus, scratch, seconds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
shutil.rmtree(scratch, ignore_errors=True)
work = os.path.join(scratch, "corpus")
os.makedirs(work)
cmd = [fuzzer, "-max_total_time=%d" % seconds, "-timeout=10", "-rss_limit_mb=2048",
       "-max_len=8192", "-print_final_stats=1", "-artifact_prefix=" + scratch + "/", work, corpus]
print("run:", " ".join(cmd), flush=True)
r = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=seconds + 120)
execs = re.search(r"stat::number_of_executed_units:\s*(\d+)", r.stderr)
print("executions: %s, exit %d" % (execs.group(1) if execs else "?", r.returncode))
if r.returncode != 0:
    print(r.stderr[-6000:])
    print("FAIL: the fuzzer found an input that breaks the reader; it is in", scratch)
    sys.exit(1)
print("PASS no crash, hang or memory blow-up in %d s" % seconds)
