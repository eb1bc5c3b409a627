"""bench/bench_corpus.py as a user runs it on a new corpus: a real process over defect fixtures on the
real bwrap backend, its printed counts and its JSON, and one-line errors for bad arguments."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_corpus.py"
FIXTURES = ["good", "missing-test-sh", "malformed-toml", "failing-solution", "passes-on-nop", "multi-stage"]


def bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True, timeout=300)


def _count(text: str, section: str, key: str) -> int:
    block = text.split(f"\n{section}\n", 1)[1].split("\n\n", 1)[0]
    match = re.search(rf"^  {re.escape(key)}\s+(\d+)", block, re.M)
    assert match, (section, key, block)
    return int(match.group(1))


def test_counts_per_verdict_gate_and_reason(defects, bwrap_backend):
    paths = [str(defects / name) for name in FIXTURES]
    proc = bench(*paths, "--flaky-runs", "2")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith("6 tasks from ")
    progress = proc.stderr.splitlines()  # one line per finished task, on stderr
    assert len(progress) == 6 and progress[-1].startswith("[6/6] ") and "[1/6] " in progress[0]
    assert [_count(out, "verdicts", v) for v in ("valid", "invalid", "error", "timeout")] == [1, 5, 0, 0]
    for gate in ("lint", "read", "oracle", "null", "build"):
        assert _count(out, "first failing gate", gate) == 1
    assert "  1  lint: missing tests/test.sh\n" in out
    # Numbers are normalised away so that tasks failing the same way group; an example keeps them.
    assert "  1  null: the null attempt scored <n> (must be < <n>): the tests pass without any work\n" in out
    assert "e.g. defects/passes-on-nop: null: the null attempt scored 1 (must be < 0.5)" in out
    assert re.search(r"^total \d+\.\d s \(", out, re.M)

    data = json.loads(bench(*paths[:3], "--json", "--gates", "lint").stdout)
    assert (data["tasks"], data["verdicts"]) == (3, {"valid": 1, "invalid": 2, "error": 0, "timeout": 0})
    assert data["first_failing_gate"] == {"lint": 1, "read": 1}
    assert [r["task"] for r in data["reports"]] == paths[:3]  # the `tasks validate --json` objects, in order
    assert {"reason", "count", "example", "tasks"} <= set(data["reasons"][0])


def test_similar_reasons_group_and_lint_problems_count_one_by_one(tmp_path, defects):
    import shutil

    for i, word in enumerate(("alpha", "beta")):  # two tasks whose lint fails the same two ways
        task = tmp_path / f"broken-{i}"
        shutil.copytree(defects / "good", task)
        (task / "solution" / "solve.sh").unlink()
        (task / "environment" / "Dockerfile").write_text(f"FROM debian:bookworm\nCOPY {word}.py /app/\n")
    data = json.loads(bench(str(tmp_path), "--json", "--gates", "lint").stdout)
    assert [(r["reason"], r["count"]) for r in data["reasons"]] == [
        ("lint: missing solution/solve.sh", 2),
        ("lint: COPY source <file> is not in environment/ (Dockerfile line <n>)", 2)]
    assert data["reasons"][1]["tasks"] == ["defects/good", "defects/good"]


@pytest.mark.parametrize("reason, group", [
    ("oracle: the oracle scored 0: ModuleNotFoundError: No module named 'numpy'",
     "oracle: the oracle scored <n>: ModuleNotFoundError: No module named <name>"),
    ("build: build failed: task fixtures/compose-db: docker-compose environments are not supported by bwrap",
     "build: build failed: task <task>: docker-compose environments are not supported by bwrap"),
    ("oracle: the oracle scored 0: FAILED test_state.py::test_hello - AssertionError: got 'x'",
     "oracle: the oracle scored <n>: FAILED <test> - AssertionError: got <name>"),
    ("lint: FROM nvidia/cuda:12.4.1-devel has no local base image (use --backend docker, ...)",
     "lint: FROM <image> has no local base image (use --backend docker, ...)"),
    ("oracle: the oracle scored 0: cat: /app/out/result.json: No such file or directory",
     "oracle: the oracle scored <n>: cat: <path>: No such file or directory"),
    ("oracle attempt timed out: verifier timed out after 120s", "oracle attempt timed out: verifier timed out after <n>"),
])
def test_normalised_reasons(reason, group):
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_corpus", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.normalise(reason) == group


@pytest.mark.parametrize("args, message", [
    (["--jobs", "0", "x"], "error: --jobs must be at least 1 (got 0)"),
    (["/no/such/corpus"], "error: /no/such/corpus: no such file or directory"),
    (["--gates", "lint,lnt", "tests"], "error: unknown gate(s): lnt"),
    ([], "error: the following arguments are required: PATH"),
])
def test_bad_arguments_give_one_line_and_a_hint(args, message):
    proc = bench(*args)
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert lines[0] == message and lines[1].startswith("hint: ") and len(lines) == 2
