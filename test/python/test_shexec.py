"""Tests of the Python binding (the package examples/python/shexec).

    SHEXEC_LIB=build/libshexec.so.1 python3 -m unittest discover -s test/python -v

(from the repository root; without SHEXEC_LIB the binding finds
build/libshexec.so.1 of its source tree). test/python/run.sh runs them
against the package installed in a venv instead (SHEXEC_TEST_VENV). Every
test checks afterwards that no descriptor leaked and that no child process
is left.
"""
import gc
import os
import random
import re
import select
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
# test/python/run.sh names the venv the package is installed in, and runs the
# venv's python: the package under test is then the installed one, and the
# source tree's must stay off sys.path. Run by hand, the tests take the
# source tree's.
VENV = os.environ.get("SHEXEC_TEST_VENV") or None
if VENV is None:
    sys.path.insert(0, os.path.join(ROOT, "examples", "python"))

import shexec  # noqa: E402
from shexec import Session  # noqa: E402

# where shexec was imported from: the Pythons the tests start import the same
SHEXEC_PATH = os.path.dirname(os.path.dirname(os.path.abspath(shexec.__file__)))


def open_fds():
    return sorted(os.listdir("/proc/self/fd"))


def children():
    """Direct children of the calling thread (all tests run on one)."""
    tid = threading.get_native_id() if hasattr(threading, "get_native_id") else os.getpid()
    path = "/proc/self/task/%d/children" % tid
    try:
        with open(path) as f:
            return [int(p) for p in f.read().split()]
    except FileNotFoundError:  # kernel without CONFIG_PROC_CHILDREN
        return []


def gone(pid):
    """The process does not exist any more, or is a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def marked(mark):
    """Live processes (zombies left out) whose argv[0] is `mark`."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % name, "rb") as f:
                argv0 = f.read().split(b"\0", 1)[0]
        except OSError:       # gone meanwhile
            continue
        if argv0 == mark.encode() and not gone(int(name)):
            out.append(int(name))
    return out


def kill_marked(mark):
    for pid in marked(mark):
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass


# 0.3 s of CPU in user mode by its own clock (not the wall's: a loaded machine
# gives a loop of 0.3 s less), from the system's interpreter: a pyenv shim
# would add processes of its own to what is counted.
BUSY = ("/usr/bin/python3 -c 'import time\nt=time.process_time()+0.3\n"
        "while time.process_time()<t: pass'")


def wait_until(pred, timeout=5.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.02)
    return pred()


class Boom(Exception):
    pass


class Base(unittest.TestCase):
    def setUp(self):
        gc.collect()
        self.fds_before = open_fds()
        self.assertEqual(children(), [], "children left before the test")

    def tearDown(self):
        self.doCleanups()          # close the sessions before checking
        gc.collect()
        self.assertEqual(children(), [], "child processes left behind")
        self.assertEqual(open_fds(), self.fds_before, "descriptors leaked")

    def session(self, **kw):
        s = Session(**kw)
        s.set_kill_grace_ms(200)
        self.addCleanup(s.close)
        return s

    def pump_until(self, s, pred, timeout=5.0):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if pred():
                return True
            s.wait(50)
        return pred()


