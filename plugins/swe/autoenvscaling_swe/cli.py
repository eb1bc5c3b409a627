"""``autoenvscaling swe ...``: the seed repositories, and instances generated from any repository."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import click


@click.group()
def swe() -> None:
    """The swe domain: bug-fix tasks (SWE-bench style) from Python repositories."""


@swe.command("repos")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array.")
def repos_cmd(as_json: bool) -> None:
    """List the seed repositories: size, tests, mutation sites and fix commits."""
    from .inject import SiteIndex
    from .repos import open_repository, seed_names
    from .verifier.swe_verify import is_test_path

    rows: list[dict[str, Any]] = []
    for name in seed_names():
        repo = open_repository(name)
        snap = repo.snapshot()
        tests = sum(data.count(b"\ndef test_") + data.startswith(b"def test_") for path, data in snap.files.items()
                    if is_test_path(path) and path.endswith(".py"))
        code = sum(src.count("\n") for src in snap.python_sources.values())
        rows.append({"name": name, "path": str(repo.path), "commit": snap.commit, "code_lines": code, "tests": tests,
                     "mutation_sites": SiteIndex(snap).counts(), "fix_commits": len(repo.fix_commits(snap.commit))})
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for r in rows:
        click.echo(f"{r['name']:<10} {r['code_lines']:>5} lines  {r['tests']:>3} tests  "
                   f"{sum(r['mutation_sites'].values()):>4} mutation sites  {r['fix_commits']} fix commits  {r['path']}")


@swe.command("generate")
@click.option("--repo", "repo_spec", required=True, help="A seed name, a local path or a git URL.")
@click.option("--commit", default=None, help="The commit to start from (default: HEAD).")
@click.option("-n", "count", type=click.IntRange(min=1), default=10, show_default=True, help="Instances to generate.")
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Suite directory to write into.")
@click.option("--level", type=click.IntRange(0, 3), default=1, show_default=True,
              help="Mutations per bug (the mutation strategy's difficulty); 0: one single-token mutation "
                   "with a visible failing test.")
@click.option("--strategy", type=click.Choice(["mutation", "llm", "history"]), default="mutation", show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="First seed; instance i uses seed+i.")
@click.option("--backend", default="bwrap", show_default=True, help="Sandbox backend the suites run in.")
@click.option("--model", default=None, help="LLM for the llm strategy and the issue text (an embedded name or a served model).")
@click.option("--base-url", default=None, help="OpenAI-compatible endpoint of --model.")
@click.option("--validate/--no-validate", default=True, show_default=True,
              help="Run the admission gates before adding an instance to the suite.")
@click.option("--max-attempts", type=click.IntRange(min=1), default=40, show_default=True,
              help="Candidate bugs tried per instance.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def generate_cmd(repo_spec: str, commit: str | None, count: int, out: Path, level: int, strategy: str, seed: int,
                 backend: str, model: str | None, base_url: str | None, validate: bool, max_attempts: int,
                 as_json: bool) -> None:
    """Generate COUNT instances from one repository into the suite OUT. Resumable: seeds whose task
    is already in OUT are skipped; every attempt is logged to OUT/swe-attempts.jsonl."""
    summary = asyncio.run(_generate(repo_spec, commit, count, out, level=level, strategy=strategy, seed=seed,
                                    backend_name=backend, model=model, base_url=base_url, validate=validate,
                                    max_attempts=max_attempts, quiet=as_json))
    if as_json:
        click.echo(json.dumps(summary, indent=2))
        return
    click.echo(f"{summary['admitted']} instance(s) added to {out} ({summary['skipped']} already there), "
               f"{summary['rejected_by_gates']} rejected by the gates, {summary['errors']} infrastructure errors, "
               f"{summary['attempts']} candidates screened in {summary['seconds']:.0f}s")
    for op, row in sorted(summary["by_operator"].items()):
        click.echo(f"  {op:<18} {row['admitted']:>4}/{row['tried']:<4} admitted by screening")


async def _generate(repo_spec: str, commit: str | None, count: int, out: Path, *, level: int, strategy: str,
                    seed: int, backend_name: str, model: str | None, base_url: str | None, validate: bool,
                    max_attempts: int, quiet: bool) -> dict[str, Any]:
    import time

    from autoenvscaling.api import (LLMSpec, SandboxError, SuiteStore, Validator, create_host, make_backend,
                                    qualified_name)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from .generate import GenerateSettings, SweGenerator
    from .render import instance_name, render
    from .repos import open_repository

    start = time.monotonic()
    host = create_host()
    repository = open_repository(repo_spec)
    snapshot = repository.snapshot(commit)
    llm = None
    if model is not None:
        spec = LLMSpec(model=model, base_url=base_url)
        spec.check(host)
        llm = spec.build(host)
    backend = make_backend(backend_name, host)
    validator = Validator(host=host, backend=backend) if validate else None
    settings = GenerateSettings(max_attempts=max_attempts, llm=llm)
    log_path = Path(out) / "swe-attempts.jsonl"
    added = skipped = rejected = errors = 0
    attempts_before = 0
    with SuiteStore(out, name=f"swe-{snapshot.name}") as store, \
            Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                     disable=quiet) as progress:
        bar = progress.add_task(f"swe {snapshot.name}", total=count)
        try:
            async with SweGenerator(backend, repository, snapshot, settings=settings) as generator:
                for i in range(count):
                    instance: Any = "skip"
                    if qualified_name(instance_name(snapshot.name, strategy, level, seed + i)) not in store:
                        try:
                            instance = await generator.instance(seed=seed + i, level=level, strategy=strategy)
                        except SandboxError as exc:  # this seed's infrastructure failure; the batch goes on
                            progress.console.print(f"seed {seed + i}: {exc.message}")
                            errors += 1
                            instance = None
                    with log_path.open("a", encoding="utf-8") as log:
                        for attempt in generator.attempts[attempts_before:]:
                            log.write(json.dumps({"seed": seed + i, **attempt.as_dict()}) + "\n")
                    attempts_before = len(generator.attempts)
                    progress.advance(bar)
                    if instance == "skip":
                        skipped += 1
                        continue
                    if instance is None:
                        continue
                    task = render(instance)
                    report = await validator.validate(task) if validator is not None else None
                    if report is not None and not report.valid:
                        rejected += 1
                        progress.console.print(f"rejected {task.name}: {report.reason}")
                        continue
                    store.add(task, report)
                    added += 1
                attempts = list(generator.attempts)
        finally:
            await backend.aclose()
            if llm is not None:
                await llm.aclose()
    return {"repo": snapshot.name, "commit": snapshot.commit, "admitted": added, "skipped": skipped,
            "rejected_by_gates": rejected, "errors": errors, "attempts": len(attempts), "seconds": round(time.monotonic() - start, 1),
            "by_operator": admission_by_operator(attempts), "by_reason": dict(Counter(a.reason for a in attempts))}


def admission_by_operator(attempts: list[Any]) -> dict[str, dict[str, int]]:
    """Screening admissions per operator (each operator of a k-mutation bug counts; a bug made without
    operators counts under its strategy)."""
    table: dict[str, dict[str, int]] = {}
    for a in attempts:
        for k in a.operators or [a.strategy]:
            row = table.setdefault(k, {"tried": 0, "admitted": 0})
            row["tried"] += 1
            row["admitted"] += int(a.admitted)
    return table
