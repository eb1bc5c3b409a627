"""``autoenvscaling tasks validate|run``: admission gates and single attempts over task directories.

``validate --json`` prints a JSON array, one object per task in the order given, with at least
``task``, ``name``, ``status``, ``reason`` and ``gates`` [{name, status, seconds, evidence}] (a
stable contract: docs/architecture.md, The command-line contract). ``run --json`` prints one
object per task with ``path``, ``task``, ``agent``, ``status`` ("ok" | "error" | "timeout" |
"invalid"), ``reward``, ``rewards``, ``seconds``, ``error``, ``commands``, ``cause`` (the first real
error behind a reward below 1, or null) and ``reason`` (one line: the error, or the score and its
cause). An oracle run on a task
without solution/solve.sh is status "error". Exit 0 when the batch ran, whatever the verdicts.
"""

from __future__ import annotations

import asyncio
import json
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Literal

import click

from ..executors.sizing import default_jobs
from .redteam_cmd import add_redteam_command

if TYPE_CHECKING:
    from ..executors.jobs import AgentSpec

Network = Literal["none", "task"]  # --network: SandboxPolicy.network


def _backend_options(fn: Any) -> Any:
    fn = click.option("--network", type=click.Choice(["none", "task"]), default="none", show_default=True,
                      help="none: loopback only; task: grant the internet to tasks that set allow_internet.")(fn)
    fn = click.option("--backend", "backend_name", default="bwrap", show_default=True,
                      help="Sandbox backend: bwrap, docker, or one a plugin registers.")(fn)
    fn = click.option("--jobs", "-j", type=click.IntRange(min=1), default=default_jobs, show_default="this machine's cores",
                      help="Tasks handled at once (worker processes, or Ray jobs in flight).")(fn)
    fn = click.option("--executor", "executor_name", default="local", show_default=True,
                      help="Where tasks run: local (worker processes), ray, or an executor a plugin registers.")(fn)
    fn = click.option("--ray-address", default=None,
                      help="Ray cluster to join with --executor ray (default: a local one).")(fn)
    return fn


def _executor(host: Any, name: str, jobs: int, address: str | None) -> Any:
    """The executor registered as ``name`` (PluginError listing the registered ones otherwise)."""
    return host.executors.get(name)(concurrency=jobs, address=address)


@click.group()
def tasks() -> None:
    """Validate task directories; run agents on them."""


@tasks.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array of reports.")
@_backend_options
@click.option("--skip", multiple=True, metavar="GATE", help="Skip a gate (repeatable), e.g. --skip flaky.")
@click.option("--flaky-runs", type=click.IntRange(min=1), default=None, help="Oracle runs in the flakiness gate (default 3).")
@click.option("--held-out", type=click.Path(exists=True, path_type=Path), default=None,
              help="Held-out texts for decontamination: JSONL, JSON, text (one per line) or task directories.")
@click.option("--suite", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="Existing suite (folder of tasks) to check near-duplicates against.")
def validate_cmd(paths: tuple[Path, ...], as_json: bool, backend_name: str, jobs: int, executor_name: str,
                 ray_address: str | None, network: Network, skip: tuple[str, ...], flaky_runs: int | None,
                 held_out: Path | None, suite: Path | None) -> None:
    """Run the admission gates over PATH... (task directories, or folders of them)."""
    from ..gates.base import GateSettings
    from ..gates.text import load_held_out
    from ..gates.validate import Validator, discover_tasks
    from ..plugins import create_host
    from ..tasks.harbor import read_task

    task_dirs = discover_tasks(paths)
    host = create_host()
    host.sandbox_backends.entry(backend_name)  # a misspelt --backend fails even when no gate needs a sandbox
    overrides: dict[str, Any] = {"skip": tuple(skip)}
    if flaky_runs is not None:
        overrides["flaky_runs"] = flaky_runs
    settings = GateSettings(**overrides)
    held = load_held_out(held_out) if held_out else []
    suite_tasks = [read_task(p) for p in discover_tasks([suite]) if (p / "task.toml").is_file()] if suite else []
    # Build the validator before the backend so a misspelt --skip fails before anything heavy starts.
    validator = Validator(host=host, settings=settings, suite_tasks=suite_tasks, held_out=held, backend_name=backend_name,
                          catalog=_catalog(host, network))
    executor = _executor(host, executor_name, jobs, ray_address)
    if validator.needs_sandbox_for(task_dirs):  # lint and text gates alone need no sandbox
        validator.use_backend(_make_backend(host, backend_name, network))
    reports = asyncio.run(_validate(validator, task_dirs, executor, show_progress=not as_json))
    if as_json:
        click.echo(json.dumps([r.to_json() for r in reports], indent=2))
    else:
        _print_table(reports)


