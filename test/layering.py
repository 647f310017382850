"""The library's shape, checked from its sources:
- no circle among lib's .c files (a file calls a function another file defines);
- each lib header declares only functions its own .c file defines, but
  an attachment's hook header (X/X_hook.h), which declares the calls the
  core makes into its folder X;
- no lib file includes a header it uses nothing of;
- every include of a lib header is written from lib/ ("run/run.h", "start.h"),
  as the build's one -iquote lib finds it;
- lib/ holds at most MAX_ROOMS rooms (a folder is one room), and the
  helpers (shx/) include nothing else of lib/;
- an attachment (shape.ATTACHMENTS: contain/, persist/, output/, tool/)
  includes and calls nothing of the core but the headers meant for it
  (shape.ATTACH_API), beside its own folder and the helpers; the rest of
  lib/ includes nothing of an attachment but its hook header, and calls
  into one only what the hook declares (its stubs when a switch is off);
- the dependencies that run back up the layering, between files and
  between rooms (a file or room that includes another's header or calls
  it while that one calls down to it), are no more than the counts below;
- the tool layer (tool/, but its door toolhook.c) goes through the public
  API, the helpers and its one door (toolhook.h), never a handle's layout;
- tests include no internal header but testhook.h and the pure helpers';
- no library file is over 450 lines but shx/json.c.
Prints one line per finding; exit status 1 when there is any.
With --report: the shape's measures instead (see shape.py)."""
import glob
import os
import re
import sys

top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.chdir(top)
problems = []

import shape  # noqa: E402  (test/shape.py: the measures, shared with --report)


def strip_comments(src):
    return re.sub(r'/\*.*?\*/', '', src, flags=re.S)


def rel(path):
    return shape.rel(path)


defined_in = {}
lib_files = sorted(glob.glob('lib/**/*.c', recursive=True))
for f in shape.LIB:  # a stand-in (shape.STAND_INS) defines what its folder does
    src = strip_comments(open(f).read())
    for m in re.finditer(r'^(?:SHEXEC_API\s+)?[a-zA-Z_][\w\s\*]*?\b(s(?:hx|hexec)_\w+)\s*\([^;]*?\)\s*\{',
                         src, re.M):
        if 'static' not in m.group(0).split('(')[0]:
            defined_in[m.group(1)] = rel(f)

calls = {}
for f in lib_files:
    here = rel(f)
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


def folder(name):
    return name.split('/', 1)[0] if '/' in name else ''


# The includes: each written from lib/, and each allowed where it stands.
core_headers = set()  # every lib header that is the core's (not an attachment's, not a helper)
for h in shape.HEADERS:
    if folder(rel(h)) not in shape.ATTACHMENTS and folder(rel(h)) != shape.HELPERS:
        core_headers.add(rel(h))
for f in sorted(glob.glob('lib/**/*.[ch]', recursive=True)):
    here = rel(f)
    mine = folder(here)
    for inc in shape.includes(f):
        h = shape.resolve(f, inc)
        if h is None:
            continue
        if h != inc:
            problems.append('lib/%s includes "%s": write it from lib/, "%s"' % (here, inc, h))
        if mine == shape.HELPERS and folder(h) != shape.HELPERS:
            problems.append('lib/%s (a helper) includes %s' % (here, h))
        if (mine in shape.ATTACHMENTS and h in core_headers and h not in shape.ATTACH_API
                and here != shape.TOOL_DOOR):
            problems.append('lib/%s (an attachment) includes the core\'s %s' % (here, h))
        there = folder(h)
        if there in shape.ATTACHMENTS and there != mine and not shape.is_hook(h):
            problems.append('lib/%s includes %s: %s/ is reached through %s/%s_hook.h' %
                            (here, h, there, there, there))

core_files = {rel(f) for f in lib_files if folder(rel(f)) not in shape.ATTACHMENTS
              and folder(rel(f)) != shape.HELPERS}
api_files = {h[:-2] + '.c' for h in shape.ATTACH_API}
for f in sorted(calls):
    if folder(f) not in shape.ATTACHMENTS or f == shape.TOOL_DOOR:
        continue
    for there, names in sorted(calls[f].items()):
        if there in core_files and there not in api_files:
            for name in sorted(names):
                if name.startswith('shx_'):
                    problems.append('lib/%s (an attachment) calls %s (%s)' % (f, name, there))

# The rest of lib/ calls into an attachment only what its hook header
# declares, which is what the hook stubs where a switch leaves it out.
for f in sorted(calls):
    for there, names in sorted(calls[f].items()):
        hook = 'lib/%s/%s_hook.h' % (folder(there), folder(there))
        if folder(there) in shape.ATTACHMENTS and folder(there) != folder(f) and os.path.exists(hook):
            stubbed = set(shape.declared_functions(hook)) | set(shape.stubs(hook))
            for name in sorted(names):
                if name.startswith('shx_') and name not in stubbed:
                    problems.append('lib/%s calls %s (%s), which %s does not declare' %
                                    (f, name, there, hook))

