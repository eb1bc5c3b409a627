"""Checks for terminal-git-ops-restore-file-l3-s5 (autoenvscaling-terminal, family git_ops, kind restore_file, level 3).

Checks named test_initial_* guard the environment; the others score the work.
"""

# Hidden ground truth: reaches the sandbox only at verification time, never seen by the agent.
TRUTH = {'inputs': {},
 'message': 'Restore deleted files',
 'subjects': ['[DEV-3195] Initial import',
              '[INFRA-8188] Update README',
              '[INFRA-9756] Document index',
              '[OPS-1571] Document notes',
              '[DEV-5938] Update README',
              '[DEV-4697] Add echo_5 helper',
              '[DEV-3996] Update ONCALL.md',
              '[BUG-7973] Add lagoon_7 helper',
              '[OPS-3330] Update RUNBOOK.md',
              '[BUG-2446] Document data',
              '[BUG-2527] Drop ONCALL.md',
              '[DEV-7287] Add upland_11 helper',
              '[PLAT-6575] Spring cleaning',
              '[OPS-5326] Add vortex_13 helper',
              '[BUG-3546] Update README',
              '[DEV-1704] Update README',
              '[INFRA-4524] Update README',
              '[OPS-7795] Add ridge_17 helper',
              '[OPS-4048] Update README'],
 'tag': None,
 'versions': {'docs/ONCALL.md': '# docs/ONCALL.md\nversion: 2\ndelta: 364\nember: 84\nglacier: 388\n',
              'docs/RUNBOOK.md': '# docs/RUNBOOK.md\nversion: 2\necho: 118\namber: 317\nsierra: 242\n'}}

# Helpers shared by every generated test file. TRUTH (the task's hidden ground truth) is defined
# above this block when the file is rendered.
import csv
import hashlib
import io
import json
import os
import re
import subprocess
from pathlib import Path

APP = Path("/app")


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def need(path):
    path = Path(path)
    assert path.exists(), f"{path} does not exist"
    return path


def text(path):
    return need(path).read_text(encoding="utf-8", errors="replace")


def lines(path):
    """Non-blank lines without trailing whitespace."""
    return [line.rstrip() for line in text(path).splitlines() if line.strip()]


def csv_rows(path):
    return list(csv.reader(io.StringIO(text(path))))


def load_json(path):
    try:
        return json.loads(text(path))
    except json.JSONDecodeError as exc:
        raise AssertionError(f"{path} is not valid JSON: {exc}") from None


def run(args, timeout=60, **kwargs):
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kwargs)


def close(a, b, tol=0.011):
    return abs(float(a) - float(b)) <= tol


def test_initial_inputs_intact():
    """The task's input files exist with their original bytes (else the result cannot be trusted)."""
    for rel, digest in sorted(TRUTH["inputs"].items()):
        path = APP / rel
        assert path.is_file(), f"input file {path} is missing"
        assert sha256(path) == digest, f"input file {path} was modified"


# Checks of the git_ops family. They read the repository with the git command line.
REPO = APP / "repo"


def git(*args):
    result = run(["git", "-c", "safe.directory=*", "-C", str(REPO), *args])
    assert result.returncode == 0, f"git {' '.join(args)} failed: {result.stderr[-300:]}"
    return result.stdout


def test_initial_history():
    """The original commits are all still there, in order, at the start of main's history."""
    subjects = git("log", "main", "--reverse", "--format=%s").splitlines()
    assert subjects[: len(TRUTH["subjects"])] == TRUTH["subjects"], "the history of main was rewritten"


def answer_lines():
    return lines(APP / TRUTH["answer"])


def test_files_restored():
    for path, content in TRUTH["versions"].items():
        assert text(REPO / path) == content, f"{path} does not have its last content"


def test_restore_commit():
    subjects = git("log", "main", "--format=%s").splitlines()
    assert subjects[0] == TRUTH["message"], f"HEAD message is {subjects[0]!r}"
    assert len(subjects) == len(TRUTH["subjects"]) + 1, "expected exactly one new commit"
    changed = sorted(git("show", "--name-only", "--format=", "main").split())
    assert changed == sorted(TRUTH["versions"]), f"the commit changes {changed}"
    for path, content in TRUTH["versions"].items():
        assert git("show", f"main:{path}") == content
