"""shexec - Python binding (ctypes, stdlib only) for libshexec.

libshexec runs shell commands for agent hosts: a Session is one persistent
terminal (the cwd carries over between commands), each command runs in its
own process group with bounded time and output, and background tasks keep
running while the host does other things. include/shexec.h is the manual;
this module follows it closely.

    from shexec import Session, ShexecError
    with Session() as sh:
        r = sh.run("cd /tmp && ls | head -3; false", timeout_ms=10000)
        print(r.state, r.exit_code, r.text)        # exited 1 <listing>
        print(sh.cwd)                              # /tmp: `cd` persists
        sh.run("make", on_output=lambda stream, data: print(stream, data))
        t = sh.start_task("python3 -m http.server 8000")
        t.wait(500)                                # pump the session for 0.5 s
        print(t.id, t.read())                      # t3f9a0c17be42 b'...' (new only)
        t.kill(); t.wait()                         # SIGTERM, grace, SIGKILL

The shared library is found through $SHEXEC_LIB (a path), else
../../lib/libshexec.so.1 relative to this file (the source tree), else the
system's libshexec.so.1.

Ownership and lifetime (mirrors the C rules, made safe for Python):

- Session owns the C session. close() (or leaving the `with` block, or
  garbage collection, or interpreter exit) terminates and reaps every
  command and task it still runs. It cannot be closed from inside one of
  its own output callbacks (StateError).
- Session.run() returns a finished Run: its results are copied into the
  Python object and the C run is freed at once, so it never keeps the
  session alive. Session.start_run() returns a live Run handle (non-blocking
  use); it keeps its Session alive until the run finishes, at which point
  the results are copied the same way. Dropping a live Run cancels it.
- Tasks belong to their session, as in C: dropping a Task object does NOT
  stop the task (find it again with Session.find_task(id)); Task.free() /
  close() / the `with` block frees it (terminating it if still running).
  Once the session is closed every Task object of it is dead: its methods
  raise ClosedError (a StateError) instead of touching freed memory.
  A task holds one of the session's task slots (set_max_tasks) from its
  start until it is freed, finished or not: free() the ones you are done
  with. Tasks you never took as objects (started by call_tool, leftovers
  you never looked up) are the session's: finished ones are released to
  make room, and find_task() then raises NoTaskError ("... finished and
  was released unread (retention limit)").
- Output callbacks run inside the calls that pump the session's loop
  (Session.run, Run.wait, Task.wait, Session.wait, Session.process, ...),
  one at a time and never re-entered, each stream's data in order. A
  callback may read output (Task.output()/read(), Run.stdout; also with
  ansi_strip, where a read pushes out a pending prompt line that the
  callback then receives right after it returns), kill or cancel, and
  write input; it cannot start or wait for commands (StateError).
  An exception raised by a callback is caught, the run is cancelled (the
  task killed), and the exception is re-raised after it ends: by
  Session.run()/Run.wait() for runs, by Task.wait()/Session.wait() for
  tasks. Objects collected while a callback runs are freed after the pump
  returns, never from inside the loop.
- A session and its objects are meant for one thread at a time (as in C);
  calls are serialized by a per-session lock so misuse cannot corrupt it.
"""

import atexit
import ctypes
import json
import ctypes.util
import os
import sys
import threading
import time
import weakref

__all__ = [
    "Session", "Run", "Task", "version", "strerror", "error_name",
    "ShexecError", "InvalidArgumentError", "OutOfMemoryError", "NoCwdError",
    "SpawnError", "SysError", "StateError", "ClosedError", "TooBigError",
    "LimitError", "NoTaskError", "PipeError",
    "OK", "EINVAL", "ENOMEM", "ENOCWD", "ESPAWN", "ESYS", "ESTATE", "E2BIG",
    "ELIMIT", "ENOTASK", "EPIPE", "ENOTOOL", "ToolNotAvailableError", "STDOUT", "STDERR",
]

# --------------------------------------------------------------------------
# Constants (values from shexec.h; append-only there)
# --------------------------------------------------------------------------

OK = 0
EINVAL = -1
ENOMEM = -2
ENOCWD = -3
ESPAWN = -4
ESYS = -5
ESTATE = -6
E2BIG = -7
ELIMIT = -8
ENOTASK = -9
EPIPE = -10
ENOTOOL = -11

_ERROR_NAMES = {
    OK: "SHEXEC_OK", EINVAL: "SHEXEC_EINVAL", ENOMEM: "SHEXEC_ENOMEM",
    ENOCWD: "SHEXEC_ENOCWD", ESPAWN: "SHEXEC_ESPAWN", ESYS: "SHEXEC_ESYS",
    ESTATE: "SHEXEC_ESTATE", E2BIG: "SHEXEC_E2BIG", ELIMIT: "SHEXEC_ELIMIT",
    ENOTASK: "SHEXEC_ENOTASK", EPIPE: "SHEXEC_EPIPE", ENOTOOL: "SHEXEC_ENOTOOL",
}
# Used when the library's shexec_strerror() has no text of its own for a code.
_FALLBACK_TEXT = {
    ELIMIT: "a limit was reached (tasks held, environment variables)",
    ENOTASK: "no task has that id",
    EPIPE: "input cannot be written",
    ENOTOOL: "tool not available",
}

STDOUT = 1
STDERR = 2
_STREAM_NAMES = {STDOUT: "stdout", STDERR: "stderr"}
_STREAMS = {"stdout": STDOUT, "stderr": STDERR, STDOUT: STDOUT, STDERR: STDERR}

_STATE_NAMES = {0: "new", 1: "running", 2: "exited", 3: "signaled",
                4: "timed_out", 5: "cancelled", 6: "killed"}
_LEFTOVER_NAMES = {0: "none", 1: "adopted", 2: "killed"}
_LEFTOVER_POLICIES = {"adopt": 0, "kill": 1}
_UNITS = {"chars": 0, "characters": 0, "bytes": 1}
_KEEPS = {"head": 0, "head_tail": 1}
_PTY_MODES = {False: 0, None: 0, True: 1, "off": 0, "on": 1, "echo": 2}

# How long one slice of pumping lasts, so Ctrl-C and deadlines are noticed.
_SLICE_MS = 200

_U32_MAX = 0xFFFFFFFF
_U64_MAX = 0xFFFFFFFFFFFFFFFF
_I32_MAX = 0x7FFFFFFF

# --------------------------------------------------------------------------
# Loading the library and declaring every prototype used
# --------------------------------------------------------------------------

OUTPUT_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p,
                             ctypes.c_size_t)


class _PollFd(ctypes.Structure):
    _fields_ = [("fd", ctypes.c_int), ("events", ctypes.c_short),
                ("revents", ctypes.c_short)]


