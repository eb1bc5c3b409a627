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

#: the public names, by the module (under ``autoenvscaling``) that defines them
_MODULES: dict[str, tuple[str, ...]] = {
    "agents.base": ("Action", "Agent", "AgentLimits", "Trajectory"),
    "agents.builtin": ("NopAgent", "solution_files"),
    "agents.solver": ("ROLLOUT_TEMPERATURE", "SolverAgent"),
    "agents.tools": ("Arguments", "Tool", "ToolContext", "ToolOutcome", "Toolbox", "truncate_middle"),
    "cli.domain_cmds": ("add_family_commands",),
    "config": ("cache_dir",),
    "domains.base": ("DIFFICULTIES", "DIRECTIONS", "Domain", "Family", "KitExample", "LevelledDomain", "ProposerKit",
                     "content_digest", "generated_here", "remember_generated", "same_task_content"),
    "domains.catalog": ("FamilyInfo", "family_module", "lazy_domain"),
    "domains.render": ("grow", "label_of", "package_reader", "render_task"),
    "errors": ("AESError", "ConfigError", "MissingPrerequisite", "NoFurtherVariant", "SandboxError", "TaskFormatError",
               "UsageError"),
    "executors.jobs": ("LLMSpec", "SolverSpec"),
    "flywheel.assignments": ("Assignment", "from_summary", "summary_of"),
    "flywheel.calibration": ("calibrate", "rollout_seed"),
    "flywheel.loop": ("outcome_of",),
    "flywheel.metrics": ("wilson_interval",),
    "flywheel.rundb": ("RolloutRow",),
    "gates.base": ("Evidence", "Gate", "GateContext", "GateResult", "GateSettings", "ValidationReport"),
    "gates.importing": ("import_tasks",),
    "gates.runtime": ("PREPARED", "trial_evidence"),
    "gates.static": ("DomainLintGate",),
    "gates.validate": ("Validator",),
    "llm.base": ("ChatMessage", "ChatResponse", "LLMBackend", "ToolSpec", "Usage"),
    "llm.chat_template": ("ChatTemplate", "eos_ids"),
    "llm.embedded": ("EMBEDDED_MODELS", "embedded_model_path"),
    "llm.errors": ("LLMError", "LLMRequestError"),
    "llm.tool_text": ("parse_tool_calls",),
    "plugins": ("create_host", "declare", "hookimpl"),
    "plugins.host": ("PluginHost",),
    "plugins.prerequisites": ("Prerequisite", "PrerequisiteStatus", "ProgramOnPath"),
    "proposers.prompt": ("PromptProposer",),
    "redteam.cheat": ("Cheat", "agent_view_control", "exists_only_control", "reward_if"),
    "runtime.paths": ("SOLUTION_DIR",),
    "runtime.trial": ("TrialRunner",),
    "runtime.verifier_runtime": ("RuntimeContext", "VerifierRuntime", "materialise_files", "task_domain"),
    "sandbox.base": ("PreparedEnvironment", "Sandbox", "SandboxBackend", "WarmCommand", "last_json_object"),
    "sandbox.gpu": ("host_gpus",),
    "sandbox.rootfs": ("file_lock",),
    "sandbox.select": ("make_backend",),
    "sandbox.warm": ("WARM_INPUTS",),
    "suite.formats": ("TaskFormat",),
    "suite.store": ("SuiteStore",),
    "tasks": ("StepConfig", "Task", "TaskFile", "qualified_name", "short_name"),
    "tasks.harbor": ("read_task", "write_task"),
    "trainers.base": ("TrainResult", "Trainer", "TrainerContext"),
    "verifier": ("aes_verifier", "verifier_library"),
}
#: public name -> the module that defines it
EXPORTS: dict[str, str] = {name: f"autoenvscaling.{module}" for module, names in _MODULES.items() for name in names}

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
        DIFFICULTIES, DIRECTIONS, Domain, Family, KitExample, LevelledDomain, ProposerKit, content_digest,
        generated_here, remember_generated, same_task_content,
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
    from autoenvscaling.sandbox.base import PreparedEnvironment, Sandbox, SandboxBackend, WarmCommand, last_json_object
    from autoenvscaling.sandbox.gpu import host_gpus
    from autoenvscaling.sandbox.rootfs import file_lock
    from autoenvscaling.sandbox.select import make_backend
    from autoenvscaling.sandbox.warm import WARM_INPUTS
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
