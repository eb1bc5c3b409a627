"""Pydantic models of Harbor's task.toml.

Every model keeps unknown keys (``extra="allow"``) so that a task written by a newer Harbor, or
carrying another tool's fields, survives a read and a write unchanged. Fields mirror Harbor's names;
their documentation says what our runtime does with them.
"""

from __future__ import annotations

import copy
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: Our own section of ``[metadata]``: provenance (see ``Provenance``) and, in sub-tables named after
#: Harbor's sections, the settings Harbor has no field for (``OWN_FIELDS``).
OWN_KEY = "autoenvscaling"
#: Settings of ours, by the Harbor section they belong to. In task.toml they live under
#: ``[metadata.autoenvscaling.<section>]`` so Harbor's config check (which refuses unknown fields)
#: accepts the task; older tasks of ours wrote them in the section itself, which is still read.
OWN_FIELDS: dict[str, tuple[str, ...]] = {
    "verifier": ("view", "agent_paths", "outputs", "imports"),
    "agent": ("tools",),
    "environment": ("browser", "gpu_optional"),
}


class _Section(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)


class Author(_Section):
    name: str | None = None
    email: str | None = None


class TaskInfo(_Section):
    """``[task]``: identity of the task."""

    name: str | None = None
    description: str | None = None
    keywords: list[str] = Field(default_factory=list)
    authors: list[Author] = Field(default_factory=list)


class VerifierConfig(_Section):
    """``[verifier]``: how tests/test.sh runs. ``env`` is added to the verifier's environment.

    ``environment_mode`` is Harbor's: "separate" runs the verifier in a fresh copy of the environment
    that holds, of the agent's work, only the task's top-level ``artifacts``. We run it as the
    "outputs" view below with those artifacts as the outputs, so a task means the same in Harbor
    and here.

    Our additions (in ``[metadata.autoenvscaling.verifier]``): ``view`` says what the verifier sees of the agent's
    changes: "protected" (default: the image's programs, libraries and interpreter start-up files,
    plus every other change the agent made, less Python modules the agent added that the tests do not
    import), "outputs" (the pristine image plus only the paths in ``outputs``: the task's declared
    results) or "agent" (the agent's filesystem as it is, Harbor's behaviour, for tasks whose point
    is to change the toolchain). Declaring ``outputs`` selects "outputs" unless the view says
    "agent". ``agent_paths`` lists paths whose agent changes the verifier sees even under
    "protected"; ``imports`` names Python modules the agent may add that the verifier imports
    (when its tests do not name them). See docs/verification.md.
    """

    timeout_sec: float = 600.0
    env: dict[str, str] = Field(default_factory=dict)
    user: str | None = None
    environment_mode: Literal["shared", "separate"] | None = None
    view: Literal["protected", "outputs", "agent"] = "protected"
    agent_paths: list[str] = Field(default_factory=list)
    outputs: list[str] = Field(default_factory=list)
    imports: list[str] = Field(default_factory=list)

    @property
    def effective_view(self) -> Literal["protected", "outputs", "agent"]:
        """The view the verifier gets: "agent" when asked, "outputs" when outputs are declared (or
        asked for), else "protected"."""
        if self.view == "agent":
            return "agent"
        separate = self.environment_mode == "separate"
        return "outputs" if self.outputs or self.view == "outputs" or separate else "protected"


class AgentConfig(_Section):
    """``[agent]``: the time the agent gets and the user it runs as. ``tools`` (ours, in
    ``[metadata.autoenvscaling.agent]``) names
    the registered tools the agent gets (default: the agent's own default set, ``bash``)."""

    timeout_sec: float = 600.0
    user: str | None = None
    tools: list[str] | None = None


class HealthcheckConfig(_Section):
    command: str
    interval_sec: float = 1.0
    timeout_sec: float = 10.0
    retries: int = 3


class EnvironmentConfig(_Section):
    """``[environment]``: how the sandbox is built and what it may use.

    ``allow_internet`` is a request: the sandbox policy decides whether it is granted (offline by
    default). ``docker_image`` names a prebuilt image instead of environment/Dockerfile. ``gpus`` and
    ``gpu_types`` ("H100", ...) must be honoured or the task is refused (never run without them),
    unless ``gpu_optional`` (ours, in ``[metadata.autoenvscaling.environment]``) says the task also runs without GPUs in
    a reduced mode its verifier reports (a kernel task checks correctness in the Triton interpreter
    and reports its timing as unmeasured); it still gets the GPUs wherever the backend has them.
    ``browser`` (ours, there too) asks for a browser the agent drives; so does a tool
    named "browser" in ``tools`` ([metadata.autoenvscaling.agent]). See ``TaskRequirements`` (tasks/requirements.py).
    """

    build_timeout_sec: float = 600.0
    docker_image: str | None = None
    cpus: float = 1
    memory_mb: int = 2048
    storage_mb: int = 10240
    gpus: int = 0
    gpu_types: list[str] | None = None
    gpu_optional: bool = False
    allow_internet: bool = False
    browser: bool = False
    workdir: str | None = None
    env: dict[str, str] = Field(default_factory=dict)


class StepConfig(_Section):
    """``[[steps]]``: one step of a multi-step task; its files live under steps/<name>/."""

    name: str
    min_reward: float | None = None
    agent: AgentConfig | None = None
    verifier: VerifierConfig | None = None
    healthcheck: HealthcheckConfig | None = None
    artifacts: list[str] = Field(default_factory=list)