class TestRuns(Base):
    def test_echo_hello(self):
        s = self.session()
        r = s.run("echo hello")
        self.assertEqual(r.stdout, b"hello\n")
        self.assertEqual(r.text, "hello\n")
        self.assertEqual(r.stderr, b"")
        self.assertEqual(r.exit_code, 0)
        self.assertEqual(r.state, "exited")
        self.assertTrue(r.ok)
        self.assertTrue(r.done)
        self.assertEqual(r.signal, 0)
        self.assertEqual(r.leftovers, "none")
        self.assertIsNone(r.leftover_task)
        self.assertEqual(r.notice, "")
        self.assertGreaterEqual(r.duration_ms, 0)

    def test_removed_cwd_not_adopted(self):
        s = self.session()
        d = tempfile.mkdtemp()
        s.cwd = d
        r = s.run('mkdir gone && cd gone && rmdir "$PWD"')
        self.assertEqual(r.exit_code, 0)
        self.assertEqual(s.cwd, d)
        self.assertIn("does not exist", r.notice)
        self.assertIn(d + "/gone", r.notice)
        shutil.rmtree(d)

    def test_exit_code_is_data(self):
        s = self.session()
        r = s.run("exit 42")
        self.assertEqual(r.state, "exited")
        self.assertEqual(r.exit_code, 42)
        self.assertFalse(r.ok)
        self.assertEqual(s.run("false").exit_code, 1)

    def test_stderr(self):
        s = self.session()
        r = s.run("echo out; echo err >&2")
        self.assertEqual(r.stdout, b"out\n")
        self.assertEqual(r.stderr, b"err\n")
        self.assertEqual(r.stderr_text, "err\n")

    def test_cd_persists(self):
        s = self.session()
        s.run("cd /tmp")
        self.assertEqual(s.cwd, "/tmp")
        self.assertEqual(s.run("pwd").stdout, b"/tmp\n")
        # a run with its own cwd does not move the session
        self.assertEqual(s.run("pwd", cwd="/").stdout, b"/\n")
        self.assertEqual(s.cwd, "/tmp")
        s.cwd = "/"
        self.assertEqual(s.run("pwd").stdout, b"/\n")

    def test_persist_env(self):
        s = self.session()
        self.assertFalse(s.persist_env)
        s.run("export OFF=1")
        self.assertEqual(s.run("echo ${OFF-unset}").stdout, b"unset\n")
        s.set_persist_env(True)
        self.assertTrue(s.persist_env)
        s.run("export A=1 B=$'two\\nlines' C= D=$'\\xff' LD_PRELOAD=/x.so; V=shell; f() { echo fn; }")
        self.assertEqual(s.run('echo "$A $V"; f').stdout, b"1 shell\nfn\n")
        self.assertEqual(s.getenv("A"), "1")
        self.assertEqual(s.getenv("B"), "two\nlines")
        self.assertEqual(s.getenv("C"), "")
        self.assertEqual(os.fsencode(s.getenv("D")), b"\xff")
        self.assertIsNone(s.getenv("LD_PRELOAD"))
        self.assertIsNone(s.getenv("V"))  # a shell variable, not exported
        env = s.environ()
        self.assertEqual(env["A"], "1")
        self.assertNotIn("PWD", env)
        s.run("unset A")
        self.assertIsNone(s.getenv("A"))
        self.assertEqual(s.run("echo ${A-unset}").stdout, b"unset\n")
        with self.assertRaises(shexec.ShexecError):
            s.getenv("A=B")
        s.set_persist_env(False)
        self.assertEqual(s.run("echo ${B-unset}").stdout, b"unset\n")

    def test_stdin_bytes(self):
        s = self.session()
        self.assertEqual(s.run("cat", stdin=b"a\0b\nc").stdout, b"a\0b\nc")
        self.assertEqual(s.run("wc -c", stdin="\u00e9" * 3).stdout.strip(), b"6")
        self.assertEqual(s.run("cat", stdin=b"").stdout, b"")
        big = os.urandom(300000)
        r = s.run("cat", stdin=big, output_limit=(1 << 20, "bytes", "head"))
        self.assertEqual(r.stdout, big)

    def test_binary_output_with_nuls(self):
        s = self.session()
        r = s.run(r"printf 'a\0b\0\377\n'")
        self.assertEqual(r.stdout, b"a\x00b\x00\xff\n")
        self.assertEqual(r.text, "a\x00b\x00\ufffd\n")

    def test_pty_resized_while_running(self):
        s = self.session()
        r = s.start_run("trap 'stty size' WINCH; echo ready; sleep 20 & wait $!; kill $!",
                        pty=True)
        self.assertTrue(self.pump_until(s, lambda: b"ready" in r.stdout))
        self.pump_until(s, lambda: False, timeout=0.1)     # `wait` is waiting
        r.set_pty_size(100, 30)
        self.assertTrue(r.wait(10000))
        self.assertEqual(r.stdout, b"ready\n30 100\n")
        with self.assertRaises(shexec.PipeError):
            r.set_pty_size(80, 24)
        t = s.start_task("echo ready; read x; stty size", pty=True)
        self.addCleanup(t.free)
        self.assertTrue(self.pump_until(s, lambda: b"ready" in t.output()))
        t.set_pty_size(132, 43)
        t.write("\n")
        self.assertTrue(t.wait(10000))
        self.assertEqual(t.output(), b"ready\n43 132\n")
        p = s.start_run("sleep 20")
        with self.assertRaises(shexec.StateError):
            p.set_pty_size(80, 24)
        p.cancel()
        p.wait(10000)

    def test_output_limit(self):
        s = self.session()
        s.set_output_limit(10, "bytes", "head")
        r = s.run("head -c 100 /dev/zero | tr '\\0' x")
        self.assertTrue(r.stdout_truncated)
        self.assertTrue(r.truncated)
        self.assertFalse(r.stderr_truncated)
        self.assertEqual(r.stdout_total, 100)
        self.assertEqual(r.stdout, b"x" * 10 + b"\n[output truncated: kept the first 10 characters "
                         b"(10 bytes) of 100 (100 bytes, 1 lines); 90 characters (90 bytes) omitted]\n")
        r = s.run("echo short")
        self.assertFalse(r.truncated)

    def test_timeout_keeps_partial_output(self):
        s = self.session()
        t0 = time.monotonic()
        r = s.run("echo partial; sleep 30", timeout_ms=500)
        self.assertLess(time.monotonic() - t0, 5)
        self.assertEqual(r.state, "timed_out")
        self.assertEqual(r.stdout, b"partial\n")
        self.assertEqual(r.exit_code, -1)
        self.assertIn(r.signal, (15, 9))

    def test_streaming_callback(self):
        s = self.session()
        chunks = []
        r = s.run("for i in $(seq 1 40); do echo line$i; sleep 0.002; done; echo oops >&2",
                  on_output=lambda stream, data: chunks.append((stream, data)))
        self.assertTrue(chunks)
        for stream, data in chunks:
            self.assertIn(stream, ("stdout", "stderr"))
            self.assertIsInstance(data, bytes)
        out = b"".join(d for st, d in chunks if st == "stdout")
        err = b"".join(d for st, d in chunks if st == "stderr")
        self.assertEqual(out, r.stdout)
        self.assertEqual(out, b"".join(b"line%d\n" % i for i in range(1, 41)))
        self.assertEqual(err, b"oops\n")

    def test_callback_exception_propagates_and_kills(self):
        s = self.session()
        seen = []

        def cb(stream, data):
            seen.append(data)
            raise Boom("from the callback")

        t0 = time.monotonic()
        with self.assertRaises(Boom) as ctx:
            s.run("sh -c 'echo $$; exec sleep 30'", on_output=cb)
        self.assertLess(time.monotonic() - t0, 5)
        self.assertEqual(str(ctx.exception), "from the callback")
        self.assertEqual(len(seen), 1)   # not called again after it raised
        pid = int(seen[0].split()[0])
        self.assertTrue(wait_until(lambda: gone(pid), 3), "the command still runs")
        # the session is still usable
        self.assertEqual(s.run("echo ok").stdout, b"ok\n")

    def test_callback_cannot_reenter(self):
        s = self.session()

        def cb(stream, data):
            s.run("echo nested")

        with self.assertRaises(shexec.StateError):
            s.run("echo outer; sleep 5", on_output=cb)

        def closer(stream, data):
            s.close()

        with self.assertRaises(shexec.StateError):
            s.run("echo outer; sleep 5", on_output=closer)
        self.assertFalse(s.closed)

    def test_pty(self):
        s = self.session()
        r = s.run("tty; [ -t 1 ] && echo isatty; echo err >&2", pty=True)
        self.assertRegex(r.stdout, rb"^/dev/pts/\d+\n")
        self.assertIn(b"isatty", r.stdout)
        self.assertIn(b"err", r.stdout)    # merged
        self.assertEqual(r.stderr, b"")
        self.assertEqual(s.run("tty").stdout, b"not a tty\n")

    def test_ansi_strip(self):
        s = self.session()
        cmd = r"printf '\033[31mred\033[0m\n'; printf 'progress 10%%\rprogress 100%%\n'"
        self.assertEqual(s.run(cmd, ansi_strip=True).stdout, b"red\nprogress 100%\n")
        self.assertIn(b"\x1b[31m", s.run(cmd).stdout)

    def test_start_run_with_stdin(self):
        s = self.session()
        r = s.start_run("tr a-z A-Z", stdin=True)
        self.assertFalse(r.done)
        self.assertEqual(r.state, "running")
        r.write("hello ")
        r.write(b"world\n")
        r.close_stdin()
        self.assertTrue(r.wait(5000))
        self.assertEqual(r.stdout, b"HELLO WORLD\n")
        with self.assertRaises(shexec.PipeError):
            r.write(b"late")

    def test_cancel_live_run(self):
        s = self.session()
        r = s.start_run("echo started; sleep 30")
        self.assertFalse(r.wait(200))
        r.cancel()
        self.assertTrue(r.wait(3000))
        self.assertEqual(r.state, "cancelled")
        self.assertEqual(r.stdout, b"started\n")

    def test_host_event_loop(self):
        s = self.session()
        r = s.start_run("sleep 0.1; echo hi")
        end = time.monotonic() + 5
        finished = 0
        while not r.done and time.monotonic() < end:
            fds, tmo = s.pollfds()
            self.assertTrue(fds)
            p = select.poll()
            for fd, ev in fds:
                p.register(fd, ev)
            ready = p.poll(tmo if tmo >= 0 else 1000)
            finished += s.process(ready)
        self.assertTrue(r.done)
        self.assertEqual(finished, 1)   # process() counts what finished in it
        self.assertEqual(r.stdout, b"hi\n")
        self.assertEqual(s.pollfds(), ([], -1))
        self.assertEqual(s.process(), 0)

    def test_host_event_loop_enforces_timeout(self):
        # pollfds() only lists; process() called when poll() times out
        # (nothing ready) is what ends a run whose deadline passed
        s = self.session()
        r = s.start_run("sleep 30", timeout_ms=300)
        end = time.monotonic() + 10
        while not r.done and time.monotonic() < end:
            fds, tmo = s.pollfds()
            ready = select.poll()
            for fd, ev in fds:
                ready.register(fd, ev)
            s.process(ready.poll(tmo if tmo >= 0 else 1000))
        self.assertEqual(r.state, "timed_out")

    def test_wait_counts_finished(self):
        s = self.session()
        self.assertEqual(s.wait(), 0)          # nothing runs: at once
        long = s.start_task("sleep 30")
        self.assertEqual(s.wait(50), 0)        # the time ran out
        t = s.start_task("sleep 0.1")
        finished = 0
        end = time.monotonic() + 5
        while not t.done and time.monotonic() < end:
            finished += s.wait(1000)
        self.assertEqual(finished, 1)
        long.kill()
        self.assertEqual(s.wait(5000), 1)
        self.assertEqual(long.state, "killed")

    def test_run_pid(self):
        s = self.session()
        r = s.run("echo $$")
        self.assertEqual(r.pid, int(r.stdout))   # the shell's pid ...
        live = s.start_run("echo $$; sleep 30")
        self.assertGreater(live.pid, 0)
        self.assertEqual(os.getpgid(live.pid), live.pid)   # ... and the group's id
        self.assertTrue(self.pump_until(s, lambda: live.stdout))
        self.assertEqual(int(live.stdout), live.pid)
        pid = live.pid
        live.cancel()
        self.assertTrue(live.wait(5000))
        self.assertEqual(live.pid, pid)           # kept after the end
        t = s.start_task("echo $$")
        self.assertTrue(t.wait(5000))
        self.assertEqual(t.run.pid, int(t.output()))
        self.assertNotEqual(t.run.pid, pid)

    def test_settings_read_back(self):
        s = Session()
        self.addCleanup(s.close)
        self.assertEqual(s.timeouts_ms, (120000, 600000))
        self.assertEqual(s.kill_grace_ms, 5000)
        self.assertEqual(s.output_limit, (30000, "chars", "head"))
        self.assertTrue(s.inherits_env)
        self.assertEqual(s.max_tasks, 10)
        self.assertEqual(s.on_leftovers, "adopt")
        self.assertFalse(s.watchdog)
        s.set_timeouts_ms(4000, 8000)
        s.set_kill_grace_ms(250)
        s.set_output_limit(100, "bytes", "head_tail")
        s.env_inherit(False)
        s.set_max_tasks(3)
        s.set_on_leftovers("kill")
        self.assertEqual(s.timeouts_ms, (4000, 8000))
        self.assertEqual(s.kill_grace_ms, 250)
        self.assertEqual(s.output_limit, (100, "bytes", "head_tail"))
        self.assertFalse(s.inherits_env)
        self.assertEqual(s.max_tasks, 3)
        self.assertEqual(s.on_leftovers, "kill")
        with self.assertRaises(shexec.InvalidArgumentError):
            s.set_timeouts_ms(9000, 8000)
        self.assertEqual(s.timeouts_ms, (4000, 8000))   # unchanged

    def test_leftovers_drain(self):
        s = self.session()
        self.assertEqual(s.leftovers_drain_ms, 100)
        # the late line of a background process is the command's output
        s.set_leftovers_drain_ms(1000)
        r = s.run("{ sleep 0.05; echo late; } &")
        self.assertEqual(r.stdout, b"late\n")
        self.assertEqual(r.leftovers, "none")
        with self.assertRaises(shexec.InvalidArgumentError):
            s.set_leftovers_drain_ms(2001)
        self.assertEqual(s.leftovers_drain_ms, 1000)
        # without a drain it is the adopted task's
        s.set_leftovers_drain_ms(0)
        r = s.run("{ sleep 2; echo late; } &")   # long after the run returns, however loaded
        self.assertEqual(r.stdout, b"")
        self.assertEqual(r.leftovers, "adopted")

    def test_run_timeout_ms(self):
        s = self.session()
        s.set_timeouts_ms(4000, 8000)
        self.assertEqual(s.run("true").timeout_ms, 4000)      # the session default
        self.assertEqual(s.run("true", timeout_ms=6000).timeout_ms, 6000)
        self.assertEqual(s.run("true", timeout_ms=60000).timeout_ms, 8000)   # clamped
        live = s.start_run("sleep 30", timeout_ms=5000)
        self.assertEqual(live.timeout_ms, 5000)
        live.cancel()
        live.wait(5000)
        self.assertEqual(live.timeout_ms, 5000)
        # a task has no timeout unless given one, and it is not clamped
        self.assertEqual(s.start_task("true").run.timeout_ms, 0)
        self.assertEqual(s.start_task("true", timeout_ms=0).run.timeout_ms, 0)
        self.assertEqual(s.start_task("true", timeout_ms=60000).run.timeout_ms, 60000)

    def test_shell(self):
        sh = os.path.realpath(shutil.which("sh"))
        s = self.session(shell="sh")   # a name: looked up in PATH now
        self.assertEqual(os.path.realpath(s.run("readlink /proc/$$/exe").text.strip()), sh)
        s.set_shell(None)              # the default again
        default = "/bin/bash" if os.access("/bin/bash", os.X_OK) else "/bin/sh"
        self.assertEqual(s.run("readlink /proc/$$/exe").text.strip(),
                         os.path.realpath(default))
        s.set_shell([sh])
        self.assertEqual(os.path.realpath(s.run("readlink /proc/$$/exe").text.strip()), sh)
        with self.assertRaises(shexec.SpawnError) as ctx:
            s.set_shell("no-such-shell-shexec-test")
        self.assertIn("no-such-shell-shexec-test", ctx.exception.message)
        # the previous setting stays
        self.assertEqual(os.path.realpath(s.run("readlink /proc/$$/exe").text.strip()), sh)
        with self.assertRaises(shexec.SpawnError):
            Session(shell="no-such-shell-shexec-test")

    def test_wrapper_kind(self):
        s = self.session()
        self.assertEqual(s.wrapper_kind, "local")
        self.assertIsNone(s.shell)
        with self.assertRaises(shexec.InvalidArgumentError):
            s.set_shell(["sh"], "carrier-pigeon")
        self.assertIsNone(s.shell)  # nothing changed
        # a remote kind works through any wrapper that passes stdout: here none
        s.set_shell(["sh"], "remote")
        self.assertEqual(s.shell, ["sh"])
        self.assertEqual(s.wrapper_kind, "remote")
        self.assertEqual(s.cwd, "")
        r = s.run("cd /tmp; echo here")
        self.assertEqual(r.stdout, b"here\n")
        self.assertEqual(s.cwd, "/tmp")
        r = s.run("exec >/dev/null; cd /usr")
        self.assertEqual(r.stdout, b"")
        self.assertEqual(s.cwd, "/usr")
        s.set_shell(["sh"], "local")
        self.assertEqual(s.cwd, os.getcwd())


