"""Importing a collection as task directories, optionally admitting each task first.

``<domain> import SOURCE --out DIR`` (every domain that names an import format gets it from
``add_family_commands``) reads SOURCE with a registered ``TaskFormat``, writes one Harbor task
directory per task under DIR and ``DIR/import-report.json`` with one row per item: ``id``, ``task``
(its name, or None), ``status`` and ``reason``. Without a check every readable task is "written";
with one, each is validated on a sandbox backend by the lint, build, oracle and null gates, one at a
time (they share the image build), and only the "admitted" are written ("rejected" with the reason,
"error" when the sandbox itself failed). Unreadable items are "rejected" with their error.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from pathlib import Path
from typing import Any, Callable, Iterable

from ..errors import TaskFormatError
from ..suite.layout import dir_name
from ..tasks import Task, write_task
from .base import ValidationReport

CHECK_GATES = ("lint", "build", "oracle", "null")
Row = dict[str, Any]
Item = tuple[str, "Task | TaskFormatError"]


def verdict(report: ValidationReport) -> tuple[str, str]:
    """(status, reason) of a checked task: admitted, rejected with the failing gate's reason, or error."""
    if report.status == "valid":
        return "admitted", "lint, build, oracle and null gates passed"
    if report.status != "invalid":
        return "error", report.reason
    failed = next((g for g in report.gates if g.status == "fail"), None)
    return "rejected", f"{failed.name}: {failed.reason}" if failed is not None else report.reason


def summary(rows: Iterable[Row]) -> str:
    rows = list(rows)
    counts = {s: sum(r["status"] == s for r in rows) for s in ("admitted", "written", "rejected", "error")}
    return ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "no tasks"


def import_tasks(items: Iterable[Item], out: str | Path, *, check: bool = True, backend: str = "bwrap",
                 progress: Callable[[Row], None] | None = None,
                 explain: Callable[[ValidationReport], tuple[str, str]] = verdict,
                 report_fields: dict[str, Any] | None = None) -> list[Row]:
    """Write ``items`` ((label, task or error) pairs) under ``out`` as described in the module doc and
    return the rows in the items' order. ``progress`` sees each row as it is decided; ``explain``
    turns a failed validation into the collection author's terms; ``report_fields`` go at the top of
    the report (the source, the collection's name)."""
    items = list(items)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rows: list[Row] = []

    def decided(row: Row, task: Task | None) -> None:
        if task is not None:
            target = out / dir_name(task.name)  # a safe folder name, whatever the task's name holds
            if row["status"] in ("admitted", "written"):
                write_task(task, target, overwrite=True)
            elif (target / "task.toml").is_file():
                shutil.rmtree(target)  # an earlier import's copy of a task now rejected
        rows.append(row)
        if progress is not None:
            progress(row)

    pending: list[tuple[str, Task]] = []
    for label, item in items:
        if isinstance(item, TaskFormatError):
            decided({"id": label, "task": None, "status": "rejected",
                     "reason": item.message + (f" ({item.hint})" if item.hint else "")}, None)
        elif check:
            pending.append((label, item))
        else:
            decided({"id": label, "task": item.name, "status": "written", "reason": "not checked (--no-check)"}, item)
    if pending:
        asyncio.run(_check_all(pending, backend, decided, explain))
    order = {label: i for i, (label, _) in enumerate(items)}
    rows.sort(key=lambda r: order.get(r["id"], len(order)))
    report = {**(report_fields or {}), "checked": check, "backend": backend if check else None,
              "gates": list(CHECK_GATES) if check else [],
              "counts": {s: sum(r["status"] == s for r in rows) for s in sorted({r["status"] for r in rows})},
              "tasks": rows}
    (out / "import-report.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return rows


async def _check_all(pending: list[tuple[str, Task]], backend_name: str, decided: Callable[[Row, Task | None], None],
                     explain: Callable[[ValidationReport], tuple[str, str]]) -> None:
    from ..runtime.trial import TrialRunner
    from ..sandbox.base import SandboxPolicy
    from ..sandbox.select import BackendCatalog, make_backend, plugin_host
    from .base import GateContext, GateSettings
    from .validate import validate_task

    host = plugin_host()
    # Only these gates: a domain's own gates judge its generated tasks (spec, seed, key), not imports.
    gates = [host.gates.get(name)() for name in CHECK_GATES]
    backend = make_backend(backend_name, host, SandboxPolicy())
    catalog = BackendCatalog(host, backend.policy)
    catalog.attach(backend)
    runner = TrialRunner(backend, host=host)
    settings = GateSettings()

    def context(task: Task) -> GateContext:
        return GateContext(backend=backend, runner=runner, settings=settings, backend_name=backend.name, catalog=catalog)

    try:
        for label, task in pending:
            start = time.monotonic()
            report = await validate_task(task, context, gates=gates, host=host, label=task.name)
            status, reason = explain(report)
            row = {"id": label, "task": task.name, "status": status, "reason": reason,
                   "seconds": round(time.monotonic() - start, 1)}
            if status != "admitted" and reason != report.reason:
                row["detail"] = report.reason  # the failing gate's own words
            decided(row, task)
    finally:
        await backend.aclose()
