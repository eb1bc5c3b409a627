"""Every distribution works from its wheel, not only from an editable install.

The tests run on editable installs, which read files straight from the checkout, so a file that a
distribution's wheel leaves out goes unnoticed until someone installs the wheel (issue 23: the
gpu_kernels wheel lacked image/check.py and every proposal failed). Here the wheel of the core, each
plugin and the trainer is built once per session, in parallel, from a clean copy of the distribution
(the files git knows of, no build/ or *.egg-info leftovers, plus planted __pycache__ files), and its file
list is compared with the import package's source tree: every file under the package folder must be in
the wheel, and nothing else may be (no tests, no bytecode, no build leftovers).

`bash scripts/wheel_smoke.sh` goes further: it installs these wheels into a fresh virtual environment
and generates and admits one task per domain.
"""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PLANTED = "planted.cpython-311.pyc"


@dataclass(frozen=True)
class Dist:
    name: str       # distribution name, as in [project] name
    dir: Path       # the folder holding its pyproject.toml
    package: str    # its import package
    source: Path    # the package's source folder (core/ for autoenvscaling)

    @property
    def pyproject(self) -> str:
        return (self.dir / "pyproject.toml").relative_to(ROOT).as_posix()


def distributions() -> list[Dist]:
    dirs = [ROOT, *sorted(p.parent for p in ROOT.glob("plugins/*/pyproject.toml"))]
    if (ROOT / "trainer" / "pyproject.toml").is_file():
        dirs.append(ROOT / "trainer")
    found = []
    for d in dirs:
        meta = tomllib.loads((d / "pyproject.toml").read_text())
        name = meta["project"]["name"]
        package = name.replace("-", "_")
        package_dir = meta.get("tool", {}).get("setuptools", {}).get("package-dir", {})
        found.append(Dist(name, d, package, d / package_dir.get(package, package)))
    return found


DISTS = distributions()


def git_files(path: Path) -> list[Path]:
    """Files under `path` that git tracks or would track (untracked but not ignored) and that exist."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "."],
                         cwd=path, capture_output=True, check=True).stdout.decode()
    return sorted({path / f for f in out.split("\0") if f and (path / f).is_file()})


def is_bytecode(rel: Path) -> bool:
    return "__pycache__" in rel.parts or rel.suffix in (".pyc", ".pyo")


def source_files(dist: Dist) -> set[str]:
    """The wheel paths the package's source tree should produce: every file git knows of under the
    package folder except bytecode. Folders named tests/ inside the package stay: there they are data
    (the swe plugin's seed repositories, the proposer's task skeleton)."""
    return {f"{dist.package}/{f.relative_to(dist.source).as_posix()}"
            for f in git_files(dist.source) if not is_bytecode(f.relative_to(dist.source))}


def compare(expected: set[str], wheel_names: list[str]) -> tuple[list[str], list[str]]:
    """(missing, stray): source files the wheel lacks, and wheel files that are not source files.
    The wheel's own metadata (*.dist-info/) and folder entries are not compared."""
    shipped = {n for n in wheel_names if not n.endswith("/") and ".dist-info/" not in n}
    return sorted(expected - shipped), sorted(shipped - expected)


def stage(dist: Dist, into: Path) -> Path:
    """A copy of the distribution as a fresh checkout holds it: its own top-level files, the package
    source and its tests/ folder (to prove the tests stay out), plus bytecode planted in every folder of
    the package that holds Python code (to prove __pycache__ stays out)."""
    into.mkdir(parents=True)
    keep = [f for f in git_files(dist.dir) if f.parent == dist.dir]
    for top in (dist.source, dist.dir / "tests"):
        if top.is_dir():
            keep += git_files(top)
    for f in keep:
        target = into / f.relative_to(dist.dir)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f, target)
    staged_source = into / dist.source.relative_to(dist.dir)
    for folder in {p.parent for p in staged_source.rglob("*.py")}:
        (folder / "__pycache__").mkdir(exist_ok=True)
        (folder / "__pycache__" / PLANTED).write_bytes(b"")
    return into