class TestTasks(Base):
    def test_task_lifecycle(self):
        s = self.session()
        t = s.start_task("echo one; read line; echo got:$line; sleep 30", stdin=True)
        self.assertRegex(t.id, r"^t[0-9a-f]{12}$")
        self.assertEqual(t.state, "running")
        self.assertFalse(t.done)
        got = []
        self.assertTrue(self.pump_until(s, lambda: got.append(t.read()) or b"one\n" in b"".join(got)))
        self.assertEqual(b"".join(got), b"one\n")
        self.assertEqual(t.read(), b"")          # only what is new
        t.write(b"hi\n")
        got = []
        self.assertTrue(self.pump_until(s, lambda: got.append(t.read()) or b"got:hi\n" in b"".join(got)))
        self.assertEqual(b"".join(got), b"got:hi\n")
        self.assertEqual(t.output(), b"one\ngot:hi\n")  # everything so far
        self.assertEqual(t.output("stderr"), b"")
        self.assertIs(s.take_task(t.id), t)
        t.kill()
        self.assertTrue(t.wait(3000))
        self.assertTrue(t.done)
        self.assertEqual(t.state, "killed")
        self.assertEqual(t.exit_code, -1)
        t.free()
        self.assertFalse(t.alive)
        with self.assertRaises(shexec.NoTaskError):
            s.take_task(t.id)

    def test_task_exit_code(self):
        s = self.session()
        with s.start_task("echo x; echo y >&2; exit 3") as t:
            self.assertTrue(t.wait(5000))
            self.assertEqual(t.state, "exited")
            self.assertEqual(t.exit_code, 3)
            self.assertEqual(t.output(), b"x\n")
            self.assertEqual(t.read("stderr"), b"y\n")
        self.assertFalse(t.alive)

    def test_task_does_not_move_cwd(self):
        s = self.session()
        s.set_cwd("/")
        t = s.start_task("cd /tmp && pwd", cwd="/")
        t.wait(5000)
        self.assertEqual(t.output(), b"/tmp\n")
        self.assertEqual(s.cwd, "/")

    def test_task_limit(self):
        s = self.session()
        s.set_max_tasks(1)
        t = s.start_task("sleep 30")
        with self.assertRaises(shexec.LimitError) as ctx:
            s.start_task("sleep 30")
        e = ctx.exception
        self.assertEqual(e.code, shexec.ELIMIT)
        self.assertEqual(e.name, "SHEXEC_ELIMIT")
        self.assertIn("1", e.message)
        t.free()
        s.start_task("true").wait(5000)   # room again

    def test_finished_tasks_hold_their_slot(self):
        s = self.session()
        s.set_max_tasks(1)
        t = s.start_task("echo done")
        t.wait(5000)
        self.assertTrue(t.done)
        with self.assertRaises(shexec.LimitError) as ctx:
            s.start_task("true")
        self.assertIn("1 finished but not yet freed", ctx.exception.message)
        self.assertEqual(t.output(), b"done\n")   # never freed behind our back
        t.free()
        s.start_task("true").wait(5000)

    def test_unclaimed_leftovers_released(self):
        s = self.session()
        s.set_max_tasks(1)
        s.set_leftovers_drain_ms(0)   # the leftovers adopted at the shell's exit
        first = s.run("(sleep 0.1; echo a) &").leftover_task
        s.wait(3000)
        second = s.run("(sleep 0.1; echo b) &").leftover_task
        self.assertIsNotNone(second)
        with self.assertRaises(shexec.NoTaskError) as ctx:
            s.take_task(first)
        self.assertIn("finished and was released unread (retention limit)",
                      ctx.exception.message)
        t = s.take_task(second)
        t.wait(5000)
        self.assertEqual(t.output(), b"b\n")

    def test_unknown_task(self):
        s = self.session()
        with self.assertRaises(shexec.NoTaskError) as ctx:
            s.take_task("t000000000000")
        self.assertEqual(ctx.exception.code, shexec.ENOTASK)
        self.assertEqual(ctx.exception.name, "SHEXEC_ENOTASK")
        self.assertIn("t000000000000", str(ctx.exception))
        self.assertIsInstance(ctx.exception, LookupError)

    def test_task_write_without_stdin(self):
        s = self.session()
        t = s.start_task("sleep 30")
        with self.assertRaises(shexec.PipeError) as ctx:
            t.write(b"x")
        self.assertEqual(ctx.exception.code, shexec.EPIPE)
        self.assertNotIn("unknown", ctx.exception.message)

    def test_task_write_past_the_input_bound(self):
        # a task that does not read: past the bound on queued input (1 MiB)
        # a write is refused whole, as LimitError with the library's message
        s = self.session()
        t = s.start_task("sleep 30", stdin=True)
        t.write(b"x" * (2 << 20))          # into an empty queue: taken
        with self.assertRaises(shexec.LimitError) as ctx:
            t.write(b"more\n")
        self.assertEqual(ctx.exception.code, shexec.ELIMIT)
        self.assertEqual(ctx.exception.name, "SHEXEC_ELIMIT")
        self.assertIn("would pass the bound of 1048576 bytes", ctx.exception.message)
        t.kill()

    def test_leftovers_adopted(self):
        s = self.session()
        r = s.run("(sleep 1; echo later) & echo started")   # after the drain, however loaded
        self.assertEqual(r.stdout, b"started\n")
        self.assertEqual(r.leftovers, "adopted")
        self.assertRegex(r.leftover_task, r"^t[0-9a-f]{12}$")
        t = s.take_task(r.leftover_task)
        self.assertTrue(t.wait(5000))
        self.assertEqual(t.output(), b"later\n")
        self.assertEqual(t.exit_code, -1)

    def test_watchdog_on_off(self):
        s = self.session()
        s.set_watchdog(True)
        self.assertEqual(len(children()), 1)       # the watchdog
        self.assertEqual(s.run("echo hi").stdout, b"hi\n")
        s.set_watchdog(False)                      # reaped at once
        self.assertEqual(children(), [])
        s.set_watchdog(True)                       # closing reaps it too

    def test_watchdog_ends_commands_of_a_killed_host(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d, True)
        f = os.path.join(d, "pids")
        host = textwrap.dedent("""
            import sys
            sys.path.insert(0, %r)
            import shexec
            s = shexec.Session()
            s.set_watchdog(True)
            s.start_task("sleep 300 & echo $! >> %s; wait")
            s.run("sleep 301 >/dev/null 2>&1 & echo $! >> %s")
            print("ready", flush=True)
            sys.stdin.read()
        """) % (SHEXEC_PATH, f, f)
        p = subprocess.Popen([sys.executable, "-c", host], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE)
        self.assertEqual(p.stdout.readline(), b"ready\n")
        def pids():
            try:
                with open(f) as fp:
                    return [int(x) for x in fp.read().split()]
            except FileNotFoundError:
                return []
        self.assertTrue(wait_until(lambda: len(pids()) == 2))
        pids = pids()
        p.kill()
        p.wait()
        p.stdin.close()
        p.stdout.close()
        ok = wait_until(lambda: all(gone(pid) for pid in pids), 5)
        for pid in pids:
            if not gone(pid):
                os.kill(pid, 9)
        self.assertTrue(ok, "commands outlived the killed host")

    def test_leftovers_killed(self):
        s = self.session()
        s.set_on_leftovers("kill")
        r = s.run("sleep 30 & echo $!")
        self.assertTrue(wait_until(lambda: gone(int(r.stdout)), 3), "leftover not killed")
        self.assertIsNone(r.leftover_task)
        self.assertEqual(r.leftovers, "killed")

    def test_task_callback_exception(self):
        s = self.session()

        def cb(stream, data):
            raise Boom("task callback")

        t = s.start_task("echo hi; sleep 30", on_output=cb)
        with self.assertRaises(Boom):
            t.wait(5000)
        self.assertTrue(t.wait(3000))
        self.assertEqual(t.state, "killed")
        self.assertIsNone(t.callback_error)

    def test_task_callback_streams(self):
        s = self.session()
        chunks = []
        t = s.start_task("printf 'a\\0b'; echo e >&2",
                         on_output=lambda st, d: chunks.append((st, d)))
        t.wait(5000)
        self.assertEqual(b"".join(d for st, d in chunks if st == "stdout"), b"a\0b")
        self.assertEqual(b"".join(d for st, d in chunks if st == "stderr"), b"e\n")


    def test_task_output_from_callback_with_ansi_strip(self):
        # a line, then a prompt the stripper holds back until a read pushes
        # it out, then the rest; the callback reads the task's output
        s = self.session()
        prompt = b"P" * 200 + b"> "
        chunks, views = [], []
        depth = [0, 0]   # current, deepest

        def cb(stream, data):
            depth[0] += 1
            depth[1] = max(depth[1], depth[0])
            try:
                chunks.append(data)
                views.append(t.output())
                t.read()
            finally:
                depth[0] -= 1

        t = s.start_task("printf 'line1\\n%s'; sleep 0.3; printf 'more\\n\\033[1mend\\033[0m\\n'"
                         % prompt.decode(), ansi_strip=True, on_output=cb)
        self.assertTrue(t.wait(10000))
        expected = b"line1\n" + prompt + b"more\nend\n"
        self.assertEqual(depth[1], 1, "the callback was re-entered")
        self.assertEqual(t.output(), expected)
        self.assertEqual(b"".join(chunks), expected)
        # each read saw at least what the callback had been given, in order
        got = b""
        for data, view in zip(chunks, views):
            got += data
            self.assertTrue(view.startswith(got), (view, got))
        t.free()


    def test_task_run(self):
        # a task is a run started in the background: its Run reads and feeds it
        s = self.session()
        t = s.start_task("read x; echo got:$x; echo err >&2; exit 4", stdin=True)
        r = t.run
        self.assertIsInstance(r, shexec.Run)
        self.assertIs(t.run, r)
        self.assertEqual(r.task_id, t.id)
        self.assertEqual(r.command, t.command)
        self.assertEqual(r.state, "running")
        self.assertFalse(r.done)
        r.write(b"hi\n")
        self.assertTrue(r.wait(5000))
        self.assertEqual((r.state, r.exit_code, r.signal), ("exited", 4, 0))
        self.assertEqual((r.stdout, r.stderr), (b"got:hi\n", b"err\n"))
        self.assertEqual((r.stdout_total, r.stdout_truncated), (7, False))
        self.assertEqual(r.leftovers, "none")
        self.assertTrue(r.ok is False)
        # the Task shortcuts read the same run
        self.assertEqual((t.state, t.exit_code, t.output(), t.output("stderr")),
                         ("exited", 4, b"got:hi\n", b"err\n"))
        self.assertEqual(t.output_total("stderr"), 4)
        self.assertFalse(t.truncated())
        self.assertEqual(t.read(), b"got:hi\n")
        self.assertEqual(t.read(), b"")
        self.assertEqual(r.stdout, b"got:hi\n")   # reading marks nothing in the run
        r.close()                                 # a task's run goes with its task
        self.assertEqual(r.state, "exited")
        self.assertIs(s.take_task(t.id).run, r)
        t.free()
        with self.assertRaises(shexec.ClosedError):
            r.state
        with self.assertRaises(shexec.ClosedError):
            r.stdout
        self.assertIn("dead", repr(r))

    def test_task_run_cancel_kills(self):
        s = self.session()
        t = s.start_task("sleep 30")
        t.run.cancel()
        self.assertTrue(t.wait(5000))
        self.assertEqual(t.state, "killed")
        self.assertEqual(t.run.state, "killed")

    def test_leftover_task_run(self):
        s = self.session()
        s.set_leftovers_drain_ms(0)   # adopted at the shell's exit: "later" is the task's
        r = s.run("(sleep 1; echo later) & echo started")
        t = s.take_task(r.leftover_task)
        self.assertEqual(t.id, r.leftover_task)
        self.assertEqual(t.run.task_id, t.id)
        self.assertIsNone(t.run.command)
        self.assertTrue(t.run.wait(5000))
        self.assertEqual(t.run.stdout, b"later\n")
        self.assertEqual(t.run.exit_code, -1)
        self.assertEqual(t.run.pid, r.pid)    # the command's process group
        t.free()


