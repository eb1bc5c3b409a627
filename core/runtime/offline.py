"""The offline verifier runtime: how tasks whose test.sh downloads its tools are verified without network.

Real Harbor tasks bootstrap their verifier from the internet (``apt-get install -y curl``, uv's
install script, ``uvx --with pytest==8.4.1 ... pytest``). Our sandboxes have no network, and we never
edit a task's files to work around that. Instead, when a sandbox is offline, the verifier gets this
runtime: the ``offline`` verifier runtime (verifier_runtime.py, registered by the core's plugin like
any other) mounts it at ``/opt/autoenvscaling-verifier/offline`` for test.sh alone (the agent never
sees it), puts its ``bin/`` first on ``PATH`` and sets ``AUTOENVSCALING_OFFLINE=1`` (and points pip at
its wheels alone: ``PIP_NO_INDEX``, ``PIP_FIND_LINKS``). It holds the
shims (``bin/apt-get``, ``bin/curl``, ``bin/uv``/``uvx``, ``bin/pip``/``pip3``: what each does offline
is the table in docs/offline-verification.md), the provisioned pure-Python wheels (``dists/``,
listed in ``index.json``) and ``python/``, a CPython of its own (Debian bookworm's 3.11 with its glibc
and loader) for images without python3, used by the shims only. We never substitute a different version
for a pinned one: what was not provisioned fails inside the sandbox, naming what is.

Provisioning happens on the host, once, cached under ``<cache_dir>/verifier``, locked and atomic:
``pip download`` of pure-Python wheels per package set (the default set, plus
``AUTOENVSCALING_VERIFIER_PACKAGES``; ``AUTOENVSCALING_WHEELHOUSE`` instead of PyPI), and the Python
built with ``mmdebstrap --variant=extract``. A failure of either is recorded in the runtime
(``index.json``, ``python-missing``) for the shims to report. How and why, and the limits:
docs/offline-verification.md.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import uuid
import warnings
import zipfile
from importlib import metadata, resources
from pathlib import Path

from ..config import cache_dir as default_cache_dir
from ..errors import AESError, BuildError, MissingPrerequisite
from ..sandbox.rootfs import build_once, mmdebstrap
from ..sandbox.wheels import ENV_WHEELHOUSE, configured_wheelhouse, pip_download, pip_failure
from .paths import VERIFIER_RUNTIME
from .verifier_view import canonical_name

DEFAULT_PACKAGES: tuple[str, ...] = ("pytest==8.4.1", "pytest-json-ctrf==0.3.5")
ENV_PACKAGES = "AUTOENVSCALING_VERIFIER_PACKAGES"
PYTHON_FLOOR = "3.9"
#: part of every set's key: bump when how dists/ is laid out changes (2: wheels' own names; 3: the
#: host Python's bytecode beside each module, stored per Python version)
DISTS_LAYOUT = 3
# Shim files (package data) -> their path in the runtime, and whether they are executable.
SHIMS: dict[str, tuple[str, ...]] = {
    "apt-get": ("bin/apt-get", "bin/apt"),
    "curl": ("bin/curl",),
    "curl-local": ("libexec/curl-local",),
    "uv": ("bin/uv", "bin/uvx"),
    "pip": ("bin/pip", "bin/pip3"),
    "uvshim": ("libexec/uvshim",),
    "uv-install.sh": ("libexec/uv-install.sh",),
}
_EXECUTABLE_DIRS = ("bin/",)
# The runtime's own Python (python/ in the runtime), for images without python3.
PYTHON_SUITE = "bookworm"
PYTHON_VERSION = "3.11"
PYTHON_DEBS = ("python3.11-minimal", "libpython3.11-stdlib")
PYTHON_LAYOUT = 1  # bump when what _assemble_python lays out changes
PYTHON_MISSING = "python-missing"  # in the runtime when the Python could not be built: why
# Extension modules left out: CPython's tests, and those whose libraries would dominate the upload.
SKIPPED_EXTENSIONS = re.compile(r"^(_test\w*|_ctypes_test|_xxtestfuzz|_xxsubinterpreters|xxlimited\w*|_ssl|_hashlib|_dbm|"
                                r"nis|readline|ossaudiodev|_crypt)\.")
SKIPPED_STDLIB = frozenset({"test", "idlelib", "tkinter", "turtledemo", "lib2to3", "ensurepip", "pydoc_data",
                            "site-packages", "dist-packages", "lib-dynload", "__pycache__"})
_RUNTIME_CACHE: dict[tuple[object, ...], dict[str, tuple[bytes, bool]]] = {}


def configured_sets() -> list[tuple[str, ...]]:
    """The package sets to provision: the default set plus those in AUTOENVSCALING_VERIFIER_PACKAGES."""
    sets = [DEFAULT_PACKAGES]
    for chunk in os.environ.get(ENV_PACKAGES, "").split(";"):
        specs = tuple(s for s in re.split(r"[\s,]+", chunk) if s)
        if specs and specs not in sets:
            sets.append(specs)
    return sets


def verifier_cache(cache_dir: Path | None = None) -> Path:
    return Path(cache_dir or default_cache_dir()) / "verifier"


def provision(specs: tuple[str, ...] | list[str], *, cache_dir: Path | None = None,
              wheelhouse: Path | None = None) -> Path:
    """Resolve ``specs`` to pure-Python wheels and store each in the shared cache.

    Returns the set's directory, whose ``manifest.json`` lists the distributions (name, version,
    wheel path relative to the verifier cache, pinned dependencies, console scripts). Idempotent and
    safe to call from parallel processes. Raises MissingPrerequisite when pip cannot resolve the set.
    """
    specs = tuple(sorted({s.strip() for s in specs if s.strip()}))
    wheelhouse = configured_wheelhouse(wheelhouse)
    root = verifier_cache(cache_dir)
    host = "py%d%d" % sys.version_info[:2]  # the stored zips hold this Python's bytecode
    key = hashlib.sha256(json.dumps([specs, PYTHON_FLOOR, DISTS_LAYOUT, host]).encode()).hexdigest()[:16]
    set_dir = root / "sets" / key

    def build(work: Path) -> Path:
        wheels, python = _download(specs, work / "wheels", wheelhouse)
        versions = {name: version for name, version, _ in wheels}
        dists = []
        for name, version, wheel in wheels:
            # In the runtime, dists/ under the wheel's own name (pip finds it there: --find-links);
            # in the cache, per layout and host Python, as the bytecode inside differs.
            stored = f"dists/layout{DISTS_LAYOUT}-{host}/{wheel.name}"
            if not (root / stored).is_file():
                _store_wheel(wheel, root / stored, f"{VERIFIER_RUNTIME}/offline/dists/{wheel.name}")
            deps, scripts = _describe(root / stored, versions)
            dists.append({"name": name, "version": version, "path": f"dists/{wheel.name}", "stored": stored,
                          "deps": deps, "scripts": scripts, "python": python})
        staged = work / "set"
        staged.mkdir(parents=True)
        (staged / "manifest.json").write_text(json.dumps({"specs": list(specs), "dists": dists}, indent=1))
        return staged

    return build_once(set_dir, root / ".lock", build, ready=lambda: _complete(set_dir))


def _complete(set_dir: Path) -> bool:
    """The set's manifest and every wheel it names exist (a pruned cache is provisioned again)."""
    try:
        manifest = json.loads((set_dir / "manifest.json").read_text())
    except (OSError, ValueError):
        return False
    return all((set_dir.parent.parent / d["stored"]).is_file() for d in manifest["dists"])


