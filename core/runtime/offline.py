"""The offline verifier runtime: how tasks whose test.sh downloads its tools are verified without network.

Real Harbor tasks bootstrap their verifier from the internet::

    apt-get update; apt-get install -y curl
    curl -LsSf https://astral.sh/uv/0.9.7/install.sh | sh
    source $HOME/.local/bin/env
    uvx --with pytest==8.4.1 --with pytest-json-ctrf==0.3.5 pytest --ctrf /logs/verifier/ctrf.json /tests/test_state.py -rA

Our sandboxes have no network, and we never edit a task's files to work around that. Instead, when a
sandbox is offline, the verifier gets this runtime: the ``offline`` verifier runtime
(verifier_runtime.py, registered by the core's plugin like any other) mounts it at
``/opt/autoenvscaling-verifier/offline`` for test.sh alone (the agent never sees it), puts its
``bin/`` first on ``PATH`` and sets ``AUTOENVSCALING_OFFLINE=1``. The runtime holds:

``bin/apt-get``, ``bin/apt``
    ``update`` succeeds without network. ``install`` succeeds only when every requested package is
    already installed in the image (``dpkg-query``) or is a command this runtime provides (``curl``);
    otherwise it fails (exit 100) naming the packages, with the hint to install them in
    environment/Dockerfile. Other verbs run the image's real apt-get/apt.
``bin/curl``
    Serves an allowlist of bootstrap URLs from local equivalents: ``https://astral.sh/uv/install.sh``
    and ``https://astral.sh/uv/<version>/install.sh`` give a script that lays out uv's installer
    result (``uv``/``uvx`` in ``$HOME/.local/bin`` and ``$HOME/.local/bin/env``). Local URLs (a
    loopback address, or a name ``/etc/hosts`` maps to one) go to the image's real curl (tests probing
    a server the agent started), or to ``libexec/curl-local`` with the image's python3 when the
    image has no curl. Any other URL fails like an unresolvable host: ``curl: (6) ... network
    disabled in the offline verifier``, exit 6. A failed download leaves its ``-o`` target as it
    was (it may be ``/dev/null``, or a file the test still needs) and creates no partial file.
``bin/uv``, ``bin/uvx``
    ``uvx``/``uv tool run``/``uv run`` parse ``--with NAME==VER`` (also ``--from``,
    ``--with-requirements``, ``tool@version``) and run the command with the image's ``python3`` and
    ``PYTHONPATH`` set to the provisioned packages (console scripts such as ``pytest`` are run from
    their entry points). Like uv's tool environments, ``uvx`` hides the image's site-packages
    (``python3 -S``): a test importing a package nobody asked for fails offline as it would online. ``uv venv`` and ``uv pip install`` work too (a ``.pth`` file points the
    environment at the provisioned packages), for test.sh files that build a virtual environment.
    A requested version that was not provisioned fails inside the sandbox, naming what is
    provisioned: the test.sh then writes reward 0 and its output says why. We never substitute a
    different version for a pinned one.
``dists/<name>-<version>.whl`` and ``index.json``
    The provisioned pure-Python wheels, and an index of their versions, pinned dependencies and
    console scripts. A pure wheel is an importable zip (top-level packages and .dist-info at its
    root), so it goes on ``PYTHONPATH`` as it is: six files to upload instead of hundreds, which
    makes each offline verification ~0.1 s cheaper than unpacked directories.

Provisioning happens on the host, once, cached under ``<cache_dir>/verifier`` (``AUTOENVSCALING_CACHE``):
``pip download`` resolves each package set to pure-Python wheels (``--only-binary=:all: --platform
any --implementation py --abi none``, for Python >= 3.9, falling back to the host's Python version
for packages that need a newer one), and each wheel is stored once under ``dists/`` (files a wheel
keeps under ``<name>.data/purelib`` are moved to its root). It is locked (parallel workers share
the cache) and atomic (a crash leaves no half-written file). The default set is ``pytest==8.4.1`` and
``pytest-json-ctrf==0.3.5`` with their dependencies (pluggy, iniconfig, packaging, pygments).
Add sets with ``AUTOENVSCALING_VERIFIER_PACKAGES`` (sets separated by ``;``, requirements within a
set by spaces or commas, e.g. ``"pytest==7.4.4;pytest==8.3.5 pytest-timeout==2.3.1"``). PyPI is
used by default; an offline user points ``AUTOENVSCALING_WHEELHOUSE`` at a directory of wheels
(``pip download`` them elsewhere) and nothing is fetched. If provisioning fails, the runtime is still
uploaded with the shims and the failure is recorded in ``index.json``, so every uvx call reports it.

Limits: dependency markers are evaluated by pip for the host interpreter, so backports needed only on
Python < 3.11 (exceptiongroup, tomli) are absent unless a set names them; the images we build run
Python 3.11. Only pure-Python packages can be provisioned (the runtime must work in any image), and
they are imported from their zip, so a package that reads its own data files through ``__file__``
paths (rather than importlib.resources) would not find them. The uploaded runtime is about 1.8 MB
(pygments is most of it); its bytes are cached in-process.
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
from ..errors import AESError, MissingPrerequisite
from ..sandbox.rootfs import file_lock

DEFAULT_PACKAGES: tuple[str, ...] = ("pytest==8.4.1", "pytest-json-ctrf==0.3.5")
ENV_PACKAGES = "AUTOENVSCALING_VERIFIER_PACKAGES"
ENV_WHEELHOUSE = "AUTOENVSCALING_WHEELHOUSE"
PYTHON_FLOOR = "3.9"
# Shim files (package data) -> their path in the runtime, and whether they are executable.
SHIMS: dict[str, tuple[str, ...]] = {
    "apt-get": ("bin/apt-get", "bin/apt"),
    "curl": ("bin/curl",),
    "curl-local": ("libexec/curl-local",),
    "uv": ("bin/uv", "bin/uvx"),
    "uvshim": ("libexec/uvshim",),
    "uv-install.sh": ("libexec/uv-install.sh",),
}
_EXECUTABLE_DIRS = ("bin/",)
_RUNTIME_CACHE: dict[tuple[object, ...], dict[str, tuple[bytes, bool]]] = {}


def canonical_name(name: str) -> str:
    """PEP 503 normalised project name: ``Pytest_JSON.ctrf`` -> ``pytest-json-ctrf``."""
    return re.sub(r"[-_.]+", "-", name).lower()


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
    if wheelhouse is None and os.environ.get(ENV_WHEELHOUSE):
        wheelhouse = Path(os.environ[ENV_WHEELHOUSE])
    root = verifier_cache(cache_dir)
    key = hashlib.sha256(json.dumps([specs, PYTHON_FLOOR]).encode()).hexdigest()[:16]
    set_dir = root / "sets" / key
    if _complete(set_dir):
        return set_dir
    with file_lock(root / ".lock"):
        if _complete(set_dir):
            return set_dir
        work = root / f".tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            wheels, python = _download(specs, work / "wheels", wheelhouse)
            versions = {name: version for name, version, _ in wheels}
            dists = []
            for name, version, wheel in wheels:
                target = root / "dists" / f"{name}-{version}.whl"
                if not target.is_file():
                    _store_wheel(wheel, target)
                deps, scripts = _describe(target, versions)
                dists.append({"name": name, "version": version, "path": f"dists/{target.name}",
                              "deps": deps, "scripts": scripts, "python": python})
            staged = work / "set"
            staged.mkdir(parents=True)
            (staged / "manifest.json").write_text(json.dumps({"specs": list(specs), "dists": dists}, indent=1))
            set_dir.parent.mkdir(parents=True, exist_ok=True)
            shutil.rmtree(set_dir, ignore_errors=True)
            staged.rename(set_dir)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return set_dir


def _complete(set_dir: Path) -> bool:
    """The set's manifest and every wheel it names exist (a pruned cache is provisioned again)."""
    try:
        manifest = json.loads((set_dir / "manifest.json").read_text())
    except (OSError, ValueError):
        return False
    return all((set_dir.parent.parent / d["path"]).is_file() for d in manifest["dists"])