def _candidates():
    env = os.environ.get("SHEXEC_LIB")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    out = [os.path.normpath(os.path.join(here, "..", "..", "lib", "libshexec.so.1"))]
    found = ctypes.util.find_library("shexec")
    if found:
        out.append(found)
    out.append("libshexec.so.1")
    return out


def _load():
    errors = []
    for i, path in enumerate(_candidates()):
        # the source-tree default is only tried when it exists
        if i == 0 and not os.environ.get("SHEXEC_LIB") and not os.path.exists(path):
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            errors.append("%s: %s" % (path, e))
            if os.environ.get("SHEXEC_LIB"):
                break
    raise ImportError("libshexec not found (set SHEXEC_LIB to its path): " + "; ".join(errors))


_lib, LIBRARY_PATH = _load()

_vp = ctypes.c_void_p
_pvp = ctypes.POINTER(ctypes.c_void_p)
_int = ctypes.c_int
_u32 = ctypes.c_uint32
_u64 = ctypes.c_uint64
_i32 = ctypes.c_int32
_sz = ctypes.c_size_t
_psz = ctypes.POINTER(ctypes.c_size_t)
_str = ctypes.c_char_p

_PROTOTYPES = {
    # library
    "shexec_version": (_str, []),
    "shexec_strerror": (_str, [_int]),
    # session
    "shexec_session_new": (_int, [_pvp]),
    "shexec_session_free": (None, [_vp]),
    "shexec_session_errmsg": (_str, [_vp]),
    "shexec_session_set_cwd": (_int, [_vp, _str]),
    "shexec_session_cwd": (_str, [_vp]),
    "shexec_session_set_shell": (_int, [_vp, _str]),
    "shexec_session_set_shell_argv": (_int, [_vp, ctypes.POINTER(_str)]),
    "shexec_session_set_timeouts": (_int, [_vp, _u32, _u32]),
    "shexec_session_set_kill_grace_ms": (_int, [_vp, _u32]),
    "shexec_session_set_output_limit": (_int, [_vp, _u64, _int, _int]),
    "shexec_session_set_env_inherit": (_int, [_vp, _int]),
    "shexec_session_setenv": (_int, [_vp, _str, _str]),
    "shexec_session_env_deny": (_int, [_vp, _str]),
    "shexec_session_env_allow": (_int, [_vp, _str]),
    "shexec_session_wait": (_int, [_vp, _i32]),
    "shexec_session_pollfds": (_int, [_vp, ctypes.POINTER(_PollFd), _u32,
                                      ctypes.POINTER(_i32)]),
    "shexec_session_process": (_int, [_vp, ctypes.POINTER(_PollFd), _u32]),
    "shexec_session_set_max_tasks": (_int, [_vp, _u32]),
    "shexec_session_set_leftovers": (_int, [_vp, _int]),
    "shexec_session_find_task": (_int, [_vp, _str, _pvp]),
    # run
    "shexec_run_new_bytes": (_int, [_pvp, _vp, _vp, _sz]),
    "shexec_run_set_timeout_ms": (_int, [_vp, _u32]),
    "shexec_run_set_cwd": (_int, [_vp, _str]),
    "shexec_run_setenv": (_int, [_vp, _str, _str]),
    "shexec_run_set_output_limit": (_int, [_vp, _u64, _int, _int]),
    "shexec_run_set_output_fn": (_int, [_vp, OUTPUT_FN, _vp]),
    "shexec_run_set_stdin": (_int, [_vp, _int]),
    "shexec_run_write": (_int, [_vp, _vp, _sz]),
    "shexec_run_close_stdin": (_int, [_vp]),
    "shexec_run_set_pty": (_int, [_vp, _int]),
    "shexec_run_set_pty_size": (_int, [_vp, _u32, _u32]),
    "shexec_run_set_ansi": (_int, [_vp, _int]),
    "shexec_run_start": (_int, [_vp]),
    "shexec_run_done": (_int, [_vp]),
    "shexec_run_cancel": (_int, [_vp]),
    "shexec_run_state": (_int, [_vp]),
    "shexec_run_exit_code": (_int, [_vp]),
    "shexec_run_signal": (_int, [_vp]),
    "shexec_run_output": (_vp, [_vp, _int, _psz]),
    "shexec_run_output_total": (_u64, [_vp, _int]),
    "shexec_run_truncated": (_int, [_vp, _int]),
    "shexec_run_duration_ms": (_u64, [_vp]),
    "shexec_run_leftovers": (_int, [_vp]),
    "shexec_run_leftover_task": (_str, [_vp]),
    "shexec_run_notice": (_str, [_vp]),
    "shexec_run_free": (None, [_vp]),
    # task
    "shexec_task_new": (_int, [_pvp, _vp, _str]),
    "shexec_task_set_timeout_ms": (_int, [_vp, _u32]),
    "shexec_task_set_cwd": (_int, [_vp, _str]),
    "shexec_task_setenv": (_int, [_vp, _str, _str]),
    "shexec_task_set_output_limit": (_int, [_vp, _u64, _int, _int]),
    "shexec_task_set_output_fn": (_int, [_vp, OUTPUT_FN, _vp]),
    "shexec_task_set_stdin": (_int, [_vp, _int]),
    "shexec_task_set_pty": (_int, [_vp, _int]),
    "shexec_task_set_pty_size": (_int, [_vp, _u32, _u32]),
    "shexec_task_set_ansi": (_int, [_vp, _int]),
    "shexec_task_start": (_int, [_vp]),
    "shexec_task_id": (_str, [_vp]),
    "shexec_task_state": (_int, [_vp]),
    "shexec_task_done": (_int, [_vp]),
    "shexec_task_exit_code": (_int, [_vp]),
    "shexec_task_signal": (_int, [_vp]),
    "shexec_task_duration_ms": (_u64, [_vp]),
    "shexec_task_output": (_vp, [_vp, _int, _psz]),
    "shexec_task_read": (_vp, [_vp, _int, _psz]),
    "shexec_task_output_total": (_u64, [_vp, _int]),
    "shexec_task_truncated": (_int, [_vp, _int]),
    "shexec_task_write": (_int, [_vp, _vp, _sz]),
    "shexec_task_close_stdin": (_int, [_vp]),
    "shexec_task_kill": (_int, [_vp]),
    "shexec_task_free": (None, [_vp]),
    # tools
    "shexec_tool_has": (_int, [_vp, _str]),
    "shexec_tool_enabled": (_int, [_vp, _str]),
    "shexec_tool_enable": (_int, [_vp, _str, _int]),
    "shexec_tool_rename": (_int, [_vp, _str, _str]),
    "shexec_tool_list": (_int, [_vp, _pvp]),
    "shexec_tool_call": (_int, [_vp, _str, _str, _pvp]),
    "shexec_free": (None, [_vp]),
}

