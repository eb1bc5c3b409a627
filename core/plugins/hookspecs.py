"""The hooks a plugin may implement.

Register hooks receive a typed ``Registrar`` and only register things; behaviour lives in the
registered classes. Event hooks announce what happened and return nothing. Signatures only grow:
new optional arguments may be added, none removed or renamed. Every hook here is documented in
docs/hooks.md with its signature; tests/plugins/test_hookspecs_documented.py enforces that.
"""

from __future__ import annotations

from typing import Any

import pluggy

PROJECT = "autoenvscaling"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def autoenvscaling_register_domains(registrar: Any) -> None:
    """Register ``Domain`` subclasses (or "pkg.mod:Class" paths): ``registrar.add(name, cls)``."""


@hookspec
def autoenvscaling_register_sandbox_backends(registrar: Any) -> None:
    """Register ``SandboxBackend`` classes: ``registrar.add("bwrap", "pkg.mod:Class", extra=None)``."""


@hookspec
def autoenvscaling_register_agents(registrar: Any) -> None:
    """Register ``Agent`` classes that act in a live sandbox."""


@hookspec
def autoenvscaling_register_llm_backends(registrar: Any) -> None:
    """Register ``LLMBackend`` classes (an OpenAI-compatible client, a local model, ...)."""


@hookspec
def autoenvscaling_register_formats(registrar: Any) -> None:
    """Register ``TaskFormat`` importers/exporters (Harbor, JSONL, Parquet, SWE-bench, ...)."""


@hookspec
def autoenvscaling_register_gates(registrar: Any) -> None:
    """Register admission ``Gate`` classes; ``Gate.order`` places them cheapest first."""


@hookspec
def autoenvscaling_register_proposers(registrar: Any) -> None:
    """Register ``Proposer`` classes (procedural, prompt, prompt+feedback, agentic, ...)."""


@hookspec
def autoenvscaling_register_executors(registrar: Any) -> None:
    """Register ``Executor`` classes that run many jobs in parallel (local pool, Ray, ...)."""


@hookspec
def autoenvscaling_register_tools(registrar: Any) -> None:
    """Register agent ``Tool`` classes (``bash``, a browser, ...) a task's agent can be given."""


@hookspec
def autoenvscaling_register_verifier_runtimes(registrar: Any) -> None:
    """Register ``VerifierRuntime`` classes: what verifiers need at verification time, provided
    read-only and out of the agent's reach (the offline shims, a browser client, a timing harness)."""


@hookspec
def autoenvscaling_register_trainers(registrar: Any) -> None:
    """Register ``Trainer`` classes: given the admitted pool and the rollouts, return an updated solver."""


@hookspec
def autoenvscaling_register_prerequisites(registrar: Any) -> None:
    """Register ``Prerequisite`` checks that ``autoenvscaling doctor`` runs and reports (chromium, ray, ...)."""


@hookspec
def autoenvscaling_register_commands(cli: Any) -> None:
    """Add click commands or groups to the ``autoenvscaling`` CLI group ``cli``."""


@hookspec
def autoenvscaling_task_validated(report: Any) -> None:
    """Announce a finished ``ValidationReport`` (valid or not)."""


@hookspec
def autoenvscaling_round_ended(summary: Any) -> None:
    """Announce the end of a flywheel round with its ``RoundSummary``."""
