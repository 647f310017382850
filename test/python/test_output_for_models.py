"""Tests of the binding's output for models (shexec.h, OUTPUT FOR MODELS):
the truncation notice and its position, spill files, redaction.

Run with the rest: sh test/python/run.sh (or unittest discover -s test/python).
"""
import errno
import os
import shutil
import stat
import tempfile
import unittest

from test_shexec import Base, shexec  # the leak checks and the loaded binding


def xs(n, ch="x"):
    """A command printing n copies of one ASCII character, no newline."""
    return "head -c %d /dev/zero | tr '\\0' %s" % (n, ch)


# A key shape: "ghp_" and 36 letters or digits, as GitHub's tokens are.
GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
PEM = ("-----BEGIN OPENSSH PRIVATE KEY-----\n"
       "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"
       "-----END OPENSSH PRIVATE KEY-----\n")


class TempDir(object):
    """A directory for spill files, removed at the end of the test."""

    def temp_dir(self):
        d = tempfile.mkdtemp(prefix="shexec-spill-test-")
        self.addCleanup(shutil.rmtree, d, True)
        return d


class TestNotice(Base):
    def test_head_notice_counts_characters_and_bytes(self):
        s = self.session()
        s.set_output_limit(30000)
        r = s.run(xs(50000))
        self.assertEqual(r.stdout, b"x" * 30000 + b"\n[output truncated: kept the first 30000 "
                         b"characters (30000 bytes) of 50000 (50000 bytes, 1 lines); 20000 characters "
                         b"(20000 bytes) omitted]\n")
        self.assertEqual(r.stdout_total, 50000)
        # two-byte characters: the units and the bytes part
        r = s.run("for i in $(seq 100); do printf '\\303\\251'; done", output_limit=10)
        self.assertEqual(r.stdout, "\u00e9".encode() * 10 + b"\n[output truncated: kept the "
                         b"first 10 characters (20 bytes) of 100 (200 bytes, 1 lines); 90 characters "
                         b"(180 bytes) omitted]\n")

    def test_head_tail_notice_and_marker(self):
        s = self.session()
        r = s.run("printf 'ab'; " + xs(96) + "; printf 'yz'",
                  output_limit=(4, "chars", "head_tail"))
        self.assertEqual(r.stdout, b"ab\n[... 96 characters (96 bytes) omitted ...]\nyz\n"
                         b"[output truncated: kept the first 2 and the last 2 characters "
                         b"(2 + 2 bytes) of 100 (100 bytes, 1 lines); 96 characters (96 bytes) omitted "
                         b"in the middle]\n")

    def test_notice_first(self):
        s = self.session()
        self.assertEqual(s.notice_position, shexec.NOTICE_LAST)
        s.set_notice_position(shexec.NOTICE_FIRST)
        self.assertEqual(s.notice_position, "first")
        r = s.run(xs(100), output_limit=(10, "bytes", "head"))
        self.assertEqual(r.stdout, b"[output truncated: kept the first 10 characters (10 bytes) "
                         b"of 100 (100 bytes, 1 lines); 90 characters (90 bytes) omitted]\n" + b"x" * 10)
        self.assertTrue(r.stdout_truncated)
        # output within the limit carries no notice wherever it would go
        self.assertEqual(s.run("echo short").stdout, b"short\n")
        s.set_notice_position("last")
        self.assertTrue(s.run(xs(100), output_limit=10).stdout.startswith(b"x" * 10 + b"\n["))
        with self.assertRaises(shexec.InvalidArgumentError):
            s.set_notice_position("middle")
        self.assertEqual(s.notice_position, "last")


def counts(kept_chars, kept_bytes, total_chars, total_bytes, total_lines=None):
    """The counts of a stream: by default of one line, or none when empty."""
    if total_lines is None:
        total_lines = 1 if total_bytes else 0
    return {"kept_chars": kept_chars, "kept_bytes": kept_bytes,
            "total_chars": total_chars, "total_bytes": total_bytes,
            "total_lines": total_lines}