class TaskConfig(_Section):
    """The whole task.toml.

    Older tasks say ``version = "1.0"``; newer ones ``schema_version = "1.1"``. Both are kept as
    written. ``metadata`` is free-form; our provenance lives there (see ``Provenance``).
    """

    version: str | None = None
    schema_version: str | None = None
    artifacts: list[str | dict[str, Any]] = Field(default_factory=list)
    task: TaskInfo = Field(default_factory=TaskInfo)
    metadata: dict[str, Any] = Field(default_factory=dict)
    verifier: VerifierConfig = Field(default_factory=VerifierConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    environment: EnvironmentConfig = Field(default_factory=EnvironmentConfig)
    steps: list[StepConfig] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _read_own_fields(cls, data: Any) -> Any:
        """Bring our settings into the sections they configure, from either place they are written
        (``[metadata.autoenvscaling.<section>]``, or the section itself in our older tasks), and
        make a separate verifier's artifacts and the outputs one list."""
        if not isinstance(data, dict):
            return data
        data = copy.copy(data)
        verifier = data.get("verifier")
        if (isinstance(verifier, dict) and verifier.get("outputs") and "environment_mode" not in verifier
                and verifier.get("view") != "agent"):
            data["verifier"] = {**verifier, "environment_mode": "separate"}  # what verifier outputs meant
        _lift_own_fields(data)
        verifier = data.get("verifier")
        if isinstance(verifier, dict) and verifier.get("environment_mode") == "separate":
            artifacts = list(data.get("artifacts") or [])
            sources = [s for s in map(_main_source, artifacts) if s is not None]
            extra = [p for p in dict.fromkeys(verifier.get("outputs") or []) if p not in sources]
            data["artifacts"] = artifacts + extra
            data["verifier"] = {**verifier, "outputs": list(dict.fromkeys(sources)) + extra}
        return data

    def to_dict(self) -> dict[str, Any]:
        """The keys that were given (or set), in TOML shape; defaults that were never set stay out.
        Our settings go to ``[metadata.autoenvscaling.<section>]``, a separate verifier's outputs to
        the top-level ``artifacts``: what Harbor's config check accepts."""
        data = self.model_dump(mode="json", exclude_unset=True, by_alias=True)
        separate = self.verifier.environment_mode == "separate"
        own: dict[str, dict[str, Any]] = {}
        for section, keys in OWN_FIELDS.items():
            values = data.get(section)
            if not isinstance(values, dict):
                continue
            for key in [k for k in keys if k in values]:
                value = values.pop(key)
                if not (section == "verifier" and key == "outputs" and separate):
                    own.setdefault(section, {})[key] = value
            if not values:
                del data[section]
        if separate:  # the outputs are authoritative (a copy may have changed them): they are the artifacts
            kept = [a for a in self.artifacts if _main_source(a) is None or _main_source(a) in self.verifier.outputs]
            have = {_main_source(a) for a in kept}
            data["artifacts"] = kept + [p for p in self.verifier.outputs if p not in have]
        if own:
            metadata = data.setdefault("metadata", {})
            mine = metadata.setdefault(OWN_KEY, {})
            for section, values in own.items():
                mine[section] = {**mine.get(section, {}), **values}
        return data


def _lift_own_fields(data: dict[str, Any]) -> None:
    """Move ``[metadata.autoenvscaling.<section>]`` settings of ours into ``data[<section>]``."""
    metadata = data.get("metadata")
    own = metadata.get(OWN_KEY) if isinstance(metadata, dict) else None
    if not isinstance(own, dict) or not any(isinstance(own.get(s), dict) for s in OWN_FIELDS):
        return
    own = dict(own)
    for section, keys in OWN_FIELDS.items():
        sub = own.get(section)
        if not isinstance(sub, dict):
            continue
        moved = {k: v for k, v in sub.items() if k in keys}
        rest = {k: v for k, v in sub.items() if k not in keys}
        if rest:
            own[section] = rest
        else:
            del own[section]
        current = data.get(section)
        if current is None:
            current = {}
        if not isinstance(current, dict):
            continue
        twice = [k for k in moved if k in current and current[k] != moved[k]]
        if twice:
            raise ValueError(f"{section}.{twice[0]} is set both in [{section}] and in "
                             f"[metadata.{OWN_KEY}.{section}] with different values")
        data[section] = {**current, **moved}
    data["metadata"] = {**metadata, OWN_KEY: own}


def _main_source(artifact: Any) -> str | None:
    """The container path of an artifact entry collected from the agent's own container."""
    if isinstance(artifact, str):
        return artifact
    if isinstance(artifact, dict) and isinstance(artifact.get("source"), str) and artifact.get("service") in (None, "main"):
        return artifact["source"]
    return None


class Provenance(BaseModel):
    """Where one of our tasks came from. Stored as ``[metadata.autoenvscaling]`` in task.toml so the
    task stays a valid Harbor task; all fields optional, unknown ones kept."""

    model_config = ConfigDict(extra="allow", frozen=True)

    domain: str | None = None
    family: str | None = None
    parameters: dict[str, Any] = Field(default_factory=dict)
    seed: int | None = None
    difficulty: str | None = None
    parent: str | None = None
    direction: str | None = None
    proposer: str | None = None
    proposer_model: str | None = None
    round: int | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None
    validation: dict[str, Any] | None = None
    #: the absolute paths the task asks the agent to produce or change, where its declared outputs are
    #: wider (a terminal task declares /app whole): what the red team's cheats aim at
    asks: list[str] | None = None
