"""The computer-use gates: lint finds each defect; the state gate proves attempts start from the
seeded state and reset restores it, and rejects a task whose verifier does not read the live state."""

from __future__ import annotations

import json

import pytest
from autoenvscaling.testing.redteam import red_team_cases
from cu_helpers import bwrap, spec_of, task_of, validate

from autoenvscaling_computer_use.families import CATALOG
from autoenvscaling_computer_use.families.base import MAX_LEVEL, MIN_LEVEL


def _with(task, **files):
    """``task`` with files replaced (None: removed); keyword names spell paths with __ for / and _DOT_ for ."""
    return task.with_files({k.replace("__", "/").replace("_DOT_", "."): v for k, v in files.items()})


def _lint(task) -> str:
    from autoenvscaling_computer_use.gate import lint_problem

    return lint_problem(task)


def test_lint_passes_a_generated_task_and_finds_each_defect():
    task = task_of("crm_search_edit", seed=2)
    spec = spec_of(task)
    assert _lint(task) == ""
    assert _lint(_with(task, tests__state_DOT_key=None)) == "tests/state.key is missing"
    assert _lint(_with(task, tests__seed_DOT_sql=task.files["tests/seed.sql"].text + "DELETE FROM contacts;\n")) \
        .startswith("tests/seed.sql is not the image's environment/seed.sql")
    assert _lint(_with(task, tests__state_DOT_key="0" * 64)).startswith("tests/state.key is not the key the image's app reads")
    broken = task.files["environment/seed.sql"].text.replace("INSERT INTO contacts", "INSERT INTO contactz", 1)
    assert _lint(_with(task, environment__seed_DOT_sql=broken, tests__seed_DOT_sql=broken)).startswith(
        "environment/seed.sql does not load: no such table: contactz")
    extra = task.files["environment/seed.sql"].text + "UPDATE contacts SET city = 'Nowhere' WHERE id = 1;\n"
    assert _lint(_with(task, environment__seed_DOT_sql=extra, tests__seed_DOT_sql=extra)) == \
        "the spec's seed_digest is not the digest of seed.sql"
    assert _lint(_with(task, tests__spec_DOT_json=json.dumps({**spec, "expect": []}))) == \
        "the spec has no expectations: the verifier would have nothing to score"
    wrong_table = {**spec, "expect": [{**spec["expect"][0], "table": "people"}]}
    assert _lint(_with(task, tests__spec_DOT_json=json.dumps(wrong_table))) == \
        "expectation 1 names table 'people', which the seed lacks"
    two_kinds = {**spec, "expect": [{**spec["expect"][0], "deleted": {"id": 1}}]}
    assert _lint(_with(task, tests__spec_DOT_json=json.dumps(two_kinds))).startswith("expectation 1 must have exactly one of")
    assert _lint(_with(task, tests__spec_DOT_json=json.dumps({**spec, "app": "mail"}))) == \
        "the spec's app 'mail' is not in the image (environment/aes/aes_apps/mail.py)"
    from autoenvscaling_computer_use.cheats import with_outputs

    assert _lint(with_outputs(task, [])).startswith('task.toml must declare outputs = ["/run/aes-app/state.sock"]')
    agent_view = task.config.verifier.model_copy(update={"view": "agent"})
    assert _lint(task.with_config(task.config.model_copy(update={"verifier": agent_view}))).startswith(
        "task.toml must declare outputs")
    leaked = _with(task, environment__spec_DOT_json=task.files["tests/spec.json"].data)
    assert _lint(leaked) == "environment/spec.json is a copy of a hidden verifier file"


def state_unvouched(task, backend=None):
    """The state gate alone on ``task``, judged as a task no family vouches for."""
    from autoenvscaling.testing import judge_unvouched

    from autoenvscaling_computer_use.gate import ComputerUseStateGate

    return judge_unvouched(ComputerUseStateGate(), task, backend)


