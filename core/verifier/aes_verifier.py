"""What every task's verifier shares: result files, pytest reports, partial credit.

Standard library only, for any python3 >= 3.8: this file is copied into every generated task as
tests/aes_verifier.py and runs there, in the task's image or in Harbor. A verifier script, run as
``python3 -I /tests/<script>.py``, imports it from its own folder (the task's root-owned tests/,
which the agent never had) placed first on ``sys.path``::

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import aes_verifier

-I leaves the working directory, PYTHON* variables and the user site off ``sys.path``, and the
script's folder goes before every other entry, so no module planted anywhere else can stand in for
this one. Code on the host imports it as ``autoenvscaling.verifier.aes_verifier`` (plugins:
``from autoenvscaling.api import aes_verifier``); a verifier module the plugin also imports on the
host takes that copy there, chosen by ``__package__`` (None for a script run as above)::

    if TYPE_CHECKING or __package__:  # imported on the host, as part of its plugin
        from autoenvscaling.api import aes_verifier
    else:  # the task's verifier
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import aes_verifier

The result files are the contract Harbor and our runtime read: /logs/verifier/reward.txt (one
number) or reward.json (``{"reward": r}``, one key: trial runners average every key), beside a
details file (tests.json, details.json, ...). ``clear`` removes them before a run, so only this
run's verdict counts; ``write_json`` then ``write_reward`` write them, the reward last.
"""

from __future__ import annotations

import json
import os
import shutil
import xml.etree.ElementTree as ElementTree
from typing import Any, Dict, Iterable, Mapping, Optional, Tuple

LOGS = "/logs/verifier"
#: every file a verifier writes into LOGS, and the reports the checks leave there
RESULT_FILES = ("reward.txt", "reward.json", "tests.json", "details.json", "ctrf.json", "junit.xml")
GUARD_PREFIX = "test_initial_"
SHAPE_PREFIX = "test_shape_"


# -- result files -----------------------------------------------------------------------------------

def clear(logs: str = LOGS, names: Iterable[str] = RESULT_FILES) -> None:
    """Create ``logs`` and remove the result files ``names`` left there before this run (a file or a
    link the agent planted included)."""
    os.makedirs(logs, exist_ok=True)
    for name in names:
        path = os.path.join(logs, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.unlink(path)


def write_json(name: str, data: Any, logs: str = LOGS, *, indent: Optional[int] = 1, sort_keys: bool = False,
               default: Any = None) -> None:
    """``logs/name`` as JSON: the details beside the reward (tests.json, details.json, ...)."""
    os.makedirs(logs, exist_ok=True)
    with open(os.path.join(logs, name), "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=indent, sort_keys=sort_keys, default=default)


def write_reward(reward: float, logs: str = LOGS, *, fmt: Optional[str] = None, as_json: bool = False) -> str:
    """Write the reward, after the details: reward.txt, one line (``format(reward, fmt)``, else as
    Python prints it: ``1``, ``0.5``), or with ``as_json`` reward.json ``{"reward": reward}`` (the
    caller rounds). Returns the file's path."""
    os.makedirs(logs, exist_ok=True)
    if as_json:
        path, text = os.path.join(logs, "reward.json"), json.dumps({"reward": reward})
    else:
        path, text = os.path.join(logs, "reward.txt"), (str(reward) if fmt is None else format(reward, fmt)) + "\n"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return path


# -- pytest reports ---------------------------------------------------------------------------------

def check_name(test_id: str) -> str:
    """A check's name in a report: the function name, without module, class or parameters
    (``tests/test_outputs.py::TestX::test_a[1-x::y]`` -> ``test_a``)."""
    return test_id.split("[", 1)[0].split("::")[-1]


def _merge(results: Dict[str, bool], test_id: str, passed: bool) -> None:
    """A check passes only when every case of it (each parameter, each report of it) passed."""
    name = check_name(test_id)
    results[name] = results.get(name, True) and passed


def from_ctrf(path: str) -> Dict[str, bool]:
    """Check name -> passed, from a CTRF JSON report: only status "passed" passes (failed, skipped,
    pending and other do not)."""
    with open(path, encoding="utf-8") as fh:
        tests = json.load(fh)["results"]["tests"]
    results: Dict[str, bool] = {}
    for test in tests:
        _merge(results, test["name"], test.get("status") == "passed")
    return results


def from_junit(path: str) -> Dict[str, bool]:
    """Check name -> passed, from a JUnit XML report: a test case with a failure, error or skipped
    element did not pass."""
    results: Dict[str, bool] = {}
    for case in ElementTree.parse(path).getroot().iter("testcase"):
        passed = not any(child.tag in ("failure", "error", "skipped") for child in case)
        _merge(results, case.get("name") or "", passed)
    return results


def read_results(logs: str = LOGS) -> Tuple[Dict[str, bool], str]:
    """(check name -> passed, where they came from): logs/ctrf.json when it is there and not empty,
    else logs/junit.xml; an unreadable report gives no results, and says why."""
    for name, reader in (("ctrf.json", from_ctrf), ("junit.xml", from_junit)):
        path = os.path.join(logs, name)
        if os.path.isfile(path) and os.path.getsize(path) > 0:
            try:
                return reader(path), name
            except (ValueError, KeyError, TypeError, ElementTree.ParseError) as exc:
                return {}, "%s unreadable: %s" % (name, exc)
    return {}, "no test report"


# -- partial credit ---------------------------------------------------------------------------------

def fraction(outcomes: Iterable[bool]) -> float:
    """The fraction of requirements met (0 when there are none)."""
    met = [bool(ok) for ok in outcomes]
    return sum(met) / len(met) if met else 0.0


def score(results: Mapping[str, bool], mode: str = "fraction", *, guard_prefix: str = GUARD_PREFIX,
          shape_prefix: str = SHAPE_PREFIX) -> Tuple[float, str]:
    """(reward, reason) from check name -> passed.

    Guards (``test_initial_*``) check the environment, not the work: one failed guard makes the
    reward 0, whatever else passed. The other checks measure the work: mode "fraction" pays the
    fraction of them that passed, "binary" 1 only when all passed. Shape checks (``test_shape_*``)
    judge only an answer's form, which a made-up answer has: they count only next to a passed
    content check, so form without content scores 0."""
    guards = {n: ok for n, ok in results.items() if n.startswith(guard_prefix)}
    checks = {n: ok for n, ok in results.items() if not n.startswith(guard_prefix)}
    if not checks:
        return 0.0, "no checks ran"
    failed_guards = sorted(n for n, ok in guards.items() if not ok)
    if failed_guards:
        return 0.0, "environment check failed: " + ", ".join(failed_guards)
    passed = sum(1 for ok in checks.values() if ok)
    counted = "%d/%d checks passed" % (passed, len(checks))
    if not any(ok for n, ok in checks.items() if not n.startswith(shape_prefix)):
        return 0.0, counted + ", none of them on content"
    if mode == "binary":
        return (1.0 if passed == len(checks) else 0.0), counted + " (binary)"
    return fraction(checks.values()), counted
