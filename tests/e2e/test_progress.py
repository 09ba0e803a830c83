# SPDX-License-Identifier: MIT
# ctrack-analyze shows a progress line (percent of the file, events per second) when stderr is a
# terminal, erases it at the end, and shows nothing of it when stderr is not a terminal.
import os
import pty
import subprocess
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog = env.progs[0]
d = env.fresh_dir("progress")
r, files = env.run_ctrack([prog], d)
if env.eq("one trace", len(files), 1):
    trace = os.path.join(d, files[0])
    master, slave = pty.openpty()
    p = subprocess.Popen([env.analyze, trace], stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the other side is closed
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    env.eq("exit status on a terminal", p.wait(), 0)
    env.check("progress line on a terminal", b"ctrack-analyze: reading: " in seen and b"%, " in seen
              and b"M events/s" in seen, repr(seen[:300]))
    env.check("and erased at the end", seen.endswith(b"\r\x1b[K"), repr(seen[-40:]))
    r = env.run_analyze(trace)
    env.eq("nothing of it on a pipe", (r.returncode, b"reading:" in r.stderr), (0, False))
env.finish()
