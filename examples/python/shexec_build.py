"""The build backend of the shexec distribution (PEP 517, and PEP 660 for
`pip install -e`), named by pyproject.toml's [build-system] and loaded from
this directory (backend-path): it needs nothing but the standard library, so
pip builds the package offline and with build isolation on, no setuptools or
wheel to fetch from an index.

It writes only where pip tells it to (the wheel, sdist or metadata
directory, all pip's temporary ones): nothing in the source tree, neither a
build/ nor an *.egg-info, so installing from a checkout leaves it as it was.

What it packs: the metadata of pyproject.toml's [project] table (the one
place the version is written; a key it does not know is an error, not a
field left out), and the package named after the project, shexec/: its .py
files and py.typed (PEP 561). The wheel is py3-none-any; entries carry a
fixed date (SOURCE_DATE_EPOCH when set), so the same tree makes the same
wheel."""

import base64
import gzip
import hashlib
import io
import json
import os
import re
import sys
import tarfile
import time
import zipfile

# pip imports this module from the source tree, and Python caches its
# bytecode there (__pycache__/) unless told not to: take that back, as the
# build leaves nothing in the tree. The code is compiled again when next run.
try:
    os.remove(__cached__)
    os.rmdir(os.path.dirname(__cached__))
except (NameError, TypeError, OSError):
    pass

HERE = os.path.dirname(os.path.abspath(__file__))
GENERATOR = "shexec_build"
TAG = "py3-none-any"
# the [project] keys this backend turns into metadata
KNOWN = {"name", "version", "description", "readme", "requires-python", "license",
         "keywords", "classifiers", "dependencies"}


# --- pyproject.toml ----------------------------------------------------------

def load_toml(text):
    """pyproject.toml as a dict: tomllib (Python 3.11) when there is one,
    else read_toml, which takes the part of TOML this file is written in."""
    try:
        import tomllib
    except ImportError:
        return read_toml(text)
    return tomllib.loads(text)


class TomlError(ValueError):
    pass


_BARE = re.compile(r"[A-Za-z0-9_-]+")
_INT = re.compile(r"[+-]?[0-9]+")


def read_toml(text):
    """TOML without tomllib, as much as a pyproject.toml needs: [table]
    headers (dotted), key = value with bare or quoted keys, basic and literal
    strings on one line, integers, booleans, arrays (over several lines, with
    comments and a trailing comma) and inline tables. Anything else is a
    TomlError naming its line, never a guess."""
    root = {}
    table = root
    p = _Reader(text)
    while True:
        p.skip(newlines=True)
        if p.at_end():
            return root
        if p.peek() == "[":
            p.pos += 1
            if p.peek() == "[":
                raise p.error("arrays of tables are not read here")
            path = p.key_path()
            p.skip()
            p.expect("]")
            table = root
            for k in path:
                table = table.setdefault(k, {})
                if not isinstance(table, dict):
                    raise p.error("%s is not a table" % ".".join(path))
        else:
            path = p.key_path()
            p.skip()
            p.expect("=")
            p.skip()
            value = p.value()
            t = table
            for k in path[:-1]:
                t = t.setdefault(k, {})
            if path[-1] in t:
                raise p.error("%s given twice" % ".".join(path))
            t[path[-1]] = value
        p.skip()
        if not p.at_end():
            p.expect("\n")


