"""The professional domain's admission gates, on top of the core ones.

``professional-lint`` (static, order 16): the checker, the hidden spec and the reference solution
are all there and agree (the spec names this family and the outputs the solution's parameters
declare; every ``tests/original/`` copy is the workspace file it stands for), and no hidden file
reached the image.

``professional-controls`` (order 45, after the null attempt): negative controls run as attempts in
the task's own environment, like the oracle. "nothing" is the null gate's attempt (run here when that
gate was skipped), held to this domain's stricter ceiling (at most 0.1, where the core's null gate
allows anything below 0.5);
"untouched" hands the input back as the answer (a new output becomes a copy of the workspace's file
of the same type; an in-place edit is left undone) and must score 0; "empty" writes every output as
a valid but empty document and must score 0; "wrong" is the family's plausible wrong answer (the
reference solution with one realistic mistake) and may score at most 0.5: partial credit must not
make a wrong answer look like a pass. A control above its ceiling rejects the task with the control,
its reward and its ceiling in the reason. A task the domain vouches for (``redteam_tested``: made
again byte for byte by its family, whose tests run this gate on every family at three levels) has
only its "nothing" control judged, from the null gate's attempt; the three others are skipped with
the reason, unless ``GateSettings.redteam_vouched`` is False.
"""

from __future__ import annotations

import json
import time

from autoenvscaling.api import (
    SOLUTION_DIR, Action, Agent, AgentLimits, DomainLintGate, Evidence, Gate, GateContext,
    GateResult, NopAgent, Sandbox, StepConfig, Task, Trajectory, solution_files, trial_evidence,
)

from .domain import ProfessionalDomain
from .render import CONTROLS, DOMAIN

#: the highest reward each control may earn, in the order they run ("nothing" is the null attempt)
CEILINGS = {"nothing": 0.1, "untouched": 0.0, "empty": 0.0, "wrong": 0.5}


def ControlAgent(control: str) -> Agent:  # noqa: N802 - used like a class
    """The agent of one negative control, named "control-<control>" (an agent's name is its class's)."""
    agent_class = type(f"Control_{control}", (_Control,), {"name": f"control-{control}"})
    return agent_class(control)


class _Control(Agent):
    """Runs one negative control: solution/controls/<control>.sh, with solution/ uploaded like the oracle's."""

    name = "control"

    def __init__(self, control: str) -> None:
        self.control = control

    async def run(self, task: Task, sandbox: Sandbox, *, step: StepConfig | None = None,
                  limits: AgentLimits | None = None) -> Trajectory:
        limits = limits or AgentLimits()
        start = time.monotonic()
        await sandbox.upload_files(solution_files(task, step), SOLUTION_DIR)
        command = f"bash {SOLUTION_DIR}/controls/{self.control}.sh"
        result = await sandbox.exec(command, timeout=min(task.config.agent.timeout_sec, limits.timeout_sec))
        await sandbox.exec(f"rm -rf {SOLUTION_DIR}", timeout=30)
        action = Action(command=command, output=result.tail(limits.observation_chars), exit_code=result.exit_code,
                        seconds=result.seconds, timed_out=result.timed_out)
        return Trajectory(agent=self.name, actions=[action], seconds=time.monotonic() - start,
                          stop_reason="timeout" if result.timed_out else "done")


def _json(task: Task, path: str) -> dict:
    return json.loads(task.files[path].text)


class ProfessionalLintGate(DomainLintGate):
    name = "professional-lint"
    order = 16
    domain = DOMAIN
    required = ("tests/spec.json", "tests/profcheck.py", "tests/aes_verifier.py", "solution/solve.py", "solution/params.json",
                *(f"solution/controls/{c}.sh" for c in CONTROLS))
    visible = ("tests/original/",)  # the checker's copies of the inputs: the workspace has them too

    @classmethod
    def domain_problem(cls, task: Task) -> str:
        try:
            spec, params = _json(task, "tests/spec.json"), _json(task, "solution/params.json")
        except ValueError as exc:
            return f"tests/spec.json or solution/params.json is not valid JSON ({exc})"
        family = spec.get("family")
        if not family or f"tests/check_{family}.py" not in task.files:
            return f"tests/check_{family}.py (the checker of the family the spec names) is missing"
        outputs = spec.get("outputs")
        if not outputs or outputs != params.get("outputs"):
            return "the spec and the solution's parameters must declare the same, non-empty outputs"
        workspace = {p[len("environment/app/"):]: f.data for p, f in task.files.items() if p.startswith("environment/app/")}
        for path, file in task.files.items():
            if path.startswith("tests/original/"):
                rel = path[len("tests/original/"):]
                if workspace.get(rel) != file.data:
                    return f"{path} is not a copy of the workspace file environment/app/{rel}"
        for rel in spec.get("keep", {}):
            if rel not in workspace:
                return f"the spec keeps {rel}, which the workspace lacks"
        return ""


class ProfessionalControlsGate(Gate):
    name = "professional-controls"
    order = 45
    needs_sandbox = True
    domain = DOMAIN

    async def check(self, task: Task, ctx: GateContext) -> GateResult:
        vouched = ctx.settings.redteam_vouched and ProfessionalDomain().redteam_tested(task)
        prepared = None
        evidence: list[Evidence] = []
        rewards: dict[str, float] = {}
        skipped: list[str] = []
        for control in CEILINGS:
            if control == "nothing" and ctx.null_runs:  # the null gate's attempt, not run twice
                result, what = ctx.null_runs[0], "no action (the null gate's attempt)"
            elif vouched and control != "nothing":
                skipped.append(control)
                continue
            else:
                prepared = prepared or await ctx.prepared_environment(task)
                agent = NopAgent() if control == "nothing" else ControlAgent(control)
                result = await ctx.require_runner().run(task, agent, prepared=prepared)
                what = "no action" if control == "nothing" else f"solution/controls/{control}.sh"
            evidence.append(trial_evidence(result, f"negative control {control!r}: {what}, then tests/test.sh"))
            if result.status != "ok":
                return self.result("error" if result.status == "error" else "timeout",
                                   f"control {control!r} did not complete: {result.error}",
                                   evidence=evidence)
            step = result.steps[-1] if result.steps else None
            if step and step.trajectory.actions and step.trajectory.actions[-1].exit_code not in (0, None):
                return self.result("fail", f"control {control!r} crashed (exit {step.trajectory.actions[-1].exit_code}): "
                                           "it must produce its answer for the verifier to reject",
                                   evidence=evidence)
            rewards[control] = result.reward
            if result.reward > CEILINGS[control] + 1e-9:
                limit = "0" if CEILINGS[control] == 0 else f"at most {CEILINGS[control]:g}"
                return self.result("fail", f"the {control!r} control scored {result.reward:g} (must score {limit}): "
                                           "the verifier rewards an answer that is not the task's",
                                   evidence=evidence)
        summary = ", ".join(f"{k} {v:g}" for k, v in rewards.items())
        if skipped:
            summary += (f"; {', '.join(skipped)} skipped: the {DOMAIN} domain's tests run them on every family "
                        "(the task is the family's own, as it generated it)")
        return self.result("pass", f"controls: {summary}", evidence=evidence)
