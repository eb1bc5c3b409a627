"""Deterministic kill points: a real CLI command SIGKILLed right after one of its durable commits,
run again (resumed), killed right after a later one, ... until it finishes (docs/testing.md).

A kill point is a call that makes something durable (a row committed in the suite's index or in
run.sqlite, a task folder renamed into place, a file written, dataset.toml or the report replaced),
named by what it committed (``index-insert:alpha``, ``unit:r01-s000``, ``manifest:<hash of the
text>``); ``POINTS`` lists them. The child, ``python tests/killpoints.py SPEC -- ARGS`` (ARGS as
given to ``autoenvscaling``, run by the entry point's ``main``), wraps the functions the spec names,
logs each commit as it returns, and SIGKILLs itself at the first commit whose position in the
reference run (the same command, uninterrupted) is at or past the spec's target: the code after the
commit never runs. ``KillPoints.chain`` starts the command with target 0, then resumes it with the
target just past the last kill, until a run ends by itself. So every kill lands on a later commit of
the reference; a commit is skipped only when the resumed run does not make it again. A repair on
open that makes the same commit (a pending row made ready) counts as that commit: it leaves the same
state. Nothing in the project knows about this: the wrappers are installed by this file, in the
child only.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve()
# A staging name of write_task, staged_dir and replace_file: ".<name>.tmp-<hex>" (".old-" when moved aside).
_STAGED = re.compile(r"^\.(.+)\.(?:tmp|old)-[0-9a-f]+$")


def _file_key(args: tuple[Any, ...], caller: str) -> str | None:
    """A file written inside a staging folder: its task folder and name, the staging suffix dropped.
    Only task.toml (the first file of a task folder) and dataset.toml count: one point per folder."""
    parts = [(m.group(1) if (m := _STAGED.match(p)) else p) for p in Path(args[0]).parts]
    return "/".join(parts[-2:]) if parts[-1] in ("task.toml", "dataset.toml") else None


def _units_recorded(db: Any) -> int:
    return int(db.db.execute("SELECT COUNT(*) FROM proposals").fetchone()[0])


@dataclass(frozen=True)
class Point:
    """A kind of commit: the functions that make it (``module:attribute``, the name as the caller
    looks it up) and the identity of one commit from the call's arguments and the name of the
    calling function (None: not a point)."""

    targets: tuple[str, ...]
    key: Callable[[tuple[Any, ...], str], str | None]


POINTS: dict[str, Point] = {
    # The suite (store.py): a pending row, the task folder renamed into place, the row made ready,
    # dataset.toml replaced; a row deleted (a task leaving the pool, or a repair).
    "index-insert": Point(("autoenvscaling.suite.index:SuiteIndex.insert",), lambda a, c: a[1].name),
    "task-dir": Point(("autoenvscaling.suite.store:write_task",), lambda a, c: Path(a[1]).name),
    "index-ready": Point(("autoenvscaling.suite.index:SuiteIndex.mark_ready",), lambda a, c: a[1]),
    # Only a removal (a task leaving the pool): the repairs done on open delete rows of the same name.
    "index-delete": Point(("autoenvscaling.suite.index:SuiteIndex.delete",),
                          lambda a, c: a[1] if c == "remove" else None),
    "manifest": Point(("autoenvscaling.suite.store:atomic_write",), lambda a, c: hashlib.sha256(a[1]).hexdigest()[:16]),
    # A task folder half written: its first file, in the staging folder (suite adds and exports).
    "file": Point(("autoenvscaling.tasks.harbor:write_synced", "autoenvscaling.suite.harbor_format:write_synced"),
                  _file_key),
    # The run database (rundb.py): a phase A outcome kept, a unit (with its round's seconds), a review,
    # a round's metrics; the report.
    "pending": Point(("autoenvscaling.flywheel.rundb:RunDB.keep_outcome",), lambda a, c: a[1]),
    "unit": Point(("autoenvscaling.flywheel.rundb:RunDB.record_unit",), lambda a, c: a[1].key),
    "review": Point(("autoenvscaling.flywheel.rundb:RunDB.record_review",), lambda a, c: f"{a[1].round}/{a[1].key}"),
    "metrics": Point(("autoenvscaling.flywheel.rundb:RunDB.set_metrics",), lambda a, c: str(a[1])),
    "report": Point(("autoenvscaling.report.html:atomic_write",), lambda a, c: Path(a[0]).name),
    # Exports: a task folder written into the staging folder, a row built, the export complete.
    "export-task": Point(("autoenvscaling.suite.harbor_format:write_task",), lambda a, c: Path(a[1]).name),
    "row": Point(("autoenvscaling.suite.rows:task_to_row",), lambda a, c: a[0].name),
    "export": Point(("autoenvscaling.suite.harbor_format:HarborFormat.write",
                     "autoenvscaling.suite.rows:JsonlFormat.write"), lambda a, c: Path(a[2]).name),
}


# -- the child ------------------------------------------------------------------------------------
def _install(spec: dict[str, Any]) -> None:
    import importlib

    log = os.open(spec["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    position = {ident: i for i, ident in enumerate(spec["reference"])}
    target: int | None = spec["target"]

    def commit(ident: str) -> None:
        os.write(log, f"commit {ident}\n".encode())
        if target is not None and position.get(ident, -1) >= target:
            os.write(log, f"kill {ident}\n".encode())
            os.kill(os.getpid(), signal.SIGKILL)

    def wrap(fn: Callable[..., Any], name: str, point: Point) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            result = fn(*args, **kwargs)
            key = point.key(args, sys._getframe(1).f_code.co_name)
            if key is not None:
                commit(f"{name}:{key}")
            return result

        return wrapper

    wanted = [(name, where) for name in spec["points"] for where in POINTS[name].targets]
    for _, where in wanted:  # all first: a module importing a name from another gets the original
        importlib.import_module(where.partition(":")[0])
    for name, where in wanted:
        module_name, _, attr = where.partition(":")
        owner: Any = sys.modules[module_name]
        *path, leaf = attr.split(".")
        for part in path:
            owner = getattr(owner, part)
        setattr(owner, leaf, wrap(getattr(owner, leaf), name, POINTS[name]))
    if spec.get("toy"):
        # The toy domain as the one installed plugin (its module travels to the worker processes).
        import autoenvscaling.plugins as plugins
        from autoenvscaling.testing import toy

        create_host = plugins.create_host

        def toy_host(**kwargs: Any) -> Any:
            return create_host(**{**kwargs, "entrypoints": False, "plugins": [toy, *(kwargs.get("plugins") or [])]})

        plugins.create_host = toy_host


def _child(argv: list[str]) -> None:
    spec_path, sep, *args = argv
    assert sep == "--", argv
    _install(json.loads(Path(spec_path).read_text()))
    from autoenvscaling.cli.main import main

    main(args)


# -- the test side --------------------------------------------------------------------------------
@dataclass
class Chain:
    """What a kill chain did: the reference run's commits, and where each kill landed."""

    reference: list[str]
    kills: list[str] = field(default_factory=list)

    @property
    def skipped(self) -> list[str]:
        """Reference commits no kill landed on (reached only inside work a resume redid)."""
        return [c for c in self.reference if c not in self.kills]