class TestCounts(Base):
    def test_what_the_limit_kept_and_what_came(self):
        s = self.session()
        s.set_output_limit(30000)
        r = s.run(xs(50000) + "; echo oops >&2")
        self.assertEqual(r.stdout_counts, counts(30000, 30000, 50000, 50000))
        # a stream within its limit kept all of it
        self.assertEqual(r.stderr_counts, counts(5, 5, 5, 5))
        # the result is a copy
        r.stdout_counts["kept_chars"] = 0
        self.assertEqual(r.stdout_counts["kept_chars"], 30000)
        # the tool layer says what it left out
        s.enable_tool("bash")
        res = s.call_tool("bash", {"command": xs(30500)})
        self.assertEqual(res["omitted"], {"stdout": {"characters": 500, "bytes": 500}})

    def test_characters_of_two_bytes(self):
        s = self.session()
        r = s.run("cat", stdin="\u00e9".encode() * 40000, output_limit=(30000, "chars", "head"))
        self.assertTrue(r.stdout_truncated)
        self.assertEqual(r.stdout_counts, counts(30000, 60000, 40000, 80000))
        self.assertEqual(r.stdout_total, 80000)
        # an invalid byte counts as one character
        r = s.run("printf 'a\\377b'")
        self.assertEqual(r.stdout_counts, counts(3, 3, 3, 3))

    def test_head_and_tail_both_count(self):
        s = self.session()
        r = s.run("printf 'ab'; " + xs(96) + "; printf 'yz'",
                  output_limit=(4, "chars", "head_tail"))
        self.assertEqual(r.stdout_counts, counts(4, 4, 100, 100))

    def test_live_while_running_and_for_a_task(self):
        s = self.session()
        r = s.start_run(xs(4000) + "; sleep 30", output_limit=1000)
        self.assertTrue(self.pump_until(s, lambda: r.stdout_total >= 4000))
        self.assertEqual(r.stdout_counts, counts(1000, 1000, 4000, 4000))
        r.cancel()
        # lines: the newlines, and a last line without one
        r = s.run("seq 1 5; printf 'six'; printf 'e\\n\\n' >&2", output_limit=2)
        self.assertEqual(r.stdout_counts["total_lines"], 6)
        self.assertEqual(r.stderr_counts["total_lines"], 2)
        self.assertIn(b"of 13 (13 bytes, 6 lines)", r.stdout)
        self.assertTrue(r.wait(5000))
        t = s.start_task(xs(3000, "t"), output_limit=100)
        self.addCleanup(t.free)
        self.assertTrue(t.wait(5000))
        self.assertEqual(t.output_counts(), counts(100, 100, 3000, 3000))
        self.assertEqual(t.output_counts("stderr"), counts(0, 0, 0, 0))
        self.assertEqual(t.run.stdout_counts, t.output_counts())

    def test_zeros_before_the_start(self):
        s = self.session()
        s.enable_tool("bash")
        run, _ = s.tool_prepare("bash", {"command": "echo hi"})
        self.addCleanup(run.close)
        self.assertEqual(run.state, "new")
        self.assertEqual(run.stdout_counts, counts(0, 0, 0, 0))
        self.assertEqual(run.stderr_counts, counts(0, 0, 0, 0))
        run.exec()
        self.assertEqual(run.stdout_counts, counts(3, 3, 3, 3))


class TestWithinLimit(Base, TempDir):
    """set_output_limit(..., within_limit=True): the whole text of a cut
    stream, notice (spill path included) and marker, fits the limit."""

    COMMAND = 'for i in $(seq 3000); do echo "$i \u00e9\u20ac\U0001F600"; done'

    def check(self, data, limit, unit):
        text = data.decode("utf-8")             # never a split character
        size = len(data) if unit == "bytes" else len(text)
        self.assertLessEqual(size, limit, text)
        self.assertGreater(size, limit - 10, text)
        self.assertIn("[output truncated: kept the first ", text)
        return text

    def test_a_600_character_budget(self):
        d = self.temp_dir()
        s = self.session()
        s.set_spill_dir(d)
        self.assertFalse(s.output_within_limit)
        for unit in ("chars", "bytes"):
            for keep in ("head", "head_tail"):
                s.set_output_limit(600, unit, keep, within_limit=True)
                self.assertEqual(s.output_limit, (600, unit, keep))
                self.assertTrue(s.output_within_limit)
                r = s.run(self.COMMAND + "; seq 1 9000 >&2")
                out = self.check(r.stdout, 600, unit)
                self.check(r.stderr, 600, unit)
                self.assertIn("full output (", out)
                self.assertTrue(out.startswith("1 \u00e9\u20ac\U0001F600\n"))
                if keep == "head_tail":
                    self.assertIn("\n3000 \u00e9\u20ac\U0001F600\n\n[output truncated", out)
                # the counts are of the text shown
                kept = r.stdout_counts["kept_bytes"]
                self.assertEqual(r.stdout_counts["total_lines"], 3000)
                self.assertIn("(%d bytes) omitted" % (r.stdout_counts["total_bytes"] - kept), out)
        # off again: 600 characters of text, the notice on top
        s.set_output_limit(600)
        self.assertFalse(s.output_within_limit)
        self.assertGreater(len(s.run(self.COMMAND).text), 700)

    def test_per_run(self):
        s = self.session()
        r = s.run(self.COMMAND, output_limit=(600, "bytes", "head_tail", True))
        self.check(r.stdout, 600, "bytes")
        r = s.run(self.COMMAND, output_limit=(600, "chars", "head"))
        self.assertGreater(len(r.text), 700)


