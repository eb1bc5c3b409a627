"""Run a repository's test suite the way an autoenvscaling-swe task is judged, and read the outcome of
every test from pytest's own JUnit XML report. Standard library only: this file is copied into every
task's tests/ and runs with the image's python3; the plugin imports the same file to screen bugs, so
generation and verification can never disagree on what passed.

The suite never runs in the agent's checkout. A scratch copy is assembled first:

1. copy the repository (without .git, byte-code and caches);
2. delete every test file, every pytest or packaging configuration file (conftest.py, pytest.ini,
   tox.ini, setup.cfg, pyproject.toml) and every interpreter start-up hook (sitecustomize.py,
   usercustomize.py, *.pth) from the copy: the agent may have edited, added or deleted any of them;
3. put the original tests and configuration back from the hidden bundle.

So deleting or editing the visible tests, skip markers, conftest.py tricks and ini ``addopts`` change
nothing: only the agent's source code is judged. Third-party pytest plugins are not auto-loaded
(PYTEST_DISABLE_PLUGIN_AUTOLOAD=1); a repository that needs one names it in ``pytest_plugins``.

Modes:
  verify  --spec /tests/swe.json       the task's verifier: writes /logs/verifier/reward.json (1 when
                                       every FAIL_TO_PASS and PASS_TO_PASS test passes, else 0) and
                                       tests.json (0/1 per listed test)
  report  --workdir D --bundle B --out F   every test's outcome as JSON (used to screen bugs)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

TEST_DIRS = ("tests", "test")
CONFIG_NAMES = ("conftest.py", "pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml")
STARTUP_NAMES = ("sitecustomize.py", "usercustomize.py")
SKIP_COPY = (".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".tox", ".venv", ".eggs")
OUTCOMES = ("passed", "failed", "error", "skipped")
_FRAME = re.compile(r"^(\S+\.py):(\d+): in (\S+)$")
MESSAGE_LINES = 8
# pytest is imported before the repository joins sys.path (-P: the working directory is not on it),
# so a pytest.py or _pytest/ the agent left in the repository cannot stand in for the real one.
BOOT = "import sys, pytest; sys.path[:0] = sys.argv[1].split(':'); sys.exit(pytest.main(sys.argv[2:]))"


def is_test_path(rel: str) -> bool:
    """Whether a repository path belongs to the test suite (hidden bundle), not to the code under test."""
    parts = rel.split("/")
    name = parts[-1]
    return (any(p in TEST_DIRS for p in parts[:-1]) or name == "conftest.py"
            or (name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))))


def is_config_path(rel: str) -> bool:
    """Files pytest or packaging read their configuration from (any depth for conftest.py)."""
    name = rel.split("/")[-1]
    return name == "conftest.py" or ("/" not in rel and name in CONFIG_NAMES)


def _removable(rel: str) -> bool:
    name = rel.split("/")[-1]
    return is_test_path(rel) or is_config_path(rel) or name in STARTUP_NAMES or name.endswith(".pth")


def assemble(workdir: Path, bundle: Path, dest: Path) -> None:
    """``dest``: the agent's repository with its tests and configuration replaced by the bundle's."""
    shutil.copytree(workdir, dest, symlinks=True, ignore=shutil.ignore_patterns(*SKIP_COPY, "*.pyc"))
    for root, dirs, files in os.walk(dest, topdown=True):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            path = Path(root, name)
            if _removable(path.relative_to(dest).as_posix()):
                path.unlink()
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(root, d))]
    for root, _dirs, files in os.walk(bundle):
        for name in files:
            src = Path(root, name)
            target = dest / src.relative_to(bundle)
            if target.is_symlink() or (target.exists() and not target.is_dir()):
                target.unlink()
            elif target.is_dir():
                shutil.rmtree(target)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, target)


def run_pytest(repo: Path, paths: list[str], *, timeout: float, plugins: list[str]) -> dict:
    """Run pytest in ``repo``; ``{"tests": {nodeid: {"outcome", "message", "frames"}}, "collection_errors",
    "seconds", "timed_out", "exit_code", "output_tail"}``."""
    junit = Path(tempfile.mkdtemp(prefix="aes-junit-")) / "junit.xml"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "PYTHON"))}
    env.update(PYTHONDONTWRITEBYTECODE="1", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONHASHSEED="0")
    roots = [str(repo / "src")] if (repo / "src").is_dir() else []
    command = [sys.executable, "-P", "-c", BOOT, ":".join([*roots, str(repo)]),
               "-p", "no:cacheprovider", "-q", "--tb=short", "-o", "junit_family=xunit1",
               f"--junitxml={junit}", *(a for p in plugins for a in ("-p", p)), "--", *paths]
    start = time.monotonic()
    proc = subprocess.Popen(command, cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    timed_out = False
    try:
        output, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
    seconds = time.monotonic() - start
    tests, collection = parse_junit(junit.read_bytes()) if junit.exists() and not timed_out else ({}, [])
    shutil.rmtree(junit.parent, ignore_errors=True)
    return {"tests": tests, "collection_errors": collection, "seconds": round(seconds, 3), "timed_out": timed_out,
            "exit_code": proc.returncode, "output_tail": output.decode("utf-8", "replace")[-3000:]}


def parse_junit(data: bytes) -> tuple[dict, list]:
    """Per-test outcomes from pytest's xunit1 JUnit XML, by pytest node id; and the files whose
    collection failed. A test reported twice (a failure, then a teardown error) keeps the worse outcome."""
    root = ET.fromstring(data)
    tests: dict[str, dict] = {}
    collection: list[str] = []
    rank = {o: i for i, o in enumerate(("passed", "skipped", "failed", "error"))}
    for case in root.iter("testcase"):
        failure, error, skipped = case.find("failure"), case.find("error"), case.find("skipped")
        bad = failure if failure is not None else error
        if error is not None and "collection failure" in (error.get("message") or ""):
            collection.append(case.get("file") or case.get("name") or "")
            continue
        nodeid = _nodeid(case)
        outcome = ("failed" if failure is not None else "error" if error is not None
                   else "skipped" if skipped is not None else "passed")
        entry = {"outcome": outcome}
        if bad is not None:
            entry.update(_failure_details(bad))
        if nodeid not in tests or rank[outcome] > rank[tests[nodeid]["outcome"]]:
            tests[nodeid] = entry
    return tests, collection


def _nodeid(case: ET.Element) -> str:
    file, classname, name = case.get("file") or "", case.get("classname") or "", case.get("name") or ""
    if not file:
        return f"{classname}::{name}"
    module = file[:-3].replace("/", ".") if file.endswith(".py") else file
    cls = classname[len(module) + 1:] if classname.startswith(module + ".") else ""
    return f"{file}::" + (cls.replace(".", "::") + "::" if cls else "") + name


def _failure_details(element: ET.Element) -> dict:
    text = element.text or ""
    lines = [line[1:].strip() for line in text.splitlines() if line.startswith("E ")]
    frames = [{"path": m.group(1), "line": int(m.group(2)), "function": m.group(3)}
              for m in (_FRAME.match(line.strip()) for line in text.splitlines()) if m]
    return {"message": "\n".join(lines[:MESSAGE_LINES]) or (element.get("message") or "")[:500], "frames": frames}


def _scratch_repo(workdir: Path, bundle: Path) -> Path:
    scratch = Path(tempfile.mkdtemp(prefix="aes-swe-"))
    assemble(workdir, bundle, scratch / "repo")
    return scratch / "repo"


def verify(spec_path: Path) -> int:
    spec = json.loads(spec_path.read_text())
    logs = Path(spec.get("logs", "/logs/verifier"))
    logs.mkdir(parents=True, exist_ok=True)
    listed = list(spec["fail_to_pass"]) + list(spec["pass_to_pass"])
    repo = _scratch_repo(Path(spec["workdir"]), spec_path.parent / spec.get("bundle", "repo"))
    files = sorted({t.split("::", 1)[0] for t in listed})
    run = run_pytest(repo, files, timeout=float(spec.get("timeout_sec", 600)), plugins=list(spec.get("pytest_plugins", [])))
    shutil.rmtree(repo.parent, ignore_errors=True)
    results = {t: int(run["tests"].get(t, {}).get("outcome") == "passed") for t in listed}
    reward = int(bool(listed) and all(results.values()))
    (logs / "tests.json").write_text(json.dumps(results, indent=1, sort_keys=True))
    (logs / "reward.json").write_text(json.dumps({"reward": reward}))
    failed = [t for t, ok in results.items() if not ok]
    print(f"swe verifier: {len(listed) - len(failed)}/{len(listed)} listed tests passed in {run['seconds']:.1f}s"
          + (" (timed out)" if run["timed_out"] else "") + f"; reward {reward}")
    for t in failed[:20]:
        print(f"  not passed: {t} ({run['tests'].get(t, {}).get('outcome', 'not run')})")
    if run["collection_errors"]:
        print("  collection errors: " + ", ".join(run["collection_errors"]))
    print(run["output_tail"][-1500:])
    return 0


def report(workdir: Path, bundle: Path, out: Path, *, timeout: float, paths: list[str], plugins: list[str]) -> int:
    repo = _scratch_repo(workdir, bundle)
    run = run_pytest(repo, paths, timeout=timeout, plugins=plugins)
    shutil.rmtree(repo.parent, ignore_errors=True)
    out.write_text(json.dumps(run))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    v = sub.add_parser("verify")
    v.add_argument("--spec", type=Path, default=Path("/tests/swe.json"))
    r = sub.add_parser("report")
    r.add_argument("--workdir", type=Path, required=True)
    r.add_argument("--bundle", type=Path, required=True)
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--timeout", type=float, default=600.0)
    r.add_argument("--plugin", action="append", default=[])
    r.add_argument("paths", nargs="*")
    args = parser.parse_args(argv)
    if args.mode == "verify":
        return verify(args.spec)
    return report(args.workdir, args.bundle, args.out, timeout=args.timeout, paths=args.paths, plugins=args.plugin)


if __name__ == "__main__":
    sys.exit(main())
