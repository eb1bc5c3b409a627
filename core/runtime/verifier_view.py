"""What the verifier sees of the agent's changes: a pure planner, no sandbox involved.

Threat model (docs/verification.md): the verifier must resolve the same programs, libraries and
Python modules the image would. The agent may *add* new ones, never replace or pre-empt existing
ones, and may not add code that runs by itself (interpreter start-up hooks, pytest plugins and
config files, dynamic-loader preloads). Everything else it changed stays visible, so /etc/hosts
edits, new users, dpkg-installed packages and /app files verify as the agent left them.

The backend reports the attempt's changes against the prepared image (``FileChange``, computed on
the host or by the engine, never by a program in the sandbox); ``plan_view`` picks the paths to put
back to the image's state (restore its content, or remove what the image lacks); the backend then
does that with a toolchain the agent never touched.
"""

from __future__ import annotations

import configparser
import fnmatch
import re
from pathlib import PurePosixPath
from typing import Iterable, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..sandbox.base import FileChange

View = Literal["protected", "outputs", "agent"]
# Kept visible in every view: Harbor's agent logs (a verifier may read what the agent reported).
ALWAYS_VISIBLE: tuple[str, ...] = ("/logs/agent",)

# Trees whose existing entries the agent may not replace: programs, libraries, the dynamic loader's
# configuration and the interpreters' own configuration. The image's PATH and Python path
# directories are added per image (an image whose python lives in /opt/venv is covered too).
SYSTEM_TREES: tuple[str, ...] = (
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
    "/etc/ld.so.preload", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/ld.so.cache", "/etc/alternatives",
    "/etc/nsswitch.conf",  # names the NSS modules every user or host lookup loads
)
SYSTEM_GLOBS: tuple[str, ...] = ("/etc/python3*",)
# Files Python runs at start-up by their mere presence in a site directory.
STARTUP_NAMES = frozenset({"sitecustomize.py", "usercustomize.py"})
# Files pytest reads its configuration from when they sit in an ancestor of /tests (only / is one).
PYTEST_CONFIGS = frozenset({"conftest.py", "pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg", "setup.py",
                            "pyproject.toml"})
_SITE_DIR = re.compile(r"/(?:site|dist)-packages(?:/|$)")
_LIBC_LOADED = re.compile(r"^libnss_[^/]*\.so(?:\.[0-9.]+)?$")
_MODULE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\.py|\.pyc|\.pyw|(?:\.[A-Za-z0-9_-]+)*\.so)?$")


class ImageIndex(BaseModel):
    """What the pristine image resolves, captured once per prepared environment before any agent
    command: its PATH directories and the executable names in them, and for each Python found, its
    path directories (user site included) and the top-level module names in them."""

    model_config = ConfigDict(frozen=True)

    path_dirs: tuple[str, ...] = ()
    executables: frozenset[str] = frozenset()
    python_dirs: tuple[str, ...] = ()
    modules: frozenset[str] = frozenset()

    def protected_trees(self) -> tuple[str, ...]:
        extra = [d for d in (*self.path_dirs, *self.python_dirs) if d.startswith("/") and _norm(d) != "/"]
        return tuple(dict.fromkeys([*SYSTEM_TREES, *(_norm(d) for d in extra)]))


class ViewPlan(BaseModel):
    """The paths to put back to the image's state, each with the rule that chose it, and the added
    ``entry_points.txt`` files to read (after the restores) for ``[pytest11]`` plugins.

    ``added_dists``: the ``*.dist-info`` directories the agent added to a Python path directory, and
    ``imported_added``: the modules the agent added that the tests import. When both are non-empty the
    runner reads those distributions' requirements and plans again with them imported too (a package
    the task asked the agent to install brings its dependencies)."""

    model_config = ConfigDict(frozen=True)

    view: View
    restore: dict[str, str] = Field(default_factory=dict)  # path -> why
    entry_points: tuple[str, ...] = ()
    kept_by_agent_paths: int = 0  # changes a rule would have hidden that agent_paths kept visible
    added_dists: tuple[str, ...] = ()
    imported_added: tuple[str, ...] = ()