for _name, (_res, _args) in _PROTOTYPES.items():
    _fn = getattr(_lib, _name)
    _fn.restype = _res
    _fn.argtypes = _args
del _name, _res, _args, _fn


def version():
    """The library's version string, "MAJOR.MINOR.PATCH"."""
    return _lib.shexec_version().decode("ascii", "replace")


def error_name(code):
    """The symbolic name of a result code, e.g. "SHEXEC_ENOCWD"."""
    return _ERROR_NAMES.get(code, "SHEXEC_E%d" % code if code < 0 else str(code))


def strerror(code):
    """A short description of a result code."""
    text = _lib.shexec_strerror(int(code)).decode("utf-8", "replace")
    if text == "unknown error" and code in _FALLBACK_TEXT:
        return _FALLBACK_TEXT[code]
    return text


# --------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------

class ShexecError(Exception):
    """A libshexec call failed. .code is the SHEXEC_E* value (negative int),
    .name its symbolic name, .message the detail (shexec_session_errmsg(),
    or the generic description when the library gave none)."""

    def __init__(self, code, message=None):
        self.code = code
        self.name = error_name(code)
        self.message = message or strerror(code)
        super().__init__(code, self.message)

    def __str__(self):
        return "%s (%s)" % (self.message, self.name)


class InvalidArgumentError(ShexecError, ValueError):
    """SHEXEC_EINVAL: an argument is invalid (empty, NUL byte, bad name...)."""


class OutOfMemoryError(ShexecError):
    """SHEXEC_ENOMEM."""


class NoCwdError(ShexecError):
    """SHEXEC_ENOCWD: the working directory is missing or not a directory."""


class SpawnError(ShexecError):
    """SHEXEC_ESPAWN: the shell could not be executed."""


class SysError(ShexecError):
    """SHEXEC_ESYS: a system call failed (descriptors exhausted, fork...)."""


class StateError(ShexecError):
    """SHEXEC_ESTATE: the handle is in the wrong state for this call."""


class ClosedError(StateError):
    """The Python object's C handle is gone (session closed, task freed)."""


class TooBigError(ShexecError):
    """SHEXEC_E2BIG: the command or environment is too long for exec."""


class LimitError(ShexecError):
    """SHEXEC_ELIMIT: a documented bound was reached: the session holds its
    maximum of tasks (set_max_tasks), or too many environment variables
    (4096 per session and per run or task)."""


class NoTaskError(ShexecError, LookupError):
    """SHEXEC_ENOTASK: no task has that id."""


class PipeError(ShexecError):
    """SHEXEC_EPIPE: stdin not enabled, already closed, or the process ended."""


class ToolNotAvailableError(ShexecError):
    """SHEXEC_ENOTOOL: no tool of that name, or it is not enabled."""



_ERROR_CLASSES = {
    EINVAL: InvalidArgumentError, ENOMEM: OutOfMemoryError, ENOCWD: NoCwdError,
    ESPAWN: SpawnError, ESYS: SysError, ESTATE: StateError, E2BIG: TooBigError,
    ELIMIT: LimitError, ENOTASK: NoTaskError, EPIPE: PipeError,
    ENOTOOL: ToolNotAvailableError,
}


def _take_json(ptr):
    """Decode and free a JSON string the library handed out."""
    if not ptr:
        return None
    try:
        return json.loads(ctypes.string_at(ptr).decode("utf-8"))
    finally:
        _lib.shexec_free(ptr)


def _error(code, message=None):
    return _ERROR_CLASSES.get(code, ShexecError)(code, message)


def _check(rc, sptr):
    """Raise for a negative result; the detail comes from the live session
    `sptr` (None when the session is gone: the generic text is used)."""
    if rc >= 0:
        return rc
    msg = None
    if sptr:
        raw = _lib.shexec_session_errmsg(sptr)
        if raw:
            msg = raw.decode("utf-8", "replace")
    raise _error(rc, msg)


# --------------------------------------------------------------------------
# Argument conversion
# --------------------------------------------------------------------------

def _configure(kind, handle, sp, timeout_ms, cwd, env, output_limit, pty, pty_size,
               ansi_strip, stdin):
    """Apply the settings runs and tasks share, through shexec_run_* or
    shexec_task_* (`kind`). Returns the bytes to feed to stdin once started
    (None when there are none)."""
    def setter(name):
        return getattr(_lib, "shexec_%s_%s" % (kind, name))
    if timeout_ms is not None:
        _check(setter("set_timeout_ms")(handle, _uint(timeout_ms, "timeout_ms", _U32_MAX)), sp)
    if cwd is not None:
        _check(setter("set_cwd")(handle, _cstr(cwd, "working directory")), sp)
    for k, v in (env or {}).items():
        _check(setter("setenv")(handle, _cstr(k, "variable name"),
                                None if v is None else _cstr(v, "variable value")), sp)
    if output_limit is not None:
        _check(setter("set_output_limit")(handle, *_limit_args(output_limit)), sp)
    mode = _pty_mode(pty)
    if mode:
        _check(setter("set_pty")(handle, mode), sp)
    if pty_size is not None:
        _check(setter("set_pty_size")(handle, _uint(pty_size[0], "columns", _U32_MAX),
                                      _uint(pty_size[1], "rows", _U32_MAX)), sp)
    if ansi_strip:
        _check(setter("set_ansi")(handle, 1), sp)
    feed = None
    if stdin is not None and stdin is not False:
        if stdin is not True:
            feed = _to_bytes(stdin, "stdin")
        _check(setter("set_stdin")(handle, 1), sp)
    return feed


def _to_bytes(value, what):
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, os.PathLike):
        return os.fsencode(value)
    raise TypeError("%s must be str or bytes, not %s" % (what, type(value).__name__))


def _cstr(value, what):
    """A NUL-terminated C string argument: a NUL inside would silently cut
    the string short, so it is refused as SHEXEC_EINVAL."""
    b = _to_bytes(value, what)
    if b"\0" in b:
        raise InvalidArgumentError(EINVAL, "%s contains a NUL byte" % what)
    return b


def _uint(value, what, maximum, minimum=0):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("%s must be an int" % what)
    if value < minimum or value > maximum:
        raise InvalidArgumentError(EINVAL, "%s %d out of range %d-%d"
                                   % (what, value, minimum, maximum))
    return value


def _wait_ms(timeout_ms):
    if timeout_ms is None:
        return -1
    if isinstance(timeout_ms, float):
        timeout_ms = int(timeout_ms)
    return _uint(timeout_ms, "timeout_ms", _I32_MAX)


def _lookup(table, value, what):
    try:
        return table[value]
    except (KeyError, TypeError):
        raise InvalidArgumentError(EINVAL, "unknown %s %r (one of %s)"
                                   % (what, value, ", ".join(
                                       repr(k) for k in table if isinstance(k, str))))