@bwrap
def test_the_state_gate_passes_a_generated_task_with_its_reset_time():
    """Generated as its family makes it, the task's probe is skipped with the reason (the test below
    runs it on every family); judged as a proposer's task is, it runs and passes."""
    task = task_of("crm_search_edit", seed=2)
    report = validate(task, skip=("reset", "flaky"))
    gates = {g.name: g for g in report.gates}
    assert report.valid, report.reason
    assert gates["computer-use-state"].reason.startswith("skipped: the computer_use domain's tests run this probe")
    state = state_unvouched(task)
    assert state.status == "pass" and state.reason.startswith("starts seeded; reset restores it in"), state.reason
    digests = state.evidence[-1].values
    assert digests["start"] == digests["after_reset"] == spec_of(task)["seed_digest"]
    assert digests["after_oracle"] != digests["start"] and 0 < digests["reset_ms"] < 1000


@bwrap
@pytest.mark.parametrize(("family", "level"), red_team_cases(sorted(CATALOG), (MIN_LEVEL, 2, MAX_LEVEL)))
def test_the_state_gate_holds_on_every_family_the_domain_vouches_for(bwrap_backend, family, level):
    """What skipping the probe of a generated task rests on: at the domain's lowest, medium and highest
    level of every family the app starts seeded, the oracle changes it, reset restores it and the
    verifier then pays nothing (one pair fast, the rest slow)."""
    from autoenvscaling_computer_use.domain import ComputerUseDomain

    state = state_unvouched(ComputerUseDomain().generate_level(family, seed=11, level=level), bwrap_backend)
    assert state.status == "pass" and state.reason.startswith("starts seeded"), state.reason


@bwrap
def test_the_state_gate_rejects_a_verifier_that_does_not_read_the_live_state():
    """The oracle also leaves a marker file (declared as an output) and the verifier rewards the marker:
    oracle 1, nop 0 (the core gates pass), but after the app's reset the verifier still pays, so the
    gate rejects it. (The red-team gate, skipped here, rejects it first: copy-inputs creates the marker.)"""
    from autoenvscaling_computer_use.cheats import with_outputs

    task = task_of("crm_search_edit", seed=2)
    task = with_outputs(task, [*task.config.verifier.outputs, "/root/.done"])
    marker = _with(task,
                   solution__solve_DOT_sh=task.files["solution/solve.sh"].text + "touch /root/.done\n",
                   tests__test_DOT_sh="#!/bin/sh\nmkdir -p /logs/verifier\n"
                                      "if [ -e /root/.done ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n")
    from autoenvscaling_computer_use.domain import ComputerUseDomain

    assert not ComputerUseDomain().redteam_tested(marker)  # edited: judged, not skipped as its family's own
    report = validate(marker, skip=("reset", "flaky", "redteam"))
    gates = {g.name: g for g in report.gates}
    assert gates["oracle"].status == "pass" and gates["null"].status == "pass"
    assert not report.valid and report.reason.startswith("computer-use-state: after reset the verifier scored 1")


@bwrap
def test_the_state_gate_rejects_an_image_whose_app_does_not_start_from_the_seed():
    task = task_of("crm_search_edit", seed=2)
    dockerfile = task.files["environment/Dockerfile"].text.replace(
        "COPY seed.sql /opt/aes/seed.sql\n",
        "COPY seed.sql /opt/aes/seed.sql\nRUN echo \"UPDATE contacts SET notes = 'x' WHERE id = 1;\" >> /opt/aes/seed.sql\n")
    # the oracle gate rejects it too (the verifier sees the changed note as collateral); skipped here
    # so the state gate's own check is what decides
    report = validate(_with(task, environment__Dockerfile=dockerfile), skip=("oracle", "null", "reset", "flaky"))
    assert not report.valid
    assert report.reason == "computer-use-state: the app did not start from the seeded state (its digest differs from seed.sql's)"
