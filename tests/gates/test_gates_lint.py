"""The static lint gate on real task directories: the cookbook passes, each defect is named."""

from __future__ import annotations

import asyncio

from autoenvscaling.gates.base import GateContext, GateSettings
from autoenvscaling.gates.lint import LintGate, copy_sources, dockerfile_instructions, lint_task
from autoenvscaling.tasks import Task
from autoenvscaling.tasks.harbor import read_task


def _check(task: Task):
    ctx = GateContext(backend=None, runner=None, settings=GateSettings())
    return asyncio.run(LintGate().check(task, ctx))


def test_cookbook_tasks_pass_lint(harbor_cookbook):
    for name in ("simple-task", "multi-reward", "multi-step", "skills"):
        result = _check(read_task(harbor_cookbook / name))
        assert result.status == "pass", (name, result.reason)
        assert result.evidence[0].values["problems"] == 0


def test_missing_files_are_reported(defects):
    result = _check(read_task(defects / "missing-test-sh"))
    assert result.status == "fail"
    assert result.reason == "missing tests/test.sh"
    good = read_task(defects / "good")
    bare = good.with_files({"solution/solve.sh": None, "environment/Dockerfile": None})
    problems = lint_task(bare)
    assert "missing solution/solve.sh" in problems
    assert "missing environment/Dockerfile (or [environment] docker_image)" in problems
    assert _check(bare).reason.endswith("(and 1 more)")


def test_docker_image_replaces_the_dockerfile(defects):
    good = read_task(defects / "good").with_files({"environment/Dockerfile": None})
    config = good.config.model_copy(update={"environment": good.config.environment.model_copy(update={"docker_image": "python:3.11"})})
    assert lint_task(good.with_config(config)) == []


def test_solution_reading_tests_or_writing_the_reward_is_rejected(defects):
    result = _check(read_task(defects / "solution-reads-tests"))
    assert result.status == "fail"
    assert result.reason == "solution/solve.sh reads /tests (the verifier is not there while the agent works)"
    good = read_task(defects / "good")
    cheat = good.with_files({"solution/solve.sh": "echo 1 > /logs/verifier/reward.txt\n"})
    assert lint_task(cheat) == ["solution/solve.sh touches /logs/verifier (only the verifier writes the reward)"]
    # Paths that merely end in /tests, and comments, are fine.
    fine = good.with_files({"solution/solve.sh": "# the checks in /tests look at answer.txt\nmkdir -p /app/tests\necho ready > /app/answer.txt\n"})
    assert lint_task(fine) == []


def test_verifier_or_solution_copied_into_the_image(defects):
    good = read_task(defects / "good")
    outside = good.with_files({"environment/Dockerfile": "FROM debian:bookworm-slim\nCOPY ../tests /tests\n"})
    assert lint_task(outside) == ["environment/Dockerfile copies '../tests' from outside the build context "
                                  "(tests/ and solution/ must stay out of the image)"]
    # A copy of the verifier inside the build context would be baked into the image.
    test_sh = good.files["tests/test.sh"].data
    copied = good.with_files({"environment/checks/test.sh": test_sh})
    assert lint_task(copied) == ["environment/checks/test.sh is a copy of tests/test.sh: the image would contain it"]
    # The app's own tests inside the context are legitimate, and so are stage copies.
    legit = good.with_files({"environment/Dockerfile": "FROM debian:bookworm-slim AS b\nFROM debian:bookworm-slim\n"
                                                      "COPY --from=b /x /y\nCOPY tests/ /app/tests/\n",
                             "environment/tests/test_app.py": "def test_app():\n    assert 1 + 1 == 2  # the app's own unit test\n"})
    assert lint_task(legit) == []


def test_tests_must_write_a_reward(defects):
    good = read_task(defects / "good")
    silent = good.with_files({"tests/test.sh": "#!/bin/bash\npython3 -m pytest /tests -q\n"})
    assert lint_task(silent) == ["tests never mention /logs/verifier/reward.txt or reward.json: no reward would be written"]


def test_multi_step_tasks_are_checked_per_step(harbor_cookbook):
    task = read_task(harbor_cookbook / "multi-step")
    broken = task.with_files({"steps/implement/solution/solve.sh": None, "steps/document/instruction.md": None})
    problems = lint_task(broken)
    assert "step implement: missing steps/implement/solution/solve.sh" in problems
    assert "step document: missing steps/document/instruction.md (and no top-level instruction.md)" in problems


def test_schema_values_are_checked(defects):
    good = read_task(defects / "good")
    config = good.config.model_copy(update={"verifier": good.config.verifier.model_copy(update={"timeout_sec": 0})})
    assert lint_task(good.with_config(config)) == ["task.toml: verifier.timeout_sec must be positive (is 0)"]


def test_dockerfile_parsing_joins_continuations_and_reads_json_form():
    text = "# comment\nFROM debian\nRUN apt-get update && \\\n    apt-get install -y curl\nCOPY [\"a b\", \"c\", \"/dst/\"]\nADD --chown=1:1 x /y\n"
    assert dockerfile_instructions(text)[1] == ("RUN", "apt-get update &&  apt-get install -y curl")
    assert copy_sources(text) == ["a b", "c", "x"]
