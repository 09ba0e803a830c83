# SPDX-License-Identifier: MIT
# --speedscope (tests/progs/flame.c): the file validated against speedscope's own schema (vendored in
# tests/data, checked by the small validator below), then each profile's weights against the totals
# flame.c's comment states, and the stacks of known sites frame by frame, root first.
import copy
import json
import os
import re
import sys

import ctrack_test as ct

env = ct.Env(sys.argv)
# flame.c's tree has xmalloc as its one allocation function, a frame of its own in every figure this
# test checks: it is kept (test_sites.py checks how wrappers fold).
env.analyze_opts = ["--no-auto-fold"]
prog, src, schema_path = env.progs[0], env.progs[1], env.progs[2]
SRC = os.path.basename(src)

LINES = ct.line_markers(src)
with open(schema_path) as f:
    SCHEMA = json.load(f)

# ---- a JSON schema validator for the keywords speedscope's schema uses ----

TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}
HANDLED = {"$schema", "$ref", "definitions", "title", "type", "required", "properties", "enum",
           "items", "anyOf", "oneOf"}


def keywords(schema):
    """Every keyword of the schema, so that one the validator ignores fails the test."""
    found = set()
    if isinstance(schema, dict):
        for k, v in schema.items():
            found.add(k)
            subs = v.values() if k in ("definitions", "properties") else [v]
            for s in subs:
                found |= keywords(s)
    elif isinstance(schema, list):
        for s in schema:
            found |= keywords(s)
    return found


def type_ok(value, t):
    if t == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if t == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, TYPES[t])


def errors(value, schema, where="$"):
    """The list of violations of schema by value ([] when valid)."""
    if "$ref" in schema:  # draft-06: a $ref replaces its siblings
        ref = schema["$ref"]
        assert ref.startswith("#/definitions/"), ref
        return errors(value, SCHEMA["definitions"][ref[len("#/definitions/"):]], where)
    errs = []
    for key in ("anyOf", "oneOf"):
        if key in schema:
            ok = sum(not errors(value, s, where) for s in schema[key])
            if ok == 0 or (key == "oneOf" and ok > 1):
                errs.append("%s: %d of %s match" % (where, ok, key))
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(type_ok(value, t) for t in types):
            return errs + ["%s: %r is not %s" % (where, value, schema["type"])]
    if "enum" in schema and value not in schema["enum"]:
        errs.append("%s: %r not in %r" % (where, value, schema["enum"]))
    if isinstance(value, dict):
        errs += ["%s: %r missing" % (where, k) for k in schema.get("required", []) if k not in value]
        for k, s in schema.get("properties", {}).items():
            if k in value:
                errs += errors(value[k], s, "%s.%s" % (where, k))
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            errs += errors(v, schema["items"], "%s[%d]" % (where, i))
    return errs


env.eq("the validator handles every keyword of the schema", keywords(SCHEMA) - HANDLED, set())

# ---- the export ----

# From flame.c's comment (base build): cost -> (profile name, unit, sum of weights).
PROFILES = [
    ("leaked bytes", "bytes", 10 * 48 + 5 * 32),
    ("peak heap bytes", "bytes", 1049216),
    ("allocations", "none", 1031),
    ("temporary allocations", "none", 1000),
    ("bytes allocated", "bytes", 1149216),
    # valgrind on flame: "definitely lost: 640 bytes in 15 blocks", nothing indirectly lost.
    ("lost bytes (definitely or indirectly)", "bytes", 640),
]

trace = env.trace("traced", [prog])
out = os.path.join(os.path.dirname(trace), "profile.speedscope.json")
a = env.run_analyze(trace, "--speedscope", out)
env.check("--speedscope exits 0", a.returncode == 0, a.stderr[-500:])
doc = {}
try:
    with open(out) as f:
        doc = json.load(f)
    env.check("the file is JSON", True)
except (OSError, ValueError) as e:
    env.check("the file is JSON", False, str(e))

env.eq("valid against speedscope's schema", errors(doc, SCHEMA), [])


def broken(what, change):
    """The validator must reject a copy of the document broken by change."""
    bad = copy.deepcopy(doc)
    try:
        change(bad)
    except (KeyError, IndexError):
        return env.check("validator: a document " + what, False, "nothing to break")
    env.check("validator rejects a document " + what, errors(bad, SCHEMA), "accepted")


