"""Measures of lib/'s shape, from its sources (run from the top of the tree).

A module is a lib/X.c with its header lib/X.h. Module A depends on B when
A.c calls a function B.c defines (not static), or when A.c includes B.h,
directly or through other lib headers. A dependency A -> B runs back up the
layering when B calls down to A (A is reachable from B through calls): A
then needs what sits above it. `python3 test/layering.py --report` prints
these measures; layering.py checks some of them."""
import glob
import os
import re

CONCERNS = [
    ('run and its processes', 'run start result ending cwd channels loop job proc group spawn spawnfa '
     'launch stream capture script record sentinel walk procfs'),
    ('containment (cgroup v2)', 'cgroup cgroupfs cgtree contain limits'),
    ('session, settings, tasks', 'session settings getters task base'),
    ('persisted shell state', 'persist pstate shstate replay shfuncs'),
    ('host-death watchdog', 'watchdog watchdog_fork watchdog_proc watchdog_cgroup'),
    ('tool layer', 'tool tooldef toolhook'),
    ('terminal and colours', 'pty ansi'),
    ('pure helpers', 'buf json env glob utf8 strindex'),
    ('platform', 'platform libc_ext'),
    ('test hooks', 'testhook'),
]


def strip(src):
    """Comments and the text of string and character literals removed."""
    src = re.sub(r'/\*.*?\*/', ' ', src, flags=re.S)
    src = re.sub(r'//[^\n]*', ' ', src)
    src = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', src)
    return re.sub(r"'(?:\\.|[^'\\\n])*'", "''", src)


def functions(src):
    """[(name, body, is_static)] of the top-level function definitions in src (stripped)."""
    out = []
    depth, last, i, start = 0, 0, 0, None
    while i < len(src):
        c = src[i]
        if c == '#' and depth == 0:
            j = src.find('\n', i)
            while j > 0 and src[j - 1] == '\\':
                j = src.find('\n', j + 1)
            i = j if j > 0 else len(src)
            last = i
            continue
        if c == '{':
            if depth == 0:
                head = src[last:i]
                m = re.search(r'\b([A-Za-z_]\w*)\s*\([^()]*(?:\([^()]*\)[^()]*)*\)\s*$', head)
                is_fn = m and '=' not in head and not re.search(r'\b(struct|enum|union)\b[^()]*$', head)
                start = (m.group(1), i, 'static' in head.split('(')[0]) if is_fn else None
            depth += 1
        elif c == '}':
            depth -= 1
            if depth == 0:
                if start:
                    out.append((start[0], src[start[1]:i + 1], start[2]))
                start, last = None, i + 1
        elif c == ';' and depth == 0:
            last = i + 1
        i += 1
    return out


LIB = sorted(glob.glob('lib/*.c'))
BODIES = {}       # (file, function) -> body
STATIC = set()
WHERE = {}        # function -> [files defining it]
for _f in LIB:
    _b = os.path.basename(_f)
    for _name, _body, _static in functions(strip(open(_f).read())):
        BODIES[(_b, _name)] = _body
        if _static:
            STATIC.add((_b, _name))
        WHERE.setdefault(_name, []).append(_b)


def _target(name, here):
    files = WHERE.get(name, [])
    if here in files:
        return (here, name)
    public = [f for f in files if (f, name) not in STATIC]
    return (public[0], name) if public else None


CALLS = {}        # (file, function) -> {(file, function)} it calls or takes the address of
for (_f, _n), _body in BODIES.items():
    CALLS[(_f, _n)] = {t for t in (_target(w, _f) for w in re.findall(r'\b[A-Za-z_]\w*\b', _body[1:]))
                       if t and t != (_f, _n)}
FILE_CALLS = {}
for (_f, _n), _outs in CALLS.items():
    for (_g, _m) in _outs:
        if _g != _f:
            FILE_CALLS.setdefault(_f, set()).add(_g)


def reachable(graph, start):
    seen, todo = set(), [start]
    while todo:
        for n in graph.get(todo.pop(), ()):
            if n not in seen:
                seen.add(n)
                todo.append(n)
    return seen


def includes(path):
    return re.findall(r'#include "([^"]+)"', open(path).read())


def include_closure(path):
    seen, todo = set(), [path]
    while todo:
        for h in includes(todo.pop()):
            if h not in seen and os.path.exists('lib/' + h):
                seen.add(h)
                todo.append('lib/' + h)
    return seen


def dependencies():
    dep = {}
    for f in LIB:
        b = os.path.basename(f)
        d = set(FILE_CALLS.get(b, ()))
        for h in include_closure(f):
            m = h[:-2] + '.c'
            if os.path.exists('lib/' + m) and m != b:
                d.add(m)
        dep[b] = d
    return dep


def back_up_dependencies():
    dep = dependencies()
    return [(a, b) for a in sorted(dep) for b in sorted(dep[a]) if a in reachable(FILE_CALLS, b)]


