"""Causes, not symptoms: when the oracle scores 0, the gate's one-line reason carries the first real
error of the verifier (or of the failed solution), on real bwrap sandboxes through the real trial
runner, and the full output stays in the evidence."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from autoenvscaling.executors.base import LocalExecutor
from autoenvscaling.gates.base import GateContext, GateSettings
from autoenvscaling.gates.runtime import FlakinessGate, OracleGate, ResetGate
from autoenvscaling.gates.validate import Validator, validate_many
from autoenvscaling.runtime.trial import NO_SOLUTION, TrialRunner
from autoenvscaling.tasks.harbor import read_task

HARBOR = Path(__file__).resolve().parents[1] / "fixtures" / "harbor"
OFFLINE_CURL = ("curl: (6) Could not resolve host: example.com (network disabled in the offline verifier; "
                "only uv's installer URL is served locally)")
CAUSES = {
    "cause-missing-python": "python: command not found",
    "cause-missing-module": "ModuleNotFoundError: No module named 'numpy'",
    "cause-pytest-assert": ("FAILED test_state.py::test_answer_is_ready - "
                            "AssertionError: answer.txt says 'steady', expected 'ready'"),
    "cause-solution-fails": "solution/solve.sh exited 127: pip: command not found",
    "cause-offline-download": OFFLINE_CURL,
}
# Where each cause shows in the raw output kept as evidence.
RAW = {
    "cause-missing-python": "/tests/test.sh: line 3: python: command not found",
    "cause-missing-module": "ModuleNotFoundError: No module named 'numpy'",
    "cause-pytest-assert": "E       AssertionError: answer.txt says 'steady', expected 'ready'",
    "cause-solution-fails": "[agent exit 127] /solution/solve.sh: line 3: pip: command not found",
    "cause-offline-download": OFFLINE_CURL,
}


def _ctx(backend, **settings) -> GateContext:
    return GateContext(backend=backend, runner=TrialRunner(backend), settings=GateSettings(**settings))


def test_the_oracle_gate_names_the_first_real_error(host, bwrap_backend):
    only_oracle = tuple(n for n in host.gates.names() if n not in ("lint", "build", "oracle"))
    validator = Validator(host=host, backend=bwrap_backend, settings=GateSettings(skip=only_oracle))

    async def run():
        items = [HARBOR / name for name in CAUSES]
        return [r async for r in validate_many(items, validator=validator, executor=LocalExecutor(concurrency=2))]

    reports = {Path(r.task).name: r for r in asyncio.run(run())}
    for name, cause in CAUSES.items():
        report = reports[name]
        assert (report.status, report.reason) == ("invalid", f"oracle: the oracle scored 0: {cause}"), name
        oracle = next(g for g in report.gates if g.name == "oracle")
        assert oracle.evidence[0].values["cause"] == cause
        assert RAW[name] in oracle.evidence[0].output_tail, (name, oracle.evidence[0].output_tail)
    # The whole pytest run is kept, not only the line the reason quotes.
    tail = next(g for g in reports["cause-pytest-assert"].gates if g.name == "oracle").evidence[0].output_tail
    assert "skipping 'apt-get update'" in tail and "1 failed" in tail


def test_reset_and_flaky_gates_name_the_cause_too(bwrap_backend):
    task = read_task(HARBOR / "cause-missing-python")
    reset = asyncio.run(ResetGate().check(task, _ctx(bwrap_backend)))
    assert (reset.status, reset.reason) == ("fail", "the oracle on a fresh sandbox scored 0: python: command not found")
    flaky = asyncio.run(FlakinessGate().check(task, _ctx(bwrap_backend, flaky_runs=2)))
    assert (flaky.status, flaky.reason) == ("fail", "oracle run 1 of 2 scored 0 after 0 perfect run(s): "
                                                    "python: command not found")


def test_a_solution_that_times_out_or_is_missing(defects, bwrap_backend, monkeypatch):
    good = read_task(defects / "good")
    config = good.config.model_copy(update={"agent": good.config.agent.model_copy(update={"timeout_sec": 1.0})})
    # The solution never finishes on its own: only the agent timeout can end it.
    slow = good.with_config(config).with_files({"solution/solve.sh": "#!/bin/bash\nsleep 3000\necho ready > /app/answer.txt\n"})
    result = asyncio.run(OracleGate().check(slow, _ctx(bwrap_backend)))
    # The reason says how long the script ran (measured: 1 s, or more on a loaded machine).
    assert result.status == "fail"
    assert re.fullmatch(r"the oracle scored 0: solution/solve\.sh timed out after \d+s", result.reason), result.reason
    # Without a solution there is nothing to attempt: a task defect, found before any sandbox starts.
    bare = good.with_files({"solution/solve.sh": None})
    started = []
    create = bwrap_backend.create
    monkeypatch.setattr(bwrap_backend, "create", lambda *a, **kw: started.append(a) or create(*a, **kw))
    result = asyncio.run(OracleGate().check(bare, _ctx(bwrap_backend)))
    assert (result.status, result.reason) == ("fail", NO_SOLUTION)
    assert result.evidence[0].values["status"] == "error" and started == []


def test_a_pin_the_offline_verifier_lacks_is_named(bwrap_backend):
    task = read_task(HARBOR / "cause-pytest-assert")
    test_sh = task.files["tests/test.sh"].text.replace("pytest==8.4.1", "pytest==8.4.2")
    result = asyncio.run(OracleGate().check(task.with_files({"tests/test.sh": test_sh}), _ctx(bwrap_backend)))
    assert result.reason == ("the oracle scored 0: error: uvx (offline verifier): pytest==8.4.2 is not provisioned "
                             "in the offline verifier (provisioned: pytest==8.4.1)")