class KillPoints:
    """Runs ``autoenvscaling ARGS`` in child processes under the kill-point hooks, in ``workdir``
    (spec, commit log and output files per step: read them when a chain fails)."""

    def __init__(self, workdir: Path, points: list[str], *, toy: bool = False, timeout: float = 600) -> None:
        self.workdir = workdir
        self.points = points
        self.toy = toy
        self.timeout = timeout
        self.steps = 0
        workdir.mkdir(parents=True, exist_ok=True)

    def run(self, args: list[str], *, reference: list[str] | None = None,
            target: int | None = None) -> tuple[subprocess.CompletedProcess[str], list[str], str | None]:
        """One child: the process, the commits it logged, and the one it was killed at (None: none)."""
        self.steps += 1
        log = self.workdir / f"step-{self.steps}.log"
        spec = self.workdir / f"step-{self.steps}.json"
        spec.write_text(json.dumps({"points": self.points, "reference": reference or [], "target": target,
                                    "log": str(log), "toy": self.toy}))
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        started = time.monotonic()
        done = subprocess.run([sys.executable, str(HERE), str(spec), "--", *args], capture_output=True, text=True,
                              timeout=self.timeout, env=env)
        (self.workdir / f"step-{self.steps}.out").write_text(
            f"{args}\nrc={done.returncode} after {time.monotonic() - started:.1f} s\n{done.stdout}\n{done.stderr}")
        lines = [line.split(" ", 1) for line in (log.read_text().splitlines() if log.exists() else [])]
        kills = [ident for what, ident in lines if what == "kill"]
        return done, [ident for what, ident in lines if what == "commit"], kills[-1] if kills else None

    def reference(self, args: list[str]) -> list[str]:
        """The commits of the uninterrupted command, in order (each one once: its identity says what it committed)."""
        done, commits, _ = self.run(args)
        assert done.returncode == 0, done.stderr[-3000:]
        assert len(set(commits)) == len(commits), [c for c in commits if commits.count(c) > 1]
        return commits

    def chain(self, first: list[str], resume: list[str], reference: list[str],
              finished: Callable[[], bool] = lambda: False, *, each_kind_once: bool = False) -> Chain:
        """Kill ``first`` at the reference's first commit, then run ``resume`` killed at each later
        commit it reaches, until a run ends by itself (or ``finished()`` says a kill came after the
        command's last effect). Every run must end killed or with status 0. ``each_kind_once``: the
        targets are only the first commit of each kind (``unit``, ``review``, ... : the name before
        the colon), one kill per kind instead of one per commit."""
        chain = Chain(reference=reference)
        targets = list(range(len(reference)))
        if each_kind_once:
            targets = [i for i, c in enumerate(reference) if kind(c) not in {kind(r) for r in reference[:i]}]
        target, args = targets[0], first
        while True:
            done, _, killed = self.run(args, reference=reference, target=target)
            if done.returncode != -signal.SIGKILL:
                assert done.returncode == 0, f"step {self.steps}: {done.stderr[-3000:]}"
                return chain
            assert killed is not None, f"step {self.steps}: SIGKILLed, but not at a kill point"
            chain.kills.append(killed)
            at = reference.index(killed)
            # past the last target, the resumed run is not killed again: it must end by itself
            target, args = next((i for i in targets if i > at), len(reference)), resume
            if finished():
                return chain


