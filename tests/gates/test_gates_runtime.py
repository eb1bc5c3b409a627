"""Gates 2-6 on the real bwrap backend: one batch of defective tasks plus a good one, each with the
right verdict and a one-line reason, and the gates' own failure and timeout paths."""

from __future__ import annotations

import asyncio
import uuid

from autoenvscaling.executors.base import LocalExecutor
from autoenvscaling.gates.base import GateContext, GateSettings
from autoenvscaling.gates.runtime import BuildGate, ResetGate
from autoenvscaling.gates.validate import Validator, validate_many
from autoenvscaling.runtime.trial import TrialRunner
from autoenvscaling.tasks import Task
from autoenvscaling.tasks.harbor import read_task

# With a coin-flip verifier, all of k oracle runs pass with probability 2**-k: 10 runs make the
# flaky fixture slip through once in a thousand batches.
FLAKY_RUNS = 10


def slow_verifier(good: Task) -> Task:
    """The good task with a verifier that outlives its 2 s timeout."""
    config = good.config.model_copy(update={"verifier": good.config.verifier.model_copy(update={"timeout_sec": 2.0})})
    return good.with_config(config).with_files({"tests/test.sh": "#!/bin/bash\nsleep 30\necho 1 > /logs/verifier/reward.txt\n"}).renamed("slow-verifier")


def test_one_batch_of_defects_gets_the_right_verdicts(defects, host, bwrap_backend):
    names = ["good", "missing-test-sh", "malformed-toml", "failing-solution", "passes-on-nop", "flaky",
             "state-leak", "multi-stage", "solution-reads-tests"]
    skip = tuple(n for n in ("decontamination", "near-duplicate", "calibration"))
    validator = Validator(host=host, backend=bwrap_backend, settings=GateSettings(flaky_runs=FLAKY_RUNS, skip=skip))
    items = [defects / n for n in names] + [slow_verifier(read_task(defects / "good"))]

    async def run():
        return [r async for r in validate_many(items, validator=validator, executor=LocalExecutor(concurrency=2))]

    reports = {r.name.removeprefix("defects/"): r for r in asyncio.run(run())}
    assert set(reports) == set(names) - {"malformed-toml"} | {"malformed-toml", "slow-verifier"}
    for r in reports.values():
        assert r.reason and "\n" not in r.reason, r

    def verdict(name):
        r = reports[name]
        failing = r.gates[-1].name if r.gates else None
        return r.status, failing

    assert verdict("good") == ("valid", "calibration")  # calibration is last and skipped by settings
    good = reports["good"]
    flaky = next(g for g in good.gates if g.name == "flaky")
    assert flaky.evidence[-1].values["runs"] == [1.0] * FLAKY_RUNS
    assert flaky.evidence[-1].values["reused"] == 2  # the oracle and reset runs count
    assert next(g for g in good.gates if g.name == "null").evidence[0].values["reward"] == 0.0
    # Where the time went: the build gate built; each attempt's phases, summed per gate (a serial
    # gate's phases fit in its seconds; the flaky gate's reruns, concurrent, may add up to more).
    phases = {g.name: g.phases for g in good.gates}
    assert set(phases["build"]) == {"prepare"} and phases["lint"] == {}
    for name in ("oracle", "null", "reset"):
        assert set(phases[name]) == {"prepare", "create", "start", "agent", "verifier-setup", "verifier", "teardown"}
        assert 0 < sum(phases[name].values()) <= next(g.seconds for g in good.gates if g.name == name) + 0.01
    assert set(phases["flaky"]) >= {"agent", "verifier"}

    assert verdict("missing-test-sh") == ("invalid", "lint")
    assert reports["missing-test-sh"].reason == "lint: missing tests/test.sh"
    assert verdict("solution-reads-tests") == ("invalid", "lint")
    assert reports["malformed-toml"].status == "invalid" and "malformed TOML" in reports["malformed-toml"].reason
    assert verdict("failing-solution") == ("invalid", "oracle")
    assert reports["failing-solution"].reason == "oracle: the oracle scored 0 (every reward must be 1)"
    assert verdict("passes-on-nop") == ("invalid", "null")
    assert reports["passes-on-nop"].reason == ("null: the null attempt scored 1 (must be < 0.5): "
                                               "the tests pass without any work")
    assert verdict("multi-stage") == ("invalid", "build")
    assert reports["multi-stage"].reason.startswith("build: build failed:")
    status, gate = verdict("flaky")
    assert status == "invalid" and gate in ("oracle", "reset", "flaky"), reports["flaky"].reason
    assert verdict("slow-verifier") == ("timeout", "oracle")
    assert "timed out" in reports["slow-verifier"].reason

    # state-leak's solution counts attempts in a file baked into the image and its verifier accepts
    # only the first attempt ever made on the environment. On a backend that let attempts share state,
    # the reset gate's second oracle attempt would see count=2 and score 0. Our sandboxes give every
    # attempt its own copy-on-write layer over the prepared root (and separate pid/net/ipc/uts
    # namespaces), so no channel between attempts exists: the oracle scores 1 on the fresh sandbox,
    # the reset gate passes with that evidence, and the task is valid. The reset gate's failing path
    # is exercised in test_reset_gate_fails_when_a_fresh_attempt_does_not_score_1.
    leak = reports["state-leak"]
    assert leak.status == "valid", leak.reason
    reset = next(g for g in leak.gates if g.name == "reset")
    assert reset.evidence[0].values["rewards"] == {"reward": 1.0}