MAX_ROOMS = 14
rooms = shape.rooms()
if len(rooms) > MAX_ROOMS:
    problems.append('lib/ holds %d rooms (at most %d): %s' % (len(rooms), MAX_ROOMS, ' '.join(rooms)))

pure = {'shx/buf.c', 'shx/json.c', 'shx/base.c', 'shx/env.c'}
internal_headers = core_headers - {'testhook.h'}
for f in sorted(rel(p) for p in glob.glob('lib/tool/*.c')):
    if f == shape.TOOL_DOOR:
        continue
    src = open('lib/' + f).read()
    for inc in shape.includes('lib/' + f):
        if shape.resolve('lib/' + f, inc) in internal_headers:
            problems.append('lib/%s includes %s' % (f, inc))
    for there, names in sorted(calls[f].items()):
        for name in sorted(names):
            if name.startswith('shx_') and there not in pure and folder(there) != 'tool':
                problems.append('lib/%s calls %s (%s) past the public API' % (f, name, there))
    if re.search(r'\b(?:s|t|r|run)->', strip_comments(src)):
        problems.append('lib/%s reads a handle\'s fields' % f)

allowed_in_tests = {'testhook.h', 'testutil.h', 'shx/buf.h', 'shx/json.h', 'shx/env.h', 'shx/glob.h',
                    'stream/ansi.h', 'stream/capture.h', 'stream/notice.h', 'stream/sentinel.h',
                    'shx/utf8.h', 'shx/strindex.h', 'spawn/pty.h',
                    'spawn/program.h',  # program.h: the pure shx_pick_shell
                    'shell/record.h', 'shell/shstate.h',  # the pure parsers of what the shell reports
                    'shell/script.h',  # the prelude's text: pure (shx_script_start_word)
                    'shell/inert.h',  # the pure check of a command's text
                    # the cgroup v2 parsers; the modules, tested live
                    'contain/cgroupfs.h', 'contain/cgroup.h', 'contain/cgtree.h',
                    'loop/inputwait.h',  # the pure reading of /proc/PID/syscall and terminal flags
                    # the pure redaction stages
                    'output/acreplace.h', 'output/keyscan.h', 'output/redact.h'}
for f in sorted(glob.glob('test/*.c')):
    for inc in re.findall(r'#include "([^"]+)"', open(f).read()):
        if inc.endswith('.h') and inc not in allowed_in_tests and inc != 'shexec.h':
            problems.append('%s includes internal header %s' % (f, inc))

for f in lib_files:
    n = sum(1 for _ in open(f))
    if n > 450 and rel(f) != 'shx/json.c':
        problems.append('%s has %d lines (over 450)' % (f, n))

for h in shape.HEADERS:
    own = rel(h)[:-2] + '.c'
    hook = shape.is_hook(rel(h))
    for name in shape.declared_functions(h):
        there = defined_in.get(name)
        if there and there != own and not (hook and folder(there) == folder(rel(h))):
            problems.append('%s declares %s, which %s defines' % (h, name, there))

for f in sorted(glob.glob('lib/**/*.[ch]', recursive=True)):
    for inc in shape.unused_includes(f):
        problems.append('%s includes %s and uses nothing of it' % (f, inc))

# Each a file that sees the session's layout and that the session calls
# down to: session/settings.c, task.c and run/run.c (the session's own),
# run/launch.c (a run's settings over the session's). The loop and the
# ending drive jobs (loop/job.h); persist/ takes what it needs as
# parameters; the starts (start.c) sit above the run, the task and the
# session.
MAX_BACK_UP = 4
back_up = shape.back_up_dependencies()
if len(back_up) > MAX_BACK_UP:
    problems.append('%d dependencies run back up the layering (at most %d): %s' %
                    (len(back_up), MAX_BACK_UP, ', '.join('%s -> %s' % d for d in back_up)))
# Between rooms: session/ and run/ call each other (a session frees its
# runs; a run resolves its settings over the session's), and the watchdog
# (contain/) observes the process objects (loop/proc.h) that signal through the
# cgroups.
MAX_ROOM_BACK_UP = 3
back_up = shape.room_back_up_dependencies()
if len(back_up) > MAX_ROOM_BACK_UP:
    problems.append('%d dependencies between rooms run back up the layering (at most %d): %s' %
                    (len(back_up), MAX_ROOM_BACK_UP, ', '.join('%s -> %s' % d for d in back_up)))

if '--report' in sys.argv:
    shape.report()
    sys.exit(0)

for p in problems:
    print('layering:', p)
sys.exit(1 if problems else 0)
