"""Harbor itself as a client of what we generate: its lint, and its oracle and nop agents on podman.

Used by the slow test (tests/test_harbor_client.py) and the bench (bench/bench_harbor.py). Harbor
(PyPI ``harbor``) needs Python 3.12, so it lives in a virtual environment of its own:
``AUTOENVSCALING_HARBOR_VENV``, else ``<cache>/harbor-venv``, created on request with a Python 3.12
found on PATH or under pyenv. It runs containers through podman with ``podman-compose``.

No registry is reachable here, so before Harbor builds a task the base images its Dockerfiles name
(``FROM debian:bookworm``) are put into podman under those very names: our stand-in for each
(rootfs.resolve_base), plus one addition only where the host reaches package indexes through a
TLS-intercepting proxy: the host's CA bundle in /usr/local/share/ca-certificates, so a Dockerfile's
``apt-get install ca-certificates`` trusts the proxy as Harbor's builds on a normal network trust
PyPI. The names are removed again afterwards (``stand_ins``), and while they exist a label tells our
own docker backend that they are not the engine's own images.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from ..config import cache_dir
from ..errors import MissingPrerequisite

HARBOR_REQUIREMENTS = ("harbor==0.26.*", "podman-compose==1.5.0")
VENV_ENV = "AUTOENVSCALING_HARBOR_VENV"
#: The one Harbor finding a generated task may carry: ``shared-verifier`` on a task that chose
#: Harbor's shared verifier (``environment_mode = "shared"``) because a separate one cannot see what
#: it checks: computer_use's verifier asks the running web app for its state (a separate container
#: holds a fresh app), and a terminal task with symbolic links to make (Harbor's artifact copy drops
#: links to absolute paths).
EXPLAINED_RULE = "shared-verifier"


def venv_path() -> Path:
    return Path(os.environ.get(VENV_ENV) or cache_dir() / "harbor-venv")


def python312() -> str | None:
    """A Python 3.12 interpreter that runs: ``python3.12`` on PATH (not a pyenv shim whose version is
    not selected here), else the newest pyenv 3.12."""
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    candidates = [shutil.which("python3.12"), *reversed(sorted(glob.glob(f"{root}/versions/3.12*/bin/python3.12")))]
    for candidate in candidates:
        if candidate and subprocess.run([candidate, "-c", "pass"], capture_output=True).returncode == 0:
            return candidate
    return None


def harbor_bin(*, install: bool = False) -> Path:
    """The ``harbor`` executable, installing it into ``venv_path()`` when asked. Raises
    MissingPrerequisite naming what is missing."""
    venv = venv_path()
    harbor = venv / "bin" / "harbor"
    if harbor.exists() and (venv / "bin" / "podman-compose").exists():
        return harbor
    if not install:
        raise MissingPrerequisite(f"Harbor is not installed in {venv}",
                                  hint="run bench/bench_harbor.py --install, or point AUTOENVSCALING_HARBOR_VENV at a venv with harbor")
    python = python312()
    if python is None:
        raise MissingPrerequisite("Harbor needs Python 3.12 and none was found",
                                  hint="install python3.12 (or a pyenv 3.12) and retry")
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", *HARBOR_REQUIREMENTS], check=True)
    return harbor


def lint(harbor: Path, task_dirs: Iterable[Path]) -> list[dict]:
    """Harbor's findings (``harbor lint --json``, its default rules) over ``task_dirs``."""
    dirs = [str(p) for p in task_dirs]
    proc = subprocess.run([str(harbor), "lint", "--json", *dirs], capture_output=True, text=True)
    try:
        return json.loads(proc.stdout or "[]")
    except json.JSONDecodeError:
        raise RuntimeError(f"harbor lint printed no JSON (exit {proc.returncode}): {proc.stderr.strip()[-300:]}") from None


def unexplained(findings: list[dict]) -> list[dict]:
    """The findings that are not a declared choice (see ``EXPLAINED_RULE``)."""
    import tomllib

    def chose_shared(path: str) -> bool:
        toml = Path(path) if Path(path).name == "task.toml" else Path(path) / "task.toml"
        try:
            return tomllib.loads(toml.read_text())["verifier"]["environment_mode"] == "shared"
        except (OSError, KeyError, TypeError, tomllib.TOMLDecodeError):
            return False

    return [f for f in findings if not (f.get("rule") == EXPLAINED_RULE and chose_shared(f.get("path", "")))]


