"""The ``suite`` commands through the real entry point (in-process ``main`` for speed, one real
subprocess for exit status and stderr as a user sees them)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from autoenvscaling.cli.main import main
from autoenvscaling.suite.harbor_format import HarborFormat
from autoenvscaling.suite.rows import JsonlFormat, ParquetFormat


def run(capsys, *argv: str) -> tuple[int, str, str]:  # noqa: ANN001
    try:
        main(list(argv))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_import_list_stats_export(harbor_cookbook: Path, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    suite = tmp_path / "suite"
    code, out, _ = run(capsys, "suite", "import", str(harbor_cookbook), "--into", str(suite))
    assert code == 0 and out.strip() == f"imported 4 tasks into {suite}: 4 new, 0 already present"
    code, out, _ = run(capsys, "suite", "import", str(harbor_cookbook / "simple-task"), "--into", str(suite), "--json")
    assert code == 0 and json.loads(out) == {"suite": str(suite), "added": [], "present": ["simple-task"], "errors": []}

    code, out, _ = run(capsys, "suite", "list", str(suite), "--json")
    rows = json.loads(out)
    assert code == 0 and [r["name"] for r in rows] == ["multi-reward", "harbor/hello-multi-step-full", "simple-task", "skills"]
    assert {"name", "digest", "status", "domain", "family", "difficulty", "tags", "path"} <= set(rows[0])
    assert Path(rows[2]["path"]) == suite / "tasks" / "simple-task"
    code, out, _ = run(capsys, "suite", "list", str(suite), "--tag", "demo", "--difficulty", "easy")
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "STATUS", "DOMAIN", "FAMILY", "DIFFICULTY", "TAGS"]
    assert len(lines) == 2 and lines[1].startswith("harbor/hello-multi-step-full")

    code, out, _ = run(capsys, "suite", "stats", str(suite), "--json")
    stats = json.loads(out)
    assert code == 0 and stats["tasks"] == 4 and stats["by_difficulty"] == {"(none)": 3, "easy": 1}
    assert stats["by_tag"]["demo"] == 1 and stats["instruction_chars"]["max"] > stats["instruction_chars"]["min"] > 0
    code, out, _ = run(capsys, "suite", "stats", str(suite))
    assert code == 0 and out.startswith("suite suite (") and "by difficulty: (none) 3, easy 1" in out

    code, out, _ = run(capsys, "suite", "export", str(suite), "--format", "jsonl", "--out", str(tmp_path / "demo.jsonl"),
                       "--tag", "demo")
    assert code == 0 and out.strip() == f"exported 1 tasks to {tmp_path / 'demo.jsonl'}"
    assert [t.name for t in JsonlFormat().read(tmp_path / "demo.jsonl")] == ["harbor/hello-multi-step-full"]
    # Harbor's dataset.toml names tasks org/name: the cookbook's bare names need --org.
    code, _, err = run(capsys, "suite", "export", str(suite), "--format", "harbor", "--out", str(tmp_path / "ds"))
    assert code == 2 and "hint: pass --org ORG" in err
    code, out, _ = run(capsys, "suite", "export", str(suite), "--format", "harbor", "--out", str(tmp_path / "ds"),
                       "--org", "harbor", "--json")
    assert code == 0 and json.loads(out)["tasks"] == 4
    assert sorted(t.name for t in HarborFormat().read(tmp_path / "ds")) == [
        "harbor/hello-multi-step-full", "harbor/multi-reward", "harbor/simple-task", "harbor/skills"]


def test_import_detects_each_source_format(harbor_cookbook: Path, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    tasks = list(HarborFormat().read(harbor_cookbook))
    JsonlFormat().write(tasks[:2], tmp_path / "a.jsonl")
    ParquetFormat().write(tasks[2:], tmp_path / "b.data")  # no telling suffix: detected by content
    code, out, _ = run(capsys, "suite", "import", str(tmp_path / "a.jsonl"), str(tmp_path / "b.data"),
                       "--into", str(tmp_path / "s"), "--json")
    assert code == 0 and sorted(json.loads(out)["added"]) == sorted(t.name for t in tasks)


def test_import_reports_unreadable_tasks_and_goes_on(harbor_cookbook: Path, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    dataset = HarborFormat(org="harbor").write(HarborFormat().read(harbor_cookbook), tmp_path / "ds")
    (dataset / "skills" / "instruction.md").write_text("tampered\n")
    code, out, err = run(capsys, "suite", "import", str(dataset), "--into", str(tmp_path / "s"))
    assert code == 0 and "3 new" in out and "1 skipped" in out
    assert err.strip() == f"skipped: harbor/skills: digest mismatch: dataset.toml pins " \
                          f"{_pinned(dataset, 'harbor/skills')}, its files give {_digest(dataset / 'skills')}"


def test_errors_are_one_line_with_a_hint(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    code, _, err = run(capsys, "suite", "import", str(tmp_path / "nothing"), "--into", str(tmp_path / "s"))
    assert code == 2 and err.splitlines()[0] == f"error: {tmp_path / 'nothing'}: no such file or directory"
    (tmp_path / "mystery.txt").write_text("hello\n")
    code, _, err = run(capsys, "suite", "import", str(tmp_path / "mystery.txt"), "--into", str(tmp_path / "s"))
    assert code == 2 and "cannot tell which format" in err and err.splitlines()[1].startswith("hint: pass --format")
    code, _, err = run(capsys, "suite", "export", str(tmp_path / "s"), "--format", "nope", "--out", str(tmp_path / "o"))
    assert code == 2 and err.startswith("error: unknown format 'nope'")


def test_missing_suite_is_one_line_and_a_hint_from_the_real_command(tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("autoenvscaling")
    if not exe.exists():
        pytest.skip("the autoenvscaling script is not installed beside this interpreter")
    proc = subprocess.run([str(exe), "suite", "list", str(tmp_path / "missing")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == [
        f"error: no suite at {tmp_path / 'missing'}",
        f"hint: create one with `autoenvscaling suite import SRC --into {tmp_path / 'missing'}`",
    ]


def _pinned(dataset: Path, name: str) -> str:
    import tomllib

    return next(t["digest"] for t in tomllib.loads((dataset / "dataset.toml").read_text())["tasks"] if t["name"] == name)


def _digest(folder: Path) -> str:
    from autoenvscaling.suite.harbor_format import harbor_dir_digest

    return harbor_dir_digest(folder)
