"""Generators: determinism, the Harbor structure of every task, lint-level checks, the verifier's
reward logic, and instruction variety over a 300-task suite."""

from __future__ import annotations

import ast
import asyncio
import itertools
import json
import re
import subprocess
import tomllib

import pytest

from autoenvscaling.tasks import read_task, render_config, write_task
from autoenvscaling_terminal.families import CATALOG
from autoenvscaling_terminal.render import PREAMBLE
from helpers import DIFFICULTIES, domain, suite, suite_specs

FAMILY_LEVELS = [(f, d) for f in CATALOG for d in DIFFICULTIES]


def test_catalog_covers_the_benchmark_areas():
    assert len(CATALOG) >= 10
    for name, info in CATALOG.items():
        assert info.neighbour in CATALOG and info.neighbour != name
        assert domain().kinds(name), name
    assert sum(len(domain().kinds(f)) for f in CATALOG) >= 25


@pytest.mark.parametrize("family,difficulty", FAMILY_LEVELS)
def test_generation_is_deterministic(family, difficulty):
    a = domain().generate(family, seed=11, difficulty=difficulty)
    b = domain().generate(family, seed=11, difficulty=difficulty)
    c = domain().generate(family, seed=12, difficulty=difficulty)
    assert a == b and a.digest() == b.digest()
    assert c.digest() != a.digest()


def test_every_kind_at_every_level_generates():
    for family in CATALOG:
        for kind in domain().kinds(family):
            for level in range(0, 7):
                task = domain().generate_level(family, seed=level, level=level, kind=kind)
                assert task.provenance.parameters["kind"] == kind


def check_structure(task):
    files = task.files
    for required in ("environment/Dockerfile", "tests/test.sh", "tests/test_outputs.py", "tests/reward.py",
                     "tests/pytest.ini", "solution/solve.sh"):
        assert required in files, f"{task.name}: {required} missing"
    words = len(task.instruction.split())
    if task.provenance.family == "basics":  # one short sentence per step, by design
        assert words >= 5 * task.provenance.parameters["steps"], task.instruction
    else:
        assert words >= 25, task.instruction
    dockerfile = task.dockerfile
    assert dockerfile.startswith(PREAMBLE), "every task shares the preamble (one cached layer)"
    assert not re.search(r"^(COPY|ADD)\s+.*(tests|solution)", dockerfile, re.M), "tests/solution copied into the image"
    test_sh = files["tests/test.sh"].text
    # self-contained: the image carries python3 and pytest; no uvx, nothing fetched at verification
    assert "python3 python3-pytest" in dockerfile and "uvx" not in test_sh and "curl" not in test_sh
    assert task.name.startswith("autoenvscaling/terminal-"), "Harbor's org/name form"
    assert "local logs=/logs/verifier" in test_sh and "python3 -I -m pytest" in test_sh
    assert "/tests/test_outputs.py" in test_sh and "reward.py --mode fraction" in test_sh
    solve = files["solution/solve.sh"].text
    assert "/tests" not in solve and "/logs/verifier" not in solve
    assert subprocess.run(["bash", "-n"], input=solve, text=True).returncode == 0, f"{task.name}: solve.sh syntax"
    source = files["tests/test_outputs.py"].text
    tree = ast.parse(source)
    tests = [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]
    assert "test_initial_inputs_intact" in tests and any(not t.startswith("test_initial_") for t in tests)
    assert len(tests) == len(set(tests))
    truth = next(n for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "TRUTH")
    assert isinstance(ast.literal_eval(truth.value), dict)
    compile(source, "test_outputs.py", "exec")
    meta = task.config.metadata
    assert meta["difficulty"] in DIFFICULTIES and meta["category"] == "terminal" and meta["tags"]
    prov = task.provenance
    assert prov.domain == "terminal" and prov.family in CATALOG and prov.seed is not None
    assert prov.difficulty == meta["difficulty"] and prov.parameters["level"] >= 0
    config = tomllib.loads(render_config(task))  # TOML-safe (no nulls) and round-trips
    assert config["metadata"]["autoenvscaling"]["family"] == prov.family


def test_structure_of_a_300_task_suite():
    tasks = suite(300)
    assert len({t.name for t in tasks}) == 300
    for task in tasks:
        check_structure(task)


def test_tasks_round_trip_through_disk(tmp_path):
    for family in CATALOG:
        task = domain().generate(family, seed=5, difficulty="hard")
        back = read_task(write_task(task, tmp_path / task.name))
        assert back == task and back.digest() == task.digest()
        assert back.files["solution/solve.sh"].executable and back.files["tests/test.sh"].executable


def test_lint_gate_admits_every_family(tmp_path):
    from autoenvscaling.gates.base import GateContext, GateSettings
    from autoenvscaling.gates.lint import LintGate

    ctx = GateContext(backend=None, runner=None, settings=GateSettings())
    for family, difficulty in FAMILY_LEVELS:
        task = domain().generate(family, seed=3, difficulty=difficulty)
        result = asyncio.run(LintGate().check(task, ctx))
        assert result.status == "pass", f"{task.name}: {result.reason}"


