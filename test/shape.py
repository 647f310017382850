"""Measures of lib/'s shape, from its sources (run from the top of the tree).

A module is a .c file under lib/ with its header beside it, named by its
path below lib/ ("run/run.c" with "run/run.h"). Module A depends on B when
A.c calls a function B.c defines (not static), or when A.c includes B.h,
directly or through other lib headers. A dependency A -> B runs back up the
layering when B calls down to A (A is reachable from B through calls): A
then needs what sits above it.

A room is what stands at the top of lib/: a folder, with all that is in
it, or a file with its header. Rooms depend on each other as their files
do, and run back up as files do, by the calls between rooms. Which folders
are attachments, which switch leaves each out, and which of the core's
headers they may include: ATTACHMENTS, HELPERS and ATTACH_API below (and
docs/layout.md). `python3 test/layering.py --report` prints these
measures; layering.py checks some of them."""
import glob
import os
import re

# The attachments: folders the core reaches only through their hook header
# (X/X_hook.h), what each holds, and the switches that leave it out.
ATTACHMENTS = {
    'contain': ('containment and the watchdog', 'CONTAIN=0, WATCHDOG=0'),
    'persist': ('persisted shell state', 'PERSIST=0'),
    'output': ('output filters: redaction and spill', 'OUTPUT=0'),
    'tool': ('the tool layer', 'TOOLS=0'),
}
# The helpers' folder: pure code and the platform seam, which include
# nothing else of lib/, so that everything may include them.
HELPERS = 'shx'
# The core's headers an attachment may include, beside its own folder's and
# the helpers': the process object and its group (the watchdog observes
# them), writes that raise no SIGPIPE (spawn.h), what the shell reports.
ATTACH_API = {'loop/proc.h', 'loop/group.h', 'spawn/spawn.h', 'shell/record.h', 'shell/shstate.h'}
# The tool layer's one door into the core, which sees the handles' layouts.
TOOL_DOOR = 'tool/toolhook.c'
# The files built instead of a folder its switch leaves out (tool/none.c:
# shexec_tool.h's calls, failing): never in one build with the rest of
# their folder, so no part of the call graph.
STAND_INS = {'tool/none.c'}


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


def rel(path):
    """A path under lib/ as the name below lib/ ("lib/run/run.c": "run/run.c")."""
    return os.path.relpath(path, 'lib')


def room(name):
    """The room a file (named below lib/) stands in: "run/" for a folder's, else
    the file's module ("start.h": "start.c")."""
    if '/' in name:
        return name.split('/', 1)[0] + '/'
    return name[:-2] + '.c' if name.endswith('.h') else name


LIB = sorted(f for f in glob.glob('lib/**/*.c', recursive=True) if rel(f) not in STAND_INS)
HEADERS = sorted(glob.glob('lib/**/*.h', recursive=True))
BODIES = {}       # (file, function) -> body
STATIC = set()
WHERE = {}        # function -> [files defining it]
for _f in LIB:
    _b = rel(_f)
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


def resolve(path, inc):
    """The lib header (named below lib/) that `#include "inc"` in path reaches, or None:
    the includer's own folder first, then lib/ (-iquote lib), as the compiler looks."""
    for d in (os.path.dirname(path), 'lib'):
        if os.path.isfile(os.path.join(d, inc)):
            return rel(os.path.normpath(os.path.join(d, inc)))
    return None


def include_closure(path):
    seen, todo = set(), [path]
    while todo:
        here = todo.pop()
        for inc in includes(here):
            h = resolve(here, inc)
            if h and h not in seen:
                seen.add(h)
                todo.append('lib/' + h)
    return seen


def dependencies():
    dep = {}
    for f in LIB:
        b = rel(f)
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


def rooms():
    """The rooms at the top of lib/, each with its files (named below lib/); the
    linker's export lists (libshexec.map, .sym) are no room."""
    out = {}
    for p in sorted(glob.glob('lib/**/*', recursive=True)):
        if os.path.isfile(p) and not p.endswith(('.map', '.sym')):
            out.setdefault(room(rel(p)), []).append(rel(p))
    return out


def room_dependencies():
    """{room: the rooms it depends on}, {room: the rooms it calls}."""
    dep, calls = {}, {}
    for a, bs in dependencies().items():
        for b in bs:
            if room(a) != room(b):
                dep.setdefault(room(a), set()).add(room(b))
    for a, bs in FILE_CALLS.items():
        for b in bs:
            if room(a) != room(b):
                calls.setdefault(room(a), set()).add(room(b))
    return dep, calls


