"""The computer-use domain's admission gates, on top of the core ones.

``computer-use-lint`` (static, order 17): the hidden spec, the seed, the state key and the reference
solution are all there and agree (the spec's app is in the image, the tests' seed is the image's seed
and its digest the spec's, every expectation names a table the seed has), and nothing hidden
reached the image but the key the app deletes at start.

``computer-use-state`` (order 55, after the core's reset gate): in a fresh sandbox, the app answers
its state interface with exactly the seeded data (every attempt starts from the same state); the
reference solution changes it; the interface's reset puts it back to the seed (timed), and the
verifier then scores 0, so it reads the live state and nothing the oracle left elsewhere. A task the
domain vouches for (``redteam_tested``: made again byte for byte by its family, whose tests run this
gate on every family at three levels) is skipped with the reason, unless
``GateSettings.redteam_vouched`` is False.
"""

from __future__ import annotations

import json
import shlex
import time
from typing import Literal

from autoenvscaling.api import (
    SOLUTION_DIR, Action, Agent, AgentLimits, DomainLintGate, Evidence, Gate, GateContext,
    GateResult, Sandbox, StepConfig, Task, Trajectory, last_json_object, solution_files, trial_evidence,
)

from .domain import ComputerUseDomain
from .render import DOMAIN, STATE_SOCKET

KINDS = ("key", "insert", "deleted", "query", "journal")
Status = Literal["pass", "fail", "error", "timeout", "skip"]  # a gate result's status (GateResult.status)
PROBE_KEY = "/tmp/.aes-probe-key"


def is_external(task: Task) -> bool:
    return str(task.provenance.family or "").startswith("external:")


class ComputerUseLintGate(DomainLintGate):
    name = "computer-use-lint"
    order = 17
    domain = DOMAIN
    required = ("tests/spec.json", "tests/verify.py", "tests/aes_verifier.py", "tests/seed.sql", "tests/state.key", "environment/seed.sql",
                "environment/state.key", "solution/solve.sh")
    visible = ("tests/seed.sql", "tests/state.key")  # the app loads the same seed and reads the same key

    @classmethod
    def exempt(cls, task: Task) -> str:
        return "an imported collection task: its own verify() is the check" if is_external(task) else ""

    @classmethod
    def domain_problem(cls, task: Task) -> str:
        """The computer_use checks of a generated task (its files are there: ComputerUseLintGate.required)."""
        from .apps import webapp

        try:
            spec = json.loads(task.files["tests/spec.json"].text)
        except ValueError as exc:
            return f"tests/spec.json is not valid JSON ({exc})"
        app = spec.get("app", "")
        if f"environment/aes/aes_apps/{app}.py" not in task.files:
            return f"the spec's app {app!r} is not in the image (environment/aes/aes_apps/{app}.py)"
        seed = task.files["tests/seed.sql"].data
        if seed != task.files["environment/seed.sql"].data:
            return "tests/seed.sql is not the image's environment/seed.sql: the verifier would diff against other data"
        if task.files["tests/state.key"].data.strip() != task.files["environment/state.key"].data.strip():
            return "tests/state.key is not the key the image's app reads (environment/state.key)"
        try:
            seeded = webapp.load_seed(seed.decode())
        except Exception as exc:  # noqa: BLE001 - any SQL error is the task's defect
            return f"environment/seed.sql does not load: {exc}"
        if spec.get("seed_digest") != webapp.digest(seeded):
            return "the spec's seed_digest is not the digest of seed.sql"
        tables = set(webapp.tables(seeded))
        expect = spec.get("expect")
        if not isinstance(expect, list) or not expect:
            return "the spec has no expectations: the verifier would have nothing to score"
        for i, exp in enumerate(expect):
            kinds = [k for k in KINDS if k in exp]
            if len(kinds) != 1:
                return f"expectation {i + 1} must have exactly one of {', '.join(KINDS)}"
            if kinds[0] in ("key", "insert", "deleted") and exp.get("table") not in tables:
                return f"expectation {i + 1} names table {exp.get('table')!r}, which the seed lacks"
        if STATE_SOCKET not in task.config.verifier.outputs or task.config.verifier.effective_view != "outputs":
            return (f'task.toml must declare outputs = ["{STATE_SOCKET}"] in [metadata.autoenvscaling.verifier]: '
                    "the verifier then sees the pristine image plus the state interface, and nothing else the agent "
                    "changed")
        return ""


