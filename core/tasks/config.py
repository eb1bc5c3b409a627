"""Pydantic models of Harbor's task.toml.

Every model keeps unknown keys (``extra="allow"``) so that a task written by a newer Harbor, or
carrying another tool's fields, survives a read and a write unchanged. Fields mirror Harbor's names;
their documentation says what our runtime does with them.
"""

from __future__ import annotations

import copy
from pathlib import PurePosixPath
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

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


#: Harbor's ``network_mode`` values. "public" asks for the internet (the sandbox policy decides, as for
#: ``allow_internet``); "no-network" is never granted it; "allowlist" runs offline: we have no egress
#: filter, so ``allowed_hosts`` is not enforced and never widened to the whole internet.
NetworkMode = Literal["public", "no-network", "allowlist"]
NETWORK_MODES: tuple[str, ...] = get_args(NetworkMode)


class _Section(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)


def _user_name(value: Any) -> Any:
    """Harbor also takes a UID as a number: we keep it as its string."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


class _NetworkSection(_Section):
    """``network_mode`` and ``allowed_hosts``: [environment]'s baseline, or a phase's ([agent],
    [verifier]) override of it. Harbor's rule holds: ``allowed_hosts`` only with "allowlist"."""

    network_mode: NetworkMode | None = None
    allowed_hosts: list[str] | None = None

    @field_validator("network_mode", mode="before")
    @classmethod
    def _known_mode(cls, value: Any) -> Any:
        if value is not None and value not in NETWORK_MODES:
            raise ValueError(f"network_mode must be one of {', '.join(map(repr, NETWORK_MODES))}, not {value!r}")
        return value

    @model_validator(mode="after")
    def _hosts_need_allowlist(self) -> "_NetworkSection":
        if self.allowed_hosts is not None and self.network_mode != "allowlist":
            raise ValueError("allowed_hosts is only valid with network_mode = 'allowlist'")
        return self


class Author(_Section):
    name: str | None = None
    email: str | None = None


class TaskInfo(_Section):
    """``[task]``: identity of the task."""

    name: str | None = None
    version: str | None = None
    description: str | None = None
    keywords: list[str] = Field(default_factory=list)
    authors: list[Author] = Field(default_factory=list)


class VerifierCollectConfig(_Section):
    """``[[verifier.collect]]``: Harbor runs this in a compose service after the agent phase. Not run
    here (the lint says so)."""

    command: str
    service: str = "main"
    timeout_sec: float = 60.0
    user: str | None = None

    _user = field_validator("user", mode="before")(_user_name)


class VerifierConfig(_NetworkSection):
    """``[verifier]``: how tests/test.sh runs. ``env`` is added to the verifier's environment.
    ``network_mode``/``allowed_hosts`` override [environment]'s for the verifier (see
    ``TaskConfig.wants_internet``). ``environment`` (a separate verifier's own environment) and
    ``collect`` are Harbor's and not used here: the lint warns.

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
    environment: EnvironmentConfig | None = None
    collect: list[VerifierCollectConfig] = Field(default_factory=list)
    view: Literal["protected", "outputs", "agent"] = "protected"
    agent_paths: list[str] = Field(default_factory=list)
    outputs: list[str] = Field(default_factory=list)
    imports: list[str] = Field(default_factory=list)

    _user = field_validator("user", mode="before")(_user_name)

    @property
    def effective_view(self) -> Literal["protected", "outputs", "agent"]:
        """The view the verifier gets: "agent" when asked, "outputs" when outputs are declared (or
        asked for), else "protected"."""
        if self.view == "agent":
            return "agent"
        return "outputs" if self.outputs or self.view == "outputs" or self.separate else "protected"

    @property
    def separate(self) -> bool:
        """Harbor's separate verifier: asked for, or implied by a verifier ``environment``."""
        return self.environment_mode == "separate" or (self.environment_mode is None and self.environment is not None)


class AgentConfig(_NetworkSection):
    """``[agent]``: the time the agent gets and the user it runs as; ``network_mode``/``allowed_hosts``
    override [environment]'s for the agent phase. ``tools`` (ours, in
    ``[metadata.autoenvscaling.agent]``) names
    the registered tools the agent gets (default: the agent's own default set, ``bash``)."""

    timeout_sec: float = 600.0
    user: str | None = None
    tools: list[str] | None = None

    _user = field_validator("user", mode="before")(_user_name)