def base_images(task_dirs: Iterable[Path]) -> list[str]:
    """The FROM images of the tasks' Dockerfiles, first stage names and ``scratch`` left out."""
    found: dict[str, None] = {}
    for task in task_dirs:
        dockerfile = Path(task) / "environment" / "Dockerfile"
        if not dockerfile.is_file():
            continue
        stages: set[str] = set()
        for line in dockerfile.read_text(encoding="utf-8").splitlines():
            words = line.split()
            if len(words) >= 2 and words[0].upper() == "FROM":
                image = next(w for w in words[1:] if not w.startswith("--"))
                if image not in stages and image != "scratch":
                    found[image] = None
                if len(words) >= 4 and words[-2].upper() == "AS":
                    stages.add(words[-1])
    return list(found)


@contextmanager
def stand_ins(images: Iterable[str]) -> Iterator[list[str]]:
    """Each image put into podman under its own name (see the module docstring); removed on exit."""
    import docker

    from ..sandbox.buildnet import host_ca_bundle
    from ..sandbox.docker_images import STAND_IN_LABEL, ImageStore
    from ..sandbox.rootfs import resolve_base

    client = docker.from_env()
    store = ImageStore(lambda: client, cache_dir())
    bundle = host_ca_bundle()
    tagged: list[str] = []
    try:
        for image in images:
            mapping = resolve_base(image)
            if mapping is None:
                raise MissingPrerequisite(f"no stand-in for {image}", hint="map it with AUTOENVSCALING_BASE_IMAGES")
            base = store.base_image(mapping.base)
            ref = image if "/" in image.split(":")[0] else f"docker.io/library/{image}"
            with tempfile.TemporaryDirectory() as ctx:
                lines = [f"FROM {base}", f"LABEL {STAND_IN_LABEL}=1"]
                if bundle:
                    shutil.copyfile(bundle, Path(ctx) / "host-ca.crt")
                    lines.append("COPY host-ca.crt /usr/local/share/ca-certificates/host-ca.crt")
                (Path(ctx) / "Dockerfile").write_text("\n".join(lines) + "\n")
                subprocess.run(["podman", "build", "-q", "-t", ref, ctx], check=True, capture_output=True)
            tagged.append(ref)
        yield tagged
    finally:
        for ref in tagged:
            subprocess.run(["podman", "untag", ref, ref], capture_output=True)


@dataclass
class HarborTrial:
    task: str
    agent: str
    reward: float | None
    seconds: float
    error: str = ""


def run_trial(harbor: Path, task_dir: Path, agent: str, jobs_dir: Path, *, gpus: int | None = None,
              timeout: float = 3600) -> HarborTrial:
    """One trial of Harbor's ``agent`` (oracle or nop) on ``task_dir`` with podman: its reward, or
    None with the exception Harbor recorded."""
    job = f"{Path(task_dir).name}-{agent}-{int(time.time() * 1000)}"
    cmd = [str(harbor), "run", "-p", str(task_dir), "-a", agent, "-e", "podman", "-o", str(jobs_dir),
           "--job-name", job, "-y", "-q"]
    if gpus is not None:
        cmd += ["--override-gpus", str(gpus)]
    env = {**os.environ, "PATH": f"{Path(harbor).parent}:{os.environ.get('PATH', '')}"}
    start = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    seconds = time.monotonic() - start
    results = sorted((Path(jobs_dir) / job).glob("*/result.json"))
    if not results:
        return HarborTrial(Path(task_dir).name, agent, None, seconds, f"no trial result (exit {proc.returncode}): "
                           f"{(proc.stderr or proc.stdout).strip()[-300:]}")
    data = json.loads(results[0].read_text())
    rewards = ((data.get("verifier_result") or {}).get("rewards")) or {}
    error = (data.get("exception_info") or {}).get("exception_message") or ""
    # one key "reward", else the mean of the keys (what our runtime scores a multi-reward task)
    reward = rewards.get("reward", sum(rewards.values()) / len(rewards)) if rewards else None
    return HarborTrial(Path(task_dir).name, agent, reward, seconds, error[:300])
