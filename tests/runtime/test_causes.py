"""The cause extractor: the first real error in a verifier's (or a solution's) output, as one line.

The samples are outputs of the real tools, captured in our bwrap sandboxes (bash, dash, env, python3,
pytest 8.4.1 under the offline uvx shim, the curl/apt/uvx shims); tests/gates/test_gates_causes.py
checks the same causes end to end on the fixture tasks.
"""

from __future__ import annotations

import pytest

from autoenvscaling.runtime.trial import CAUSE_CHARS, find_cause

PYTEST_FAILURE = """\
apt-get (offline verifier): skipping 'apt-get update': the verifier has no network
downloading uv (offline verifier: using the local uv shim, no download)
============================= test session starts ==============================
platform linux -- Python 3.11.2, pytest-8.4.1, pluggy-1.6.0
rootdir: /tests
collected 2 items

../tests/test_state.py F.                                                [100%]

=================================== FAILURES ===================================
_____________________________ test_answer_is_ready _____________________________

    def test_answer_is_ready():
        content = Path("/app/answer.txt").read_text().strip()
>       assert content == "ready", f"answer.txt says {content!r}, expected 'ready'"
E       AssertionError: answer.txt says 'steady', expected 'ready'
E       assert 'steady' == 'ready'

/tests/test_state.py:6: AssertionError
=========================== short test summary info ============================
FAILED ../tests/test_state.py::test_answer_is_ready - AssertionError: answer....
========================= 1 failed, 1 passed in 0.01s ==========================
"""

PYTEST_COLLECTION = """\
collected 0 items / 1 error

==================================== ERRORS ====================================
________________________ ERROR collecting test_coll.py _________________________
ImportError while importing test module '/tmp/test_coll.py'.
Traceback:
test_coll.py:1: in <module>
    import numpy
E   ModuleNotFoundError: No module named 'numpy'
=========================== short test summary info ============================
ERROR test_coll.py
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
"""

CHAINED = """\
Traceback (most recent call last):
  File "/tmp/chained.py", line 3, in <module>
    json.loads("{")
json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/tmp/chained.py", line 5, in <module>
    raise RuntimeError("config is broken")
RuntimeError: config is broken
"""


@pytest.mark.parametrize("output, cause", [
    ("/tests/test.sh: line 3: python: command not found\n", "python: command not found"),
    ("sh: 1: python: not found\n", "python: not found"),
    ("/usr/bin/env: 'python': No such file or directory\n", "python: No such file or directory"),
    ("Traceback (most recent call last):\n  File \"/tests/check_mean.py\", line 3, in <module>\n    import numpy as np\n"
     "ModuleNotFoundError: No module named 'numpy'\n", "ModuleNotFoundError: No module named 'numpy'"),
    (CHAINED, "RuntimeError: config is broken"),
    (PYTEST_FAILURE, "FAILED test_state.py::test_answer_is_ready - AssertionError: answer.txt says 'steady', expected 'ready'"),
    (PYTEST_COLLECTION, "ERROR test_coll.py - ModuleNotFoundError: No module named 'numpy'"),
    ("test_x.py F\nE       assert 1 == 2\n", "E   assert 1 == 2"),
    ("/tests/test.sh: line 4: /app/run.sh: Permission denied\n", "/app/run.sh: Permission denied"),
    ("curl: (6) Could not resolve host: example.com (network disabled in the offline verifier; only uv's installer "
     "URL is served locally)\n", "curl: (6) Could not resolve host: example.com (network disabled in the offline "
     "verifier; only uv's installer URL is served locally)"),
    ("error: uvx (offline verifier): pytest==8.4.2 is not provisioned in the offline verifier (provisioned: "
     "pytest==8.4.1)\nhint: provision it on the host\n",
     "error: uvx (offline verifier): pytest==8.4.2 is not provisioned in the offline verifier (provisioned: pytest==8.4.1)"),
    ("E: apt-get (offline verifier): cannot install packages without network: git jq\nhint: install them\n",
     "E: apt-get (offline verifier): cannot install packages without network: git jq"),
    ("/tests/test.sh: line 5:  4242 Killed                  python3 /tests/big.py\n",
     "4242 Killed                  python3 /tests/big.py"),
    ("\x1b[31mFAILED\x1b[0m test_a.py::test_b - assert 0\n", "FAILED test_a.py::test_b - assert 0"),
])
def test_the_cause_of_real_outputs(output, cause):
    assert find_cause(output) == cause


def test_a_specific_error_beats_earlier_noise():
    noise = "rm: cannot remove '/tmp/stale': No such file or directory\n"
    assert find_cause(noise + PYTEST_FAILURE).startswith("FAILED test_state.py::test_answer_is_ready")
    assert find_cause(noise + "/tests/test.sh: line 9: jq: command not found\n") == "jq: command not found"
    assert find_cause(noise) == "rm: cannot remove '/tmp/stale': No such file or directory"  # nothing better


def test_first_or_last_among_equals():
    output = "a.sh: line 1: pip: command not found\na.sh: line 2: cargo: command not found\n"
    assert find_cause(output) == "pip: command not found"
    assert find_cause(output, last=True) == "cargo: command not found"  # a script's exit status is its last command's


def test_nothing_to_report_and_long_lines():
    assert find_cause("") is None
    assert find_cause("all good\n3 passed in 0.01s\nreward written\n") is None
    long = find_cause("error: " + "x" * 1000)
    assert long is not None and len(long) == CAUSE_CHARS and long.endswith("...")


def test_trial_cause_names_the_failing_step_and_prefers_a_failed_solution():
    from autoenvscaling.agents.base import Action, Trajectory
    from autoenvscaling.runtime.trial import StepResult, TrialResult, VerifierResult, trial_cause, trial_reason

    def step(name, reward, cause=None, exit_code=0, output=""):
        oracle = Trajectory(agent="oracle", actions=[Action(command="bash /solution/solve.sh", exit_code=exit_code,
                                                            output=output)])
        return StepResult(name=name, trajectory=oracle, verifier=VerifierResult(rewards={"reward": reward}, cause=cause))

    two_steps = TrialResult(task="t", agent="oracle", rewards={"scaffold": 1.0, "implement": 0.0},
                            steps=[step("scaffold", 1.0), step("implement", 0.0, cause="jq: command not found")])
    assert trial_cause(two_steps) == "step implement: jq: command not found"
    assert trial_reason(two_steps) == "scored scaffold=1, implement=0: step implement: jq: command not found"
    failed = TrialResult(task="t", agent="oracle", rewards={"reward": 0.0},
                         steps=[step("main", 0.0, cause="cat: /app/out: No such file or directory", exit_code=2,
                                     output="building\nmake: *** [Makefile:3: all] Error 2\n")])
    assert trial_cause(failed) == "solution/solve.sh exited 2: make: *** [Makefile:3: all] Error 2"  # last line: no pattern
    solved = TrialResult(task="t", agent="oracle", rewards={"reward": 1.0}, steps=[step("main", 1.0)])
    assert trial_cause(solved) is None and trial_reason(solved) == "scored 1"
    broken = TrialResult(task="t", agent="oracle", status="error", error="sandbox would not start")
    assert trial_cause(broken) == trial_reason(broken) == "sandbox would not start"