class HealthcheckConfig(_Section):
    """``[environment.healthcheck]`` or a step's ``healthcheck``: ``command`` is run until it exits 0,
    before the agent; ``retries`` consecutive failures (those within ``start_period_sec`` of the first
    attempt do not count) fail the trial. Our defaults for the intervals are shorter than Harbor's."""

    command: str
    interval_sec: float = 1.0
    timeout_sec: float = 10.0
    start_period_sec: float = 0.0
    start_interval_sec: float = 1.0
    retries: int = 3


class SolutionConfig(_Section):
    """``[solution]``: ``env`` is added to the environment solution/solve.sh runs with (the oracle)."""

    env: dict[str, str] = Field(default_factory=dict)


class MCPServerConfig(_Section):
    """``[[environment.mcp_servers]]``: an MCP server for the agent. Not supported here (the lint
    warns); typed so that a task carrying one loads and is written back as it was."""

    name: str
    transport: str = "sse"
    url: str | None = None
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    headers: dict[str, str] = Field(default_factory=dict)


class TpuSpec(_Section):
    """``[environment.tpu]``: a TPU slice (not provided by any of our backends; the lint warns)."""

    type: str
    topology: str


class ArtifactConfig(_Section):
    """One ``artifacts`` entry in its table form: ``source`` (a path in the sandbox, relative ones
    from the workdir) is collected after the trial into the result under ``destination`` (default:
    the source path without its leading "/"), less what ``exclude`` (glob patterns) matches.
    ``service`` other than "main" (a compose sidecar) is not collected here."""

    source: str
    destination: str | None = None
    exclude: list[str] = Field(default_factory=list)
    service: str | None = None

    @field_validator("source")
    @classmethod
    def _source(cls, value: str) -> str:
        if not value.strip() or ".." in PurePosixPath(value).parts:
            raise ValueError(f"artifact source must be a path without '..' components, got {value!r}")
        return value

    @field_validator("destination")
    @classmethod
    def _destination(cls, value: str | None) -> str | None:
        if not value:
            return None
        path = PurePosixPath(value)
        if "\\" in value or path.is_absolute() or ".." in path.parts or value.rstrip("/") == "manifest.json":
            raise ValueError(f"artifact destination must be a relative path without '..' (and not manifest.json), "
                             f"got {value!r}")
        return value

    @property
    def main(self) -> bool:
        """Whether it is collected from the agent's own container (not a compose sidecar)."""
        return self.service in (None, "main")


def artifact_specs(entries: list[str | dict[str, Any]]) -> list[ArtifactConfig]:
    """``artifacts`` entries (a path, or a table) as typed entries."""
    return [ArtifactConfig(source=e) if isinstance(e, str) else ArtifactConfig.model_validate(e) for e in entries]


class EnvironmentConfig(_NetworkSection):
    """``[environment]``: how the sandbox is built and what it may use.

    ``network_mode`` "public" (or the deprecated ``allow_internet``) is a request: the sandbox policy
    decides whether it is granted (offline by default); "no-network" and "allowlist" run offline (see
    ``TaskConfig.wants_internet``). ``healthcheck`` runs after the sandbox starts, before the agent.
    ``mcp_servers``, ``tpu``, ``skills_dir`` and a non-Linux ``os`` are Harbor's and not supported
    here: the lint warns. ``docker_image`` names a prebuilt image instead of environment/Dockerfile. ``gpus`` and
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
    healthcheck: HealthcheckConfig | None = None
    mcp_servers: list[MCPServerConfig] = Field(default_factory=list)
    os: str | None = None
    tpu: TpuSpec | None = None
    skills_dir: str | None = None
    memory: str | None = None  # deprecated in Harbor ("4G"): read as memory_mb when that is not given
    storage: str | None = None  # likewise for storage_mb

    @model_validator(mode="before")
    @classmethod
    def _legacy_sizes(cls, data: Any) -> Any:
        """Harbor's deprecated ``memory``/``storage`` ("512M", "4G") mean ``memory_mb``/``storage_mb``
        where those are not given; the old keys stay as written."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for old, new in (("memory", "memory_mb"), ("storage", "storage_mb")):
            if isinstance(data.get(old), str) and new not in data:
                data[new] = _size_mb(data[old], old)
        return data

    @property
    def network_baseline(self) -> NetworkMode | None:
        """What the environment asks for every phase: ``network_mode``, else the deprecated
        ``allow_internet`` as Harbor maps it (true: "public", false: "no-network"); None when
        neither is given (Harbor's default is "public"; ours is offline unless asked)."""
        if self.network_mode is not None:
            return self.network_mode
        if "allow_internet" in self.model_fields_set and self.allowed_hosts is None:
            return "public" if self.allow_internet else "no-network"
        return None


