"""Where a task goes inside a suite or an exported Harbor dataset, and the name it reads back with.

Harbor names tasks ``org/name`` and names the folder after the part without the org (as
``harbor task init`` does). A task whose task.toml does not name it takes its folder's name when
read, so such a task is given an explicit ``[task] name`` whenever its folder must differ from its
name; otherwise writing then reading would change its identity.
"""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path
from typing import Callable

from ..tasks import Task
from ..tasks.harbor import fsync_dir

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_MAX_DIR = 100


def dir_name(name: str) -> str:
    """A safe folder name for task ``name``: its last path part, with unsafe characters replaced.
    Never starts with a dot: hidden names are reserved for temporary directories."""
    short = name.rsplit("/", 1)[-1]
    slug = _UNSAFE.sub("-", short).strip("-.")
    return slug[:_MAX_DIR] or "task"


def unique(base: str, taken: Callable[[str], bool]) -> str:
    """``base``, or ``base-2``, ``base-3``, ... whichever ``taken`` says is free."""
    if not taken(base):
        return base
    i = 2
    while taken(f"{base}-{i}"):
        i += 1
    return f"{base}-{i}"


def placed(task: Task, folder: str) -> Task:
    """``task`` as it must be written into ``folder`` so that reading it back gives the same name."""
    return task.renamed(task.name) if (task.config.task.name or folder) != task.name else task


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` so a reader (or a crash) sees the old file or the new one, never a mix."""
    replace_file(path, lambda tmp: tmp.write_bytes(data))


def replace_file(dest: Path, write: Callable[[Path], object]) -> None:
    """Run ``write(tmp)`` on a temporary path beside ``dest``, then fsync the file it wrote, rename it
    onto ``dest`` and fsync the folder: a reader (or a crash) sees the old file or the new one, never
    a mix. The temporary file is removed when ``write`` raises."""
    tmp = dest.parent / f".{dest.name}.tmp-{uuid.uuid4().hex[:8]}"
    try:
        write(tmp)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(dest.parent)
