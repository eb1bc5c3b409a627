"""Checks for terminal-log-analysis-app-errors-l2-s3 (autoenvscaling-terminal, family log_analysis, kind app_errors, level 2).

Checks named test_initial_* guard the environment; the others score the work.
"""

# Hidden ground truth: reaches the sandbox only at verification time, never seen by the agent.
TRUTH = {'codes': ['E1124', 'E2286', 'E3128', 'E4115', 'E4907', 'E6454'],
 'codes_file': 'codes.txt',
 'csv': 'out/errors.csv',
 'inputs': {'logs/app.log': 'ca8cb776eaa2cef3c6c5c2a0e52f3a8f7566c1802462741ba10ce626001e9317'},
 'rows': [['auth', '11'], ['storage', '10'], ['checkout', '7'], ['reports', '6'], ['mailer', '3']]}

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


# Checks of the log_analysis family.


def report():
    data = load_json(APP / TRUTH["report"])
    assert isinstance(data, dict), "the report must be a JSON object"
    return data


def test_errors_csv_header():
    rows = csv_rows(APP / TRUTH["csv"])
    assert rows and [c.strip() for c in rows[0]] == ["service", "errors"]


def test_errors_csv_rows():
    rows = [[c.strip() for c in r] for r in csv_rows(APP / TRUTH["csv"])[1:] if r]
    assert rows == TRUTH["rows"]


def test_error_codes():
    assert lines(APP / TRUTH["codes_file"]) == TRUTH["codes"]
