"""The terminal domain's red team (autoenvscaling_terminal/cheats.py) against its verifiers.

Every cheat is tried on a freshly generated task of a family it targets: it must score below the
null threshold (0.5) on the real verifier, while its positive control (a copy of the task with the
naive verifier the cheat is meant to fool, or with the protection switched off) pays at least 0.5,
and the reference solution still scores 1. Fast tests do this on scratch copies (scratch.py) for a
few cheap cheats; the slow ones run every cheat, its control and the oracle through the real bwrap
backend (``-m slow``)."""

from __future__ import annotations

import asyncio
import re
import shutil

import pytest

from autoenvscaling.plugins import create_host
from autoenvscaling.redteam.cheat import Cheat
from autoenvscaling.runtime.trial import TrialRunner
from autoenvscaling_terminal import CHEATS
from autoenvscaling_terminal.cheats import TERMINAL_CHEATS, outputs, truth
from autoenvscaling_terminal.families import CATALOG
from helpers import domain
from scratch import cheat_reward

NULL = 0.5
# cheat -> the task it is tried on: (family, kind, level, seed)
CASES: dict[str, tuple[str, str, int, int]] = {
    "terminal.touch-outputs": ("log_analysis", "access_report", 2, 501),
    "terminal.format-skeleton": ("log_analysis", "app_errors", 1, 502),
    "terminal.copy-input": ("file_search", "collect", 1, 503),
    "terminal.symlink-outputs": ("text_regex", "redact", 2, 504),
    "terminal.wrong-field-counts": ("csv_json", "aggregate", 1, 505),
    "terminal.cron-always": ("cron_schedule", "write_crontab", 1, 506),
    "terminal.config-empty-values": ("config_env", "env_validate", 1, 507),
    "terminal.git-empty-commit": ("git_ops", "branch_fix", 4, 508),
    "terminal.db-objects-only": ("sqlite", "modify", 3, 509),
    "terminal.exit-zero-script": ("shell_script", "backup", 1, 510),
    "terminal.sample-hardcode": ("shell_script", "stats", 1, 511),
    "terminal.output-elsewhere": ("archive", "verify", 2, 512),
    "terminal.script-forges-verdict": ("python_script", "inventory", 1, 513),
    "terminal.script-kills-verifier": ("shell_script", "rename", 1, 514),
}
# Cheap on scratch copies (see scratch.py): no user switch needed to hold.
FAST = ["terminal.touch-outputs", "terminal.format-skeleton", "terminal.copy-input", "terminal.cron-always",
        "terminal.config-empty-values", "terminal.git-empty-commit"]
# ... and through the real backend in the fast suite: the two holes that paid 1 before
FAST_BWRAP = {"terminal.sample-hardcode", "terminal.script-forges-verdict"}
# kinds whose whole result is a change of the inputs themselves (no new file is asked for)
IN_PLACE = {("archive", "compress"), ("config_env", "ini_edit"), ("file_search", "cleanup")}


def cheat(name: str) -> Cheat:
    return create_host(strict=True).cheats.get(name)()


def case_task(name: str):
    family, kind, level, seed = CASES[name]
    return domain().generate_level(family, seed=seed, level=level, kind=kind)


# -- the library ------------------------------------------------------------------------------------
def test_at_least_ten_terminal_cheats_are_registered_with_controls():
    host = create_host(strict=True)
    names = [n for n in host.cheats.names() if n.startswith("terminal.")]
    assert sorted(names) == sorted(CHEATS) and len(names) >= 10
    assert sorted(CASES) == sorted(names), "every cheat has a case here"
    gates = []
    for name in names:
        cls = host.cheats.get(name)
        assert issubclass(cls, Cheat) and cls.name == name and cls.domain == "terminal" and cls.description
        assert cls.control is not Cheat.control, f"{name} has no positive control"
        gates += [name] if cls.gate else []
    assert 1 <= len(gates) <= 3, gates
    assert {c.name for c in TERMINAL_CHEATS} == set(names)


def test_each_cheat_applies_to_its_case_and_leaves_other_domains_alone():
    other = domain().generate("log_analysis", seed=1).with_provenance(domain="professional")
    for name, (family, kind, level, seed) in CASES.items():
        task = case_task(name)
        c = cheat(name)
        assert c.applies(task), name
        assert c.commands(task, None), name
        assert c.control(task) is not None, name
        assert not c.applies(other), name


