"""SWE-bench instances (JSONL), exported from and imported into swe tasks.

A row has SWE-bench's fields: ``instance_id``, ``repo``, ``base_commit``, ``patch`` (the fix),
``test_patch`` (what adds the tests that decide), ``FAIL_TO_PASS``, ``PASS_TO_PASS`` (JSON lists),
``problem_statement`` (the issue), ``version``, ``environment_setup_commit``, ``hints_text``,
``created_at``. An injected bug is not a commit of the repository, so rows we write also carry
``bug_patch``: applied to ``base_commit`` it gives the repository the agent starts from (the bug in
place, the held-back tests removed); ``patch`` then ``test_patch`` on top give ``base_commit`` back.
Rows without ``bug_patch`` are ordinary SWE-bench instances: the repository at ``base_commit`` is
the starting point.

Import needs the repository offline. ``repo`` (or our ``origin``) is looked up as a seed name, a
local path, or a directory under ``$AUTOENVSCALING_SWE_REPOS`` named like the repo with ``/``
replaced by ``__`` (``psf__requests``) or by its last component.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Iterable, Iterator

from autoenvscaling.api import AESError, Task, TaskFormat, TaskFormatError

REPOS_ENV = "AUTOENVSCALING_SWE_REPOS"
FIELDS = ("instance_id", "repo", "base_commit", "patch", "test_patch", "FAIL_TO_PASS", "PASS_TO_PASS")
IMPORTED_SUITE_TIMEOUT = 300.0  # the verifier's limit for an imported instance (its suite time is unknown)


def row_of(task: Task) -> dict[str, Any]:
    """The SWE-bench row of a swe task."""
    from .gate import BUNDLE, REPO, repo_files
    from .patches import apply_patch, unified_patch
    from .render import read_patch, swe_fields

    swe = swe_fields(task)
    if not swe:
        raise TaskFormatError(f"{task.name} is not a swe task (no [metadata.swe])",
                              hint="export other tasks with --format harbor or jsonl")
    visible, bundle = repo_files(task, REPO), repo_files(task, BUNDLE)
    patch = read_patch(task)
    fixed = apply_patch(visible, patch)
    held_files = sorted({t.split("::")[0] for t in swe.get("held_back", [])})
    test_patch = unified_patch({p: visible.get(p) for p in held_files}, {p: bundle.get(p) for p in held_files})
    original = {**fixed, **{p: bundle.get(p) for p in held_files}}
    bug_patch = unified_patch(original, {p: visible.get(p) for p in original})
    issue = (task.instruction or "").split("\n---\n", 1)[0].strip() + "\n"
    return {"instance_id": swe["instance_id"], "repo": swe["repo"], "base_commit": swe["base_commit"],
            "patch": patch, "test_patch": test_patch, "FAIL_TO_PASS": list(swe["FAIL_TO_PASS"]),
            "PASS_TO_PASS": list(swe["PASS_TO_PASS"]), "problem_statement": issue, "hints_text": "",
            "version": "1.0", "environment_setup_commit": swe["base_commit"], "created_at": "",
            "bug_patch": bug_patch, "origin": swe.get("origin", swe["repo"])}


def _listed(value: Any, field: str, where: str) -> list[str]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise TaskFormatError(f"{where}: {field} is neither a list nor a JSON list") from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TaskFormatError(f"{where}: {field} must be a list of test ids")
    return value


def locate_repo(row: dict[str, Any]) -> str:
    """Where the row's repository is on this machine (see the module docstring)."""
    from .repos import seed_names

    names = [str(row.get("origin") or ""), str(row.get("repo") or "")]
    for name in names:
        if name in seed_names() or name.startswith("seed:") and name[5:] in seed_names():
            return name.removeprefix("seed:")
        if name and Path(name).expanduser().is_dir():
            return name
    root = os.environ.get(REPOS_ENV)
    if root:
        for name in filter(None, names):
            for candidate in (name.replace("/", "__"), name.rstrip("/").rsplit("/", 1)[-1]):
                if (Path(root) / candidate).is_dir():
                    return str(Path(root) / candidate)
    raise TaskFormatError(f"{row.get('instance_id')}: repository {row.get('repo')!r} is not available offline",
                          hint=f"set {REPOS_ENV} to a directory holding a clone named like {str(row.get('repo')).replace('/', '__')!r}")


