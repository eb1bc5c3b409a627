"""The validation pipeline without sandboxes: reading, gate order, verdicts, announcements, batches.

Sandbox gates are skipped here (tests/gates/test_gates_runtime.py runs them on bwrap); gates added by
an in-process plugin show how domain gates join the pipeline and how a crashing gate is contained.
"""

from __future__ import annotations

import asyncio

import pytest

from autoenvscaling.errors import UsageError
from autoenvscaling.executors.base import LocalExecutor
from autoenvscaling.gates.base import Gate, GateSettings
from autoenvscaling.gates.validate import Validator, discover_tasks, validate_many, validate_task
from autoenvscaling.plugins import create_host, hookimpl

SANDBOX_GATES = ("build", "oracle", "null", "redteam", "reset", "flaky")


class Recorder:
    """A plugin that records announced reports."""

    def __init__(self) -> None:
        self.reports = []

    @hookimpl
    def autoenvscaling_task_validated(self, report):
        self.reports.append(report)


class ForbidWordGate(Gate):
    """A domain lint: instructions must not say "forbidden"."""

    name = "no-forbidden-word"
    order = 15

    async def check(self, task, ctx):
        if "forbidden" in (task.instruction or ""):
            return self.result("fail", "instruction says 'forbidden'")
        return self.result("pass")


class CrashingGate(Gate):
    """A gate with a bug: raises for tasks whose name contains 'good'."""

    name = "crashes"
    order = 16

    async def check(self, task, ctx):
        if "good" in task.name:
            raise RuntimeError("gate bug\nsecond line")
        return self.result("pass")


class DomainGates:
    @hookimpl
    def autoenvscaling_register_gates(self, registrar):
        registrar.add("no-forbidden-word", ForbidWordGate)
        registrar.add("crashes", CrashingGate)


def _collect(agen):
    async def run():
        return [r async for r in agen]

    return asyncio.run(run())


def test_lint_level_batch_over_the_defects(defects):
    recorder = Recorder()
    host = create_host(strict=True, plugins=[recorder])
    settings = GateSettings(skip=SANDBOX_GATES)
    seen = []
    reports = _collect(validate_many(discover_tasks([defects]), host=host, settings=settings,
                                     executor=LocalExecutor(concurrency=3), progress=seen.append))
    by_name = {r.task.rsplit("/", 1)[-1]: r for r in reports}
    assert len(reports) == len(seen) == len(recorder.reports) == 9
    assert by_name["malformed-toml"].status == "invalid"
    assert by_name["malformed-toml"].reason.startswith("malformed-toml/task.toml: malformed TOML:")
    assert by_name["malformed-toml"].gates == []
    assert (by_name["missing-test-sh"].status, by_name["missing-test-sh"].reason) == ("invalid", "lint: missing tests/test.sh")
    assert by_name["solution-reads-tests"].reason.startswith("lint: solution/solve.sh reads /tests")
    good = by_name["good"]
    assert good.status == "valid" and good.reason == "all gates passed"
    core = [g.name for g in good.gates if not g.reason.startswith("a gate of domain")]  # not installed domains' own
    assert core[:1 + len(SANDBOX_GATES)] == ["lint", *SANDBOX_GATES]
    assert {g.status for g in good.gates if g.name in SANDBOX_GATES} == {"skip"}
    assert good.digest and good.digest.startswith("sha256:")
    data = good.to_json()
    assert {"task", "name", "status", "reason", "gates"} <= set(data)
    assert {"name", "status", "seconds", "evidence"} <= set(data["gates"][0])


