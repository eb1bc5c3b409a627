"""Throwaway environments for installing real plugin distributions.

A throwaway venv (no pip of its own) whose site-packages also loads this checkout's environment
through a .pth file: the core stays importable, and whatever a test pip-installs lands only in the
throwaway venv. pip is this environment's, driven with ``--python``.
"""

from __future__ import annotations

import os
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest


class ThrowawayEnv:
    def __init__(self, path: Path) -> None:
        venv.EnvBuilder(with_pip=False).create(path)
        self.python = path / "bin" / "python"
        purelib = subprocess.run([str(self.python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                 capture_output=True, text=True, check=True).stdout.strip()
        parents = [p for p in site.getsitepackages() if os.path.isdir(p)]
        (Path(purelib) / "_aes_parent_env.pth").write_text(
            "import site; " + "; ".join(f"site.addsitedir({p!r})" for p in parents) + "\n")

    def install(self, *sources: Path) -> None:
        """pip install local source folders (no dependencies, no network, no build isolation)."""
        subprocess.run([sys.executable, "-m", "pip", "--python", str(self.python), "install", "--quiet", "--no-deps",
                        "--no-build-isolation", "--no-index", *map(str, sources)], check=True, capture_output=True)

    def run(self, *args: str, env: dict[str, str] | None = None, timeout: float = 120,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """``python ARGS`` in this environment; AUTOENVSCALING_* plugin settings come only from ``env``."""
        clean = {k: v for k, v in os.environ.items()
                 if not k.startswith("AUTOENVSCALING_") or k == "AUTOENVSCALING_CACHE"}
        clean.update(env or {})
        return subprocess.run([str(self.python), *args], capture_output=True, text=True, env=clean,
                              timeout=timeout, cwd=cwd)

    def cli(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        """The ``autoenvscaling`` CLI as a user runs it, in this environment."""
        code = "import sys; from autoenvscaling.cli.main import main; main(sys.argv[1:])"
        return self.run("-c", code, *args, env=env, timeout=60)


@pytest.fixture(scope="session")
def throwaway_env(tmp_path_factory):
    """A factory: ``throwaway_env()`` makes a new ThrowawayEnv."""
    return lambda: ThrowawayEnv(tmp_path_factory.mktemp("venv") / "venv")