def declared_functions(header):
    src = strip(open(header).read())
    src = re.sub(r'#\s*define[^\n]*(?:\\\n[^\n]*)*', ' ', src)
    return [m.group(1) for m in re.finditer(r'\b(s(?:hx|hexec)_\w+)\s*\([^;{]*\)\s*(?:__attribute__\s*\(\(.*?\)\))?\s*;', src, re.S)]


def provided_names(header):
    """What a header gives its includers: names, and member names of structs it lays out."""
    src = strip(open(header).read())
    names = set(re.findall(r'\b(\w+)\s*\(', src))
    names |= set(re.findall(r'#\s*define\s+(\w+)', src))
    names |= set(re.findall(r'\}\s*(\w+)\s*;', src))
    names |= set(re.findall(r'typedef\s[^;{]*?\b(\w+)\s*;', src))
    names |= set(re.findall(r'\bstruct\s+(\w+)\s*\{', src))
    for body in re.findall(r'enum\s*\w*\s*\{([^}]*)\}', src):
        names |= set(re.findall(r'\b([A-Z_][A-Z0-9_]*)\b', body))
    members = set()
    for body in re.findall(r'struct\s+\w*\s*\{(.*?)\n\}', src, re.S):
        members |= set(re.findall(r'(\w+)\s*(?:\[[^\]]*\]\s*)*[;,]', body))
    names -= {'if', 'while', 'for', 'return', 'sizeof', 'defined', 'switch', '__attribute__',
              'void', 'int', 'char', 'const', 'unsigned', 'long', 'short', 'signed', 'struct',
              'static', 'inline', 'typedef', 'enum', 'union', 'double', 'float', 'size_t',
              'format', 'printf', 'noreturn', 'uint32_t', 'uint64_t', 'int64_t', 'int32_t'}
    names -= set(re.findall(r'#\s*ifndef\s+(\w+)', src))
    return names, members


def unused_includes(path):
    """The lib headers path includes and uses nothing of (its own header aside)."""
    src = open(path).read()
    body = strip(re.sub(r'^#include[^\n]*', '', src, flags=re.M))
    words = set(re.findall(r'\b\w+\b', body))
    accessed = set(re.findall(r'(?:->|\.)\s*(\w+)', body))
    out = []
    for inc in includes(path):
        if not os.path.exists('lib/' + inc) or inc == os.path.basename(path)[:-2] + '.h':
            continue
        names, members = provided_names('lib/' + inc)
        if not (names & words) and not (members & accessed):
            out.append(inc)
    return out


def lines(path):
    return sum(1 for _ in open(path)) if os.path.exists(path) else 0


def report():
    print('files and lines per concern (lib/*.c and *.h):')
    total = 0
    for concern, mods in CONCERNS:
        paths = [p for m in mods.split() for p in ('lib/%s.c' % m, 'lib/%s.h' % m) if os.path.exists(p)]
        n = sum(lines(p) for p in paths)
        total += n
        print('  %-26s %3d files %6d lines' % (concern, len(paths), n))
    print('  %-26s %3d files %6d lines' % ('all', len(glob.glob('lib/*.[ch]')),
                                           sum(lines(p) for p in glob.glob('lib/*.[ch]'))))
    back = back_up_dependencies()
    print('dependencies back up the layering: %d' % len(back))
    for a, b in back:
        print('  %s -> %s' % (a, b))
    dep = dependencies()
    print('files in a circle of includes and calls: %d' % sum(1 for a in dep if a in reachable(dep, a)))
    root = next(k for k in BODIES if k[1] == 'shexec_run_exec')
    seen = {root} | reachable(CALLS, root)
    files = sorted({f for f, _ in seen})
    cross = sum(1 for k in seen for t in CALLS.get(k, ()) if t[0] != k[0])
    print('shexec_run_exec reaches %d functions in %d files over %d calls between files'
          % (len(seen), len(files), cross))
    hub = [os.path.basename(f) for f in LIB if 'session.h' in includes(f)]
    print('files that see the session\'s layout: %d (%s)' % (len(hub), ' '.join(hub)))
    print('headers declaring another file\'s functions: %d' % sum(
        1 for h in glob.glob('lib/*.h') if any(
            WHERE.get(n) and os.path.basename(h)[:-2] + '.c' not in WHERE[n]
            for n in declared_functions(h))))
    for h in sorted(glob.glob('include/*.h')):
        text = open(h).read()
        first = next((i + 1 for i, l in enumerate(text.split('\n'))
                      if l.startswith('SHEXEC_API') and 'shexec_session_new(' in l), 0)
        print('%s: %d lines, %d words, %d functions%s' % (
            h, text.count('\n'), len(text.split()), len(re.findall(r'^SHEXEC_API\b', text, re.M)),
            ', shexec_session_new at line %d' % first if first else ''))