def test_domain_gates_run_in_order_and_a_crash_is_an_error(defects):
    host = create_host(strict=True, plugins=[DomainGates()])
    validator = Validator(host=host, settings=GateSettings(skip=SANDBOX_GATES))
    ours = {"lint", "no-forbidden-word", "crashes"}  # installed domain plugins may add gates in between
    assert [g.name for g in validator.gates if g.name in ours] == ["lint", "no-forbidden-word", "crashes"]
    report = asyncio.run(validator.validate(defects / "good"))
    assert report.status == "error"
    assert report.reason == "crashes: RuntimeError: gate bug"
    assert "Traceback" in report.gates[-1].evidence[0].output_tail
    from autoenvscaling.tasks.harbor import read_task

    task = read_task(defects / "failing-solution")
    forbidden = task.model_copy(update={"instruction": "This is forbidden."})
    report = asyncio.run(validate_task(forbidden, validator.context, gates=validator.gates, label="x"))
    assert (report.task, report.status, report.reason) == ("x", "invalid", "no-forbidden-word: instruction says 'forbidden'")
    assert [g.name for g in report.gates] == ["lint", "no-forbidden-word"]  # later gates do not run


def test_an_object_plugins_gates_run_in_process_and_cannot_travel_to_worker_processes(defects):
    """Gates registered by an object (not an importable module) run in a batch whose executor works
    in this process; worker processes cannot rebuild the object, and the error names the way out."""
    host = create_host(strict=True, plugins=[DomainGates()])
    settings = GateSettings(skip=SANDBOX_GATES)
    with pytest.raises(UsageError, match="in-process object, so worker processes cannot load it") as err:
        _collect(validate_many([defects / "good"], host=host, settings=settings, executor=LocalExecutor(concurrency=1)))
    assert "LocalExecutor(in_process=True)" in (err.value.hint or "")
    [report] = _collect(validate_many([defects / "good"], host=host, settings=settings,
                                      executor=LocalExecutor(in_process=True)))
    assert (report.status, report.reason) == ("error", "crashes: RuntimeError: gate bug")  # the object's own gate ran
    assert "no-forbidden-word" in [g.name for g in report.gates]


def test_sandbox_gates_without_a_backend_are_a_usage_error(defects):
    host = create_host(strict=True)
    validator = Validator(host=host)
    assert validator.needs_sandbox
    with pytest.raises(UsageError, match="need a sandbox backend"):
        _collect(validate_many([defects / "good"], validator=validator))


def test_unknown_skip_names_fail_before_anything_runs():
    with pytest.raises(UsageError, match="unknown gate"):
        Validator(host=create_host(strict=True), settings=GateSettings(skip=("lnt",)))


def test_discover_tasks(defects, tmp_path):
    assert discover_tasks([defects / "good"]) == [defects / "good"]
    assert len(discover_tasks([defects])) == 9
    with pytest.raises(UsageError, match="no task directories"):
        discover_tasks([tmp_path])
    with pytest.raises(UsageError, match="no such file"):
        discover_tasks([tmp_path / "missing"])


def test_a_domains_sandbox_gate_needs_a_backend_only_for_that_domains_tasks(defects):
    """With the core sandbox gates skipped, a domain gate that needs a sandbox asks for a backend only
    when a task of its domain is in the batch; without one, only that task's report says so."""
    from autoenvscaling.gates.base import Gate
    from autoenvscaling.plugins import hookimpl
    from autoenvscaling.tasks.harbor import read_task

    class Built(Gate):
        name, order, needs_sandbox, domain = "kiln-built", 25, True, "kiln"

        async def check(self, task, ctx):
            return self.result("pass")

    class KilnPlugin:
        @hookimpl
        def autoenvscaling_register_gates(self, registrar):
            registrar.add("kiln-built", Built)

    validator = Validator(host=create_host(strict=True, plugins=[KilnPlugin()]), settings=GateSettings(skip=SANDBOX_GATES))
    good = read_task(defects / "good")
    kiln = good.with_provenance(domain="kiln")
    assert validator.needs_sandbox and not validator.needs_sandbox_for([defects / "good", good])
    assert validator.needs_sandbox_for([good, kiln])
    assert asyncio.run(validator.validate(good)).valid
    with pytest.raises(UsageError, match="need a sandbox backend"):
        asyncio.run(validator.validate(kiln))
