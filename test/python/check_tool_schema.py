"""The tool layer seen from a model host: the listed schemas are valid JSON
Schema (draft 2020-12, checked with the jsonschema package), accept the
arguments they should and refuse the rest, and the seed scenarios hold
through the Python binding (registered disabled, "Tool not available",
enable, run, rename); tool_prepare() checks arguments as the tool does."""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "python"))

import shexec  # noqa: E402
from jsonschema import Draft202012Validator  # noqa: E402


class ToolSchemas(unittest.TestCase):
    def setUp(self):
        self.s = shexec.Session(cwd="/")
        self.addCleanup(self.s.close)

    def test_disabled_until_enabled(self):
        s = self.s
        self.assertTrue(s.has_tool("bash"))
        self.assertFalse(s.has_tool("no_such_tool"))
        self.assertFalse(s.tool_enabled("bash"))
        self.assertEqual(s.tools(), [])
        self.assertEqual(s.call_tool("bash", {"command": "echo test"}),
                         {"error": "Tool not available: bash"})
        s.enable_tool("bash")
        r = s.call_tool("bash", {"command": "echo test"})
        self.assertEqual(r["stdout"], "test\n")
        self.assertEqual(r["exit_code"], 0)
        s.rename_tool("bash", "run_bash")
        self.assertEqual(s.call_tool("bash", '{"command":"echo x"}'),
                         {"error": "Tool not available: bash"})
        self.assertEqual(s.call_tool("run_bash", '{"command":"echo x"}')["stdout"], "x\n")
        with self.assertRaises(shexec.ToolNotAvailableError):
            s.enable_tool("no_such_tool")

    def test_schemas_are_valid_and_strict(self):
        s = self.s
        for name in ("bash", "task_output", "task_kill"):
            s.enable_tool(name)
        tools = {t["name"]: t for t in s.tools()}
        self.assertEqual(sorted(tools), ["bash", "task_kill", "task_output"])
        for t in tools.values():
            self.assertTrue(t["description"])
            Draft202012Validator.check_schema(t["inputSchema"])
            self.assertEqual(t["inputSchema"]["type"], "object")
            self.assertIs(t["inputSchema"]["additionalProperties"], False)
        bash = Draft202012Validator(tools["bash"]["inputSchema"])
        good = [{"command": "ls"},
                {"command": "ls", "timeout": 5000, "run_in_background": False,
                 "cwd": "/tmp", "env": {"A": "b"}, "pty": True},
                {"command": "true", "env": {"V%d" % i: "x" for i in range(4096)}},
                {"command": "true", "env": {"_a1": "x", "Z": "y"}}]
        bad = [{}, {"command": ""}, {"command": 1}, {"command": "ls", "timeout": 0},
               {"command": "ls", "timeout": 900000}, {"command": "ls", "env": {"A": 1}},
               {"command": "ls", "extra": 1}, {"command": "ls", "timeout": 1.5},
               {"command": "ls", "env": {"V%d" % i: "x" for i in range(4097)}},
               {"command": "ls", "env": {"INVALID-NAME": "x"}},
               {"command": "ls", "env": {"1X": "x"}}, {"command": "ls", "env": {"": "x"}}]
        for args in good:
            self.assertEqual(list(bash.iter_errors(args)), [], args)
            # what the schema accepts, the tool accepts, and so does
            # tool_prepare() (a run configured from it, not started)
            if not args.get("pty"):
                self.assertNotIn("error", s.call_tool("bash", args), args)
            run, background = s.tool_prepare("bash", args)
            self.assertEqual(run.state, "new")
            self.assertIs(background, False)
            run.close()
        for args in bad:
            self.assertNotEqual(list(bash.iter_errors(args)), [], args)
            # and what it refuses, the tool refuses too (900000 is clamped instead)
            if args.get("timeout") != 900000:
                err = s.call_tool("bash", args)
                self.assertIn("error", err, args)
                with self.assertRaises(shexec.ShexecError, msg=args) as ctx:
                    s.tool_prepare("bash", args)
                self.assertEqual(ctx.exception.message, err["error"])
        out = Draft202012Validator(tools["task_output"]["inputSchema"])
        self.assertEqual(list(out.iter_errors({"task_id": "t1", "new_only": True})), [])
        self.assertNotEqual(list(out.iter_errors({"new_only": True})), [])
        kill = Draft202012Validator(tools["task_kill"]["inputSchema"])
        self.assertNotEqual(list(kill.iter_errors({"task_id": "t1", "new_only": True})), [])
        signals = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGKILL", "SIGUSR1", "SIGUSR2",
                   "SIGSTOP", "SIGCONT"]
        self.assertEqual(tools["task_kill"]["inputSchema"]["properties"]["signal"]["enum"],
                         signals)
        for bad in ("SIGSEGV", "", 2, None, ["SIGINT"]):
            self.assertNotEqual(list(kill.iter_errors({"task_id": "t1", "signal": bad})), [],
                                bad)
            # and what the schema refuses, the tool refuses too
            started = s.call_tool("bash", {"command": "sleep 60", "run_in_background": True})
            err = s.call_tool("task_kill", {"task_id": started["task_id"], "signal": bad})
            self.assertIn("error", err, bad)
            s.call_tool("task_kill", {"task_id": started["task_id"]})
        # what it accepts, the tool sends
        for name in signals:
            args = {"task_id": "t1", "signal": name}
            self.assertEqual(list(kill.iter_errors(args)), [], args)
            started = s.call_tool("bash", {"command": "sleep 60", "run_in_background": True})
            args["task_id"] = started["task_id"]
            r = s.call_tool("task_kill", args)
            self.assertNotIn("error", r, args)
            if r["status"] == "running":
                s.call_tool("task_kill", {"task_id": started["task_id"]})


if __name__ == "__main__":
    unittest.main()
