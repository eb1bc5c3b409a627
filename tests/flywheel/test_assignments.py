"""Assignments from rollouts: pass rate, most common failure, direction, rendered text."""

from __future__ import annotations

from autoenvscaling.agents.base import Action, Trajectory
from autoenvscaling.flywheel.assignments import direction_for, failure_of, from_rollouts, new_task, summarise
from autoenvscaling.runtime.trial import StepResult, TrialResult, VerifierResult
from autoenvscaling.testing import ToyDomain

PYTEST_TAIL = """tests/test_outputs.py::test_file_exists PASSED
tests/test_outputs.py::test_content FAILED
=========================== short test summary info ============================
FAILED tests/test_outputs.py::test_content - AssertionError: assert 'a' == 'b'
FAILED tests/test_outputs.py::test_mode - assert 420 == 493
"""


def _trial(reward: float, *, tail: str = "", actions: list[Action] | None = None, stop: str = "finished",
           status: str = "ok") -> TrialResult:
    trajectory = Trajectory(agent="solver", actions=actions or [], stop_reason=stop)
    verifier = VerifierResult(rewards={"reward": reward} if status == "ok" else {}, output_tail=tail)
    return TrialResult(task="t", agent="solver", status=status, rewards=verifier.rewards,
                       steps=[StepResult(name="main", trajectory=trajectory, verifier=verifier)])


def test_failure_from_pytest_names_then_commands_then_stop_reason() -> None:
    assert failure_of(_trial(1.0)) is None
    assert failure_of(_trial(0.5, tail=PYTEST_TAIL)) == "failing tests: test_content, test_mode"
    failed = Action(command="python3 solve.py --fast\nmore", output="[exit code 1]\nTraceback (most recent call last):\n"
                    "  File \"solve.py\", line 3\nNameError: name 'x' is not defined\n", exit_code=1)
    ok = Action(command="ls", output="[exit code 0]\nsolve.py", exit_code=0)
    assert failure_of(_trial(0.0, actions=[failed, ok])) == \
        "`python3 solve.py --fast` failed: NameError: name 'x' is not defined"
    assert failure_of(_trial(0.0, actions=[ok], stop="max_turns")) == "the solver ran out of turns"
    assert failure_of(_trial(0.0, actions=[ok])) == "the verifier gave 0.00"


def test_summary_counts_the_most_common_failure_and_skips_infrastructure() -> None:
    results = [_trial(0.0, tail=PYTEST_TAIL), _trial(0.0, stop="timeout"), _trial(0.5, tail=PYTEST_TAIL),
               _trial(1.0), _trial(0.0, status="error")]
    s = summarise(results)
    assert s.n == 4 and s.rewards == [0.0, 0.0, 0.5, 1.0]
    assert s.pass_rate == 0.375
    assert s.failure == "failing tests: test_content, test_mode"


def test_direction_follows_the_band() -> None:
    band = (0.25, 0.75)
    assert direction_for(0.0, band) == "simpler"
    assert direction_for(0.24, band) == "simpler"
    assert direction_for(0.25, band) == "different"
    assert direction_for(0.75, band) == "different"
    assert direction_for(0.76, band) == "harder"


def test_assignment_text_and_fields() -> None:
    domain = ToyDomain()
    parent = domain.generate("count-lines", seed=3, difficulty="medium")
    fails = [_trial(0.0, tail=PYTEST_TAIL)] * 4 + [_trial(1.0)]
    a = from_rollouts(parent, fails, domain="toy", seed=11)
    assert (a.direction, a.parent, a.family, a.difficulty, a.seed) == ("simpler", parent.name, "count-lines", "medium", 11)
    assert a.pass_rate == 0.2 and a.failure == "failing tests: test_content, test_mode"
    assert "SIMPLER" in a.text and parent.name in a.text and "test_content" in a.text
    assert "> Count the non-empty lines" in a.text  # the parent's instruction, quoted
    wins = from_rollouts(parent, [_trial(1.0)] * 4, domain="toy", seed=12)
    assert wins.direction == "harder" and "HARDER" in wins.text and "$" not in wins.text
    mid = from_rollouts(parent, [_trial(1.0), _trial(0.0)], domain="toy", seed=13)
    assert mid.direction == "different" and "DIFFERENT" in mid.text


def test_new_task_assignment() -> None:
    a = new_task(ToyDomain(), "write-file", seed=5, difficulty="hard")
    assert a.direction == "new" and a.parent is None and a.family == "write-file"
    assert "write-file" in a.text and "hard" in a.text and "files" in a.text
