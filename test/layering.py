"""The library's shape, checked from its sources:
- no circle among lib/*.c (a file calls a function another file defines);
- each lib header declares only functions its own .c file defines;
- no lib file includes a header it uses nothing of;
- the dependencies that run back up the layering (a file that includes
  another's header or calls it while that one calls down to it) are no
  more than the count below;
- the tool layer (tool.c, tooldef.c) goes through the public API, the pure
  helpers and its one door (toolhook.h), never a handle's layout;
- tests include no internal header but testhook.h and the pure helpers';
- no library file is over 450 lines but json.c.
Prints one line per finding; exit status 1 when there is any.
With --report: the shape's measures instead (see shape.py)."""
import glob
import os
import re
import sys

top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.chdir(top)
problems = []

def strip_comments(src):
    return re.sub(r'/\*.*?\*/', '', src, flags=re.S)

defined_in = {}
lib_files = sorted(glob.glob('lib/*.c'))
for f in lib_files:
    src = strip_comments(open(f).read())
    for m in re.finditer(r'^(?:SHEXEC_API\s+)?[a-zA-Z_][\w\s\*]*?\b(s(?:hx|hexec)_\w+)\s*\([^;]*?\)\s*\{',
                         src, re.M):
        if 'static' not in m.group(0).split('(')[0]:
            defined_in[m.group(1)] = os.path.basename(f)

calls = {}
for f in lib_files:
    here = os.path.basename(f)
    src = strip_comments(open(f).read())
    calls[here] = {}
    for m in re.finditer(r'\b(s(?:hx|hexec)_\w+)\s*\(', src):
        there = defined_in.get(m.group(1))
        if there and there != here:
            calls[here].setdefault(there, set()).add(m.group(1))

def reachable(start):
    seen, todo = set(), [start]
    while todo:
        for nxt in calls.get(todo.pop(), {}):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen

for f in sorted(calls):
    if f in reachable(f):
        problems.append('%s is in a circle of calls' % f)

pure = {'buf.c', 'json.c', 'base.c', 'env.c', 'toolhook.c', 'tool.c', 'tooldef.c', 'toolargs.c',
        'tooltask.c'}
internal_headers = {'session.h', 'run.h', 'task.h', 'loop.h', 'proc.h', 'group.h', 'spawn.h',
                    'stream.h', 'ending.h', 'start.h', 'settings.h'}
for f in ('tool.c', 'tooldef.c', 'toolargs.c', 'tooltask.c'):
    src = open('lib/' + f).read()
    for inc in re.findall(r'#include "([^"]+)"', src):
        if inc in internal_headers:
            problems.append('lib/%s includes %s' % (f, inc))
    for there, names in sorted(calls[f].items()):
        for name in sorted(names):
            if name.startswith('shx_') and there not in pure:
                problems.append('lib/%s calls %s (%s) past the public API' % (f, name, there))
    if re.search(r'\b(?:s|t|r|run)->', strip_comments(src)):
        problems.append('lib/%s reads a handle\'s fields' % f)

allowed_in_tests = {'testhook.h', 'testutil.h', 'buf.h', 'json.h', 'env.h', 'glob.h', 'ansi.h',
                    'capture.h', 'notice.h', 'sentinel.h', 'utf8.h', 'strindex.h', 'pty.h',
                    'spawn.h',  # spawn.h: the pure shx_pick_shell
                    'record.h', 'shstate.h',  # the pure parsers of what the shell reports
                    'cgroupfs.h', 'cgroup.h', 'cgtree.h',  # the cgroup v2 parsers; the modules, tested live
                    'inputwait.h',  # the pure reading of /proc/PID/syscall and terminal flags
                    'acreplace.h', 'keyscan.h', 'redact.h'}  # the pure redaction stages
for f in sorted(glob.glob('test/*.c')):
    for inc in re.findall(r'#include "([^"]+)"', open(f).read()):
        if inc.endswith('.h') and inc not in allowed_in_tests and inc != 'shexec.h':
            problems.append('%s includes internal header %s' % (f, inc))

for f in lib_files:
    n = sum(1 for _ in open(f))
    if n > 450 and os.path.basename(f) != 'json.c':
        problems.append('%s has %d lines (over 450)' % (f, n))

import shape  # noqa: E402  (test/shape.py: the measures, shared with --report)

for h in sorted(glob.glob('lib/*.h')):
    own = os.path.basename(h)[:-2] + '.c'
    for name in shape.declared_functions(h):
        there = defined_in.get(name)
        if there and there != own:
            problems.append('%s declares %s, which %s defines' % (h, name, there))

for f in sorted(glob.glob('lib/*.[ch]')):
    for inc in shape.unused_includes(f):
        problems.append('%s includes %s and uses nothing of it' % (f, inc))

# Each a file that sees the session's layout and that the session calls
# down to: settings.c, task.c and run.c (the session's own), launch.c (a
# run's settings over the session's). The loop and the ending drive jobs
# (job.h); persist.c and pstate.c take what they need as parameters; the
# starts (start.c) sit above the run, the task and the session.
MAX_BACK_UP = 4
back_up = shape.back_up_dependencies()
if len(back_up) > MAX_BACK_UP:
    problems.append('%d dependencies run back up the layering (at most %d): %s' %
                    (len(back_up), MAX_BACK_UP, ', '.join('%s -> %s' % d for d in back_up)))

if '--report' in sys.argv:
    shape.report()
    sys.exit(0)

for p in problems:
    print('layering:', p)
sys.exit(1 if problems else 0)
