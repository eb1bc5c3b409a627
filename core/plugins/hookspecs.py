"""The hooks a plugin may implement.

Register hooks receive a typed ``Registrar`` and only register things; behaviour lives in the
registered classes. Event hooks announce what happened and return nothing. Signatures only grow:
new optional arguments may be added, none removed or renamed. Every hook here is documented in
docs/hooks.md with its signature; tests/plugins/test_hookspecs_documented.py enforces that.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:  # types only: a plugin module importing hookimpl must not import all of these
    import click

    from ..agents.base import Agent
    from ..agents.tools import Tool
    from ..domains.base import Domain
    from ..executors.base import Executor
    from ..flywheel.summary import RoundSummary
    from ..gates.base import Gate, ValidationReport
    from ..llm.base import LLMBackend
    from ..proposers.base import Proposer
    from ..redteam.cheat import Cheat
    from ..runtime.verifier_runtime import VerifierRuntime
    from ..sandbox.base import SandboxBackend
    from ..suite.formats import TaskFormat
    from ..trainers.base import Trainer
    from .prerequisites import Prerequisite
    from .registry import Registrar

PROJECT = "autoenvscaling"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def autoenvscaling_register_domains(registrar: Registrar[Domain]) -> None:
    """Register ``Domain`` subclasses (or "pkg.mod:Class" paths): ``registrar.add(name, cls)``."""


@hookspec
def autoenvscaling_register_sandbox_backends(registrar: Registrar[SandboxBackend]) -> None:
    """Register ``SandboxBackend`` classes: ``registrar.add("bwrap", "pkg.mod:Class", extra=None)``."""


@hookspec
def autoenvscaling_register_agents(registrar: Registrar[Agent]) -> None:
    """Register ``Agent`` classes that act in a live sandbox."""


@hookspec
def autoenvscaling_register_llm_backends(registrar: Registrar[LLMBackend]) -> None:
    """Register ``LLMBackend`` classes (an OpenAI-compatible client, a local model, ...)."""


@hookspec
def autoenvscaling_register_formats(registrar: Registrar[TaskFormat]) -> None:
    """Register ``TaskFormat`` importers/exporters (Harbor, JSONL, Parquet, SWE-bench, ...)."""


@hookspec
def autoenvscaling_register_gates(registrar: Registrar[Gate]) -> None:
    """Register admission ``Gate`` classes; ``Gate.order`` places them cheapest first."""


@hookspec
def autoenvscaling_register_proposers(registrar: Registrar[Proposer]) -> None:
    """Register ``Proposer`` classes (procedural, prompt, prompt+feedback, agentic, ...)."""


@hookspec
def autoenvscaling_register_executors(registrar: Registrar[Executor]) -> None:
    """Register ``Executor`` classes that run many jobs in parallel (local pool, Ray, ...)."""


@hookspec
def autoenvscaling_register_tools(registrar: Registrar[Tool]) -> None:
    """Register agent ``Tool`` classes (``bash``, a browser, ...) a task's agent can be given."""


@hookspec
def autoenvscaling_register_verifier_runtimes(registrar: Registrar[VerifierRuntime]) -> None:
    """Register ``VerifierRuntime`` classes: what verifiers need at verification time, provided
    read-only and out of the agent's reach (the offline shims, a browser client, a timing harness)."""


@hookspec
def autoenvscaling_register_cheats(registrar: Registrar[Cheat]) -> None:
    """Register ``Cheat`` classes: scripted agents that try to earn reward without doing the task,
    each with a positive control. The red-team gate runs the cheap ones on every candidate task;
    ``autoenvscaling tasks redteam`` runs them all. Name a domain's cheats ``<domain>.<cheat>``."""


@hookspec
def autoenvscaling_register_trainers(registrar: Registrar[Trainer]) -> None:
    """Register ``Trainer`` classes: given the admitted pool and the rollouts, return an updated solver."""


@hookspec
def autoenvscaling_register_prerequisites(registrar: Registrar[Prerequisite]) -> None:
    """Register ``Prerequisite`` checks that ``autoenvscaling doctor`` runs and reports (chromium, ray, ...)."""


@hookspec
def autoenvscaling_register_commands(cli: click.Group) -> None:
    """Add click commands or groups to the ``autoenvscaling`` CLI group ``cli``."""


@hookspec
def autoenvscaling_task_validated(report: ValidationReport) -> None:
    """Announce a finished ``ValidationReport`` (valid or not)."""


@hookspec
def autoenvscaling_round_ended(summary: RoundSummary) -> None:
    """Announce the end of a flywheel round with its ``RoundSummary``."""
