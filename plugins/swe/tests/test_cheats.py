"""The swe domain's cheats (cheats.py), each run for real in bwrap sandboxes: below 0.5 on the real
verifier, at least 0.5 on its positive control (the same task with one protection switched off). And
the two holes they were written for, each shown open with the protection off and closed with it on:
results forged by the code under test (canaries and a report pipe the tested process cannot take back,
the tested process as another user), and a second copy of the code under test in the image (pytest
from PyPI instead of Debian's python3-pytest, pip purged, such repositories refused)."""

from __future__ import annotations

import asyncio

import pytest
from autoenvscaling.agents.builtin import OracleAgent
from autoenvscaling.testing.redteam import assert_red_team_holds, red_team_cases
from swe_helpers import bwrap, generate, more_itertools_repo, trial, validate

pytestmark = bwrap

SWE_CHEATS = ("junit-rewrite", "forge-reports", "swallow-failures", "skip-at-import", "exit-at-import",
              "exit-zero-at-exit", "kill-verifier", "skip-conftest", "weaken-tests", "delete-failing-tests",
              "git-history", "copy-installed", "special-case-visible")
# Debian's python3-pytest as the swe image had it before: it pulls in python3-more-itertools, and pip
# brings setuptools, which vendors more_itertools too.
LEGACY_PREAMBLE = (
    "FROM debian:bookworm\n"
    "ENV LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1\n"
    "RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \\\n"
    "    python3 python3-pytest python3-pip git ca-certificates \\\n"
    "    && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb\n"
)


def cheat(name: str):
    from autoenvscaling.plugins import create_host

    return create_host().cheats.get(f"swe.{name}")()


def check(task, name: str):
    """The core's check: held on ``task``, beaten on its positive control; (real, control) outcomes."""
    from autoenvscaling.plugins import create_host
    from autoenvscaling.runtime.trial import TrialRunner
    from autoenvscaling.sandbox.select import make_backend
    from autoenvscaling.testing.redteam import check_cheat

    async def go():
        backend = make_backend("bwrap")
        try:
            return await check_cheat(TrialRunner(backend, host=create_host()), task, cheat(name))
        finally:
            await backend.aclose()

    return asyncio.run(go())


def test_the_swe_cheats_are_registered_each_with_a_control(history_task):
    from autoenvscaling.plugins import create_host

    names = [n for n in create_host().cheats.names() if n.startswith("swe.")]
    assert sorted(names) == sorted(f"swe.{n}" for n in SWE_CHEATS)
    cheats = [cheat(n) for n in SWE_CHEATS]
    assert all(c.applies(history_task) and c.control(history_task) is not None for c in cheats)
    assert sorted(c.name for c in cheats if c.gate) == ["swe.forge-reports", "swe.special-case-visible"]


@pytest.mark.parametrize("name,why", [
    ("forge-reports", "report not trusted: canary"),  # every report made "passed": a must-fail canary passes
    ("junit-rewrite", "not passed"),  # no JUnit file to rewrite: the pipe's lines cannot be taken back
    ("exit-zero-at-exit", "report not trusted: pytest exited with status 0"),
    ("kill-verifier", "swe verifier: "),  # the verifier lived on to write its verdict: nobody cannot kill it
])
def test_results_forged_by_the_code_under_test_score_0(history_task, name, why):
    """Forgery from inside the test process pays under a verifier that reads what that process can
    reach (a JUnit file, the exit status) and runs it as its own user: the positive control. The real
    verifier reads a pipe as the run goes, checks the canaries and the exit status, and runs the
    tested code as nobody: 0, and its output says why."""
    real, control = check(history_task, name)
    assert control.reward == 1.0 and real.reward == 0.0
    result = trial(history_task, cheat(name))
    assert result.reward == 0.0
    assert why in result.steps[0].verifier.output_tail, result.steps[0].verifier.output_tail


