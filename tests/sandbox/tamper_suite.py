"""The verifier-tampering suite, run on every backend that imports it (test_tamper_bwrap.py,
test_tamper_docker.py), which provide the ``tamper_backend`` and ``entrypoint_fixture`` fixtures
(docs/verification.md).

Each attack first earns 1 with ``[verifier] view = "agent"`` (the same task, Harbor's behaviour),
which proves it works, and then 0 under the default "protected" view, with the tampered path
among what the verifier had put back. Two attacks lose in every view (a process outliving its
command, a pre-written reward file); their tests show the attack ran. Controls: the agent's
legitimate system changes (a dpkg-installed package, /etc/hosts, a new user) stay visible.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from autoenvscaling.agents.builtin import NopAgent, OracleAgent
from autoenvscaling.runtime.trial import TrialResult, TrialRunner
from autoenvscaling.tasks import read_task
from autoenvscaling.testing import ScriptedAgent

from .tamper_cases import (CONTROLS, EVERY_VIEW, HIDDEN, attacks, build_deb, control_task,
                           preload_library, tamper_task)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "harbor"


@pytest.fixture(scope="module")
def suite(tamper_backend, tmp_path_factory):
    """The two task variants, prepared once (one image), and the attacks."""
    work = tmp_path_factory.mktemp("tamper")
    deb = build_deb(work)
    protected, agent_view = tamper_task(deb), tamper_task(deb, view="agent", name="tamper-agent-view")
    prepared = asyncio.run(tamper_backend.prepare(protected))
    return {"deb": deb, "protected": protected, "agent": agent_view, "prepared": prepared,
            "attacks": attacks(preload_library(work)), "runner": TrialRunner(tamper_backend)}


def _run(suite, view: str, agent) -> TrialResult:
    return asyncio.run(suite["runner"].run(suite[view], agent, prepared=suite["prepared"]))


def test_the_task_is_sound(suite):
    oracle, nop = _run(suite, "protected", OracleAgent()), _run(suite, "protected", NopAgent())
    assert oracle.reward == 1.0, oracle.steps[-1].verifier.output_tail
    assert nop.status == "ok" and nop.reward == 0.0
    assert oracle.steps[-1].verifier.view == "protected" and oracle.steps[-1].verifier.restored == 0


@pytest.mark.parametrize("attack", sorted(HIDDEN))
def test_attack_works_on_the_agents_view_and_scores_0_under_protection(suite, attack):
    commands = suite["attacks"][attack]
    if attack == "ld.so.preload" and "touch" in commands[0]:
        pytest.skip("no C compiler on this host for the preload library")
    seen = _run(suite, "agent", ScriptedAgent(*commands))
    assert seen.reward == 1.0, (attack, seen.error, seen.steps[-1].verifier.output_tail,
                                seen.steps[-1].trajectory.actions)
    assert seen.steps[-1].verifier.view == "agent"
    result = _run(suite, "protected", ScriptedAgent(*commands))
    verifier = result.steps[-1].verifier
    assert result.status == "ok" and result.reward == 0.0, (attack, result.error, verifier.output_tail)
    assert HIDDEN[attack] in verifier.restored_paths, verifier.restored_paths
    assert "FAILED" in verifier.output_tail  # the real pytest ran the real test and it failed
    assert verifier.view_summary().startswith("verifier view: protected, ")


def test_a_background_process_dies_with_its_command(suite):
    for view in ("agent", "protected"):
        result = _run(suite, view, ScriptedAgent(*suite["attacks"]["background-writer"]))
        beats = int(result.steps[-1].trajectory.actions[0].output.strip() or 0)
        assert beats >= 3  # it ran, writing the reward, while its command lived
        assert result.status == "ok" and result.reward == 0.0, result.steps[-1].verifier


def test_a_pre_written_read_only_reward_never_counts(suite):
    for view in ("agent", "protected"):
        result = _run(suite, view, ScriptedAgent(*suite["attacks"]["read-only-reward"]))
        assert '"reward": 1' in result.steps[-1].trajectory.actions[0].output  # it was there
        assert result.status == "ok" and result.reward == 0.0, result.steps[-1].verifier


def test_every_attack_is_covered():
    assert set(attacks(None)) == set(HIDDEN) | set(EVERY_VIEW)


@pytest.mark.parametrize("control", sorted(CONTROLS))
def test_legitimate_system_changes_stay_visible(suite, control):
    task = control_task(suite["deb"], control)
    oracle = asyncio.run(suite["runner"].run(task, OracleAgent(), prepared=suite["prepared"]))
    nop = asyncio.run(suite["runner"].run(task, NopAgent(), prepared=suite["prepared"]))
    assert oracle.reward == 1.0, (oracle.error, oracle.steps[-1].verifier)
    assert nop.reward == 0.0


def test_agent_paths_let_a_task_see_a_toolchain_change(suite):
    """A task whose point is to replace a program lists it in agent_paths: the change is kept."""
    task = tamper_task(suite["deb"], name="tamper-agent-paths")
    task = task.with_config(task.config.model_copy(update={"verifier": task.config.verifier.model_copy(
        update={"agent_paths": ["/usr/bin/pytest"]})}))
    result = asyncio.run(suite["runner"].run(task, ScriptedAgent(*suite["attacks"]["pytest"]), prepared=suite["prepared"]))
    assert result.reward == 1.0 and result.steps[-1].verifier.restored == 0


def test_entrypoint_services_survive_verification(tamper_backend, entrypoint_fixture):
    """The verifier queries a token the image's ENTRYPOINT service generated at start: the service
    must still be the same one when the verifier runs."""
    task = read_task(FIXTURES / entrypoint_fixture)
    result = asyncio.run(TrialRunner(tamper_backend).run(task, OracleAgent()))
    assert result.status == "ok" and result.reward == 1.0, (result.error, result.steps[-1].verifier.output_tail)
