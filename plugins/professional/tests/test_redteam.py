"""The professional red team, attempted for real in bwrap sandboxes: every cheat of the domain scores
below 0.5 on a freshly generated task while its positive control (the same task with a naive
verifier, or with the protection the cheat attacks switched off) pays it at least 0.5; and the
scoring that keeps plausible wrong answers at most 0.5 and the null attempt at most 0.1, shown next
to what the old scoring (the plain fraction of requirements met) paid the same answers.

Fast: each cheat on one family, the wrong answers of three families. Slow: every cheat on every
family it applies to at three levels; the wrong answer and the null attempt of every family at
every level, with the oracle."""

from __future__ import annotations

import pytest
from autoenvscaling.agents.builtin import NopAgent, OracleAgent
from autoenvscaling.plugins import create_host
from autoenvscaling.testing.redteam import assert_red_team_holds, red_team_cases
from prof_helpers import bwrap, details, fraction_met, on_runner, task_of, trials, with_spec

from autoenvscaling_professional import CHEATS
from autoenvscaling_professional.families import CATALOG
from autoenvscaling_professional.families.base import MAX_LEVEL, MIN_LEVEL
from autoenvscaling_professional.gate import CEILINGS, ControlAgent

FAMILIES = sorted(CATALOG)
#: the family each cheat is tried on in the fast test (the gate's cheats on the families they fit best)
FAST = {"resave-input": "format_sheet", "skeleton": "budget_reconcile", "wrong-format": "memo_docx",
        "typed-values": "summary_formulas", "constant-formulas": "summary_formulas",
        "balanced-books": "budget_reconcile", "text-dump": "invoice_extract", "instruction-docx": "memo_docx",
        "dump-sources": "memo_docx", "wrong-times": "schedule_ics", "example-phone": "contacts_clean",
        "format-everything": "format_sheet", "every-letter": "mail_merge"}


def cheat(name: str):
    return create_host().cheats.get(f"professional.{name}")()


def test_the_domain_registers_its_cheats_each_with_a_control_and_at_most_three_for_the_gate():
    host = create_host()
    names = [n for n in host.cheats.names() if n.startswith("professional.")]
    assert sorted(names) == sorted(f"professional.{n}" for n in CHEATS) and len(names) >= 10
    assert sorted(FAST) == sorted(CHEATS)
    cheats = [host.cheats.get(n)() for n in names]
    assert 1 <= sum(c.gate for c in cheats) <= 3
    for c in cheats:
        task = task_of(FAST[c.name.split(".", 1)[1]])
        assert c.applies(task), c.name
        control = c.control(task)
        assert control is not None and control.files != task.files, c.name
        assert c.summary(), c.name
    # a task of another domain, or one without a hidden spec, is none of their business
    bare = task_of("format_sheet").with_files({"tests/spec.json": None})
    assert not any(c.applies(bare) for c in cheats)
    # every family meets at least two of them, one from the gate
    for family in FAMILIES:
        fit = [c for c in cheats if c.applies(task_of(family))]
        assert len(fit) >= 2 and any(c.gate for c in fit), (family, [c.name for c in fit])


def _table(rows) -> str:
    return "\n".join(f"{name:<34} {family:<17} cheat {r.reward:.3f} ({r.status}) control {c.reward:.3f} ({c.status})"
                     + (f": {r.error or c.error}" if r.error or c.error else "") for name, family, r, c in rows)


def _attack(plan: list[tuple[str, object]]) -> list[tuple[str, str, object, object]]:
    """Each (cheat name, task) attempted on the task and on its positive control with the core's
    ``run_cheat`` (so the session's red-team counts include them): [(name, family, real, control)]."""
    from autoenvscaling.testing.redteam import run_cheat

    calls = []
    for name, task in plan:
        c = cheat(name)
        calls += [lambda runner, t=task, c=c: run_cheat(runner, t, c),
                  lambda runner, t=task, c=c: run_cheat(runner, t, c, control=True)]
    got = on_runner(calls)
    return [(name, task.provenance.family, got[2 * i], got[2 * i + 1]) for i, (name, task) in enumerate(plan)]


@bwrap
def test_every_cheat_scores_below_half_and_fools_its_control():
    """Each cheat once, on a medium task of the family it targets (the oracle scoring 1 on these
    tasks is test_hacks.py's positive control)."""
    rows = _attack([(name, task_of(family)) for name, family in FAST.items()])
    assert all(r.status == "held" for _, _, r, _ in rows), _table(rows)
    assert all(c.status == "beaten" for _, _, _, c in rows), _table(rows)


@bwrap
def test_a_cheat_that_beat_the_old_scoring_is_held_by_the_new():
    """format-everything (the money format sprayed over every number) meets every format_sheet
    rule but the percent and date formats: 0.75 under the plain fraction, a pass by the red team's
    0.5 line; half that now."""
    from autoenvscaling.testing.redteam import run_cheat

    task = task_of("format_sheet")
    c = cheat("format-everything")
    old, new = on_runner([lambda runner: runner.run(with_spec(task, scoring="fraction"), c),
                          lambda runner: run_cheat(runner, task, c)])
    assert old.reward >= 0.5, details(old)
    assert new.status == "held" and new.reward == pytest.approx(old.reward / 2), (old.reward, new)