def _download(specs: tuple[str, ...], dest: Path, wheelhouse: Path | None) -> tuple[list[tuple[str, str, Path]], str]:
    """Pure-Python wheels for ``specs`` and all their dependencies: (name, version, wheel) and the
    oldest Python they were resolved for."""
    proc = None
    for python in dict.fromkeys([PYTHON_FLOOR, "%d.%d" % sys.version_info[:2]]):  # then the host's own Python
        proc = pip_download(specs, dest, wheelhouse, platforms=("any",), python=python)
        if proc.returncode == 0:
            break
    assert proc is not None
    if proc.returncode != 0:
        where = f"the wheelhouse {wheelhouse}" if wheelhouse else "PyPI"
        raise MissingPrerequisite(
            f"cannot provision {' '.join(specs)} from {where}: {pip_failure(proc)}",
            hint=f"only pure-Python wheels can be provisioned; offline, set {ENV_WHEELHOUSE} to a directory of wheels")
    names = [(wheel.name.split("-"), wheel) for wheel in sorted(dest.glob("*.whl"))]
    return [(canonical_name(parts[0]), parts[1], wheel) for parts, wheel in names], python


def _store_wheel(wheel: Path, target: Path, mounted_at: str) -> None:
    """Keep the wheel as an importable zip (a pure wheel already is one: its top-level packages and
    .dist-info sit at the root; files under ``<name>.data/purelib`` are moved to the root), with an
    unchecked-hash .pyc beside each .py, compiled by this Python. zipimport loads that bytecode
    instead of compiling every module at every start (pytest and its plugins: about a third of a
    verifier's pytest start). An interpreter of another version sees a foreign magic number and
    compiles the source, as it did without. pip installs the zip like the wheel it came from.
    ``mounted_at``: the zip's path in the sandbox, which tracebacks name."""
    import compileall
    import py_compile
    import tempfile

    target.parent.mkdir(parents=True, exist_ok=True)
    staged = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}")
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp, zipfile.ZipFile(wheel) as src:
        tree = Path(tmp)
        for item in src.infolist():
            name = re.sub(r"^[^/]+\.data/(purelib|platlib)/", "", item.filename)
            if item.is_dir() or re.match(r"[^/]+\.data/", name):
                continue  # scripts, headers, data: not importable, not needed
            if name.startswith("/") or ".." in name.split("/"):
                raise BuildError(f"{wheel.name} holds a file outside its root ({item.filename})",
                                 hint="provision wheels from PyPI or a wheelhouse you trust")
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            (tree / name).write_bytes(src.read(item))
        # A module this Python cannot compile (another version's syntax) is left as source.
        compileall.compile_dir(tmp, quiet=2, legacy=True, ddir=mounted_at, workers=1,
                               invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
        with zipfile.ZipFile(staged, "w", zipfile.ZIP_DEFLATED) as out:
            for path in sorted(p for p in tree.rglob("*") if p.is_file()):
                out.write(path, path.relative_to(tree).as_posix())
    staged.rename(target)


def _describe(wheel: Path, versions: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """The set's pinned versions of this distribution's dependencies, and its console scripts."""
    with zipfile.ZipFile(wheel) as archive:
        info = next(n.split("/")[0] for n in archive.namelist() if n.split("/")[0].endswith(".dist-info"))
        dist = metadata.PathDistribution(zipfile.Path(archive, info + "/"))
        requires = dist.requires or []
        scripts = {ep.name: ep.value for ep in dist.entry_points if ep.group == "console_scripts"}
    deps: dict[str, str] = {}
    for requirement in requires:
        if re.search(r"extra\s*==", requirement):
            continue  # optional extras are never requested by a bare name
        name = canonical_name(re.split(r"[\s\[<>=!~;(]", requirement.strip(), maxsplit=1)[0])
        if name in versions:
            deps[name] = versions[name]
    return deps, scripts


def runtime_files(package_sets: list[tuple[str, ...]] | None = None, *,
                  cache_dir: Path | None = None, python: bool = True) -> dict[str, tuple[bytes, bool]]:
    """The files of the runtime, relative to its mount point: ``{path: (bytes, executable)}``.

    Provisions the package sets and builds the runtime's Python on first use (seconds to a minute,
    once per cache) and keeps the bytes in this process. Never raises for either failure: it is
    recorded in the runtime (index.json, python-missing) for the shims to report inside the sandbox,
    and warned about here. ``python=False`` leaves the Python out (tests of the shims alone).
    """
    sets = package_sets if package_sets is not None else configured_sets()
    key = (str(verifier_cache(cache_dir)), os.environ.get(ENV_WHEELHOUSE), tuple(sets), python)
    cached = _RUNTIME_CACHE.get(key)
    if cached is not None:
        return cached
    files = shim_files()
    files.update(_package_files(sets, cache_dir))
    if python:
        files.update(python_files(cache_dir))
    _RUNTIME_CACHE[key] = files
    return files


def _package_files(sets: list[tuple[str, ...]], cache_dir: Path | None) -> dict[str, tuple[bytes, bool]]:
    """The provisioned wheels of ``sets`` and the index.json that lists them (and what failed)."""
    files: dict[str, tuple[bytes, bool]] = {}
    problems: list[str] = []
    index: dict[str, dict[str, dict[str, object]]] = {}
    root = verifier_cache(cache_dir)
    for specs in sets:
        try:
            manifest = json.loads((provision(specs, cache_dir=cache_dir) / "manifest.json").read_text())
        except AESError as exc:
            problems.append(exc.message)
            warnings.warn(f"autoenvscaling: offline verifier: {exc.message} ({exc.hint})", stacklevel=3)
            continue
        for dist in manifest["dists"]:
            versions = index.setdefault(dist["name"], {})
            if dist["version"] in versions:
                continue
            versions[dist["version"]] = {k: dist[k] for k in ("path", "deps", "scripts", "python")}
            files[dist["path"]] = ((root / dist["stored"]).read_bytes(), False)
    files["index.json"] = (json.dumps({"dists": index, "problems": problems}, indent=1).encode(), False)
    return files


def python_files(cache_dir: Path | None = None) -> dict[str, tuple[bytes, bool]]:
    """The runtime's Python under ``python/``, or ``python-missing`` saying why it could not be built."""
    try:
        built = provided_python(cache_dir)
    except AESError as exc:
        warnings.warn(f"autoenvscaling: offline verifier: {exc.message} ({exc.hint})", stacklevel=3)
        return {PYTHON_MISSING: (f"{exc.message} (hint: {exc.hint})\n".encode(), False)}
    return {f"python/{path.relative_to(built).as_posix()}": (path.read_bytes(), bool(path.stat().st_mode & 0o100))
            for path in sorted(built.rglob("*")) if path.is_file()}


def shim_files() -> dict[str, tuple[bytes, bool]]:
    """Only the shims (no packages): what a sandbox gets when nothing could be provisioned."""
    base = resources.files("autoenvscaling.runtime") / "shims"
    return {target: ((base / source).read_bytes(), target.startswith(_EXECUTABLE_DIRS))
            for source, targets in SHIMS.items() for target in targets}


def runtime_size(files: dict[str, tuple[bytes, bool]]) -> int:
    """Total bytes of a runtime (what each offline verification uploads)."""
    return sum(len(data) for data, _ in files.values())


# -- the runtime's own Python ------------------------------------------------------------------------
# uv runs tools on the system's python3 and, when there is none, downloads a managed CPython. The
# offline runtime cannot download, so it carries one: Debian's CPython with its own glibc and loader.

def python_key() -> str:
    """Names one build of the runtime's Python (the recipe and the layout)."""
    recipe = [PYTHON_SUITE, PYTHON_DEBS, PYTHON_LAYOUT, sorted(SKIPPED_STDLIB), SKIPPED_EXTENSIONS.pattern]
    return hashlib.sha256(json.dumps(recipe).encode()).hexdigest()[:16]


def provided_python(cache_dir: Path | None = None, *, build: bool = True) -> Path:
    """The directory of the runtime's Python (bin/python3, lib/...), built on first use (~30 s:
    mmdebstrap extracts the Debian packages, then it is assembled and checked) and cached under
    ``<cache>/verifier/python-<key>``. Safe between parallel processes (locked, renamed into place
    complete). Raises BuildError/MissingPrerequisite when it cannot be built, or with ``build=False``
    when it is not built yet."""
    root = verifier_cache(cache_dir)
    target = root / f"python-{python_key()}"
    if not build and not target.is_dir():
        raise BuildError("the offline verifier's Python is not built yet",
                         hint="it is built on the first offline verification (mmdebstrap, Debian's archive once)")

    def assemble(work: Path) -> Path:
        mmdebstrap(PYTHON_SUITE, work / "debs", packages=PYTHON_DEBS, variant="extract",
                   what="the offline verifier's Python")
        _assemble_python(work / "debs", work / "python")
        return work / "python"

    return build_once(target, root / ".python.lock", assemble)


def _assemble_python(debs: Path, out: Path) -> None:
    """Lay out the interpreter from the extracted packages: the binary, the loader and the shared
    libraries the binary and the kept extension modules need, the wrapper scripts, then the standard
    library compiled into lib/python311.zip. Checks the result runs."""
    loader = _loader(debs)
    binary = debs / "usr" / "bin" / f"python{PYTHON_VERSION}"
    stdlib = debs / "usr" / "lib" / f"python{PYTHON_VERSION}"
    extensions = [e for e in sorted((stdlib / "lib-dynload").glob("*.so"))
                  if not SKIPPED_EXTENSIONS.match(e.name)]
    lib = out / "lib"
    dynload = lib / f"python{PYTHON_VERSION}" / "lib-dynload"
    dynload.mkdir(parents=True)
    (out / "bin").mkdir()
    shutil.copyfile(binary, lib / f"c{binary.name}")  # lib/cpython3.11: run through the wrappers only
    shutil.copyfile(loader, lib / "ld.so")
    (lib / "ld.so").chmod(0o755)
    for name, path in _shared_libraries(loader, debs, [binary, *extensions]).items():
        shutil.copyfile(path, lib / name)
    for extension in extensions:
        shutil.copyfile(extension, dynload / extension.name)
    for name in ("python3", "python", f"python{PYTHON_VERSION}"):
        (out / "bin" / name).write_text(_WRAPPER.format(binary=f"c{binary.name}"))
        (out / "bin" / name).chmod(0o755)
    _zip_stdlib(stdlib, out)
    _check_python(out)


# The interpreter runs through its own loader and libraries (never the image's, whose glibc may be
# older); --argv0 keeps sys.executable at this script, so sys.prefix (found from it), subprocesses of
# sys.executable and virtual environments (whose bin/python links here) all work.
_WRAPPER = """#!/bin/sh
# The offline verifier's own Python (see autoenvscaling/runtime/offline.py), for images without python3.
here=$(dirname "$(readlink -f "$0")")
exec "$here/../lib/ld.so" --library-path "$here/../lib" --argv0 "$0" "$here/../lib/{binary}" "$@"
"""


def _loader(debs: Path) -> Path:
    """glibc's dynamic loader among the extracted packages (ld-linux-<arch>.so.N)."""
    for candidate in _library_dirs(debs, "ld-linux*.so.*"):
        if candidate.is_file() and not candidate.is_symlink():
            return candidate
    raise BuildError(f"no glibc loader among the packages extracted in {debs}",
                     hint=f"check that {PYTHON_DEBS[0]} exists in Debian {PYTHON_SUITE} for this architecture")


def _library_dirs(debs: Path, name: str = "") -> list[Path]:
    """The multiarch library directories of the extracted packages (or what ``name`` matches in them)."""
    pattern = "*-linux-gnu*" + (f"/{name}" if name else "")
    return sorted(debs.glob(f"lib/{pattern}")) + sorted(debs.glob(f"usr/lib/{pattern}"))


def _shared_libraries(loader: Path, debs: Path, elves: list[Path]) -> dict[str, Path]:
    """{soname: file} of every library the ``elves`` load, glibc's included, as the extracted
    packages' own loader resolves them (``ld.so --list``). One found outside the packages (the
    host's) or not at all is an error: the runtime would not run in an image without it."""
    dirs = [str(d) for d in _library_dirs(debs)]
    found: dict[str, Path] = {}
    for elf in elves:
        proc = subprocess.run([str(loader), "--library-path", ":".join(dirs), "--list", str(elf)],
                              capture_output=True, text=True)
        for line in proc.stdout.splitlines():
            name, arrow, rest = line.strip().partition(" => ")
            if not arrow or name.startswith("linux-vdso") or "ld-linux" in name:
                continue
            path = Path(rest.rsplit(" (", 1)[0])
            if rest.startswith("not found") or not path.resolve().is_relative_to(debs.resolve()):
                raise BuildError(f"{elf.name} needs {name}, which the extracted packages do not provide ({rest})",
                                 hint="report it: the runtime's Python must not depend on the host's libraries")
            found[name] = path.resolve()
    return found


def _zip_stdlib(stdlib: Path, out: Path) -> None:
    """The pure-Python standard library, compiled by the interpreter itself (unchecked hash-based
    .pyc beside each .py: nothing to write at run time on a read-only mount, ~1 s less per pytest
    start than compiling), zipped into lib/python311.zip; lib/python3.X/os.py stays as the landmark
    by which the interpreter finds its prefix."""
    version = PYTHON_VERSION.replace(".", "")
    staged = out / "lib" / f"python{PYTHON_VERSION}-stdlib"
    for source in _stdlib_sources(stdlib):
        target = staged / source.relative_to(stdlib)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    zip_path = out / "lib" / f"python{version}.zip"
    code = ("import compileall, py_compile, sys; sys.exit(not compileall.compile_dir(sys.argv[1], quiet=1, "
            "legacy=True, ddir=sys.argv[2], invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH))")
    _run_python(out, ["-S", "-c", code, str(staged), f"{VERIFIER_RUNTIME}/offline/python/lib/python{version}.zip"],
                "compiling its standard library")
    with zipfile.ZipFile(zip_path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for path in sorted(p for p in staged.rglob("*") if p.is_file()):
            archive.write(path, path.relative_to(staged).as_posix())
    shutil.copyfile(stdlib / "os.py", out / "lib" / f"python{PYTHON_VERSION}" / "os.py")
    shutil.rmtree(staged)


def _stdlib_sources(stdlib: Path) -> list[Path]:
    """The standard library's .py files, without the packages in SKIPPED_STDLIB."""
    found = [(path, path.relative_to(stdlib).parts) for path in sorted(stdlib.rglob("*.py"))]
    return [path for path, parts in found
            if not SKIPPED_STDLIB & set(parts[:-1]) and not parts[0].startswith("config-")]


def _check_python(out: Path) -> None:
    """The assembled interpreter starts with an empty environment, finds its prefix and imports what
    verifiers use (raises BuildError naming what failed)."""
    code = ("import sys, json, sqlite3, ctypes, decimal, zlib, bz2, lzma, hashlib, subprocess, unittest, asyncio, "
            "urllib.request, http.server, os; assert sys.prefix == os.path.realpath(sys.argv[1]), sys.prefix; "
            "print(sys.version.split()[0])")
    _run_python(out, ["-S", "-c", code, str(out)], "starting it")


def _run_python(out: Path, args: list[str], doing: str) -> None:
    """Run the assembled interpreter with ``args`` and an empty environment (BuildError when it fails)."""
    proc = subprocess.run([str(out / "bin" / "python3"), *args], capture_output=True, text=True, env={},
                          timeout=600)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
        raise BuildError(f"the offline verifier's Python failed {doing}: {tail[0]}",
                         hint="report it with `autoenvscaling doctor --json`")