class TestTools(Base):
    def test_has_tool_changes_nothing(self):
        s = self.session()
        self.assertTrue(s.has_tool("bash"))
        self.assertFalse(s.tool_enabled("bash"))   # still disabled
        s.enable_tool("bash")
        self.assertTrue(s.has_tool("bash"))
        self.assertTrue(s.tool_enabled("bash"))    # still enabled
        self.assertFalse(s.has_tool("no_such_tool"))
        s.rename_tool("bash", "run_bash")
        self.assertFalse(s.has_tool("bash"))
        self.assertTrue(s.tool_enabled("run_bash"))
        s.enable_tool("run_bash", False)
        self.assertFalse(s.tool_enabled("run_bash"))
        with self.assertRaises(shexec.ToolNotAvailableError):
            s.enable_tool("bash")

    def test_call_tool_and_list(self):
        s = self.session()
        self.assertEqual(s.tools(), [])
        s.enable_tool("bash")
        s.enable_tool("task_output")
        self.assertEqual(sorted(t["name"] for t in s.tools()), ["bash", "task_output"])
        r = s.call_tool("bash", {"command": "echo hi", "run_in_background": True})
        self.assertEqual(r["status"], "running")
        end = time.monotonic() + 5
        while r.get("status") == "running" and time.monotonic() < end:
            s.wait(100)
            r = s.call_tool("task_output", {"task_id": r["task_id"]})
        self.assertEqual((r["status"], r["stdout"], r["exit_code"]), ("completed", "hi\n", 0))
        self.assertEqual(s.call_tool("nope"), {"error": "Tool not available: nope"})

    def test_task_freed_by_the_tool_layer(self):
        # task_output reading a task to completion, or task_kill, frees it:
        # a Task object held for it dies instead of reading freed memory
        s = self.session()
        s.enable_tool("bash")
        s.enable_tool("task_output")
        s.enable_tool("task_kill")
        done = s.call_tool("bash", {"command": "echo hi", "run_in_background": True})
        running = s.call_tool("bash", {"command": "sleep 30", "run_in_background": True})
        mine = s.start_task("sleep 30")
        t1 = s.take_task(done["task_id"])
        t2 = s.take_task(running["task_id"])
        self.assertTrue(t1.wait(5000))
        r = s.call_tool("task_output", {"task_id": t1.id})
        self.assertEqual((r.get("status"), r.get("stdout")), ("completed", "hi\n"), r)
        self.assertFalse(t1.alive)
        self.assertTrue(t2.alive)
        for op in (lambda: t1.state, lambda: t1.run.stdout, t1.read, t1.kill):
            with self.assertRaises(shexec.ClosedError):
                op()
        t1.free()    # nothing left to free
        self.assertEqual(s.call_tool("task_kill", {"task_id": t2.id})["status"], "killed")
        self.assertFalse(t2.alive)
        with self.assertRaises(shexec.ClosedError):
            t2.wait(100)
        self.assertTrue(mine.alive)   # the others are untouched
        self.assertEqual(mine.state, "running")
        mine.free()

    def test_tool_prepare_foreground(self):
        s = self.session(cwd="/")
        s.enable_tool("bash")
        s.set_timeouts_ms(4000, 8000)
        run, background = s.tool_prepare("bash", {"command": "cd /tmp && echo hi; echo e >&2",
                                                  "timeout": 6000, "env": {"SHX_V": "v"}})
        self.assertFalse(background)
        self.assertEqual(run.state, "new")
        self.assertFalse(run.done)
        self.assertEqual(run.pid, 0)
        self.assertEqual(run.timeout_ms, 6000)
        with self.assertRaises(shexec.StateError):
            run.wait(10)
        with self.assertRaises(shexec.StateError):
            run.tool_result()
        chunks = []
        self.assertIs(run.exec(on_output=lambda st, d: chunks.append((st, d))), run)
        self.assertEqual(run.state, "exited")
        self.assertGreater(run.pid, 0)
        self.assertEqual(b"".join(d for st, d in chunks if st == "stdout"), b"hi\n")
        res = run.tool_result()
        self.assertEqual((res["stdout"], res["stderr"], res["exit_code"], res["timed_out"]),
                         ("hi\n", "e\n", 0, False))
        self.assertEqual(res["cwd"], "/tmp")
        self.assertEqual(s.cwd, "/tmp")
        with self.assertRaises(shexec.StateError):
            run.start()                       # once only
        # the same as the tool itself answers
        run, _ = s.tool_prepare("bash", '{"command": "echo $SHX_V; exit 3", '
                                        '"env": {"SHX_V": "v"}}')
        run.start()
        self.assertTrue(run.wait(5000))
        expect = s.call_tool("bash", {"command": "echo $SHX_V; exit 3", "env": {"SHX_V": "v"}})
        got = run.tool_result()
        # what each of the two runs cost and took differs; its form does not
        self.assertEqual(set(got.pop("cost")), {"cpu_ms", "peak_bytes"})
        self.assertEqual(set(expect.pop("cost")), {"cpu_ms", "peak_bytes"})
        self.assertIsInstance(got.pop("elapsed_ms"), int)
        self.assertIsInstance(expect.pop("elapsed_ms"), int)
        self.assertEqual(got, expect)
        # a timeout is data there too
        run, _ = s.tool_prepare("bash", {"command": "sleep 30", "timeout": 200})
        res = run.exec().tool_result()
        self.assertTrue(res["timed_out"])
        self.assertIn("timed out", res["stderr"])
        # only prepared foreground runs have a tool result
        with self.assertRaises(shexec.StateError):
            s.run("true").tool_result()

    def test_tool_prepare_background(self):
        s = self.session()
        s.enable_tool("bash")
        run, background = s.tool_prepare("bash", {"command": "echo bg",
                                                  "run_in_background": True})
        self.assertTrue(background)
        self.assertEqual(run.timeout_ms, 120000)   # before the start: a foreground start's
        t = run.start_task()
        self.assertIs(t.run, run)
        self.assertEqual(run.task_id, t.id)
        self.assertEqual(run.timeout_ms, 0)        # a task: none
        self.assertTrue(t.wait(5000))
        self.assertEqual(t.output(), b"bg\n")
        self.assertIs(s.take_task(t.id), t)        # the caller's task
        with self.assertRaises(shexec.StateError):
            run.tool_result()
        t.free()

    def test_task_tool_result(self):
        s = self.session()
        t = s.start_task("echo hi; echo oops >&2; exit 4")
        self.addCleanup(t.free)
        self.assertTrue(t.wait(5000))
        out = t.read()
        self.assertEqual(out, b"hi\n")
        res = t.tool_result(stdout=out)
        self.assertEqual(res, {"task_id": t.id, "status": "completed", "stdout": "hi\n",
                               "stderr": "", "exit_code": 4, "state": "exited",
                               "truncated": {"stdout": False, "stderr": False}})
        # the status is passed through, the output may be str
        res = t.tool_result(stdout="said\n", stderr=b"err\n", status="killed")
        self.assertEqual((res["status"], res["stdout"], res["stderr"], res["exit_code"]),
                         ("killed", "said\n", "err\n", 4))
        # nothing was read or freed: stderr is still unread, the task still here
        self.assertTrue(t.alive)
        self.assertEqual(t.read("stderr"), b"oops\n")
        self.assertIs(s.take_task(t.id), t)
        with self.assertRaises(TypeError):
            t.tool_result(stdout=4)
        with self.assertRaises(shexec.InvalidArgumentError):
            t.tool_result(status="com\0pleted")
        t.free()
        with self.assertRaises(shexec.ClosedError):
            t.tool_result()

    def test_task_tool_result_as_task_output_gives_it(self):
        s = self.session()
        s.enable_tool("task_output")
        t = s.start_task("cat", stdin=True)
        self.addCleanup(t.free)
        res = t.tool_result()
        self.assertEqual((res["status"], res["stdout"], res["waiting_for_input"]),
                         ("running", "", False))
        self.assertNotIn("exit_code", res)
        t.write(b"line\n")
        t.close_stdin()
        self.assertTrue(t.wait(5000))
        mine = t.tool_result(stdout=t.output(), stderr=t.output("stderr"))
        self.assertEqual(mine, s.call_tool("task_output", {"task_id": t.id}))
        self.assertEqual(mine["stdout"], "line\n")
        # task_output read it to completion: the Task is dead now
        with self.assertRaises(shexec.ClosedError):
            t.tool_result()

    def test_tool_prepare_errors(self):
        s = self.session()
        with self.assertRaises(shexec.ToolNotAvailableError) as ctx:
            s.tool_prepare("bash", {"command": "true"})
        self.assertIn("Tool not available: bash", ctx.exception.message)
        s.enable_tool("bash")
        s.enable_tool("task_kill")
        with self.assertRaises(shexec.ToolNotAvailableError):
            s.tool_prepare("task_kill", {"task_id": "t000000000000"})
        for args in ({}, {"command": ""}, {"command": "ls", "extra": 1}, "{not json",
                     {"command": "ls", "timeout": 0},
                     {"command": "ls", "env": {"INVALID-NAME": "x", "OK": "y"}}):
            with self.assertRaises(shexec.InvalidArgumentError, msg=args) as ctx:
                s.tool_prepare("bash", args)
            self.assertTrue(ctx.exception.message, args)
            self.assertEqual(s.call_tool("bash", args), {"error": ctx.exception.message})
        # a model's variable names are shell identifiers, named when not
        self.assertEqual(s.call_tool("bash", {"command": "true", "env": {"A-B": "1", "1X": "2"}}),
                         {"error": 'invalid environment variable names "A-B", "1X" in "env": a '
                                   'name is letters, digits and _, not starting with a digit'})
        # a finished command's result says how long it ran
        res = s.call_tool("bash", {"command": "sleep 0.2"})
        self.assertGreaterEqual(res["elapsed_ms"], 200)
        # the directory is checked when the run starts; it then stays 'new'
        run, _ = s.tool_prepare("bash", {"command": "true", "cwd": "/nonexistent/dir"})
        with self.assertRaises(shexec.NoCwdError) as ctx:
            run.exec()
        self.assertIn("/nonexistent/dir", ctx.exception.message)
        self.assertEqual(run.state, "new")

    def test_prepared_run_dropped_or_closed_unstarted(self):
        s = self.session()
        s.enable_tool("bash")
        run, _ = s.tool_prepare("bash", {"command": "sleep 30"})
        del run
        gc.collect()
        run, _ = s.tool_prepare("bash", {"command": "sleep 30"})
        run.close()
        self.assertEqual(run.state, "new")
        self.assertTrue(run.done)
        with self.assertRaises(shexec.StateError):
            run.start()
        with self.assertRaises(shexec.StateError):
            run.start_task()
        self.assertEqual(children(), [])

    def test_prepared_task_at_the_limit(self):
        s = self.session()
        s.enable_tool("bash")
        s.set_max_tasks(1)
        t = s.start_task("sleep 30")
        run, _ = s.tool_prepare("bash", {"command": "echo later", "run_in_background": True})
        with self.assertRaises(shexec.LimitError):
            run.start_task()
        self.assertEqual(run.state, "new")        # still the caller's, not started
        t.free()
        t2 = run.start_task()
        self.assertTrue(t2.wait(5000))
        self.assertEqual(t2.output(), b"later\n")


class TestEnv(Base):
    def test_env_override(self):
        s = self.session()
        s.setenv("SHX_A", "1")
        self.assertEqual(s.run('echo "$SHX_A $SHX_B"', env={"SHX_B": "2"}).stdout, b"1 2\n")
        self.assertEqual(s.run('echo "${SHX_A-unset}"', env={"SHX_A": None}).stdout, b"unset\n")
        s.unsetenv("SHX_A")
        self.assertEqual(s.run('echo "${SHX_A-unset}"').stdout, b"unset\n")

    def test_env_deny(self):
        s = self.session()
        s.setenv("LD_PRELOAD", "/nonexistent/evil.so")
        r = s.run('echo "${LD_PRELOAD-unset}"')
        self.assertEqual(r.stdout, b"unset\n")
        self.assertEqual(r.stderr, b"")
        os.environ["SHX_SECRET_TOKEN"] = "hunter2"
        os.environ["SHX_SECRET_OK"] = "fine"
        try:
            s.env_deny("SHX_SECRET_*")
            s.env_allow("SHX_SECRET_OK")
            r = s.run('echo "${SHX_SECRET_TOKEN-unset} ${SHX_SECRET_OK-unset}"')
            self.assertEqual(r.stdout, b"unset fine\n")
        finally:
            del os.environ["SHX_SECRET_TOKEN"]
            del os.environ["SHX_SECRET_OK"]

    def test_env_inherit_off(self):
        os.environ["SHX_PROBE"] = "x"
        try:
            s = self.session(inherit_env=False, env={"SHX_MINE": "m"})
            r = s.run('echo "${SHX_PROBE-unset} $SHX_MINE"')
            self.assertEqual(r.stdout, b"unset m\n")
        finally:
            del os.environ["SHX_PROBE"]

    def test_bad_env_name(self):
        s = self.session()
        with self.assertRaises(shexec.InvalidArgumentError):
            s.setenv("A=B", "x")
        with self.assertRaises(shexec.InvalidArgumentError):
            s.setenv("A\0B", "x")


