# SPDX-License-Identifier: MIT
# The traced program's argv comes out of the analyzer exactly: newlines, a multi-line SQL-like
# string, quotes, backslashes, tabs, an empty argument, UTF-8 and bytes that are not UTF-8.
# JSON strings hold text: valid UTF-8 passes through, a byte outside any UTF-8 sequence is the code
# point of the same number (\u00XX) -- that is the analyzer's documented rendering.
import os
import sys

import ctrack_test as ct

ARGS = [
    b"line one\nline two\n",
    b"SELECT name, \"count\"\n  FROM t\n WHERE a = 'x\\y'\n\tAND b <> 0;\n",
    b"",
    b"  spaces  ",
    b"caf\xc3\xa9 \xe2\x82\xac",             # UTF-8: e-acute, euro sign
    b"raw \xff\xfe\x80 bytes \xc3",         # not UTF-8
    b"\x01\x1f\x7f control",
]


def as_json_text(b):
    """The JSON string the analyzer must print for the bytes b."""
    out, i = [], 0
    while i < len(b):
        for n in (4, 3, 2, 1):
            try:
                out.append(b[i:i + n].decode("utf-8"))
                i += n
                break
            except UnicodeDecodeError:
                continue
        else:
            out.append(chr(b[i]))
            i += 1
    return "".join(out)


env = ct.Env(sys.argv)
prog = env.progs[0]
d = env.fresh_dir("argv")
trace = os.path.join(d, "trace.zst")
r, _ = env.run_ctrack([prog.encode(), *ARGS], d, opts=("-o", trace))
env.eq("exit status", r.returncode, 0)
rep = env.report(trace) if os.path.exists(trace) else None
if env.check("trace analyzed", rep is not None):
    got = rep["process"]["argv"]
    want = [as_json_text(a) for a in [prog.encode(), *ARGS]]
    env.eq("argc", len(got), len(want))
    for i, (g, w) in enumerate(zip(got, want)):
        env.eq("argv[%d] %r" % (i, w[:20]), g, w)
    env.eq("exe", rep["process"]["exe"], os.path.realpath(prog))
env.finish()