def _pip(args: list[str]) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", *args]
    return subprocess.run(cmd, capture_output=True, text=True)


def _download(specs: tuple[str, ...], dest: Path, wheelhouse: Path | None) -> tuple[list[tuple[str, str, Path]], str]:
    """Pure-Python wheels for ``specs`` and all their dependencies: (name, version, wheel) and the
    oldest Python they were resolved for."""
    source = ["--no-index", "--find-links", str(wheelhouse)] if wheelhouse else []
    host_python = "%d.%d" % sys.version_info[:2]
    proc = None
    for python in dict.fromkeys([PYTHON_FLOOR, host_python]):
        shutil.rmtree(dest, ignore_errors=True)
        proc = _pip(["download", "--quiet", "--progress-bar", "off", "--dest", str(dest), "--only-binary=:all:",
                     "--platform", "any", "--implementation", "py", "--abi", "none", "--python-version", python,
                     *source, *specs])
        if proc.returncode == 0:
            break
    assert proc is not None
    if proc.returncode != 0:
        errors = [line for line in proc.stderr.splitlines() if line.startswith("ERROR")] or proc.stderr.splitlines()[-1:]
        where = f"the wheelhouse {wheelhouse}" if wheelhouse else "PyPI"
        raise MissingPrerequisite(
            f"cannot provision {' '.join(specs)} from {where}: {errors[0] if errors else 'pip failed'}",
            hint=f"only pure-Python wheels can be provisioned; offline, set {ENV_WHEELHOUSE} to a directory of wheels")
    wheels = []
    for wheel in sorted(dest.glob("*.whl")):
        name, version = wheel.name.split("-")[:2]
        wheels.append((canonical_name(name), version, wheel))
    return wheels, python


