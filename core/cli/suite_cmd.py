"""``autoenvscaling suite import|export|list|stats``: move tasks in and out of suites and look at them.

Formats come from the plugin host's formats registry, so a plugin's format (SWE-bench, KernelBench,
...) works here as soon as it is installed. ``import`` goes on past unreadable tasks and lists them;
it fails only when nothing at all could be read.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

import click

from ..errors import PluginError, TaskFormatError, UsageError

# Tried in this order when --format is omitted; plugin formats follow, by name.
_DETECT_ORDER = ("harbor", "jsonl", "parquet")


def _filter_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    for name, help_text in reversed([
        ("domain", "Only tasks of this domain (repeatable)."),
        ("family", "Only tasks of this generator family (repeatable)."),
        ("difficulty", "Only tasks of this difficulty (repeatable)."),
        ("tag", "Only tasks carrying this tag (repeatable: all must match)."),
        ("status", "Only tasks with this validation status (repeatable)."),
    ]):
        fn = click.option(f"--{name}", multiple=True, help=help_text)(fn)
    return fn


def _task_filter(filters: dict[str, tuple[str, ...]]) -> Any:
    from ..suite.records import TaskFilter

    return TaskFilter(domain=filters["domain"], family=filters["family"], difficulty=filters["difficulty"],
                      tags=filters["tag"], status=filters["status"])


@click.group()
def suite() -> None:
    """Suites: Harbor task directories + dataset.toml + an index (see docs/architecture.md, Suites)."""


@suite.command("import")
@click.argument("sources", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--into", "suite_path", required=True, type=click.Path(path_type=Path),
              help="The suite to add to (created when missing).")
@click.option("--format", "format_name", help="Source format (default: detected per source).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object with what was added.")
def import_cmd(sources: tuple[Path, ...], suite_path: Path, format_name: str | None, as_json: bool) -> None:
    """Import tasks from SOURCES (task dirs, Harbor datasets, JSONL or Parquet rows) into a suite."""
    from ..plugins import create_host
    from ..suite.store import SuiteStore

    host = create_host()
    plan = [(src, _import_format(host, src, format_name)) for src in sources]
    counts = [fmt.count(src) for src, fmt in plan]
    total = sum(c for c in counts if c is not None) if None not in counts else None
    added: list[str] = []
    present: list[str] = []
    errors: list[TaskFormatError] = []
    with SuiteStore(suite_path) as store, store.batch(), _progress("importing", total) as advance:
        for src, fmt in plan:
            for item in fmt.scan(src):
                try:
                    if isinstance(item, TaskFormatError):
                        raise item
                    result = store.add(item)
                    (added if result.new else present).append(result.record.name)
                except TaskFormatError as exc:  # unreadable, or unwritable (e.g. an unsafe file path)
                    errors.append(exc)
                advance()
    if errors and not (added or present):
        raise errors[0]
    if as_json:
        click.echo(json.dumps({"suite": str(store.root), "added": added, "present": present,
                               "errors": [{"error": e.message, "hint": e.hint} for e in errors]}, indent=2))
        return
    for error in errors:
        click.echo(f"skipped: {error.message}", err=True)
    click.echo(f"imported {len(added) + len(present)} tasks into {store.root}: {len(added)} new, "
               f"{len(present)} already present" + (f", {len(errors)} skipped" if errors else ""))


@suite.command("export")
@click.argument("suite_path", type=click.Path(path_type=Path))
@click.option("--format", "format_name", required=True, help="harbor, jsonl, parquet, or a plugin's format.")
@click.option("--out", required=True, type=click.Path(path_type=Path),
              help="Output: a new directory (harbor) or a file (jsonl, parquet).")
@click.option("--org", help="harbor: export tasks named without an org as ORG/NAME, and name the dataset "
                             "ORG/<suite> (Harbor's dataset.toml names everything org/name).")
@_filter_options
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object describing the export.")
def export_cmd(suite_path: Path, format_name: str, out: Path, org: str | None, as_json: bool,
               **filters: tuple[str, ...]) -> None:
    """Export a suite (or the tasks matching the filters) as a Harbor dataset, JSONL or Parquet.

    A Harbor export is a dataset Harbor itself loads: dataset.toml in Harbor's schema, pinning each
    task by Harbor's content hash (check it with `harbor sync OUT`, run it with `harbor run -p OUT`)."""
    from ..plugins import create_host
    from ..suite.harbor_format import HarborFormat
    from ..suite.layout import claim_output
    from ..suite.manifest import harbor_name_ok
    from ..suite.store import SuiteStore

    fmt_cls = create_host().formats.get(format_name)
    if not fmt_cls.can_export:
        raise UsageError(f"format {format_name!r} cannot be exported", hint="choose harbor, jsonl or parquet")
    if org is not None and fmt_cls is not HarborFormat:
        raise UsageError(f"--org applies to --format harbor, not {format_name!r}", hint="drop --org")
    if org is not None and not harbor_name_ok(f"{org}/x"):
        raise UsageError(f"--org {org!r} is not a valid Harbor org",
                         hint="use letters, digits, '.', '_' and '-', starting with a letter or digit")
    with SuiteStore.open(suite_path) as store:
        records = store.filter(_task_filter(filters))
        fmt = (HarborFormat(store.name, store.description, org=org) if fmt_cls is HarborFormat else fmt_cls())
        with _progress("exporting", len(records)) as advance:
            def tasks() -> Iterator[Any]:
                for record in records:
                    yield store.get(record.name)
                    advance()

            with claim_output(out):  # what a killed export of OUT left beside it goes first
                written = fmt.write(tasks(), out)
    if as_json:
        click.echo(json.dumps({"suite": str(store.root), "format": format_name, "out": str(written),
                               "tasks": len(records)}, indent=2))
    else:
        click.echo(f"exported {len(records)} tasks to {written}")


