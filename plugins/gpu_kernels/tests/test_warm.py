"""The kernel harness in a warm interpreter (the kernel-harness runtime's ``warm``, sandbox/warm.py):
the verdicts it gives are the ones test.sh gives, and it is offered only where it sees what test.sh
would see (the task's own test.sh, the outputs view, the solution handed over)."""

from __future__ import annotations

import shutil

import pytest
from gk_helpers import generated, verifier_output
from test_sandbox import ZEROS, write

from autoenvscaling.agents.builtin import OracleAgent
from autoenvscaling.sandbox.warm import SWITCH
from autoenvscaling.tasks import TaskFile
from autoenvscaling.testing import ScriptedAgent, run_trial

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")


def _verdict(result) -> str:  # noqa: ANN001
    lines = [ln for ln in verifier_output(result).splitlines() if ln.startswith("kernelcheck: reward")]
    return lines[-1] if lines else ""


def test_warm_and_cold_give_the_same_verdicts(monkeypatch):
    task = generated("row_norm", seed=3)
    runs = {}
    for switch in ("1", "0"):
        monkeypatch.setenv(SWITCH, switch)
        runs[switch] = (run_trial(task, OracleAgent()), run_trial(task, ScriptedAgent(write("/app/solution.py", ZEROS))))
    for switch, warm in (("1", True), ("0", False)):
        oracle, zeros = runs[switch]
        assert [r.steps[-1].verifier.warm for r in (oracle, zeros)] == [warm, warm]
        assert oracle.reward == 1.0, verifier_output(oracle)
        assert zeros.reward == 0.0 and "differ beyond rtol" in _verdict(zeros), verifier_output(zeros)
    assert _verdict(runs["1"][0]) == _verdict(runs["0"][0])  # "correct on 5 rounds ... (interpreter) ..."


def test_warm_is_offered_only_where_test_sh_would_see_the_same():
    task = generated("row_norm", seed=3)
    verifier = task.config.verifier
    protected = task.with_config(task.config.model_copy(update={"verifier": verifier.model_copy(
        update={"outputs": [], "agent_paths": ["/app/solution.py"]})}))
    more = task.with_config(task.config.model_copy(update={"verifier": verifier.model_copy(
        update={"outputs": [*verifier.outputs, "/app/notes.txt"]})}))
    own = task.with_files({"tests/test.sh": TaskFile(data=task.files["tests/test.sh"].data + b"# its own\n",
                                                      executable=True)})
    for other in (protected, more, own):
        result = run_trial(other, OracleAgent())
        assert result.reward == 1.0 and result.steps[-1].verifier.warm is False, verifier_output(result)
    solution = task.files["solution/solution.py"].data.decode()
    linked = run_trial(task, ScriptedAgent(write("/app/real.py", solution), "ln -s real.py /app/solution.py"))
    assert linked.steps[-1].verifier.warm is False  # a link is left to test.sh, which sees it as it is
