"""Read and write Harbor task directories.

Reading is lenient about *content* (a task missing tests/test.sh still loads, so the lint gate can
say what is wrong) and strict about *form* (task.toml must parse). Writing is atomic and
byte-preserving: task.toml is written back exactly as read unless its config changed, and then only
the changed keys are rewritten, keeping comments and unknown keys.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import tomllib
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

from ..archive import extract_tar, make_tar
from ..errors import TaskFormatError
from .config import TaskConfig
from .task import Task, TaskFile

# Files that are never part of a task (editor and OS droppings).
_IGNORED_NAMES = {".DS_Store", "__pycache__", ".pytest_cache"}
# A task is held in memory; refuse directories that are clearly not tasks.
MAX_TASK_BYTES = 64 * 1024 * 1024
# tomlkit, which writes task.toml back, refuses values nested deeper than this.
MAX_TOML_DEPTH = 100


def is_task_dir(path: Path) -> bool:
    return (path / "task.toml").is_file()


def parse_config(text: str, *, where: str = "task.toml") -> TaskConfig:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TaskFormatError(f"{where}: malformed TOML: {exc}", hint="fix the TOML syntax") from None
    except RecursionError:  # tomllib recurses once per level of nested arrays and tables
        raise TaskFormatError(f"{where}: malformed TOML: nested too deeply", hint="fix the TOML syntax") from None
    if _depth(raw) > MAX_TOML_DEPTH:
        raise TaskFormatError(f"{where}: values nested more than {MAX_TOML_DEPTH} levels deep",
                              hint="flatten the nested arrays and tables")
    try:
        return TaskConfig.model_validate(raw)
    except Exception as exc:  # pydantic.ValidationError: keep it to one line
        first = str(exc).splitlines()
        detail = "; ".join(line.strip() for line in first[1:3]) if len(first) > 1 else str(exc)
        raise TaskFormatError(f"{where}: invalid config: {detail}", hint="see Harbor's task.toml schema") from None


def read_task(path: str | os.PathLike[str]) -> Task:
    """Load one task directory. Raises TaskFormatError with a one-line reason."""
    root = Path(path)
    if not root.is_dir():
        raise TaskFormatError(f"{root}: not a directory", hint="pass a Harbor task directory")
    toml_path = root / "task.toml"
    for top in (toml_path, root / "instruction.md"):  # a link would read a file from outside the task
        if top.is_symlink():
            raise TaskFormatError(f"{root.name}/{top.name}: symbolic links are not allowed in tasks",
                                  hint="copy the file instead")
    if not toml_path.is_file():
        raise TaskFormatError(f"{root}: no task.toml", hint="a Harbor task directory has task.toml at its top")
    config_text = _read_text(toml_path)
    config = parse_config(config_text, where=f"{root.name}/task.toml")
    instruction_path = root / "instruction.md"
    instruction = _read_text(instruction_path) if instruction_path.is_file() else None
    files: dict[str, Any] = {}
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _IGNORED_NAMES)
        linked = next((d for d in dirnames if os.path.islink(os.path.join(dirpath, d))), None)
        if linked is not None:  # os.walk would skip it: the task would silently lose that folder
            rel = (Path(dirpath) / linked).relative_to(root).as_posix()
            raise TaskFormatError(f"{root.name}/{rel}: symbolic links are not allowed in tasks",
                                  hint="copy the folder instead")
        for name in sorted(filenames):
            if name in _IGNORED_NAMES:
                continue
            full = Path(dirpath) / name
            rel = full.relative_to(root).as_posix()
            if not _utf8(rel):  # os.walk hands undecodable bytes back as lone surrogates
                shown = rel.encode("utf-8", "replace").decode()
                raise TaskFormatError(f"{root.name}/{shown}: the file name is not UTF-8", hint="rename the file")
            if rel in ("task.toml", "instruction.md"):
                continue
            st = full.lstat()
            if stat.S_ISLNK(st.st_mode):
                raise TaskFormatError(f"{root.name}/{rel}: symbolic links are not allowed in tasks", hint="copy the file instead")
            if not stat.S_ISREG(st.st_mode):
                continue
            total += st.st_size
            if total > MAX_TASK_BYTES:
                raise TaskFormatError(f"{root.name}: task directory larger than {MAX_TASK_BYTES >> 20} MiB", hint="build large data inside the environment")
            files[rel] = TaskFile(data=full.read_bytes(), executable=bool(st.st_mode & stat.S_IXUSR))
    name = config.task.name or root.name
    return Task.create(name, config, instruction, files, config_text=config_text, source=str(root))


def _depth(value: Any) -> int:
    """How deeply tables and arrays nest in ``value`` (a scalar is 0), without recursing."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is not None:
            deepest = max(deepest, level + 1)
            stack.extend((child, level + 1) for child in children)
    return deepest


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _read_text(path: Path) -> str:
    try:
        # newline="" keeps \r\n so an unchanged file is written back byte-identical.
        with open(path, encoding="utf-8", newline="") as fh:
            return fh.read()
    except UnicodeDecodeError:
        raise TaskFormatError(f"{path.parent.name}/{path.name}: not UTF-8 text", hint="save it as UTF-8") from None