class StepConfig(_Section):
    """``[[steps]]``: one step of a multi-step task; its files live under steps/<name>/.
    ``min_reward``: a number (the step's mean reward) or a table of thresholds by reward key (a key
    below its threshold, or missing, stops the task)."""

    name: str
    min_reward: float | dict[str, float] | None = None
    agent: AgentConfig | None = None
    verifier: VerifierConfig | None = None
    healthcheck: HealthcheckConfig | None = None
    artifacts: list[str | dict[str, Any]] = Field(default_factory=list)

    @model_validator(mode="after")
    def _typed_artifacts(self) -> "StepConfig":
        artifact_specs(self.artifacts)
        return self


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
    solution: SolutionConfig = Field(default_factory=SolutionConfig)
    source: str | None = None
    multi_step_reward_strategy: Literal["mean", "final"] | None = None
    steps: list[StepConfig] = Field(default_factory=list)

    @model_validator(mode="after")
    def _typed_artifacts(self) -> "TaskConfig":
        artifact_specs(self.artifacts)
        return self

    def phase_network(self, phase: Literal["agent", "verifier"], step: StepConfig | None = None) -> NetworkMode | None:
        """The network mode ``phase`` (of ``step``) asks for: the step's override, else the task's
        [agent]/[verifier] one, else [environment]'s baseline; None when nothing asks."""
        configs: list[_NetworkSection | None] = ([step.agent if step else None, self.agent] if phase == "agent"
                                                 else [step.verifier if step else None, self.verifier])
        for config in configs:
            if config is not None and config.network_mode is not None:
                return config.network_mode
        return self.environment.network_baseline

    def phase_networks(self) -> dict[str, NetworkMode | None]:
        """Every phase's network mode, by "agent"/"verifier" (prefixed "<step>." for a step's)."""
        if not self.steps:
            return {phase: self.phase_network(phase) for phase in ("agent", "verifier")}
        return {f"{step.name}.{phase}": self.phase_network(phase, step)
                for step in self.steps for phase in ("agent", "verifier")}

    @property
    def wants_internet(self) -> bool:
        """Whether the task asks for the internet: every phase's mode is "public". Our sandbox has one
        network setting for the whole trial, so a phase that asks for none, "no-network" or
        "allowlist" keeps every phase offline (never wider than a phase asked)."""
        return all(mode == "public" for mode in self.phase_networks().values())

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
        if isinstance(verifier, dict) and (verifier.get("environment_mode") == "separate" or (
                verifier.get("environment_mode") is None and verifier.get("environment") is not None)):
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
        separate = self.verifier.separate
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


def _size_mb(text: str, field: str) -> int:
    """Megabytes of a size like "512M", "4G" or "2048K"."""
    size = text.strip().upper()
    units = {"G": 1024.0, "M": 1.0, "K": 1 / 1024}
    try:
        return int(float(size[:-1]) * units[size[-1]])
    except (KeyError, ValueError, IndexError):
        raise ValueError(f"environment.{field} {text!r} is not a size like '512M' or '4G'") from None


VerifierConfig.model_rebuild()  # its ``environment`` is defined after it


def _lift_own_fields(data: dict[str, Any]) -> None:
    """Move ``[metadata.autoenvscaling.<section>]`` settings of ours into ``data[<section>]``."""
    metadata = data.get("metadata")
    if not isinstance(metadata, dict):
        return
    own = metadata.get(OWN_KEY)
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
        current = {} if data.get(section) is None else data[section]
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
    #: glob patterns of files under tests/ the agent legitimately sees too (a repository's own test
    #: suite, a kernel's reference): copies of them in the image are no leak (gates/lint.py)
    public_files: list[str] | None = None
