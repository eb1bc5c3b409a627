"""Fuzzing task directories and task.toml through what users call: ``read_task`` (every command that
takes a task folder), ``parse_config`` (task.toml text from rows and model replies) and the admission
batch (``autoenvscaling tasks validate``: ``validate_many`` with the static gates), where one broken
task must be one rejected report while the rest of the batch is judged as if alone."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from autoenvscaling.errors import TaskFormatError
from autoenvscaling.executors.base import LocalExecutor
from autoenvscaling.gates.base import GateSettings, ValidationReport
from autoenvscaling.gates.validate import Validator, load_gates, validate_many
from autoenvscaling.plugins import create_host
from autoenvscaling.tasks import parse_config, read_task, write_task
from autoenvscaling.testing.toy import ToyDomain

from .conftest import Fuzz
from .strategies import one_line_error, single_line, task_toml_text
from .taskdirs import materialise, secret_inside, task_trees


def check_read(path: Path, scratch: Path) -> None:
    """``read_task`` gives a task or one TaskFormatError line; a task it gives holds nothing from
    outside its folder, has a digest, and can be written again."""
    try:
        task = read_task(path)
    except Exception as exc:
        one_line_error(exc, TaskFormatError)
        return
    assert not secret_inside(task), "a link out of the task was followed"
    for rel in task.files:
        assert not rel.startswith("/") and ".." not in rel.split("/"), rel
    assert task.digest().startswith("sha256:")
    try:
        write_task(task, scratch / "copy")
    except Exception as exc:
        one_line_error(exc, TaskFormatError)


def test_task_directories(fuzz: Fuzz, tmp_path: Path) -> None:
    @fuzz.given(task_trees())
    def check(tree: list[Any]) -> None:
        root = Path(tempfile.mkdtemp(dir=tmp_path))
        try:
            check_read(materialise(tree, root), root)
        finally:
            shutil.rmtree(root)

    check()


def test_task_toml_text(fuzz: Fuzz) -> None:
    @fuzz.given(task_toml_text)
    def check(text: str) -> None:
        try:
            config = parse_config(text)
        except Exception as exc:
            one_line_error(exc, TaskFormatError)
            return
        config.to_dict()  # what writing it back starts from

    check()


def _static_validator() -> Validator:
    """The validator ``tasks validate`` builds, with the gates that need a sandbox or a solver skipped
    (the static ones run: lint, the text gates, the installed domains' own lints)."""
    host = create_host()
    skip = tuple(g.name for g in load_gates(host) if g.needs_sandbox or g.needs_solver)
    return Validator(host=host, settings=GateSettings(skip=skip))


def _validate(paths: list[Path], validator: Validator) -> list[ValidationReport]:
    async def run() -> list[ValidationReport]:
        executor = LocalExecutor(concurrency=2, in_process=True)
        try:
            return [r async for r in validate_many(paths, validator=validator, executor=executor)]
        finally:
            await executor.aclose()

    return asyncio.run(run())


def assert_judged(report: ValidationReport) -> None:
    """A report with a one-line reason, and no gate that crashed (a bug keeps its traceback in the
    gate's evidence, and a job that raised says "validation crashed")."""
    assert single_line(report.reason), report.reason
    assert not report.reason.startswith("validation crashed"), report.reason
    for gate in report.gates:
        assert "\n" not in gate.reason, (gate.name, gate.reason)
        for evidence in gate.evidence:
            assert "Traceback (most recent call last)" not in evidence.output_tail, evidence.output_tail


def test_validation_batch_goes_on(fuzz: Fuzz, tmp_path: Path) -> None:
    validator = _static_validator()
    good = [write_task(ToyDomain().generate(family, seed=3), tmp_path / family)
            for family in ("write-file", "count-lines")]
    alone = {str(r.task): r.status for r in _validate(good, validator)}

    @fuzz.given(st.lists(task_trees(), min_size=1, max_size=3), fast=10, full=300)
    def check(trees: list[list[Any]]) -> None:
        root = Path(tempfile.mkdtemp(dir=tmp_path))
        try:
            bad = [materialise(tree, root / str(i)) for i, tree in enumerate(trees)]
            batch = [good[0], *bad, good[1]]
            reports = _validate(batch, validator)
            assert sorted(r.task for r in reports) == sorted(map(str, batch))
            for report in reports:
                assert_judged(report)
                if report.task in alone:  # the good tasks are judged as they are alone
                    assert report.status == alone[report.task], report.reason
        finally:
            shutil.rmtree(root)

    check()
