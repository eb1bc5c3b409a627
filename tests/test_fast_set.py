"""scripts/fast_set.py on a coverage file written here with one context per test: which tests add no
line, and which lines a smaller fast set no longer runs."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def fast_set() -> Any:
    spec = importlib.util.spec_from_file_location("fast_set", ROOT / "scripts" / "fast_set.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _record(tmp_path: Path, runs: dict[str, dict[str, list[int]]], seconds: dict[str, float]) -> tuple[str, str]:
    """A coverage file (``runs``: context -> file under tmp_path -> lines) and a JUnit file."""
    from coverage import CoverageData

    data = CoverageData(str(tmp_path / ".coverage"))
    for context, files in runs.items():
        data.set_context(context)
        data.add_lines({str(tmp_path / name): numbers for name, numbers in files.items()})
    data.write()
    cases = "".join(f'<testcase classname="{c.rsplit("::", 1)[0].removesuffix(".py").replace("/", ".")}" '
                    f'name="{c.rsplit("::", 1)[1]}" time="{s}"/>' for c, s in seconds.items())
    (tmp_path / "junit.xml").write_text(f'<testsuites><testsuite name="pytest">{cases}</testsuite></testsuites>')
    return str(tmp_path / ".coverage"), str(tmp_path / "junit.xml")


RUNS = {
    "tests/test_a.py::test_cheap|run": {"core/m.py": [1, 2]},
    "tests/test_a.py::test_wide[x]|setup": {"core/m.py": [3]},
    "tests/test_a.py::test_wide[x]|run": {"core/m.py": [4, 5], "plugins/p/pkg/q.py": [7]},
    "tests/test_a.py::test_same|run": {"core/m.py": [2, 4]},
    "tests/test_a.py::test_own|run": {"core/m.py": [6], "tests/helpers.py": [9]},
}
SECONDS = {"tests/test_a.py::test_cheap": 0.5, "tests/test_a.py::test_wide[x]": 20.0,
           "tests/test_a.py::test_same": 8.0, "tests/test_a.py::test_own": 4.0}


def test_suggest_keeps_the_tests_that_add_lines_and_names_the_rest(fast_set: Any, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    cov, junit = _record(tmp_path, RUNS, SECONDS)
    lines = fast_set.load_lines(cov, tmp_path)
    # setup and call of one test are one test; a test file's lines are not shipped code
    assert lines["tests.test_a.test_wide[x]"] == {("core/m.py", 3), ("core/m.py", 4), ("core/m.py", 5),
                                                  ("plugins/p/pkg/q.py", 7)}
    assert lines["tests.test_a.test_own"] == {("core/m.py", 6)}
    fast_set.suggest(lines, fast_set.load_seconds(junit), 3.0, [])
    out = capsys.readouterr().out
    assert "1 tests stay for their cost" in out
    assert "keep   20.0 s  +   4 lines  tests.test_a.test_wide[x]" in out
    assert "keep    4.0 s  +   1 lines  tests.test_a.test_own" in out
    assert "1 could move to the slow set: 8 s" in out and "slow    8.0 s  tests.test_a.test_same" in out
    fast_set.suggest(lines, fast_set.load_seconds(junit), 3.0, ["test_same"])  # --keep pins it
    assert "0 could move" in capsys.readouterr().out


def test_check_names_each_line_the_fast_set_no_longer_runs(fast_set: Any, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    cov, junit = _record(tmp_path, RUNS, SECONDS)
    lines, seconds = fast_set.load_lines(cov, tmp_path), fast_set.load_seconds(junit)
    everything = {fast_set.key(t) for t in SECONDS}
    without_same = everything - {fast_set.key("tests/test_a.py::test_same")}
    assert fast_set.check(lines, seconds, without_same) == 0
    assert "7 before, 7 now, 0 lost" in capsys.readouterr().out
    without_own = everything - {fast_set.key("tests/test_a.py::test_own")}
    assert fast_set.check(lines, seconds, without_own) == 1
    out = capsys.readouterr().out
    assert "1 left it (4 of 32 test-seconds)" in out and "core/m.py: [6] (run by tests.test_a.test_own)" in out


def test_a_node_id_and_its_junit_case_are_one_key(fast_set: Any) -> None:
    assert fast_set.key("plugins/swe/tests/test_x.py::TestA::test_b[p/q-1.5]") == \
        fast_set.key("plugins.swe.tests.test_x.TestA::test_b[p/q-1.5]") == "plugins.swe.tests.test_x.TestA.test_b[p/q-1.5]"


def test_the_worker_count_follows_the_cores_whatever_omp_num_threads_says() -> None:
    """scripts/test.sh's default: two more workers than the cores. GNU nproc answers OMP_NUM_THREADS
    when it is set (the script sets it to 1 for torch), so the cores are counted before: the old
    order, the positive control, gave three workers on any machine."""
    import os
    import re
    import subprocess

    script = (ROOT / "scripts" / "test.sh").read_text()
    lines = [line for line in script.splitlines() if re.match(r"(cores|count)=|export OMP_NUM_THREADS=", line)]
    assert [line.split("=")[0] for line in lines] == ["cores", "export OMP_NUM_THREADS", "count"], lines

    def count(shell: str) -> int:
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        env.pop("PYTEST_WORKERS", None)
        return int(subprocess.run(["bash", "-c", shell + '\necho "$count"'], env=env, capture_output=True, text=True,
                                  check=True).stdout)

    cores = len(os.sched_getaffinity(0))
    assert count("\n".join(lines)) == cores + 2
    assert count('export OMP_NUM_THREADS=1\ncount="$(( $(nproc) + 2 ))"') == 3  # what the script did before
