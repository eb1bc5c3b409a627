"""Checks for terminal-shell-script-stats-l1-s2 (autoenvscaling-terminal, family shell_script, kind stats, level 1).

Checks named test_initial_* guard the environment; the others score the work.
"""

# Hidden ground truth: reaches the sandbox only at verification time, never seen by the agent.
TRUTH = {'cases': [{'column': None,
            'expected': 'count=8 sum=1997 min=-44 max=483',
            'input': '483\n380\n325\n440\n33\n321\n-44\n59\n',
            'values': [483, 380, 325, 440, 33, 321, -44, 59]},
           {'column': None,
            'expected': 'count=5 sum=781 min=-7 max=350',
            'input': '315\n99\n-7\n24\n350\n',
            'values': [315, 99, -7, 24, 350]},
           {'column': None,
            'expected': 'count=9 sum=2042 min=-42 max=417',
            'input': '58\n410\n307\n131\n349\n417\n-3\n-42\n415\n',
            'values': [58, 410, 307, 131, 349, 417, -3, -42, 415]}],
 'inputs': {'samples/numbers.txt': '9ea8dff3f7ef0123f53ec46a5b0bf944195c8b3da7a2e0dc648fd4f7e70b29d5'},
 'script': 'scripts/numstats.sh'}

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


# Checks of the shell_script family: the agent's script runs on inputs it has never seen.
import tarfile
import tempfile


def script():
    return need(APP / TRUTH["script"])


def call(*args, stdin=None, cwd=None):
    return run(["bash", str(script()), *args], input=stdin, cwd=cwd, timeout=60)


def test_script_is_executable():
    path = script()
    assert os.access(path, os.X_OK), f"{path} is not executable"
    assert path.read_text(errors="replace").startswith("#!"), "the script needs a shebang line"


def make_dir(names):
    root = Path(tempfile.mkdtemp(prefix="chk-"))
    for i, name in enumerate(names):
        (root / name).write_text(f"content {i}\n")
    return root


def listing(root):
    return sorted((p.name for p in root.iterdir()), key=lambda s: s.encode())


def stats_file(case):
    path = Path(tempfile.mkdtemp(prefix="chk-")) / "numbers.txt"
    path.write_text(case["input"])
    return path


def stats_out(result):
    assert result.returncode == 0, f"exit {result.returncode}: {result.stderr[-300:]}"
    return " ".join(result.stdout.split())


def test_stats_output():
    case = TRUTH["cases"][0]
    assert stats_out(call(str(stats_file(case)))) == case["expected"]


def source_tree():
    base = Path(tempfile.mkdtemp(prefix="chk-"))
    src = base / TRUTH["src_name"]
    for rel, content in TRUTH["tree"].items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(content)
    return src, base / "dest"


def members(archive):
    with tarfile.open(archive) as tar:
        return {m.name.rstrip("/"): tar.extractfile(m).read().decode() for m in tar.getmembers() if m.isfile()}


def expected_members(include_logs):
    return {f"{TRUTH['src_name']}/{rel}": c for rel, c in TRUTH["tree"].items() if include_logs or not rel.endswith(".log")}
