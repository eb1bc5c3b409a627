"""Jobs as plain data: what a worker process (local or on a Ray cluster) needs to do one unit of work.

The executors run any ``Job``: plain data with a ``key`` (its result comes back under it), the
``WorkerSetup`` its worker rebuilds the plugin host and sandbox backend from, and ``run``, which the
worker calls with its ``WorkerContext`` (``worker.py``) and which returns a pydantic model, the
``JobResult``'s value. Each kind of job lives next to what it runs: ``AttemptJob`` (one trial with an
agent, returning a TrialResult) here, ``gates.validate.ValidateJob`` (a ValidationReport) and
``flywheel.jobs.ProposeJob`` (a ProposeOutcome) in their own layers, so the executors depend on none
of them. A job holds no live object: the task travels as a ``TaskRef`` (a path on storage every
worker reads, or the task directory inline as a tar for small generated tasks), the sandbox backend
as a name and a ``SandboxPolicy``, models as specs (name, base URL, options), and the plugins as
import paths. Seeds are fields of the job, so the result never depends on which worker ran it or in
which order.

Inline task references are the default for generated tasks (a few KB to a few MB); tasks that
already live on disk (``tasks validate PATH``) travel as absolute paths, so a run across machines
needs those paths on shared storage (docs/scaling.md).
"""

from __future__ import annotations

import abc
import importlib
import os
import types
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..agents.base import AgentLimits
from ..errors import UsageError
from ..sandbox.base import SandboxPolicy
from ..tasks import Task
from ..tasks.harbor import read_task, task_from_blob, task_to_blob

if TYPE_CHECKING:
    from ..agents.base import Agent
    from ..agents.solver import SolverAgent
    from ..llm.base import LLMBackend
    from ..plugins.host import PluginHost
    from ..runtime.trial import TrialResult
    from ..sandbox.base import SandboxBackend
    from .worker import WorkerContext

_DATA = ConfigDict(frozen=True, ser_json_bytes="base64", val_json_bytes="base64")


class TaskRef(BaseModel):
    """A task as a job carries it: ``path`` (a task directory every worker can read) or ``blob``
    (the task directory as a tar, for tasks that exist only in memory)."""

    model_config = _DATA

    path: str | None = None
    blob: bytes | None = None

    @classmethod
    def inline(cls, task: Task) -> "TaskRef":
        return cls(blob=task_to_blob(task))

    @classmethod
    def at(cls, path: str | os.PathLike[str]) -> "TaskRef":
        return cls(path=str(Path(path).resolve()))

    def load(self) -> Task:
        if self.blob is not None:
            return task_from_blob(self.blob)
        if self.path is None:
            raise UsageError("a task reference needs a path or a blob", hint="use TaskRef.at(path) or TaskRef.inline(task)")
        return read_task(self.path)


class PluginRef(BaseModel):
    """A plugin a worker registers: the importable module, under the name the driver gave it."""

    model_config = _DATA

    name: str
    module: str
    distribution: str | None = None


class WorkerSetup(BaseModel):
    """What every job of a batch shares: the plugins (built-ins are always there) and the sandbox
    backend by name with its policy (None: the job needs no sandbox)."""

    model_config = _DATA

    plugins: tuple[PluginRef, ...] = ()
    strict: bool = False
    backend: str | None = None
    policy: SandboxPolicy = Field(default_factory=SandboxPolicy)
    cache_dir: str | None = None
    host_key: str | None = None
    """For an executor that runs jobs in this process: the driver's own plugin host, by a key that
    means something in this process only (object plugins included); None: rebuilt from ``plugins``."""

    @classmethod
    def of(cls, host: PluginHost, backend: SandboxBackend | None = None, *,
           in_process: bool = False) -> "WorkerSetup":
        """The setup that rebuilds ``host``'s plugins and ``backend`` in a worker. Plugins must be
        importable modules (installed entry points, or modules registered in-process); an object
        plugin that registers what workers use cannot travel, and says so. Object plugins that only
        observe events (task validated, round ended) or register what only the driver uses (commands,
        trainers, doctor checks) stay on the driver. ``in_process`` (jobs run in this process, as
        ``LocalExecutor(in_process=True)`` does): the jobs use ``host`` itself, whatever it holds."""
        if in_process:
            key = f"{os.getpid()}-{id(host)}"
            _IN_PROCESS_HOSTS[key] = host
            return cls(strict=host.strict, backend=backend.name if backend is not None else None,
                       policy=backend.policy if backend is not None else SandboxPolicy(),
                       cache_dir=str(backend.cache_dir) if backend is not None else None, host_key=key)
        refs = []
        for info in host.plugins():
            if info.builtin:
                continue
            plugin = host.pm.get_plugin(info.name)
            module = getattr(plugin, "__name__", None)
            if isinstance(module, str) and isinstance(plugin, types.ModuleType):
                refs.append(PluginRef(name=info.name, module=module, distribution=info.distribution))
            elif any(h.startswith("autoenvscaling_register_") and h not in _DRIVER_HOOKS for h in info.hooks):
                raise UsageError(f"plugin {info.name} is an in-process object, so worker processes cannot load it",
                                 hint="register an importable module (or an entry point), or use "
                                      "LocalExecutor(in_process=True)")
        return cls(plugins=tuple(refs), strict=host.strict,
                   backend=backend.name if backend is not None else None,
                   policy=backend.policy if backend is not None else SandboxPolicy(),
                   cache_dir=str(backend.cache_dir) if backend is not None else None)

    def load_plugins(self) -> list[tuple[PluginRef, object]]:
        return [(ref, importlib.import_module(ref.module)) for ref in self.plugins]


