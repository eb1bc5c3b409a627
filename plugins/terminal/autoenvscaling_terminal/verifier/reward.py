"""Turn the pytest results of the task's checks into Harbor reward files.

Checks named ``test_initial_*`` guard the environment (input files present and unchanged): if any
fails, the reward is 0 whatever else passed, because the result cannot be trusted. The other checks
measure the agent's work. Mode "fraction" rewards the fraction of them that passed (partial credit);
mode "binary" rewards 1 only when all passed.

Checks named ``test_shape_*`` judge only the form of an answer (valid JSON, a CSV header, the
executable bit, commands copied from the instruction): a made-up answer in the right format passes
them. They count only next to a passed content check, so form without content scores 0.

Writes /logs/verifier/reward.json as {"reward": r} (one key: trial runners average every key) and
/logs/verifier/tests.json with one 0/1 entry per check. Results come from the CTRF report (uvx +
pytest-json-ctrf) or, failing that, the JUnit XML report (plain pytest).
"""

import argparse
import json
import os
import xml.etree.ElementTree as ElementTree

LOGS = "/logs/verifier"
GUARD_PREFIX = "test_initial_"
SHAPE_PREFIX = "test_shape_"


def from_ctrf(path):
    with open(path, encoding="utf-8") as fh:
        tests = json.load(fh)["results"]["tests"]
    results = {}
    for test in tests:
        name = test["name"].split("::")[-1].split("[")[0]
        results[name] = results.get(name, True) and test.get("status") == "passed"
    return results


def from_junit(path):
    results = {}
    for case in ElementTree.parse(path).getroot().iter("testcase"):
        name = (case.get("name") or "").split("[")[0]
        passed = not any(child.tag in ("failure", "error", "skipped") for child in case)
        results[name] = results.get(name, True) and passed
    return results


def read_results():
    for name, reader in (("ctrf.json", from_ctrf), ("junit.xml", from_junit)):
        path = os.path.join(LOGS, name)
        if os.path.isfile(path) and os.path.getsize(path) > 0:
            try:
                return reader(path), name
            except (ValueError, KeyError, TypeError, ElementTree.ParseError) as exc:
                return {}, f"{name} unreadable: {exc}"
    return {}, "no test report"


def score(results, mode):
    guards = {n: ok for n, ok in results.items() if n.startswith(GUARD_PREFIX)}
    checks = {n: ok for n, ok in results.items() if not n.startswith(GUARD_PREFIX)}
    if not checks:
        return 0.0, "no checks ran"
    failed_guards = sorted(n for n, ok in guards.items() if not ok)
    if failed_guards:
        return 0.0, "environment check failed: " + ", ".join(failed_guards)
    passed = sum(1 for ok in checks.values() if ok)
    if not any(ok for n, ok in checks.items() if not n.startswith(SHAPE_PREFIX)):
        return 0.0, f"{passed}/{len(checks)} checks passed, none of them on content"
    if mode == "binary":
        return (1.0 if passed == len(checks) else 0.0), f"{passed}/{len(checks)} checks passed (binary)"
    return passed / len(checks), f"{passed}/{len(checks)} checks passed"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["fraction", "binary"], default="fraction")
    args = parser.parse_args()
    results, source = read_results()
    reward, reason = score(results, args.mode)
    os.makedirs(LOGS, exist_ok=True)
    with open(os.path.join(LOGS, "tests.json"), "w", encoding="utf-8") as fh:
        json.dump({name: int(ok) for name, ok in sorted(results.items())}, fh, indent=1)
    with open(os.path.join(LOGS, "reward.json"), "w", encoding="utf-8") as fh:
        json.dump({"reward": round(reward, 6)}, fh)
    print(f"reward {reward:.4f}: {reason} (from {source})")


if __name__ == "__main__":
    main()