@bwrap
def test_a_plant_the_verifier_imports_by_chance_earns_nothing():
    """The core's optional-import plant (a defusedxml module in site-packages that rewrites the
    reward at exit; openpyxl imports it when present) on a workbook task: 1 on its control (the
    agent's filesystem as it is), 0 on the task (outputs declared, profcheck under python3 -I)."""
    from autoenvscaling.testing.redteam import run_cheat

    task = task_of("summary_formulas")
    plant = create_host().cheats.get("plant-optional-imports")()
    real, control = on_runner([lambda runner: run_cheat(runner, task, plant),
                               lambda runner: run_cheat(runner, task, plant, control=True)])
    assert control.reward == 1.0, control
    assert real.status == "held" and real.reward == 0.0, real


#: a family whose wrong answer the old scoring paid well over half, and the old figure at this seed
OLD_WRONG = {"format_sheet": 0.875, "invoice_extract": 0.762, "budget_reconcile": 0.556}


@bwrap
def test_plausible_wrong_answers_now_score_at_most_half():
    """The family's wrong control, on the task with the old scoring and as generated: the old reward
    (the fraction met, which the new verifier still prints) above 0.5, the new one at most 0.5."""
    pairs = []
    for family in OLD_WRONG:
        task = task_of(family)
        pairs += [(with_spec(task, scoring="fraction"), ControlAgent("wrong")), (task, ControlAgent("wrong"))]
    results = trials(pairs)
    for i, (family, figure) in enumerate(OLD_WRONG.items()):
        old, new = results[2 * i], results[2 * i + 1]
        assert old.reward == pytest.approx(figure, abs=1e-3), (family, details(old))
        assert fraction_met(new) == pytest.approx(old.reward, abs=1e-6), (family, details(new))
        assert 0 < new.reward <= CEILINGS["wrong"], (family, details(new))


@bwrap
@pytest.mark.slow
def test_every_cheat_on_every_family_at_three_levels():
    host = create_host()
    plan = []
    for family in FAMILIES:
        for level in (MIN_LEVEL, 3, MAX_LEVEL):
            task = _level_task(family, level)
            plan += [(name, task) for name in CHEATS if host.cheats.get(f"professional.{name}")().applies(task)]
    rows = _attack(plan)
    assert all(r.status == "held" for _, _, r, _ in rows), _table(rows)
    assert all(c.status == "beaten" for _, _, _, c in rows), _table(rows)


def _level_task(family: str, level: int, seed: int = 1):
    from autoenvscaling_professional.domain import ProfessionalDomain

    return ProfessionalDomain().generate_level(family, seed=seed, level=level)


@bwrap
@pytest.mark.slow
def test_every_family_at_every_level_keeps_its_wrong_answer_at_most_half_and_nothing_at_most_a_tenth():
    """The controls gate's ceilings, measured directly on every family and level: the oracle 1, the
    wrong answer at most 0.5 and the null attempt at most 0.1. The old figure (the fraction met) of
    the wrong answer was above 0.5 somewhere in every family but summary_formulas, whose wrong
    ranges already broke most formulas."""
    tasks = [_level_task(f, level) for f in FAMILIES for level in range(MIN_LEVEL, MAX_LEVEL + 1)]
    results = trials([(t, agent) for t in tasks for agent in (OracleAgent(), ControlAgent("wrong"), NopAgent())])
    old_max: dict[str, float] = {}
    for i, task in enumerate(tasks):
        oracle, wrong, nothing = results[3 * i: 3 * i + 3]
        where = f"{task.name}: oracle {oracle.reward}, wrong {wrong.reward}, nothing {nothing.reward}"
        assert oracle.reward == 1.0, (where, details(oracle))
        assert wrong.status == "ok" and wrong.reward <= CEILINGS["wrong"], (where, details(wrong))
        assert nothing.status == "ok" and nothing.reward <= CEILINGS["nothing"], (where, details(nothing))
        family = task.provenance.family
        old_max[family] = max(old_max.get(family, 0.0), fraction_met(wrong))
    assert all(v > 0.5 for f, v in old_max.items() if f != "summary_formulas"), old_max


# -- the red-team gate on every family: what the domain's vouching rests on ---------------------------
def test_generated_tasks_are_vouched_for_and_forged_or_edited_ones_are_not():
    """The red-team gate leaves alone a task exactly as its family generates it (every family is in
    redteam_tested_families), and judges one whose seed is forged or whose verifier is edited."""
    from autoenvscaling.testing import assert_vouched_only_as_generated
    from autoenvscaling_professional.domain import ProfessionalDomain

    assert ProfessionalDomain.redteam_tested_families == frozenset(CATALOG)
    assert_vouched_only_as_generated(ProfessionalDomain(), sorted(CATALOG)[-1])


@bwrap
@pytest.mark.parametrize(("family", "level"), red_team_cases(sorted(CATALOG), (MIN_LEVEL, 2, MAX_LEVEL)))
def test_the_red_team_gate_holds_on_every_family_it_vouches_for(bwrap_backend, family, level):
    """At the domain's lowest, medium and highest level (one pair fast, the rest slow)."""
    from autoenvscaling_professional.domain import ProfessionalDomain

    assert_red_team_holds(ProfessionalDomain().generate_level(family, seed=11, level=level), bwrap_backend)
