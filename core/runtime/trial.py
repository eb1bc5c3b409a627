"""One attempt at a task: start a sandbox, let an agent act, verify, read the reward.

This is Harbor's trial, run by our backends: tests/ is uploaded to /tests only after the agent is
done, the verifier writes /logs/verifier/reward.txt or reward.json, and the reward is read from that
file (never from test.sh's exit code). ``[environment.healthcheck]`` runs once the sandbox is up, before
any agent: failing it is a trial error. Multi-step tasks run their steps in order in one sandbox, each
with its own instruction, workdir upload, setup.sh, healthcheck, agent phase and verifier, stopping
early when a step scores below its ``min_reward``. The task's ``artifacts`` (and a step's) are
collected after verification into the result (``artifacts.py``). An attempt that falls short of 1
carries its cause (``trial_cause``): a failed solution script's last error, else the verifier
output's first real error (``find_cause``), so reports say "python: command not found" rather than
only "scored 0".
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field

from ..agents.base import Agent, AgentLimits, Trajectory
from ..errors import AESError
from ..sandbox.base import PreparedEnvironment, Sandbox, SandboxBackend, WarmCommand
from ..sandbox.base import absolute as absolute_path
from ..sandbox.isolation import DEFAULT_PATH
from ..sandbox.select import plugin_host
from ..tasks import HealthcheckConfig, StepConfig, Task
from ..tasks.config import artifact_specs
from .artifacts import Artifact, collect_artifacts
from .phases import timed
from .paths import AGENT_LOGS, REWARD_JSON, REWARD_TXT, TESTS_DIR, VERIFIER_LOGS, VERIFIER_RUNTIME
from .verifier_runtime import RuntimeContext, VerifierRuntime
from .verifier_view import (INDEX_SCRIPT, ImageIndex, View, dependency_closure, dist_key_of, dist_modules, dist_requires,
                            parse_index, plan_view, plugin_entry_points, verifier_imports)

if TYPE_CHECKING:
    from ..plugins.host import PluginHost


OUTPUT_TAIL = 4000  # characters of the verifier's output kept with the result (the evidence)


class VerifierResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    rewards: dict[str, float] = Field(default_factory=dict)
    exit_code: int | None = None
    output_tail: str = ""
    seconds: float = 0.0
    timed_out: bool = False
    error: str | None = None  # why no reward could be read
    cause: str | None = None  # the first real error in the output, when a reward fell short of 1
    # What the verifier saw (docs/verification.md): its view, how many agent changes were put back to
    # the image's state for it (``restored_paths``: the first few, each with the rule that hid it),
    # why it saw less protection than the task asked for, and the verifier runtimes it got.
    view: str = "protected"
    restored: int = 0
    restored_paths: dict[str, str] = Field(default_factory=dict)
    view_note: str | None = None
    runtimes: list[str] = Field(default_factory=list)
    warm: bool = False  # run by a warm interpreter instead of test.sh (sandbox/warm.py; the same verdict)

    @property
    def reward(self) -> float:
        return mean_reward(self.rewards)

    def view_summary(self) -> str:
        """One line: "verifier view: protected, 3 agent changes hidden: /usr/bin/python3, ..."."""
        line = f"verifier view: {self.view}"
        if self.restored:
            shown = ", ".join(list(self.restored_paths)[:3])
            line += f", {self.restored} agent change{'s' if self.restored != 1 else ''} hidden: {shown}"
            line += ", ..." if self.restored > 3 else ""
        return line + (f" ({self.view_note})" if self.view_note else "")


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
    status: Literal["ok", "error", "timeout"] = "ok"
    rewards: dict[str, float] = Field(default_factory=dict)
    steps: list[StepResult] = Field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None
    entrypoint_output: str = ""  # the tail of what the image's ENTRYPOINT printed, when it has one
    # The task's artifacts, collected after verification (a step's under "steps/<name>/"); see artifacts.py.
    artifacts: list[Artifact] = Field(default_factory=list)
    phases: dict[str, float] = Field(default_factory=dict)  # seconds per phase (phases.PHASES)

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
        bad = next((k for k, v in data.items()
                    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)), None)
        if bad is not None:
            return {}, f"reward.json: {bad!r} is not a finite number"
        return {str(key): float(value) for key, value in data.items()}, None
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


# -- causes: the first real error in a command's output ---------------------------------------------
# "The oracle scored 0" says that a task is broken; the cause says why. Patterns are tiered by how
# telling a match is, and a lower tier wins wherever it appears: pytest's summary names the failing
# test; exceptions, missing commands and the offline shims' refusals say what broke; "No such file"
# and "Permission denied" are common as harmless noise, so they count only when nothing more
# specific is there. Within a tier the first line wins (for a failed script the last: its exit
# status is its last command's).
_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)(?:: .+)?$")  # a Python exception line
_PYTEST_DETAIL = re.compile(r"^E {2,}\S.*")  # pytest's failure detail: E   assert 'a' == 'b'
CAUSE_PATTERNS: tuple[tuple[int, re.Pattern[str]], ...] = tuple((tier, re.compile(rx)) for tier, rx in (
    (0, r"^(?:FAILED|ERROR) \S+(?: - .+)?$"),  # pytest's short summary: FAILED path::test - message
    (1, _EXCEPTION.pattern),
    (1, _PYTEST_DETAIL.pattern),
    (1, r"^\S+: (?:command )?not found$"),  # bash: "python: command not found", dash: "python: not found"
    (1, r"^(?:\S*/)?env: .+: No such file or directory$"),  # #!/usr/bin/env python
    (1, r"^curl: \(\d+\) .+"),  # curl and the offline curl shim
    (1, r"^(?:error|fatal|E|ERROR): .+"),  # uv/uvx shims, git, apt (and its shim), pip
    (1, r"^\S+: unable to resolve host address .+"),  # wget
    (1, r"(?:^|\d+ )(?:Killed|Segmentation fault|Aborted|Bus error)(?: \(core dumped\))?\b.*"),
    (2, r"No such file or directory"),
    (2, r"Permission denied"),
    (2, r"Network is unreachable|Temporary failure in name resolution|Connection refused|Could not resolve host"),
))
CAUSE_CHARS = 200
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# What bash and dash put before an error: "/tests/test.sh: line 3: ", "sh: 1: ".
_SHELL_PREFIX = re.compile(r"^(?:\S+: line \d+: |\S+: \d+: )+")
_ENV_MISSING = re.compile(r"^(?:\S*/)?env: ['\u2018\"]?(.+?)['\u2019\"]?: No such file or directory$")
_TRACEBACK = "Traceback (most recent call last):"
_RAISED = re.compile(r"^[A-Za-z_][\w.]*(?:: .*)?$")  # what ends a traceback, whatever the exception's name
_CHAINED = ("During handling of the above exception, another exception occurred:",
            "The above exception was the direct cause of the following exception:")


def _clean_line(line: str) -> str:
    line = _SHELL_PREFIX.sub("", _ANSI.sub("", line).strip())
    missing = _ENV_MISSING.match(line)
    if missing:  # "/usr/bin/env: 'python': No such file or directory" is a missing command
        return f"{missing.group(1)}: No such file or directory"
    if line.startswith(("FAILED ", "ERROR ")):  # the test's own name says enough; drop its directory
        verdict, _, rest = line.partition(" ")
        test, sep, message = rest.partition(" - ")
        path, colons, name = test.partition("::")
        line = f"{verdict} {path.rsplit('/', 1)[-1]}{colons}{name}{sep}{message}"
    elif line.startswith("E "):
        line = "E   " + line[1:].strip()
    return line


def _traceback_end(lines: list[str], start: int) -> tuple[int | None, int]:
    """(index of the exception line that ends the traceback at ``start``, index after it). Chained
    tracebacks ("During handling of the above exception ...") end at the last exception: the one
    the program died of, whose message its author chose."""
    exception, i = None, start + 1
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line or line[0].isspace():
            continue
        if not _RAISED.match(line):
            return exception, i - 1
        exception = i - 1
        following = next((j for j in range(i, len(lines)) if lines[j].strip()), None)
        if following is None or lines[following].strip() not in _CHAINED:
            return exception, i
        nxt = next((j for j in range(following + 1, len(lines)) if lines[j].strip() == _TRACEBACK), None)
        if nxt is None:
            return exception, i
        i = nxt + 1
    return exception, i


def find_cause(text: str, *, last: bool = False) -> str | None:
    """The most telling error line of a command's output, cleaned to one short line, or None.

    A Python traceback gives its exception line; the lowest tier of ``CAUSE_PATTERNS`` wins, and
    among its matches the first (``last``: the last) line."""
    lines = [_SHELL_PREFIX.sub("", _ANSI.sub("", raw).rstrip()) for raw in text.splitlines()]
    best: tuple[int, int] | None = None  # (tier, line index)
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if line == _TRACEBACK:
            index, i = _traceback_end(lines, i)
            candidates = [(1, index)] if index is not None else []
        else:
            candidates = [(tier, i) for tier, rx in CAUSE_PATTERNS if rx.search(line)][:1]
            i += 1
        for tier, index in candidates:
            if best is None or tier < best[0] or (tier == best[0] and last):
                best = (tier, index)
    if best is None:
        return None
    line = _clean_line(lines[best[1]])
    if best[0] == 0 and (line.endswith("...") or " - " not in line):
        line = _with_detail(line, lines)
    return _clip(line)


def _with_detail(summary: str, lines: list[str]) -> str:
    """pytest cuts its summary line to the terminal's width ("AssertionError: answer....") and gives
    none for a collection error ("ERROR test_x.py"); the first ``E`` line has the whole message
    (failures are listed in summary order)."""
    detail = next((line.strip()[1:].strip() for line in lines if _PYTEST_DETAIL.match(line.strip())), None)
    return f"{summary.split(' - ', 1)[0]} - {detail}" if detail else summary


def _clip(line: str) -> str:
    return line if len(line) <= CAUSE_CHARS else line[: CAUSE_CHARS - 3] + "..."


NO_SOLUTION = "no solution/solve.sh: the oracle has nothing to run"


def missing_solution(task: Task) -> bool:
    """Whether the oracle would have nothing to run on some step (or on the task)."""
    from ..agents.builtin import solution_files

    steps: list[StepConfig | None] = [*task.steps] or [None]
    return any("solve.sh" not in solution_files(task, step) for step in steps)


def trial_cause(result: TrialResult) -> str | None:
    """Why an attempt fell short of 1, in one line: a failed or timed-out solution script (the
    oracle's), else the first real error in the verifier's output, else why no reward was read."""
    step = next((s for s in result.steps if s.verifier.error or not s.verifier.rewards
                 or any(v < 1.0 for v in s.verifier.rewards.values())), None)
    if step is None:
        return result.error if result.status != "ok" else None
    where = "" if step.name == "main" else f"step {step.name}: "
    solution = _solution_failure(step.trajectory)
    cause = solution or step.verifier.cause or step.verifier.error
    return where + cause if cause else None


def _solution_failure(trajectory: Trajectory) -> str | None:
    if trajectory.agent != "oracle" or not trajectory.actions:
        return None
    action = trajectory.actions[-1]
    if action.timed_out:
        return f"solution/solve.sh timed out after {action.seconds:.0f}s"
    if action.exit_code in (0, None):
        return None
    lines = [line.strip() for line in action.output.splitlines() if line.strip()]
    why = find_cause(action.output, last=True) or (_clip(lines[-1]) if lines else "no output")
    return f"solution/solve.sh exited {action.exit_code}: {why}"


ENTRYPOINT_OUTPUT_CHARS = 2000
RESTORED_SHOWN = 10  # restored paths kept with a result (the count has them all)


class TrialRunner:
    """Runs attempts of tasks with one backend.

    Verification follows docs/verification.md: agent processes gone, the attempt's changes read by
    the backend, those the task's verifier ``view`` hides put back to the image's state with a
    trusted toolchain, fresh /tests and /logs/verifier, then test.sh with the verifier runtimes that
    apply (``runtimes``; default: every one registered with ``host``, or with a new plugin host).
    ``artifacts_limit``: bytes of the task's artifacts one result keeps; 0 (the default) collects
    none, so rollouts and admission trials do not pack outputs nobody reads. ``run`` may override it
    per attempt (``autoenvscaling tasks run --artifacts DIR`` does)."""

    def __init__(self, backend: SandboxBackend, *, limits: AgentLimits | None = None,
                 runtimes: Sequence[VerifierRuntime] | None = None, host: "PluginHost | None" = None,
                 artifacts_limit: int = 0) -> None:
        self.backend = backend
        self.artifacts_limit = artifacts_limit
        self.limits = limits or AgentLimits()
        if runtimes is None:
            registry = plugin_host(host).verifier_runtimes
            runtimes = [registry.get(name)(cache_dir=backend.cache_dir) for name in registry.names()]
        self.runtimes = list(runtimes)
        self._indexes: dict[str, ImageIndex] = {}  # PreparedEnvironment.ref -> what the pristine image resolves

    async def run(self, task: Task, agent: Agent, *, prepared: PreparedEnvironment | None = None,
                  artifacts_limit: int | None = None) -> TrialResult:
        start = time.monotonic()
        limit = self.artifacts_limit if artifacts_limit is None else artifacts_limit
        if agent.name == "oracle" and missing_solution(task):
            # Verifying an attempt that never ran would score 0 and blame the tests: say what is missing.
            return TrialResult(task=task.name, agent=agent.name, status="error", error=NO_SOLUTION)
        sandbox: Sandbox | None = None
        steps: list[StepResult] = []
        phases: dict[str, float] = {}
        try:
            with timed("prepare", phases):
                prepared = prepared or await self.backend.prepare(task)
            with timed("create", phases):
                sandbox = await self.backend.create(task, prepared)
            with timed("start", phases):
                await sandbox.start()
                index = await self._index(sandbox, prepared)  # before the agent's first command
                await sandbox.exec(f"mkdir -p {AGENT_LOGS} {VERIFIER_LOGS}", timeout=30)
            attempt = _Attempt(prepared=prepared, index=index, phases=phases)
            if task.config.environment.healthcheck is not None:
                with timed("healthcheck", phases):
                    await self._healthcheck(sandbox, task.config.environment.healthcheck, "[environment.healthcheck]")
            artifacts: list[Artifact] = []
            budget = limit
            if task.steps:
                rewards = dict.fromkeys((step.name for step in task.steps), 0.0)  # steps not reached score 0
                for step in task.steps:
                    result = await self._run_step(task, agent, sandbox, step, attempt)
                    steps.append(result)
                    rewards[step.name] = result.verifier.reward
                    specs = artifact_specs([*task.config.artifacts, *step.artifacts])
                    if specs and limit > 0:  # Harbor collects the task's and the step's after each step
                        got = await collect_artifacts(sandbox, specs, prefix=f"steps/{step.name}", budget=budget)
                        budget -= sum(a.size for a in got if a.data is not None)
                        artifacts += got
                    if _below(step.min_reward, result.verifier):
                        break
            else:
                result = await self._run_step(task, agent, sandbox, None, attempt)
                steps.append(result)
                rewards = dict(result.verifier.rewards)
                if task.config.artifacts and limit > 0:
                    artifacts = await collect_artifacts(sandbox, artifact_specs(task.config.artifacts), budget=budget)
            status: Literal["ok", "timeout"] = "timeout" if any(s.verifier.timed_out for s in steps) else "ok"
            errors = [s.verifier.error for s in steps if s.verifier.error]
            outcome = TrialResult(task=task.name, agent=agent.name, status=status, rewards=rewards, steps=steps,
                                  error=errors[0] if errors else None,
                                  entrypoint_output=sandbox.entrypoint_output()[-ENTRYPOINT_OUTPUT_CHARS:],
                                  artifacts=artifacts)
        except AESError as exc:
            outcome = TrialResult(task=task.name, agent=agent.name, status="error", steps=steps, error=exc.message)
        finally:
            if sandbox is not None:
                with timed("teardown", phases):
                    await asyncio.shield(sandbox.close())
        return outcome.model_copy(update={"seconds": time.monotonic() - start, "phases": phases})

    async def _index(self, sandbox: Sandbox, prepared: PreparedEnvironment) -> ImageIndex | None:
        """What the pristine image resolves (once per prepared environment; the sandbox is pristine
        now). None for a backend that cannot hide agent changes anyway."""
        if not sandbox.verifier_view:
            return None
        if prepared.ref not in self._indexes:
            out = await sandbox.exec(INDEX_SCRIPT, timeout=60, output_limit=8 << 20)
            if not out.ok or out.truncated:
                raise AESError(f"cannot index the image's programs and modules: {out.tail(200) or 'no output'}",
                               hint="the image needs a POSIX /bin/sh")
            self._indexes[prepared.ref] = parse_index(out.stdout)
        return self._indexes[prepared.ref]

    async def _run_step(self, task: Task, agent: Agent, sandbox: Sandbox, step: StepConfig | None,
                        attempt: "_Attempt") -> StepResult:
        workdir = sandbox.workdir
        if step is not None:
            upload = task.subtree(f"steps/{step.name}/workdir")
            if upload:
                with timed("agent", attempt.phases):  # a step's upload and setup.sh count as its agent's
                    await sandbox.upload_files({p: (f.data, f.executable) for p, f in upload.items()}, workdir)
                    if "setup.sh" in upload:
                        await sandbox.exec(f"cd {workdir} && bash ./setup.sh", timeout=120)
            if step.healthcheck is not None:
                with timed("healthcheck", attempt.phases):
                    await self._healthcheck(sandbox, step.healthcheck, f"step {step.name}: healthcheck")
        with timed("agent", attempt.phases):
            trajectory = await agent.run(task, sandbox, step=step, limits=self.limits)
        verifier = await self.verify(task, sandbox, step, attempt)
        return StepResult(name=step.name if step else "main", trajectory=trajectory, verifier=verifier)

    @staticmethod
    async def _healthcheck(sandbox: Sandbox, hc: HealthcheckConfig, what: str) -> None:
        """Run ``hc.command`` until it exits 0, as Docker's HEALTHCHECK: failures within
        ``start_period_sec`` of the first attempt do not count, ``retries`` consecutive ones after it
        raise (the trial ends as an error, not a score)."""
        start = time.monotonic()
        failures = 0
        while True:
            result = await sandbox.exec(hc.command, timeout=hc.timeout_sec)
            if result.ok:
                return
            starting = time.monotonic() - start < hc.start_period_sec
            if not starting:
                failures += 1
                if failures >= max(1, hc.retries):
                    said = find_cause(result.tail(OUTPUT_TAIL), last=True) or _clip(result.tail(200).replace("\n", " "))
                    why = "timed out" if result.timed_out else f"exit {result.exit_code}: {said or 'no output'}"
                    raise AESError(f"{what} failed {failures} time{'s' if failures > 1 else ''} ({why})",
                                   hint="the environment never became ready: fix the healthcheck or the service")
            await asyncio.sleep(hc.start_interval_sec if starting else hc.interval_sec)

    async def verify(self, task: Task, sandbox: Sandbox, step: StepConfig | None,
                     attempt: "_Attempt | None" = None) -> VerifierResult:
        """Hide the agent changes the task's view hides, upload tests (top-level tests/ merged with the
        step's), run test.sh with the verifier runtimes that apply, read the reward."""
        attempt = attempt or _Attempt()
        files = {p: (f.data, f.executable) for p, f in task.subtree("tests").items()}
        timeout = task.config.verifier.timeout_sec
        env = {**task.config.environment.env, **task.config.verifier.env}
        if step is not None:
            files.update({p: (f.data, f.executable) for p, f in task.subtree(f"steps/{step.name}/tests").items()})
            if step.verifier is not None:
                timeout = step.verifier.timeout_sec
                env.update(step.verifier.env)
        if "test.sh" not in files:
            return VerifierResult(error="no tests/test.sh")
        imported = verifier_imports({p: d for p, (d, _) in files.items()}, task.config.verifier.imports)
        with timed("verifier-setup", attempt.phases):
            view, hidden, note = await self._hide_agent_changes(task, sandbox, attempt.index, imported)
            await sandbox.exec(f"mkdir -p {TESTS_DIR} {VERIFIER_LOGS}", timeout=30)
            await sandbox.upload_files(files, TESTS_DIR)
            seen: dict[str, Any] = {"view": view, "restored": len(hidden), "view_note": note,
                                    "restored_paths": dict(list(hidden.items())[:RESTORED_SHOWN])}
            early = any(data is not None for data in (await sandbox.read_files((REWARD_JSON, REWARD_TXT))).values())
            context = RuntimeContext(offline=not self.backend.policy.network_for(task), backend=self.backend.name)
            mounts: dict[str, Path] = {}
            prefix: list[str] = []
            for runtime in [] if early else self.runtimes:
                if runtime.applies(task, context):
                    mounts[runtime.mount] = await asyncio.to_thread(runtime.materialise)
                    extra = runtime.environment(runtime.mount)
                    prefix += extra.path_prefix
                    env.update(extra.env)
        if early:
            # Only possible when the agent's own mkdir or tar ran (view "agent"): such a reward never counts.
            return VerifierResult(error="a reward file existed before the verifier ran", **seen)
        if prefix:
            base = env.get("PATH") or (attempt.prepared.env.get("PATH") if attempt.prepared else None) or DEFAULT_PATH
            env["PATH"] = ":".join([*prefix, base])
        user = (step.verifier.user if step and step.verifier else None) or task.config.verifier.user
        warm = self._warm(task, files, mounts) if step is None and user is None else None
        with timed("verifier", attempt.phases):
            done = await sandbox.run_warm(warm, tests=files, mounts=mounts, env=env, timeout=timeout) if warm else None
            if done is not None:
                result, logs = done
                if logs:
                    await sandbox.upload_files(logs, VERIFIER_LOGS)
            else:
                result = await sandbox.exec_verifier(f"bash {TESTS_DIR}/test.sh", mounts=mounts, timeout=timeout,
                                                     env=env, user=user)
            written = await sandbox.read_files((REWARD_JSON, REWARD_TXT))
            rewards, error = parse_reward(written[REWARD_JSON], written[REWARD_TXT])
        if result.timed_out:
            error = f"verifier timed out after {timeout:g}s"
        short = error is not None or any(v < 1.0 for v in rewards.values())
        # The cause comes from the whole captured output: the first error is rarely in the tail.
        cause = find_cause(result.stdout + "\n" + result.stderr) if short else None
        return VerifierResult(rewards=rewards, exit_code=result.exit_code, output_tail=result.tail(OUTPUT_TAIL),
                              seconds=result.seconds, timed_out=result.timed_out, error=error, cause=cause,
                              runtimes=[r.name for r in self.runtimes if r.mount in mounts], warm=done is not None,
                              **seen)

    def _warm(self, task: Task, files: dict[str, tuple[bytes, bool]], mounts: dict[str, Path]) -> WarmCommand | None:
        """The warm command a mounted runtime offers for this task's tests (VerifierRuntime.warm), if
        any, and only where the task's verifier view is "outputs" with each output among the command's
        inputs: a warm program sees the image as built plus its inputs, which is that view exactly.
        Under any other view test.sh would see more of the agent's work, so it runs as asked."""
        cfg = task.config.verifier
        if cfg.effective_view != "outputs" or not cfg.outputs:
            return None
        tests = {path: data for path, (data, _) in files.items()}
        for runtime in self.runtimes:
            if runtime.mount in mounts and (command := runtime.warm(task, tests)) is not None:
                return command if set(map(absolute_path, cfg.outputs)) <= set(command.inputs) else None
        return None

    async def _hide_agent_changes(self, task: Task, sandbox: Sandbox, index: ImageIndex | None,
                                  imported: frozenset[str]) -> tuple[View, dict[str, str], str | None]:
        """End the agent's processes, put the changes the view hides back to the image's state, and
        remove /tests, /logs/verifier and the runtimes' mount points, all with the backend's trusted
        toolchain. Returns the view the verifier got, what was hidden (path -> rule) and a note when
        the backend could not honour the task's view."""
        view = task.config.verifier.effective_view
        if not sandbox.verifier_view:
            await sandbox.end_agent_processes()
            # chmod first: without CAP_DAC_OVERRIDE, a /tests the agent made read-only would survive rm -rf
            await sandbox.exec(f"chmod -R u+rwX {TESTS_DIR} {VERIFIER_LOGS} 2>/dev/null; "
                               f"rm -rf {TESTS_DIR} {VERIFIER_LOGS} {VERIFIER_RUNTIME}", timeout=30)
            note = f"the {self.backend.name} backend cannot report an attempt's changes, so the verifier saw them all"
            return "agent", {}, None if view == "agent" else note
        hidden: dict[str, str] = {}
        if view != "agent":
            # The image's system trees first, so that the sweep below runs the image's own shell.
            hidden.update(await self._put_back(task, sandbox, index, view, imported))
        if await sandbox.end_agent_processes() and view != "agent":
            hidden.update(await self._put_back(task, sandbox, index, view, imported))  # what they changed meanwhile
        await sandbox.restore([TESTS_DIR, VERIFIER_LOGS, VERIFIER_RUNTIME])
        return view, hidden, None

    async def _put_back(self, task: Task, sandbox: Sandbox, index: ImageIndex | None, view: View,
                        imported: frozenset[str]) -> dict[str, str]:
        """One round of the view: the paths its rules hide, put back (path -> rule)."""
        cfg = task.config.verifier
        changes = await sandbox.changes()
        plan = plan_view(view, changes, index or ImageIndex(), workdir=sandbox.workdir, agent_paths=cfg.agent_paths,
                         outputs=cfg.outputs, imported=imported)
        if plan.imported_added and plan.added_dists:
            # The tests import a package the agent installed: its dependencies the agent installed
            # with it are imported too (read from the distributions' own metadata).
            extra = dependency_closure(plan.imported_added, await self._dists(sandbox, plan.added_dists))
            if extra - imported:
                plan = plan_view(view, changes, index or ImageIndex(), workdir=sandbox.workdir,
                                 agent_paths=cfg.agent_paths, outputs=cfg.outputs, imported=imported | extra)
        hidden = dict(plan.restore)
        if hidden:  # image state first: every later command (tar for the uploads too) runs the image's programs
            await sandbox.restore(list(hidden))
        if plan.entry_points:
            contents = {path: await sandbox.read_file(path) for path in plan.entry_points}
            plugins = plugin_entry_points(contents)
            if plugins:
                await sandbox.restore(plugins)
            hidden.update({path: "pytest plugin" for path in plugins})
        return hidden

    @staticmethod
    async def _dists(sandbox: Sandbox, dist_infos: tuple[str, ...]) -> dict[str, tuple[str, set[str], set[str]]]:
        """dist-info path -> (distribution key, its top-level modules, the keys it requires)."""
        out = {}
        for path in dist_infos[:500]:
            text = {name: (await sandbox.read_file(f"{path}/{name}") or b"").decode("utf-8", errors="replace")
                    for name in ("METADATA", "RECORD", "top_level.txt")}
            out[path] = (dist_key_of(path), dist_modules(text["RECORD"], text["top_level.txt"] or None),
                         dist_requires(text["METADATA"]))
        return out


@dataclass(frozen=True)
class _Attempt:
    """What verifying one attempt needs to know about it beyond the task."""

    prepared: PreparedEnvironment | None = None
    index: ImageIndex | None = None
    phases: dict[str, float] | None = None  # the attempt's seconds per phase, added to as it goes (this dict)


def _below(min_reward: float | dict[str, float] | None, verifier: VerifierResult) -> bool:
    """Whether a step's rewards fall short of its ``min_reward``: a number gates the step's mean
    reward; a table gates each of its keys (a missing key counts as below)."""
    if min_reward is None:
        return False
    if isinstance(min_reward, dict):
        return any(verifier.rewards.get(key, -math.inf) < floor for key, floor in min_reward.items())
    return verifier.reward < min_reward


def trial_summary(result: TrialResult) -> dict[str, Any]:
    """A JSON-friendly summary of a trial for the CLI and reports. ``cause``: why it fell short of 1
    (see trial_cause); ``reason``: one line saying what happened, cause included; ``verifier_view``:
    what each step's verifier saw (docs/verification.md), one line per step."""
    cause = trial_cause(result)
    return {"task": result.task, "agent": result.agent, "status": result.status, "reward": result.reward,
            "rewards": result.rewards, "seconds": round(result.seconds, 3), "error": result.error,
            "commands": sum(s.trajectory.n_commands for s in result.steps), "cause": cause,
            "reason": trial_reason(result), "verifier_view": [s.verifier.view_summary() for s in result.steps]}


def trial_reason(result: TrialResult) -> str:
    """One line: the error of an attempt that did not complete, else its score and the cause."""
    cause = trial_cause(result)
    if result.status != "ok":
        return result.error or result.status
    scores = ", ".join(f"{k}={v:g}" for k, v in result.rewards.items()) if len(result.rewards) > 1 else f"{result.reward:g}"
    if not result.rewards:
        return f"no reward: {cause or result.error or 'the verifier wrote no reward file'}"
    return f"scored {scores}" + (f": {cause}" if cause else "")
