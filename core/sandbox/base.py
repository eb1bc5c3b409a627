"""The sandbox interface every backend implements.

A ``SandboxBackend`` turns a task's environment into something runnable (``prepare``: build or
fetch the image, cached) and creates ``Sandbox`` instances from it, one per attempt. A sandbox is
an isolated, disposable machine: commands run in it with a timeout and an output cap, files move in
and out as tar streams, and ``close`` leaves nothing behind (no process, no mount, no layer).

Attempts never share state: each sandbox starts from the prepared image, with its own writable
layer. tests/ and solution/ enter only when the runner uploads them (verification / oracle time).
"""

from __future__ import annotations

import abc
import json
import shlex
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar, Literal, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from ..archive import extract_tar, first_file, make_tar
from ..tasks import Task
from .compose_spec import ComposeSpec

DEFAULT_OUTPUT_LIMIT = 64 * 1024
ARCHIVE_LIMIT = 512 * 1024 * 1024  # get_archive refuses more than this (host memory)


class ExecResult(BaseModel):
    """What one command did. ``stdout``/``stderr`` are decoded and capped at the output limit."""

    model_config = ConfigDict(frozen=True)

    command: str
    exit_code: int | None  # None when it was killed (timeout, limits)
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0
    timed_out: bool = False
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def tail(self, chars: int = 800) -> str:
        text = (self.stdout + ("\n" if self.stdout and self.stderr else "") + self.stderr).strip()
        return text[-chars:]


class SandboxPolicy(BaseModel):
    """What a sandbox may use. The task's ``[environment]`` asks; the policy decides.

    ``network``: "none" (loopback only, the default), or "task" (grant the internet when the task sets
    allow_internet). Resource caps of zero mean "use the task's value".
    """

    model_config = ConfigDict(frozen=True)

    network: Literal["none", "task"] = "none"
    memory_mb: int = 0
    storage_mb: int = 0
    pids: int = 512
    cpu_seconds: int = 0
    max_file_mb: int = 1024
    max_memory_mb: int = 4096  # upper bound applied even when a task asks for more
    max_storage_mb: int = 2048

    def memory_for(self, task: Task) -> int:
        return min(self.memory_mb or task.config.environment.memory_mb, self.max_memory_mb)

    def storage_for(self, task: Task) -> int:
        return min(self.storage_mb or task.config.environment.storage_mb, self.max_storage_mb)

    def network_for(self, task: Task) -> bool:
        # network_mode "public" (or allow_internet) in every phase; "no-network"/"allowlist" never
        return self.network == "task" and task.config.wants_internet


class Protection(BaseModel):
    """One isolation measure and whether it is active on this machine (reported by ``doctor``)."""

    model_config = ConfigDict(frozen=True)

    name: str
    active: bool
    detail: str = ""


class FileChange(BaseModel):
    """One entry of an attempt's filesystem that differs from the prepared image, as the backend
    sees it from outside the sandbox (an overlay's upper layer, the engine's container diff).

    ``kind``: "added" (the image has no entry there), "modified" (it has one; content, metadata or
    type differ) or "deleted". ``is_dir``: the attempt's entry is a directory. ``replaced``: its type
    differs from the image's, or a directory was replaced wholesale (an overlay opaque directory)."""

    model_config = ConfigDict(frozen=True)

    path: str
    kind: Literal["added", "modified", "deleted"]
    is_dir: bool = False
    replaced: bool = False


class BackendCapabilities(BaseModel):
    """What a backend can honour on this machine, for matching a task's requirements
    (tasks/requirements.py) before anything is built.

    ``gpus``: GPUs it can pass into a sandbox here (detected, never assumed); ``gpu_types``: their
    models (empty when unknown). ``internet``: it grants the internet to a task that asks, under its
    current policy. ``compose``: multi-service environments. ``browser``: a browser the agent drives can run in its
    sandboxes (the task's image brings the browser; the backend gives it what Chromium needs).
    ``max_memory_mb``/``max_storage_mb``: the most one sandbox gets (the policy's caps).
    """

    model_config = ConfigDict(frozen=True)

    gpus: int = 0
    gpu_types: tuple[str, ...] = ()
    internet: bool = False
    compose: bool = False
    browser: bool = False
    max_memory_mb: int = 0
    max_storage_mb: int = 0


