# SPDX-License-Identifier: MIT
# ctrack-analyze on a terminal: a progress line (percent of the file, events per second) on
# stderr, erased at the end; colour in the report on stdout (not with NO_COLOR). Neither on pipes.
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

    def on_terminal(out_to_pty, extra_env=None):
        master, slave = pty.openpty()
        p = subprocess.Popen([env.analyze, trace], stdout=slave if out_to_pty else subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL if out_to_pty else slave,
                             env=dict(os.environ, **(extra_env or {})))
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
        return seen

    report = on_terminal(True, {"NO_COLOR": ""})
    env.check("colour on a terminal", b"\x1b[1m" in report and b"\x1b[0m" in report, repr(report[:300]))
    env.check("no colour with NO_COLOR", b"\x1b[" not in on_terminal(True, {"NO_COLOR": "1"}))
    env.check("no colour on a pipe", b"\x1b[" not in env.run_analyze(trace).stdout)
    seen = on_terminal(False)
    env.check("progress line on a terminal", b"ctrack-analyze: reading: " in seen and b"%, " in seen
              and b"M events/s" in seen, repr(seen[:300]))
    env.check("and erased at the end", seen.endswith(b"\r\x1b[K"), repr(seen[-40:]))
    r = env.run_analyze(trace)
    env.eq("nothing of it on a pipe", (r.returncode, b"reading:" in r.stderr), (0, False))
env.finish()
