"""Task formats: importers and exporters beyond the native Harbor directory.

A ``TaskFormat`` converts between our ``Task`` and another layout (a JSONL row set, Parquet, the
Endless Terminals layout, SWE-bench instances, ...). Formats register through the formats hook.
"""

from __future__ import annotations

import abc
from pathlib import Path
from typing import Any, ClassVar, Iterable, Iterator

from ..errors import TaskFormatError
from ..tasks import Task, short_name


class TaskFormat(abc.ABC):
    name: ClassVar[str]
    description: ClassVar[str] = ""
    can_import: ClassVar[bool] = True
    can_export: ClassVar[bool] = True

    def detect(self, path: Path) -> bool:
        """Whether ``path`` looks like this format (used by ``suite import`` without --format)."""
        return False

    def read(self, path: Path) -> Iterator[Task]:
        """Tasks stored at ``path``. Raise TaskFormatError for what cannot be read. A format
        implements ``read`` or ``scan``: by default ``read`` yields what ``scan`` does and raises its
        first error."""
        if type(self).scan is TaskFormat.scan:
            raise NotImplementedError(f"{self.name} cannot be imported")
        for item in self.scan(path):
            if isinstance(item, TaskFormatError):
                raise item
            yield item

    def write(self, tasks: Iterable[Task], dest: Path) -> Path:
        """Write ``tasks`` to ``dest``; return what was written."""
        raise NotImplementedError(f"{self.name} cannot be exported")

    def scan(self, path: Path) -> Iterator[Task | TaskFormatError]:
        """Like ``read``, but one unreadable task is yielded as its error and reading goes on, so a
        batch import reports it instead of stopping. The default stops at the first error; formats
        whose items are independent (task folders, rows) override it."""
        try:
            yield from self.read(path)
        except TaskFormatError as exc:
            yield exc

    def count(self, path: Path) -> int | None:
        """How many tasks ``read`` will yield, when that is cheap to know (for progress bars)."""
        return None

    def labelled(self, path: Path) -> Iterator[tuple[str, Task | TaskFormatError]]:
        """``scan`` with each item's label in the source (for import reports): by default a task's
        short name, or ``item N`` for an error. Formats whose items have ids of their own give those."""
        for number, item in enumerate(self.scan(path), 1):
            yield (short_name(item.name) if isinstance(item, Task) else f"item {number}"), item

    def explain(self, report: Any) -> tuple[str, str] | None:
        """(status, reason) of a task of this format that failed admission (a ``ValidationReport``),
        in the source's own terms; None leaves it to the importer's generic wording."""
        return None