def _query_command(name: str, json_help: str) -> Callable[[Callable[..., Any]], click.Command]:
    """A ``suite`` command that looks at the tasks of SUITE_PATH matching the filter options, and
    prints JSON with ``--json`` (``json_help`` says what it prints)."""
    def decorate(fn: Callable[..., Any]) -> click.Command:
        fn = _filter_options(click.option("--json", "as_json", is_flag=True, help=json_help)(fn))
        return suite.command(name)(click.argument("suite_path", type=click.Path(path_type=Path))(fn))

    return decorate


@_query_command("list", "Print a JSON array, one object per task.")
def list_cmd(suite_path: Path, as_json: bool, **filters: tuple[str, ...]) -> None:
    """List the tasks of a suite with their domain, difficulty, tags and status."""
    from ..suite.store import SuiteStore

    with SuiteStore.open(suite_path) as store:
        records = store.filter(_task_filter(filters))
        rows = [{**r.summary(), "path": str(store.path_of(r))} for r in records]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo("no tasks")
        return
    table = [(r["name"], r["status"], r["domain"] or "-", r["family"] or "-", r["difficulty"] or "-",
              ",".join(r["tags"]) or "-") for r in rows]
    header = ("NAME", "STATUS", "DOMAIN", "FAMILY", "DIFFICULTY", "TAGS")
    widths = [max(len(row[i]) for row in [header, *table]) for i in range(len(header) - 1)]
    for row in [header, *table]:
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1])


@_query_command("stats", "Print a JSON object.")
def stats_cmd(suite_path: Path, as_json: bool, **filters: tuple[str, ...]) -> None:
    """Counts by domain, family, difficulty, category, tag, proposer and status; instruction lengths; size."""
    from ..suite.store import SuiteStore

    with SuiteStore.open(suite_path) as store:
        stats = store.stats(_task_filter(filters))
        name, root = store.name, store.root
    if as_json:
        click.echo(json.dumps({"suite": name, "path": str(root), **stats.model_dump(mode="json")}, indent=2))
        return
    click.echo(f"suite {name} ({root}): {stats.tasks} tasks, {_size(stats.total_bytes)}")
    if stats.instruction_chars:
        click.echo("instruction chars: " + ", ".join(f"{k} {v:g}" for k, v in stats.instruction_chars.items()))
    for label, counts in [("domain", stats.by_domain), ("family", stats.by_family), ("difficulty", stats.by_difficulty),
                          ("category", stats.by_category), ("tag", stats.by_tag), ("proposer", stats.by_proposer),
                          ("status", stats.by_status)]:
        if counts:
            click.echo(f"by {label}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))


def _import_format(host: Any, src: Path, name: str | None) -> Any:
    """The format instance to read ``src`` with: the one named, else the first that detects it."""
    if not src.exists():
        raise UsageError(f"{src}: no such file or directory", hint="pass task directories, datasets or row files")
    if name is not None:
        fmt = host.formats.get(name)()
        if not fmt.can_import:
            raise UsageError(f"format {name!r} cannot be imported", hint=f"known: {', '.join(host.formats.names())}")
        return fmt
    names = [n for n in _DETECT_ORDER if n in host.formats] + [n for n in host.formats.names() if n not in _DETECT_ORDER]
    for candidate in names:
        try:
            fmt = host.formats.get(candidate)()
        except PluginError:  # a plugin format whose extra is missing cannot claim the source
            continue
        if fmt.can_import and fmt.detect(src):
            return fmt
    raise UsageError(f"{src}: cannot tell which format it is", hint=f"pass --format ({', '.join(names)})")


@contextmanager
def _progress(label: str, total: int | None) -> Iterator[Callable[[], None]]:
    """A progress bar on stderr when it is a terminal (silent otherwise); yields advance()."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    with Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console,
                  disable=not console.is_terminal, transient=True) as progress:
        task_id = progress.add_task(label, total=total)
        yield lambda: progress.advance(task_id)


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    size = float(n)
    for unit in ("KiB", "MiB", "GiB"):
        size /= 1024
        if size < 1024 or unit == "GiB":
            break
    return f"{size:.1f} {unit}"
