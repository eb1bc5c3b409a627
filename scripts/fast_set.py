"""Keep the fast test set's coverage while it moves expensive tests to the slow set.

It reads a coverage data file recorded with one context per test (pytest-cov's
``--cov-context=test``) over the whole fast set, and that run's JUnit XML for each test's
seconds. It counts lines of the shipped code: core/, the plugins' packages and the trainer's, not
the tests. Lines run only in a subprocess (the CLI in a child process, executor workers) belong to no
test and are left out.

    # once: the fast set under coverage, one context per test (about 1.5x its usual time)
    COVERAGE_FILE=/tmp/cov/.coverage bash scripts/test.sh --cov=core --cov=plugins --cov=trainer \\
        --cov-context=test --cov-report= --junitxml=/tmp/cov/junit.xml
    # which tests of 3 s or more add no line the others miss (greedy, cheapest coverage first)
    .venv/bin/python scripts/fast_set.py suggest /tmp/cov/.coverage /tmp/cov/junit.xml
    # after marking tests slow: the lines the fast set (collected now) no longer runs
    .venv/bin/python scripts/fast_set.py check /tmp/cov/.coverage /tmp/cov/junit.xml

``check`` exits 1 when a line is lost and lists it with the tests that ran it.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
Line = tuple[str, int]


def shipped(path: str, root: Path) -> str | None:
    """The path under ``root`` of a file of the shipped code, None for a test or anything else."""
    try:
        rel = Path(path).resolve().relative_to(root)
    except ValueError:
        return None
    return str(rel) if rel.parts[0] in ("core", "plugins", "trainer") and "tests" not in rel.parts else None


def key(nodeid: str) -> str:
    """One spelling for a JUnit case and a pytest node id: dots for folders, modules and classes."""
    head, _, params = nodeid.partition("[")
    head = head.replace(".py::", "::").replace("/", ".").replace("::", ".")
    return head + ("[" + params if params else "")


def load_lines(coverage_file: str, root: Path) -> dict[str, set[Line]]:
    """Test key -> the shipped lines it ran (its setup, call and teardown together)."""
    from coverage import CoverageData

    data = CoverageData(coverage_file)
    data.read()
    by_test: dict[str, set[Line]] = defaultdict(set)
    for path in data.measured_files():
        rel = shipped(path, root)
        if rel is None:
            continue
        for lineno, contexts in data.contexts_by_lineno(path).items():
            for ctx in contexts:
                if ctx:
                    by_test[key(ctx.rsplit("|", 1)[0])].add((rel, lineno))
    return by_test


def load_seconds(junit: str) -> dict[str, float]:
    seconds: dict[str, float] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        seconds[key(f"{case.get('classname')}::{case.get('name')}")] = float(case.get("time") or 0)
    return seconds


def fast_set_now() -> set[str]:
    """The node ids the fast set collects now (scripts/test.sh's paths and markers)."""
    paths = ["tests", *sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("plugins/*/tests")), "trainer/tests"]
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                          "-m", "not slow and not gpu", *paths], cwd=ROOT, capture_output=True, text=True)
    ids = {key(line.strip()) for line in out.stdout.splitlines() if "::" in line}
    if not ids:
        sys.exit(f"collecting the fast set found no test:\n{out.stdout[-2000:]}{out.stderr[-2000:]}")
    return ids


def suggest(lines: dict[str, set[Line]], seconds: dict[str, float], min_seconds: float,
            keep: list[str]) -> None:
    """Greedy set cover: the tests under ``min_seconds`` (and those matching ``keep``) stay; of the
    rest, the one adding the most uncovered lines per second joins until nothing is left to add."""
    pinned = {t for t in seconds if seconds[t] < min_seconds or any(re.search(p, t) for p in keep)}
    covered: set[Line] = set().union(*(lines.get(t, set()) for t in pinned))
    candidates = {t: lines.get(t, set()) - covered for t in seconds if t not in pinned}
    chosen = []
    while True:
        best = max(candidates, key=lambda t: len(candidates[t] - covered) / max(seconds[t], 0.1), default=None)
        if best is None or not candidates[best] - covered:
            break
        gain = candidates.pop(best) - covered
        covered |= gain
        chosen.append((best, seconds[best], len(gain)))
    total = sum(seconds.values())
    print(f"{len(pinned)} tests stay for their cost or a --keep pattern: {sum(seconds[t] for t in pinned):.0f} s")
    print(f"{len(chosen)} more stay for lines no other test runs: {sum(s for _, s, _ in chosen):.0f} s")
    for t, s, n in chosen:
        print(f"  keep {s:6.1f} s  +{n:4d} lines  {t}")
    print(f"{len(candidates)} could move to the slow set: {sum(seconds[t] for t in candidates):.0f} s "
          f"of {total:.0f} s")
    for t in sorted(candidates, key=lambda t: -seconds[t]):
        print(f"  slow {seconds[t]:6.1f} s  {t}")


def check(lines: dict[str, set[Line]], seconds: dict[str, float], now: set[str]) -> int:
    """The recorded lines the tests ``now`` in the fast set no longer run: 1 when there are any."""
    recorded = set(lines) | set(seconds)
    kept = recorded & now
    left = recorded - now
    before: set[Line] = set().union(*lines.values())
    after: set[Line] = set().union(*(lines[t] for t in kept if t in lines))
    lost = before - after
    print(f"fast set now: {len(now)} tests; of the {len(recorded)} recorded, {len(left)} left it "
          f"({sum(seconds.get(t, 0) for t in left):.0f} of {sum(seconds.values()):.0f} test-seconds)")
    print(f"shipped lines run: {len(before)} before, {len(after)} now, {len(lost)} lost")
    by_file: dict[str, list[int]] = defaultdict(list)
    for path, lineno in sorted(lost):
        by_file[path].append(lineno)
    for path, numbers in by_file.items():
        who = sorted({t for t in left if any((path, n) in lines.get(t, ()) for n in numbers)})
        print(f"  {path}: {numbers} (run by {', '.join(who)})")
    return 1 if lost else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=("suggest", "check"))
    ap.add_argument("coverage_file")
    ap.add_argument("junit")
    ap.add_argument("--root", type=Path, default=ROOT, help="the checkout the coverage run measured (default: this one)")
    ap.add_argument("--min-seconds", type=float, default=3.0, help="tests faster than this always stay")
    ap.add_argument("--keep", action="append", default=[], help="a regex: matching tests always stay")
    args = ap.parse_args()
    lines, seconds = load_lines(args.coverage_file, args.root.resolve()), load_seconds(args.junit)
    if args.command == "suggest":
        suggest(lines, seconds, args.min_seconds, args.keep)
        return 0
    return check(lines, seconds, fast_set_now())


if __name__ == "__main__":
    raise SystemExit(main())