# The plugin hosts of in-process setups (weakly: a host lives as long as its driver keeps it).
_IN_PROCESS_HOSTS: "weakref.WeakValueDictionary[str, PluginHost]" = weakref.WeakValueDictionary()


def in_process_host(setup: WorkerSetup) -> "PluginHost":
    """The driver's host an in-process setup names."""
    host = _IN_PROCESS_HOSTS.get(setup.host_key or "")
    if host is None:
        raise UsageError("this job's setup names the plugin host of an in-process executor, which is not in this "
                         "process", hint="build the setup with WorkerSetup.of(host, backend) for worker processes")
    return host


# Registrations used only by the driver process: an object plugin limited to these need not travel.
_DRIVER_HOOKS = frozenset({"autoenvscaling_register_commands", "autoenvscaling_register_trainers",
                           "autoenvscaling_register_prerequisites"})


class LLMSpec(BaseModel):
    """A model to build in the worker through the host's LLM backend registry: ``backend`` by name
    (default: openai with a ``base_url``, else transformers, which loads ``model`` once per worker)."""

    model_config = _DATA

    model: str = "embedded"
    base_url: str | None = None
    backend: str | None = None

    def backend_name(self) -> str:
        return self.backend or ("openai" if self.base_url else "transformers")

    def build(self, host: PluginHost) -> LLMBackend:
        return host.llm_backends.get(self.backend_name()).from_target(self.model, self.base_url)

    def check(self, host: PluginHost) -> None:
        """Fail now, in one line, if the workers could not build this model (nothing is loaded)."""
        host.llm_backends.get(self.backend_name()).check_target(self.model, self.base_url)


class SolverSpec(BaseModel):
    """The solver as data: its model and the SolverAgent options (None: the model's profile). A
    trainer returns a new one (a new checkpoint path, or a new served model name)."""

    model_config = _DATA

    llm: LLMSpec = Field(default_factory=LLMSpec)
    temperature: float | None = None
    max_tokens_per_turn: int | None = None
    limits: AgentLimits | None = None
    tool_calling: bool | None = None
    rollout_concurrency: int | None = None

    @property
    def model(self) -> str:
        return self.llm.model

    def build(self, host: PluginHost, llm: LLMBackend | None = None) -> SolverAgent:
        """The agent, with every tool registered with ``host`` for tasks whose ``tools`` ([metadata.autoenvscaling.agent]) name them."""
        from ..agents.solver import SolverAgent
        from ..agents.tools import Toolbox

        return SolverAgent(llm or self.llm.build(host), temperature=self.temperature,
                           max_tokens_per_turn=self.max_tokens_per_turn, limits=self.limits,
                           tool_calling=self.tool_calling, rollout_concurrency=self.rollout_concurrency,
                           tools=Toolbox.from_host(host))


class AgentSpec(BaseModel):
    """An agent by its registered name; "solver" needs ``solver``. ``cheat``: the name is a
    registered cheat's (redteam/), not an agent's."""

    model_config = _DATA

    name: str
    solver: SolverSpec | None = None
    cheat: bool = False


class Job(BaseModel, abc.ABC):
    """What an executor runs: plain data (it crosses to worker processes and Ray workers pickled, and
    round-trips through JSON) that a worker turns into a value with ``run``. ``kind``: a subclass's
    name for itself (a Literal). ``key``: the result comes back under it. ``setup``: what its worker
    rebuilds (plugins, sandbox backend). A job that raises becomes an error result (``run_job``)."""

    model_config = _DATA

    kind: str
    key: str
    setup: WorkerSetup

    @abc.abstractmethod
    async def run(self, context: WorkerContext) -> BaseModel:
        """Do the job in a worker, with that worker's caches (plugin host, backends, models)."""


class AttemptJob(Job):
    """One trial of a task with an agent; ``seed`` (a rollout's) makes a sampling agent repeatable.
    ``artifacts_limit``: bytes of the task's ``artifacts`` to collect into the result (0: none)."""

    kind: Literal["attempt"] = "attempt"
    task: TaskRef
    agent: AgentSpec
    seed: int | None = None
    artifacts_limit: int = 0

    async def run(self, context: WorkerContext) -> TrialResult:
        runner = context.runner(self.setup)
        if runner is None:
            raise UsageError("an attempt needs a sandbox backend", hint="give the job's WorkerSetup a backend name")
        agent = self._agent(context)
        if self.seed is not None:
            agent = agent.seeded(self.seed)
        return await runner.run(self.task.load(), agent, artifacts_limit=self.artifacts_limit)

    def _agent(self, context: WorkerContext) -> Agent:
        if self.agent.name == "solver":
            if self.agent.solver is None:
                raise UsageError("the solver agent needs a SolverSpec",
                                 hint="AgentSpec(name='solver', solver=SolverSpec(...))")
            return context.solver(self.setup, self.agent.solver)
        host = context.host(self.setup)
        return (host.cheats if self.agent.cheat else host.agents).get(self.agent.name)()


class JobResult(BaseModel):
    """One job's result, in completion order, with the job's key. ``value``: what the job's ``run``
    returned (a pydantic model: TrialResult, ValidationReport, ProposeOutcome, ...). ``error`` is one
    line (the traceback, when there is one, in ``details``); ``retries``: how often a dead worker's
    job was started again."""

    model_config = ConfigDict(frozen=True)

    key: str
    value: Any = None
    error: str | None = None
    details: str | None = None
    retries: int = 0

    @property
    def ok(self) -> bool:
        return self.error is None
