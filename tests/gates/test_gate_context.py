"""What gates share through ``GateContext``: typed fields, not string keys, and the provenance extras
gates read as typed fields too."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from autoenvscaling.errors import UsageError
from autoenvscaling.gates.base import GateContext, GateSettings
from autoenvscaling.gates.runtime import OracleGate
from autoenvscaling.gates.validate import run_gate
from autoenvscaling.sandbox.base import PreparedEnvironment
from autoenvscaling.tasks import Task
from autoenvscaling.tasks.harbor import read_task, render_config, write_task

TOML = """[metadata.autoenvscaling]
domain = "swe"
public_files = ["tests/suite/test_a.py"]
future_key = "kept"

[verifier]
timeout_sec = 30.0
"""


def _task() -> Task:
    return Task.create("org/t", {"verifier": {"timeout_sec": 30.0}}, "Do it.", {"tests/test.sh": "exit 0\n"})


class CountingBackend:
    """Prepares without building, and counts the builds."""

    name = "counting"

    def __init__(self) -> None:
        self.builds = 0

    async def prepare(self, task: Task) -> PreparedEnvironment:
        self.builds += 1
        return PreparedEnvironment(backend=self.name, ref=f"build-{self.builds}")


def test_the_prepared_environment_is_built_once_and_kept():
    backend = CountingBackend()
    ctx = GateContext(backend=backend, runner=None, settings=GateSettings())
    assert ctx.prepared is None and ctx.oracle_runs == [] and ctx.null_runs == [] and ctx.calibration is None and ctx.scratch == {}

    async def twice() -> tuple[PreparedEnvironment, PreparedEnvironment]:
        return await ctx.prepared_environment(_task()), await ctx.prepared_environment(_task())

    first, second = asyncio.run(twice())
    assert first is second is ctx.prepared and backend.builds == 1


def test_the_build_gates_environment_is_reused():
    backend = CountingBackend()
    ctx = GateContext(backend=backend, runner=None, settings=GateSettings())
    ctx.prepared = PreparedEnvironment(backend="counting", ref="from-the-build-gate")
    assert asyncio.run(ctx.prepared_environment(_task())).ref == "from-the-build-gate" and backend.builds == 0


def test_a_sandbox_gate_without_a_backend_is_an_error_with_a_reason():
    ctx = GateContext(backend=None, runner=None, settings=GateSettings())
    with pytest.raises(UsageError):
        ctx.require_backend()
    result = asyncio.run(run_gate(OracleGate(), _task(), ctx))
    assert result.status == "error" and "needs a sandbox backend" in result.reason


def test_public_files_is_a_typed_provenance_field_and_the_task_toml_is_unchanged(tmp_path: Path):
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "task.toml").write_text(TOML)
    (tmp_path / "t" / "instruction.md").write_text("Do it.\n")
    task = read_task(tmp_path / "t")
    provenance = task.provenance
    assert provenance.public_files == ["tests/suite/test_a.py"]
    assert provenance.model_extra == {"future_key": "kept"}  # unknown keys are still kept
    assert _task().provenance.public_files is None
    write_task(task, tmp_path / "out")
    assert (tmp_path / "out" / "task.toml").read_text() == TOML == render_config(task)
    written = render_config(_task().with_provenance(public_files=["tests/x.py"]))
    assert '[metadata.autoenvscaling]\npublic_files = ["tests/x.py"]\n' in written