class TestErrors(Base):
    def test_enocwd(self):
        s = self.session()
        before = s.cwd
        with self.assertRaises(shexec.NoCwdError) as ctx:
            s.set_cwd("/nonexistent/dir")
        e = ctx.exception
        self.assertIsInstance(e, shexec.ShexecError)
        self.assertEqual(e.code, shexec.ENOCWD)
        self.assertEqual(e.name, "SHEXEC_ENOCWD")
        self.assertIn("/nonexistent/dir", e.message)
        self.assertIn("/nonexistent/dir", str(e))
        self.assertEqual(s.cwd, before)
        with self.assertRaises(shexec.NoCwdError):
            s.run("true", cwd="/nonexistent")

    def test_nul_in_command(self):
        s = self.session()
        for cmd in ("echo a\0b", b"echo a\0b"):
            with self.assertRaises(shexec.InvalidArgumentError) as ctx:
                s.run(cmd)
            self.assertEqual(ctx.exception.code, shexec.EINVAL)
            self.assertEqual(ctx.exception.name, "SHEXEC_EINVAL")
            self.assertIn("NUL", ctx.exception.message)
            self.assertIsInstance(ctx.exception, ValueError)
        with self.assertRaises(shexec.InvalidArgumentError):
            s.start_task("echo a\0b")
        with self.assertRaises(shexec.InvalidArgumentError):
            s.run("")
        with self.assertRaises(shexec.InvalidArgumentError):
            s.set_cwd("/tmp\0/x")

    def test_bad_arguments(self):
        s = self.session()
        with self.assertRaises(shexec.InvalidArgumentError):
            s.set_timeouts_ms(0, 10)
        with self.assertRaises(shexec.InvalidArgumentError):
            s.set_timeouts_ms(10, 1 << 40)
        with self.assertRaises(shexec.InvalidArgumentError):
            s.set_output_limit(10, "words")
        with self.assertRaises(shexec.InvalidArgumentError):
            s.set_on_leftovers("ignore")
        with self.assertRaises(shexec.InvalidArgumentError):
            s.run("true", timeout_ms=0)

    def test_codes_distinguishable(self):
        classes = {shexec.EINVAL: shexec.InvalidArgumentError, shexec.ENOCWD: shexec.NoCwdError,
                   shexec.ELIMIT: shexec.LimitError, shexec.ENOTASK: shexec.NoTaskError,
                   shexec.EPIPE: shexec.PipeError, shexec.ESTATE: shexec.StateError}
        self.assertEqual(len(set(classes.values())), len(classes))
        for code in classes:
            self.assertNotEqual(shexec.strerror(code), "unknown error")
            self.assertTrue(shexec.error_name(code).startswith("SHEXEC_E"))
        self.assertEqual(shexec.version().count("."), 2)

    def test_closed_session(self):
        s = Session()
        s.close()
        s.close()   # idempotent
        self.assertTrue(s.closed)
        with self.assertRaises(shexec.ClosedError) as ctx:
            s.run("true")
        self.assertEqual(ctx.exception.code, shexec.ESTATE)
        with self.assertRaises(shexec.StateError):
            s.cwd


class TestLifetime(Base):
    def test_close_session_before_task_wrappers(self):
        s = Session()
        s.set_kill_grace_ms(200)
        t = s.start_task("echo hi; sleep 30")
        t2 = s.start_task("sleep 30")
        tid = t.id
        s.close()
        self.assertFalse(t.alive)
        self.assertEqual(t.id, tid)
        for op in (t.read, t.output, t.kill, t.close_stdin, lambda: t.state,
                   lambda: t.done, lambda: t.write(b"x"), t.wait):
            with self.assertRaises(shexec.ClosedError):
                op()
        t.free()   # idempotent, no crash
        self.assertIn("dead", repr(t))
        del s
        gc.collect()
        with self.assertRaises(shexec.ClosedError):
            t2.read()
        del t, t2
        gc.collect()

    def test_task_keeps_session_alive(self):
        t = Session().start_task("echo hi")
        gc.collect()
        self.assertTrue(t.wait(5000))
        self.assertEqual(t.read(), b"hi\n")
        t.session.close()
        with self.assertRaises(shexec.ClosedError):
            t.read()

    def test_dropping_task_object_keeps_task(self):
        s = self.session()
        t = s.start_task("sleep 0.2; echo done")
        tid = t.id
        del t
        gc.collect()
        t = s.take_task(tid)
        self.assertTrue(t.wait(5000))
        self.assertEqual(t.output(), b"done\n")

    def test_dropped_live_run_is_terminated(self):
        s = self.session()
        r = s.start_run("sleep 30")
        self.assertEqual(len(children()), 1)
        del r
        gc.collect()
        self.assertEqual(children(), [])
        self.assertEqual(s.run("echo still").stdout, b"still\n")

    def test_session_closed_under_live_run(self):
        s = Session()
        s.set_kill_grace_ms(200)
        r = s.start_run("echo x; sleep 30")
        self.assertFalse(r.wait(300))
        s.close()
        self.assertTrue(r.done)
        self.assertEqual(r.state, "cancelled")
        self.assertEqual(r.stdout, b"x\n")
        with self.assertRaises(shexec.PipeError):
            r.write(b"x")
        del s
        gc.collect()
        del r
        gc.collect()

    def test_gc_inside_callback(self):
        s = self.session()
        # The run dropped inside the callback is busy writing, so it is in the
        # very poll round being dispatched: freeing it there (shexec_run_free
        # from a callback) is a use-after-free in the library (seen with ASan).
        holder = {"run": s.start_run("while :; do echo x; done"),
                  "task_obj": s.start_task("true")}
        collected = []

        def cb(stream, data):
            if holder:
                holder.clear()   # the last references: a live run and a Task object
                gc.collect()
                collected.append(len(s._deferred))

        r = s.run("echo a; sleep 0.05; echo b", on_output=cb)
        self.assertEqual(r.stdout, b"a\nb\n")
        self.assertEqual(collected, [1])     # the run was not freed inside the loop
        self.assertEqual(s._deferred, [])    # ... but right after it
        self.pump_until(s, lambda: len(children()) == 0, 3)
        self.assertEqual(children(), [])

    def test_objects_dropped_in_random_order(self):
        rng = random.Random(1234)
        for _ in range(3):
            objs = []
            for _ in range(2):
                s = Session()
                s.set_kill_grace_ms(100)
                objs.append(s)
                objs.append(s.start_task("sleep 30"))
                objs.append(s.start_task("echo quick"))
                objs.append(s.start_run("sleep 30"))
                objs.append(s.start_run("echo x", stdin=True))
                objs.append(s.run("echo done"))
                objs.append(s.take_task(objs[-5].id))
            del s
            rng.shuffle(objs)
            while objs:
                o = objs.pop()
                if rng.random() < 0.3 and isinstance(o, Session):
                    o.close()
                del o
                if rng.random() < 0.5:
                    gc.collect()
            gc.collect()
            self.assertEqual(children(), [])

    def test_run_result_outlives_session(self):
        with Session() as s:
            r = s.run("echo kept")
        del s
        gc.collect()
        self.assertEqual(r.stdout, b"kept\n")
        self.assertEqual(r.exit_code, 0)

    def test_interpreter_exit_without_close(self):
        script = textwrap.dedent("""
            import sys
            sys.path.insert(0, %r)
            import shexec
            s = shexec.Session()
            s.set_kill_grace_ms(100)
            t = s.start_task("echo $$; exec sleep 300")
            t.wait(300)
            print(int(t.read()), flush=True)
            r = s.start_run("sleep 300")          # live at exit
            s2 = shexec.Session()
            t2 = s2.start_task("sleep 300")
            del s2                                # only the task holds it
            cycle = [s, t]; cycle.append(cycle)   # garbage with a cycle
            global keep
            keep = r
        """) % SHEXEC_PATH
        env = dict(os.environ)
        p = subprocess.run([sys.executable, "-c", script], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=env, timeout=20)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, b"")
        pid = int(p.stdout)
        self.assertTrue(wait_until(lambda: gone(pid), 3), "task survived the interpreter")


class TestHostIntegration(Base):
    def test_signal_interrupts_run(self):
        # a Python signal handler that raises (like Ctrl-C's KeyboardInterrupt)
        # stops Session.run() promptly and leaves nothing running
        import signal

        def handler(signum, frame):
            raise Boom("interrupted")

        old = signal.signal(signal.SIGALRM, handler)
        try:
            s = self.session()
            t0 = time.monotonic()
            signal.setitimer(signal.ITIMER_REAL, 0.3)
            with self.assertRaises(Boom):
                s.run("sleep 30")
            self.assertLess(time.monotonic() - t0, 3)
            self.assertEqual(children(), [])
            self.assertEqual(s.run("echo after").stdout, b"after\n")
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)

    def test_fork_child_leaves_parent_commands_alone(self):
        s = self.session()
        t = s.start_task("sleep 30")
        r = s.start_run("sleep 30")
        pid = os.fork()
        if pid == 0:  # child: drop and close everything, run the exit hooks
            code = 1
            try:
                closed = 0
                for op in (t.read, lambda: t.run.stdout, lambda: r.state):
                    try:
                        op()
                    except shexec.ClosedError:
                        closed += 1
                code = 0 if closed == 3 else 1
                del r
                gc.collect()
                s.close()
                shexec._close_all_sessions()
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        self.assertEqual(os.WEXITSTATUS(status), 0)
        self.assertEqual(t.state, "running")
        self.assertEqual(r.state, "running")
        self.assertFalse(r.wait(100))
        r.close()
        t.free()

    def test_threads_share_a_session_safely(self):
        s = self.session()
        errors = []

        def worker(n):
            try:
                for i in range(5):
                    r = s.run("echo %d-%d" % (n, i))
                    if r.stdout != b"%d-%d\n" % (n, i):
                        errors.append(r.stdout)
            except BaseException as e:  # pragma: no cover
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(20)
        self.assertEqual(errors, [])


