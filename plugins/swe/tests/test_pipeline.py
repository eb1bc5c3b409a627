"""The swe pipeline end to end in real bubblewrap sandboxes: a third-party repository through the
CLI (generate, validate, resume), history-aware and LLM injection, the rerun that must give the same
test lists, SWE-bench export and import, and the lint gate that keeps the answer out of the image."""

from __future__ import annotations

import json

from autoenvscaling.cli.main import cli
from autoenvscaling.llm.scripted_server import ScriptedOpenAIServer, TextReply
from autoenvscaling.suite.store import SuiteStore
from autoenvscaling.tasks import Task, TaskFile
from autoenvscaling.tasks.harbor import read_task, write_task
from click.testing import CliRunner
from swe_helpers import ROMAN_BUGGY, bwrap, generate, git, validate

pytestmark = bwrap


def test_a_third_party_repository_goes_through_generate_validate_and_resume(numtools, tmp_path):
    out = tmp_path / "suite"
    args = ["swe", "generate", "--repo", str(numtools), "-n", "2", "--out", str(out), "--json"]
    first = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert first.exit_code == 0, first.output
    summary = json.loads(first.output)
    assert summary["admitted"] + summary["rejected_by_gates"] <= 2 and summary["admitted"] >= 1, summary
    assert summary["attempts"] >= summary["admitted"] and summary["by_operator"]
    with SuiteStore(out) as store:
        names = sorted(t.name for t in store)
        assert names and all(store.record(n).status == "valid" for n in names)
        task = store.get(names[0])
    swe = task.config.metadata["swe"]
    assert swe["FAIL_TO_PASS"] and swe["PASS_TO_PASS"] and swe["base_commit"] == git(numtools, "rev-parse", "HEAD").strip()
    assert task.provenance.domain == "swe" and task.provenance.parameters["strategy"]["kind"] == "mutation"
    logged = [json.loads(line) for line in (out / "swe-attempts.jsonl").read_text().splitlines()]
    assert len(logged) == summary["attempts"] and {"operators", "admitted", "reason"} <= set(logged[0])
    again = CliRunner().invoke(cli, args, catch_exceptions=False)
    resumed = json.loads(again.output)
    assert resumed["skipped"] == 2 and resumed["admitted"] == 0 and resumed["attempts"] == 0
    with SuiteStore(out) as store:
        assert sorted(t.name for t in store) == names


def test_history_aware_injection_reverts_the_real_fix_commit(numtools, history_task):
    fix_sha = git(numtools, "log", "--format=%H", "--grep", "Fix to_roman").strip()
    from autoenvscaling_swe.repos import open_repository

    repository = open_repository(str(numtools))
    assert [c.sha for c in repository.fix_commits(repository.resolve(None))] == [fix_sha], \
        "the fix is found; the README change and the new feature are not fixes"
    strategy = history_task.provenance.parameters["strategy"]
    assert strategy["kind"] == "history" and strategy["commit"] == fix_sha
    assert ROMAN_BUGGY.encode() in history_task.files["environment/repo/numtools.py"].data
    assert "tests/test_numtools.py::test_roundtrip" in history_task.config.metadata["swe"]["FAIL_TO_PASS"]
    report = validate(history_task)
    assert report.valid, report.reason
    gate = next(g for g in report.gates if g.name == "swe-validation")
    assert gate.status == "pass" and gate.evidence[0].values["fail_to_pass"] == len(history_task.config.metadata["swe"]["FAIL_TO_PASS"])


def test_the_test_lists_are_identical_when_the_validation_is_rerun(numtools):
    first, attempts = generate(numtools, seed=5, level=2)
    second, _ = generate(numtools, seed=5, level=2)
    assert first is not None and second is not None
    assert (first.fail_to_pass, first.pass_to_pass) == (second.fail_to_pass, second.pass_to_pass)
    assert first.patch == second.patch and first.visible == second.visible
    assert len(first.strategy["operators"]) == 2, "level 2: two mutations"
    assert all(a.strategy == "mutation" for a in attempts)