def test_cheats_that_solve_basics_steps_do_not_target_basics():
    """Touching a file or making a directory is a basics task's work, not a hack of it: no cheat
    that would do a basics step applies there (the red-team gate would reject real tasks)."""
    for level in (0, 3):
        for kind in domain().kinds("basics"):
            task = domain().generate_level("basics", seed=level, level=level, kind=kind)
            assert not [c.name for c in TERMINAL_CHEATS if c().applies(task)], kind


# -- what the verifier sees, and how it runs --------------------------------------------------------
def test_every_family_declares_its_outputs_at_every_level():
    """/app declared whole (what the task asks for and every input the checks read lie there; Harbor's
    separate verifier gets it, deletions included), what the task asks for recorded for the red team
    under /app, test.sh isolated, and a content check in every task (a task made only of shape checks
    could never pay)."""
    for family in CATALOG:
        for kind in domain().kinds(family):
            for level in (0, 2, 4, 6):
                task = domain().generate_level(family, seed=level, level=level, kind=kind)
                assert task.config.verifier.outputs == ["/app"] and task.config.verifier.effective_view == "outputs"
                mode = task.config.verifier.environment_mode
                symlinks = any(s.get("op") == "symlink" for s in truth(task).get("steps", []))
                assert mode == ("shared" if symlinks else "separate"), (task.name, mode)
                asks = task.provenance.asks
                assert asks and all(p.startswith("/app/") and p != "/app/" for p in asks), (task.name, asks)
                if family != "basics" and (family, kind) not in IN_PLACE:  # results beside the inputs
                    assert outputs(task), (task.name, asks)
                test_sh = task.files["tests/test.sh"].text
                assert "python3 -I /tests/reward.py" in test_sh and "python3 -I -m pytest" in test_sh
                assert test_sh.rstrip().endswith('main "$@"; exit $?')
                tests = re.findall(r"^def (test_\w+)\(", task.files["tests/test_outputs.py"].text, re.M)
                assert [t for t in tests if not t.startswith(("test_initial_", "test_shape_"))], task.name


def test_the_output_a_task_asks_for_is_recorded():
    """Spot checks against the hidden truth: the report, the answer files, the script, the repo."""
    for family, kind, key in [("log_analysis", "access_report", "report"), ("csv_json", "convert", "out"),
                              ("cron_schedule", "write_crontab", "path"), ("shell_script", "stats", "script"),
                              ("python_script", "durations", "module"), ("config_env", "env_merge", "out")]:
        task = domain().generate_level(family, seed=9, level=2, kind=kind)
        assert f"/app/{truth(task)[key]}" in task.provenance.asks, (family, kind)
    assert "/app/repo" in domain().generate_level("git_ops", seed=9, level=2, kind="branch_fix").provenance.asks


def test_shape_checks_count_only_next_to_content():
    from test_generators import reward_module

    score = reward_module().score
    shape_only = {"test_initial_inputs_intact": True, "test_shape_report_json": True, "test_total_requests": False}
    assert score(shape_only, "fraction") == (0.0, "1/2 checks passed, none of them on content")
    assert score({**shape_only, "test_total_requests": True, "test_top_ips": False}, "fraction")[0] == pytest.approx(2 / 3)
    assert score({"test_initial_inputs_intact": True, "test_shape_x": True}, "binary")[0] == 0.0


# -- cheats against scratch copies (fast) -----------------------------------------------------------
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
@pytest.mark.parametrize("name", FAST)
def test_cheat_fails_and_its_control_pays_on_scratch(name, tmp_path):
    task, c = case_task(name), cheat(name)
    reward, output = cheat_reward(task, c.commands(task, None), tmp_path / "cheat")
    assert reward < NULL, f"{name} earned {reward}:\n{output[-3000:]}"
    control = c.control(task)
    paid, control_output = cheat_reward(control, c.commands(control, None), tmp_path / "control")
    assert paid >= NULL, f"{name}'s control paid {paid}:\n{control_output[-3000:]}"