def _stream(stream):
    return _lookup(_STREAMS, stream, "stream")


def _limit_args(limit, unit="chars", keep="head"):
    if isinstance(limit, tuple):
        return _limit_args(*limit)
    return (_uint(limit, "output limit", _U64_MAX),
            _lookup(_UNITS, unit, "unit") if isinstance(unit, str) else int(unit),
            _lookup(_KEEPS, keep, "keep") if isinstance(keep, str) else int(keep))


def _pty_mode(pty):
    if isinstance(pty, int) and not isinstance(pty, bool) and pty in (0, 1, 2):
        return pty
    return _lookup(_PTY_MODES, pty, "pty mode")


def _read_out(fn, handle, stream):
    n = ctypes.c_size_t(0)
    p = fn(handle, stream, ctypes.byref(n))
    return ctypes.string_at(p, n.value) if p and n.value else b""


def _make_output_fn(state, stop):
    """The C callback for a run or task: calls state.fn(stream_name, bytes).
    An exception is kept in state.error and the command stopped with
    stop(state.ptr) (shexec_run_cancel / shexec_task_kill); the exception
    is re-raised by the binding once the command ended. Everything it needs
    is bound here, so it works even while the interpreter shuts down."""
    string_at = ctypes.string_at
    names = _STREAM_NAMES

    def trampoline(user, stream, data, length):
        fn = state.fn
        if fn is None or state.error is not None:
            return
        try:
            chunk = string_at(data, length) if length else b""
            fn(names.get(stream, stream), chunk)
        except BaseException as e:  # noqa: B902 - must never escape into C
            state.error = e
            ptr = state.ptr
            if ptr:
                try:
                    stop(ptr)
                except BaseException:
                    pass

    return OUTPUT_FN(trampoline)


class _CallbackState(object):
    __slots__ = ("fn", "error", "ptr")

    def __init__(self, fn, ptr=None):
        self.fn = fn
        self.error = None
        self.ptr = ptr


# --------------------------------------------------------------------------
# Session
# --------------------------------------------------------------------------

class _Guard(object):
    """Holds the session lock; on leaving the outermost level (and not
    inside a pump) frees what was collected while the loop was running."""
    __slots__ = ("s",)

    def __init__(self, s):
        self.s = s

    def __enter__(self):
        s = self.s
        s._mutex.acquire()
        s._depth += 1
        return s

    def __exit__(self, *exc):
        s = self.s
        try:
            if s._depth == 1 and s._pumping == 0 and s._deferred:
                s._drain_deferred()
        finally:
            s._depth -= 1
            s._mutex.release()
        return False


_live_sessions = weakref.WeakSet()


