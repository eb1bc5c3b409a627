"""Tasks as rows for trainers: JSONL and Parquet, both loadable with the ``datasets`` library
(``load_dataset("json" | "parquet", data_files=...)``) and importable back to identical tasks.

One row per task:

    name, digest        the task's name and ``Task.digest()`` (checked again on import)
    instruction         instruction.md (null for multi-step tasks that have none)
    task_toml           task.toml exactly as written (so the digest survives the round trip)
    files               [{path, content, encoding ("utf-8" | "base64"), executable}], every other file
    domain, family, difficulty, category, tags
                        the facets suites filter by (see facets.py), for filtering rows directly
    metadata            task.toml's [metadata] as a JSON string: one stable column, whatever the keys

Text files are stored as text so rows stay readable; anything that is not valid UTF-8 is base64.
"""

from __future__ import annotations

import abc
import base64
import json
from pathlib import Path
from typing import Any, Iterable, Iterator

from ..errors import MissingPrerequisite, TaskFormatError
from ..tasks import Task, TaskFile, parse_config, render_config
from .facets import facets_of
from .formats import TaskFormat
from .layout import replace_file

_BATCH = 256  # rows per Parquet row group / read batch: bounds memory on big suites


def task_to_row(task: Task) -> dict[str, Any]:
    facets = facets_of(task).model_dump(include={"domain", "family", "difficulty", "category", "tags"})
    return {"name": task.name, "digest": task.digest(), "instruction": task.instruction,
            "task_toml": render_config(task), "files": [_file_entry(path, f) for path, f in task.files.items()],
            **facets, "metadata": json.dumps(task.config.metadata, ensure_ascii=False, sort_keys=True)}


def task_from_row(row: Any, where: str) -> Task:
    """The task a row describes. ``where`` names the row in errors (file and line or row number)."""
    if not isinstance(row, dict):
        raise TaskFormatError(f"{where}: a row must be an object", hint="each row is one task (see rows.py)")
    name, toml_text = row.get("name"), row.get("task_toml")
    if not isinstance(name, str) or not name or not isinstance(toml_text, str):
        raise TaskFormatError(f"{where}: a row needs the string columns name and task_toml",
                              hint="export rows with `autoenvscaling suite export --format jsonl|parquet`")
    instruction = row.get("instruction")
    if instruction is not None and not isinstance(instruction, str):
        raise TaskFormatError(f"{name}: instruction must be a string or null")
    _unicode(where, name, toml_text, instruction or "")
    config = parse_config(toml_text, where=f"{name}/task.toml")
    files: dict[str, TaskFile] = {}
    entries = row.get("files") or []
    if not isinstance(entries, list):
        raise TaskFormatError(f"{name}: files must be a list", hint="each row is one task (see rows.py)")
    for entry in entries:
        path, data, executable = _decode_file(entry, name)
        files[path] = TaskFile(data=data, executable=executable)
    task = Task.create(name, config, instruction, files, config_text=toml_text, source=where)
    expected = row.get("digest")
    if expected and task.digest() != expected:
        raise TaskFormatError(f"{name}: digest mismatch: the row pins {expected}, its content gives {task.digest()}",
                              hint="the row was edited after export; re-export the task")
    return task


def _unicode(where: str, *texts: str) -> None:
    """JSON can carry lone surrogates ("\\ud800"), which no UTF-8 file can hold: such a row is unreadable."""
    for text in texts:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise TaskFormatError(f"{where}: a string holds a lone surrogate, which is not Unicode text",
                                  hint="export the row again from the task's files") from None


def _file_entry(path: str, f: TaskFile) -> dict[str, Any]:
    try:
        return {"path": path, "content": f.data.decode("utf-8"), "encoding": "utf-8", "executable": f.executable}
    except UnicodeDecodeError:
        return {"path": path, "content": base64.b64encode(f.data).decode("ascii"), "encoding": "base64",
                "executable": f.executable}


def _decode_file(entry: Any, task: str) -> tuple[str, bytes, bool]:
    if not isinstance(entry, dict) or not isinstance(entry.get("path"), str) or not isinstance(entry.get("content"), str):
        raise TaskFormatError(f"{task}: each files entry needs string path and content")
    encoding = entry.get("encoding") or "utf-8"
    _unicode(task, entry["path"])
    if encoding == "utf-8":
        _unicode(task, entry["content"])
        data = entry["content"].encode("utf-8")
    elif encoding == "base64":
        try:
            data = base64.b64decode(entry["content"], validate=True)
        except ValueError:
            raise TaskFormatError(f"{task}/{entry['path']}: invalid base64 content") from None
    else:
        raise TaskFormatError(f"{task}/{entry['path']}: unknown encoding {encoding!r}", hint='use "utf-8" or "base64"')
    return entry["path"], data, bool(entry.get("executable"))


def _write_atomically(dest: Path, write: Any) -> Path:
    """Run ``write(tmp_path)`` then rename the finished file onto ``dest`` (replacing it)."""
    dest = Path(dest)
    if dest.is_dir():
        raise TaskFormatError(f"{dest}: is a directory", hint="pass a file path for row exports")
    dest.parent.mkdir(parents=True, exist_ok=True)
    replace_file(dest, write)
    return dest