def render_config(task: Task) -> str:
    """task.toml text for ``task``: the original text when the config is unchanged, else the original
    document updated in place (comments and key order kept), else a fresh document."""
    original = task.config_text
    if original is not None:
        try:
            if parse_config(original) == task.config:
                return original
        except TaskFormatError:
            original = None
    import tomlkit

    doc = tomlkit.parse(original) if original is not None else tomlkit.document()
    _merge_into(doc, _without_none(task.config.to_dict()))
    return tomlkit.dumps(doc)


def _merge_into(container: Any, data: dict[str, Any]) -> None:
    """Update a tomlkit container so it equals ``data``, touching only keys that differ."""
    import tomlkit

    for key in list(container.keys()):
        if key not in data:
            del container[key]
    for key, value in data.items():  # no value is None: render_config dropped them (_without_none)
        current = container.get(key)
        if isinstance(value, dict) and current is not None and hasattr(current, "keys"):
            _merge_into(current, value)
        elif _unwrap(current) != value:
            if isinstance(value, dict):
                table = tomlkit.table()
                table.update(value)
                container[key] = table
            elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
                aot = tomlkit.aot()
                aot.extend(value)
                container[key] = aot
            else:
                container[key] = value


def _without_none(value: Any) -> Any:
    """TOML has no null: drop None values at any depth (a missing key reads back as None anyway)."""
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_none(v) for v in value if v is not None]
    return value


def _unwrap(value: Any) -> Any:
    return value.unwrap() if hasattr(value, "unwrap") else value


def write_task(task: Task, dest: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    """Write ``task`` as a directory at ``dest`` atomically: a crash leaves either the old directory or
    the new one, never a half-written task."""
    dest = Path(dest)
    if dest.exists() and not overwrite:
        raise TaskFormatError(f"{dest}: already exists", hint="pass overwrite=True or choose another path")
    problem = _path_problem(task.files)
    if problem is not None:
        raise TaskFormatError(f"{task.name}: {problem}", hint="use paths inside the task, each a file or a folder")
    dest.parent.mkdir(parents=True, exist_ok=True)
    with staged_dir(dest) as tmp:
        for rel, (data, executable) in directory_files(task).items():
            target = tmp / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            write_synced(target, data)
            if executable:
                target.chmod(0o755)
    return dest


def _path_problem(paths: Iterable[str]) -> str | None:
    """Why ``paths`` (a task's files, from rows, replies or code) cannot be written as one task folder,
    or None: each must stay inside it, name a file once, not be a folder of another, and not be
    task.toml or instruction.md (written from the config and the instruction)."""
    paths = list(paths)
    folders: set[str] = set()
    for rel in paths:
        parts = rel.split("/")
        if rel.startswith("/") or "\0" in rel or any(part in ("", ".", "..") for part in parts):
            return f"unsafe file path {rel!r}"
        if rel in ("task.toml", "instruction.md"):
            return f"{rel} is written from the task itself, not from its files"
        folders.update("/".join(parts[:i]) for i in range(1, len(parts)))
    clash = sorted(folders.intersection(paths))
    return f"{clash[0]!r} is both a file and a folder" if clash else None


def directory_files(task: Task) -> dict[str, tuple[bytes, bool]]:
    """Every file of ``task``'s directory as ``write_task`` writes it: {path: (bytes, executable)}."""
    files = {"task.toml": (render_config(task).encode(), False)}
    if task.instruction is not None:
        files["instruction.md"] = (task.instruction.encode(), False)
    return {**files, **{p: (f.data, f.executable) for p, f in task.files.items()}}


@contextmanager
def staged_dir(dest: Path) -> Iterator[Path]:
    """A new temporary folder beside ``dest`` for the block to fill. When the block ends it is fsynced
    and renamed onto ``dest`` (an existing ``dest`` is moved aside first, then removed), so a crash
    leaves the old folder or the new one, never a half-written one; when the block raises it is removed."""
    tmp = dest.parent / f".{dest.name}.tmp-{uuid.uuid4().hex[:8]}"
    try:
        tmp.mkdir()
        yield tmp
        fsync_dir(tmp)
        if dest.exists():
            old = dest.parent / f".{dest.name}.old-{uuid.uuid4().hex[:8]}"
            dest.rename(old)
            tmp.rename(dest)
            shutil.rmtree(old, ignore_errors=True)
        else:
            tmp.rename(dest)
        fsync_dir(dest.parent)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_synced(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` and fsync it before returning."""
    with open(path, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def fsync_dir(path: Path) -> None:
    """Fsync a folder, so the names just created or renamed in it survive a crash."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def task_to_blob(task: Task) -> bytes:
    """The task directory as a tar: how a task travels in a job (``executors.jobs.TaskRef``) and how
    run.sqlite keeps it (tasks that never reach the suite can still be parents of the next round)."""
    return make_tar(directory_files(task))


def task_from_blob(blob: bytes) -> Task:
    """The task ``task_to_blob`` packed."""
    with tempfile.TemporaryDirectory(prefix="aes-task-blob-") as tmp:
        extract_tar(blob, tmp)
        return read_task(tmp)
