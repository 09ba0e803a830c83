# SPDX-License-Identifier: MIT
# Allocations made by another library's constructor before the shim's own constructor runs count,
# and a free in a destructor that runs after ctrack's teardown is still accounted (written after
# the END record, with a new END): tests/progs/lifecycle.c with lifecycle_lib.c preloaded.
import os
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
prog, lib = env.progs[0], env.progs[1]
d = env.fresh_dir("lifecycle")
r, files = env.run_ctrack([prog], d, env=dict(os.environ, LD_PRELOAD=lib))
env.eq("exit status", r.returncode, 0)
if env.eq("one trace", len(files), 1):
    rep = env.report(os.path.join(d, files[0]))
    if rep:
        s = rep["summary"]
        env.eq("complete", rep["complete"], True)
        env.eq("figures", (s["allocations"], s["frees"], s["bytes_allocated"], s["leaked_bytes"],
                           s["leaked_allocations"]), (3, 1, 666, 555, 2))
        env.eq("constructor's kept block is a leak of lifecycle_ctor",
               ct.sites(rep["leaks"], "lifecycle_ctor"), (222, 1))
env.finish()