lint_problem = ComputerUseLintGate.problem  # the first static problem of a generated computer_use task (or "")


class StateProbe(Agent):
    """Reads the app's state digest, runs the reference solution, reads it again, resets, reads again.
    Outputs are JSON lines the gate parses; the key is uploaded for the probe and removed after."""

    name = "state-probe"

    def __init__(self, key: str) -> None:
        self.key = key

    async def run(self, task: Task, sandbox: Sandbox, *, step: StepConfig | None = None,
                  limits: AgentLimits | None = None) -> Trajectory:
        start = time.monotonic()
        ask = f"python3 /opt/aes/webapp.py ask {{op}} --key-file {PROBE_KEY}"
        await sandbox.upload_files({PROBE_KEY.rsplit("/", 1)[1]: self.key.encode()}, "/tmp")
        await sandbox.upload_files(solution_files(task, step), SOLUTION_DIR)
        commands = [ask.format(op="digest"), f"bash {SOLUTION_DIR}/solve.sh", ask.format(op="digest"),
                    ask.format(op="reset"), ask.format(op="digest"), f"rm -rf {shlex.quote(PROBE_KEY)} {SOLUTION_DIR}"]
        actions = []
        for command in commands:
            result = await sandbox.exec(command, timeout=task.config.agent.timeout_sec)
            actions.append(Action(command=command, output=result.tail(2000), exit_code=result.exit_code,
                                  seconds=result.seconds, timed_out=result.timed_out))
        return Trajectory(agent=self.name, actions=actions, seconds=time.monotonic() - start, stop_reason="done")


def _answer(action: Action) -> dict:
    answer = last_json_object(action.output)
    return answer if answer is not None else {"error": f"no answer (exit {action.exit_code}): {action.output.strip()[-200:]}"}


class ComputerUseStateGate(Gate):
    name = "computer-use-state"
    order = 55
    needs_sandbox = True
    domain = DOMAIN

    async def check(self, task: Task, ctx: GateContext) -> GateResult:
        if is_external(task):
            return self.result("pass", "an imported collection task: a fresh sandbox per attempt is its reset")
        if ctx.settings.redteam_vouched and ComputerUseDomain().redteam_tested(task):
            return self.result("pass", f"skipped: the {DOMAIN} domain's tests run this probe on every family "
                                       "(the task is the family's own, as it generated it)")
        spec = json.loads(task.files["tests/spec.json"].text)
        prepared = await ctx.prepared_environment(task)
        result = await ctx.require_runner().run(task, StateProbe(task.files["tests/state.key"].text.strip()), prepared=prepared)
        evidence: list[Evidence] = [trial_evidence(result, "state probe: digest, oracle, digest, reset, digest, verifier")]

        def done(status: Status, reason: str = "") -> GateResult:
            return self.result(status, reason, evidence=evidence)

        if result.status != "ok" or not result.steps:
            return done("error" if result.status != "timeout" else "timeout", f"the state probe did not complete: {result.error}")
        actions = result.steps[-1].trajectory.actions
        first, after, reset, final = (_answer(actions[i]) for i in (0, 2, 3, 4))
        for label, answer in (("at start", first), ("after the oracle", after), ("on reset", reset), ("after reset", final)):
            if "error" in answer:
                return done("fail", f"the app's state interface failed {label}: {answer['error']}")
        seeded = spec["seed_digest"]
        evidence.append(Evidence(command="state digests", values={"start": first["digest"], "after_oracle": after["digest"],
                                                                   "after_reset": final["digest"],
                                                                   "reset_ms": round(float(reset["reset_ms"]), 2)}))
        if first["digest"] != seeded:
            return done("fail", "the app did not start from the seeded state (its digest differs from seed.sql's)")
        if after["digest"] == seeded:
            return done("fail", "the reference solution left the app's state unchanged: nothing for the verifier to see")
        if final["digest"] != seeded:
            return done("fail", "the state interface's reset did not restore the seeded state")
        if result.reward != 0:
            return done("fail", f"after reset the verifier scored {result.reward:g}: it must read the live state "
                                "(the seeded state scores 0)")
        return done("pass", f"starts seeded; reset restores it in {float(reset['reset_ms']):.1f} ms")