def test_hidden_answers_stay_out_of_the_instruction():
    for seed in range(10):
        task = domain().generate("git_ops", seed=seed, difficulty="hard", kind="find_commit")
        truth = ast.literal_eval(next(n for n in ast.parse(task.files["tests/test_outputs.py"].text).body
                                      if isinstance(n, ast.Assign)).value)
        assert truth["ticket"] not in task.instruction and truth["author"] not in task.instruction
        logs = domain().generate("log_analysis", seed=seed, difficulty="medium", kind="access_report")
        truth = ast.literal_eval(next(n for n in ast.parse(logs.files["tests/test_outputs.py"].text).body
                                      if isinstance(n, ast.Assign)).value)
        assert not any(ip in logs.instruction for ip in truth["top_ips"])
        assert not any(name.startswith("environment/") and "truth" in name for name in logs.files)


def test_binary_reward_mode():
    task = domain().generate("csv_json", seed=1, difficulty="easy", reward_mode="binary")
    assert "reward.py --mode binary" in task.files["tests/test.sh"].text
    assert task.provenance.parameters["reward_mode"] == "binary"


def shingles(text, n=5):
    words = re.findall(r"[a-z0-9]+", text.lower())
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def test_instructions_are_varied():
    """No two of 300 instructions are near-duplicates (word 5-gram Jaccard < 0.8)."""
    sets = [shingles(t.instruction) for t in suite(300)]
    worst = max((len(a & b) / len(a | b), i, j) for (i, a), (j, b) in itertools.combinations(enumerate(sets), 2))
    assert worst[0] < 0.8, f"near-duplicate instructions: {suite(300)[worst[1]].name} / {suite(300)[worst[2]].name} ({worst[0]:.2f})"
    # several phrasings per family, not one template sentence
    for family in CATALOG:
        openings = {t.instruction.split(".")[0] for t in suite(300) if t.provenance.family == family}
        assert len(openings) >= 5, family


def test_suite_spec_is_balanced():
    specs = suite_specs(300)
    for family in CATALOG:
        per_level = [sum(1 for f, _, d in specs if f == family and d == lvl) for lvl in DIFFICULTIES]
        assert min(per_level) >= 7, (family, per_level)


# -- the verifier's reward logic (tests/reward.py: the verifier library's), on real report files -----

def reward_module():
    from autoenvscaling.verifier import aes_verifier

    return aes_verifier


def test_reward_scoring_rules():
    score = reward_module().score
    checks = {"test_initial_inputs_intact": True, "test_a": True, "test_b": False, "test_c": True, "test_d": True}
    assert score(checks, "fraction")[0] == 0.75
    assert score(checks, "binary")[0] == 0.0
    assert score({**checks, "test_b": True}, "binary")[0] == 1.0
    assert score({**checks, "test_initial_inputs_intact": False}, "fraction") == (0.0, "environment check failed: test_initial_inputs_intact")
    assert score({"test_initial_inputs_intact": True}, "fraction")[0] == 0.0
    assert score({}, "fraction")[0] == 0.0


def test_reward_reads_ctrf_and_junit(tmp_path):
    module = reward_module()
    ctrf = tmp_path / "ctrf.json"
    ctrf.write_text(json.dumps({"results": {"tests": [
        {"name": "test_outputs.py::test_initial_inputs_intact", "status": "passed"},
        {"name": "test_outputs.py::test_a", "status": "passed"},
        {"name": "test_outputs.py::test_b", "status": "failed"}]}}))
    assert module.from_ctrf(ctrf) == {"test_initial_inputs_intact": True, "test_a": True, "test_b": False}
    junit = tmp_path / "junit.xml"
    junit.write_text('<testsuites><testsuite><testcase classname="test_outputs" name="test_a"/>'
                     '<testcase classname="test_outputs" name="test_b"><failure message="x"/></testcase>'
                     '<testcase classname="test_outputs" name="test_c"><skipped/></testcase></testsuite></testsuites>')
    assert module.from_junit(junit) == {"test_a": True, "test_b": False, "test_c": False}


def test_git_histories_have_no_empty_commits():
    """git refuses an empty commit, which would fail the build: the generator raises instead, so
    generating many histories here proves none has one."""
    for kind in domain().kinds("git_ops"):
        for level in range(0, 7):
            for seed in range(50):
                domain().generate_level("git_ops", seed=seed, level=level, kind=kind)


def test_near_duplicate_gate_keeps_a_generated_suite():
    """Gate 8 against the suite built so far admits every task of a mixed generated suite: tasks of
    one family share their verifier boilerplate, which alone must not make them near-copies."""
    from autoenvscaling.gates.base import GateContext, GateSettings
    from autoenvscaling.gates.text import NearDuplicateGate

    tasks = [domain().generate(f, seed=s, difficulty=d) for f, s, d in suite_specs(78)]  # six of each family
    admitted = []
    for task in tasks:
        ctx = GateContext(backend=None, runner=None, settings=GateSettings(), suite_tasks=list(admitted))
        result = asyncio.run(NearDuplicateGate().check(task, ctx))
        assert result.status == "pass", f"{task.name}: {result.reason}"
        admitted.append(task)
    again = asyncio.run(NearDuplicateGate().check(tasks[5].renamed("again"), GateContext(
        backend=None, runner=None, settings=GateSettings(), suite_tasks=admitted)))
    assert again.status == "fail" and tasks[5].name in again.reason