def test_swe_bench_export_and_import_round_trip(numtools, history_task, tmp_path):
    suite = tmp_path / "suite"
    with SuiteStore(suite) as store:
        store.add(history_task)
    rows_file = tmp_path / "instances.jsonl"
    result = CliRunner().invoke(cli, ["suite", "export", str(suite), "--format", "swe-bench", "--out", str(rows_file)],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    row = json.loads(rows_file.read_text().splitlines()[0])
    swe = history_task.config.metadata["swe"]
    assert {"instance_id", "repo", "base_commit", "patch", "test_patch", "FAIL_TO_PASS", "PASS_TO_PASS",
            "problem_statement"} <= set(row)
    assert row["FAIL_TO_PASS"] == swe["FAIL_TO_PASS"] and row["PASS_TO_PASS"] == swe["PASS_TO_PASS"]
    assert "def test_" in row["test_patch"] and "+        while number >= value:" in row["patch"]
    imported_dir = tmp_path / "imported"
    result = CliRunner().invoke(cli, ["suite", "import", str(rows_file), "--format", "swe-bench", "--into", str(imported_dir)],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    with SuiteStore(imported_dir) as store:
        imported = list(store)
    assert len(imported) == 1
    task = imported[0]
    for prefix in ("environment/repo/", "tests/repo/"):
        assert {p: f.data for p, f in task.files.items() if p.startswith(prefix)} == \
               {p: f.data for p, f in history_task.files.items() if p.startswith(prefix)}
    assert task.config.metadata["swe"]["held_back"] == swe["held_back"]
    report = validate(task)
    assert report.valid, report.reason


def test_an_llm_rewrite_of_a_function_from_its_docstring_is_screened_like_any_bug(numtools):
    """The scripted model answers with a clamp that ignores the upper bound: the suite catches it."""
    rewrite = ('```python\ndef clamp(value, low, high):\n    """``value`` limited to [low, high]; ValueError when low > high."""\n'
               '    if low > high:\n        raise ValueError("low > high")\n    if value < low:\n        return low\n'
               '    return value\n```\n')
    from autoenvscaling.llm.openai_backend import OpenAIBackend

    issue = ("# clamp ignores the upper bound\n\n`clamp(30, 1, 10)` gives 30; the documentation says values "
             "are limited to [low, high].\n")

    def answer(request: dict) -> TextReply:
        text = json.dumps(request)
        if "Write a GitHub issue" in text:
            return TextReply(issue)
        return TextReply(rewrite if "Write the complete function `clamp`" in text else "no idea")

    with ScriptedOpenAIServer(answer) as server:
        llm = OpenAIBackend(server.base_url, None, "scripted")
        instance, attempts = generate(numtools, seed=1, strategy="llm", llm=llm)
        prompts = [json.dumps(body) for body in server.chat_bodies]
    assert instance is not None and instance.strategy["kind"] == "llm"
    assert instance.strategy["function"] == "numtools.py:clamp" and instance.strategy["model"] == "scripted"
    assert "tests/test_numtools.py::test_clamp_high" in instance.fail_to_pass
    assert any("Write the complete function `clamp`" in p for p in prompts)
    clamp_prompt = next(p for p in prompts if "Write the complete function `clamp`" in p)
    assert "return high" not in clamp_prompt, "the model sees the signature and docstring, not the body"
    assert all(a.strategy == "llm" for a in attempts)
    assert instance.issue == issue, "the model's issue text is used: it names no test and quotes no changed line"


def test_lint_rejects_tasks_that_leak_the_answer(history_task, tmp_path):
    from autoenvscaling_swe.gate import SweLintGate

    assert SweLintGate.problem(history_task) == ""
    original = history_task.files["tests/repo/tests/test_numtools.py"].data
    leaks = {
        "environment/repo/.git/ORIG_HEAD": b"ref\n",
        "environment/repo/__pycache__/numtools.cpython-311.pyc": b"\0",
        "environment/repo/numtools.py.orig": b"",
    }
    for path, data in leaks.items():
        tampered = _with_file(history_task, path, data)
        assert "must not reach the image" in SweLintGate.problem(tampered), path
    from autoenvscaling_swe.patches import apply_patch
    from autoenvscaling_swe.render import read_patch

    visible = {p[len("environment/repo/"):]: f.data for p, f in history_task.files.items() if p.startswith("environment/repo/")}
    fixed_source = apply_patch(visible, read_patch(history_task))["numtools.py"]
    copy = _with_file(history_task, "environment/repo/docs/backup.py", fixed_source)
    assert "holds the fixed version of numtools.py" in SweLintGate.problem(copy)
    held = history_task.config.metadata["swe"]["held_back"][0]
    file, name = held.split("::")[0], held.split("::")[-1].split("[")[0]
    restored = _with_file(history_task, f"environment/repo/{file}", original)
    assert f"the held-back test {name} is in environment/repo/{file}" in SweLintGate.problem(restored)
    from autoenvscaling_swe.generate import test_functions

    node = test_functions(original.decode())[(name,)]
    body = "\n".join(original.decode().splitlines()[node.lineno - 1:node.end_lineno]) + "\n"
    copied = _with_file(history_task, "environment/repo/tests/test_extra.py", b"import pytest\n\n" + body.encode())
    assert f"the held-back test {name} is copied into environment/repo/tests/test_extra.py" in SweLintGate.problem(copied)
    # the same name elsewhere (another class's method, another file's helper) is not the held-back test
    namesake = _with_file(history_task, "environment/repo/tests/test_other.py",
                          f"class TestOther:\n    def {name}(self):\n        assert True\n".encode())
    assert SweLintGate.problem(namesake) == ""
    written = tmp_path / "task"
    write_task(history_task, written)
    assert SweLintGate.problem(read_task(written)) == ""


def _with_file(task: Task, path: str, data: bytes) -> Task:
    files = {p: f for p, f in task.files.items()}
    files[path] = TaskFile(data=data)
    return Task.create(task.name, task.config, task.instruction, files)
