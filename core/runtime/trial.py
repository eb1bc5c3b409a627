"""One attempt at a task: start a sandbox, let an agent act, verify, read the reward.

This is Harbor's trial, run by our backends: tests/ is uploaded to /tests only after the agent is
done, the verifier writes /logs/verifier/reward.txt or reward.json, and the reward is read from that
file (never from test.sh's exit code). Multi-step tasks run their steps in order in one sandbox, each
with its own instruction, workdir upload, setup.sh, healthcheck, agent phase and verifier, stopping
early when a step scores below its ``min_reward``.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..agents.base import Agent, AgentLimits, Trajectory
from ..errors import AESError
from ..sandbox.base import PreparedEnvironment, Sandbox, SandboxBackend
from ..tasks import StepConfig, Task
from .paths import AGENT_LOGS, REWARD_JSON, REWARD_TXT, TESTS_DIR, VERIFIER_LOGS, VERIFIER_RUNTIME


class VerifierResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    rewards: dict[str, float] = Field(default_factory=dict)
    exit_code: int | None = None
    output_tail: str = ""
    seconds: float = 0.0
    timed_out: bool = False
    error: str | None = None  # why no reward could be read

    @property
    def reward(self) -> float:
        return mean_reward(self.rewards)


class StepResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    trajectory: Trajectory
    verifier: VerifierResult


class TrialResult(BaseModel):
    """The outcome of one attempt. ``rewards`` holds every reward key (one per step for multi-step
    tasks, prefixed with the step name); ``reward`` is their mean. ``status`` is "ok" when a reward
    was read, "error" when the infrastructure failed, "timeout" when the verifier ran out of time."""

    model_config = ConfigDict(frozen=True)

    task: str
    agent: str
    status: str = "ok"
    rewards: dict[str, float] = Field(default_factory=dict)
    steps: list[StepResult] = Field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None

    @property
    def reward(self) -> float:
        return mean_reward(self.rewards)

    @property
    def trajectory(self) -> Trajectory | None:
        return self.steps[-1].trajectory if self.steps else None


def mean_reward(rewards: dict[str, float]) -> float:
    return sum(rewards.values()) / len(rewards) if rewards else 0.0


def parse_reward(json_bytes: bytes | None, txt_bytes: bytes | None) -> tuple[dict[str, float], str | None]:
    """Rewards from reward.json (a flat object of numbers) or reward.txt (one number)."""
    if json_bytes is not None:
        try:
            data = json.loads(json_bytes.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            return {}, f"reward.json is not JSON: {exc}"
        if isinstance(data, (int, float)) and not isinstance(data, bool):
            data = {"reward": data}
        if not isinstance(data, dict) or not data:
            return {}, "reward.json must be an object of numbers"
        out: dict[str, float] = {}
        for key, value in data.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                return {}, f"reward.json: {key!r} is not a finite number"
            out[str(key)] = float(value)
        return out, None
    if txt_bytes is not None:
        text = txt_bytes.decode("utf-8", errors="replace").strip()
        try:
            value = float(text.split()[0]) if text else float("nan")
        except ValueError:
            return {}, f"reward.txt is not a number: {text[:40]!r}"
        if not math.isfinite(value):
            return {}, "reward.txt is empty or not finite"
        return {"reward": value}, None
    return {}, "the verifier wrote no reward file"


class TrialRunner:
    """Runs attempts of tasks with one backend. ``offline_runtime`` supplies the verifier toolchain
    (see runtime/offline.py) uploaded at verification time when the sandbox has no network."""

    def __init__(self, backend: SandboxBackend, *, limits: AgentLimits | None = None,
                 offline_runtime: dict[str, tuple[bytes, bool]] | None = None) -> None:
        self.backend = backend
        self.limits = limits or AgentLimits()
        if offline_runtime is None:
            from .offline import runtime_files

            offline_runtime = runtime_files()
        self.offline_runtime = offline_runtime

    async def run(self, task: Task, agent: Agent, *, prepared: PreparedEnvironment | None = None) -> TrialResult:
        start = time.monotonic()
        sandbox: Sandbox | None = None
        steps: list[StepResult] = []
        try:
            prepared = prepared or await self.backend.prepare(task)
            sandbox = await self.backend.create(task, prepared)
            await sandbox.start()
            await sandbox.exec(f"mkdir -p {AGENT_LOGS} {VERIFIER_LOGS}", timeout=30)
            if task.steps:
                rewards: dict[str, float] = {}
                for step in task.steps:
                    result = await self._run_step(task, agent, sandbox, step)
                    steps.append(result)
                    rewards[f"{step.name}"] = result.verifier.reward
                    if step.min_reward is not None and result.verifier.reward < step.min_reward:
                        break
                for step in task.steps:  # steps not reached score 0
                    rewards.setdefault(step.name, 0.0)
            else:
                result = await self._run_step(task, agent, sandbox, None)
                steps.append(result)
                rewards = dict(result.verifier.rewards)
            status = "timeout" if any(s.verifier.timed_out for s in steps) else "ok"
            errors = [s.verifier.error for s in steps if s.verifier.error]
            return TrialResult(task=task.name, agent=agent.name, status=status, rewards=rewards, steps=steps,
                               seconds=time.monotonic() - start, error=errors[0] if errors else None)
        except AESError as exc:
            return TrialResult(task=task.name, agent=agent.name, status="error", steps=steps,
                               seconds=time.monotonic() - start, error=exc.message)
        finally:
            if sandbox is not None:
                await asyncio.shield(sandbox.close())

    async def _run_step(self, task: Task, agent: Agent, sandbox: Sandbox, step: StepConfig | None) -> StepResult:
        workdir = sandbox.workdir
        if step is not None:
            upload = task.subtree(f"steps/{step.name}/workdir")
            if upload:
                await sandbox.upload_files({p: (f.data, f.executable) for p, f in upload.items()}, workdir)
                if "setup.sh" in upload:
                    await sandbox.exec(f"cd {workdir} && bash ./setup.sh", timeout=120)
            if step.healthcheck is not None:
                await self._healthcheck(sandbox, step)
        trajectory = await agent.run(task, sandbox, step=step, limits=self.limits)
        verifier = await self.verify(task, sandbox, step)
        return StepResult(name=step.name if step else "main", trajectory=trajectory, verifier=verifier)

    async def _healthcheck(self, sandbox: Sandbox, step: StepConfig) -> None:
        hc = step.healthcheck
        assert hc is not None
        for _ in range(max(1, hc.retries)):
            result = await sandbox.exec(hc.command, timeout=hc.timeout_sec)
            if result.ok:
                return
            await asyncio.sleep(hc.interval_sec)

    async def verify(self, task: Task, sandbox: Sandbox, step: StepConfig | None) -> VerifierResult:
        """Upload tests (top-level tests/ merged with the step's), run test.sh, read the reward."""
        files = {p: (f.data, f.executable) for p, f in task.subtree("tests").items()}
        timeout = task.config.verifier.timeout_sec
        env = dict(task.config.environment.env)
        env.update(task.config.verifier.env)
        if step is not None:
            files.update({p: (f.data, f.executable) for p, f in task.subtree(f"steps/{step.name}/tests").items()})
            if step.verifier is not None:
                timeout = step.verifier.timeout_sec
                env.update(step.verifier.env)
        if "test.sh" not in files:
            return VerifierResult(error="no tests/test.sh")
        # chmod first: without CAP_DAC_OVERRIDE, a /tests the agent made read-only would survive rm -rf
        await sandbox.exec(f"chmod -R u+rwX {TESTS_DIR} {VERIFIER_LOGS} 2>/dev/null; "
                           f"rm -rf {TESTS_DIR} {VERIFIER_LOGS} && mkdir -p {TESTS_DIR} {VERIFIER_LOGS}", timeout=30)
        await sandbox.upload_files(files, TESTS_DIR)
        offline = not self.backend.policy.network_for(task)
        if offline and self.offline_runtime:
            await sandbox.exec(f"rm -rf {VERIFIER_RUNTIME}", timeout=30)
            await sandbox.upload_files(self.offline_runtime, VERIFIER_RUNTIME)
            env["PATH"] = f"{VERIFIER_RUNTIME}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
            env["AUTOENVSCALING_OFFLINE"] = "1"
        result = await sandbox.exec(f"bash {TESTS_DIR}/test.sh", timeout=timeout, env=env,
                                    user=(step.verifier.user if step and step.verifier else None) or task.config.verifier.user)
        rewards, error = parse_reward(await sandbox.read_file(REWARD_JSON), await sandbox.read_file(REWARD_TXT))
        if offline and self.offline_runtime:
            await sandbox.exec(f"rm -rf {VERIFIER_RUNTIME}", timeout=30)
        if result.timed_out:
            error = f"verifier timed out after {timeout:g}s"
        return VerifierResult(rewards=rewards, exit_code=result.exit_code, output_tail=result.tail(2000),
                              seconds=result.seconds, timed_out=result.timed_out, error=error)


def trial_summary(result: TrialResult) -> dict[str, Any]:
    """A JSON-friendly summary of a trial for the CLI and reports."""
    return {"task": result.task, "agent": result.agent, "status": result.status, "reward": result.reward,
            "rewards": result.rewards, "seconds": round(result.seconds, 3), "error": result.error,
            "commands": sum(s.trajectory.n_commands for s in result.steps)}
