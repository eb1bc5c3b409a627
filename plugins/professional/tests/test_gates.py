"""The professional gates on real sandboxes: a generated task passes every gate, and the controls
gate rejects tasks whose checks cannot tell a wrong or empty answer from the real one, pay a
plausible wrong answer more than half, or pay the null attempt more than 0.1. The core's red-team
gate is skipped where a test is about the controls gate's own reason."""

from __future__ import annotations

from autoenvscaling.tasks import Task, TaskFile
from prof_helpers import bwrap, gate, task_of, validate, with_spec

pytestmark = bwrap


def replaced(task: Task, **files: str) -> Task:
    out = dict(task.files)
    for path, text in files.items():
        out[path] = TaskFile(data=text.encode())
    return Task.create(task.name, task.config.model_dump(exclude_none=True), task.instruction, out)


def test_a_generated_task_passes_every_gate_with_its_controls_failing():
    report = validate(task_of("format_sheet", seed=7, difficulty="hard"))
    assert report.status == "valid", report.reason
    controls = gate(report, "professional-controls")
    assert controls.status == "pass"
    rewards = [e.values["reward"] for e in controls.evidence]
    assert len(rewards) == 4 and rewards[:3] == [0.0, 0.0, 0.0], rewards  # nothing, untouched, empty
    assert 0.0 < rewards[3] <= 0.5, rewards  # wrong: some partial credit, never a pass


def test_a_wrong_answer_the_checks_accept_is_rejected():
    task = task_of("format_sheet", seed=7, difficulty="hard")
    # the "wrong" control now makes no mistake: the checks give it full credit
    lenient = replaced(task, **{"solution/controls/wrong.sh": "#!/bin/bash\ncd /app && python3 /solution/solve.py\n"})
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
