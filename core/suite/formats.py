"""Task formats: importers and exporters beyond the native Harbor directory.

A ``TaskFormat`` converts between our ``Task`` and another layout (a JSONL row set, Parquet, the
Endless Terminals layout, SWE-bench instances, ...). Formats register through the formats hook.
"""

from __future__ import annotations

import abc
from pathlib import Path
from typing import ClassVar, Iterable, Iterator

from ..errors import TaskFormatError
from ..tasks import Task


class TaskFormat(abc.ABC):
    name: ClassVar[str]
    description: ClassVar[str] = ""
    can_import: ClassVar[bool] = True
    can_export: ClassVar[bool] = True

    def detect(self, path: Path) -> bool:
        """Whether ``path`` looks like this format (used by ``suite import`` without --format)."""
        return False

    def read(self, path: Path) -> Iterator[Task]:
        """Tasks stored at ``path``. Raise TaskFormatError for what cannot be read."""
        raise NotImplementedError(f"{self.name} cannot be imported")

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