class TestContainment(Base):
    MARK = "shexec-bind-mark-%d" % os.getpid()   # this process's, not another suite's

    def contained(self):
        """A session holding its commands in cgroups, or the test skipped
        with the reason the library gives."""
        s = self.session()
        s.set_containment("auto")
        kind, detail = s.containment
        if kind != "cgroup":
            self.skipTest("no cgroup containment here: %s" % detail)
        return s

    def test_default_and_bad_parents(self):
        s = self.session()
        # the default is "auto": what a session set to "auto" has
        default = s.containment
        auto = self.session()
        auto.set_containment("auto")
        self.assertEqual(default[0], auto.containment[0])
        if default[0] == "cgroup":
            self.assertIn("/shexec-", default[1])
            self.assertNotEqual(default[1], auto.containment[1])   # a cgroup of its own
        else:
            self.assertEqual(default, auto.containment)            # the same reason
        with self.assertRaises(shexec.InvalidArgumentError) as ctx:
            s.set_containment("relative")
        self.assertEqual(ctx.exception.code, shexec.EINVAL)
        self.assertIn("relative", ctx.exception.message)   # the library's detail
        with self.assertRaises(shexec.SysError) as ctx:
            s.set_containment("/tmp")
        self.assertEqual(ctx.exception.code, shexec.ESYS)
        self.assertIn("not a cgroup v2 directory", ctx.exception.message)
        # a failed change leaves the setting as it was
        self.assertEqual(s.containment, default)
        s.set_containment(None)
        self.assertEqual(s.containment, ("group", "turned off"))
        with self.assertRaises(shexec.InvalidArgumentError):
            s.set_containment("au\0to")
        self.assertEqual(s.run("echo hi").stdout, b"hi\n")
        # not while a command runs: its processes are held one way already
        t = s.start_task("sleep 30")
        with self.assertRaises(shexec.StateError):
            s.set_containment("auto")
        t.free()
        self.assertEqual(s.containment, ("group", "turned off"))

    def test_auto_kills_what_detached(self):
        s = self.contained()
        kind, cgdir = s.containment
        self.assertTrue(os.path.isdir(cgdir), cgdir)
        s.set_on_leftovers("kill")
        try:
            # setsid -f: a new session whose parent exits at once, out of
            # reach of the process group and of the /proc descendant walk
            r = s.run("setsid -f bash -c 'exec -a %s sleep 300'; echo ok" % self.MARK)
            self.assertEqual(r.stdout, b"ok\n")
            self.assertEqual(r.state, "exited")
            self.assertEqual(r.leftovers, "killed")
            self.assertTrue(wait_until(lambda: not marked(self.MARK), 2.0),
                            "a detached process outlived its command: %s" % marked(self.MARK))
            s.close()
            self.assertFalse(os.path.exists(cgdir), "the session's cgroup was not removed")
        finally:
            kill_marked(self.MARK)

    def test_cost_rusage(self):
        s = self.session()
        s.set_containment("off")
        r = s.start_run("sleep 0.2")
        self.assertEqual(r.cost, {"source": "none", "user_usec": 0, "system_usec": 0,
                                  "peak_bytes": 0})
        self.assertTrue(r.wait(5000))
        r = s.run(BUSY)
        self.assertEqual(r.exit_code, 0, r.stderr)
        cost = r.cost
        self.assertEqual(cost["source"], "rusage")
        cpu = cost["user_usec"] + cost["system_usec"]
        self.assertTrue(150000 <= cpu <= 1000000, cost)
        self.assertGreater(cost["peak_bytes"], 0)
        # the copy kept by a finished Run does not change with what it hands out
        cost["user_usec"] = -1
        self.assertEqual(r.cost["user_usec"] + r.cost["system_usec"], cpu)

    def test_cost_cgroup(self):
        s = self.contained()
        r = s.run(BUSY)
        self.assertEqual(r.exit_code, 0, r.stderr)
        cost = r.cost
        self.assertEqual(cost["source"], "cgroup")
        self.assertTrue(150000 <= cost["user_usec"] + cost["system_usec"] <= 1000000, cost)
        t = s.start_task(BUSY)
        self.addCleanup(t.free)
        self.assertTrue(t.wait(10000))
        self.assertEqual(t.cost["source"], "cgroup")
        self.assertTrue(150000 <= t.cost["user_usec"] + t.cost["system_usec"] <= 1000000,
                        t.cost)


# A fork bomb: every b starts two more in the background, without end; the
# shell goes on to print once it could still fork a sleep.
FORK_BOMB = "b() { b | b & }; b; sleep 1; echo survived"
# Memory taken 1 MiB at a time until the kernel says no, then the status.
MEMORY_HOG = ("/usr/bin/python3 -c 'a = []\nwhile True: a.append(bytearray(1 << 20))'; "
              "echo \"exit $?\"")


class TestLimits(Base):
    def limited(self, **limits):
        """A session holding its commands in cgroups with these limits set,
        or the test skipped with the reason the library gives."""
        s = self.session()
        s.set_containment("auto")
        kind, detail = s.containment
        if kind != "cgroup":
            self.skipTest("no cgroup containment here: %s" % detail)
        for name, value in limits.items():
            try:
                s.set_limit(name, value)
            except shexec.SysError as e:
                self.skipTest(e.message)   # the controller is not available here
        return s

    def test_need_containment_and_known_names(self):
        s = self.session()
        s.set_containment("off")
        self.assertEqual(s.limit("pids"), 0)
        with self.assertRaises(shexec.StateError) as ctx:
            s.set_limit("pids", 10)
        self.assertEqual(ctx.exception.code, shexec.ESTATE)
        self.assertIn("containment", ctx.exception.message)
        self.assertEqual(s.limit("pids"), 0)       # refused: nothing was set
        s.set_limit("pids", 0)                     # none needs no cgroup
        for bad in ("fork", "PIDS", None, 2):
            with self.assertRaises(shexec.InvalidArgumentError) as ctx:
                s.set_limit(bad, 10)
            self.assertEqual(ctx.exception.code, shexec.EINVAL)
            with self.assertRaises(shexec.InvalidArgumentError):
                s.limit(bad)
        with self.assertRaises(shexec.InvalidArgumentError):
            s.set_limit("pids", -1)
        with self.assertRaises(TypeError):
            s.set_limit("pids", "40")
        # a run's limits are checked by name at once, and by the library at the start
        with self.assertRaises(shexec.InvalidArgumentError):
            s.run("echo never", limits={"fork": 10})
        with self.assertRaises(TypeError):
            s.run("echo never", limits=40)
        with self.assertRaises(shexec.StateError):
            s.run("echo never", limits={"pids": 40})
        r = s.run("echo hi", limits={"pids": 0})
        self.assertEqual(r.stdout, b"hi\n")
        self.assertEqual(r.limits_hit, [])

    def test_fork_bomb_meets_the_process_limit(self):
        s = self.limited(pids=40)
        self.assertEqual(s.limit("pids"), 40)
        self.assertEqual(s.limit("memory"), 0)
        s.set_on_leftovers("kill")    # the bomb's pieces go with it
        r = s.run(FORK_BOMB, timeout_ms=3000)
        self.assertIn("pids", r.limits_hit)
        self.assertIn("the process limit (40) was reached", r.notice)
        # the limit bounded that command only: the next one runs as usual
        r = s.run("echo alive")
        self.assertEqual(r.stdout, b"alive\n")
        self.assertEqual(r.limits_hit, [])
        self.assertEqual(r.notice, "")

    def test_memory_limit_kills_the_hog(self):
        s = self.limited(memory=64 * 1024 * 1024)
        self.assertEqual(s.limit("memory"), 64 << 20)
        r = s.run(MEMORY_HOG, timeout_ms=20000)
        self.assertEqual(r.stdout, b"exit 137\n", r.stderr)
        self.assertIn("memory", r.limits_hit)
        self.assertIn("killed: out of memory (limit 64 MiB)", r.notice)
        hit = r.limits_hit
        hit.append("cpu")          # a copy: the run's stays as it was
        self.assertNotIn("cpu", r.limits_hit)

    def test_run_and_task_limits_in_place_of_the_session(self):
        s = self.limited(pids=40)
        s.set_on_leftovers("kill")
        r = s.run(FORK_BOMB, timeout_ms=3000, limits={"pids": 30})
        self.assertIn("pids", r.limits_hit)
        self.assertIn("the process limit (30) was reached", r.notice)
        self.assertEqual(s.limit("pids"), 40)      # the session's is untouched
        t = s.start_task(FORK_BOMB, timeout_ms=3000, limits=[("pids", 25)])
        self.addCleanup(t.free)
        self.assertEqual(t.limits_hit, [])       # not before the end
        self.assertTrue(t.wait(10000))
        self.assertIn("pids", t.limits_hit)
        self.assertEqual(t.run.limits_hit, t.limits_hit)
        self.assertIn("the process limit (25) was reached", t.run.notice)
        # a run's 0 lifts the session's limit for that run
        r = s.run("echo free", limits={"pids": 0})
        self.assertEqual(r.stdout, b"free\n")
        self.assertEqual(r.limits_hit, [])


def sees_input_waits():
    """The library can tell a command waits for input: /proc/PID/syscall."""
    try:
        with open("/proc/self/syscall") as f:
            f.read()
        return True
    except OSError:
        return False


