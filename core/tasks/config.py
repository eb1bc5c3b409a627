"""Pydantic models of Harbor's task.toml.

Every model keeps unknown keys (``extra="allow"``) so that a task written by a newer Harbor, or
carrying another tool's fields, survives a read and a write unchanged. Fields mirror Harbor's names;
their documentation says what our runtime does with them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


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

    Our additions (Harbor ignores them): ``view`` says what the verifier sees of the agent's
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
        return "outputs" if self.outputs or self.view == "outputs" else "protected"


class AgentConfig(_Section):
    """``[agent]``: the time the agent gets and the user it runs as. ``tools`` (our addition) names
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
    unless ``gpu_optional`` (our addition, Harbor ignores it) says the task also runs without GPUs in
    a reduced mode its verifier reports (a kernel task checks correctness in the Triton interpreter
    and reports its timing as unmeasured); it still gets the GPUs wherever the backend has them.
    ``browser`` (our addition, Harbor ignores it) asks for a browser the agent drives; so does a tool
    named "browser" in ``[agent] tools``. See ``TaskRequirements`` (tasks/requirements.py).
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
    artifacts: list[str] = Field(default_factory=list)
    task: TaskInfo = Field(default_factory=TaskInfo)
    metadata: dict[str, Any] = Field(default_factory=dict)
    verifier: VerifierConfig = Field(default_factory=VerifierConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    environment: EnvironmentConfig = Field(default_factory=EnvironmentConfig)
    steps: list[StepConfig] = Field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The keys that were given (or set), in TOML shape; defaults that were never set stay out."""
        return self.model_dump(mode="json", exclude_unset=True, by_alias=True)


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