def plan_view(view: View, changes: Iterable[FileChange], index: ImageIndex, *, workdir: str = "/",
              agent_paths: Iterable[str] = (), outputs: Iterable[str] = (),
              imported: Iterable[str] | None = None) -> ViewPlan:
    """The paths the verifier must see as the image has them. View "agent" keeps every change;
    "protected" hides what would change the programs and modules the verifier runs; "outputs" also
    hides every change outside the declared ``outputs`` (and their parent directories).

    ``imported``: the top-level modules the verifier imports by name (``verifier_imports``); a module the
    agent added to a directory Python searches is hidden unless it is one of them (None: no such rule,
    only modules that shadow the image's are hidden)."""
    if view == "agent":
        return ViewPlan(view=view)
    keep = tuple(_norm(p) for p in agent_paths)
    outs = tuple(_norm(p) for p in outputs)
    names = None if imported is None else frozenset(imported)
    trees = index.protected_trees()
    path_dirs = {_norm(d) for d in index.path_dirs}
    python_dirs = {_norm(d) for d in index.python_dirs}
    workdir = _norm(workdir)
    restore: dict[str, str] = {}
    entry_points: list[str] = []
    dists: list[str] = []
    imported_added: list[str] = []
    kept = 0
    changes = list(changes)
    code_dirs = _code_dirs(changes)
    for change in changes:
        path = _norm(change.path)
        why = None
        if view == "outputs" and not _visible_output(change, path, outs, workdir):
            why = "not a declared output"
        module = _added_module(change, path, python_dirs, workdir)
        why = why or _rule(change, path, trees, path_dirs, python_dirs, index, workdir, names, module, code_dirs)
        if module and names is not None and module in names and module not in index.modules:
            imported_added.append(module)
        if not why and change.kind == "added" and path.endswith(".dist-info") and _in_site(path, python_dirs):
            dists.append(path)
        ep = why is None and change.kind == "added" and _is_entry_points(path)
        if not why and not ep:
            continue
        if any(_under(path, k) for k in keep):
            kept += 1
            continue
        if why:
            restore[path] = why
        else:
            entry_points.append(path)
    return ViewPlan(view=view, restore=_outermost(restore), entry_points=tuple(sorted(entry_points)),
                    kept_by_agent_paths=kept, added_dists=tuple(sorted(dists)),
                    imported_added=tuple(sorted(set(imported_added))))


def _visible_output(change: FileChange, path: str, outputs: tuple[str, ...], workdir: str) -> bool:
    """Whether the outputs view lets the verifier see this change: it is a declared output, lies under
    one, or is a directory on the way to one (only as a directory: a symlink there is put back),
    or lies under a path every view keeps. Of the working directory only the directory itself (and
    those on the way) is kept: the engine may have made it at start, and the verifier runs in it."""
    if any(_under(path, p) for p in (*outputs, *ALWAYS_VISIBLE)):
        return True
    ancestor = any(_under(p, path) for p in (*outputs, *ALWAYS_VISIBLE, workdir))
    if ancestor:
        return change.kind != "deleted" and change.is_dir and not change.replaced
    # A directory the agent modified (an entry added or removed below it) is not itself put back:
    # its changed entries are, one by one. Only added, deleted or replaced directories go whole.
    return change.kind == "modified" and change.is_dir and not change.replaced


def _rule(change: FileChange, path: str, trees: tuple[str, ...], path_dirs: set[str], python_dirs: set[str],
          index: ImageIndex, workdir: str, imported: frozenset[str] | None, module: str | None,
          code_dirs: set[str]) -> str | None:
    """Why this change must be hidden from the verifier, or None."""
    name = PurePosixPath(path).name
    parent = str(PurePosixPath(path).parent)
    top2 = "/" + "/".join(path.split("/")[1:3])  # /etc/python3.11 of /etc/python3.11/sitecustomize.py
    protected = any(_under(path, t) for t in trees) or any(fnmatch.fnmatch(top2, g) for g in SYSTEM_GLOBS)
    if change.kind in ("modified", "deleted"):
        if protected and (change.kind == "deleted" or not change.is_dir or change.replaced):
            return "replaces an image file"
        if not protected and change.replaced and any(_under(t, path) for t in trees):
            return "replaces an ancestor of a protected tree"  # /opt made a symlink over /opt/venv/bin
    if name.endswith(".pyc") and change.kind != "deleted" and not change.is_dir:
        return "compiled Python (recompiled from source)"
    if change.kind != "added":
        return None
    site = parent in python_dirs or bool(_SITE_DIR.search(parent + "/"))
    if site and (name.endswith(".pth") or name in STARTUP_NAMES):
        return "Python start-up hook"
    if _under(path, "/etc/ld.so.conf.d") or path == "/etc/ld.so.preload":
        return "dynamic-loader configuration"
    if _LIBC_LOADED.match(name) or "/gconv/" in parent + "/":
        return "a module the C library loads by name"  # NSS (user and host lookups), iconv
    if parent == "/" and name in PYTEST_CONFIGS:
        return "pytest configuration in an ancestor of /tests"
    # A home's .local/bin and site-packages count wherever the home is: the verifier's HOME comes
    # from /etc/passwd, which the agent may edit, and uv's installer puts ~/.local/bin first on PATH.
    if (parent in path_dirs or parent.endswith("/.local/bin")) and name in index.executables:
        return "shadows an image program"
    if module and module in index.modules:
        return "shadows an image Python module"
    runs = path in code_dirs if change.is_dir else path.endswith(_CODE_SUFFIXES)
    if module and imported is not None and module not in imported and runs:
        # A library of the verifier's may import it only if present (openpyxl tries defusedxml):
        # code the agent added would run inside the verifier without the tests asking for it.
        return "a Python module the tests do not import"
    return None


