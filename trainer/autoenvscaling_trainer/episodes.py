"""Rollouts of either role, as token streams with a reward.

A solver episode is one trial of a task (``TrialRunner``: its own sandbox, the solver's tools, the
protected verification) with the ordinary ``SolverAgent`` talking to a ``PolicyLLM``; its reward is
the verifier's (the fraction of checks passed). A proposer episode is one proposal for an assignment
by the ``prompt`` proposer talking to a ``PolicyLLM``, scored by the admission gates and calibration
against the solver: +1 admitted, -0.25 failed calibration, -1 failed validation (docs/architecture.md, Metrics).

The rollouts of a group run concurrently (their sandboxes start in parallel); a group always waits
for every rollout to end, so each one's sandbox is closed, before it returns or raises.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Sequence

from autoenvscaling.api import Agent, AgentLimits, ChatTemplate, SolverAgent, Toolbox, Trajectory

from .policy import Generator, Participant, PolicyLLM, TokenStream
from .settings import ROLE_REWARDS, Role

if TYPE_CHECKING:
    from autoenvscaling.api import Assignment, PluginHost, Sandbox, StepConfig, Task, TrialRunner, Validator


@dataclass
class Episode:
    """One rollout: ``reward`` is None when the rollout says nothing about the policy (the sandbox
    or the verifier failed, not the model)."""

    role: Role
    key: str
    seed: int
    stream: TokenStream
    reward: float | None
    status: str
    detail: str = ""
    seconds: float = 0.0

    @property
    def usable(self) -> bool:
        return self.reward is not None and bool(self.stream.prompt_ids)


@dataclass
class Group:
    """The rollouts of one task or proposer prompt, which GRPO compares with each other."""

    role: Role
    key: str
    episodes: list[Episode] = field(default_factory=list)

    @property
    def rewards(self) -> list[float]:
        return [e.reward for e in self.episodes if e.reward is not None]

    @property
    def usable(self) -> bool:
        return all(e.usable for e in self.episodes)

    @property
    def useful(self) -> bool:
        """GRPO can learn from it: every rollout scored and the rewards are not all equal."""
        return self.usable and len(set(self.rewards)) > 1

    def mean(self) -> float | None:
        return statistics.fmean(self.rewards) if self.rewards else None


class _Participating(Agent):
    """The solver of one rollout, which leaves the generator's batches once its last agent phase is
    over (verification needs no replies, and the other rollouts should not wait for it)."""

    name = "solver"

    def __init__(self, agent: Agent, participant: Participant) -> None:
        self.agent = agent
        self.participant = participant

    async def run(self, task: Task, sandbox: Sandbox, *, step: StepConfig | None = None,
                  limits: AgentLimits | None = None) -> Trajectory:
        try:
            return await self.agent.run(task, sandbox, step=step, limits=limits)
        finally:
            if step is None or step is task.steps[-1]:
                self.participant.leave()


class Rollouts:
    """Runs episodes of both roles with one generator (the policy) and one trial runner."""

    def __init__(self, generator: Generator, template: ChatTemplate, runner: TrialRunner, *, host: PluginHost,
                 limits: AgentLimits, tokens_per_turn: int, proposer_tokens: int = 768,
                 validator: Validator | None = None, calibration_rollouts: int = 2,
                 calibration_band: tuple[float, float] = (0.25, 0.75), tool_calling: bool = False) -> None:
        self.generator = generator
        self.template = template
        self.runner = runner
        self.host = host
        self.limits = limits
        self.tokens_per_turn = tokens_per_turn
        self.proposer_tokens = proposer_tokens
        self.validator = validator
        self.calibration_rollouts = calibration_rollouts
        self.calibration_band = calibration_band
        self.tool_calling = tool_calling
        self.toolbox = Toolbox.from_host(host)

    def policy(self, max_tokens_per_turn: int) -> PolicyLLM:
        return PolicyLLM(self.generator, self.template, max_tokens_per_turn=max_tokens_per_turn)

    def solver(self, llm: PolicyLLM, seed: int) -> SolverAgent:
        """The solver agent of the rollouts, as the flywheel runs a local model (the fenced-block
        protocol unless ``tool_calling``), with the trainer's limits."""
        agent = SolverAgent(llm, tool_calling=self.tool_calling, limits=self.limits,
                            max_tokens_per_turn=self.tokens_per_turn, tools=self.toolbox)
        return agent.seeded(seed)

    # -- solver ------------------------------------------------------------------------------
    async def solve(self, task: Task, seed: int) -> Episode:
        started = time.monotonic()
        llm = self.policy(self.tokens_per_turn)
        result = await self._trial(task, llm, seed)
        scored = result.status in ("ok", "timeout") and llm.started
        reward = result.reward if scored else None
        trajectory = result.trajectory
        detail = result.error or (trajectory.stop_reason if trajectory else "")
        return Episode(role="solver", key=task.name, seed=seed, stream=llm.stream, reward=reward,
                       status=result.status, detail=detail or "", seconds=time.monotonic() - started)

    # -- proposer ----------------------------------------------------------------------------
    async def propose(self, assignment: Assignment, seed: int) -> Episode:
        """One proposal by the policy, scored by gates 1-8 and then calibration against the
        policy as solver (the paper's one-model setting)."""
        from autoenvscaling.api import PromptProposer, outcome_of

        started = time.monotonic()
        llm = self.policy(self.proposer_tokens)
        domain = self.host.domains.get(assignment.domain)()
        participant = self.generator.join()
        try:
            proposal = await PromptProposer(llm=llm, max_tokens=self.proposer_tokens).propose(
                assignment, domain=domain, seed=seed)
        finally:
            participant.leave()
        if not proposal.scored or not llm.started:
            return Episode(role="proposer", key=assignment.parent or assignment.domain, seed=seed, stream=llm.stream,
                           reward=None, status="infrastructure", detail=proposal.error or "",
                           seconds=time.monotonic() - started)
        outcome, reason = "failed_validation", proposal.error or "no task in the reply"
        if proposal.task is not None and self.validator is not None:
            report = await self.validator.validate(proposal.task)
            outcome, reason = outcome_of(proposal, report), report.reason
            if report.valid:  # gates 1-8 passed: calibration (gate 9) against the policy as solver decides
                gate = await self._calibrate(proposal.task)
                outcome = {"pass": "admitted", "fail": "failed_calibration"}.get(gate.status, "infrastructure")
                reason = gate.reason
        return Episode(role="proposer", key=assignment.parent or assignment.domain, seed=seed, stream=llm.stream,
                       reward=ROLE_REWARDS.get(outcome), status=outcome, detail=reason or "",
                       seconds=time.monotonic() - started)

    async def _calibrate(self, task: Task) -> Any:
        """Gate 9 on a proposed task: ``calibration_rollouts`` solver rollouts by the policy."""
        from autoenvscaling.api import calibrate, rollout_seed

        assert self.validator is not None
        settings = self.validator.settings.model_copy(update={
            "calibration_rollouts": self.calibration_rollouts, "calibration_expand_to": self.calibration_rollouts,
            "calibration_band": self.calibration_band})

        async def rollouts(indices: Sequence[int]) -> list[Any]:
            trials = (self._trial(task, self.policy(self.tokens_per_turn), rollout_seed(task, i)) for i in indices)
            return list(await asyncio.gather(*trials))

        return (await calibrate(task, settings, rollouts)).gate

    async def _trial(self, task: Task, llm: PolicyLLM, seed: int) -> Any:
        """A trial of ``task`` by the solver talking to ``llm`` (for calibration, a fresh policy whose
        stream nobody records)."""
        participant = self.generator.join()  # before the sandbox starts: batches never depend on timing
        try:
            return await self.runner.run(task, _Participating(self.solver(llm, seed), participant))
        finally:
            participant.leave()


async def run_group(role: Role, key: str, seeds: Sequence[int], episode: Callable[[int], Awaitable[Episode]]) -> Group:
    """``episode(seed)`` for every seed, concurrently. Every rollout runs to its end (and closes its
    sandbox) even when another fails; then the first failure, if any, is raised."""
    results = await asyncio.gather(*(episode(s) for s in seeds), return_exceptions=True)
    failures = [r for r in results if isinstance(r, BaseException)]
    if failures:
        raise failures[0]
    return Group(role=role, key=key, episodes=[r for r in results if isinstance(r, Episode)])
