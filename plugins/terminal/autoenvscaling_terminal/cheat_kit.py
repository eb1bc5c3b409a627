"""What the terminal domain's cheats share: what a cheat can learn about a task (as an agent sees
it, and, for the controls, its hidden ground truth), shell lines that write files, and the naive
verifiers the cheats' positive controls use (cheats.py)."""

from __future__ import annotations

import re
from functools import lru_cache
from shlex import quote as q
from typing import Any

from autoenvscaling.api import Task, reward_if

from .formats import embedded_truth

DOMAIN = "terminal"
SCRIPT_EXTS = (".sh", ".py")


# -- what a cheat can learn about a task ---------------------------------------------------------
def truth(task: Task) -> dict[str, Any]:
    """The hidden ground truth of a generated task (for controls only), {} when there is none."""
    test = task.files.get("tests/test_outputs.py")
    found = _truth_of(test.text) if test else None
    return found if isinstance(found, dict) else {}


_truth_of = lru_cache(maxsize=256)(embedded_truth)


def inputs(task: Task) -> list[str]:
    """Absolute paths of the files the task starts with under /app (what the agent can list)."""
    return sorted("/app/" + p[len("environment/app/"):] for p in task.files if p.startswith("environment/app/"))


def outputs(task: Task) -> list[str]:
    """What the task asks the agent to produce or change: what its generator recorded (provenance
    ``asks``), else its declared outputs, less inputs it starts with (else the /app paths the
    instruction names that do not exist yet). The workdir as a whole names nothing."""
    have = inputs(task)
    declared = list(task.provenance.asks or [p for p in task.config.verifier.outputs if p.rstrip("/") != "/app"])
    declared = declared or [p for p in mentioned(task) if p.startswith("/app/")]
    return [p for p in declared if not any(h == p or h.startswith(p + "/") for h in have)
            and not p.endswith(("-wal", "-journal"))]


def output_files(task: Task) -> list[str]:
    return [p for p in outputs(task) if is_file_path(p)]


def is_file_path(path: str) -> bool:
    name = path.rstrip("/").rsplit("/", 1)[-1]
    return "." in name.strip(".") or name in ("crontab", "INDEX", "SHA256SUMS")


def mentioned(task: Task) -> list[str]:
    """Absolute paths in the instruction, in order (backticks and trailing punctuation stripped)."""
    found = re.findall(r"(?<![\w.~-])(/(?:app|tmp|srv|opt|data|var|etc|home|root)(?:/[\w.+@-]+)+/?)", task.instruction or "")
    return list(dict.fromkeys(p.rstrip(".,:;)") for p in found))


def backticked(task: Task) -> list[str]:
    return re.findall(r"`([^`\n]+)`", task.instruction or "")


def main_input(task: Task) -> str | None:
    """The input the instruction names first (else the first one there is)."""
    have = inputs(task)
    named = [p.rstrip("/") for p in mentioned(task)]
    return next((h for path in named for h in have if h == path or h.startswith(path + "/")), have[0] if have else None)


def scripts(task: Task) -> list[str]:
    return [p for p in output_files(task) if p.endswith(SCRIPT_EXTS)]


def csv_header(task: Task) -> str | None:
    """The first backticked comma-separated header in the instruction (`service,errors`)."""
    return next((t for t in backticked(task) if re.fullmatch(r"[A-Za-z_][\w.]*(,[A-Za-z_][\w.]*)+", t)), None)


def json_keys(task: Task) -> list[str]:
    """Backticked lower-case identifiers the instruction names (the keys a JSON report needs)."""
    return list(dict.fromkeys(t for t in backticked(task) if re.fullmatch(r"[a-z][a-z0-9_]*", t)))


def family(task: Task) -> str | None:
    return task.provenance.family if task.provenance.domain == DOMAIN else None


def kind(task: Task) -> str | None:
    return task.provenance.parameters.get("kind") if task.provenance.domain == DOMAIN else None


def solution_lines(task: Task) -> list[str]:
    """The reference solution as shell lines (a cheat that did the work once)."""
    solve = task.files.get("solution/solve.sh")
    return [f"bash <<'AES_SOLVE'\n{solve.text}\nAES_SOLVE"] if solve else []


def create(path: str, command: str) -> str:
    """A shell line that runs ``command`` (which makes ``path``) once ``path``'s directory exists,
    unless ``path`` exists already."""
    return f"[ -e {q(path)} ] || {{ mkdir -p \"$(dirname {q(path)})\" && {command}; }}"


def write(path: str, text: str, *, executable: bool = False) -> str:
    line = f"mkdir -p \"$(dirname {q(path)})\" && printf %s {q(text)} > {q(path)}"
    return line + (f" && chmod +x {q(path)}" if executable else "")


def write_scripts(task: Task, python: str, bash: str) -> list[str]:
    """Shell lines that replace every script the task asks for: the ``python`` text for a Python
    one, the ``bash`` text for a shell one, each made executable."""
    return [write(p, python if p.endswith(".py") else bash, executable=True) for p in scripts(task)]


# -- positive controls --------------------------------------------------------------------------
def script_control(task: Task, body: str) -> Task:
    """``task`` with a test.sh running ``body`` (Python, isolated) that pays 1 when it exits 0."""
    return task.with_files({"tests/test.sh": reward_if("python3 -I /tests/control.py"), "tests/control.py": body})


def nonempty_control(task: Task, paths: list[str]) -> Task:
    """Pays when every path exists and is not empty (a file with bytes, a directory with entries)."""
    return script_control(task, f'''import os, sys
for p in {paths!r}:
    if os.path.isdir(p):
        ok = bool(os.listdir(p))
    else:
        ok = os.path.isfile(p) and os.path.getsize(p) > 0
    if not ok:
        sys.exit(f"{{p}} is missing or empty")
''')


def format_control(task: Task, paths: list[str], *, numeric_rows: bool = False) -> Task:
    """Pays when every output has the right form: JSON parses, a CSV has a header and rows (with a
    number in the last column when ``numeric_rows``), an archive opens, anything else is not empty."""
    return script_control(task, f'''import csv, json, os, sys, tarfile, zipfile
for p in {paths!r}:
    if os.path.isdir(p):
        continue
    if not (os.path.isfile(p) and os.path.getsize(p) > 0):
        sys.exit(f"{{p}} is missing or empty")
    if p.endswith(".json"):
        json.load(open(p))
    elif p.endswith(".csv"):
        rows = [r for r in csv.reader(open(p)) if r]
        assert len(rows) >= 2 and len(rows[0]) >= 2, p
        if {numeric_rows!r}:
            assert all(r[-1].strip().lstrip("-").isdigit() for r in rows[1:]), p
    elif p.endswith(".zip"):
        assert zipfile.is_zipfile(p), p
    elif p.endswith((".tar.gz", ".tgz", ".tar.xz", ".tar")):
        tarfile.open(p).close()
''')


def isolation_off_control(task: Task) -> Task | None:
    """``task`` with the checks running the agent's code as the verifier's own user (the
    protection of test_outputs.py switched off): what a verifier without it pays."""
    source = task.files.get("tests/test_outputs.py")
    if source is None or "ISOLATE_AGENT_CODE = True" not in source.text:
        return None
    return task.with_files({"tests/test_outputs.py": source.text.replace("ISOLATE_AGENT_CODE = True", "ISOLATE_AGENT_CODE = False")})
