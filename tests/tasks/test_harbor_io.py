"""Reading and writing Harbor task directories: exact round trips, unknown keys, clear errors."""

from __future__ import annotations

import filecmp
import os
from pathlib import Path

import pytest

from autoenvscaling.errors import TaskFormatError
from autoenvscaling.tasks import Task, TaskConfig, read_task, render_config, write_task

MINIMAL_TOML = """\
# a comment that must survive an edit
version = "1.0"
future_top_level = "kept"

[verifier]
timeout_sec = 30.0
new_verifier_knob = 7   # unknown to us

[environment]
memory_mb = 512

[environment.future_table]
x = [1, 2]
"""


def _same_tree(a: Path, b: Path) -> bool:
    cmp = filecmp.dircmp(a, b)
    stack = [cmp]
    while stack:
        c = stack.pop()
        if c.left_only or c.right_only or c.funny_files:
            return False
        _, mismatch, errors = filecmp.cmpfiles(c.left, c.right, c.common_files, shallow=False)
        if mismatch or errors:
            return False
        stack.extend(c.subdirs.values())
    return True


def test_cookbook_round_trip_is_byte_identical(harbor_cookbook: Path, tmp_path: Path) -> None:
    for src in sorted(p for p in harbor_cookbook.iterdir() if (p / "task.toml").is_file()):
        task = read_task(src)
        out = write_task(task, tmp_path / src.name)
        again = read_task(out)
        assert again == task and again.digest() == task.digest(), src.name
        assert _same_tree(src, out), f"{src.name}: files changed on a round trip"
        # executable bits survive
        for rel, f in task.files.items():
            assert bool(os.stat(out / rel).st_mode & 0o100) == f.executable


def test_multi_step_config_is_understood(harbor_cookbook: Path) -> None:
    task = read_task(harbor_cookbook / "multi-step")
    assert task.config.schema_version == "1.1"
    assert [s.name for s in task.steps] == ["scaffold", "implement", "document"]
    implement = task.steps[1]
    assert implement.min_reward == 0.5 and implement.verifier.env["EXPECTED_NAME"] == "Harbor"
    assert implement.healthcheck.command == "test -x /app/greet.sh"
    assert task.config.environment.env == {"GREETER_PROJECT": "hello-multi-step-full"}
    assert "scaffold" in task.step_instruction(task.steps[0]) or "greet.sh" in task.step_instruction(task.steps[0])
    assert task.instruction is None  # no top-level instruction.md: none is invented on write


def _write_minimal(root: Path) -> Path:
    (root / "environment").mkdir(parents=True)
    (root / "task.toml").write_text(MINIMAL_TOML)
    (root / "instruction.md").write_text("Do the thing.\n")
    (root / "environment" / "Dockerfile").write_text("FROM debian:bookworm\n")
    return root


def test_unknown_keys_and_comments_survive_an_edit(tmp_path: Path) -> None:
    task = read_task(_write_minimal(tmp_path / "t"))
    assert task.config.model_extra["future_top_level"] == "kept"
    edited = task.with_provenance(domain="terminal", seed=3, parameters={"rows": 10, "unset": None})
    text = render_config(edited)
    assert "# a comment that must survive an edit" in text
    assert "new_verifier_knob = 7" in text and "future_top_level" in text and "[environment.future_table]" in text
    assert "unset" not in text  # TOML has no null
    out = write_task(edited, tmp_path / "t2")
    back = read_task(out)
    assert back.provenance.seed == 3 and back.provenance.parameters == {"rows": 10}
    assert back.config.verifier.model_extra["new_verifier_knob"] == 7


def test_unchanged_config_is_written_verbatim(tmp_path: Path) -> None:
    task = read_task(_write_minimal(tmp_path / "t"))
    assert render_config(task) == MINIMAL_TOML


def test_malformed_toml_is_one_line_error(tmp_path: Path) -> None:
    root = _write_minimal(tmp_path / "bad")
    (root / "task.toml").write_text("version = \n[verifier\n")
    with pytest.raises(TaskFormatError) as exc:
        read_task(root)
    assert "malformed TOML" in exc.value.message and "\n" not in exc.value.message


def test_wrong_types_are_one_line_error(tmp_path: Path) -> None:
    root = _write_minimal(tmp_path / "bad")
    (root / "task.toml").write_text("[verifier]\ntimeout_sec = 'soon'\n")
    with pytest.raises(TaskFormatError) as exc:
        read_task(root)
    assert "invalid config" in exc.value.message and "\n" not in exc.value.message


def test_symlinks_are_refused(tmp_path: Path) -> None:
    root = _write_minimal(tmp_path / "t")
    (root / "tests").mkdir()
    (root / "tests" / "test.sh").symlink_to("/etc/passwd")
    with pytest.raises(TaskFormatError, match="symbolic links"):
        read_task(root)


def test_missing_task_toml(tmp_path: Path) -> None:
    with pytest.raises(TaskFormatError, match="no task.toml"):
        read_task(tmp_path)


def test_write_is_atomic_and_refuses_overwrite(tmp_path: Path) -> None:
    task = Task.create("t", TaskConfig(), "hi\n", {"tests/test.sh": "echo 1 > /logs/verifier/reward.txt\n"})
    write_task(task, tmp_path / "t")
    with pytest.raises(TaskFormatError, match="already exists"):
        write_task(task, tmp_path / "t")
    changed = task.with_files({"tests/test.sh": "echo 0 > /logs/verifier/reward.txt\n"})
    write_task(changed, tmp_path / "t", overwrite=True)
    assert read_task(tmp_path / "t").files["tests/test.sh"].text.startswith("echo 0")
    assert [p.name for p in tmp_path.iterdir()] == ["t"]  # no temp or backup directories left


def test_digest_depends_on_content_only(tmp_path: Path) -> None:
    a = Task.create("t", TaskConfig(), "hi\n", {"tests/test.sh": "x"})
    b = Task.create("t", TaskConfig(), "hi\n", {"tests/test.sh": "x"})
    c = a.with_files({"tests/test.sh": "y"})
    assert a.digest() == b.digest() != c.digest()
    assert a.digest().startswith("sha256:")
