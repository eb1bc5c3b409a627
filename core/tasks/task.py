"""The in-memory task: a Harbor task directory as a frozen pydantic model.

A task holds its parsed config, its instruction and every other file of the directory as bytes, so
it can be hashed, compared, shipped to another process or written anywhere without touching the
source directory again. Task directories are small (tens of KB to a few MB); big assets belong in the
environment's build, not in the task.
"""

from __future__ import annotations

import hashlib
from typing import Any, Mapping

from pydantic import BaseModel, ConfigDict, PrivateAttr

from .config import Provenance, StepConfig, TaskConfig

PROVENANCE_KEY = "autoenvscaling"


class TaskFile(BaseModel):
    model_config = ConfigDict(frozen=True)

    data: bytes
    executable: bool = False

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


class Task(BaseModel):
    """One Harbor task. ``files`` maps POSIX paths relative to the task directory (everything except
    task.toml and instruction.md) to their bytes and executable bit."""

    model_config = ConfigDict(frozen=True)

    name: str
    config: TaskConfig
    instruction: str | None
    files: dict[str, TaskFile]

    _config_text: str | None = PrivateAttr(default=None)
    _source: str | None = PrivateAttr(default=None)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Task):
            return NotImplemented
        return (self.name, self.config, self.instruction, self.files) == (other.name, other.config, other.instruction,
                                                                          other.files)

    __hash__ = None  # type: ignore[assignment]

    # -- construction helpers -------------------------------------------------------------
    @classmethod
    def create(cls, name: str, config: TaskConfig | dict[str, Any], instruction: str | None,
               files: Mapping[str, bytes | str | TaskFile], *, config_text: str | None = None,
               source: str | None = None) -> "Task":
        cfg = config if isinstance(config, TaskConfig) else TaskConfig.model_validate(config)
        norm: dict[str, TaskFile] = {}
        for path, value in files.items():
            if isinstance(value, TaskFile):
                norm[path] = value
            else:
                data = value.encode() if isinstance(value, str) else value
                norm[path] = TaskFile(data=data, executable=path.endswith(".sh"))
        task = cls(name=name, config=cfg, instruction=instruction, files=dict(sorted(norm.items())))
        task._config_text = config_text
        task._source = source
        return task

    @property
    def source(self) -> str | None:
        """The directory this task was read from, if any."""
        return self._source

    @property
    def config_text(self) -> str | None:
        """task.toml exactly as read, used to write it back byte-identical when unchanged."""
        return self._config_text

    # -- views ------------------------------------------------------------------------------
    def subtree(self, prefix: str) -> dict[str, TaskFile]:
        """Files under ``prefix/`` with the prefix stripped (e.g. ``tests`` -> {"test.sh": ...})."""
        prefix = prefix.rstrip("/") + "/"
        return {p[len(prefix):]: f for p, f in self.files.items() if p.startswith(prefix)}

    @property
    def dockerfile(self) -> str | None:
        f = self.files.get("environment/Dockerfile")
        return f.text if f else None

    @property
    def environment_files(self) -> dict[str, TaskFile]:
        return self.subtree("environment")

    @property
    def steps(self) -> list[StepConfig]:
        return list(self.config.steps)

    def step_instruction(self, step: StepConfig) -> str:
        f = self.files.get(f"steps/{step.name}/instruction.md")
        return f.text if f else (self.instruction or "")

    @property
    def provenance(self) -> Provenance:
        return Provenance.model_validate(self.config.metadata.get(PROVENANCE_KEY, {}))

    # -- derived tasks ---------------------------------------------------------------------
    def with_provenance(self, **fields: Any) -> "Task":
        """A copy whose ``[metadata.autoenvscaling]`` has ``fields`` merged in."""
        current = dict(self.config.metadata.get(PROVENANCE_KEY, {}))
        current.update({k: v for k, v in fields.items() if v is not None})
        Provenance.model_validate(current)  # reject malformed provenance early
        metadata = {**self.config.metadata, PROVENANCE_KEY: current}
        return self.with_config(self.config.model_copy(update={"metadata": metadata}))

    def with_config(self, config: TaskConfig) -> "Task":
        return Task.create(self.name, config, self.instruction, self.files, config_text=self._config_text)

    def with_files(self, changes: dict[str, bytes | str | TaskFile | None]) -> "Task":
        """A copy with files added, replaced or (value None) removed."""
        files = {**self.files, **changes}
        return Task.create(self.name, self.config, self.instruction, {p: f for p, f in files.items() if f is not None},
                           config_text=self._config_text)

    def renamed(self, name: str) -> "Task":
        info = self.config.task.model_copy(update={"name": name})
        return self.with_config(self.config.model_copy(update={"task": info})).model_copy(update={"name": name})

    # -- identity ---------------------------------------------------------------------------
    def digest(self) -> str:
        """``sha256:<hex>`` over the rendered task.toml, the instruction and every file (path, mode,
        bytes), in path order. Equal tasks have equal digests wherever they are stored."""
        from .harbor import render_config

        h = hashlib.sha256()
        instruction = [] if self.instruction is None else [("instruction.md", False, self.instruction.encode())]
        entries = [("task.toml", False, render_config(self).encode()), *instruction,
                   *((p, f.executable, f.data) for p, f in self.files.items())]
        for path, executable, data in sorted(entries):
            h.update(path.encode() + b"\0" + (b"x" if executable else b"-") + b"\0")
            h.update(len(data).to_bytes(8, "big") + data)
        return "sha256:" + h.hexdigest()


# The compose file names Harbor recognises in environment/, first match wins (a task with one runs
# several services; sandbox/compose.py reads the file).
COMPOSE_FILES = ("docker-compose.yaml", "docker-compose.yml", "compose.yaml", "compose.yml")


def compose_file(task: Task) -> str | None:
    """The compose file's name in environment/, or None when the task has none."""
    return next((name for name in COMPOSE_FILES if f"environment/{name}" in task.files), None)