class _Reader:
    def __init__(self, text):
        self.text = text.replace("\r\n", "\n")
        self.pos = 0

    def at_end(self):
        return self.pos >= len(self.text)

    def peek(self):
        return self.text[self.pos:self.pos + 1]

    def error(self, what):
        line = self.text.count("\n", 0, self.pos) + 1
        return TomlError("pyproject.toml line %d: %s" % (line, what))

    def expect(self, c):
        if self.peek() != c:
            raise self.error("%r expected" % c)
        self.pos += 1

    def skip(self, newlines=False):
        """Spaces, tabs and a comment (and newlines when asked)."""
        while not self.at_end():
            c = self.peek()
            if c in " \t" or (newlines and c == "\n"):
                self.pos += 1
            elif c == "#":
                end = self.text.find("\n", self.pos)
                self.pos = len(self.text) if end < 0 else end
            else:
                return

    def key(self):
        c = self.peek()
        if c in ("\"", "'"):
            return self.string()
        m = _BARE.match(self.text, self.pos)
        if not m:
            raise self.error("a key expected")
        self.pos = m.end()
        return m.group()

    def key_path(self):
        self.skip()
        path = [self.key()]
        self.skip()
        while self.peek() == ".":
            self.pos += 1
            self.skip()
            path.append(self.key())
            self.skip()
        return path

    def string(self):
        q = self.peek()
        if self.text.startswith(q * 3, self.pos):
            raise self.error("multi-line strings are not read here")
        if q == "'":
            end = self.text.find("'", self.pos + 1)
            if end < 0 or "\n" in self.text[self.pos:end]:
                raise self.error("unterminated string")
            s = self.text[self.pos + 1:end]
            self.pos = end + 1
            return s
        i = self.pos + 1
        while i < len(self.text) and self.text[i] not in "\"\n":
            i += 2 if self.text[i] == "\\" else 1
        if i >= len(self.text) or self.text[i] != "\"":
            raise self.error("unterminated string")
        try:
            # TOML's escapes, but \e and \UXXXXXXXX, are JSON's
            s = json.loads(self.text[self.pos:i + 1])
        except ValueError:
            raise self.error("a string with an escape not read here")
        self.pos = i + 1
        return s

    def value(self):
        c = self.peek()
        if c in ("\"", "'"):
            return self.string()
        if c == "[":
            self.pos += 1
            items = []
            while True:
                self.skip(newlines=True)
                if self.peek() == "]":
                    self.pos += 1
                    return items
                items.append(self.value())
                self.skip(newlines=True)
                if self.peek() == ",":
                    self.pos += 1
                elif self.peek() != "]":
                    raise self.error("',' or ']' expected")
        if c == "{":
            self.pos += 1
            table = {}
            self.skip()
            if self.peek() == "}":
                self.pos += 1
                return table
            while True:
                path = self.key_path()
                self.expect("=")
                self.skip()
                t = table
                for k in path[:-1]:
                    t = t.setdefault(k, {})
                t[path[-1]] = self.value()
                self.skip()
                if self.peek() == "}":
                    self.pos += 1
                    return table
                self.expect(",")
        for word, v in (("true", True), ("false", False)):
            if self.text.startswith(word, self.pos):
                self.pos += len(word)
                return v
        m = _INT.match(self.text, self.pos)
        if m and not re.match(r"[0-9A-Za-z_.:-]", self.text[m.end():m.end() + 1]):
            self.pos = m.end()
            return int(m.group())
        raise self.error("a value of a kind not read here")


# --- the distribution --------------------------------------------------------

def project():
    """[project] of pyproject.toml, checked for what this backend packs."""
    with open(os.path.join(HERE, "pyproject.toml"), encoding="utf-8") as f:
        proj = load_toml(f.read()).get("project")
    if not isinstance(proj, dict):
        raise ValueError("pyproject.toml has no [project] table")
    unknown = sorted(set(proj) - KNOWN)
    if unknown:
        raise ValueError("pyproject.toml: [project] %s: not known to %s (examples/python/%s.py)"
                         % (", ".join(unknown), GENERATOR, GENERATOR))
    for key in ("name", "version"):
        if not isinstance(proj.get(key), str) or not proj[key]:
            raise ValueError("pyproject.toml: [project] %s missing" % key)
    if proj.get("dependencies"):
        raise ValueError("pyproject.toml: [project] dependencies: the package has none")
    return proj


def dist_name(proj):
    """The name as it goes into file names (PEP 427, PEP 625)."""
    return re.sub(r"[-_.]+", "_", proj["name"]).lower()


def metadata(proj):
    """METADATA (the wheel's) and PKG-INFO (the sdist's): core metadata 2.1."""
    lines = ["Metadata-Version: 2.1",
             "Name: %s" % proj["name"],
             "Version: %s" % proj["version"]]
    if proj.get("description"):
        lines.append("Summary: %s" % proj["description"])
    lic = proj.get("license")
    if lic is not None:
        if not isinstance(lic, dict) or set(lic) != {"text"}:
            raise ValueError("pyproject.toml: [project] license: only {text = ...} is known here")
        lines.append("License: %s" % lic["text"])
    if proj.get("keywords"):
        lines.append("Keywords: %s" % ",".join(proj["keywords"]))
    for c in proj.get("classifiers", []):
        lines.append("Classifier: %s" % c)
    if proj.get("requires-python"):
        lines.append("Requires-Python: %s" % proj["requires-python"])
    body = None
    readme = proj.get("readme")
    if readme is not None:
        if not isinstance(readme, str):
            raise ValueError("pyproject.toml: [project] readme: only a file name is known here")
        types = {".md": "text/markdown", ".rst": "text/x-rst", ".txt": "text/plain"}
        ext = os.path.splitext(readme)[1].lower()
        if ext not in types:
            raise ValueError("pyproject.toml: [project] readme: %s: of no type known here" % readme)
        lines.append("Description-Content-Type: %s" % types[ext])
        with open(os.path.join(HERE, readme), encoding="utf-8") as f:
            body = f.read()
    text = "\n".join(lines) + "\n"
    if body is not None:
        text += "\n" + body
    return text.encode("utf-8")