class EnvironmentDetails(BaseModel):
    """What a backend learnt while preparing an environment: what its sandboxes start from, and what
    the build gate quotes as evidence (the base image mappings, the notes, the build log)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    image: str | None = None  # docker: the image built; bwrap: the FROM image as written
    entrypoint: list[str] | None = None  # the image's ENTRYPOINT, run before the sandbox's commands
    # The final stage's external FROM and the local base it became ({"image", "base", "note"}).
    base_mapping: dict[str, str] | None = None
    base_mappings: list[dict[str, str]] = Field(default_factory=list)  # docker: every external FROM, sidecars' too
    notes: list[str] = Field(default_factory=list)  # what the build substituted, or accepted but did not apply
    build_log: str = ""  # docker: the tail of the build's output
    compose: ComposeSpec | None = None  # docker: the task's services, with their prepared images
    # bwrap: the layer stack (directories top first, keys base first), the local base root, and
    # what the Dockerfile recorded without a layer.
    lower: list[str] = Field(default_factory=list)
    layers: list[str] = Field(default_factory=list)
    base: str | None = None
    has_bash: bool = True  # the image has /bin/bash (commands run with /bin/sh otherwise)
    cmd: list[str] | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    exposed: list[str] = Field(default_factory=list)
    healthcheck: str | None = None
    recorded: dict[str, list[str]] = Field(default_factory=dict)  # STOPSIGNAL, VOLUME, ... (lower case) as written


class PreparedEnvironment(BaseModel):
    """A built environment a backend can start sandboxes from (an image id, a rootfs layer stack)."""

    model_config = ConfigDict(frozen=True)

    backend: str
    ref: str  # backend-specific: image id, or a layer-stack key
    workdir: str = "/"
    env: dict[str, str] = Field(default_factory=dict)
    user: str | None = None
    build_seconds: float = 0.0
    cached: bool = False
    details: EnvironmentDetails = Field(default_factory=EnvironmentDetails)


@dataclass(frozen=True)
class WarmCommand:
    """What a verifier runtime's test.sh would run, for a warm interpreter (``Sandbox.run_warm``):
    ``python -I script args`` once ``preload`` was imported; ``inputs`` (absolute paths) are the
    attempt's files the program reads, given to it as copies under ``WARM_INPUTS`` + their path
    (sandbox/warm.py), so its arguments name them there. A frozen dataclass: less its ``inputs``, it
    keys the warm interpreters (tasks whose commands, images and environments match share one, and
    each request brings its own inputs)."""

    script: str
    args: tuple[str, ...] = ()
    preload: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ()
    python: str = "python3"
    #: folders of the image that differ between tasks otherwise built alike (a task's own files, such
    #: as /app): the image's top layers that hold nothing else are left out of the interpreter's root,
    #: so tasks built from one Dockerfile share it, and each request gets these folders as its task's
    #: image has them (a copy, read-only).
    task_paths: tuple[str, ...] = ()


class Sandbox(abc.ABC):
    """One live, isolated attempt. Use as an async context manager."""

    workdir: str = "/"

    async def __aenter__(self) -> "Sandbox":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @abc.abstractmethod
    async def start(self) -> None:
        """Bring the sandbox up (idempotent)."""

    @abc.abstractmethod
    async def exec(self, command: str, *, timeout: float = 60.0, env: Mapping[str, str] | None = None,
                   cwd: str | None = None, user: str | None = None, stdin: bytes | None = None,
                   output_limit: int = DEFAULT_OUTPUT_LIMIT) -> ExecResult:
        """Run ``command`` with ``bash -c`` (``sh -c`` when bash is absent). Every process it started
        is gone when this returns."""

    @abc.abstractmethod
    async def put_archive(self, remote_dir: str, data: bytes) -> None:
        """Extract a tar archive into ``remote_dir`` (created if missing) inside the sandbox."""

    @abc.abstractmethod
    async def get_archive(self, remote_path: str) -> bytes:
        """A tar archive of ``remote_path`` (file or directory) inside the sandbox."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Kill everything and discard the attempt's state (idempotent)."""

    def entrypoint_output(self) -> str:
        """The tail of what the image's ENTRYPOINT printed ("" when it has none or the backend does not
        run it). Backends that start the entrypoint override this."""
        return ""

    # -- verification the agent cannot tamper with (docs/verification.md) ----------------------
    # A backend that can report an attempt's changes from outside the sandbox and put paths back to
    # the image's state with a toolchain the agent never touched sets this and overrides the three
    # methods below. Without it the runner verifies with view "agent" and says so in the result.
    verifier_view: ClassVar[bool] = False

    async def end_agent_processes(self) -> bool:
        """Make sure no process the agent started is still running (the image's ENTRYPOINT services
        stay up). True when agent processes may have run until now, so changes are read again.
        Backends whose execs leave nothing behind need not override this."""
        return False

    async def changes(self) -> list[FileChange]:
        """Every entry that differs from the prepared image, computed by the backend, never by a
        program inside the sandbox."""
        raise NotImplementedError(f"{type(self).__name__} cannot report an attempt's changes")

    async def restore(self, paths: Sequence[str]) -> None:
        """Make each absolute path as it is in the prepared image (its content, or absent), with a
        toolchain the agent never touched. Parents of a path are handled before it."""
        raise NotImplementedError(f"{type(self).__name__} cannot restore image paths")

    async def exec_verifier(self, command: str, *, mounts: Mapping[str, Path], timeout: float = 60.0,
                            env: Mapping[str, str] | None = None, user: str | None = None) -> ExecResult:
        """Run the verifier's ``command`` with each host directory of ``mounts`` present at its
        absolute path inside, read-only where the backend can, only for this command. The default
        uploads them, runs, and removes them again."""
        for remote, local in mounts.items():
            await self.upload(local, remote)
        try:
            return await self.exec(command, timeout=timeout, env=env, user=user)
        finally:
            if mounts:
                await self.exec("rm -rf -- " + " ".join(shlex.quote(m) for m in mounts), timeout=60)

    async def run_warm(self, command: WarmCommand, *, tests: Mapping[str, tuple[bytes, bool]],
                       mounts: Mapping[str, Path], env: Mapping[str, str],
                       timeout: float) -> tuple[ExecResult, dict[str, bytes]] | None:
        """Run ``command`` in a warm interpreter that serves many verifications, instead of test.sh in
        this sandbox (bwrap: sandbox/warm.py): its result and the files it left in /logs/verifier
        (the caller writes them back here). None where the backend has none, or where it cannot tell
        that the result would be the one test.sh gives: then run test.sh."""
        return None

    # -- conveniences built on the archive primitives -----------------------------------------
    async def upload_files(self, files: Mapping[str, bytes | tuple[bytes, bool]], remote_dir: str) -> None:
        """Upload ``{relative path: bytes or (bytes, executable)}`` under ``remote_dir``."""
        await self.put_archive(remote_dir, make_tar(files))

    async def upload(self, local: Path, remote: str) -> None:
        """Upload a local file or directory to the absolute path ``remote``."""
        local = Path(local)
        if local.is_dir():
            files = {p.relative_to(local).as_posix(): (p.read_bytes(), bool(p.stat().st_mode & 0o100))
                     for p in sorted(local.rglob("*")) if p.is_file() and not p.is_symlink()}
            await self.upload_files(files, remote)
        else:
            remote_path = PurePosixPath(remote)
            await self.upload_files({remote_path.name: (local.read_bytes(), bool(local.stat().st_mode & 0o100))},
                                    str(remote_path.parent))

    async def download(self, remote: str, local: Path) -> None:
        """Copy a file or directory out of the sandbox into ``local`` (a directory)."""
        data = await self.get_archive(remote)
        Path(local).mkdir(parents=True, exist_ok=True)
        extract_tar(data, local)

    async def read_file(self, remote: str, *, limit: int = 1 << 20) -> bytes | None:
        """The bytes of a regular file inside the sandbox, or None if it is missing or not a regular
        file (a symlink planted by the agent is never followed)."""
        try:
            data = await self.get_archive(remote)
        except FileNotFoundError:
            return None
        return first_file(data, limit=limit)

    async def read_files(self, remotes: Sequence[str], *, limit: int = 1 << 20) -> dict[str, bytes | None]:
        """``read_file`` of each path, as {path: bytes or None}. Backends whose every file transfer
        is a command read the files of one folder in one."""
        return {remote: await self.read_file(remote, limit=limit) for remote in remotes}


