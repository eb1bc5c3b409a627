"""The core's cheats against a well-guarded task (tests/fixtures/redteam/count-errors, whose verifier
is deliberately naive about Python: no -I, an optional ``simplejson`` import): every cheat scores 0,
every positive control pays the cheat (so each cheat really tries what it claims), the oracle scores 1.
The view's own protections are attacked with the same cheats on bwrap and docker."""

from __future__ import annotations

import asyncio
from pathlib import Path

from autoenvscaling.agents.builtin import OracleAgent
from autoenvscaling.plugins.builtin import GENERIC_CHEATS
from autoenvscaling.runtime.trial import TrialRunner
from autoenvscaling.tasks.harbor import read_task
from autoenvscaling.testing.redteam import check_cheat, run_cheat
TASK = Path(__file__).resolve().parents[1] / "fixtures" / "redteam" / "count-errors"


def _cheat(host, name):
    return host.cheats.get(name)()


def test_every_generic_cheat_is_held_and_fools_its_control(host, bwrap):
    task = read_task(TASK)
    runner = TrialRunner(bwrap, host=host)

    async def run():
        oracle = await runner.run(task, OracleAgent())
        assert oracle.reward == 1.0, oracle.error
        results = {}
        for name in GENERIC_CHEATS:
            cheat = _cheat(host, name)
            assert cheat.applies(task), name
            # linger-writer's control needs agent processes that outlive the agent, which no task
            # can ask for: tests/sandbox/test_tamper_bwrap.py shows it paying when they live.
            results[name] = await check_cheat(runner, task, cheat, require_control=name not in ("nothing", "linger-writer"))
        return results

    results = asyncio.run(run())
    assert set(results) == set(GENERIC_CHEATS)
    assert all(real.reward == 0.0 for real, _ in results.values())


def test_an_optional_import_plant_runs_only_when_the_task_declares_the_module(host, bwrap):
    """The plant (simplejson.py with an atexit hook that writes reward 1) pays under the agent's view
    and when the task declares ``[verifier] imports = ["simplejson"]`` (the protection off for that
    name), and scores 0 under the outputs view and under the protected view (no outputs declared)."""
    task = read_task(TASK)
    verifier = task.config.verifier
    protected = task.with_config(task.config.model_copy(update={"verifier": verifier.model_copy(update={"outputs": [], "environment_mode": None})}))
    declared = protected.with_config(protected.config.model_copy(
        update={"verifier": verifier.model_copy(update={"outputs": [], "environment_mode": None, "imports": ["simplejson"]})}))
    runner = TrialRunner(bwrap, host=host)
    cheat = _cheat(host, "plant-optional-imports")

    async def run():
        return [await run_cheat(runner, t, cheat) for t in (task, protected, declared)]

    outputs_view, protected_view, declared_import = asyncio.run(run())
    assert (outputs_view.reward, protected_view.reward) == (0.0, 0.0)
    assert declared_import.reward == 1.0  # the positive control: the same plant, declared, is imported and pays


def test_the_outputs_view_hides_everything_but_the_outputs(host, bwrap):
    """An agent change outside the declared outputs (a rewritten input) is put back for the verifier;
    the same change is seen under the protected view. The result names what was hidden."""
    task = read_task(TASK).with_files({"tests/check.py": (
        "ok = open('/app/input.txt').read().count('ERROR') == 3 and open('/app/count.txt').read().strip() == '3'\n"
        "open('/logs/verifier/reward.txt', 'w').write('1' if ok else '0')\n")})
    protected = task.with_config(task.config.model_copy(
        update={"verifier": task.config.verifier.model_copy(update={"outputs": [], "environment_mode": None})}))
    from autoenvscaling.testing.agents import ScriptedAgent

    # Solves the task, then breaks the input the verifier also reads.
    agent = ScriptedAgent("grep -c '^ERROR' /app/input.txt > /app/count.txt", "echo clean > /app/input.txt")
    runner = TrialRunner(bwrap, host=host)

    async def run():
        return await runner.run(task, agent), await runner.run(protected, agent)

    hidden, seen = asyncio.run(run())
    assert hidden.reward == 1.0 and seen.reward == 0.0
    step = hidden.steps[0].verifier
    assert step.view == "outputs" and step.restored_paths.get("/app/input.txt") == "not a declared output"


def test_a_package_the_tests_import_stays_visible_with_its_dependencies(host, bwrap):
    """A task whose point is installing a package still verifies: the tests import ``unitmath``, which
    the agent installed with its dependency ``unitbase`` (distributions with METADATA and RECORD, as
    pip writes them), and both stay visible. A ``simplejson`` plant installed alongside a wrong
    package stays hidden: that attempt scores 0, and 1 under the agent's view (the control)."""
    site = "/usr/local/lib/python3.11/dist-packages"
    check = ("from reportlib import write_reward\nimport unitmath\n"
             "write_reward('/logs/verifier/reward.json', 1 if unitmath.answer() == 3 else 0)\n")
    task = read_task(TASK).with_files({"tests/check.py": check})
    task = task.with_config(task.config.model_copy(
        update={"verifier": task.config.verifier.model_copy(update={"outputs": [], "environment_mode": None})}))

    def install(three: int) -> list[str]:
        lines = []
        for name, requires in (("unitbase", ""), ("unitmath", "Requires-Dist: unitbase (>=1.0)\\n")):
            info = f"{site}/{name}-1.0.dist-info"
            lines += [f"mkdir -p {info} {site}/{name}",
                      f"printf 'Metadata-Version: 2.1\\nName: {name}\\nVersion: 1.0\\n{requires}' > {info}/METADATA",
                      f"printf '{name}/__init__.py,,\\n{name}-1.0.dist-info/METADATA,,\\n' > {info}/RECORD"]
        return lines + [f"echo 'THREE = {three}' > {site}/unitbase/__init__.py",
                        f"printf 'from unitbase import THREE\\ndef answer():\\n    return THREE\\n' > "
                        f"{site}/unitmath/__init__.py"]

    from autoenvscaling.redteam.cheat import agent_view_control
    from autoenvscaling.testing.agents import ScriptedAgent

    plant = host.cheats.get("plant-optional-imports")().commands(task, None)
    runner = TrialRunner(bwrap, host=host)

    async def run():
        right = await runner.run(task, ScriptedAgent(*install(3)))
        wrong_planted = await runner.run(task, ScriptedAgent(*install(4), *plant))
        control = await runner.run(agent_view_control(task), ScriptedAgent(*install(4), *plant))
        return right, wrong_planted, control

    right, wrong_planted, control = asyncio.run(run())
    assert right.reward == 1.0, right.steps[0].verifier.output_tail
    assert right.steps[0].verifier.restored == 0, right.steps[0].verifier.restored_paths
    assert wrong_planted.reward == 0.0 and control.reward == 1.0