def build(dist: Dist, tmp: Path) -> Path | str:
    """The built wheel, or pip's error output."""
    src = stage(dist, tmp / "src" / dist.name)
    out = tmp / "wheels" / dist.name
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                           "--wheel-dir", str(out), str(src)], capture_output=True, text=True, env=env, timeout=300)
    wheels = list(out.glob("*.whl")) if out.is_dir() else []
    if proc.returncode != 0 or len(wheels) != 1:
        return f"pip wheel {dist.dir.relative_to(ROOT).as_posix() or '.'} failed ({proc.returncode}):\n" \
               f"{proc.stdout[-3000:]}{proc.stderr[-3000:]}"
    return wheels[0]


@pytest.fixture(scope="session")
def wheels(tmp_path_factory) -> dict[str, Path | str]:
    """One wheel per distribution, built in parallel (about 2 s each)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout to know the package's source files")
    tmp = tmp_path_factory.mktemp("wheels")
    with ThreadPoolExecutor(max_workers=max(2, min(4, os.cpu_count() or 2))) as pool:
        built = dict(zip((d.name for d in DISTS), pool.map(lambda d: build(d, tmp), DISTS)))
    return built


def wheel_of(wheels: dict[str, Path | str], dist: Dist) -> zipfile.ZipFile:
    built = wheels[dist.name]
    if isinstance(built, str):
        pytest.fail(built)
    return zipfile.ZipFile(built)


def test_every_distribution_is_checked():
    names = {d.name for d in DISTS}
    assert {"autoenvscaling", "autoenvscaling-trainer"} <= names
    assert len(names) == len(list(ROOT.glob("plugins/*/pyproject.toml"))) + 2
    for d in DISTS:
        assert (d.source / "__init__.py").is_file(), f"{d.name}: no package folder at {d.source}"


def test_the_comparison_reports_missing_and_stray_files():
    # The positive control: the very bug of issue 23 (the gpu_kernels wheel without image/check.py)
    # and the leftovers a careless declaration lets in must both be reported.
    gpu = next(d for d in DISTS if d.name == "autoenvscaling-gpu-kernels")
    expected = source_files(gpu)
    check = "autoenvscaling_gpu_kernels/image/check.py"
    assert check in expected
    shipped = sorted(expected - {check}) + ["autoenvscaling_gpu_kernels-0.1.0.dist-info/RECORD",
                                            "autoenvscaling_gpu_kernels/__pycache__/cli.cpython-311.pyc",
                                            "tests/test_domain.py"]
    missing, stray = compare(expected, shipped)
    assert missing == [check]
    assert stray == ["autoenvscaling_gpu_kernels/__pycache__/cli.cpython-311.pyc", "tests/test_domain.py"]
    assert compare(expected, sorted(expected)) == ([], [])


@pytest.mark.parametrize("dist", DISTS, ids=[d.name for d in DISTS])
def test_the_wheel_holds_exactly_the_package_source(wheels, dist):
    names = wheel_of(wheels, dist).namelist()
    missing, stray = compare(source_files(dist), names)
    problems = []
    if missing:
        problems.append(f"the {dist.name} wheel lacks {len(missing)} file(s) of {dist.package}: "
                        + ", ".join(missing)
                        + f"\n  -> declare them in {dist.pyproject} ([tool.setuptools] packages / package-data)")
    if stray:
        problems.append(f"the {dist.name} wheel carries {len(stray)} file(s) that are not package source: "
                        + ", ".join(stray)
                        + f"\n  -> exclude them in {dist.pyproject} (packages.find exclude / exclude-package-data)")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("dist", DISTS, ids=[d.name for d in DISTS])
def test_the_wheel_declares_the_entry_points(wheels, dist):
    # The plugins are found through their [autoenvscaling] entry point and the CLI through its script:
    # a wheel without them installs but does nothing.
    whl = wheel_of(wheels, dist)
    meta = tomllib.loads((dist.dir / "pyproject.toml").read_text())["project"]
    declared = {group: dict(entries) for group, entries in meta.get("entry-points", {}).items()}
    if meta.get("scripts"):
        declared["console_scripts"] = dict(meta["scripts"])
    found = configparser.ConfigParser(delimiters=("=",))
    found.optionxform = str
    name = next((n for n in whl.namelist() if n.endswith(".dist-info/entry_points.txt")), None)
    if name:
        found.read_string(whl.read(name).decode())
    shipped = {group: dict(found[group]) for group in found.sections()}
    assert shipped == declared, f"{dist.name}: entry points in the wheel differ from {dist.pyproject}"