def kind(commit: str) -> str:
    """The kind of a commit: ``unit`` of ``unit:r00-s001``."""
    return commit.split(":", 1)[0]


def tree(root: Path) -> dict[str, tuple[bytes, bool]]:
    """Every file under ``root``: relative path -> (bytes, executable)."""
    return {p.relative_to(root).as_posix(): (p.read_bytes(), bool(p.stat().st_mode & 0o100))
            for p in sorted(root.rglob("*")) if p.is_file()}


@dataclass(frozen=True)
class SuiteState:
    """What a suite holds, to compare a killed and resumed command's suite with the reference's."""

    records: list[tuple[str, str, str | None]]  # (name, digest, key) in admission order
    files: dict[str, tuple[bytes, bool]]  # tasks/ and dataset.toml, byte for byte
    problems: list[str]  # SuiteStore.verify(): the index against the files and dataset.toml
    strays: list[str]  # entries of tasks/ no record names (temporary or partial folders), quarantine/


def suite_state(root: Path) -> SuiteState:
    """The suite at ``root`` as the command left it (files read before opening it repairs anything)."""
    from autoenvscaling.suite.store import SuiteStore

    files = {**tree(root / "tasks"), "dataset.toml": ((root / "dataset.toml").read_bytes(), False)}
    entries = sorted(p.name for p in (root / "tasks").iterdir())
    entries += ["quarantine"] if (root / "quarantine").exists() else []
    with SuiteStore.open(root) as suite:
        records = suite.filter()
        problems = suite.verify()
    return SuiteState(records=[(r.name, r.digest, r.key) for r in records], files=files, problems=problems,
                      strays=[e for e in entries if e not in {r.dir for r in records}])


if __name__ == "__main__":
    _child(sys.argv[1:])