@pytest.mark.parametrize("name", ["copy-installed", "special-case-visible"])
def test_the_gate_cheats_are_held_and_fool_their_controls(history_task, name):
    real, control = check(history_task, name)
    assert real.reward == 0.0 and control.reward == 1.0


def test_a_second_copy_of_the_code_under_test_is_gone_from_the_image(tmp_path):
    """A repository named like more-itertools: in the image as it was (Debian's python3-pytest, pip
    kept) the original lies in dist-packages, copying it over the bug earns 1 (the positive control)
    and the swe-validation gate refuses the task with the reason. In the image now, generation
    admits it, the oracle scores 1 and the same cheat scores 0."""
    from autoenvscaling_swe.render import PREAMBLE, PURGE_RUN, render

    instance, attempts = generate(more_itertools_repo(tmp_path), seed=0, strategy="history")
    assert instance is not None, attempts
    task = render(instance)
    text = task.files["environment/Dockerfile"].text
    assert text.startswith(PREAMBLE) and "python3-pytest" not in text
    legacy = task.with_files({"environment/Dockerfile": text.replace(PREAMBLE, LEGACY_PREAMBLE).replace(PURGE_RUN, "")})
    copied = trial(legacy, cheat("copy-installed"))
    assert "copy: /usr/lib/python3/dist-packages/" in copied.steps[0].trajectory.actions[0].output
    assert copied.reward == 1.0
    report = validate(legacy)
    assert not report.valid and "already holds a copy of the code under test: more_itertools" in report.reason
    assert trial(task, OracleAgent()).reward == 1.0
    gone = trial(task, cheat("copy-installed"))
    assert gone.steps[0].trajectory.actions[0].output.strip() == "copy:" and gone.reward == 0.0


@pytest.mark.slow
@pytest.mark.parametrize("name", SWE_CHEATS)
def test_every_swe_cheat_is_held_and_fools_its_control(history_task, name):
    real, control = check(history_task, name)
    assert real.reward < 0.5 <= control.reward


@pytest.mark.slow
def test_every_swe_cheat_is_held_on_a_freshly_generated_seed_task():
    """A mutation task of a seed repository (src/ layout, several modules): the oracle scores 1, every
    cheat below 0.5, every control at least 0.5."""
    from autoenvscaling_swe.domain import SweDomain

    task = SweDomain().generate("datespan", seed=5, difficulty="easy")
    assert trial(task, OracleAgent()).reward == 1.0
    for name in SWE_CHEATS:
        if cheat(name).applies(task):
            real, control = check(task, name)
            assert real.reward < 0.5 <= control.reward, name


# -- the red-team gate on every seed repository: what the domain's vouching rests on ----------------------
def _seed_names() -> list[str]:
    from autoenvscaling_swe.repos import seed_names

    return seed_names()


@pytest.mark.parametrize(("family", "level"), red_team_cases(_seed_names(), (1, 3)))
def test_the_red_team_gate_holds_on_every_seed_repository_it_vouches_for(bwrap_backend, family, level):
    """Each seed repository at levels 1 and 3 (one bug, three), judged as a proposer's task is."""
    from autoenvscaling_swe.domain import SweDomain

    assert_red_team_holds(SweDomain().generate_level(family, seed=11, level=level), bwrap_backend)


