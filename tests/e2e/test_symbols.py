#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# ctrack-analyze --symbols and the report's "modules": symq.c built four ways; every expectation
# comes from how the binary was built (a chosen build-id, strip -s, the DIE tags the compiler wrote).
import json
import os
import subprocess
import sys

CTRACK, ANALYZE, _VALGRIND, SCRATCH, SRC = sys.argv[1:6]
STRIPPED = ('stripped — frames shown as addresses; keep .symtab (strip = "debuginfo" in Cargo, '
            'no -s in the link)')
LINES_ONLY = ('line tables only (-gline-tables-only, Rust debug = 1 / line-tables-only): inlined frames '
              'are folded into their caller; build with -g / debug = 2 for inline attribution')
failures = []


def check(what, got, want):
    if got != want:
        failures.append(f'{what}: got {got!r}, want {want!r}')


def build(name, cc, flags, build_id):
    out = os.path.join(SCRATCH, name)
    subprocess.run([cc, *flags, f'-Wl,--build-id=0x{build_id}', SRC, '-o', out], check=True)
    return out


def dies(path):
    # What the compiler emitted, read with binutils (not with the code under test).
    return subprocess.run(['readelf', '--debug-dump=info', path], capture_output=True, text=True).stdout


def has_inline_records(path):
    return 'DW_TAG_inlined_subroutine' in dies(path)


def symbols(path, json_out):
    args = [ANALYZE, '--symbols', *(['--json'] if json_out else []), path]
    return subprocess.run(args, capture_output=True, text=True)


def entry(modules, path):
    found = [m for m in modules if m['path'] == path]
    check(f'{path} listed once', len(found), 1)
    return found[0] if found else {}


def expect(name, path, build_id, want_fields, want_rc):
    r = symbols(path, True)
    check(f'{name} exit', r.returncode, want_rc)
    mods = json.loads(r.stdout)['modules'] if r.stdout else []
    check(f'{name} fields', entry(mods, path), {'path': path, 'build_id': build_id, **want_fields})
    check(f'{name} lists libc', any(m['path'].endswith('/libc.so.6') for m in mods), True)
    t = symbols(path, False)
    check(f'{name} text exit', t.returncode, want_rc)
    advice = want_fields['advice']
    if advice:
        check(f'{name} text advice', advice in t.stdout, True)


def main():
    os.makedirs(SCRATCH, exist_ok=True)
    full = build('symq-gcc', 'gcc', ['-O2', '-g'], 'a1' * 20)
    expect('gcc -O2 -g', full, 'a1' * 20, {'symbols': 'symtab', 'line_tables': True, 'inline_info': True,
                                          'debug_file': full, 'advice': None}, 0)

    # Full -g where the optimizer inlined nothing: no inline records, but parameters and locals are
    # described, so nothing is missing and there is no advice. gcc -g1 drops those too: line tables only.
    noinl = build('symq-noinline', 'gcc', ['-O2', '-g', '-DNO_INLINE'], 'a5' * 20)
    check('-DNO_INLINE -g: no inline records, parameters described',
          (has_inline_records(noinl), 'DW_TAG_formal_parameter' in dies(noinl)), (False, True))
    expect('gcc -O2 -g, nothing inlined', noinl, 'a5' * 20, {'symbols': 'symtab', 'line_tables': True,
           'inline_info': False, 'debug_file': noinl, 'advice': None}, 0)
    check('nothing inlined: text says so', 'inline info no (none inlined)\n' in symbols(noinl, False).stdout, True)
    g1 = build('symq-g1', 'gcc', ['-O2', '-g1', '-DNO_INLINE'], 'a6' * 20)
    check('-g1: no inline records, no parameters', (has_inline_records(g1), 'DW_TAG_formal_parameter' in dies(g1)),
          (False, False))
    expect('gcc -O2 -g1', g1, 'a6' * 20, {'symbols': 'symtab', 'line_tables': True, 'inline_info': False,
                                         'debug_file': g1, 'advice': LINES_ONLY}, 3)

    stripped = os.path.join(SCRATCH, 'symq-stripped')
    subprocess.run(['strip', '-s', full, '-o', stripped], check=True)
    # strip -s keeps the dynamic symbol table and the build-id note, drops .symtab and all DWARF.
    expect('strip -s', stripped, 'a1' * 20, {'symbols': 'dynsym', 'line_tables': False, 'inline_info': False,
                                             'debug_file': None, 'advice': STRIPPED}, 3)

    # clang's line-tables-only DWARF may or may not keep inline scopes (clang 14 does): the verdict
    # must follow what this clang wrote.
    lt = build('symq-clang-lt', 'clang', ['-O2', '-gline-tables-only'], 'b2' * 20)
    inl = has_inline_records(lt)
    lt_fields = {'symbols': 'symtab', 'line_tables': True, 'inline_info': inl, 'debug_file': lt,
                 'advice': None if inl else LINES_ONLY}
    expect('clang -gline-tables-only', lt, 'b2' * 20, lt_fields, 0 if inl else 3)

    trace = os.path.join(SCRATCH, 'lt.zst')
    subprocess.run([CTRACK, '-q', '--force', '-o', trace, lt], check=True)
    r = subprocess.run([ANALYZE, '--json', trace], capture_output=True, text=True, check=True)
    check('trace module', entry(json.loads(r.stdout)['modules'], lt), {'path': lt, 'build_id': 'b2' * 20, **lt_fields})

    # The binary rebuilt after the trace (another build-id at the same path): reported, never
    # misresolved with the new file's symbols.
    rebuilt = build('symq-rebuilt', 'gcc', ['-O2', '-g'], 'c3' * 20)
    trace = os.path.join(SCRATCH, 'rebuilt.zst')
    subprocess.run([CTRACK, '-q', '--force', '-o', trace, rebuilt], check=True)
    build('symq-rebuilt', 'gcc', ['-O2', '-g', '-DREBUILT'], 'd4' * 20)
    r = subprocess.run([ANALYZE, '--json', trace], capture_output=True, text=True, check=True)
    doc = json.loads(r.stdout)
    m = entry(doc['modules'], rebuilt) or {}
    check('rebuilt: build_id is the traced one', m.get('build_id'), 'c3' * 20)
    check('rebuilt: advice', (m.get('advice') or '').startswith('changed since the trace (its build-id differs)'), True)
    frames = [f for site in doc['leaks'] for f in site['frames'] if f['module'] == rebuilt]
    check('rebuilt: its frames are addresses, not names from the new file',
          all(f['file'] is None and '+0x' in f['function'] for f in frames) and bool(frames), True)

    r = symbols(os.path.join(SCRATCH, 'no-such-binary'), False)
    check('missing file exit', r.returncode, 1)
    check('missing file message lines', len(r.stderr.strip().splitlines()), 1)

    for f in failures:
        print('FAIL', f)
    return 1 if failures else 0


sys.exit(main())