class TestLongRunning(Base):
    """Commands that outlive their call: yield, background on timeout, the
    idle timeout, waiting for input, the agent environment preset."""

    def session(self, **kw):
        s = super().session(**kw)
        s.set_input_look_ms(300)   # the commands below wait a second or two
        return s

    def need_input_waits(self):
        if not sees_input_waits():
            self.skipTest("/proc/PID/syscall is not readable here")

    def test_yield_returns_running_then_task_finishes(self):
        s = self.session()
        t0 = time.monotonic()
        r = s.run("echo a; sleep 2; echo b; exit 3", yield_ms=300)
        self.assertLess(time.monotonic() - t0, 1.5)
        # back with the command still running, the output so far kept
        self.assertEqual(r.state, "running")
        self.assertFalse(r.done)
        self.assertEqual(r.stdout, b"a\n")
        self.assertEqual(r.yielded, shexec.YIELD_TIME)
        self.assertRegex(r.task_id, r"^t[0-9a-f]{12}$")
        self.assertIn(r.task_id, r.notice)
        self.assertIn("yielded=time", repr(r))
        # the command goes on as a task: take it, wait, read what is new
        t = s.take_task(r.task_id)
        self.assertEqual(t.id, r.task_id)
        self.assertEqual(t.run.yielded, shexec.YIELD_TIME)
        self.assertTrue(t.wait(10000))
        self.assertEqual((t.state, t.exit_code), ("exited", 3))
        self.assertEqual(t.read(), b"b\n")
        self.assertEqual(t.output(), b"a\nb\n")
        # the Run handle sees the same end
        self.assertTrue(r.wait(5000))
        self.assertEqual((r.state, r.exit_code, r.stdout), ("exited", 3, b"a\nb\n"))
        self.assertEqual(r.yielded, shexec.YIELD_TIME)
        self.assertEqual(r.deadline, shexec.DEADLINE_NONE)
        t.free()
        self.assertRegex(r.task_id, r"^t[0-9a-f]{12}$")   # kept after the task went

    def test_quick_command_does_not_yield(self):
        s = self.session()
        r = s.run("cd /tmp && echo ok", yield_ms=10000)
        self.assertEqual((r.state, r.stdout), ("exited", b"ok\n"))
        self.assertEqual(r.yielded, shexec.YIELD_NONE)
        self.assertIsNone(r.task_id)
        self.assertEqual(s.cwd, "/tmp")

    def test_yielded_run_answers_through_the_run_and_keeps_its_callback(self):
        s = self.session()
        chunks = []
        r = s.run("echo a; read x; echo got:$x", stdin=True, yield_ms=200,
                  on_output=lambda st, d: chunks.append(d))
        self.assertEqual(r.state, "running")
        self.assertIn(r.yielded, (shexec.YIELD_TIME, shexec.YIELD_INPUT))
        r.write(b"hi\n")
        self.assertTrue(r.wait(5000))
        self.assertEqual(r.stdout, b"a\ngot:hi\n")
        self.assertEqual(b"".join(chunks), b"a\ngot:hi\n")   # called after the yield too

    def test_started_run_yields_in_the_loop(self):
        s = self.session()
        r = s.start_run("echo a; sleep 1; echo b", yield_ms=200)
        self.assertTrue(self.pump_until(s, lambda: r.yielded != shexec.YIELD_NONE))
        self.assertEqual((r.yielded, r.state), (shexec.YIELD_TIME, "running"))
        self.assertTrue(r.wait(5000))
        self.assertEqual(r.stdout, b"a\nb\n")

    def test_dropped_or_closed_yielded_run_goes_on_as_its_task(self):
        s = self.session()
        chunks = []
        r = s.run("sleep 0.5; echo done", yield_ms=100,
                  on_output=lambda st, d: chunks.append(d))
        tid = r.task_id
        del r
        gc.collect()
        t = s.take_task(tid)
        self.assertTrue(t.wait(5000))
        self.assertEqual((t.state, t.output()), ("exited", b"done\n"))
        self.assertEqual(chunks, [])   # its callback went with the Run
        t.free()
        r = s.run("sleep 0.3; echo x", yield_ms=100)
        r.close()                      # lets go of the handle only
        t = s.take_task(r.task_id)
        self.assertTrue(t.wait(5000))
        self.assertEqual((t.state, t.output()), ("exited", b"x\n"))

    def test_yielded_run_ends_with_its_session(self):
        s = Session()
        self.addCleanup(s.close)
        s.set_kill_grace_ms(200)
        r = s.run("echo $$; sleep 30", yield_ms=300)
        self.assertEqual(r.state, "running")
        pid = int(r.stdout)
        s.close()
        self.assertTrue(gone(pid))
        self.assertTrue(r.done)
        self.assertIn(r.state, ("killed", "cancelled"))
        self.assertEqual(r.stdout, b"%d\n" % pid)
        del s
        gc.collect()

    def test_signal_interrupts_a_run_with_a_yield_time(self):
        # waiting for the yield, the run is still pumped in slices: a Python
        # signal handler that raises stops it promptly, nothing left running
        import signal

        def handler(signum, frame):
            raise Boom("interrupted")

        old = signal.signal(signal.SIGALRM, handler)
        try:
            s = self.session()
            t0 = time.monotonic()
            signal.setitimer(signal.ITIMER_REAL, 0.3)
            with self.assertRaises(Boom):
                s.run("sleep 30", yield_ms=20000)
            self.assertLess(time.monotonic() - t0, 3)
            self.assertEqual(children(), [])
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)

    def test_yield_without_room_runs_to_the_end(self):
        s = self.session()
        s.set_max_tasks(1)
        other = s.start_task("sleep 30")
        r = s.run("sleep 0.5; echo end", yield_ms=100)
        self.assertEqual((r.state, r.stdout), ("exited", b"end\n"))
        self.assertEqual(r.yielded, shexec.YIELD_NONE)
        self.assertIn("not moved to the background", r.notice)
        other.free()

    def test_idle_timeout_ends_silent_command(self):
        s = self.session()
        t0 = time.monotonic()
        r = s.run("echo a; sleep 30", idle_timeout_ms=500)
        self.assertLess(time.monotonic() - t0, 10)
        self.assertEqual((r.state, r.stdout), ("timed_out", b"a\n"))
        self.assertEqual(r.deadline, shexec.DEADLINE_IDLE)
        self.assertEqual(r.yielded, shexec.YIELD_NONE)
        r = s.run("sleep 30", timeout_ms=300)
        self.assertEqual((r.state, r.deadline), ("timed_out", shexec.DEADLINE_TIMEOUT))
        self.assertEqual(s.run("true").deadline, shexec.DEADLINE_NONE)

    def test_idle_timeout_yields(self):
        s = self.session()
        r = s.run("echo a; sleep 1; echo b", idle_timeout_ms=300, idle_action=shexec.IDLE_YIELD)
        self.assertEqual((r.state, r.yielded), ("running", shexec.YIELD_IDLE))
        self.assertTrue(r.wait(5000))     # in the background it runs on
        self.assertEqual((r.state, r.stdout), ("exited", b"a\nb\n"))

    def test_session_idle_timeout(self):
        s = self.session()
        self.assertEqual(s.idle_timeout_ms, (0, shexec.IDLE_END))
        s.set_idle_timeout_ms(500)
        self.assertEqual(s.idle_timeout_ms, (500, shexec.IDLE_END))
        r = s.run("echo a; sleep 30")
        self.assertEqual((r.state, r.deadline), ("timed_out", shexec.DEADLINE_IDLE))
        # a run's own, 0 included, in place of the session's
        r = s.run("sleep 1; echo quiet", idle_timeout_ms=0)
        self.assertEqual((r.state, r.stdout), ("exited", b"quiet\n"))
        # steady output is not idle
        r = s.run("for i in 1 2 3 4 5 6 7 8 9 10; do echo x; sleep 0.1; done")
        self.assertEqual((r.state, r.deadline), ("exited", shexec.DEADLINE_NONE))
        # a task is ended too
        t = s.start_task("sleep 30")
        self.assertTrue(t.wait(10000))
        self.assertEqual((t.state, t.deadline), ("timed_out", shexec.DEADLINE_IDLE))
        s.set_idle_timeout_ms(300, shexec.IDLE_YIELD)
        self.assertEqual(s.idle_timeout_ms, (300, shexec.IDLE_YIELD))
        r = s.run("sleep 0.8; echo late")
        self.assertEqual(r.yielded, shexec.YIELD_IDLE)
        self.assertTrue(r.wait(5000))
        self.assertEqual(r.stdout, b"late\n")
        t.free()

    def test_background_on_timeout(self):
        s = self.session()
        r = s.run("sleep 0.8; echo done", timeout_ms=200, background_on_timeout=20000)
        self.assertEqual((r.state, r.yielded), ("running", shexec.YIELD_TIMEOUT))
        self.assertIn("its timeout passed", r.notice)
        self.assertTrue(r.wait(5000))
        self.assertEqual((r.state, r.stdout), ("exited", b"done\n"))
        # the cap ends it in the background
        r = s.run("sleep 30", timeout_ms=200, background_on_timeout=900)
        self.assertEqual(r.yielded, shexec.YIELD_TIMEOUT)
        self.assertTrue(r.wait(10000))
        self.assertEqual((r.state, r.deadline), ("timed_out", shexec.DEADLINE_TIMEOUT))
        # the session's, and a run's 0 in its place
        self.assertEqual(s.background_on_timeout, 0)
        s.set_background_on_timeout(5000)
        self.assertEqual(s.background_on_timeout, 5000)
        r = s.run("sleep 30", timeout_ms=200)
        self.assertEqual(r.yielded, shexec.YIELD_TIMEOUT)
        r.cancel()                     # the task is killed through the run
        self.assertTrue(r.wait(5000))
        self.assertEqual(r.state, "killed")
        r = s.run("sleep 30", timeout_ms=200, background_on_timeout=0)
        self.assertEqual((r.state, r.yielded), ("timed_out", shexec.YIELD_NONE))

    def test_input_wait_yields_with_the_prompt(self):
        self.need_input_waits()
        s = self.session()
        self.assertEqual(s.input_look_ms, 300)
        seen = []
        r = s.run("read -p 'Name: ' n; echo hi $n", pty=True, yield_ms=10000,
                  on_input=lambda run: seen.append((run, run.input_wait, run.prompt)))
        self.assertEqual((r.state, r.yielded), ("running", shexec.YIELD_INPUT))
        self.assertEqual(r.input_wait, shexec.INPUT_WAITING)
        self.assertEqual(r.prompt, b"Name: ")
        self.assertEqual(r.prompt_text, "Name: ")
        self.assertIs(r.echo_off, False)
        self.assertEqual(seen, [(r, shexec.INPUT_WAITING, b"Name: ")])
        # answered through the task it goes on as
        t = s.take_task(r.task_id)
        self.assertEqual((t.input_wait, t.prompt_text), (shexec.INPUT_WAITING, "Name: "))
        t.write("Ada\n")
        self.assertTrue(t.wait(10000))
        self.assertEqual(t.exit_code, 0)
        self.assertIn(b"hi Ada", t.read())
        self.assertEqual((t.input_wait, t.prompt), (shexec.INPUT_NO, None))
        self.assertTrue(r.done)
        self.assertIn(b"hi Ada", r.stdout)
        t.free()

    def test_on_input_answers_from_the_callback(self):
        self.need_input_waits()
        s = self.session()
        calls = []

        def answer(run):
            calls.append(run.input_wait)
            run.write(b"42\n")

        r = s.run("read n; echo got $n", stdin=True, on_input=answer, timeout_ms=10000)
        self.assertEqual((r.state, r.stdout), ("exited", b"got 42\n"))
        self.assertEqual(calls, [shexec.INPUT_WAITING])
        self.assertEqual(r.yielded, shexec.YIELD_NONE)   # no yield time: to its end

    def test_on_input_exception_cancels(self):
        self.need_input_waits()
        s = self.session()

        def boom(run):
            raise Boom("from on_input")

        t0 = time.monotonic()
        with self.assertRaises(Boom):
            s.run("read n", stdin=True, on_input=boom, timeout_ms=20000)
        self.assertLess(time.monotonic() - t0, 10)
        self.assertEqual(children(), [])
        self.assertEqual(s.run("echo ok").stdout, b"ok\n")

    def test_task_waits_for_input(self):
        self.need_input_waits()
        s = self.session()
        t = s.start_task("read -p 'Sure? ' x; echo answer:$x", pty=True)
        self.assertTrue(self.pump_until(s, lambda: t.input_wait == shexec.INPUT_WAITING, 10))
        self.assertEqual((t.prompt, t.echo_off), (b"Sure? ", False))
        self.assertEqual(t.run.prompt_text, "Sure? ")
        t.write("yes\n")
        self.assertTrue(t.wait(5000))
        self.assertIn(b"answer:yes", t.output())
        # a task's on_input gets its Run
        got = []
        t2 = s.start_task("read x; echo $x", stdin=True,
                          on_input=lambda run: (got.append(run), run.write(b"ok\n")))
        self.assertTrue(t2.wait(10000))
        self.assertEqual(t2.output(), b"ok\n")
        self.assertEqual(got, [t2.run])
        t.free()
        t2.free()

    def test_watch_a_task_until_quiet_ended_or_asking(self):
        s = self.session()
        t = s.start_task("echo a; sleep 0.4; echo b; sleep 30")
        t0 = time.monotonic()
        self.assertEqual(t.watch(quiet_ms=800, max_ms=20000), shexec.WATCH_QUIET)
        took = time.monotonic() - t0
        # b came at ~0.4 s: quiet 0.8 s after it, not 0.8 s after the call
        self.assertTrue(1.1 <= took < 8, took)
        self.assertEqual(t.read(), b"a\nb\n")
        self.assertGreaterEqual(t.quiet_ms, 800)
        # silent before the call: quiet_ms more, not at once
        t0 = time.monotonic()
        self.assertEqual(t.watch(quiet_ms=500, max_ms=20000), shexec.WATCH_QUIET)
        self.assertGreaterEqual(time.monotonic() - t0, 0.45)
        t.free()
        # output that keeps coming: max_ms first
        t = s.start_task("while :; do echo x; sleep 0.1; done")
        t0 = time.monotonic()
        self.assertEqual(t.watch(quiet_ms=600, max_ms=1000), shexec.WATCH_TIME)
        self.assertTrue(0.95 <= time.monotonic() - t0 < 8)
        self.assertEqual(t.watch(max_ms=0), shexec.WATCH_TIME)   # one round
        t.free()
        t = s.start_task("sleep 0.3; exit 4")
        self.assertEqual(t.watch(quiet_ms=5000, max_ms=20000), shexec.WATCH_ENDED)
        self.assertEqual(t.exit_code, 4)
        t.free()
        with self.assertRaises(shexec.InvalidArgumentError):
            t2 = s.start_task("true")
            try:
                t2.watch(quiet_ms=-1)
            finally:
                t2.free()
        if sees_input_waits():
            t = s.start_task("read x; echo got $x", stdin=True)
            self.assertEqual(t.watch(max_ms=20000), shexec.WATCH_INPUT)
            t.write("y\n")
            self.assertEqual(t.watch(max_ms=20000), shexec.WATCH_ENDED)
            self.assertEqual(t.read(), b"got y\n")
            t.free()

    def test_yielded_run_reads_what_is_new_without_its_task(self):
        s = self.session()
        r = s.run("echo a; sleep 0.6; echo b; sleep 0.6; echo c", yield_ms=300)
        self.assertEqual(r.yielded, shexec.YIELD_TIME)
        self.assertEqual(r.stdout, b"a\n")
        self.assertTrue(self.pump_until(s, lambda: r.stdout_total >= 4, 10))
        self.assertEqual(r.read_new(), b"b\n")
        self.assertEqual(r.read_new(), b"")
        self.assertTrue(r.wait(10000))
        # ended and its results taken: what was new then, once
        self.assertEqual(r.read_new(), b"c\n")
        self.assertEqual(r.read_new(), b"")
        self.assertEqual(r.read_new("stderr"), b"")
        self.assertEqual(s.run("echo z").read_new(), b"")   # never moved

    def test_character_split_between_reads_comes_whole(self):
        s = self.session()
        t = s.start_task("printf 'A\\303'; sleep 0.6; printf '\\251B\\n'")
        self.assertTrue(self.pump_until(s, lambda: t.output_total() >= 2, 10))
        self.assertEqual(t.read(), b"A")
        self.assertEqual(t.read_counts(), {"kept_chars": 1, "kept_bytes": 1,
                                           "total_chars": 1, "total_bytes": 1})
        self.assertTrue(t.wait(10000))
        self.assertEqual(t.read(), "éB\n".encode())
        self.assertEqual(t.read_counts()["total_bytes"], 4)
        t.free()

    def test_agent_env_preset(self):
        s = self.session()
        s.unsetenv("LANG")
        s.unsetenv("LC_ALL")
        s.apply_agent_env()
        names = "PAGER GIT_PAGER MANPAGER GIT_TERMINAL_PROMPT EDITOR DEBIAN_FRONTEND " \
                "PIP_NO_INPUT LANG NO_COLOR TERM"
        cmd = 'for v in %s; do eval "echo $v=\\${$v-unset}"; done' % names
        self.assertEqual(s.run(cmd).text,
                         "PAGER=cat\nGIT_PAGER=cat\nMANPAGER=cat\nGIT_TERMINAL_PROMPT=0\n"
                         "EDITOR=false\nDEBIAN_FRONTEND=noninteractive\nPIP_NO_INPUT=1\n"
                         "LANG=C.UTF-8\nNO_COLOR=1\nTERM=dumb\n")
        self.assertEqual(s.getenv("PAGER"), "cat")
        self.assertNotEqual(s.getenv("TERM"), "dumb")   # given to pipe runs, not set
        # a pty run keeps its terminal's type; a run's own variable wins
        out = s.run("echo ${NO_COLOR-unset} $TERM", pty=True).text
        self.assertTrue(out.startswith("unset "), out)
        self.assertNotIn("dumb", out)
        self.assertEqual(s.run("echo $TERM", env={"TERM": "mine"}).text, "mine\n")
        # the constructor's: the session's env overrides it
        s2 = self.session(agent_env=True, env={"PAGER": "less"})
        self.assertEqual(s2.run("echo $PAGER $GIT_PAGER $TERM").text, "less cat dumb\n")

    def test_settings_and_bad_values(self):
        s = self.session()
        fresh = Session()
        self.addCleanup(fresh.close)
        self.assertEqual(fresh.idle_timeout_ms, (0, shexec.IDLE_END))
        self.assertEqual(fresh.background_on_timeout, 0)
        self.assertEqual(fresh.input_look_ms, shexec.DEFAULT_INPUT_LOOK_MS)
        s.set_input_look_ms(0)
        self.assertEqual(s.input_look_ms, 0)
        s.set_idle_timeout_ms(700, shexec.IDLE_YIELD)
        # refused by the library, with its message; nothing changes
        with self.assertRaises(shexec.InvalidArgumentError) as ctx:
            s.set_idle_timeout_ms(10, 7)
        self.assertEqual(ctx.exception.code, shexec.EINVAL)
        self.assertIn("7", ctx.exception.message)
        self.assertEqual(s.idle_timeout_ms, (700, shexec.IDLE_YIELD))
        with self.assertRaises(shexec.InvalidArgumentError):
            s.set_idle_timeout_ms(10, "sometimes")
        with self.assertRaises(shexec.InvalidArgumentError) as ctx:
            s.run("true", idle_timeout_ms=10, idle_action=2)
        self.assertEqual(ctx.exception.name, "SHEXEC_EINVAL")
        for bad in (lambda: s.set_input_look_ms(-1),
                    lambda: s.set_background_on_timeout(1 << 32),
                    lambda: s.set_idle_timeout_ms(-5),
                    lambda: s.run("true", yield_ms=-1),
                    lambda: s.start_task("true", idle_timeout_ms=1 << 40)):
            with self.assertRaises(shexec.InvalidArgumentError):
                bad()
        with self.assertRaises(TypeError):
            s.run("true", idle_action=shexec.IDLE_YIELD)   # needs idle_timeout_ms
        with self.assertRaises(TypeError):
            s.set_input_look_ms("1000")
        self.assertEqual(children(), [])
        fresh.close()
        for op in (lambda: fresh.idle_timeout_ms, lambda: fresh.set_input_look_ms(1),
                   fresh.apply_agent_env, lambda: fresh.set_background_on_timeout(1)):
            with self.assertRaises(shexec.ClosedError):
                op()