def _store_wheel(wheel: Path, target: Path) -> None:
    """Keep the wheel as an importable zip. A pure wheel already is one (its top-level packages and
    .dist-info sit at the root); files under ``<name>.data/purelib`` are moved to the root."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staged = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}")
    with zipfile.ZipFile(wheel) as src:
        data_dirs = [n for n in src.namelist() if re.match(r"[^/]+\.data/(purelib|platlib)/", n)]
        if not data_dirs:
            shutil.copyfile(wheel, staged)
        else:
            with zipfile.ZipFile(staged, "w", zipfile.ZIP_DEFLATED) as out:
                for item in src.infolist():
                    name = re.sub(r"^[^/]+\.data/(purelib|platlib)/", "", item.filename)
                    if re.match(r"[^/]+\.data/", name):
                        continue  # scripts, headers, data: not importable, not needed
                    out.writestr(name, src.read(item))
    staged.rename(target)


def _describe(wheel: Path, versions: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """The set's pinned versions of this distribution's dependencies, and its console scripts."""
    with zipfile.ZipFile(wheel) as archive:
        info = next(n.split("/")[0] for n in archive.namelist() if n.split("/")[0].endswith(".dist-info"))
        dist = metadata.PathDistribution(zipfile.Path(archive, info + "/"))  # type: ignore[arg-type]
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
                  cache_dir: Path | None = None) -> dict[str, tuple[bytes, bool]]:
    """The files of the runtime, relative to /opt/autoenvscaling-verifier: ``{path: (bytes, executable)}``.

    Provisions the package sets on first use (seconds, once per cache) and keeps the bytes in this
    process. Never raises for a provisioning failure: it is recorded in index.json for the shims to
    report inside the sandbox, and warned about here.
    """
    sets = package_sets if package_sets is not None else configured_sets()
    key = (str(verifier_cache(cache_dir)), os.environ.get(ENV_WHEELHOUSE), tuple(sets))
    cached = _RUNTIME_CACHE.get(key)
    if cached is not None:
        return cached
    files = shim_files()
    problems: list[str] = []
    index: dict[str, dict[str, dict[str, object]]] = {}
    root = verifier_cache(cache_dir)
    for specs in sets:
        try:
            manifest = json.loads((provision(specs, cache_dir=cache_dir) / "manifest.json").read_text())
        except AESError as exc:
            problems.append(exc.message)
            warnings.warn(f"autoenvscaling: offline verifier: {exc.message} ({exc.hint})", stacklevel=2)
            continue
        for dist in manifest["dists"]:
            versions = index.setdefault(dist["name"], {})
            if dist["version"] in versions:
                continue
            versions[dist["version"]] = {k: dist[k] for k in ("path", "deps", "scripts", "python")}
            files[dist["path"]] = ((root / dist["path"]).read_bytes(), False)
    files["index.json"] = (json.dumps({"dists": index, "problems": problems}, indent=1).encode(), False)
    _RUNTIME_CACHE[key] = files
    return files


def shim_files() -> dict[str, tuple[bytes, bool]]:
    """Only the shims (no packages): what a sandbox gets when nothing could be provisioned."""
    base = resources.files("autoenvscaling.runtime") / "shims"
    files: dict[str, tuple[bytes, bool]] = {}
    for source, targets in SHIMS.items():
        data = (base / source).read_bytes()
        for target in targets:
            files[target] = (data, target.startswith(_EXECUTABLE_DIRS))
    return files


def runtime_size(files: dict[str, tuple[bytes, bool]]) -> int:
    """Total bytes of a runtime (what each offline verification uploads)."""
    return sum(len(data) for data, _ in files.values())
