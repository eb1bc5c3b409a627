"""The red-team gate: weak verifiers (tests/fixtures/weak-verifiers: the file exists, the exit code,
a keyword, a verdict the agent writes) pass the older gates and are rejected by the cheat that beats
them; a sound task passes; the CLI runs the library on any folder and prints the table."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from autoenvscaling.gates.validate import validate_many

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
WEAK = FIXTURES / "weak-verifiers"
EXPECTED = {"weak/file-exists": "copy-inputs", "weak/exit-code-only": "placeholder-outputs",
            "weak/keyword-grep": "copy-inputs", "weak/trusts-agent-file": "instruction-echo"}


def test_weak_verifiers_are_rejected_by_the_cheat_that_beat_them_and_a_sound_task_passes(host, bwrap):
    paths = sorted(p for p in WEAK.iterdir() if (p / "task.toml").is_file()) + [FIXTURES / "defects" / "good"]
    async def run():
        return [r async for r in validate_many(paths, backend=bwrap, host=host)]

    reports = {r.name: r for r in asyncio.run(run())}
    for name, cheat in EXPECTED.items():
        report = reports[name]
        gates = {g.name: g for g in report.gates}
        # The older gates admit it: the oracle scores 1 and doing nothing scores 0.
        assert gates["oracle"].status == "pass" and gates["null"].status == "pass", report.reason
        assert report.status == "invalid" and gates["redteam"].status == "fail", report.reason
        assert report.reason.startswith(f"redteam: cheat {cheat} scored 1 (must be < 0.5)"), report.reason
    good = reports["defects/good"]
    assert good.status == "valid", good.reason
    assert next(g for g in good.gates if g.name == "redteam").status == "pass"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from autoenvscaling.cli.main import main; main()", *args],
                          capture_output=True, text=True, timeout=600)


def test_redteam_command_prints_the_table_and_json():
    out = _cli("tasks", "redteam", str(WEAK / "keyword-grep"), str(WEAK / "file-exists"),
               "--cheat", "instruction-echo", "--cheat", "nothing", "--controls", "--json")
    assert out.returncode == 0, out.stderr[-2000:]
    rows = {r["task"]: r for r in json.loads(out.stdout)}
    keyword = rows["weak/keyword-grep"]
    assert keyword["worst_cheat"] == "instruction-echo" and keyword["worst_reward"] == 1.0
    assert keyword["beaten_by"] == ["instruction-echo"]
    assert {(o["cheat"], o["control"]) for o in keyword["outcomes"]} == {
        ("instruction-echo", False), ("instruction-echo", True), ("nothing", False)}
    assert rows["weak/file-exists"]["beaten_by"] == ["instruction-echo"]  # the file exists: a keyword is not checked
    table = _cli("tasks", "redteam", str(WEAK / "keyword-grep"), "--cheat", "nothing")
    assert table.returncode == 0 and "none beat it" in table.stdout and "1 nothing" in table.stdout, table.stdout


def test_redteam_command_lists_cheats_and_refuses_an_unknown_one():
    listing = _cli("tasks", "redteam", "--list", "--json")
    assert listing.returncode == 0, listing.stderr
    names = {c["name"] for c in json.loads(listing.stdout)}
    assert {"plant-optional-imports", "placeholder-outputs", "copy-inputs", "instruction-echo"} <= names
    bad = _cli("tasks", "redteam", str(WEAK), "--cheat", "no-such-cheat")
    assert bad.returncode != 0 and "unknown cheat 'no-such-cheat'" in bad.stderr and "--list" in bad.stderr


def test_toy_verifiers_hold_every_gate_cheat_so_the_toy_domain_may_vouch_for_its_tasks(host, bwrap):
    """The kit's toy domain leaves the gate alone for tasks it regenerates byte for byte (the kit's
    many test validations would each pay the gate's attempts): this is the red-teaming that allows
    it. Every gate cheat that applies is held on both families at every difficulty; a toy task with
    a forged seed is judged again."""
    from autoenvscaling.redteam.run import cheats_for
    from autoenvscaling.runtime.trial import TrialRunner
    from autoenvscaling.testing.redteam import run_cheat
    from autoenvscaling.testing.toy import ToyDomain

    toy = ToyDomain()
    tasks = [toy.generate(f.name, seed=1, difficulty=d) for f in toy.families() for d in ("easy", "medium", "hard")]
    runner = TrialRunner(bwrap, host=host)

    async def run():
        return [await run_cheat(runner, t, c) for t in tasks for c in cheats_for(t, host, gate_only=True)]

    outcomes = asyncio.run(run())
    assert len(outcomes) >= 2 * len(tasks) and all(o.status == "held" for o in outcomes), outcomes
    assert all(toy.redteam_tested(t) for t in tasks)
    assert not toy.redteam_tested(tasks[0].with_provenance(seed=2))
    assert not toy.redteam_tested(tasks[0].with_files({"tests/test.sh": "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n"}))


def test_a_levelled_domain_vouches_only_for_its_listed_families_as_generated(host, bwrap):
    """``LevelledDomain.redteam_tested`` (the default): a task of a listed family, regenerated byte for
    byte from its seed and level, is vouched for; another family, a forged seed or level, or an edited
    file is not. With ``redteam_vouched=False`` the gate judges even a vouched task, which is how a
    domain's tests prove what its vouching rests on."""
    from autoenvscaling.domains.base import LevelledDomain
    from autoenvscaling.gates.base import GateContext, GateSettings
    from autoenvscaling.plugins import create_host, hookimpl
    from autoenvscaling.gates.redteam import RedTeamGate
    from autoenvscaling.runtime.trial import TrialRunner
    from autoenvscaling.testing.toy import ToyDomain

    class Levelled(LevelledDomain):
        name = "toy"  # the toy's tasks, made at a level: the gate finds this domain under the toy's name
        catalog = {"write-file": None, "count-lines": None}
        redteam_tested_families = frozenset({"write-file"})

        def build_task(self, family, rng, *, seed, level):  # noqa: ANN001, ANN202
            task = ToyDomain().generate(family, seed=seed, difficulty=("easy", "medium", "hard")[level - 1])
            return task.with_provenance(parameters={"level": level})

        def check_request(self, family, level, options):  # noqa: ANN001, ANN202
            self.check_level(level)

    domain = Levelled()
    task = domain.generate_level("write-file", seed=3, level=2)
    assert domain.redteam_tested(task)
    assert not domain.redteam_tested(domain.generate_level("count-lines", seed=3, level=2))  # not listed
    assert not domain.redteam_tested(task.with_provenance(seed=4))
    assert not domain.redteam_tested(task.with_provenance(parameters={"level": 3}))
    assert not domain.redteam_tested(task.with_files({"tests/test.sh": "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n"}))

    class Plugin:
        @hookimpl
        def autoenvscaling_register_domains(self, registrar):  # noqa: ANN001, ANN202
            registrar.add("toy", Levelled)

    levelled_host = create_host(plugins=[Plugin()], entrypoints=False)

    async def gate(settings):  # noqa: ANN001, ANN202
        ctx = GateContext(backend=bwrap, runner=TrialRunner(bwrap, host=levelled_host), settings=settings,
                          host=levelled_host)
        return await RedTeamGate().check(task, ctx)

    vouched, judged = asyncio.run(gate(GateSettings())), asyncio.run(gate(GateSettings(redteam_vouched=False)))
    assert vouched.reason.startswith("skipped: a toy family"), vouched.reason
    assert judged.status == "pass" and judged.reason.endswith("cheat(s) held"), judged.reason
