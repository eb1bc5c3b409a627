"""The Endless Terminals layout: export of generated tasks, import of Endless Terminals folders
(with an Apptainer definition or a Dockerfile), byte-identical round trips, and an imported task
run for real through the trial runner."""

from __future__ import annotations

import ast
import asyncio
import json
from pathlib import Path

import pytest

from autoenvscaling.plugins import create_host
from autoenvscaling.runtime.trial import TrialRunner
from autoenvscaling.errors import TaskFormatError
from autoenvscaling.tasks import short_name
from autoenvscaling_terminal.families import CATALOG
from autoenvscaling_terminal.formats import EndlessTerminalsFormat, dockerfile_from_def
from autoenvscaling.testing import ScriptedAgent
from helpers import domain

CONTAINER_DEF = """Bootstrap: localimage
From: ./ubuntu_22.04.sif

%post
    mkdir -p /home/user/data
    printf 'id,amount\\n1,10\\n2,32\\n' > /home/user/data/payments.csv
    chmod -R a+rwX /home/user

%environment
    export LC_ALL=C.UTF-8
    export REPORT_DIR=/home/user/out

%labels
    Author generator
"""
INITIAL = """import os


def test_payments_present():
    assert os.path.isfile("/home/user/data/payments.csv")
"""
FINAL = """import os


def test_total_written():
    assert open("/home/user/out/total.txt").read().strip() == "42"


def test_input_kept():
    assert os.path.isfile("/home/user/data/payments.csv")
"""


def write_et_task(root: Path, *, with_def: bool = True) -> Path:
    root.mkdir(parents=True)
    (root / "task.json").write_text(json.dumps({"description": "Sum the `amount` column of /home/user/data/payments.csv "
                                                               "and write the total to /home/user/out/total.txt.",
                                                "truth": "The total is 42.", "name": root.name}, indent=4))
    (root / "test_initial_state.py").write_text(INITIAL)
    (root / "test_final_state.py").write_text(FINAL)
    if with_def:
        (root / "container.def").write_text(CONTAINER_DEF)
    else:
        (root / "Dockerfile").write_text("FROM ubuntu:22.04\nRUN mkdir -p /home/user/data && printf 'id,amount\\n1,10\\n2,32\\n' > /home/user/data/payments.csv\nWORKDIR /home/user\n")
    (root / "container.sif").write_bytes(b"\0built image, never imported\0")
    (root / "solutions").mkdir()
    (root / "solutions" / "summary.json").write_text("{}")
    return root


def test_registered_and_detected(tmp_path):
    fmt = create_host(strict=True).formats.get("endless-terminals")()
    et = write_et_task(tmp_path / "et" / "task_000001_ab")
    assert fmt.detect(et) and fmt.detect(et.parent)
    harbor = tmp_path / "harbor"
    from autoenvscaling.tasks import write_task

    write_task(domain().generate("sqlite", seed=1, difficulty="easy"), harbor / "t")
    assert not fmt.detect(harbor) and not fmt.detect(harbor / "t")


def test_apptainer_definition_becomes_a_dockerfile():
    dockerfile, extra = dockerfile_from_def(CONTAINER_DEF)
    assert dockerfile.splitlines()[0] == "FROM ubuntu:22.04"
    assert "ENV LC_ALL=C.UTF-8" in dockerfile and "ENV REPORT_DIR=/home/user/out" in dockerfile
    assert "RUN bash /tmp/et-post.sh" in dockerfile and dockerfile.rstrip().endswith("WORKDIR /home/user")
    assert "printf 'id,amount" in extra["et-post.sh"].decode()


@pytest.mark.parametrize("with_def", [True, False])
def test_import_and_export_round_trip(tmp_path, with_def):
    src = write_et_task(tmp_path / "src" / "task_000007_cd", with_def=with_def)
    fmt = EndlessTerminalsFormat()
    [task] = list(fmt.read(src.parent))
    assert task.instruction.startswith("Sum the `amount` column")
    assert task.files["tests/test_final_state.py"].text == FINAL and task.files["tests/truth.txt"].text == "The total is 42."
    assert "tests/test.sh" in task.files and "test_final_state.py" in task.files["tests/test.sh"].text
    assert "python3 -I /tests/reward.py" in task.files["tests/test.sh"].text
    assert task.config.verifier.outputs == ["/home/user"]
    assert "environment/Dockerfile" in task.files and "solution/solve.sh" not in task.files
    assert not any("container.sif" in p or "solutions/" in p for p in task.files)
    out = fmt.write([task], tmp_path / "out")
    for name in ("test_initial_state.py", "test_final_state.py", "container.def" if with_def else "Dockerfile"):
        assert (out / short_name(task.name) / name).read_bytes() == (src / name).read_bytes(), name
    assert json.loads((out / short_name(task.name) / "task.json").read_text()) == json.loads((src / "task.json").read_text())
    assert not (out / short_name(task.name) / "et-post.sh").exists()