class Session(object):
    """A persistent shell session (one C shexec_session): cwd tracking,
    environment policy, limits, and the loop that drives its commands."""

    # bound here so __del__ works while module globals are torn down
    _lib = _lib
    _GuardType = _Guard
    _getpid = staticmethod(os.getpid)

    def __init__(self, cwd=None, shell=None, env=None, inherit_env=True):
        self._ptr = None
        self._pid = os.getpid()
        self._mutex = threading.RLock()
        self._depth = 0
        self._pumping = 0
        self._deferred = []          # (kind, ptr, keepalive) freed after a pump
        self._task_cores = {}        # task pointer -> _TaskCore (tasks we know)
        self._task_wrappers = weakref.WeakValueDictionary()
        out = ctypes.c_void_p()
        _check(_lib.shexec_session_new(ctypes.byref(out)), None)
        self._ptr = out.value
        _live_sessions.add(self)
        try:
            if not inherit_env:
                self.env_inherit(False)
            if shell is not None:
                self.set_shell(shell)
            if cwd is not None:
                self.set_cwd(cwd)
            for k, v in (env or {}).items():
                self.setenv(k, v)
        except BaseException:
            self.close()
            raise

    # -- plumbing ----------------------------------------------------------

    def _guard(self):
        return self._GuardType(self)

    def _live(self):
        p = self._ptr
        if not p:
            raise ClosedError(ESTATE, "the session is closed")
        if self._forked():
            raise ClosedError(ESTATE, "the session belongs to the parent process (fork)")
        return p

    def _forked(self):
        """True in a child made by fork(): the C session (and its processes)
        belong to the parent. The child must neither use nor free it: freeing
        would signal the parent's process groups."""
        return self._getpid() != self._pid

    def _pump_call(self, fn, *args):
        """Call a C function that may run callbacks (pump the loop)."""
        self._pumping += 1
        try:
            return fn(*args)
        finally:
            self._pumping -= 1

    def _drain_deferred(self):
        if self._forked():    # entries inherited from the parent are its own
            self._deferred = []
            return
        lib = self._lib
        while self._deferred:
            kind, ptr, keep = self._deferred.pop()
            if kind == "run":
                self._pump_call(lib.shexec_run_free, ptr)
            del keep

    def _free_run_ptr(self, ptr, keepalive):
        """Free a C run now, or, if the loop of this session is running (we
        are inside a callback, or another thread holds the session), after
        it returns. keepalive (its callback) lives until the free."""
        if self._forked():
            return        # the parent's: leak the copy, never signal its group
        if self._mutex.acquire(False):
            try:
                if self._pumping == 0:
                    self._pump_call(self._lib.shexec_run_free, ptr)
                    return
            finally:
                self._mutex.release()
        self._deferred.append(("run", ptr, keepalive))

    # -- lifetime ----------------------------------------------------------

    def close(self):
        """Terminate and reap everything the session still runs, free its
        tasks and the session. Idempotent. Live Run objects stay readable."""
        if not getattr(self, "_ptr", None):
            return
        if self._forked():
            # a fork()ed child: forget the parent's session without freeing it
            for core in list(self._task_cores.values()):
                core.mark_dead("its session belongs to the parent process")
            self._task_cores.clear()
            self._deferred = []
            self._ptr = None
            return
        with self._guard():
            ptr = self._ptr
            if not ptr:
                return
            if self._pumping:
                raise StateError(ESTATE, "a session cannot be closed from inside one of "
                                         "its callbacks")
            cores = list(self._task_cores.values())
            for core in cores:        # Task objects die before the C tasks
                core.mark_dead("its session was closed")
            self._ptr = None
            try:
                self._pump_call(self._lib.shexec_session_free, ptr)
            finally:
                self._task_cores.clear()
                for core in cores:    # callbacks may no longer be called
                    core.release()
                self._drain_deferred()
        try:
            _live_sessions.discard(self)
        except Exception:
            pass

    @property
    def closed(self):
        return not self._ptr

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        try:
            return "<shexec.Session cwd=%r>" % (self.cwd,)
        except ShexecError:
            return "<shexec.Session closed>"

    # -- settings ----------------------------------------------------------

    @property
    def cwd(self):
        """The session's current working directory (absolute)."""
        with self._guard():
            raw = _lib.shexec_session_cwd(self._live())
            return os.fsdecode(raw) if raw is not None else None

    @cwd.setter
    def cwd(self, value):
        self.set_cwd(value)

    def set_cwd(self, path):
        """Set the directory for the next commands (relative: to the current
        cwd). NoCwdError when it does not exist or is not a directory."""
        b = _cstr(path, "working directory")
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_set_cwd(p, b), p)

    def set_shell(self, shell):
        """The shell: a path, a list (program and leading arguments, e.g.
        ["docker", "exec", "-i", "ctr", "bash"]), or None for the default."""
        with self._guard():
            p = self._live()
            if shell is None or isinstance(shell, (str, bytes, os.PathLike)):
                arg = None if shell is None else _cstr(shell, "shell")
                _check(_lib.shexec_session_set_shell(p, arg), p)
            else:
                items = [_cstr(a, "shell argument") for a in shell]
                argv = (ctypes.c_char_p * (len(items) + 1))(*items)
                argv[len(items)] = None
                _check(_lib.shexec_session_set_shell_argv(p, argv), p)

    def set_timeouts(self, default_ms, max_ms):
        """Default run timeout and the maximum any run may ask for, in ms."""
        d = _uint(default_ms, "default_ms", _U32_MAX)
        m = _uint(max_ms, "max_ms", _U32_MAX)
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_set_timeouts(p, d, m), p)

    def set_kill_grace_ms(self, ms):
        """Time between SIGTERM and SIGKILL when a command is terminated."""
        v = _uint(ms, "kill grace", _U32_MAX)
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_set_kill_grace_ms(p, v), p)

    def set_output_limit(self, limit, unit="chars", keep="head"):
        """How much of each stream a run keeps: `limit` in unit 'chars' or
        'bytes'; keep 'head' or 'head_tail'."""
        args = _limit_args(limit, unit, keep)
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_set_output_limit(p, *args), p)

    def env_inherit(self, inherit=True):
        """Start commands from the host's environment (True) or empty."""
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_set_env_inherit(p, 1 if inherit else 0), p)

    def setenv(self, name, value):
        """Set a variable for every later command; value None removes it."""
        n = _cstr(name, "variable name")
        v = None if value is None else _cstr(value, "variable value")
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_setenv(p, n, v), p)

    def unsetenv(self, name):
        """Remove a variable (also an inherited one) for later commands."""
        self.setenv(name, None)

    def env_deny(self, glob):
        """Remove variables whose names match this fnmatch glob."""
        g = _cstr(glob, "glob")
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_env_deny(p, g), p)

    def env_allow(self, glob):
        """Keep variables matching this glob even when denied."""
        g = _cstr(glob, "glob")
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_env_allow(p, g), p)

    def set_max_tasks(self, n):
        """How many tasks the session holds at once: running, or finished
        and not yet freed (adopted leftovers count). Finished tasks nobody
        took as an object are released to make room."""
        v = _uint(n, "max tasks", _U32_MAX)
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_set_max_tasks(p, v), p)

    def set_leftovers(self, policy):
        """'adopt' (default: leftover processes become a task) or 'kill'."""
        v = _lookup(_LEFTOVER_POLICIES, policy, "leftovers policy")
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_set_leftovers(p, v), p)

    # -- runs ----------------------------------------------------------------

    def run(self, command, timeout_ms=None, cwd=None, env=None, on_output=None,
            pty=False, ansi_strip=False, stdin=None, output_limit=None, pty_size=None):
        """Run `command` (str or bytes) to completion and return the finished
        Run. A non-zero exit, a timeout or a signal is data (see .state);
        ShexecError is raised only when nothing could be run.

        timeout_ms: this run's timeout (clamped to the session maximum).
        cwd: run there instead of the session cwd (which then does not move).
        env: {name: value or None} for this run only.
        on_output(stream, data): called with 'stdout'/'stderr' and bytes as
          output arrives; an exception in it cancels the run and is re-raised
          here once the run ended.
        pty: False, True or 'echo' (a pseudo-terminal; output merged to stdout).
        ansi_strip: remove escape sequences, resolve \\r overwrites.
        stdin: bytes/str fed to the command, then EOF (default /dev/null).
        output_limit: int (characters, head) or (limit, unit, keep).
        """
        r = self.start_run(command, timeout_ms=timeout_ms, cwd=cwd, env=env,
                           on_output=on_output, pty=pty, ansi_strip=ansi_strip,
                           stdin=stdin, output_limit=output_limit, pty_size=pty_size)
        try:
            r._pump_until_done()
        except BaseException:
            # interrupted (Ctrl-C between pumps) or the loop failed: stop it
            r.close()
            raise
        r._raise_callback_error()
        return r

    def start_run(self, command, timeout_ms=None, cwd=None, env=None, on_output=None,
                  pty=False, ansi_strip=False, stdin=None, output_limit=None,
                  pty_size=None):
        """Start `command` and return a live Run at once; drive it with
        Run.wait() (or Session.wait()). Arguments as for run(), except that
        stdin=True gives a pipe to feed with Run.write()/Run.close_stdin()."""
        cmd = _to_bytes(command, "command")
        with self._guard():
            sp = self._live()
            out = ctypes.c_void_p()
            _check(_lib.shexec_run_new_bytes(ctypes.byref(out), sp, cmd, len(cmd)), sp)
            run = Run._live_handle(self, out.value, command)
            try:
                rp = out.value
                feed = _configure("run", rp, sp, timeout_ms, cwd, env, output_limit, pty,
                                  pty_size, ansi_strip, stdin)
                if on_output is not None:
                    run._set_callback(on_output)
                _check(_lib.shexec_run_start(rp), sp)
                if feed is not None:
                    if feed:
                        rc = _lib.shexec_run_write(rp, feed, len(feed))
                        if rc != EPIPE:   # EPIPE: the command no longer reads
                            _check(rc, sp)
                    rc = _lib.shexec_run_close_stdin(rp)
                    if rc != EPIPE:
                        _check(rc, sp)
            except BaseException:
                run.close()
                raise
        return run

    # -- tasks ---------------------------------------------------------------

    def start_task(self, command, timeout_ms=None, cwd=None, env=None, on_output=None,
                   pty=False, ansi_strip=False, stdin=False, output_limit=None,
                   pty_size=None):
        """Start a background task and return its Task at once. stdin=True
        gives it a pipe (Task.write); bytes/str are also written to it (the
        pipe stays open). timeout_ms None/0: no timeout (the default).
        LimitError when the session already holds its maximum of tasks
        (a finished Task keeps its slot until freed)."""
        cmd = _cstr(command, "command")   # shexec_task_new has no length variant
        with self._guard():
            sp = self._live()
            out = ctypes.c_void_p()
            _check(_lib.shexec_task_new(ctypes.byref(out), sp, cmd), sp)
            tp = out.value
            core = _TaskCore(tp, command)
            try:
                feed = _configure("task", tp, sp, timeout_ms, cwd, env, output_limit, pty,
                                  pty_size, ansi_strip, stdin)
                if on_output is not None:
                    core.cb = _CallbackState(on_output, tp)
                    core.cfunc = _make_output_fn(core.cb, _lib.shexec_task_kill)
                    _check(_lib.shexec_task_set_output_fn(tp, core.cfunc, None), sp)
                _check(_lib.shexec_task_start(tp), sp)
            except BaseException:
                core.mark_dead("it could not be started")
                _lib.shexec_task_free(tp)   # never started: nothing runs, no callback
                core.release()
                raise
            core.id = _lib.shexec_task_id(tp).decode("ascii", "replace")
            self._task_cores[tp] = core
            task = Task(self, core)
            self._task_wrappers[tp] = task
            if feed:
                task.write(feed)
        return task

    def find_task(self, task_id):
        """The Task with this id (the same object while one exists). The
        task is then yours: it is never released to make room.
        NoTaskError when the session has no such task."""
        b = _cstr(task_id, "task id")
        with self._guard():
            sp = self._live()
            out = ctypes.c_void_p()
            _check(_lib.shexec_session_find_task(sp, b, ctypes.byref(out)), sp)
            tp = out.value
            task = self._task_wrappers.get(tp)
            if task is not None:
                return task
            core = self._task_cores.get(tp)
            if core is None:   # e.g. adopted leftovers: created by the library
                core = _TaskCore(tp, None)
                core.id = _lib.shexec_task_id(tp).decode("ascii", "replace")
                self._task_cores[tp] = core
            task = Task(self, core)
            self._task_wrappers[tp] = task
            return task

    # -- tools: the shell as tools handed to a model -------------------------

    def has_tool(self, name):
        """True when the registry has a tool exposed under `name`."""
        with self._guard():
            return bool(_lib.shexec_tool_has(self._live(), _cstr(name, "tool name")))

    def tool_enabled(self, name):
        """True when that tool is enabled (tools are registered disabled)."""
        with self._guard():
            return bool(_lib.shexec_tool_enabled(self._live(), _cstr(name, "tool name")))

    def enable_tool(self, name, enabled=True):
        """Enable (or disable) a tool by its exposed name."""
        with self._guard():
            sp = self._live()
            _check(_lib.shexec_tool_enable(sp, _cstr(name, "tool name"), 1 if enabled else 0), sp)

    def rename_tool(self, name, new_name):
        """Expose a tool under another name (e.g. "bash" as "run_bash")."""
        with self._guard():
            sp = self._live()
            _check(_lib.shexec_tool_rename(sp, _cstr(name, "tool name"),
                                           _cstr(new_name, "tool name")), sp)

    def tools(self):
        """The enabled tools: [{"name", "description", "inputSchema"}, ...]."""
        with self._guard():
            sp = self._live()
            out = ctypes.c_void_p()
            _check(_lib.shexec_tool_list(sp, ctypes.byref(out)), sp)
            return _take_json(out.value)

    def call_tool(self, name, arguments=None):
        """Call a tool with JSON arguments (a dict, or a JSON string as a model
        wrote it). Returns the result dict; errors the model should read come
        back as {"error": ...} rather than as exceptions. Tasks that the tool
        layer reads to completion or kills are freed by it: do not keep Task
        objects for them. Finished tool tasks nobody read are released when
        a new task needs room (unless looked up with find_task())."""
        if arguments is None:
            text = "{}"
        elif isinstance(arguments, (str, bytes)):
            text = arguments
        else:
            text = json.dumps(arguments)
        with self._guard():
            sp = self._live()
            out = ctypes.c_void_p()
            rc = self._pump_call(_lib.shexec_tool_call, sp, _cstr(name, "tool name"),
                                 _cstr(text, "arguments"), ctypes.byref(out))
            result = _take_json(out.value)
            if result is None:
                _check(rc, sp)
            return result

    def _forget_task(self, core):
        tp = core.ptr
        self._task_cores.pop(tp, None)
        self._task_wrappers.pop(tp, None)

    # -- the loop ------------------------------------------------------------

    def wait(self, timeout_ms=None):
        """Pump the loop: read output, run callbacks, enforce timeouts, reap.
        Returns when a run or task of the session finished, when timeout_ms
        passed (None: no limit), or at once when nothing is running. Raises
        the first pending exception of a task's output callback."""
        t = _wait_ms(timeout_ms)
        with self._guard():
            sp = self._live()
            _check(self._pump_call(_lib.shexec_session_wait, sp, t), sp)
        self._raise_task_callback_errors()

    def pollfds(self):
        """For a host's own event loop: ([(fd, events), ...], timeout_ms)
        to poll (timeout -1: none). Then call process() with what poll()
        reported, also when the timeout expires."""
        with self._guard():
            sp = self._live()
            cap = 16
            while True:
                fds = (_PollFd * cap)()
                tmo = ctypes.c_int32(-1)
                n = _check(_lib.shexec_session_pollfds(sp, fds, cap, ctypes.byref(tmo)), sp)
                if n <= cap:
                    return [(fds[i].fd, fds[i].events) for i in range(n)], tmo.value
                cap = n

    def process(self, ready=()):
        """Hand poll() results to the session: ready is [(fd, revents), ...]
        (or (fd, events, revents) triples). Reads output, runs callbacks,
        enforces deadlines, reaps."""
        items = list(ready)
        arr = (_PollFd * max(1, len(items)))()
        for i, item in enumerate(items):
            arr[i].fd = item[0]
            arr[i].events = item[1] if len(item) > 2 else 0
            arr[i].revents = item[-1]
        with self._guard():
            sp = self._live()
            _check(self._pump_call(_lib.shexec_session_process, sp, arr, len(items)), sp)
        self._raise_task_callback_errors()

    def _raise_task_callback_errors(self):
        for core in list(self._task_cores.values()):
            cb = core.cb
            if cb is not None and cb.error is not None:
                err, cb.error = cb.error, None
                raise err


