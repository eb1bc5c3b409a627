"""The computer_use cheats (cheats.py), attacked for real in bwrap: on freshly generated tasks each
one scores below 0.5 on the real verifier and at least 0.5 on its positive control (the naive
verifier it exploits), so the zero is the verifier's doing and the cheat does what it claims.

Also here: what the outputs view adds (a naive verifier whose weakness lies outside the declared
outputs is safe again), the journal rule that a redirect is no visit, and, without sandboxes, that
the forged end state the cheats deliver is right (the real scorer gives it 1) for every family and
level. The fast set takes the cheats that need no browser on two tasks; the browser ones, and every
cheat on every family next to the oracle, are slow.
"""

from __future__ import annotations

import pytest

from autoenvscaling.testing.redteam import assert_red_team_holds, red_team_cases
from autoenvscaling_computer_use.families import CATALOG
from autoenvscaling_computer_use.families.base import MAX_LEVEL, MIN_LEVEL
from cu_helpers import bwrap, check_cheat, spec_of, task_of, trial, verifier_output

FAMILIES = ("crm_search_edit", "crm_form_fill", "shop_checkout", "shop_browse", "kanban_bulk", "booking_reserve")
CRM, SHOP = ("crm_search_edit", 6, "easy"), ("shop_checkout", 8, "easy")  # test_hacks' tasks: generated once
EVERY_FAMILY = ("mirror-sql", "mirror-swap", "restart-app", "patch-app-client", "success-url", "lookalike-page")
ONLY = {"api-order": "shop_checkout", "api-order-review": "shop_checkout", "forged-review-token": "shop_checkout",
        "shotgun-edit": "crm_search_edit", "wishlist-everything": "shop_browse"}


def cheat(name: str):
    from autoenvscaling_computer_use import cheats

    return next(c for c in cheats.CHEATS if c.name == f"computer_use.{name}")()


# -- without sandboxes ---------------------------------------------------------------------------------

def test_the_cheats_are_registered_each_with_a_description_and_at_most_three_gate_ones():
    from autoenvscaling.plugins import create_host
    from autoenvscaling_computer_use import CHEATS
    from autoenvscaling_computer_use.cheats import CHEATS as CLASSES

    registered = [n for n in create_host().cheats.names() if n.startswith("computer_use.")]
    assert sorted(registered) == sorted(f"computer_use.{n}" for n in CHEATS) == sorted(c.name for c in CLASSES)
    assert len(registered) >= 10 and set(CHEATS) == {*EVERY_FAMILY, *ONLY}
    assert all(c.domain == "computer_use" and c.description for c in CLASSES)
    assert sorted(c.name for c in CLASSES if c.gate) == ["computer_use.api-order", "computer_use.mirror-sql",
                                                         "computer_use.patch-app-client"]


@pytest.mark.parametrize("family", FAMILIES)
def test_which_cheats_apply_to_a_family_and_each_has_a_control_that_differs(family: str):
    task = task_of(family, 1, "easy")
    applies = {name for name in (*EVERY_FAMILY, *ONLY) if cheat(name).applies(task)}
    assert applies == {*EVERY_FAMILY, *(n for n, f in ONLY.items() if f == family)}
    for name in applies:
        control = cheat(name).control(task)
        assert control is not None and (control.files != task.files or control.config != task.config), name
        assert cheat(name).commands(task, None)


def test_the_cheats_leave_alone_a_task_that_is_not_ours():
    from autoenvscaling.tasks import Task

    foreign = Task.create("x", {"schema_version": "1.1"}, "do it", {"tests/test.sh": "exit 0\n"})
    assert not any(cheat(n).applies(foreign) for n in (*EVERY_FAMILY, *ONLY))


@pytest.mark.parametrize("family", FAMILIES)
def test_the_forged_end_state_scores_1_at_every_level(family: str):
    """What the cheats deliver is the right answer (forge checks it with the real scorer), so a cheat
    that earns 0 earns it for the channel, not for a wrong answer."""
    from autoenvscaling_computer_use.domain import ComputerUseDomain
    from autoenvscaling_computer_use.forge import forge, forged_state, scorer, spec_and_seed

    for level in range(6):
        spec, seed_sql = spec_and_seed(ComputerUseDomain().generate_level(family, seed=0, level=level))
        assert forge(spec, seed_sql)["tables"]
        reward, results, fatal = scorer().score(spec, seed_sql, forged_state(spec, seed_sql))
        assert (reward, fatal) == (1.0, ""), results


@pytest.mark.parametrize("family", FAMILIES)
def test_generated_tasks_declare_the_state_socket_as_their_only_output(family: str):
    cfg = task_of(family, 1, "easy").config.verifier
    assert cfg.outputs == ["/run/aes-app/state.sock"] and cfg.effective_view == "outputs"
    assert "exec python3 -I /tests/verify.py" in task_of(family, 1, "easy").files["tests/test.sh"].text