HTTP_SERVER = "/usr/bin/python3 -u -m http.server 0 --bind 127.0.0.1"
READY_SLEEP = "sh -c 'echo ready; exec sleep 60'"


def serving(task, timeout=60.0):
    """Wait until the http.server task serves: its "Serving" line, then a
    request answered (only inside serve_forever() does a SIGINT take its
    KeyboardInterrupt path; the line is printed just before it)."""
    import urllib.request
    end = time.monotonic() + timeout
    while b"Serving HTTP on" not in task.output():
        if time.monotonic() > end or task.done:
            raise AssertionError("not serving: %r %r" % (task.output(), task.output("stderr")))
        task.wait(50)
    port = int(re.search(rb" port (\d+)", task.output()).group(1))
    with urllib.request.urlopen("http://127.0.0.1:%d/" % port, timeout=timeout) as reply:
        reply.read()
        return reply.status


@unittest.skipUnless(os.access("/usr/bin/python3", os.X_OK), "needs /usr/bin/python3")
class TestSignals(Base):
    """Signals sent to a command: Ctrl+C to a pipe-mode task (send_signal,
    or ^C typed), a task that dies of it, and what is refused."""

    def test_interrupt_http_server(self):
        s = self.session()
        s.enable_tool("task_kill")
        s.enable_tool("task_output")
        for how in ("send_signal", "type_input", "tool"):
            t = s.start_task(HTTP_SERVER)
            self.assertEqual(serving(t), 200)
            self.assertFalse(t.interrupted)
            if how == "send_signal":
                t.send_signal("SIGINT")
            elif how == "type_input":
                t.type_input("\x03")         # no stdin=True: a ^C needs none
            else:
                # the tool reads the task: to its end, its id is spent
                r = s.call_tool("task_kill", {"task_id": t.id, "signal": "SIGINT"})
                out = r["stdout"]
                while r["status"] == "running":
                    r = s.call_tool("task_output", {"task_id": t.id, "new_only": True,
                                                    "yield_time_ms": 20000})
                    out += r["stdout"]
                self.assertIn("Keyboard interrupt received, exiting.", out)
                self.assertEqual((r["state"], r["exit_code"], r["interrupted"]),
                                 ("exited", 0, True))
                self.assertNotIn("signal", r)
                continue
            self.assertTrue(t.wait(60000))
            self.assertIn(b"Keyboard interrupt received, exiting.", t.output(), how)
            self.assertEqual((t.state, t.exit_code, t.signal), ("exited", 0, 0), how)
            self.assertTrue(t.interrupted, how)
            self.assertTrue(t.run.interrupted, how)
            with self.assertRaises(shexec.StateError) as ctx:   # over: nothing is sent
                t.send_signal("SIGINT")
            self.assertEqual(ctx.exception.code, shexec.ESTATE)
            self.assertIn("finished", ctx.exception.message)
            t.free()

    def test_task_ended_by_ctrl_c_says_signal_2(self):
        s = self.session()
        s.enable_tool("bash")
        s.enable_tool("task_output")
        s.enable_tool("task_write")
        s.enable_tool("task_kill")
        # "ready" from the process the ^C is for: forked already (a child
        # bash forks as a signal comes starts without it, and bash waits)
        r = s.call_tool("bash", {"command": READY_SLEEP, "run_in_background": True})
        tid = r["task_id"]
        out = ""
        while "ready" not in out:
            out += s.call_tool("task_output", {"task_id": tid, "new_only": True,
                                                "yield_time_ms": 200})["stdout"]
        r = s.call_tool("task_write", {"task_id": tid, "input": "\x03"})
        while r["status"] == "running":
            r = s.call_tool("task_output", {"task_id": tid, "yield_time_ms": 20000})
        self.assertEqual((r["status"], r["state"], r["exit_code"], r["signal"], r["interrupted"]),
                         ("completed", "signaled", -1, 2, True))
        # the same through the binding: a foreground run dies of it too
        run = s.start_run(READY_SLEEP)
        self.assertTrue(self.pump_until(s, lambda: b"ready" in run.stdout, 30))
        run.send_signal(2)
        self.assertTrue(run.wait(30000))
        self.assertEqual((run.state, run.signal, run.exit_code, run.interrupted),
                         ("signaled", 2, -1, True))

    def test_bad_signals_refused(self):
        s = self.session()
        t = s.start_task("sleep 60")
        for bad in ("SIGSEGV", "", "TSTP", 11, 0, 999, -2):
            with self.assertRaises(shexec.InvalidArgumentError, msg=repr(bad)) as ctx:
                t.send_signal(bad)
            self.assertEqual(ctx.exception.code, shexec.EINVAL)
        for bad in (None, 2.0, True, b"SIGINT"):
            with self.assertRaises(shexec.InvalidArgumentError, msg=repr(bad)):
                t.send_signal(bad)
        self.assertEqual(shexec.signal_number("int"), 2)
        self.assertEqual(shexec.signal_number("SIGTERM"), 15)
        self.assertFalse(t.done)
        self.assertFalse(t.interrupted)
        t.free()
        t = s.start_task("trap 'echo usr1; exit 7' USR1; echo ready; "
                         "while :; do sleep 0.1; done")
        self.assertTrue(self.pump_until(s, lambda: b"ready" in t.output(), 30))
        t.send_signal("usr1")                 # its trap
        self.assertTrue(t.wait(30000))
        self.assertEqual((t.state, t.exit_code, t.interrupted), ("exited", 7, False))
        self.assertEqual(t.output(), b"ready\nusr1\n")
        with self.assertRaises(shexec.StateError):
            t.send_signal("SIGINT")
        t.free()
        run = s.start_run("true")
        run.wait(30000)
        with self.assertRaises(shexec.StateError):
            run.send_signal("SIGINT")


class TestResources(Base):
    def test_no_fd_leak(self):
        before = open_fds()
        for _ in range(3):
            with Session() as s:
                s.set_kill_grace_ms(100)
                s.run("echo x")
                s.run("tty", pty=True)
                s.run("cat", stdin=b"data")
                t = s.start_task("cat", stdin=True)
                t.write(b"hello")
                s.start_task("sleep 30", pty=True)
                r = s.start_run("sleep 30")
                s.run("(sleep 30) & echo bg")
        del s, t, r
        gc.collect()
        self.assertEqual(open_fds(), before)
        self.assertEqual(children(), [])


if __name__ == "__main__":
    unittest.main()
