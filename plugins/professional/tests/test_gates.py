"""The professional gates on real sandboxes: a generated task passes every gate, and the controls
gate rejects tasks whose checks cannot tell a wrong or empty answer from the real one."""

from __future__ import annotations

from autoenvscaling.tasks import Task, TaskFile
from prof_helpers import bwrap, gate, task_of, validate

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
    assert rewards[0] == 0.0 and rewards[1] == 0.0 and 0.0 < rewards[2] < 1.0, rewards  # untouched, empty, wrong


def test_a_wrong_answer_the_checks_accept_is_rejected():
    task = task_of("format_sheet", seed=7, difficulty="hard")
    # the "wrong" control now makes no mistake: the checks give it full credit
    lenient = replaced(task, **{"solution/controls/wrong.sh": "#!/bin/bash\ncd /app && python3 /solution/solve.py\n"})
    report = validate(lenient, skip=("reset", "flaky"))
    assert report.status == "invalid"
    assert gate(report, "professional-controls").reason.startswith("the 'wrong' control scored 1 (must score below 1)")


def test_checks_that_credit_any_change_to_the_file_are_rejected():
    """A checker that rewards "the workbook was saved again": the null attempt scores 0 and the
    oracle 1, so only the empty control shows that the checks look at nothing."""
    task = task_of("format_sheet", seed=7, difficulty="hard")
    naive = replaced(task, **{"tests/check_format_sheet.py":
                              "import profcheck as pc\n\ndef check(spec, report):\n"
                              "    now, before = pc.sha256(pc.path(spec['file'])), pc.sha256(pc.original(spec['file']))\n"
                              "    report.req('workbook updated', now is not None and now != before)\n"})
    report = validate(naive, skip=("reset", "flaky"))
    assert report.status == "invalid"
    assert gate(report, "oracle").status == "pass" and gate(report, "null").status == "pass"
    assert gate(report, "professional-controls").reason.startswith("the 'empty' control scored 1 (must score 0)")