def test_an_attempt_reports_the_seconds_of_each_of_its_phases(defects, bwrap_backend):
    from autoenvscaling.agents.builtin import OracleAgent
    from autoenvscaling.runtime.phases import PHASES

    result = asyncio.run(TrialRunner(bwrap_backend).run(read_task(defects / "good"), OracleAgent()))
    assert result.reward == 1.0
    assert set(result.phases) == set(PHASES) - {"healthcheck"}  # the task has none
    assert all(v >= 0 for v in result.phases.values()) and sum(result.phases.values()) <= result.seconds


def test_reset_gate_fails_when_a_fresh_attempt_does_not_score_1(defects, bwrap_backend):
    task = read_task(defects / "failing-solution")
    ctx = GateContext(backend=bwrap_backend, runner=TrialRunner(bwrap_backend), settings=GateSettings())
    result = asyncio.run(ResetGate().check(task, ctx))
    assert result.status == "fail"
    assert result.reason == "the oracle on a fresh sandbox scored 0 (every reward must be 1)"
    assert result.evidence[0].values["rewards"] == {"reward": 0.0}


def test_build_gate_timeout_and_evidence(defects, bwrap_backend):
    good = read_task(defects / "good")
    ctx = GateContext(backend=bwrap_backend, runner=None, settings=GateSettings())
    result = asyncio.run(BuildGate().check(good, ctx))
    assert result.status == "pass"
    values = result.evidence[0].values
    assert {"build_seconds", "cached", "ref", "base_mapping"} <= set(values) and ctx.prepared is not None
    assert values["base_mapping"]["base"] in ("debian-bookworm", "debian-trixie")  # the FROM it was built from
    broken = good.with_files({"environment/Dockerfile": "FROM debian:bookworm-slim\nRUN echo building; ls /nonexistent-x\n"})
    result = asyncio.run(BuildGate().check(broken, GateContext(backend=bwrap_backend, runner=None, settings=GateSettings())))
    assert result.status == "fail"
    assert result.reason.startswith("build failed: RUN failed with exit code 2 at Dockerfile line 2")
    assert "building\nls: cannot access '/nonexistent-x'" in result.evidence[0].output_tail  # the build's output
    # The step never ends on its own: only the build timeout can stop it.
    slow = good.with_files({"environment/Dockerfile": f"FROM debian:bookworm-slim\nRUN echo {uuid.uuid4().hex} && sleep 3000\n"})
    config = slow.config.model_copy(update={"environment": slow.config.environment.model_copy(update={"build_timeout_sec": 1.0})})
    result = asyncio.run(BuildGate().check(slow.with_config(config), GateContext(backend=bwrap_backend, runner=None,
                                                                                  settings=GateSettings())))
    assert result.status == "timeout"
    assert result.reason == "the environment did not build within 1s"
    # The backend stopped the build itself (its BuildTimeout is in the evidence), not the gate's grace period.
    assert "build timed out after 1s" in result.evidence[0].output_tail, result.evidence[0]
