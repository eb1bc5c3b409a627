"""Verifier runtimes: files a verifier needs that the image does not have, provided at verification
time only, read-only and out of the agent's reach.

A ``VerifierRuntime`` (registered through ``autoenvscaling_register_verifier_runtimes``) says whether
it applies to a task in a context (an offline sandbox; a domain's runtime to that domain's tasks),
materialises its files in a host directory (cached under the cache dir) and names the environment
the verifier gets with it mounted at ``/opt/autoenvscaling-verifier/<name>``. The trial runner
treats every runtime alike; backends provide the directory for the verifier's command alone (bwrap
binds it read-only into that one exec; docker uploads it once the agent's processes are gone and
removes it after the command). The built-in one, ``offline``, holds the shims of runtime/offline.py.
"""

from __future__ import annotations

import abc
import hashlib
import threading
from pathlib import Path, PurePosixPath
from typing import ClassVar, Mapping

from pydantic import BaseModel, ConfigDict, Field

from ..config import cache_dir as default_cache_dir
from ..sandbox.base import WarmCommand
from ..sandbox.rootfs import build_once
from ..tasks import Task
from .paths import VERIFIER_RUNTIME


class RuntimeContext(BaseModel):
    """Where a task is being verified: ``offline`` when its sandbox has no network; ``backend`` the
    sandbox backend's name."""

    model_config = ConfigDict(frozen=True)

    offline: bool
    backend: str


class RuntimeEnv(BaseModel):
    """What a runtime adds to the verifier's environment: directories put first on PATH (in this
    order) and variables set."""

    model_config = ConfigDict(frozen=True)

    path_prefix: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)


class VerifierRuntime(abc.ABC):
    """One runtime. Subclasses set ``name`` (a short identifier: the mount point's last component)."""

    name: ClassVar[str]

    def __init__(self, *, cache_dir: Path | None = None) -> None:
        self.cache_dir = Path(cache_dir) if cache_dir else default_cache_dir()

    @abc.abstractmethod
    def applies(self, task: Task, context: RuntimeContext) -> bool:
        """Whether the verifier of ``task`` gets this runtime in ``context``."""

    @abc.abstractmethod
    def materialise(self) -> Path:
        """A host directory holding the runtime's files (cached; cheap after the first call). Its
        files must be world-readable: sandboxes read them as unprivileged users."""

    def environment(self, mount: str) -> RuntimeEnv:
        """The environment the verifier gets with the runtime mounted at ``mount``."""
        return RuntimeEnv()

    def warm(self, task: Task, tests: Mapping[str, bytes]) -> WarmCommand | None:
        """What test.sh would run, when ``tests`` (tests/ of the task, path -> bytes) make it run only
        this runtime's Python program: the backend may then run it in a warm interpreter that
        imported ``preload`` once (sandbox/warm.py). Offer one only where test.sh is byte for byte the
        one this runtime knows, so the program and its verdict are the same. Default: none."""
        return None

    @property
    def mount(self) -> str:
        return f"{VERIFIER_RUNTIME}/{self.name}"


def task_domain(task: Task) -> str | None:
    """The domain a task belongs to (``[metadata.autoenvscaling] domain``), for domain-owned runtimes."""
    return task.provenance.domain


def materialise_files(files: Mapping[str, tuple[bytes, bool]], name: str, cache_dir: Path) -> Path:
    """Write ``{relative path: (bytes, executable)}`` once into a content-addressed directory under
    ``<cache_dir>/verifier/runtimes`` and return it. Safe between parallel processes (locked, and
    renamed into place complete)."""
    root = Path(cache_dir) / "verifier" / "runtimes"

    def write(staged: Path) -> Path:
        for rel, (data, executable) in files.items():
            parts = PurePosixPath(rel).parts
            if PurePosixPath(rel).is_absolute() or ".." in parts:
                raise ValueError(f"unsafe path in a verifier runtime: {rel!r}")
            path = staged.joinpath(*parts)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            path.chmod(0o755 if executable else 0o644)
        for directory in [staged, *(p for p in staged.rglob("*") if p.is_dir())]:
            directory.chmod(0o755)
        return staged

    return build_once(root / f"{name}-{_digest(files)[:16]}", root / ".lock", write)


# Digests of file sets already hashed in this process, keyed by each file's path, bytes object and
# mode: a runtime is materialised for every verification, and hashing its tens of megabytes again
# each time cost more than the rest of the verifier's setup. Each entry keeps its bytes objects
# alive, so no id in a key can belong to other bytes while the entry stands.
_DIGESTS: dict[tuple[tuple[str, int, bool], ...], tuple[str, list[bytes]]] = {}
_DIGESTS_KEPT = 16
_DIGESTS_LOCK = threading.Lock()  # trials materialise their runtimes from worker threads


def _digest(files: Mapping[str, tuple[bytes, bool]]) -> str:
    entries = [(rel, *files[rel]) for rel in sorted(files)]
    shape = tuple((rel, id(data), bool(executable)) for rel, data, executable in entries)
    with _DIGESTS_LOCK:
        known = _DIGESTS.get(shape)
    if known is not None:
        return known[0]
    digest = hashlib.sha256()
    for rel, data, executable in entries:
        digest.update(f"{rel}\0{int(executable)}\0{len(data)}\0".encode() + data)
    text = digest.hexdigest()
    with _DIGESTS_LOCK:
        while len(_DIGESTS) >= _DIGESTS_KEPT:
            del _DIGESTS[next(iter(_DIGESTS))]
        _DIGESTS[shape] = (text, [data for _, data, _ in entries])
    return text


class OfflineRuntime(VerifierRuntime):
    """The offline shims and provisioned packages (runtime/offline.py) for sandboxes without network:
    its bin/ goes first on PATH, AUTOENVSCALING_OFFLINE=1 is set, and pip looks only at its wheels."""

    name = "offline"

    def applies(self, task: Task, context: RuntimeContext) -> bool:
        return context.offline

    def materialise(self) -> Path:
        from .offline import runtime_files

        return materialise_files(runtime_files(cache_dir=self.cache_dir), self.name, self.cache_dir)

    def environment(self, mount: str) -> RuntimeEnv:
        # Every pip (the image's, a virtual environment's, `python3 -m pip`) installs from the
        # provisioned wheels and never looks for an index; bin/pip adds the clearer refusals.
        return RuntimeEnv(path_prefix=(f"{mount}/bin",), env={"AUTOENVSCALING_OFFLINE": "1", "PIP_NO_INDEX": "1",
                                                               "PIP_FIND_LINKS": f"{mount}/dists"})