async def _validate(validator: Any, task_dirs: list[Path], executor: Any, *, show_progress: bool) -> list[Any]:
    from ..gates.validate import validate_many

    order = {str(p): i for i, p in enumerate(task_dirs)}
    reports = []
    try:
        with progress_bar("validating", len(task_dirs), enabled=show_progress) as advance:
            async for report in validate_many(task_dirs, validator=validator, executor=executor,
                                              progress=lambda r: advance(f"{r.name}: {r.status}")):
                reports.append(report)
    finally:
        await executor.aclose()
    if validator.backend is not None:
        await validator.backend.aclose()
    return sorted(reports, key=lambda r: order.get(r.task, len(order)))


@contextmanager
def progress_bar(label: str, total: int, *, enabled: bool) -> Iterator[Callable[[str], None]]:
    """A rich progress bar on stderr (stdout stays clean for the table or JSON); yields advance(description)."""
    if not enabled:
        yield lambda description: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.description}"), console=Console(stderr=True), transient=True) as bar:
        task_id = bar.add_task("", total=total)
        yield lambda description: bar.update(task_id, advance=1, description=description)


def _print_table(reports: list[Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    colours = {"valid": "green", "invalid": "red", "error": "magenta", "timeout": "yellow"}
    table = Table(show_lines=False)
    for column in ("task", "status", "reason", "seconds"):
        table.add_column(column, overflow="fold")
    for r in reports:
        table.add_row(r.name, f"[{colours.get(r.status, 'white')}]{r.status}[/]", r.reason, f"{r.seconds:.1f}")
    console = Console()
    console.print(table)
    counts = {s: sum(r.status == s for r in reports) for s in ("valid", "invalid", "error", "timeout")}
    console.print(", ".join(f"{n} {s}" for s, n in counts.items() if n) or "no tasks")


def _catalog(host: Any, network: Network) -> Any:
    """The registered backends' capabilities here, under the policy the command line chose."""
    from ..sandbox.base import SandboxPolicy
    from ..sandbox.select import BackendCatalog

    return BackendCatalog(host, SandboxPolicy(network=network))


def _make_backend(host: Any, name: str, network: Network) -> Any:
    from ..sandbox.base import SandboxPolicy
    from ..sandbox.select import make_backend

    return make_backend(name, host, SandboxPolicy(network=network))


@tasks.command("run")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--agent", "agent_name", default="oracle", show_default=True, help="oracle, nop, or a registered agent.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array of trial summaries.")
@click.option("--artifacts", "artifacts_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Collect each task's `artifacts` (task.toml) after verification into DIR/<task>/, with a manifest.json.")
@_backend_options
def run_cmd(paths: tuple[Path, ...], agent_name: str, as_json: bool, artifacts_dir: Path | None, backend_name: str,
            jobs: int, executor_name: str, ray_address: str | None, network: Network) -> None:
    """Run one attempt of AGENT on each task in PATH... and print the rewards."""
    from ..errors import UsageError
    from ..gates.validate import discover_tasks
    from ..plugins import create_host

    task_dirs = discover_tasks(paths)
    host = create_host()
    from ..executors.jobs import AgentSpec, SolverSpec

    agent_cls = host.agents.get(agent_name)
    if agent_name == "solver":  # built in each worker from its spec (the embedded model), with every registered tool
        agent = AgentSpec(name="solver", solver=SolverSpec())
    else:
        try:
            agent_cls()
        except TypeError as exc:
            raise UsageError(f"agent {agent_name!r} cannot be built without configuration: {exc}",
                             hint="use oracle, nop or solver here; served LLM solvers run through the flywheel") from None
        agent = AgentSpec(name=agent_name)
    executor = _executor(host, executor_name, jobs, ray_address)
    backend = _make_backend(host, backend_name, network)
    catalog = _catalog(host, network)
    catalog.attach(backend)
    rows = asyncio.run(_run(backend, agent, task_dirs, executor, catalog, host, artifacts_dir))
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table()
    for column in ("task", "status", "reward", "rewards", "seconds", "reason"):
        table.add_column(column, overflow="fold")
    for row in rows:
        rewards = ", ".join(f"{k}={v:g}" for k, v in row["rewards"].items())
        table.add_row(row["task"], row["status"], f"{row['reward']:g}", rewards, f"{row['seconds']:.1f}", row["reason"])
    Console().print(table)


async def _run(backend: Any, agent: AgentSpec, task_dirs: list[Path], executor: Any, catalog: Any,
               host: Any, artifacts_dir: Path | None = None) -> list[dict[str, Any]]:
    """Tasks are read and checked for their requirements here; the attempts run as jobs on the
    executor's workers, each with the agent by name and the backend by name and policy. With
    ``artifacts_dir``, each trial's artifacts are written under it (row key ``artifacts``: the manifest)."""
    from ..errors import TaskFormatError
    from ..executors.jobs import AttemptJob, TaskRef, WorkerSetup
    from ..gates.lint import summarise
    from ..gates.requirements import unmet_requirements
    from ..runtime.artifacts import ARTIFACTS_LIMIT, write_artifacts
    from ..runtime.trial import TrialResult, trial_summary
    from ..tasks.harbor import read_task

    rows: dict[int, dict[str, Any]] = {}
    jobs = []
    setup = WorkerSetup.of(host, backend)
    for i, path in enumerate(task_dirs):
        try:
            task = read_task(path)
        except TaskFormatError as exc:
            rows[i] = _failed_row(path, agent.name, "invalid", exc.message)
            continue
        unmet = unmet_requirements(task, backend.name, catalog)
        if unmet:  # never run a task without what it needs (a GPU, its services): say what would work
            rows[i] = _failed_row(path, agent.name, "error", summarise(unmet, "unmet requirement"))
            continue
        jobs.append(AttemptJob(key=str(i), setup=setup, task=TaskRef.at(path), agent=agent,
                               artifacts_limit=ARTIFACTS_LIMIT if artifacts_dir is not None else 0))
    try:
        async for result in executor.map(jobs):
            i = int(result.key)
            value = result.value
            rows[i] = ({"path": str(task_dirs[i]), **trial_summary(value)} if result.ok and isinstance(value, TrialResult)
                       else _failed_row(task_dirs[i], agent.name, "error", str(result.error)))
            if artifacts_dir is not None and isinstance(value, TrialResult) and value.artifacts:
                folder = artifacts_dir / f"{i:04d}-{_safe_name(value.task)}"
                rows[i]["artifacts"] = str(write_artifacts(value.artifacts, folder))
    finally:
        await executor.aclose()
        await backend.aclose()
    return [rows[i] for i in sorted(rows)]


def _safe_name(name: str) -> str:
    """A task name as one folder name ("org/name" -> "org-name")."""
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in name).strip(".") or "task"


def _failed_row(path: Path, agent: str, status: str, error: str) -> dict[str, Any]:
    """The row of a task that could not be attempted: the same fields as trial_summary's."""
    return {"path": str(path), "task": path.name, "agent": agent, "status": status, "reward": 0.0, "rewards": {},
            "seconds": 0.0, "error": error, "commands": 0, "cause": None, "reason": error, "verifier_view": []}


add_redteam_command(tasks, _backend_options, _executor, _make_backend, _catalog)