def package_files(proj):
    """The package's files, as (path in the archive, path on disk), sorted:
    its .py files and py.typed, __pycache__ left out."""
    pkg = dist_name(proj)
    top = os.path.join(HERE, pkg)
    if not os.path.isfile(os.path.join(top, "__init__.py")):
        raise ValueError("no package %s/ next to pyproject.toml" % pkg)
    out = []
    for d, dirs, files in os.walk(top):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py") or name == "py.typed":
                path = os.path.join(d, name)
                out.append((os.path.relpath(path, HERE).replace(os.sep, "/"), path))
    return out


def source_date():
    """The date every archive entry carries: SOURCE_DATE_EPOCH, else
    1980-01-01 (the earliest a zip entry can have)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.isdigit():
        return max(int(epoch), 315532800)
    return 315532800


def _dist_info(proj):
    return "%s-%s.dist-info" % (dist_name(proj), proj["version"])


def _dist_info_files(proj):
    """The .dist-info's files but RECORD: (name, bytes)."""
    wheel = ("Wheel-Version: 1.0\nGenerator: %s\nRoot-Is-Purelib: true\nTag: %s\n"
             % (GENERATOR, TAG)).encode()
    return [("METADATA", metadata(proj)),
            ("WHEEL", wheel),
            ("top_level.txt", (dist_name(proj) + "\n").encode())]


def _write_wheel(wheel_directory, proj, contents):
    """A wheel of contents ((path, bytes), the package's part) and the
    .dist-info; returns its file name."""
    info = _dist_info(proj)
    entries = list(contents) + [("%s/%s" % (info, n), b) for n, b in _dist_info_files(proj)]
    record = []
    for path, data in entries:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (path, digest, len(data)))
    record.append("%s/RECORD,," % info)
    entries.append(("%s/RECORD" % info, ("\n".join(record) + "\n").encode()))
    name = "%s-%s-%s.whl" % (dist_name(proj), proj["version"], TAG)
    date = time.gmtime(source_date())[:6]
    tmp = os.path.join(wheel_directory, "." + name + ".part")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in entries:
            zi = zipfile.ZipInfo(path, date_time=date)
            zi.external_attr = 0o100644 << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
    os.replace(tmp, os.path.join(wheel_directory, name))
    return name


def _read(path):
    with open(path, "rb") as f:
        return f.read()


# --- PEP 517 -----------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    proj = project()
    info = _dist_info(proj)
    os.makedirs(os.path.join(metadata_directory, info), exist_ok=True)
    for name, data in _dist_info_files(proj):
        with open(os.path.join(metadata_directory, info, name), "wb") as f:
            f.write(data)
    return info


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    proj = project()
    return _write_wheel(wheel_directory, proj,
                        [(arc, _read(path)) for arc, path in package_files(proj)])


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """PEP 660: a wheel whose .pth file puts this directory on sys.path, so
    the package imported is the source tree's, edits seen at once."""
    proj = project()
    package_files(proj)     # the package is there
    pth = ("__editable__.%s-%s.pth" % (dist_name(proj), proj["version"]),
           (HERE + "\n").encode(sys.getfilesystemencoding()))
    return _write_wheel(wheel_directory, proj, [pth])


def build_sdist(sdist_directory, config_settings=None):
    """NAME-VERSION.tar.gz: pyproject.toml, the readme, this backend, the
    package and PKG-INFO, under NAME-VERSION/."""
    proj = project()
    base = "%s-%s" % (dist_name(proj), proj["version"])
    files = [("pyproject.toml", os.path.join(HERE, "pyproject.toml")),
             (os.path.basename(__file__), os.path.abspath(__file__))]
    if proj.get("readme"):
        files.append((proj["readme"], os.path.join(HERE, proj["readme"])))
    files += package_files(proj)
    entries = [(arc, _read(path)) for arc, path in files] + [("PKG-INFO", metadata(proj))]
    name = base + ".tar.gz"
    mtime = source_date()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for arc, data in sorted(entries):
            ti = tarfile.TarInfo("%s/%s" % (base, arc))
            ti.size = len(data)
            ti.mtime = mtime
            ti.mode = 0o644
            ti.uname = ti.gname = ""
            tar.addfile(ti, io.BytesIO(data))
    tmp = os.path.join(sdist_directory, "." + name + ".part")
    with open(tmp, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=mtime) as gz:
            gz.write(buf.getvalue())
    os.replace(tmp, os.path.join(sdist_directory, name))
    return name