_CODE_SUFFIXES = (".py", ".pyc", ".pyw", ".so")


def _code_dirs(changes: list[FileChange]) -> set[str]:
    """Every directory that holds an added Python file (at any depth): an added directory runs code
    on import (as a regular or namespace package) only if it does; ``/app/results`` of CSVs does not."""
    dirs: set[str] = set()
    for change in changes:
        if change.kind == "added" and not change.is_dir and change.path.endswith(_CODE_SUFFIXES):
            parent = PurePosixPath(_norm(change.path)).parent
            while str(parent) != "/" and str(parent) not in dirs:
                dirs.add(str(parent))
                parent = parent.parent
    return dirs


def _added_module(change: FileChange, path: str, python_dirs: set[str], workdir: str) -> str | None:
    """The top-level module name of an added entry in a directory Python searches (a Python path
    directory, any site-/dist-packages, the verifier's working directory), else None."""
    if change.kind != "added":
        return None
    p = PurePosixPath(path)
    if not (_in_site(path, python_dirs) or str(p.parent) == workdir):
        return None
    module = _MODULE.match(p.name)
    if not module or (not change.is_dir and p.suffix not in ("", *_CODE_SUFFIXES)):
        return None  # a data file is no module
    return module.group(1)


def _in_site(path: str, python_dirs: set[str]) -> bool:
    """Whether ``path`` sits directly in a Python path directory or a site-/dist-packages directory."""
    parent = str(PurePosixPath(path).parent)
    return parent in python_dirs or parent.endswith(("/site-packages", "/dist-packages"))


# What in a verifier's files names a module it runs: import statements (in Python files and in
# ``python -c`` lines alike), ``-m NAME``, importlib calls by name, and ``NAME.py`` paths it loads.
_IMPORT_NAMES = (
    re.compile(r"(?:^|[\s;:(\"'])(?:import|from)\s+([A-Za-z_]\w*)", re.M),
    re.compile(r"(?:^|\s)import\s+(?:[A-Za-z_][\w.]*\s*,\s*)+([A-Za-z_]\w*)", re.M),
    re.compile(r"(?:^|\s)-m\s*([A-Za-z_]\w*)"),
    re.compile(r"(?:import_module|__import__|find_spec|--pyargs)\(?\s*[\"']?([A-Za-z_]\w*)"),
    re.compile(r"([A-Za-z_]\w*)\.py\b"),
)


def verifier_imports(files: dict[str, bytes], declared: Iterable[str] = ()) -> frozenset[str]:
    """The top-level modules the verifier's files (tests/, by path) name: what it imports or runs
    on purpose, plus ``declared`` (verifier ``imports``). An ``import a, b, c`` names all three."""
    found: set[str] = {d.split(".")[0] for d in declared}
    for data in files.values():
        if b"\0" in data[:4096]:
            continue  # binary: a wheel or data file, not a script
        text = data.decode("utf-8", errors="replace")
        for rx in _IMPORT_NAMES:
            found.update(m.group(1) for m in rx.finditer(text))
        for line in re.findall(r"(?:^|[\s;])import\s+([A-Za-z_][\w., ]*)", text, re.M):
            found.update(part.strip().split(".")[0].split(" ")[0] for part in line.split(",") if part.strip())
    return frozenset(found)


_REQUIRES = re.compile(r"^Requires-Dist:\s*([A-Za-z0-9][A-Za-z0-9._-]*)", re.M)


def dist_modules(record: str, top_level: str | None) -> set[str]:
    """The top-level modules a distribution installed: its ``top_level.txt``, else the first path
    component of each RECORD row that is a module or package."""
    if top_level:
        return {line.strip() for line in top_level.splitlines() if line.strip() and _MODULE.match(line.strip())}
    names = set()
    for row in record.splitlines():
        first = row.split(",", 1)[0].split("/", 1)[0]
        if first.endswith((".dist-info", ".data")) or first in ("..", ""):
            continue
        m = _MODULE.match(first)
        if m and ("/" in row.split(",", 1)[0] or first.endswith((".py", ".so"))):
            names.add(m.group(1))
    return names


def dist_requires(metadata: str) -> set[str]:
    """The distribution names a ``METADATA`` file requires, normalised (PEP 503)."""
    return {canonical_name(m.group(1)) for m in _REQUIRES.finditer(metadata)}