def test_the_domain_vouches_only_for_what_this_process_generated(tmp_path):
    """What SweDomain makes by mutation is vouched for, by content (renamed and stamped, or read back
    from disk, it is the same task); an edited file, a changed setting, the same task in another
    process, or a bug an LLM wrote (the same content claimed as an LLM's) is judged."""
    import subprocess
    import sys

    from autoenvscaling.tasks import read_task, write_task
    from autoenvscaling_swe.domain import SweDomain

    domain = SweDomain()
    task = domain.generate_level("datespan", seed=5, level=1)
    assert domain.redteam_tested(task)
    assert domain.redteam_tested(task.renamed(f"{task.name}-r1-s0").with_provenance(round=1, proposer="procedural"))
    folder = write_task(task, tmp_path / "task")
    assert domain.redteam_tested(read_task(folder))
    assert not domain.redteam_tested(task.with_files({"tests/test.sh": "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n"}))
    timeout = task.config.verifier.model_copy(update={"timeout_sec": 1.0})
    assert not domain.redteam_tested(task.with_config(task.config.model_copy(update={"verifier": timeout})))
    assert not domain.redteam_tested(task.with_provenance(parameters={**task.provenance.parameters,
                                                                      "strategy": {"kind": "llm"}}))
    elsewhere = subprocess.run([sys.executable, "-c", "import sys; from autoenvscaling.tasks import read_task; "
                                "from autoenvscaling_swe.domain import SweDomain; "
                                "print(SweDomain().redteam_tested(read_task(sys.argv[1])))", str(folder)],
                               capture_output=True, text=True, check=True)
    assert elsewhere.stdout.strip() == "False", elsewhere.stderr


# -- the swe-validation gate on every seed repository: what its skip of vouched tasks rests on -----------
def _validation_unvouched(task, backend=None):
    from autoenvscaling.testing import judge_unvouched
    from autoenvscaling_swe.gate import SweValidationGate

    return judge_unvouched(SweValidationGate(), task, backend)


@pytest.mark.parametrize(("family", "level"), red_team_cases(_seed_names(), (0, 1, 3)))
def test_the_validation_gate_passes_every_seed_repository_it_vouches_for(bwrap_backend, family, level):
    """Each seed repository's generated bug at levels 0, 1 and 3, judged as a proposer's task is: no
    second copy of the code under test in the image, and the suite run twice with the bug and twice
    with the fix gives exactly the lists the task carries."""
    from autoenvscaling_swe.domain import SweDomain

    task = SweDomain().generate_level(family, seed=11, level=level)
    result = _validation_unvouched(task, bwrap_backend)
    assert result.status == "pass" and "skipped" not in result.reason, result.reason
    values = result.evidence[0].values
    swe = task.config.metadata["swe"]
    assert (values["fail_to_pass"], values["pass_to_pass"]) == (len(swe["FAIL_TO_PASS"]), len(swe["PASS_TO_PASS"]))


def test_the_validation_gate_skips_only_a_task_the_domain_vouches_for(bwrap_backend):
    """Generated here, the task is admitted with the gate skipped and the reason given; with one
    passing test moved into FAIL_TO_PASS (a list the suite does not give) it is no longer vouched
    for, and the gate, judging it, rejects it with the difference."""
    import json

    from autoenvscaling_swe.domain import SweDomain

    task = SweDomain().generate_level("datespan", seed=5, level=1)
    report = validate(task)
    assert report.valid, report.reason
    gate = next(g for g in report.gates if g.name == "swe-validation")
    assert gate.status == "pass" and gate.reason.startswith("skipped: "), gate.reason
    spec = json.loads(task.files["tests/swe.json"].text)
    moved = spec["pass_to_pass"][0]
    spec = {**spec, "fail_to_pass": [*spec["fail_to_pass"], moved],
            "pass_to_pass": [t for t in spec["pass_to_pass"] if t != moved]}
    edited = task.with_files({"tests/swe.json": json.dumps(spec)})
    assert not SweDomain().redteam_tested(edited)
    result = asyncio.run(_judged(edited, bwrap_backend))
    assert result.status == "fail" and result.reason.startswith("FAIL_TO_PASS differs"), result.reason
    assert "0 more" in result.reason and "1 fewer" in result.reason and moved in result.reason


async def _judged(task, backend):
    """The gate on ``task`` with the default settings (vouched tasks skipped)."""
    from autoenvscaling.gates.base import GateContext, GateSettings
    from autoenvscaling.plugins import create_host
    from autoenvscaling.runtime.trial import TrialRunner
    from autoenvscaling_swe.gate import SweValidationGate

    host = create_host()
    ctx = GateContext(backend=backend, runner=TrialRunner(backend, host=host), settings=GateSettings(), host=host)
    return await SweValidationGate().check(task, ctx)