# -- in bwrap: each cheat held, each control fooled ------------------------------------------------------

FAST = [(CRM, "mirror-sql"), (CRM, "patch-app-client"), (CRM, "restart-app"), (CRM, "shotgun-edit"),
        (SHOP, "mirror-swap"), (SHOP, "api-order"), (SHOP, "api-order-review"), (SHOP, "forged-review-token")]


@bwrap
@pytest.mark.parametrize("where,name", FAST, ids=[n for _, n in FAST])
def test_the_cheat_is_held_and_fools_its_positive_control(where, name: str):
    real, control = check_cheat(task_of(*where), cheat(name))
    assert real.reward == 0.0 and control.reward == 1.0


@bwrap
def test_the_outputs_view_puts_back_what_a_naive_verifier_trusts():
    """The controls of mirror-sql and patch-app-client pay only because the naive verifier sees the
    agent's files: declaring just the state socket (the generated tasks' outputs) puts the mirror
    file and the patched client back to the image's state, and the same naive verifiers pay nothing."""
    from autoenvscaling_computer_use.cheats import naive_control

    task = task_of(*CRM)
    for name, source in (("mirror-sql", "mirror"), ("patch-app-client", "app-client")):
        result = trial(naive_control(task, source), cheat(name))  # outputs: the state socket only
        verifier = result.steps[-1].verifier
        assert result.reward == 0.0 and verifier.view == "outputs", (name, verifier_output(result))
        hidden = set(verifier.restored_paths)
        assert ("/var/lib/aes-app" in hidden) if source == "mirror" else ("/opt/aes/webapp.py" in hidden), hidden


@bwrap
def test_a_redirect_from_the_review_page_is_no_review():
    """api-order-review asks for the review page with an empty cart, which only redirects: a
    journal check that counts any answer below 400 takes that for a review (its control pays 1); the
    generated spec's check wants the page served (200), and alone it holds the cheat at 0."""
    from autoenvscaling_computer_use.cheats import spec_control

    task = task_of(*SHOP)
    review = next(e for e in spec_of(task)["expect"] if "journal" in e)
    assert review["journal"] == {"method": "GET", "path": "/checkout/review", "status": 200}
    journal_only = spec_control(task, lambda e: "SELECT reviewed" not in e.get("query", ""))
    result = trial(journal_only, cheat("api-order-review"))
    assert [a.output.strip() for a in result.trajectory.actions][-1] == "303"
    assert result.reward == 0.0 and "the review page was opened before the order was placed" in verifier_output(result)


# -- slow: every cheat on every family, next to the oracle ------------------------------------------------

@pytest.mark.slow
@bwrap
@pytest.mark.parametrize("family", FAMILIES)
def test_every_cheat_is_held_on_a_fresh_task_of_every_family_and_the_oracle_scores_1(family: str):
    from autoenvscaling.agents.builtin import OracleAgent

    task = task_of(family, 4, "medium")
    names = [n for n in (*EVERY_FAMILY, *ONLY) if cheat(n).applies(task)]
    rewards = {}
    for name in names:
        real, control = check_cheat(task, cheat(name))
        rewards[name] = (real.reward, control.reward)
    assert all(real < 0.5 <= control for real, control in rewards.values()), rewards
    oracle = trial(task, OracleAgent())
    assert oracle.reward == 1.0, verifier_output(oracle)


# -- the red-team gate on every family: what the domain's vouching rests on ---------------------------
def test_generated_tasks_are_vouched_for_and_forged_or_edited_ones_are_not():
    """The red-team gate leaves alone a task exactly as its family generates it (every family is in
    redteam_tested_families), and judges one whose seed is forged or whose verifier is edited."""
    from autoenvscaling.testing import assert_vouched_only_as_generated
    from autoenvscaling_computer_use.domain import ComputerUseDomain

    assert ComputerUseDomain.redteam_tested_families == frozenset(CATALOG)
    assert_vouched_only_as_generated(ComputerUseDomain(), sorted(CATALOG)[-1])


@bwrap
@pytest.mark.parametrize(("family", "level"), red_team_cases(sorted(CATALOG), (MIN_LEVEL, 2, MAX_LEVEL)))
def test_the_red_team_gate_holds_on_every_family_it_vouches_for(bwrap_backend, family, level):
    """At the domain's lowest, medium and highest level (one pair fast, the rest slow)."""
    from autoenvscaling_computer_use.domain import ComputerUseDomain

    assert_red_team_holds(ComputerUseDomain().generate_level(family, seed=11, level=level), bwrap_backend)