def test_imported_tasks_declare_outputs_only_when_they_can_be_known():
    """Outputs = the agent's home when the final-state test reads only paths under it and runs no
    command; any other test (a system path, a subprocess) keeps the protected view."""
    from autoenvscaling_terminal.formats import et_outputs

    assert et_outputs(FINAL) == ["/home/user"]
    assert et_outputs(FINAL + 'def test_cfg():\n    assert open("/etc/app.conf").read()\n') is None
    assert et_outputs("import subprocess\n" + FINAL) is None
    assert et_outputs("def test_x():\n    assert True\n") is None


def test_generated_tasks_export_and_import_back(tmp_path):
    fmt = EndlessTerminalsFormat()
    tasks = [domain().generate(f, seed=2, difficulty="medium") for f in CATALOG]
    fmt.write(tasks, tmp_path)
    for task in tasks:
        folder = tmp_path / short_name(task.name)
        meta = json.loads((folder / "task.json").read_text())
        assert meta["description"] == task.instruction and json.loads(meta["truth"])["inputs"] is not None
        initial = (folder / "test_initial_state.py").read_text()
        names = [n.name for n in ast.parse(initial).body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]
        assert names and all(n.startswith("test_initial_") for n in names)
        compile(initial, "test_initial_state.py", "exec")
        assert (folder / "test_final_state.py").read_text() == task.files["tests/test_outputs.py"].text
        assert (folder / "Dockerfile").read_text() == task.dockerfile
        [back] = list(fmt.read(folder))
        assert back.instruction == task.instruction and back.dockerfile == task.dockerfile
        assert back.environment_files == task.environment_files
        assert back.files["tests/test_final_state.py"] == task.files["tests/test_outputs.py"]


def test_extra_task_json_keys_that_are_not_a_table_are_refused_in_one_line(tmp_path):
    task = domain().generate(next(iter(CATALOG)), seed=2, difficulty="medium")
    meta = dict(task.config.metadata)
    fmt = EndlessTerminalsFormat()
    for extra in (["not", "a", "table"], "text", 3):
        odd = task.with_config(task.config.model_copy(update={"metadata": {**meta, "endless_terminals": extra}}))
        with pytest.raises(TaskFormatError, match="metadata.endless_terminals is a .*, not a table") as err:
            fmt.write([odd], tmp_path / "out")
        assert "[metadata.endless_terminals]" in (err.value.hint or "")
    # A table adds its keys to task.json; the task's own description stays.
    kept = task.with_config(task.config.model_copy(update={"metadata": {
        **meta, "endless_terminals": {"difficulty": 3, "description": "not this"}}}))
    folder = fmt.write([kept], tmp_path / "ok") / short_name(task.name)
    written = json.loads((folder / "task.json").read_text())
    assert written["difficulty"] == 3 and written["description"] == task.instruction


def test_imported_task_runs_for_real(tmp_path, bwrap_backend):
    """An imported Endless Terminals task (Apptainer definition translated) builds and verifies:
    doing nothing scores 0, the right answer scores 1."""
    [task] = list(EndlessTerminalsFormat().read(write_et_task(tmp_path / "task_000003_ef")))
    runner = TrialRunner(bwrap_backend)
    nop = asyncio.run(runner.run(task, ScriptedAgent()))
    solved = asyncio.run(runner.run(task, ScriptedAgent(
        "mkdir -p \"$REPORT_DIR\" && awk -F, 'NR > 1 {s += $2} END {print s}' /home/user/data/payments.csv > \"$REPORT_DIR/total.txt\"")))
    assert nop.status == "ok" and nop.reward == 0.0, nop
    assert solved.status == "ok" and solved.reward == 1.0, solved.steps[-1].verifier.output_tail