class _RowFile(TaskFormat):
    """A format that keeps tasks as rows (`task_to_row`) in one file."""

    def detect(self, path: Path) -> bool:
        path = Path(path)
        return path.is_file() and self._holds_rows(path)

    @abc.abstractmethod
    def _holds_rows(self, path: Path) -> bool:
        """Whether the file ``path`` is one of this format's (by its name or its first bytes)."""


class JsonlFormat(_RowFile):
    """One JSON row per task (JSON Lines)."""

    name = "jsonl"
    description = "JSON Lines, one row per task (datasets: load_dataset('json', ...))"

    def _holds_rows(self, path: Path) -> bool:
        if path.suffix in (".jsonl", ".ndjson"):
            return True
        with open(path, "rb") as fh:
            first = fh.readline(1 << 20)
        try:
            row = json.loads(first)
        except (ValueError, RecursionError):
            return False
        return isinstance(row, dict) and "task_toml" in row

    def count(self, path: Path) -> int | None:
        with open(path, "rb") as fh:
            return sum(1 for line in fh if line.strip())

    def scan(self, path: Path) -> Iterator[Task | TaskFormatError]:
        path = Path(path)
        try:
            fh = open(path, "rb")  # decoded line by line: one line that is not UTF-8 is one bad row
        except OSError as exc:
            yield TaskFormatError(f"{path}: cannot read: {exc.strerror}")
            return
        with fh:
            for number, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                where = f"{path.name}:{number}"
                try:
                    yield task_from_row(json.loads(line.decode("utf-8")), where)
                except UnicodeDecodeError:
                    yield TaskFormatError(f"{where}: not UTF-8 text", hint="JSON Lines files are UTF-8")
                except (ValueError, RecursionError) as exc:  # json.JSONDecodeError, or nested past the parser
                    yield TaskFormatError(f"{where}: not JSON: {exc}", hint="each line must be one JSON object")
                except TaskFormatError as exc:
                    yield exc

    def write(self, tasks: Iterable[Task], dest: Path) -> Path:
        def write(tmp: Path) -> None:
            with open(tmp, "w", encoding="utf-8") as fh:
                for task in tasks:
                    fh.write(json.dumps(task_to_row(task), ensure_ascii=False) + "\n")

        return _write_atomically(Path(dest), write)


class ParquetFormat(_RowFile):
    """Parquet rows (pyarrow, imported on use)."""

    name = "parquet"
    description = "Parquet, one row per task (datasets: load_dataset('parquet', ...)); needs pyarrow"

    def _holds_rows(self, path: Path) -> bool:
        with open(path, "rb") as fh:
            return fh.read(4) == b"PAR1"

    def count(self, path: Path) -> int | None:
        pq = _pyarrow()[1]
        try:
            return pq.ParquetFile(path).metadata.num_rows
        except Exception:  # pyarrow raises ArrowInvalid/OSError for a bad file; scan() reports it
            return None

    def scan(self, path: Path) -> Iterator[Task | TaskFormatError]:
        pa, pq = _pyarrow()
        path = Path(path)
        try:
            parquet = pq.ParquetFile(path)
        except (OSError, pa.ArrowException) as exc:
            yield TaskFormatError(f"{path}: not a readable Parquet file: {exc}", hint="export it again")
            return
        missing = {"name", "task_toml"} - set(parquet.schema_arrow.names)
        if missing:
            yield TaskFormatError(f"{path}: missing columns {', '.join(sorted(missing))}",
                                  hint="export rows with `autoenvscaling suite export --format parquet`")
            return
        number = 0
        for batch in parquet.iter_batches(batch_size=_BATCH):
            for row in batch.to_pylist():
                number += 1
                try:
                    yield task_from_row(row, f"{path.name}#{number}")
                except TaskFormatError as exc:
                    yield exc

    def write(self, tasks: Iterable[Task], dest: Path) -> Path:
        pa, pq = _pyarrow()
        schema = _schema(pa)

        def write(tmp: Path) -> None:
            with pq.ParquetWriter(tmp, schema) as writer:
                rows: list[dict[str, Any]] = []
                for task in tasks:
                    rows.append(task_to_row(task))
                    if len(rows) == _BATCH:
                        writer.write_table(pa.Table.from_pylist(rows, schema=schema))
                        rows = []
                if rows:
                    writer.write_table(pa.Table.from_pylist(rows, schema=schema))

        return _write_atomically(Path(dest), write)


def _schema(pa: Any) -> Any:
    text = pa.string()
    file_struct = pa.struct([("path", text), ("content", text), ("encoding", text), ("executable", pa.bool_())])
    return pa.schema([
        ("name", text), ("digest", text), ("instruction", text), ("task_toml", text),
        ("files", pa.list_(file_struct)), ("domain", text), ("family", text), ("difficulty", text),
        ("category", text), ("tags", pa.list_(text)), ("metadata", text),
    ])


def _pyarrow() -> tuple[Any, Any]:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise MissingPrerequisite("the parquet format needs pyarrow", hint="pip install 'autoenvscaling[export]'") from None
    return pyarrow, pyarrow.parquet
