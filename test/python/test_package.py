"""The Python binding as a package: its version is the library's, the
package the tests import is the installed one (test/python/run.sh installs
examples/python into build/python-venv and names it in SHEXEC_TEST_VENV),
py.typed is installed with it, its annotations resolve (and type-check when
a mypy is at hand), and the example of docs/python.md's Install section
prints what it says."""
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import typing
import unittest

from test_shexec import ROOT, SHEXEC_PATH, VENV, shexec

FROM_TREE = "the source tree's package is tested (test/python/run.sh installs one when it can)"


def header_version():
    """MAJOR.MINOR.PATCH of include/shexec.h."""
    with open(os.path.join(ROOT, "include", "shexec.h")) as f:
        text = f.read()
    return ".".join(re.search(r"^#define SHEXEC_VERSION_%s (\d+)$" % part, text, re.M).group(1)
                    for part in ("MAJOR", "MINOR", "PATCH"))


def pyproject_version():
    """[project] version of examples/python/pyproject.toml."""
    with open(os.path.join(ROOT, "examples", "python", "pyproject.toml"), "rb") as f:
        raw = f.read()
    try:
        import tomllib      # Python 3.11
    except ImportError:     # older: the one line it is, in its table
        table = re.search(rb"^\[project\]$(.*?)(?=^\[|\Z)", raw, re.M | re.S).group(1)
        return re.search(rb'^version\s*=\s*"([^"]*)"', table, re.M).group(1).decode()
    return tomllib.loads(raw.decode("utf-8"))["project"]["version"]


def child_env():
    """The environment of a Python the tests start: it imports the same
    shexec (from the source tree, when that is the one tested)."""
    env = dict(os.environ)
    if VENV is None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (SHEXEC_PATH, env.get("PYTHONPATH")) if p)
    return env


def install_example():
    """The ```python block of docs/python.md's Install section: the example the
    top README and the other bindings show too, run as it is written there so
    the documentation cannot drift from what the package does."""
    with open(os.path.join(ROOT, "docs", "python.md")) as f:
        doc = f.read()
    parts = re.split(r"^## Install$", doc, flags=re.M)
    if len(parts) < 2:
        raise AssertionError('docs/python.md has no "## Install" section')
    m = re.search(r"^```python\n(.*?)^```$", parts[1], re.M | re.S)
    if m is None:
        raise AssertionError("no ```python block in the Install section of docs/python.md")
    return m.group(1)


class TestPackage(unittest.TestCase):

    def test_version_is_the_library_version(self):
        want = header_version()
        self.assertEqual(pyproject_version(), want)
        self.assertEqual(shexec.version(), want)      # the library loaded
        if VENV is not None:
            from importlib import metadata             # Python 3.8
            self.assertEqual(metadata.version("shexec"), want)

    @unittest.skipIf(VENV is None, FROM_TREE)
    def test_the_package_tested_is_the_one_installed_in_the_venv(self):
        self.assertEqual(os.path.realpath(sys.prefix), os.path.realpath(VENV))
        site = os.path.realpath(sysconfig.get_paths()["purelib"]) + os.sep
        path = os.path.realpath(shexec.__file__)
        self.assertTrue(path.startswith(site), "%s is not in %s" % (path, site))
        self.assertEqual(path, os.path.join(site, "shexec", "__init__.py"))
        tree = os.path.realpath(os.path.join(ROOT, "examples", "python")) + os.sep
        self.assertFalse(path.startswith(tree))
        # and it loads the library run.sh names, not one of its own finding
        self.assertEqual(shexec.LIBRARY_PATH, os.environ.get("SHEXEC_LIB"))

    def test_py_typed_is_installed(self):
        here = os.path.dirname(os.path.abspath(shexec.__file__))
        self.assertTrue(os.path.isfile(os.path.join(here, "py.typed")))
        if VENV is not None:
            from importlib import metadata
            files = [str(p) for p in metadata.files("shexec") or []]
            self.assertIn("shexec/py.typed", files)

    def test_annotations_resolve(self):
        # every annotation names something real: what a type checker reads,
        # checked without one (and at run time on every Python the suite runs on)
        seen = 0
        for fn in (shexec.version, shexec.strerror, shexec.error_name):
            typing.get_type_hints(fn)
            seen += 1
        for cls in (shexec.Session, shexec.Run, shexec.Task, shexec.ShexecError):
            for name, member in vars(cls).items():
                member = getattr(member, "fget", member)
                if callable(member) and (not name.startswith("_") or name == "__init__"):
                    hints = typing.get_type_hints(member)
                    self.assertIn("return", hints, "%s.%s" % (cls.__name__, name))
                    seen += 1
        self.assertGreater(seen, 100)        # the public API was looked at, not nothing
        self.assertIs(typing.get_type_hints(shexec.Session.run)["return"], shexec.Run)

    def test_mypy_accepts_the_example(self):
        if shutil.which("mypy") is None and not _has_module("mypy"):
            self.skipTest("mypy not available")
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d, True)
        path = os.path.join(d, "example.py")
        with open(path, "w") as f:
            f.write(install_example())
        cmd = ([sys.executable, "-m", "mypy"] if _has_module("mypy") else ["mypy"])
        env = child_env()
        if VENV is None:
            env["MYPYPATH"] = SHEXEC_PATH
        # --python-executable: the package is looked up where it is installed
        p = subprocess.run(cmd + ["--strict", "--cache-dir", os.path.join(d, "cache"),
                                  "--python-executable", sys.executable, path],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=d,
                           env=env, timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout.decode("utf-8", "replace"))

    def test_the_install_example_of_the_docs(self):
        code = install_example()
        self.assertIn("from shexec import Session", code)
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d, True)
        # from an empty directory: nothing there to import in the package's place
        p = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, cwd=d, env=child_env(), timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, b"")
        self.assertEqual(p.stdout.decode().splitlines(), ["hello", "3", "/tmp", "done"])


def _has_module(name):
    import importlib.util
    return importlib.util.find_spec(name) is not None


if __name__ == "__main__":
    unittest.main()
