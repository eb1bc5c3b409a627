"""Packaging: every folder of core/ with Python code is a listed package, and package data ships."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "core"


def listed_packages() -> set[str]:
    return set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])


def code_folders() -> set[str]:
    folders = {p.parent for p in CORE.rglob("*.py") if "__pycache__" not in p.parts}
    return {".".join(("autoenvscaling", *f.relative_to(CORE).parts)) for f in folders}


def test_every_code_folder_is_a_listed_package():
    missing = sorted(code_folders() - listed_packages())
    assert not missing, f"add to [tool.setuptools] packages in pyproject.toml: {missing}"


def test_every_listed_package_exists():
    stale = sorted(p for p in listed_packages() if not (CORE.joinpath(*p.split(".")[1:]) / "__init__.py").is_file())
    assert not stale, f"listed in pyproject.toml but not a package folder with __init__.py: {stale}"


def test_templates_are_data_not_code():
    # The scaffold's templates ship as package data of autoenvscaling.testing; a .py file there would
    # be collected by tools that look for code, and would need its own package entry.
    templates = CORE / "testing" / "templates"
    assert templates.is_dir()
    assert not list(templates.rglob("*.py"))
    assert all(p.name.endswith(".tmpl") for p in templates.rglob("*") if p.is_file())


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--wheel-dir", str(out), str(ROOT)], check=True, capture_output=True, timeout=300)
    return zipfile.ZipFile(next(out.glob("autoenvscaling-*.whl")))


def test_the_wheel_holds_every_module_and_data_file(wheel):
    names = set(wheel.namelist())
    for path in CORE.rglob("*"):
        if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".pyc":
            continue
        rel = "autoenvscaling/" + path.relative_to(CORE).as_posix()
        assert rel in names, f"{rel} is missing from the wheel (package-data patterns in pyproject.toml)"
    entry_points = wheel.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    assert "autoenvscaling = autoenvscaling.testing.pytest_plugin" in entry_points
