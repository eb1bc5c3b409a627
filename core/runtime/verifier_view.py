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

View = Literal["protected", "agent"]

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
    ``entry_points.txt`` files to read (after the restores) for ``[pytest11]`` plugins."""

    model_config = ConfigDict(frozen=True)

    view: View
    restore: dict[str, str] = Field(default_factory=dict)  # path -> why
    entry_points: tuple[str, ...] = ()
    kept_by_agent_paths: int = 0  # changes a rule would have hidden that agent_paths kept visible


def plan_view(view: View, changes: Iterable[FileChange], index: ImageIndex, *, workdir: str = "/",
              agent_paths: Iterable[str] = ()) -> ViewPlan:
    """The paths the verifier must see as the image has them. View "agent" keeps every change."""
    if view == "agent":
        return ViewPlan(view=view)
    keep = tuple(_norm(p) for p in agent_paths)
    trees = index.protected_trees()
    path_dirs = {_norm(d) for d in index.path_dirs}
    python_dirs = {_norm(d) for d in index.python_dirs}
    workdir = _norm(workdir)
    restore: dict[str, str] = {}
    entry_points: list[str] = []
    kept = 0
    for change in changes:
        path = _norm(change.path)
        why = _rule(change, path, trees, path_dirs, python_dirs, index, workdir)
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
                    kept_by_agent_paths=kept)


def _rule(change: FileChange, path: str, trees: tuple[str, ...], path_dirs: set[str], python_dirs: set[str],
          index: ImageIndex, workdir: str) -> str | None:
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
    module = _MODULE.match(name)
    top_site = parent in python_dirs or parent.endswith(("/site-packages", "/dist-packages"))
    if module and module.group(1) in index.modules and (top_site or parent == workdir):
        return "shadows an image Python module"
    return None


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
    path_dirs: list[str] = []
    python_dirs: list[str] = []
    executables: set[str] = set()
    modules: set[str] = set()
    for line in output.splitlines():
        tag, _, value = line.partition(" ")
        if tag == "P":
            path_dirs.append(value)
        elif tag == "E":
            executables.add(value)
        elif tag == "S":
            python_dirs.append(value)
        elif tag == "M":
            match = _MODULE.match(value)
            if match:
                modules.add(match.group(1))
    return ImageIndex(path_dirs=tuple(dict.fromkeys(path_dirs)), executables=frozenset(executables),
                      python_dirs=tuple(dict.fromkeys(python_dirs)), modules=frozenset(modules))
