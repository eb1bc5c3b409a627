"""``autoenvscaling tasks redteam``: every registered cheat against a folder of tasks, as a table."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import click


def add_redteam_command(tasks: click.Group, backend_options: Any, make_executor: Any, make_backend: Any,
                        make_catalog: Any) -> None:
    @tasks.command("redteam")
    @click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
    @click.option("--cheat", "cheat_names", multiple=True, metavar="NAME",
                  help="Run only this cheat (repeatable); default: every cheat that applies.")
    @click.option("--gate-only", is_flag=True, help="Only the cheap cheats the red-team gate runs.")
    @click.option("--controls", is_flag=True,
                  help="Also run each cheat on its positive control (a naive verifier it must fool).")
    @click.option("--list", "list_only", is_flag=True, help="List the registered cheats and exit.")
    @click.option("--json", "as_json", is_flag=True, help="Print a JSON array, one object per task.")
    @backend_options
    def redteam_cmd(paths: tuple[Path, ...], cheat_names: tuple[str, ...], gate_only: bool, controls: bool,
                    list_only: bool, as_json: bool, backend_name: str, jobs: int, executor_name: str,
                    ray_address: str | None, network: str) -> None:
        """Run the cheats (scripted reward hacks) against each task in PATH... and print a task x cheat
        table of rewards with the worst cheat per task. A cheat at or above 0.5 beats the task."""
        from ..errors import UsageError
        from ..gates.validate import discover_tasks
        from ..plugins import create_host

        host = create_host()
        if list_only:
            _list(host, as_json)
            return
        if not paths:
            raise UsageError("no task given", hint="autoenvscaling tasks redteam DIR (a task or a folder of tasks)")
        for name in cheat_names:
            if name not in host.cheats:
                raise UsageError(f"unknown cheat {name!r}", hint="`autoenvscaling tasks redteam --list` names them")
        task_dirs = discover_tasks(paths)
        executor = make_executor(host, executor_name, jobs, ray_address)
        backend = make_backend(host, backend_name, network)
        catalog = make_catalog(host, network)
        catalog.attach(backend)
        rows = asyncio.run(_redteam(host, backend, task_dirs, executor, catalog, names=cheat_names or None,
                                    gate_only=gate_only, controls=controls, progress=not as_json))
        if as_json:
            click.echo(json.dumps([r.to_json() for r in rows], indent=2))
        else:
            print_table(rows)


def _list(host: Any, as_json: bool) -> None:
    entries = []
    for entry in host.cheats.entries():
        cls = host.cheats.get(entry.name)
        entries.append({"name": entry.name, "plugin": entry.plugin, "domain": cls.domain, "gate": cls.gate,
                        "description": cls.summary()})
    if as_json:
        click.echo(json.dumps(entries, indent=2))
        return
    for e in entries:
        click.echo(f"{e['name']:<40} {e['domain'] or 'any':<14} {'gate' if e['gate'] else '    '}  {e['description']}")


async def _redteam(host: Any, backend: Any, task_dirs: list[Path], executor: Any, catalog: Any, *,
                   names: tuple[str, ...] | None, gate_only: bool, controls: bool, progress: bool) -> list[Any]:
    """One attempt per (task, cheat) (and per control), run as jobs on the executor's workers."""
    from ..errors import TaskFormatError
    from ..executors.jobs import AgentSpec, AttemptJob, TaskRef, WorkerSetup
    from ..gates.lint import summarise
    from ..gates.requirements import unmet_requirements
    from ..redteam.run import CheatOutcome, RedTeamRow, cheats_for, outcome
    from ..runtime.trial import TrialResult
    from ..tasks.harbor import read_task
    from .tasks_cmd import progress_bar

    setup = WorkerSetup.of(host, backend)
    rows: dict[int, dict[str, Any]] = {}
    jobs = []
    for i, path in enumerate(task_dirs):
        try:
            task = read_task(path)
        except TaskFormatError as exc:
            rows[i] = {"task": path.name, "path": str(path), "error": exc.message, "outcomes": []}
            continue
        rows[i] = {"task": task.name, "path": str(path), "error": None, "outcomes": []}
        unmet = unmet_requirements(task, backend.name, catalog)
        if unmet:
            rows[i]["error"] = summarise(unmet, "unmet requirement")
            continue
        for cheat in cheats_for(task, host, names=names, gate_only=gate_only):
            agent = AgentSpec(name=cheat.name, cheat=True)
            jobs.append(AttemptJob(key=f"{i}\t{cheat.name}\t", setup=setup, task=TaskRef.at(path), agent=agent))
            control = cheat.control(task) if controls else None
            if control is not None:
                jobs.append(AttemptJob(key=f"{i}\t{cheat.name}\tcontrol", setup=setup, task=TaskRef.inline(control),
                                       agent=agent))
    try:
        with progress_bar("red team", len(jobs), enabled=progress and bool(jobs)) as advance:
            async for result in executor.map(jobs):
                i, cheat, kind = result.key.split("\t")
                value = result.value
                if result.ok and isinstance(value, TrialResult):
                    got = outcome(cheat, value, control=kind == "control")
                else:
                    got = CheatOutcome(cheat=cheat, status="error", error=str(result.error), control=kind == "control")
                rows[int(i)]["outcomes"].append(got)
                advance(f"{rows[int(i)]['task']}: {cheat} {got.status}")
    finally:
        await executor.aclose()
        await backend.aclose()
    for row in rows.values():
        row["outcomes"].sort(key=lambda o: (o.cheat, o.control))
    return [RedTeamRow(**rows[i]) for i in sorted(rows)]


def print_table(rows: list[Any]) -> None:
    """Tasks down, cheats across (numbered; the legend follows), then the worst cheat per task."""
    from rich.console import Console
    from rich.table import Table

    from ..redteam.run import summary_counts

    cheats = sorted({o.cheat for r in rows for o in r.outcomes})
    width = max([len(r.task) for r in rows] + [4]) + 6 * len(cheats) + 40
    console = Console(width=max(width, 100))
    table = Table(padding=(0, 1))
    table.add_column("task", no_wrap=True)
    for n, _ in enumerate(cheats, 1):
        table.add_column(str(n), justify="right", no_wrap=True, min_width=3)
    table.add_column("worst cheat", overflow="fold")
    for row in rows:
        cells = []
        for name in cheats:
            got = [o for o in row.outcomes if o.cheat == name]
            cells.append("/".join(_cell(o) for o in got) if got else "-")
        worst = row.worst
        beaten = worst is not None and worst.status == "beaten"
        cells.append(row.error or (f"[red]{worst.cheat} {worst.reward:g}[/]" if beaten and worst else "none beat it"))
        table.add_row(row.task, *cells)
    console.print(table)
    console.print("cheats: " + ", ".join(f"{n} {name}" for n, name in enumerate(cheats, 1)))
    if any(o.control for r in rows for o in r.outcomes):
        console.print("cells: reward on the task / reward on the cheat's positive control (it must fool that one)")
    counts = summary_counts(rows)
    console.print(f"{counts['tasks']} tasks, {counts['attempts']} cheat attempts: {counts['held']} held, "
                  f"{counts['beaten']} beaten, {counts['errors']} errors")


def _cell(o: Any) -> str:
    text = "err" if o.status == "error" else f"{o.reward:g}"
    colour = {"held": "green", "beaten": "red", "error": "magenta"}[o.status]
    return f"[{colour}]{text}[/]"
