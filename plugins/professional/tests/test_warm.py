"""The checker in a warm interpreter (the profcheck runtime's ``warm``, sandbox/warm.py): the
verdicts it gives are the ones test.sh gives, requirement by requirement, and it is offered only
where it would see what test.sh sees (the plugin's test.sh, file outputs in the workspace)."""

from __future__ import annotations

import pytest
from autoenvscaling.agents.builtin import OracleAgent
from autoenvscaling.sandbox.warm import SWITCH
from autoenvscaling.tasks import TaskFile
from prof_helpers import bwrap, details, task_of, trials

from autoenvscaling_professional.families import CATALOG
from autoenvscaling_professional.gate import ControlAgent
from autoenvscaling_professional.runtime import ProfcheckRuntime

pytestmark = bwrap

FOLDER_OUTPUTS = {"mail_merge"}  # its letters are a folder: left to test.sh
WARM_FAMILIES = [f for f in CATALOG if f not in FOLDER_OUTPUTS]
FAST = {"summary_formulas", "memo_docx"}  # a workbook computed by the formulas engine, a Word document


def _checked(result) -> list[str]:  # noqa: ANN001
    """The requirement lines the checker printed, and its reward line."""
    return [ln for ln in details(result)["output"].splitlines() if ln.startswith(("[", "reward ", "fraction met"))]


@pytest.mark.parametrize("family", [pytest.param(f, marks=() if f in FAST else pytest.mark.slow) for f in WARM_FAMILIES])
def test_warm_and_cold_give_the_same_verdicts(family, monkeypatch):
    task = task_of(family)
    runs = {}
    for switch in ("1", "0"):
        monkeypatch.setenv(SWITCH, switch)
        runs[switch] = trials([(task, OracleAgent()), (task, ControlAgent("wrong"))])
    for switch, warm in (("1", True), ("0", False)):
        oracle, wrong = runs[switch]
        assert [r.steps[-1].verifier.warm for r in (oracle, wrong)] == [warm, warm], details(oracle)
        assert oracle.reward == 1.0, details(oracle)
        assert 0 < wrong.reward <= 0.5, details(wrong)
    for warm_run, cold_run in zip(runs["1"], runs["0"]):
        assert warm_run.reward == cold_run.reward
        assert _checked(warm_run) == _checked(cold_run) and _checked(warm_run), details(warm_run)


def test_warm_is_offered_only_where_test_sh_would_see_the_same():
    memo = task_of("memo_docx")
    own = memo.with_files({"tests/test.sh": TaskFile(data=memo.files["tests/test.sh"].data + b"# its own\n",
                                                      executable=True)})
    verifier = memo.config.verifier
    outside = memo.with_config(memo.config.model_copy(update={"verifier": verifier.model_copy(
        update={"outputs": [*verifier.outputs, "/root/notes.txt"]})}))
    runtime = ProfcheckRuntime()
    tests = {p: f.data for p, f in memo.subtree("tests").items()}
    assert runtime.warm(memo, tests) is not None
    assert runtime.warm(own, {p: f.data for p, f in own.subtree("tests").items()}) is None
    assert runtime.warm(outside, tests) is None
    folder = task_of("mail_merge")
    for result in trials([(own, OracleAgent()), (folder, OracleAgent())]):
        assert result.reward == 1.0 and result.steps[-1].verifier.warm is False, details(result)