def room_back_up_dependencies():
    dep, calls = room_dependencies()
    return [(a, b) for a in sorted(dep) for b in sorted(dep[a]) if a in reachable(calls, b)]


def is_hook(name):
    """Whether a header (named below lib/) is its folder's hook: X/X_hook.h."""
    return '/' in name and name == '%s/%s_hook.h' % (name.split('/')[0], name.split('/')[0])


def stubs(header):
    """The names of the static inline functions a header defines (a hook's stubs)."""
    return re.findall(r'static\s+inline\s+[\w\s\*]*?\b(s(?:hx|hexec)_\w+)\s*\(', strip(open(header).read()))


def declared_functions(header):
    src = strip(open(header).read())
    src = re.sub(r'#\s*define[^\n]*(?:\\\n[^\n]*)*', ' ', src)
    found = []
    for m in re.finditer(r'\b(s(?:hx|hexec)_\w+)\s*\([^;{]*\)\s*(?:__attribute__\s*\(\(.*?\)\))?\s*;', src, re.S):
        before = src[:m.start()].rstrip()
        # a call in a stub's body (x = f(...); return f(...);) declares nothing
        if before.endswith('=') or re.search(r'\breturn$', before):
            continue
        found.append(m.group(1))
    return found


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
        h = resolve(path, inc)
        if not h or h == rel(path)[:-2] + '.h':
            continue
        names, members = provided_names('lib/' + h)
        if not (names & words) and not (members & accessed):
            out.append(inc)
    return out


def lines(path):
    return sum(1 for _ in open(path)) if os.path.exists(path) else 0


def report():
    print('rooms at the top of lib/: %d (their .c and .h files and lines)' % len(rooms()))
    total = 0
    for r, files in rooms().items():
        code = [f for f in files if f.endswith(('.c', '.h'))]
        n = sum(lines('lib/' + f) for f in code)
        total += n
        folder = r.rstrip('/')
        kind = ('attachment: %s (%s)' % ATTACHMENTS[folder] if folder in ATTACHMENTS else
                'helpers' if folder == HELPERS else 'core')
        print('  %-13s %3d files %6d lines  %s' % (r, len(code), n, kind))
    print('  %-13s %3d files %6d lines' % ('all', sum(
        1 for files in rooms().values() for f in files if f.endswith(('.c', '.h'))), total))
    back = back_up_dependencies()
    print('dependencies back up the layering: %d' % len(back))
    for a, b in back:
        print('  %s -> %s' % (a, b))
    back = room_back_up_dependencies()
    print('rooms\' dependencies back up the layering: %d' % len(back))
    for a, b in back:
        print('  %s -> %s' % (a, b))
    dep = dependencies()
    print('files in a circle of includes and calls: %d' % sum(1 for a in dep if a in reachable(dep, a)))
    root = next(k for k in BODIES if k[1] == 'shexec_run_exec')
    seen = {root} | reachable(CALLS, root)
    files = sorted({f for f, _ in seen})
    cross = sum(1 for k in seen for t in CALLS.get(k, ()) if t[0] != k[0])
    print('shexec_run_exec reaches %d functions in %d files (%d rooms) over %d calls between files'
          % (len(seen), len(files), len({room(f) for f in files}), cross))
    hub = [rel(f) for f in LIB if 'session/session.h' in {resolve(f, i) for i in includes(f)}]
    print('files that see the session\'s layout: %d (%s)' % (len(hub), ' '.join(hub)))
    print('headers declaring another file\'s functions (hooks aside): %d' % sum(
        1 for h in HEADERS if not is_hook(rel(h)) and any(
            WHERE.get(n) and rel(h)[:-2] + '.c' not in WHERE[n]
            for n in declared_functions(h))))
    for h in sorted(glob.glob('include/*.h')):
        text = open(h).read()
        first = next((i + 1 for i, l in enumerate(text.split('\n'))
                      if l.startswith('SHEXEC_API') and 'shexec_session_new(' in l), 0)
        print('%s: %d lines, %d words, %d functions%s' % (
            h, text.count('\n'), len(text.split()), len(re.findall(r'^SHEXEC_API\b', text, re.M)),
            ', shexec_session_new at line %d' % first if first else ''))
