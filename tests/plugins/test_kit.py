"""The plugin author's kit: fixtures, the toy domain, and the domain contract check."""

from __future__ import annotations

import asyncio
import random

import pytest

from autoenvscaling.domains.base import Family
from autoenvscaling.runtime.trial import TrialRunner
from autoenvscaling.tasks import PROVENANCE_KEY, Task
from autoenvscaling.testing import ToyDomain, acheck_domain_contract, assert_domain_contract, check_domain_contract
from autoenvscaling.testing import toy


def test_aes_host_has_only_the_builtins(aes_host, aes_register):
    # Installed plugins (entry points) stay out, so a test sees exactly what it registers.
    assert [p.name for p in aes_host.plugins()] == ["autoenvscaling.plugins.builtin"]


def test_aes_register_adds_a_plugin_in_process(aes_host, aes_register):
    assert aes_register(toy) == "autoenvscaling.testing.toy"
    assert aes_host.domains.get("toy") is ToyDomain


def test_toy_generation_is_deterministic_and_seeded(toy_domain):
    first = toy_domain.generate("count-lines", seed=7, difficulty="hard")
    assert first == toy_domain.generate("count-lines", seed=7, difficulty="hard")
    assert first.digest() != toy_domain.generate("count-lines", seed=8, difficulty="hard").digest()
    prov = first.provenance
    assert (prov.domain, prov.family, prov.seed, prov.difficulty) == ("toy", "count-lines", 7, "hard")
    # The answer the verifier checks is never in the agent's view (environment/, instruction).
    answer = str(prov.parameters["answer"])
    assert f'= "{answer}" ]' in first.files["tests/test.sh"].text
    assert not any(p.startswith("environment/") and "answer" in p for p in first.files)


def test_the_toy_domain_keeps_the_contract(toy_domain):
    assert check_domain_contract(toy_domain) == []


class BrokenDomain(ToyDomain):
    """Breaks the contract in every way the check knows."""

    name = "broken"

    def families(self) -> list[Family]:
        return [Family(name="Write File", description=""), Family(name="count-lines", description="count")]

    def generate(self, family: str, *, seed: int, difficulty: str = "medium") -> Task:
        if family == "Write File":
            raise ValueError("no such generator")
        task = super().generate(family, seed=0, difficulty=difficulty)  # ignores the seed
        noise = random.random()  # ... and is not deterministic
        metadata = {**task.config.metadata, PROVENANCE_KEY: {"domain": "toy", "family": family, "seed": seed}}
        task = task.with_config(task.config.model_copy(update={"metadata": metadata}))
        # A solution that reads the verifier's files: a lint failure.
        solve = "#!/bin/bash\ngrep -o '[0-9]*' /tests/test.sh | tail -1 > /app/answer.txt\n"
        return task.with_files({"solution/solve.sh": solve, "environment/noise.txt": f"{noise}\n"})

    def vary(self, parent: Task, *, direction: str, seed: int) -> Task:
        return parent


def test_the_contract_reports_every_kind_of_problem():
    problems = check_domain_contract(BrokenDomain(), difficulties=("easy",))
    text = "\n".join(problems)
    expected = [
        "family name 'Write File' is not lowercase",
        "family 'Write File' has no description",
        "family 'Write File': generate(seed=0, difficulty='easy') raised ValueError: no such generator",
        "family 'count-lines': generate() is not deterministic",
        "[metadata.autoenvscaling] domain is 'toy', expected 'broken'",
        "[metadata.autoenvscaling] difficulty is None, expected 'easy'",
        "lint gate: fail: solution/solve.sh reads /tests",
        "vary(direction='simpler'): child's parent is None",
        "vary(direction='harder') returned the parent unchanged",
    ]
    for fragment in expected:
        assert fragment in text, f"{fragment!r} not reported in:\n{text}"
    with pytest.raises(AssertionError, match="domain 'broken' breaks the contract"):
        assert_domain_contract(BrokenDomain(), difficulties=("easy",))


def test_the_contract_notices_seeds_that_change_nothing():
    class SeedBlind(ToyDomain):
        def generate(self, family: str, *, seed: int, difficulty: str = "medium") -> Task:
            return super().generate(family, seed=0, difficulty=difficulty).with_provenance(seed=seed)

    problems = check_domain_contract(SeedBlind(), seeds=(0, 1), difficulties=("easy",))
    assert "family 'write-file': seeds 0 and 1 gave the same task (instruction and files)" in problems


def test_oracle_scores_1_and_nop_0_in_a_real_sandbox(toy_domain, bwrap_backend):
    from autoenvscaling.agents.builtin import NopAgent, OracleAgent

    async def rewards(task: Task) -> tuple[float, float]:
        runner = TrialRunner(bwrap_backend)
        prepared = await bwrap_backend.prepare(task)
        oracle = await runner.run(task, OracleAgent(), prepared=prepared)
        nop = await runner.run(task, NopAgent(), prepared=prepared)
        assert oracle.status == "ok", oracle.error
        return oracle.reward, nop.reward

    for family in ("write-file", "count-lines"):
        task = toy_domain.generate(family, seed=11, difficulty="hard")
        assert asyncio.run(rewards(task)) == (1.0, 0.0), task.name


def test_toy_tasks_pass_gates_1_to_6_through_the_pipeline(toy_domain, bwrap_backend):
    problems = asyncio.run(acheck_domain_contract(toy_domain, backend=bwrap_backend))
    assert problems == []
