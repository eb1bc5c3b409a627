"""Where a task goes inside a suite or an exported Harbor dataset, and the name it reads back with.

Harbor names tasks ``org/name`` and names the folder after the part without the org (as
``harbor task init`` does). A task whose task.toml does not name it takes its folder's name when
read, so such a task is given an explicit ``[task] name`` whenever its folder must differ from its
name; otherwise writing then reading would change its identity. Files and folders are written
beside their destination and renamed onto it (``replace_file``; ``claim_output`` clears what a
killed export left there).
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import uuid
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Callable, Iterator

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


@contextmanager
def claim_output(dest: Path) -> Iterator[None]:
    """Around an export that stages ``dest`` beside it (``replace_file``, ``staged_dir``): first delete
    what exports of ``dest`` killed before their end left there (``.<name>.tmp-*`` and
    ``.<name>.old-*``: every run stages under a new name, so nothing else ever removes them), then
    hold a shared lock on the folder until the block ends. The leftovers are deleted only when the
    lock can be had exclusively, that is when no other export into the folder is running (its staging
    is live); where the folder cannot be locked nothing is deleted."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(dest.parent, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # another export is writing here (or the filesystem does not lock folders)
            pass
        else:
            leftover = re.compile(rf"\.{re.escape(dest.name)}\.(?:tmp|old)-[0-9a-f]{{8}}")
            for entry in os.scandir(dest.parent):
                if leftover.fullmatch(entry.name):
                    if entry.is_dir(follow_symlinks=False):
                        shutil.rmtree(entry.path, ignore_errors=True)
                    else:
                        Path(entry.path).unlink(missing_ok=True)
        with suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)