class TestSpill(Base, TempDir):
    def test_whole_output_in_the_file_removed_with_the_session(self):
        d = self.temp_dir()
        data = os.urandom(150000).hex().encode()[:200000]     # 200000 ASCII characters
        src = os.path.join(d, "source.txt")
        with open(src, "wb") as f:
            f.write(data)
        s = self.session()
        self.assertIsNone(s.spill_dir)
        s.set_spill_dir(d)
        self.assertEqual(s.spill_dir, d)
        r = s.run("cat source.txt; echo small >&2", cwd=d, output_limit=1000)
        spill = r.stdout_spill
        self.assertEqual(spill["state"], shexec.SPILL_WHOLE)
        self.assertEqual((spill["bytes"], spill["error"]), (200000, 0))
        path = spill["path"]
        self.assertEqual(os.path.dirname(path), d)
        self.assertRegex(os.path.basename(path), r"^shexec-%d-\d+-stdout\.txt$" % os.getpid())
        with open(path, "rb") as f:
            self.assertEqual(f.read(), data)                  # byte for byte
        self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600)
        self.assertEqual(r.stdout, data[:1000] + b"\n[output truncated: kept the first 1000 "
                         b"characters (1000 bytes) of 200000 (200000 bytes, 1 lines); 199000 characters "
                         b"(199000 bytes) omitted; full output (200000 bytes) in "
                         + path.encode() + b"]\n")
        # a stream within its limit leaves no file
        self.assertEqual(r.stderr_spill, {"state": shexec.SPILL_NONE, "path": None, "bytes": 0,
                                          "error": 0})
        self.assertEqual(sorted(os.listdir(d)), sorted(["source.txt", os.path.basename(path)]))
        s.close()
        self.assertFalse(os.path.exists(path))
        self.assertEqual(os.listdir(d), ["source.txt"])
        # the result is a copy: it still tells where the file was
        self.assertEqual(r.stdout_spill["path"], path)

    def test_keep_files(self):
        d = self.temp_dir()
        s = self.session()
        s.set_spill_dir(d, keep_files=True)
        r = s.run(xs(5000), output_limit=100)
        path = r.stdout_spill["path"]
        s.close()
        with open(path, "rb") as f:
            self.assertEqual(f.read(), b"x" * 5000)

    def test_turned_off_removes_the_files(self):
        d = self.temp_dir()
        s = self.session()
        s.set_spill_dir(d)
        path = s.run(xs(5000), output_limit=100).stdout_spill["path"]
        self.assertTrue(os.path.exists(path))
        s.set_spill_dir(None)
        self.assertIsNone(s.spill_dir)
        self.assertFalse(os.path.exists(path))
        r = s.run(xs(5000), output_limit=100)
        self.assertEqual(r.stdout_spill["state"], shexec.SPILL_NONE)
        self.assertNotIn(b"full output", r.stdout)
        self.assertEqual(os.listdir(d), [])

    def test_file_cap_and_budget(self):
        d = self.temp_dir()
        s = self.session()
        s.set_spill_dir(d, file_max=5000, total_max=8000)
        s.set_output_limit(1000)
        r = s.run(xs(20000))
        spill = r.stdout_spill
        self.assertEqual((spill["state"], spill["bytes"]), (shexec.SPILL_CAPPED, 5000))
        with open(spill["path"], "rb") as f:
            self.assertTrue(f.read().startswith(b"x" * 5000 + b"\n"))
        self.assertTrue(r.stdout.endswith(b"; the first 5000 bytes in " + spill["path"].encode()
                                          + b" (15000 more bytes not saved: spill cap)]\n"))
        # a task's run is read live: its file removed to make room shows
        t = s.start_task(xs(4000, "t"))
        self.addCleanup(t.free)
        self.assertTrue(t.wait(5000))
        self.assertEqual(t.spill()["state"], shexec.SPILL_WHOLE)
        self.assertEqual(t.spill("stdout")["bytes"], 4000)
        s.run(xs(5000, "y"))
        self.assertEqual(t.spill()["state"], shexec.SPILL_REMOVED)
        self.assertFalse(os.path.exists(t.spill()["path"]))

    def test_failed_spill_changes_no_result(self):
        d = self.temp_dir()
        gone = os.path.join(d, "gone")
        os.mkdir(gone)
        s = self.session()
        s.set_spill_dir(gone)
        os.rmdir(gone)
        r = s.run(xs(2000) + "; exit 3", output_limit=100)
        self.assertEqual((r.state, r.exit_code), ("exited", 3))
        self.assertEqual(r.stdout_spill, {"state": shexec.SPILL_FAILED, "path": None, "bytes": 0,
                                          "error": errno.ENOENT})
        self.assertTrue(r.stdout.endswith(b"; full output not saved: the spill failed "
                                          b"(the directory is gone)]\n"))

    def test_spill_while_running(self):
        d = self.temp_dir()
        s = self.session()
        s.set_spill_dir(d)
        r = s.start_run(xs(4000) + "; sleep 30", output_limit=1000)
        self.assertTrue(self.pump_until(s, lambda: r.stdout_total >= 4000))
        spill = r.stdout_spill
        self.assertEqual((spill["state"], spill["bytes"]), (shexec.SPILL_WRITING, 4000))
        self.assertTrue(r.stdout.endswith(b"; full output so far (4000 bytes) in "
                                          + spill["path"].encode() + b"]\n"))
        r.cancel()
        self.assertTrue(r.wait(5000))
        self.assertEqual(r.stdout_spill["state"], shexec.SPILL_WHOLE)

    def test_bad_arguments_change_nothing(self):
        d = self.temp_dir()
        s = self.session()
        s.set_spill_dir(d)
        for bad in ("relative/dir", os.path.join(d, "missing"), __file__, ""):
            with self.assertRaises(shexec.InvalidArgumentError):
                s.set_spill_dir(bad)
        with self.assertRaises(shexec.InvalidArgumentError):
            s.set_spill_dir(d, file_max=10, total_max=5)
        with self.assertRaises(shexec.InvalidArgumentError):
            s.set_spill_dir(d, file_max=-1)
        self.assertEqual(s.spill_dir, d)


