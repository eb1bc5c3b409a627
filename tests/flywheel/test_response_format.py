"""The proposers' response format: FILE blocks parsed into a Task, and rendered back."""

from __future__ import annotations

import pytest

from autoenvscaling.proposers.response import MalformedResponse, parse_files, parse_task, render_task
from autoenvscaling.testing import ToyDomain


def test_render_then_parse_round_trips_a_task() -> None:
    task = ToyDomain().generate("write-file", seed=4, difficulty="hard")
    parsed = parse_task("Here is my task.\n\n" + render_task(task) + "\nThanks!", fallback_name="unused")
    assert parsed.name == task.name
    assert parsed.instruction == task.instruction
    assert parsed.config == task.config
    assert {p: f.data for p, f in parsed.files.items()} == {p: f.data for p, f in task.files.items()}
    assert parsed.files["tests/test.sh"].executable and not parsed.files["tests/expected.txt"].executable


def test_long_fences_hold_nested_code_blocks() -> None:
    text = ("FILE: instruction.md\n````markdown\nRun this:\n```bash\nls\n```\nthen stop.\n````\n"
            "### FILE: `tests/test.sh`\n\n```bash\necho 1 > /logs/verifier/reward.txt\n```\n")
    files = parse_files(text)
    assert files["instruction.md"] == "Run this:\n```bash\nls\n```\nthen stop.\n"
    assert files["tests/test.sh"] == "echo 1 > /logs/verifier/reward.txt\n"


@pytest.mark.parametrize(("text", "message"), [
    ("I would rather not write files.", "no FILE blocks"),
    ("FILE: task.toml\nversion = 1\n", "not followed by a fenced block"),
    ("FILE: task.toml\n```toml\nversion = '1.0'\n", "never closed"),
    ("FILE: ../escape.sh\n```\nx\n```\n", "unsafe file path"),
    ("FILE: /etc/passwd\n```\nx\n```\n", "unsafe file path"),
    ("FILE: a.txt\n```\nx\n```\nFILE: a.txt\n```\ny\n```\n", "appears twice"),
    ("FILE: task.toml\n```toml\nversion = '1.0'\n```\n", "missing required files: instruction.md"),
])
def test_malformed_responses_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(MalformedResponse) as info:
        parse_task(text, fallback_name="x")
    assert message in info.value.message


def test_bad_task_toml_is_malformed_and_missing_name_falls_back() -> None:
    task = ToyDomain().generate("count-lines", seed=1, difficulty="easy")
    rendered = render_task(task)
    broken = rendered.replace('version = "1.0"', 'version = "1.0"\n[[[nonsense', 1)
    with pytest.raises(MalformedResponse) as info:
        parse_task(broken, fallback_name="x")
    assert "malformed TOML" in info.value.message
    unnamed = rendered.replace(f'name = "{task.name}"', "", 1)
    assert parse_task(unnamed, fallback_name="toy-fallback-7").name == "autoenvscaling/toy-fallback-7"