class SandboxBackend(abc.ABC):
    """Builds environments and creates sandboxes. One instance serves many attempts concurrently."""

    name: ClassVar[str]
    # What the backend can do where the machine allows it (Harbor's supports_gpus, ...). A refusal's
    # hint names the backends that declare what a task needs, even when this machine lacks it.
    supports_gpus: ClassVar[bool] = False
    supports_internet: ClassVar[bool] = False
    supports_compose: ClassVar[bool] = False
    supports_browser: ClassVar[bool] = False

    def __init__(self, *, policy: SandboxPolicy | None = None, cache_dir: Path | None = None) -> None:
        from ..config import cache_dir as default_cache

        self.policy = policy or SandboxPolicy()
        self.cache_dir = Path(cache_dir) if cache_dir else default_cache()

    @classmethod
    def available(cls) -> tuple[bool, str]:
        """Whether this backend can run here, and if not, one line saying why and how to fix it."""
        return True, ""

    @abc.abstractmethod
    async def prepare(self, task: Task) -> PreparedEnvironment:
        """Build (or reuse from cache) the task's environment. Raises BuildError with a reason."""

    @abc.abstractmethod
    async def create(self, task: Task, prepared: PreparedEnvironment) -> Sandbox:
        """A new, not yet started sandbox for one attempt at ``task``."""

    def capabilities(self) -> BackendCapabilities:
        """What this backend can honour on this machine: its declared support, narrowed to what is
        here (GPUs are detected) and to its policy (the internet, memory and storage caps). Backends
        that know more (an engine's GPU support) override it."""
        from .gpu import host_gpus

        gpus = host_gpus() if self.supports_gpus else None
        return BackendCapabilities(
            gpus=gpus.count if gpus else 0, gpu_types=gpus.models if gpus else (),
            internet=self.supports_internet and self.policy.network == "task", compose=self.supports_compose,
            browser=self.supports_browser, max_memory_mb=self.policy.max_memory_mb,
            max_storage_mb=self.policy.max_storage_mb)

    def protections(self) -> list[Protection]:
        """The isolation measures this backend applies here, each marked active or not."""
        return []

    async def aclose(self) -> None:
        """Release backend-wide resources (connections, caches held open)."""


ARGV_BYTES = 96 * 1024  # arguments per command, well under the kernel's limit for all of them


def argv_chunks(paths: list[str], limit: int = ARGV_BYTES) -> list[list[str]]:
    """``paths`` split into runs whose total length stays under ``limit``, one command each."""
    out: list[list[str]] = []
    size = limit + 1
    for path in paths:
        if size + len(path) + 1 > limit:
            out.append([])
            size = 0
        out[-1].append(path)
        size += len(path) + 1
    return out


def absolute(path: str) -> str:
    return path if path.startswith("/") else f"/{path}"


def last_json_object(output: str) -> dict[str, Any] | None:
    """The last line of a command's (or an engine's) output that is a JSON object, parsed; None
    when no line is."""
    for line in reversed(output.strip().splitlines()):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None