# -- every cheat through the real bwrap backend (slow) ----------------------------------------------
def trial(backend, task, agent):
    result = asyncio.run(TrialRunner(backend).run(task, agent))
    assert result.status == "ok", result.error
    return result


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("name", [n if n in FAST_BWRAP else pytest.param(n, marks=pytest.mark.slow) for n in sorted(CASES)])
def test_cheat_fails_control_pays_oracle_scores_one(name, bwrap_backend):
    from autoenvscaling.agents.builtin import OracleAgent

    task, c = case_task(name), cheat(name)
    cheated = trial(bwrap_backend, task, c)
    assert cheated.reward < NULL, f"{name} earned {cheated.reward}: {cheated.steps[-1].verifier.output_tail[-3000:]}"
    control = c.control(task)
    paid = trial(bwrap_backend, control, c)
    assert paid.reward >= NULL, f"{name}'s control paid {paid.reward}: {paid.steps[-1].verifier.output_tail[-3000:]}"
    assert trial(bwrap_backend, task, OracleAgent()).reward == 1.0


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_outputs_view_hides_what_was_not_declared(bwrap_backend):
    """The verifier sees only the declared outputs: a report written elsewhere, even by the reference
    solution itself, does not reach it, and a file planted outside the outputs is put back."""
    from autoenvscaling.testing import ScriptedAgent

    task = case_task("terminal.output-elsewhere")
    solve = task.files["solution/solve.sh"].text
    result = trial(bwrap_backend, task, ScriptedAgent(solve, "mkdir -p /srv && echo planted > /srv/planted.txt"))
    assert result.reward == 1.0
    probe = task.with_files({"tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\n"
                                              "if [ -e /srv/planted.txt ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n"})
    seen = trial(bwrap_backend, probe, ScriptedAgent(solve, "mkdir -p /srv && echo planted > /srv/planted.txt"))
    assert seen.reward == 0.0, "a file outside the declared outputs reached the verifier"


def test_basics_tasks_are_vouched_for_only_as_generated(bwrap_backend):
    """A basics copy step is what the generic copy-inputs cheat does blindly: the red-team gate would
    reject it (the positive control: the same task with its provenance changed, so the domain cannot
    regenerate it, is judged and rejected), so the domain vouches for basics tasks it regenerates
    byte for byte, and for nothing else."""
    from autoenvscaling.gates.base import GateContext, GateSettings
    from autoenvscaling.gates.redteam import RedTeamGate

    host = create_host()
    task = domain().generate_level("basics", seed=5, level=0, kind="copy_move")
    assert "Copy `/app/" in task.instruction
    forged = task.with_provenance(seed=6)  # claims another seed: no longer what basics generates
    assert domain().redteam_tested(task) and not domain().redteam_tested(forged)
    assert not domain().redteam_tested(task.with_files({"tests/test.sh": "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n"}))

    async def gate(t):
        ctx = GateContext(backend=bwrap_backend, runner=TrialRunner(bwrap_backend, host=host),
                          settings=GateSettings(), host=host)
        return await RedTeamGate().check(t, ctx)

    vouched, judged = asyncio.run(gate(task)), asyncio.run(gate(forged))
    assert vouched.status == "pass" and vouched.reason.startswith("skipped: a terminal family"), vouched.reason
    assert judged.status == "fail" and judged.reason.startswith("cheat copy-inputs scored 1"), judged.reason


def _kinds() -> list:
    """(family, kind) of every family but basics: the first in the fast set, the others slow."""
    pairs = [(f, k) for f in sorted(CATALOG) if f != "basics" for k in domain().kinds(f)]
    return [pairs[0], *(pytest.param(f, k, marks=pytest.mark.slow) for f, k in pairs[1:])]


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
@pytest.mark.parametrize(("family", "kind"), _kinds())
def test_the_red_team_gate_holds_on_every_kind_the_domain_vouches_for(bwrap_backend, family, kind):
    """What the domain's vouching for its tasks rests on (TerminalDomain.redteam_tested): the red-team
    gate, judging as it judges a proposer's task, holds on every kind of every family but basics (at
    medium, in the fraction reward mode, which pays a cheat at least what the binary mode does)."""
    from autoenvscaling.testing import assert_red_team_holds, assert_vouched_only_as_generated

    assert domain().redteam_tested_families == frozenset(CATALOG)
    assert_vouched_only_as_generated(domain(), family, seed=11, kind=kind)
    assert_red_team_holds(domain().generate_level(family, seed=11, level=2, kind=kind), bwrap_backend)