broken("without $schema", lambda d: d.pop("$schema"))
broken("with a profile without weights", lambda d: d["profiles"][0].pop("weights"))
broken("with an unknown unit", lambda d: d["profiles"][1].update(unit="kilobytes"))
broken("with a string in a stack", lambda d: d["profiles"][2]["samples"][0].append("main"))
broken("with a frame without name", lambda d: d["shared"]["frames"][0].pop("name"))

env.eq("$schema", doc.get("$schema"), "https://www.speedscope.app/file-format-schema.json")
env.check("name: the command line", prog in (doc.get("name") or ""), repr(doc.get("name")))
env.check("exporter: ctrack-analyze VERSION", re.match(r"ctrack-analyze \d", doc.get("exporter") or ""))
env.eq("activeProfileIndex", doc.get("activeProfileIndex"), 0)
frames = doc.get("shared", {}).get("frames", [])
keys = [(f.get("name"), f.get("file"), f.get("line")) for f in frames]
env.eq("frames are distinct", len(set(keys)), len(keys))

profiles = doc.get("profiles", [])
env.eq("one profile per cost: name, unit", [(p.get("name"), p.get("unit")) for p in profiles],
       [(n, u) for n, u, _ in PROFILES])
for p, (name, _, total) in zip(profiles, PROFILES):
    w, s = p.get("weights", []), p.get("samples", [])
    env.eq(name + ": type sampled", p.get("type"), "sampled")
    env.eq(name + ": sum of weights == flame.c's total", sum(w), total)
    env.eq(name + ": startValue, endValue", (p.get("startValue"), p.get("endValue")), (0, total))
    env.eq(name + ": one weight per sample", len(w), len(s))
    env.check(name + ": no zero weight", all(x > 0 for x in w), repr(w))
    env.check(name + ": frame indexes in range",
              all(isinstance(i, int) and 0 <= i < len(frames) for st in s for i in st))


def stacks(profile):
    """(weight, [(name, file basename, line)] root first) of every sample."""
    out = []
    for st, w in zip(profile.get("samples", []), profile.get("weights", [])):
        fr = [frames[i] for i in st if 0 <= i < len(frames)]
        out.append((w, [(f["name"], os.path.basename(f.get("file") or ""), f.get("line")) for f in fr]))
    return out


def ends(profile, weight, tail):
    """Samples of `weight` whose stack ends (innermost last) with tail [(name, LINE mark)]."""
    want = [(n, SRC, LINES[m]) for n, m in tail]
    return [st for w, st in stacks(profile) if w == weight and st[-len(want):] == want]


if len(profiles) == len(PROFILES):
    leaked, peak, allocs, temporary = profiles[:4]
    parse = [("main", "MAIN_LOAD"), ("load_config", "LOAD_PARSE"), ("parse_entry", "PARSE"),
             ("xmalloc", "XMALLOC")]
    env.eq("leaked: 480 B in ...;main;load_config;parse_entry;xmalloc", len(ends(leaked, 480, parse)), 1)
    intern = [("main", "MAIN_LOAD"), ("load_config", "LOAD_INTERN"), ("intern_name (inlined)", "INTERN"),
              ("xmalloc", "XMALLOC")]
    env.eq("leaked: 160 B through intern_name, its own frame marked inlined",
           len(ends(leaked, 160, intern)), 1)
    env.eq("leaked: two sites", sorted(w for w, _ in stacks(leaked)), [160, 480])
    cache = [("main", "MAIN_CACHE"), ("build_cache", "CACHE"), ("xmalloc", "XMALLOC")]
    env.eq("peak: the cache's 16 x 65536 B in ...;main;build_cache;xmalloc",
           len(ends(peak, 16 * 65536, cache)), 1)
    env.eq("allocations: parse_entry's 10", len(ends(allocs, 10, parse)), 1)
    env.eq("temporary: scratch's 1000 in ...;main;scratch",
           len(ends(temporary, 1000, [("main", "MAIN_SCRATCH"), ("scratch", "SCRATCH")])), 1)

# "-" writes the same document to standard output
a = env.run_analyze(trace, "--speedscope", "-")
env.check("--speedscope - exits 0", a.returncode == 0, a.stderr[-500:])
try:
    env.eq("--speedscope - prints the same document", json.loads(a.stdout), doc)
except ValueError as e:
    env.check("--speedscope - prints JSON", False, str(e))
env.finish()
