"""The core's public API: what a plugin or the trainer imports from the core, in one place.

    from autoenvscaling.api import Domain, LevelledDomain, Task, render_task, declare

Plugins and the trainer import the core only through this module (tests/test_public_api.py checks
it), so what they depend on is written down here, and the core's packages may move behind it. Each
name is imported on first use, from the module that defines it: importing ``autoenvscaling.api``
costs nothing, and ``from autoenvscaling.api import Task`` loads the task model and nothing else.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: public name -> the module that defines it
EXPORTS: dict[str, str] = {
    "Action": "autoenvscaling.agents.base",
    "Agent": "autoenvscaling.agents.base",
    "AgentLimits": "autoenvscaling.agents.base",
    "Trajectory": "autoenvscaling.agents.base",
    "NopAgent": "autoenvscaling.agents.builtin",
    "solution_files": "autoenvscaling.agents.builtin",
    "ROLLOUT_TEMPERATURE": "autoenvscaling.agents.solver",
    "SolverAgent": "autoenvscaling.agents.solver",
    "Arguments": "autoenvscaling.agents.tools",
    "Tool": "autoenvscaling.agents.tools",
    "ToolContext": "autoenvscaling.agents.tools",
    "ToolOutcome": "autoenvscaling.agents.tools",
    "Toolbox": "autoenvscaling.agents.tools",
    "truncate_middle": "autoenvscaling.agents.tools",
    "add_family_commands": "autoenvscaling.cli.domain_cmds",
    "cache_dir": "autoenvscaling.config",
    "DIFFICULTIES": "autoenvscaling.domains.base",
    "DIRECTIONS": "autoenvscaling.domains.base",
    "Domain": "autoenvscaling.domains.base",
    "Family": "autoenvscaling.domains.base",
    "KitExample": "autoenvscaling.domains.base",
    "LevelledDomain": "autoenvscaling.domains.base",
    "ProposerKit": "autoenvscaling.domains.base",
    "same_task_content": "autoenvscaling.domains.base",
    "FamilyInfo": "autoenvscaling.domains.catalog",
    "family_module": "autoenvscaling.domains.catalog",
    "lazy_domain": "autoenvscaling.domains.catalog",
    "grow": "autoenvscaling.domains.render",
    "label_of": "autoenvscaling.domains.render",
    "package_reader": "autoenvscaling.domains.render",
    "render_task": "autoenvscaling.domains.render",
    "AESError": "autoenvscaling.errors",
    "ConfigError": "autoenvscaling.errors",
    "MissingPrerequisite": "autoenvscaling.errors",
    "NoFurtherVariant": "autoenvscaling.errors",
    "SandboxError": "autoenvscaling.errors",
    "TaskFormatError": "autoenvscaling.errors",
    "UsageError": "autoenvscaling.errors",
    "LLMSpec": "autoenvscaling.executors.jobs",
    "SolverSpec": "autoenvscaling.executors.jobs",
    "Assignment": "autoenvscaling.flywheel.assignments",
    "from_summary": "autoenvscaling.flywheel.assignments",
    "summary_of": "autoenvscaling.flywheel.assignments",
    "calibrate": "autoenvscaling.flywheel.calibration",
    "rollout_seed": "autoenvscaling.flywheel.calibration",
    "outcome_of": "autoenvscaling.flywheel.loop",
    "wilson_interval": "autoenvscaling.flywheel.metrics",
    "RolloutRow": "autoenvscaling.flywheel.rundb",
    "Evidence": "autoenvscaling.gates.base",
    "Gate": "autoenvscaling.gates.base",
    "GateContext": "autoenvscaling.gates.base",
    "GateResult": "autoenvscaling.gates.base",
    "GateSettings": "autoenvscaling.gates.base",
    "ValidationReport": "autoenvscaling.gates.base",
    "import_tasks": "autoenvscaling.gates.importing",
    "PREPARED": "autoenvscaling.gates.runtime",
    "trial_evidence": "autoenvscaling.gates.runtime",
    "DomainLintGate": "autoenvscaling.gates.static",
    "Validator": "autoenvscaling.gates.validate",
    "ChatMessage": "autoenvscaling.llm.base",
    "ChatResponse": "autoenvscaling.llm.base",
    "LLMBackend": "autoenvscaling.llm.base",
    "ToolSpec": "autoenvscaling.llm.base",
    "Usage": "autoenvscaling.llm.base",
    "ChatTemplate": "autoenvscaling.llm.chat_template",
    "eos_ids": "autoenvscaling.llm.chat_template",
    "EMBEDDED_MODELS": "autoenvscaling.llm.embedded",
    "embedded_model_path": "autoenvscaling.llm.embedded",
    "LLMError": "autoenvscaling.llm.errors",
    "LLMRequestError": "autoenvscaling.llm.errors",
    "parse_tool_calls": "autoenvscaling.llm.tool_text",
    "create_host": "autoenvscaling.plugins",
    "declare": "autoenvscaling.plugins",
    "hookimpl": "autoenvscaling.plugins",
    "PluginHost": "autoenvscaling.plugins.host",
    "Prerequisite": "autoenvscaling.plugins.prerequisites",
    "PrerequisiteStatus": "autoenvscaling.plugins.prerequisites",
    "ProgramOnPath": "autoenvscaling.plugins.prerequisites",
    "PromptProposer": "autoenvscaling.proposers.prompt",
    "Cheat": "autoenvscaling.redteam.cheat",
    "agent_view_control": "autoenvscaling.redteam.cheat",
    "exists_only_control": "autoenvscaling.redteam.cheat",
    "reward_if": "autoenvscaling.redteam.cheat",
    "SOLUTION_DIR": "autoenvscaling.runtime.paths",
    "TrialRunner": "autoenvscaling.runtime.trial",
    "RuntimeContext": "autoenvscaling.runtime.verifier_runtime",
    "VerifierRuntime": "autoenvscaling.runtime.verifier_runtime",
    "materialise_files": "autoenvscaling.runtime.verifier_runtime",
    "task_domain": "autoenvscaling.runtime.verifier_runtime",
    "PreparedEnvironment": "autoenvscaling.sandbox.base",
    "Sandbox": "autoenvscaling.sandbox.base",
    "SandboxBackend": "autoenvscaling.sandbox.base",
    "last_json_object": "autoenvscaling.sandbox.base",
    "host_gpus": "autoenvscaling.sandbox.gpu",
    "file_lock": "autoenvscaling.sandbox.rootfs",
    "make_backend": "autoenvscaling.sandbox.select",
    "TaskFormat": "autoenvscaling.suite.formats",
    "SuiteStore": "autoenvscaling.suite.store",
    "StepConfig": "autoenvscaling.tasks",
    "Task": "autoenvscaling.tasks",
    "TaskFile": "autoenvscaling.tasks",
    "qualified_name": "autoenvscaling.tasks",
    "short_name": "autoenvscaling.tasks",
    "read_task": "autoenvscaling.tasks.harbor",
    "write_task": "autoenvscaling.tasks.harbor",
    "TrainResult": "autoenvscaling.trainers.base",
    "Trainer": "autoenvscaling.trainers.base",
    "TrainerContext": "autoenvscaling.trainers.base",
    "aes_verifier": "autoenvscaling.verifier",
    "verifier_library": "autoenvscaling.verifier",
}

__all__ = sorted(EXPORTS)

if TYPE_CHECKING:  # the same names for type checkers and editors
    from autoenvscaling.agents.base import Action, Agent, AgentLimits, Trajectory
    from autoenvscaling.agents.builtin import NopAgent, solution_files
    from autoenvscaling.agents.solver import ROLLOUT_TEMPERATURE, SolverAgent
    from autoenvscaling.agents.tools import (
        Arguments, Tool, ToolContext, ToolOutcome, Toolbox, truncate_middle,
    )
    from autoenvscaling.cli.domain_cmds import add_family_commands
    from autoenvscaling.config import cache_dir
    from autoenvscaling.domains.base import (
        DIFFICULTIES, DIRECTIONS, Domain, Family, KitExample, LevelledDomain, ProposerKit, same_task_content,
    )
    from autoenvscaling.domains.catalog import FamilyInfo, family_module, lazy_domain
    from autoenvscaling.domains.render import grow, label_of, package_reader, render_task
    from autoenvscaling.errors import (
        AESError, ConfigError, MissingPrerequisite, NoFurtherVariant, SandboxError, TaskFormatError, UsageError,
    )
    from autoenvscaling.executors.jobs import LLMSpec, SolverSpec
    from autoenvscaling.flywheel.assignments import Assignment, from_summary, summary_of
    from autoenvscaling.flywheel.calibration import calibrate, rollout_seed
    from autoenvscaling.flywheel.loop import outcome_of
    from autoenvscaling.flywheel.metrics import wilson_interval
    from autoenvscaling.flywheel.rundb import RolloutRow
    from autoenvscaling.gates.base import (
        Evidence, Gate, GateContext, GateResult, GateSettings, ValidationReport,
    )
    from autoenvscaling.gates.importing import import_tasks
    from autoenvscaling.gates.runtime import PREPARED, trial_evidence
    from autoenvscaling.gates.static import DomainLintGate
    from autoenvscaling.gates.validate import Validator
    from autoenvscaling.llm.base import ChatMessage, ChatResponse, LLMBackend, ToolSpec, Usage
    from autoenvscaling.llm.chat_template import ChatTemplate, eos_ids
    from autoenvscaling.llm.embedded import EMBEDDED_MODELS, embedded_model_path
    from autoenvscaling.llm.errors import LLMError, LLMRequestError
    from autoenvscaling.llm.tool_text import parse_tool_calls
    from autoenvscaling.plugins import create_host, declare, hookimpl
    from autoenvscaling.plugins.host import PluginHost
    from autoenvscaling.plugins.prerequisites import Prerequisite, PrerequisiteStatus, ProgramOnPath
    from autoenvscaling.proposers.prompt import PromptProposer
    from autoenvscaling.redteam.cheat import Cheat, agent_view_control, exists_only_control, reward_if
    from autoenvscaling.runtime.paths import SOLUTION_DIR
    from autoenvscaling.runtime.trial import TrialRunner
    from autoenvscaling.runtime.verifier_runtime import (
        RuntimeContext, VerifierRuntime, materialise_files, task_domain,
    )
    from autoenvscaling.sandbox.base import PreparedEnvironment, Sandbox, SandboxBackend, last_json_object
    from autoenvscaling.sandbox.gpu import host_gpus
    from autoenvscaling.sandbox.rootfs import file_lock
    from autoenvscaling.sandbox.select import make_backend
    from autoenvscaling.suite.formats import TaskFormat
    from autoenvscaling.suite.store import SuiteStore
    from autoenvscaling.tasks import StepConfig, Task, TaskFile, qualified_name, short_name
    from autoenvscaling.tasks.harbor import read_task, write_task
    from autoenvscaling.trainers.base import TrainResult, Trainer, TrainerContext
    from autoenvscaling.verifier import aes_verifier, verifier_library


def __getattr__(name: str) -> Any:
    module = EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"autoenvscaling.api has no {name!r} (the public names are autoenvscaling.api.__all__)")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(EXPORTS))