class TestRedaction(Base, TempDir):
    def test_value_replaced_everywhere(self):
        s = self.session()
        s.redact_value("API_KEY", "s3cr3t-value")
        chunks = []
        # written in pieces, and on both streams
        r = s.run("printf 'key=s3cr'; sleep 0.1; printf '3t-value done\\n'; "
                  "echo s3cr3t-values >&2",
                  on_output=lambda stream, data: chunks.append((stream, data)))
        self.assertEqual(r.stdout, b"key=[REDACTED:API_KEY] done\n")
        self.assertEqual(r.stderr, b"[REDACTED:API_KEY]s\n")
        self.assertEqual(b"".join(d for st, d in chunks if st == "stdout"), r.stdout)
        self.assertEqual((r.stdout_redactions, r.stderr_redactions), (1, 1))
        self.assertEqual(s.run("echo nothing").stdout_redactions, 0)
        # bytes that are not UTF-8
        s.redact_value("RAW", b"\xff\xfe\x00\x01")
        self.assertEqual(s.run("printf 'a\\377\\376\\000\\001b'").stdout, b"a[REDACTED:RAW]b")

    def test_spill_file_and_tool_result_are_redacted(self):
        d = self.temp_dir()
        s = self.session()
        s.set_spill_dir(d)
        s.redact_value("PW", "correct-horse")
        r = s.run("echo correct-horse; " + xs(3000), output_limit=100)
        with open(r.stdout_spill["path"], "rb") as f:
            self.assertEqual(f.read(), b"[REDACTED:PW]\n" + b"x" * 3000)
        s.enable_tool("bash")
        res = s.call_tool("bash", {"command": "echo correct-horse"})
        self.assertEqual(res["stdout"], "[REDACTED:PW]\n")

    def test_run_values(self):
        s = self.session()
        r = s.run("echo one-secret two-secret", redact_values={"ONE": "one-secret",
                                                              "TWO": b"two-secret"})
        self.assertEqual(r.stdout, b"[REDACTED:ONE] [REDACTED:TWO]\n")
        self.assertEqual(r.stdout_redactions, 2)
        # for that run only
        self.assertEqual(s.run("echo one-secret").stdout, b"one-secret\n")
        t = s.start_task("echo task-secret", redact_values=[("T", "task-secret")])
        self.addCleanup(t.free)
        self.assertTrue(t.wait(5000))
        self.assertEqual(t.output(), b"[REDACTED:T]\n")
        self.assertEqual(t.redactions(), 1)
        # a run not started yet, as the tool layer prepares it
        s.enable_tool("bash")
        run, _ = s.tool_prepare("bash", {"command": "echo tool-secret"})
        run.redact_value("TOOL", "tool-secret")
        run.exec()
        self.assertEqual(run.tool_result()["stdout"], "[REDACTED:TOOL]\n")
        with self.assertRaises(shexec.StateError):
            run.redact_value("TOOL", "tool-secret")
        with self.assertRaises(shexec.StateError):
            run.redact_own_env()

    def test_env_globs(self):
        s = self.session(env={"SHX_TEST_TOKEN": "tok-1234567890", "SHX_PLAIN": "plain-1234567890",
                              "SHX_SHORT_TOKEN": "short"})
        cmd = 'echo "$SHX_TEST_TOKEN $SHX_PLAIN $SHX_SHORT_TOKEN"'
        self.assertEqual(s.run(cmd).stdout, b"tok-1234567890 plain-1234567890 short\n")
        s.redact_env()                        # the defaults: *TOKEN* among them
        r = s.run(cmd)
        # values under 8 bytes are left alone
        self.assertEqual(r.stdout, b"[REDACTED:SHX_TEST_TOKEN] plain-1234567890 short\n")
        self.assertEqual(r.stdout_redactions, 1)
        s.redact_env(["shx_pl*"])             # case ignored
        self.assertEqual(s.run(cmd).stdout,
                         b"tok-1234567890 [REDACTED:SHX_PLAIN] short\n")
        s.redact_env([])                      # off
        self.assertEqual(s.run(cmd).stdout, b"tok-1234567890 plain-1234567890 short\n")
        with self.assertRaises(shexec.InvalidArgumentError):
            s.redact_env(["*KEY*", ""])

    def test_own_env(self):
        s = self.session()
        cmd = 'echo "$RUN_TOKEN"'
        env = {"RUN_TOKEN": "run-token-value"}
        self.assertEqual(s.run(cmd, env=env).stdout, b"run-token-value\n")
        # the default globs, as the session has none
        self.assertEqual(s.run(cmd, env=env, redact_own_env=True).stdout,
                         b"[REDACTED:RUN_TOKEN]\n")
        s.redact_env(["*NOTHING*"])
        self.assertEqual(s.run(cmd, env=env, redact_own_env=True).stdout, b"run-token-value\n")

    def test_shapes_and_clear(self):
        s = self.session()
        plain = ("token " + GHP + " end\n" + PEM).encode()

        def cat():
            return s.run("cat", stdin=plain)
        self.assertEqual(cat().stdout, plain)
        s.redact_shapes()
        r = cat()
        self.assertEqual(r.stdout, b"token [REDACTED:GITHUB_TOKEN] end\n[REDACTED:PRIVATE_KEY]\n")
        self.assertEqual(r.stdout_redactions, 2)
        # too short to be a key
        self.assertEqual(s.run("echo ghp_abc").stdout, b"ghp_abc\n")
        s.redact_shapes(keys=True, private_keys=False)
        self.assertEqual(cat().stdout,
                         ("token [REDACTED:GITHUB_TOKEN] end\n" + PEM).encode())
        s.redact_shapes(keys=False, private_keys=False)
        self.assertEqual(cat().stdout, plain)
        s.redact_shapes()
        s.redact_value("WORD", "token ")
        s.redact_env()
        s.redact_clear()
        self.assertEqual(cat().stdout, plain)

    def test_bad_arguments(self):
        s = self.session()
        for name, value in (("SHORT", "ab"), ("SHORT", b""), ("BIG", b"x" * 65537),
                            ("bad-name", "long-enough"), ("", "long-enough"),
                            ("N" * 65, "long-enough")):
            with self.assertRaises(shexec.InvalidArgumentError):
                s.redact_value(name, value)
            with self.assertRaises(shexec.InvalidArgumentError):
                s.run("true", redact_values={name: value})
        s.redact_value("N" * 64, b"x" * 65536)  # the bounds themselves
        with self.assertRaises(TypeError):
            s.redact_value("NAME", 12345678)
        with self.assertRaises(TypeError):
            s.run("true", redact_values="secret")
        self.assertEqual(s.run("echo ok").stdout, b"ok\n")


if __name__ == "__main__":
    unittest.main()