def task_of(row: dict[str, Any]) -> Task:
    """A swe task from one SWE-bench row."""
    from .patches import PatchError, apply_patch
    from .render import Instance, render
    from .repos import open_repository

    where = str(row.get("instance_id") or "instance")
    missing = [f for f in FIELDS if f not in row]
    if missing:
        raise TaskFormatError(f"{where}: missing {', '.join(missing)}", hint="a SWE-bench row needs " + ", ".join(FIELDS))
    f2p, p2p = _listed(row["FAIL_TO_PASS"], "FAIL_TO_PASS", where), _listed(row["PASS_TO_PASS"], "PASS_TO_PASS", where)
    try:
        repository = open_repository(locate_repo(row))
        snapshot = repository.snapshot(str(row["base_commit"]))
        start = snapshot.with_files(apply_patch(snapshot.files, row["bug_patch"])) if row.get("bug_patch") else snapshot.files
        with_tests = {**start, **{p: d for p, d in apply_patch(start, row["test_patch"]).items() if d is not None}} \
            if row["test_patch"].strip() else dict(start)
        apply_patch(start, row["patch"])  # the fix must apply where the agent starts
    except PatchError as exc:
        raise TaskFormatError(f"{where}: a patch does not apply at {row['base_commit']}: {exc}") from None
    except AESError as exc:
        raise TaskFormatError(f"{where}: {exc.message}", hint=exc.hint) from None
    from .verifier.swe_verify import is_config_path, is_test_path

    bundle = {p: d for p, d in with_tests.items() if is_test_path(p) or is_config_path(p)}
    held = sorted(t for t in f2p if not _defined(start, t))
    name = re.sub(r"[^a-z0-9-]+", "-", str(row["instance_id"]).lower()).strip("-")[:80] or "swe-instance"
    instance = Instance(name=name, repo=str(row["repo"]), origin=repository.origin, base_commit=snapshot.commit,
                        visible=start, bundle=bundle, patch=row["patch"], test_patch=row["test_patch"],
                        bug_patch=row.get("bug_patch", ""), fail_to_pass=f2p, pass_to_pass=p2p, held_back=held,
                        issue=str(row.get("problem_statement") or f"Fix the failing behaviour in {row['repo']}."),
                        level=2, strategy={"kind": "imported", "instance_id": str(row["instance_id"])},
                        suite_timeout=IMPORTED_SUITE_TIMEOUT)
    return render(instance)


def _defined(files: dict[str, bytes], nodeid: str) -> bool:
    from .generate import test_functions, test_path

    file, path = test_path(nodeid)
    return file in files and path in test_functions(files[file].decode("utf-8", "replace"))


class SweBenchFormat(TaskFormat):
    """SWE-bench instances, one JSON object per line."""

    name = "swe-bench"
    description = "SWE-bench instances as JSONL (instance_id, repo, base_commit, patch, test_patch, FAIL_TO_PASS, PASS_TO_PASS)"

    def detect(self, path: Path) -> bool:
        path = Path(path)
        if not path.is_file() or path.suffix not in (".jsonl", ".json"):
            return False
        with path.open(encoding="utf-8") as fh:
            first = fh.readline()
        try:
            row = json.loads(first)
        except ValueError:
            return False
        return isinstance(row, dict) and all(f in row for f in FIELDS)

    def scan(self, path: Path) -> Iterator[Task | TaskFormatError]:
        """One task per row (``read``: the same, stopping at the first error)."""
        with Path(path).open(encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except ValueError as exc:
                    yield TaskFormatError(f"{path}:{number}: not JSON ({exc})")
                    continue
                if not isinstance(row, dict):
                    yield TaskFormatError(f"{path}:{number}: not an object")
                    continue
                try:
                    yield task_of(row)
                except TaskFormatError as exc:
                    yield exc

    def count(self, path: Path) -> int | None:
        with Path(path).open(encoding="utf-8") as fh:
            return sum(1 for line in fh if line.strip())

    def write(self, tasks: Iterable[Task], dest: Path) -> Path:
        dest = Path(dest)
        if dest.is_dir():
            raise TaskFormatError(f"{dest} is a directory", hint="give a file name, e.g. --out instances.jsonl")
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(dest.name + ".tmp")
        with tmp.open("w", encoding="utf-8") as fh:
            for task in tasks:
                fh.write(json.dumps(row_of(task), sort_keys=True) + "\n")
        tmp.replace(dest)
        return dest