def _close_all_sessions():
    """At interpreter exit: stop and reap what sessions still run, so no
    task outlives the host by accident."""
    for s in list(_live_sessions):
        try:
            s.close()
        except Exception:
            pass


atexit.register(_close_all_sessions)


# --------------------------------------------------------------------------
# Run
# --------------------------------------------------------------------------

class Run(object):
    """One foreground command. From Session.run() it is finished: a plain
    result object. From Session.start_run() it is live until it finishes;
    its results are then copied and the C run freed.

    Results: command, state ('exited', 'signaled', 'timed_out', 'cancelled';
    'running' while live), exit_code (-1 unless exited), signal, stdout and
    stderr (bytes), text/stderr_text (decoded, errors='replace'),
    stdout_truncated, stderr_truncated, stdout_total, stderr_total (bytes
    produced), duration_ms, leftovers ('none', 'adopted', 'killed'),
    leftover_task (the id of the task that adopted them, or None) and notice
    (what the library declined to do, e.g. adopt a working directory that
    does not exist; "" when nothing)."""

    _lib = _lib

    def __init__(self):
        raise TypeError("Run objects come from Session.run() / Session.start_run()")

    @classmethod
    def _live_handle(cls, session, ptr, command):
        self = object.__new__(cls)
        self._session = session
        self._ptr = ptr
        self._cb = None
        self._cfunc = None
        self.command = command
        self._state = "running"
        self._exit_code = -1
        self._signal = 0
        self._stdout = b""
        self._stderr = b""
        self._truncated = (False, False)
        self._total = (0, 0)
        self._duration_ms = 0
        self._leftovers = "none"
        self._leftover_task = None
        self._notice = ""
        return self

    def _set_callback(self, fn):
        self._cb = _CallbackState(fn, self._ptr)
        self._cfunc = _make_output_fn(self._cb, _lib.shexec_run_cancel)
        s = self._session
        _check(_lib.shexec_run_set_output_fn(self._ptr, self._cfunc, None), s._ptr)

    # -- completion ----------------------------------------------------------

    def _sync(self):
        """Copy the results and free the C run once it is done. True when
        finished."""
        if not self._ptr:
            return True
        s = self._session
        if s._forked():
            raise ClosedError(ESTATE, "the run belongs to the parent process (fork)")
        with s._guard():
            ptr = self._ptr
            if not ptr:
                return True
            lib = self._lib
            if not lib.shexec_run_done(ptr):
                return False
            self._state = _STATE_NAMES.get(lib.shexec_run_state(ptr), "unknown")
            self._exit_code = lib.shexec_run_exit_code(ptr)
            self._signal = lib.shexec_run_signal(ptr)
            self._stdout = _read_out(lib.shexec_run_output, ptr, STDOUT)
            self._stderr = _read_out(lib.shexec_run_output, ptr, STDERR)
            self._truncated = (bool(lib.shexec_run_truncated(ptr, STDOUT)),
                               bool(lib.shexec_run_truncated(ptr, STDERR)))
            self._total = (lib.shexec_run_output_total(ptr, STDOUT),
                           lib.shexec_run_output_total(ptr, STDERR))
            self._duration_ms = lib.shexec_run_duration_ms(ptr)
            self._leftovers = _LEFTOVER_NAMES.get(lib.shexec_run_leftovers(ptr), "unknown")
            lt = lib.shexec_run_leftover_task(ptr)
            self._leftover_task = lt.decode("ascii", "replace") if lt else None
            self._notice = lib.shexec_run_notice(ptr).decode("utf-8", "replace")
            self._release(ptr)
        return True

    def _release(self, ptr):
        self._ptr = None
        cb, cfunc, s = self._cb, self._cfunc, self._session
        if cb is not None:
            cb.ptr = None
            cb.fn = None      # no more calls; drop the user's closure
        self._cfunc = None
        self._session = None
        s._free_run_ptr(ptr, cfunc)

    def _pump_until_done(self, timeout_ms=None):
        deadline = None if timeout_ms is None else time.monotonic() + timeout_ms / 1000.0
        while not self._sync():
            s = self._session
            if s is None:     # finished by another thread meanwhile
                continue
            slice_ms = _SLICE_MS
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                slice_ms = max(1, min(slice_ms, int(left * 1000) + 1))
            with s._guard():
                if not self._ptr:
                    continue
                sp = s._ptr
                if not sp:
                    raise ClosedError(ESTATE, "the session is closed")   # not reached
                _check(s._pump_call(_lib.shexec_session_wait, sp, slice_ms), sp)
        return True

    def _raise_callback_error(self):
        cb = self._cb
        if cb is not None and cb.error is not None:
            err, cb.error = cb.error, None
            raise err

    # -- the live handle -------------------------------------------------------

    def wait(self, timeout_ms=None):
        """Pump the session until this run finished (True) or timeout_ms
        passed (False). Re-raises an exception of its output callback."""
        done = self._pump_until_done(timeout_ms)
        if done:
            self._raise_callback_error()
        return done

    @property
    def done(self):
        return self._sync()

    def cancel(self):
        """SIGTERM the run's process group now, SIGKILL after the grace
        period; it ends as the loop is pumped (state 'cancelled')."""
        if self._sync():
            return
        s = self._session
        with s._guard():
            if self._ptr:
                _check(_lib.shexec_run_cancel(self._ptr), s._ptr)

    def write(self, data):
        """Queue input for the command (start_run(..., stdin=True) or pty)."""
        b = _to_bytes(data, "input")
        if self._sync():
            raise PipeError(EPIPE, "the command has ended")
        s = self._session
        with s._guard():
            if not self._ptr:
                raise PipeError(EPIPE, "the command has ended")
            _check(_lib.shexec_run_write(self._ptr, b, len(b)), s._ptr)

    def close_stdin(self):
        """EOF after the queued input (^D on a terminal)."""
        if self._sync():
            raise PipeError(EPIPE, "the command has ended")
        s = self._session
        with s._guard():
            if not self._ptr:
                raise PipeError(EPIPE, "the command has ended")
            _check(_lib.shexec_run_close_stdin(self._ptr), s._ptr)

    def close(self):
        """Free the C run; a running command is terminated and reaped first.
        Idempotent; the copied results of a finished run stay readable."""
        if not getattr(self, "_ptr", None):
            return
        if self._session._forked():   # the parent's run: forget it, never signal it
            self._ptr = None
            self._session = None
            return
        if not self._sync():
            s = self._session
            with s._guard():
                ptr = self._ptr
                if ptr:
                    self._state = "cancelled"
                    self._release(ptr)

    free = close

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        ptr = getattr(self, "_ptr", None)
        if not ptr:
            return
        try:
            self._release(ptr)
        except Exception:
            pass

    # -- results ---------------------------------------------------------------

    def _live_value(self, fn, *args):
        s = self._session
        with s._guard():
            if self._ptr:
                return fn(self._ptr, *args)
        return None

    @property
    def state(self):
        self._sync()
        return self._state

    @property
    def exit_code(self):
        self._sync()
        return self._exit_code

    returncode = exit_code

    @property
    def signal(self):
        self._sync()
        return self._signal

    @property
    def ok(self):
        """True when the command exited with status 0."""
        return self.state == "exited" and self._exit_code == 0

    def _output(self, stream):
        if not self._sync():
            out = self._live_value(lambda p: _read_out(_lib.shexec_run_output, p, stream))
            if out is not None:
                return out
        return self._stdout if stream == STDOUT else self._stderr

    @property
    def stdout(self):
        """Captured stdout (bytes; so far, while running)."""
        return self._output(STDOUT)

    @property
    def stderr(self):
        return self._output(STDERR)

    @property
    def text(self):
        """stdout decoded as UTF-8 with errors='replace'."""
        return self.stdout.decode("utf-8", "replace")

    @property
    def stderr_text(self):
        return self.stderr.decode("utf-8", "replace")

    @property
    def stdout_truncated(self):
        self._sync()
        return self._truncated[0]

    @property
    def stderr_truncated(self):
        self._sync()
        return self._truncated[1]

    @property
    def truncated(self):
        """True when either stream was cut by the output limit."""
        self._sync()
        return self._truncated[0] or self._truncated[1]

    @property
    def stdout_total(self):
        self._sync()
        return self._total[0]

    @property
    def stderr_total(self):
        self._sync()
        return self._total[1]

    @property
    def duration_ms(self):
        if not self._sync():
            v = self._live_value(_lib.shexec_run_duration_ms)
            if v is not None:
                return v
        return self._duration_ms

    @property
    def leftovers(self):
        self._sync()
        return self._leftovers

    @property
    def leftover_task(self):
        self._sync()
        return self._leftover_task

    @property
    def notice(self):
        self._sync()
        return self._notice

    def __repr__(self):
        st = self.state
        extra = " exit_code=%d" % self._exit_code if st == "exited" else ""
        return "<shexec.Run %r state=%s%s>" % (self.command, st, extra)