def canonical_name(name: str) -> str:
    """PEP 503 normalised project name: ``Pytest_JSON.ctrf`` -> ``pytest-json-ctrf``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def dependency_closure(imported_added: Iterable[str], dists: dict[str, tuple[str, set[str], set[str]]]) -> set[str]:
    """The modules of the added distributions that the imported added modules need: ``dists`` maps a
    dist-info path to (distribution key, its modules, the keys it requires). Starts from the
    distributions that provide an imported module and follows requirements among the added ones."""
    by_key = {key: (mods, reqs) for key, mods, reqs in dists.values()}
    todo = [key for key, mods, _ in dists.values() if mods & set(imported_added)]
    seen: set[str] = set()
    while todo:
        key = todo.pop()
        if key in seen or key not in by_key:
            continue
        seen.add(key)
        todo.extend(by_key[key][1])
    return {m for key in seen for m in by_key[key][0]}


def dist_key_of(dist_info: str) -> str:
    """``Foo_Bar-1.0.dist-info`` -> ``foo-bar``."""
    return canonical_name(PurePosixPath(dist_info).name.rsplit(".dist-info", 1)[0].split("-")[0])


def plugin_entry_points(entry_points: dict[str, bytes | None]) -> list[str]:
    """The entry_points.txt files (of the agent's) that declare a ``[pytest11]`` plugin: pytest loads
    those by itself, so they are removed. An unparsable file is removed too (we cannot tell)."""
    found = []
    for path, data in entry_points.items():
        if data is None:
            continue
        parser = configparser.ConfigParser(interpolation=None, delimiters=("=",))
        try:
            parser.read_string(data.decode("utf-8", errors="replace"))
        except configparser.Error:
            found.append(path)
            continue
        if parser.has_section("pytest11") and parser.options("pytest11"):
            found.append(path)
    return sorted(found)


def _is_entry_points(path: str) -> bool:
    p = PurePosixPath(path)
    return p.name == "entry_points.txt" and p.parent.name.endswith((".dist-info", ".egg-info"))


def _outermost(paths: dict[str, str]) -> dict[str, str]:
    """Parents first; a path under another one of the set goes (restoring the parent covers it)."""
    out: dict[str, str] = {}
    for path in sorted(paths, key=lambda p: (p.count("/"), p)):
        if not any(_under(path, q) for q in out):
            out[path] = paths[path]
    return out


def _under(path: str, tree: str) -> bool:
    return path == tree or tree == "/" or path.startswith(tree.rstrip("/") + "/")


def _norm(path: str) -> str:
    """An absolute path without trailing slash or dot segments (``..`` is kept literally: backends
    report real entries, never ``..``)."""
    parts = [p for p in path.split("/") if p not in ("", ".")]
    return "/" + "/".join(parts)


# One exec at sandbox start, before the agent's first command: the image's PATH dirs and the names
# in them, then each Python's path dirs (user site included) and the names in those. Plain sh, so
# it runs in any image; names go one per line (a name with a newline in it is not a command anyone
# types, nor an importable module).
INDEX_SCRIPT = r"""
dirs="$PATH:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
IFS=:
for d in $dirs; do
  case "$d" in /*) ;; *) continue ;; esac
  printf 'P %s\n' "$d"  # listed even when missing: an agent could create it ahead of the real one
  [ -d "$d" ] || continue
  for f in "$d"/* "$d"/.[!.]*; do
    if [ -e "$f" ] || [ -L "$f" ]; then printf 'E %s\n' "${f##*/}"; fi
  done
  for py in python3 python; do
    [ -x "$d/$py" ] || continue
    "$d/$py" -c '
import os, site, sys
dirs = [d for d in sys.path if d]
for get in (getattr(site, "getsitepackages", None), getattr(site, "getusersitepackages", None)):
    try:
        found = get() if get else []
    except Exception:
        found = []
    dirs += [found] if isinstance(found, str) else list(found)
for d in dict.fromkeys(os.path.abspath(x) for x in dirs):
    print("S " + d)
    try:
        names = os.listdir(d)
    except OSError:
        continue
    for n in names:
        print("M " + n)
' 2>/dev/null
  done
done
"""


def parse_index(output: str) -> ImageIndex:
    """The ImageIndex from INDEX_SCRIPT's output."""
    found: dict[str, list[str]] = {"P": [], "E": [], "S": [], "M": []}
    for line in output.splitlines():
        tag, _, value = line.partition(" ")
        if tag in found:
            found[tag].append(value)
    modules = {match.group(1) for value in found["M"] if (match := _MODULE.match(value))}
    return ImageIndex(path_dirs=tuple(dict.fromkeys(found["P"])), executables=frozenset(found["E"]),
                      python_dirs=tuple(dict.fromkeys(found["S"])), modules=frozenset(modules))
