"""The static lint gate on real task directories: the cookbook passes, each defect is named, and
every problem of a task is reported at once."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from autoenvscaling.gates.base import GateContext, GateSettings
from autoenvscaling.gates.lint import LintGate, copy_sources, lint_findings, lint_task, summarise
from autoenvscaling.sandbox.rootfs import resolve_base
from autoenvscaling.tasks import Task
from autoenvscaling.tasks.harbor import read_task

HARBOR = Path(__file__).resolve().parents[1] / "fixtures" / "harbor"
UNMAPPED = ("FROM registry.example.com/team/app-base:1.4 has no local base image "
            "(use --backend docker, or map it with AUTOENVSCALING_BASE_IMAGES)")


def _check(task: Task, backend_name: str | None = None):
    ctx = GateContext(backend=None, runner=None, settings=GateSettings(), backend_name=backend_name)
    return asyncio.run(LintGate().check(task, ctx))


def _with_dockerfile(task: Task, dockerfile: str, **files: str) -> Task:
    return task.with_files({"environment/Dockerfile": dockerfile, **{f"environment/{k}": v for k, v in files.items()}})


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
    assert _check(bare).reason == ("2 problems: missing environment/Dockerfile (or [environment] docker_image); "
                                   "missing solution/solve.sh")


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
    # A verifier file the task declares public (the agent gets it too: a repository's own tests) is
    # no leak; the declaration covers only the files it names, and only under tests/.
    suite = good.with_files({"tests/suite/test_lib.py": b"def test_lib():\n    assert 1 + 1 == 2  # a visible test of the library, long enough to count\n",
                             "environment/repo/test_lib.py": b"def test_lib():\n    assert 1 + 1 == 2  # a visible test of the library, long enough to count\n"})
    assert lint_task(suite) == ["environment/repo/test_lib.py is a copy of tests/suite/test_lib.py: the image would contain it"]
    assert lint_task(suite.with_provenance(public_files=["tests/suite/*.py"])) == []
    assert lint_task(copied.with_provenance(public_files=["tests/suite/*.py", "solution/*"])) == \
        ["environment/checks/test.sh is a copy of tests/test.sh: the image would contain it"]
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


def test_copy_sources_join_continuations_read_json_form_and_expand_defined_variables():
    text = ("# comment\nFROM debian\nARG SRC=app.py\nRUN apt-get update && \\\n    apt-get install -y curl\n"
            "COPY [\"a b\", \"c\", \"/dst/\"]\nADD --chown=1:1 x /y\nCOPY $SRC ${LATER} /app/\n"
            "COPY --from=build /out /out\nADD https://example.com/f.tgz /tmp/\nCOPY <<EOF /etc/motd\nhi\nEOF\n")
    assert copy_sources(text) == ["a b", "c", "x", "app.py"]  # ${LATER} is unknown: nothing to name
    assert copy_sources("FROM debian\nRUN <<EOF\nnever closed\n") == []  # unparseable: lint says why


def test_every_problem_is_reported_at_once():
    """No solution, a COPY source that is not there and an unmapped base: one round of fixes."""
    task = read_task(HARBOR / "lint-many-problems")
    result = _check(task)
    assert result.status == "fail"
    problems = ["missing solution/solve.sh", UNMAPPED, "COPY source app.py is not in environment/ (Dockerfile line 3)"]
    assert result.reason == "3 problems: " + "; ".join(problems)
    evidence = result.evidence[0]
    assert evidence.output_tail.splitlines() == problems
    assert evidence.values["problems"] == 3 and evidence.values["warnings"] == 0
    assert [f["text"] for f in evidence.values["findings"]] == problems
    # Putting app.py in the build context and a solution in place leaves only the base image.
    fixed = task.with_files({"environment/app.py": "print('hi')\n", "solution/solve.sh": "python3 /app/app.py > /app/answer.txt\n"})
    assert _check(fixed).reason == UNMAPPED


def test_an_unmapped_base_is_a_problem_on_bwrap_and_a_warning_on_docker():
    task = read_task(HARBOR / "lint-many-problems")
    result = _check(task, backend_name="docker")
    assert result.reason == "2 problems: missing solution/solve.sh; COPY source app.py is not in environment/ (Dockerfile line 3)"
    assert result.evidence[0].command == "static lint (backend docker)"
    warning = ("FROM registry.example.com/team/app-base:1.4 has no local base image: docker needs the image itself "
               "(bwrap would refuse it)")
    assert result.evidence[0].output_tail.splitlines()[-1] == f"warning: {warning}"
    assert {"text": warning, "level": "warning"} in result.evidence[0].values["findings"]
    good = read_task(HARBOR / "lint-many-problems").with_files(
        {"environment/app.py": "print('hi')\n", "solution/solve.sh": "python3 /app/app.py > /app/answer.txt\n"})
    passed = _check(good, backend_name="docker")
    assert (passed.status, passed.reason) == ("pass", warning)
    assert _check(good).status == "fail"  # the default backend is bwrap
    scratch = _with_dockerfile(read_task(HARBOR / "shim-curl-devnull"), "FROM scratch\n")
    assert lint_task(scratch) == ["FROM scratch has no local base image (use --backend docker)"]
    assert lint_task(scratch, backend="docker") == []


def test_a_substituted_base_is_a_warning_that_says_what_stands_in():
    mapping = resolve_base("ubuntu:22.04")
    assert mapping is not None and mapping.note, "the base table notes every substitution"
    task = _with_dockerfile(read_task(HARBOR / "shim-curl-devnull"), "FROM ubuntu:22.04\nWORKDIR /app\n")
    result = _check(task)
    assert result.status == "pass"
    assert result.reason == f"FROM ubuntu:22.04 is built from {mapping.base}: {mapping.note}"
    assert lint_findings(task, backend="docker") == []  # docker runs the image itself


def test_copy_sources_are_checked_against_the_build_context():
    base = read_task(HARBOR / "shim-curl-devnull")

    def problems(dockerfile: str, **files: str) -> list[str]:
        return lint_task(_with_dockerfile(base, dockerfile, **files))

    present = {"app.py": "print(1)\n", "src/lib.py": "X = 1\n", "data/a.csv": "a\n"}
    assert problems("FROM debian:bookworm\nCOPY app.py src/ /app/\nCOPY data/*.csv /data/\n", **present) == []
    assert problems("FROM debian:bookworm\nARG SRC=app.py\nENV DIR=src\nCOPY $SRC ${DIR} /app/\n", **present) == []
    assert problems("FROM debian:bookworm\nARG SRC=nope.py\nCOPY $SRC /app/\n", **present) == [
        "COPY source nope.py is not in environment/ (Dockerfile line 3)"]
    # Build args without a default, stage copies, heredocs and URLs cannot be checked statically.
    assert problems("FROM debian:bookworm AS build\nARG WHAT\nCOPY $WHAT /x\nFROM build\nCOPY --from=build /x /y\n"
                    "COPY <<EOF /etc/motd\nhi\nEOF\nADD https://example.com/a.tgz /tmp/\n") == []
    assert problems("FROM debian:bookworm\nCOPY app.py missing.py /app/\nADD *.tgz /opt/\n", **present) == [
        "COPY source missing.py is not in environment/ (Dockerfile line 2)",
        "ADD source *.tgz is not in environment/ (Dockerfile line 3)"]
    # .dockerignore'd files are not in the context the builder sends.
    assert problems("FROM debian:bookworm\nCOPY app.py /app/\n", **present, **{".dockerignore": "app.py\n"}) == [
        "COPY source app.py is not in environment/ (Dockerfile line 2)"]
    assert problems("FROM debian:bookworm\nRUN <<EOF\nnever closed\n") == [
        "environment/Dockerfile: Dockerfile line 2: heredoc <<EOF is never closed"]
    assert problems("FROM debian:bookworm\nCOPY 'app.py /app/\n", **present) == [
        "environment/Dockerfile line 2: unterminated quote in: 'app.py /app/"]


@pytest.mark.parametrize("n, expected", [
    (1, "p0 is a problem"),
    (3, "3 problems: p0 is a problem; p1 is a problem; p2 is a problem"),
    (40, "40 problems: " + "; ".join(f"p{i} is a problem" for i in range(16)) + "; and 24 more"),
])
def test_the_reason_is_one_line_cut_at_a_whole_problem(n, expected):
    reason = summarise([f"p{i} is a problem" for i in range(n)], "problem")
    assert reason == expected
    assert len(reason) <= 300 + len("; and 24 more")
    assert summarise(["x" * 500, "y"], "problem") == "2 problems: " + "x" * 297 + "...; and 1 more"


def test_compose_environments_are_checked_for_the_backend_that_runs_them():
    base = read_task(HARBOR / "compose-sidecar-http")
    compose = next(rel for rel in base.environment_files if "compose" in rel)
    text = base.files[f"environment/{compose}"].text
    only_compose = base.with_files({f"environment/{compose}": None, "environment/compose.yaml": text})
    assert lint_task(only_compose, backend="docker") == []  # compose.yaml counts as an environment
    assert lint_task(only_compose) == ["environment/compose.yaml: multi-container (compose) environments run "
                                       "on the docker backend (use --backend docker)"]
    privileged = only_compose.with_files({"environment/compose.yaml": text.replace("services:", "services:\n  evil:\n"
                                                                                  "    image: debian:bookworm\n"
                                                                                  "    privileged: true", 1)})
    problems = lint_task(privileged, backend="docker")
    assert len(problems) == 1 and "privileged" in problems[0], problems
