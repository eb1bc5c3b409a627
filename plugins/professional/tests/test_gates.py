"""The professional gates on real sandboxes: a generated task passes every gate, and the controls
gate rejects tasks whose checks cannot tell a wrong or empty answer from the real one, pay a
plausible wrong answer more than half, or pay the null attempt more than 0.1. The core's red-team
gate is skipped where a test is about the controls gate's own reason."""

from __future__ import annotations

import pytest
from autoenvscaling.tasks import Task, TaskFile
from autoenvscaling.testing.redteam import red_team_cases
from prof_helpers import bwrap, gate, task_of, validate, with_spec

from autoenvscaling_professional.families import CATALOG
from autoenvscaling_professional.families.base import MAX_LEVEL, MIN_LEVEL

pytestmark = bwrap


def replaced(task: Task, **files: str) -> Task:
    out = dict(task.files)
    for path, text in files.items():
        out[path] = TaskFile(data=text.encode())
    return Task.create(task.name, task.config.model_dump(exclude_none=True), task.instruction, out)


def test_a_generated_task_passes_every_gate_with_its_controls_failing():
    """Generated as its family makes it, the task has its null attempt judged against the 0.1 ceiling
    and the three other controls skipped (the test below runs them on every family); judged as a
    proposer's task is, every control runs and fails."""
    task = task_of("format_sheet", seed=7, difficulty="hard")
    report = validate(task)
    assert report.status == "valid", report.reason
    controls = gate(report, "professional-controls")
    assert controls.status == "pass" and "untouched, empty, wrong skipped" in controls.reason, controls.reason
    assert [e.values["reward"] for e in controls.evidence] == [0.0]  # the null gate's attempt
    rewards = controls_unvouched(task)
    assert list(rewards) == ["nothing", "untouched", "empty", "wrong"]
    assert list(rewards.values())[:3] == [0.0, 0.0, 0.0], rewards
    assert 0.0 < rewards["wrong"] <= 0.5, rewards  # some partial credit, never a pass


def controls_unvouched(task: Task, backend=None) -> dict[str, float]:
    """The controls gate alone on ``task``, judged as a task no family vouches for: each control's
    reward, after asserting that the gate passed with every control run."""
    from autoenvscaling.testing import judge_unvouched

    from autoenvscaling_professional.gate import CEILINGS, ProfessionalControlsGate

    result = judge_unvouched(ProfessionalControlsGate(), task, backend)
    assert result.status == "pass", f"{task.name}: {result.reason}"
    assert "skipped" not in result.reason and len(result.evidence) == len(CEILINGS), result.reason
    return dict(zip(CEILINGS, (e.values["reward"] for e in result.evidence)))


@pytest.mark.parametrize(("family", "level"), red_team_cases(sorted(CATALOG), (MIN_LEVEL, 2, MAX_LEVEL)))
def test_the_controls_hold_on_every_family_the_domain_vouches_for(bwrap_backend, family, level):
    """What skipping the controls of a generated task rests on: at the domain's lowest, medium and
    highest level of every family, every control runs and stays under its ceiling (one pair fast,
    the rest slow)."""
    from autoenvscaling_professional.domain import ProfessionalDomain

    controls_unvouched(ProfessionalDomain().generate_level(family, seed=11, level=level), bwrap_backend)


def test_a_wrong_answer_the_checks_accept_is_rejected():
    """Also the positive control of the skip: the edited task is no longer vouched for, so the
    controls run and reject it."""
    from autoenvscaling_professional.domain import ProfessionalDomain

    task = task_of("format_sheet", seed=7, difficulty="hard")
    # the "wrong" control now makes no mistake: the checks give it full credit
    lenient = replaced(task, **{"solution/controls/wrong.sh": "#!/bin/bash\ncd /app && python3 /solution/solve.py\n"})
    assert ProfessionalDomain().redteam_tested(task) and not ProfessionalDomain().redteam_tested(lenient)
    report = validate(lenient, skip=("reset", "flaky", "redteam"))
    assert report.status == "invalid"
    assert gate(report, "professional-controls").reason.startswith("the 'wrong' control scored 1 (must score at most 0.5)")


def test_a_wrong_answer_paid_more_than_half_is_rejected_with_its_reward():
    """Positive control of the 0.5 ceiling: the same task under the old scoring (the plain fraction
    of requirements met) pays its wrong answer (the ratio column in the money format) 0.9, and the
    gate names the control and the figure; under the scoring tasks ship with it earns 0.45."""
    task = task_of("format_sheet", seed=7, difficulty="hard")
    report = validate(with_spec(task, scoring="fraction"), skip=("reset", "flaky", "redteam"))
    assert report.status == "invalid"
    reason = gate(report, "professional-controls").reason
    assert reason.startswith("the 'wrong' control scored 0.9 (must score at most 0.5)"), reason
    assert gate(report, "null").status == "pass"


def test_a_null_attempt_paid_more_than_a_tenth_is_rejected():
    """A checker that credits the workbook for being there (one requirement of three the untouched
    file meets): the null attempt earns 1/6, under the core's null threshold of 0.5, and the
    controls gate rejects it for passing 0.1."""
    task = task_of("format_sheet", seed=7, difficulty="hard")
    generous = replaced(task, **{"tests/check_format_sheet.py":
                                 "import profcheck as pc\n\ndef check(spec, report):\n"
                                 "    wb = pc.open_xlsx(report, spec['file'])\n"
                                 "    ws = pc.find_sheet(wb, spec['sheet'])\n"
                                 "    report.req('the workbook is there', ws is not None)\n"
                                 "    report.req('header row bold', all(c.font.b for c in ws[1] if c.value))\n"
                                 "    report.req('panes frozen', ws.freeze_panes == spec['rules']['freeze'])\n"})
    report = validate(generous, skip=("reset", "flaky", "redteam"))
    assert gate(report, "oracle").status == "pass" and gate(report, "null").status == "pass"
    assert report.status == "invalid"
    controls = gate(report, "professional-controls")
    assert controls.reason.startswith("the 'nothing' control scored 0.166667 (must score at most 0.1)"), controls.reason
    # the null gate's attempt, taken over rather than run again; without the null gate the controls
    # gate runs its own and rejects the task all the same
    assert "(the null gate's attempt)" in controls.evidence[0].command
    alone = validate(generous, skip=("reset", "flaky", "redteam", "null"))
    own = gate(alone, "professional-controls")
    assert own.reason == controls.reason and "(the null gate's attempt)" not in own.evidence[0].command


def test_checks_that_credit_any_change_to_the_file_are_rejected():
    """A checker that rewards "the workbook was saved again": the null attempt scores 0 and the
    oracle 1, so only the empty control shows that the checks look at nothing."""
    task = task_of("format_sheet", seed=7, difficulty="hard")
    naive = replaced(task, **{"tests/check_format_sheet.py":
                              "import profcheck as pc\n\ndef check(spec, report):\n"
                              "    now, before = pc.sha256(pc.path(spec['file'])), pc.sha256(pc.original(spec['file']))\n"
                              "    report.req('workbook updated', now is not None and now != before)\n"})
    report = validate(naive, skip=("reset", "flaky", "redteam"))
    assert report.status == "invalid"
    assert gate(report, "oracle").status == "pass" and gate(report, "null").status == "pass"
    assert gate(report, "professional-controls").reason.startswith("the 'empty' control scored 1 (must score 0)")
