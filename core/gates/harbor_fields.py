"""Lint warnings for Harbor task.toml fields that a task may carry and our runtime does not honour.

A task with any of them still loads, runs and is written back as it was (Harbor accepts it); the
warning names the field, says it is ignored (or how it is narrowed) and why. What is honoured needs
no warning: ``network_mode`` "public"/"no-network", ``[environment.healthcheck]`` and a step's,
``[solution] env``, ``artifacts`` from the main container, a table ``min_reward``. docs/harbor.md
lists every field and what we do with it.
"""

from __future__ import annotations

from ..tasks import Task
from ..tasks.config import TaskConfig, VerifierConfig, artifact_specs
from .base import Finding


def harbor_field_findings(task: Task) -> list[Finding]:
    """A warning for each Harbor field of ``task`` that is ignored or narrowed here."""
    cfg = task.config
    out = _network(cfg)
    env = cfg.environment
    if env.mcp_servers:
        names = ", ".join(s.name for s in env.mcp_servers)
        out.append(f"environment.mcp_servers ({names}) is ignored: MCP servers are not supported here, the agent "
                   "gets none")
    if env.tpu is not None:
        out.append("environment.tpu is ignored: no backend here provides TPUs")
    if env.skills_dir is not None:
        out.append("environment.skills_dir is ignored: its skills stay where the image has them, no agent's "
                   "skills folder gets them here")
    if env.os is not None and env.os.lower() != "linux":
        out.append(f"environment.os = {env.os!r} is ignored: the sandboxes here run Linux only")
    if any("${" in value for value in env.env.values()):
        out.append("environment.env: ${VAR} templates are ignored: values are passed as written, never read from "
                   "the host")
    verifiers: list[tuple[str, VerifierConfig]] = [("verifier", cfg.verifier)]
    verifiers += [(f"steps.{s.name}.verifier", s.verifier) for s in cfg.steps if s.verifier is not None]
    for where, verifier in verifiers:
        if verifier.environment is not None:
            out.append(f"{where}.environment is ignored: the separate verifier runs in the task's own environment, "
                       "seeing only the artifacts of the agent's work")
        if verifier.collect:
            out.append(f"{where}.collect is ignored: collect hooks are not run here")
    users = [("agent", cfg.agent.user)] + [(f"steps.{s.name}.agent", s.agent.user) for s in cfg.steps if s.agent]
    for where, user in users:
        if user is not None:
            out.append(f"{where}.user is ignored: agents run as the image's user")
    if cfg.multi_step_reward_strategy == "final" and cfg.steps:
        out.append("multi_step_reward_strategy = 'final' is ignored: the trial's reward is the mean of its steps'")
    entries = [("artifacts", cfg.artifacts)] + [(f"steps.{s.name}.artifacts", s.artifacts) for s in cfg.steps]
    for where, artifacts in entries:
        for spec in artifact_specs(artifacts):
            if not spec.main:
                out.append(f"{where}: {spec.source} from service {spec.service!r} is ignored: compose sidecars' "
                           "artifacts are not collected")
    return [Finding(text, "warning") for text in out]


def _network(cfg: TaskConfig) -> list[str]:
    """``allowlist`` is not enforced (it runs offline); phases that ask for different networks share
    one sandbox, so the trial runs offline."""
    out = []
    modes = cfg.phase_networks()
    allowlisted = [where for where, mode in modes.items() if mode == "allowlist"]
    if allowlisted:
        out.append(f"network_mode = 'allowlist' ({', '.join(allowlisted)}): allowed_hosts is not enforced (no "
                   "egress filter here), so it runs offline")
    if "public" in modes.values() and not cfg.wants_internet:
        asked = ", ".join(f"{where}: {mode or 'unset'}" for where, mode in modes.items())
        out.append(f"network_mode differs between phases ({asked}): the sandbox has one network for the whole "
                   "trial, so every phase runs offline")
    return out