# --------------------------------------------------------------------------
# Task
# --------------------------------------------------------------------------

class _TaskCore(object):
    """What the session keeps per C task: the pointer (None once freed) and
    the callback the C side may call while the task exists."""
    __slots__ = ("ptr", "id", "command", "cb", "cfunc", "dead", "__weakref__")

    def __init__(self, ptr, command):
        self.ptr = ptr
        self.id = ""
        self.command = command
        self.cb = None
        self.cfunc = None
        self.dead = None

    def mark_dead(self, why):
        self.ptr = None
        self.dead = why
        if self.cb is not None:
            self.cb.ptr = None

    def release(self):
        self.cfunc = None


class Task(object):
    """A background command owned by its session (Session.start_task(),
    Session.find_task()). Dropping the object does not stop the task; free()
    / close() / the `with` block does. After the session closed or the task
    was freed, every method but .id raises ClosedError."""

    def __init__(self, session, core):
        self._session = session   # keeps the session alive while we are
        self._core = core

    @property
    def id(self):
        """The task's id: "t" and 12 hex digits."""
        return self._core.id

    @property
    def command(self):
        return self._core.command

    @property
    def session(self):
        return self._session

    @property
    def alive(self):
        """False once the task was freed or its session closed."""
        return self._core.ptr is not None

    def _call(self, fn, *args):
        s = self._session
        with s._guard():
            tp = self._core.ptr
            if not tp:
                raise ClosedError(ESTATE, "task %s is no longer usable: %s"
                                  % (self._core.id or "?", self._core.dead))
            if s._forked():
                raise ClosedError(ESTATE, "task %s belongs to the parent process (fork)"
                                  % self._core.id)
            return fn(tp, *args)

    def _checked(self, fn, *args):
        s = self._session
        with s._guard():
            return _check(self._call(fn, *args), s._ptr)

    @property
    def state(self):
        return _STATE_NAMES.get(self._call(_lib.shexec_task_state), "unknown")

    @property
    def done(self):
        return bool(self._call(_lib.shexec_task_done))

    @property
    def exit_code(self):
        """Exit status once exited, else -1 (always -1 for adopted leftovers)."""
        return self._call(_lib.shexec_task_exit_code)

    @property
    def signal(self):
        return self._call(_lib.shexec_task_signal)

    @property
    def duration_ms(self):
        return self._call(_lib.shexec_task_duration_ms)

    def output(self, stream="stdout"):
        """All output of the stream so far (bounded, as for runs)."""
        return self._call(lambda tp: _read_out(_lib.shexec_task_output, tp, _stream(stream)))

    def read(self, stream="stdout"):
        """Only the output that arrived since the previous read(), and mark
        it read."""
        return self._call(lambda tp: _read_out(_lib.shexec_task_read, tp, _stream(stream)))

    def output_total(self, stream="stdout"):
        return self._call(_lib.shexec_task_output_total, _stream(stream))

    def truncated(self, stream="stdout"):
        return bool(self._call(_lib.shexec_task_truncated, _stream(stream)))

    def write(self, data):
        """Queue input (the task needs stdin=True, or a pty). PipeError when
        stdin was not enabled, is closed, or the task ended."""
        b = _to_bytes(data, "input")
        self._checked(_lib.shexec_task_write, b, len(b))

    def close_stdin(self):
        self._checked(_lib.shexec_task_close_stdin)

    def kill(self):
        """SIGTERM the task's process group now, SIGKILL after the grace;
        it ends (state 'killed') as the loop is pumped."""
        self._checked(_lib.shexec_task_kill)

    @property
    def callback_error(self):
        """A pending exception raised by this task's output callback."""
        cb = self._core.cb
        return cb.error if cb is not None else None

    def wait(self, timeout_ms=None):
        """Pump the session until the task finished (True) or timeout_ms
        passed (False). Re-raises an exception of its output callback."""
        deadline = None if timeout_ms is None else time.monotonic() + timeout_ms / 1000.0
        s = self._session
        while not self.done:
            slice_ms = _SLICE_MS
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                slice_ms = max(1, min(slice_ms, int(left * 1000) + 1))
            with s._guard():
                sp = s._live()
                _check(s._pump_call(_lib.shexec_session_wait, sp, slice_ms), sp)
        cb = self._core.cb
        if cb is not None and cb.error is not None:
            err, cb.error = cb.error, None
            raise err
        return self.done

    def free(self):
        """Free the task (terminating and reaping it if still running).
        Idempotent; afterwards the object is dead."""
        core = self._core
        if core.ptr is None:
            return
        s = self._session
        if s._forked():
            core.mark_dead("its session belongs to the parent process")
            return
        with s._guard():
            tp = core.ptr
            if tp is None:
                return
            if s._pumping:
                raise StateError(ESTATE, "a task cannot be freed from inside a callback")
            s._forget_task(core)
            core.mark_dead("it was freed")
            try:
                s._pump_call(_lib.shexec_task_free, tp)
            finally:
                core.release()

    close = free

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.free()
        return False

    def __repr__(self):
        if self._core.ptr is None:
            return "<shexec.Task %s dead: %s>" % (self._core.id, self._core.dead)
        return "<shexec.Task %s state=%s>" % (self._core.id, self.state)
