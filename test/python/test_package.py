"""The Python binding as a package: its version is the library's, the
package the tests import is the installed one (test/python/run.sh installs
examples/python into build/python-venv and names it in SHEXEC_TEST_VENV),
py.typed is installed with it, its annotations resolve (and type-check when
a mypy is at hand), the example of docs/python.md's Install section
prints what it says, and the build backend (examples/python/shexec_build.py)
makes the wheel, editable wheel and sdist it should, writing nothing into
the source tree."""
import base64
import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import typing
import unittest
import zipfile

from test_shexec import ROOT, SHEXEC_PATH, VENV, shexec

PACKAGE_DIR = os.path.join(ROOT, "examples", "python")
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

    def test_shexec_lib_may_name_a_directory(self):
        # SHEXEC_LIB as a file or as the directory holding libshexec.so.1 (the
        # tree's build/ after make): the package loads the same library;
        # a directory without it is an ImportError that says what to set
        lib = os.path.abspath(os.environ.get("SHEXEC_LIB") or shexec.LIBRARY_PATH)
        if not os.path.isfile(lib) or os.path.basename(lib) != "libshexec.so.1":
            self.skipTest("the library tested is not a libshexec.so.1 file: %s" % lib)
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d, True)
        code = ("import os, shexec; print(os.path.realpath(shexec.LIBRARY_PATH)); "
                "print(shexec.version())")
        for value in (lib, os.path.dirname(lib), os.path.dirname(lib) + os.sep):
            env = child_env()
            env["SHEXEC_LIB"] = value
            p = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, cwd=d, env=env, timeout=30)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout.decode().splitlines(),
                             [os.path.realpath(lib), shexec.version()], value)
        env = child_env()
        env["SHEXEC_LIB"] = d
        p = subprocess.run([sys.executable, "-c", "import shexec"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, cwd=d, env=env, timeout=30)
        self.assertNotEqual(p.returncode, 0)
        err = p.stderr.decode()
        self.assertIn("ImportError", err)
        self.assertIn(os.path.join(d, "libshexec.so.1"), err)
        self.assertIn("or the directory holding it", err)

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
    return importlib.util.find_spec(name) is not None


def load_backend():
    """examples/python/shexec_build.py, loaded from its file (nothing added
    to sys.path, so the shexec imported stays the one tested)."""
    path = os.path.join(PACKAGE_DIR, "shexec_build.py")
    spec = importlib.util.spec_from_file_location("shexec_build", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def tree_listing():
    """Every path under examples/python."""
    out = []
    for d, dirs, files in os.walk(PACKAGE_DIR):
        out += [os.path.join(d, x) for x in dirs + files]
    return sorted(out)


class TestBuildBackend(unittest.TestCase):
    """The backend's PEP 517 and PEP 660 hooks, called as pip calls them."""

    def setUp(self):
        self.before = tree_listing()
        self.backend = load_backend()
        self.out = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.out, True)

    def tearDown(self):
        # the hooks write into the directory they are given, nowhere else
        self.assertEqual(tree_listing(), self.before)

    def test_requires_nothing(self):
        for hook in ("wheel", "sdist", "editable"):
            self.assertEqual(getattr(self.backend, "get_requires_for_build_" + hook)(), [])

    def test_pyproject_read_without_tomllib_as_with_it(self):
        # Python before 3.11 has no tomllib: the backend's own reader must
        # read the file the same way
        try:
            import tomllib
        except ImportError:
            self.skipTest("no tomllib (Python 3.11) to compare with")
        with open(os.path.join(PACKAGE_DIR, "pyproject.toml"), encoding="utf-8") as f:
            text = f.read()
        self.assertEqual(self.backend.read_toml(text), tomllib.loads(text))
        with self.assertRaises(self.backend.TomlError):
            self.backend.read_toml("[project]\nversion = 1.0.0\n")

    def wheel(self, hook):
        name = getattr(self.backend, hook)(self.out)
        self.assertEqual(name, "shexec-%s-py3-none-any.whl" % pyproject_version())
        with zipfile.ZipFile(os.path.join(self.out, name)) as z:
            files = {n: z.read(n) for n in z.namelist()}
        info = "shexec-%s.dist-info/" % pyproject_version()
        # RECORD: every other file, with its hash and size
        record = files[info + "RECORD"].decode().splitlines()
        self.assertIn(info + "RECORD,,", record)
        listed = set()
        for line in record:
            path, digest, size = line.rsplit(",", 2)
            listed.add(path)
            if path != info + "RECORD":
                want = base64.urlsafe_b64encode(hashlib.sha256(files[path]).digest()).rstrip(b"=")
                self.assertEqual(digest, "sha256=" + want.decode(), path)
                self.assertEqual(int(size), len(files[path]), path)
        self.assertEqual(listed, set(files))
        meta = files[info + "METADATA"].decode()
        self.assertIn("Name: shexec\n", meta)
        self.assertIn("Version: %s\n" % pyproject_version(), meta)
        self.assertIn("Classifier: Typing :: Typed\n", meta)
        self.assertIn("Tag: py3-none-any\n", files[info + "WHEEL"].decode())
        return name, files, info

    def test_wheel(self):
        name, files, info = self.wheel("build_wheel")
        self.assertEqual(sorted(files), sorted(["shexec/__init__.py", "shexec/py.typed"] + [
            info + n for n in ("METADATA", "RECORD", "WHEEL", "top_level.txt")]))
        with open(os.path.join(PACKAGE_DIR, "shexec", "__init__.py"), "rb") as f:
            self.assertEqual(files["shexec/__init__.py"], f.read())
        # the same tree makes the same wheel
        with open(os.path.join(self.out, name), "rb") as f:
            first = f.read()
        os.remove(os.path.join(self.out, name))
        self.backend.build_wheel(self.out)
        with open(os.path.join(self.out, name), "rb") as f:
            self.assertEqual(f.read(), first)
        # the metadata pip asks for first is the wheel's
        d = self.backend.prepare_metadata_for_build_wheel(self.out)
        self.assertEqual(d + "/", info)
        with open(os.path.join(self.out, d, "METADATA"), "rb") as f:
            self.assertEqual(f.read(), files[info + "METADATA"])

    def test_editable_wheel(self):
        _, files, info = self.wheel("build_editable")
        pth = "__editable__.shexec-%s.pth" % pyproject_version()
        self.assertEqual(sorted(files), sorted([pth] + [
            info + n for n in ("METADATA", "RECORD", "WHEEL", "top_level.txt")]))
        self.assertEqual(os.path.realpath(files[pth].decode().strip()), os.path.realpath(PACKAGE_DIR))

    def test_sdist(self):
        name = self.backend.build_sdist(self.out)
        base = "shexec-%s" % pyproject_version()
        self.assertEqual(name, base + ".tar.gz")
        with tarfile.open(os.path.join(self.out, name)) as tar:
            names = tar.getnames()
            pkg_info = tar.extractfile(base + "/PKG-INFO").read()
        self.assertEqual(sorted(names), sorted(base + "/" + n for n in (
            "PKG-INFO", "README.md", "pyproject.toml", "shexec_build.py",
            "shexec/__init__.py", "shexec/py.typed")))
        self.assertEqual(pkg_info, self.backend.metadata(self.backend.project()))


if __name__ == "__main__":
    unittest.main()
